"""Small helpers that the rules of several ``fcore.lax`` families share.

Static arguments as tuples of Python ints, typed ``bind`` for single-result primitives, the
operands of a transpose rule, 0-d constants and zeros that rules stage, and the formatting of
integer lists in StableHLO text (docs/adding_a_primitive.md describes the rules themselves).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.lax._base import ArrayLike, NpArray
from fcore.lax._primitive import Primitive
from fcore.transforms.ad_util import UndefinedPrimal, Zero, instantiate

Shape = tuple[int, ...]


def index_tuple(xs: Sequence[int] | NpArray) -> Shape:
    """Static dimension arguments as a tuple of Python ints (params are never lists)."""
    return tuple(map(operator.index, xs))


def bind(p: Primitive, *args: ArrayLike, **params: ParamValue) -> Array:
    """``p.bind`` for a single-result primitive, typed: its result is one array."""
    result: Array = p.bind(*args, **params)
    return result


def aval_of(x: Array | UndefinedPrimal) -> ShapedArray:
    """The aval of a transpose rule's operand, defined (a value) or not (``UndefinedPrimal``)."""
    return x.aval if isinstance(x, UndefinedPrimal) else get_aval(x)


def literal(value: bool | int | float, dt: DType, weak: bool = False) -> ArrayImpl:
    """A 0-d constant of ``dt`` (staged as a literal); booleans are never weakly typed."""
    return ArrayImpl(np.array(value).astype(dt), weak and not dtypes.is_bool(dt))


def zeros(aval: ShapedArray) -> Array:
    """Materialized (strongly typed) zeros of ``aval``'s shape and dtype."""
    out: Array = instantiate(Zero(aval.strip_weak_type()))
    return out


def shift_dims(dims: Shape, k: int = 1) -> Shape:
    """``dims`` moved up by ``k`` (past a new leading axis)."""
    return tuple(d + k for d in dims)


def prod(xs: Sequence[int]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def hlo_ints(xs: Sequence[int]) -> str:
    """An integer list as StableHLO's pretty syntax writes it: ``[0, 2]``."""
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"

"""The helpers ``jax.extend.core`` gives compiler writers, over fcore's frozen IR.

JAX's IR objects are mutable and some of these helpers are written for that; fcore's are
frozen values, so each helper here builds a new value and never changes one. Where fcore
cannot do what JAX does the docstring says so:

* ``new_jaxpr_eqn`` takes JAX's argument order (``invars, outvars, primitive, params,
  effects``); fcore derives an equation's effects from its primitive and params, so
  ``effects`` must be those (or ``None``), and there is no equation context (``ctx``).
* ``mapped_aval``/``unmapped_aval`` raise ``ValueError`` for an axis out of range or a size
  that does not match where JAX asserts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from fcore.api._diff_args import typeof
from fcore.api._float0 import float0
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eqn_effects
from fcore.ir.dtypes import SUPPORTED_DTYPES, ExtendedDType
from fcore.ir.effects import Effects
from fcore.ir.params import ParamValue, make_params
from fcore.ir.primitive import Primitive
from fcore.ir.source_info import SourceInfo
from fcore.interpreters.trace import Tracer
from fcore.numpy._dtypes import issubdtype

__all__ = [
    "DropVar",
    "array_types",
    "concrete_or_error",
    "gensym",
    "jaxprs_in_params",
    "mapped_aval",
    "new_jaxpr_eqn",
    "primal_dtype_to_tangent_dtype",
    "subjaxprs",
    "unmapped_aval",
    "valid_jaxtype",
]

T = TypeVar("T")

#: The host types that are arrays to fcore: NumPy arrays and the NumPy scalar types of its dtypes.
array_types: set[type] = {np.ndarray, np.longlong, np.intc} | {np.dtype(d).type for d in SUPPORTED_DTYPES}


class DropVar(Var):
    """A result binder whose value is never read (printed ``_``), as JAX's ``DropVar``.

    fcore's printer already writes ``_`` for every result nothing reads, so a ``DropVar`` is an
    ordinary ``Var`` everywhere else: passes and the parser need not know about it.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


def gensym() -> Callable[[ShapedArray], Var]:
    """A maker of fresh variables (JAX's ``gensym()`` is ``Var`` itself: identity makes them fresh)."""
    return Var


def new_jaxpr_eqn(
    invars: Sequence[Atom],
    outvars: Sequence[Var],
    primitive: Primitive,
    params: Mapping[str, ParamValue],
    effects: Iterable[object] | None,
    source_info: SourceInfo | None = None,
    ctx: None = None,
) -> JaxprEqn:
    """An equation, in JAX's argument order; a frozen ``JaxprEqn`` (build a new one to change it)."""
    for x in invars:
        if not isinstance(x, (Var, Literal)):
            raise TypeError(f"new_jaxpr_eqn: an input must be a Var or a Literal, got {x!r} of type {type(x).__name__}")
    for v in outvars:
        if not isinstance(v, Var):
            raise TypeError(f"new_jaxpr_eqn: a result must be a Var, got {v!r} of type {type(v).__name__}")
    if ctx is not None:
        raise NotImplementedError("new_jaxpr_eqn: fcore equations carry no JaxprEqnContext; pass ctx=None")
    frozen = make_params(dict(params))
    derived: Effects = eqn_effects(primitive, frozen)
    if effects is not None and frozenset(effects) != derived:
        raise ValueError(
            f"new_jaxpr_eqn: effects {set(effects)} differ from those of {primitive.name} with these params "
            f"({set(derived)}); fcore derives an equation's effects from its primitive and params"
        )
    return JaxprEqn(primitive, tuple(invars), tuple(outvars), frozen, source_info)


def _check_axis(axis: int, limit: int, rank: int, what: str) -> None:
    """``0 <= axis < limit`` (the rank for a removed axis, one more for an inserted one)."""
    if not 0 <= axis < limit:
        raise ValueError(f"{what}: axis {axis} is out of range for an aval of rank {rank}")


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """The aval of one slice of ``aval`` along ``axis`` (of length ``size``); ``None``: unmapped."""
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"no mapping handler for {aval} of type {type(aval)}")
    if axis is None:
        return aval
    _check_axis(axis, aval.ndim, aval.ndim, "mapped_aval")
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size {aval.shape[axis]}, not {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray, explicit_mesh_axis: object = None) -> ShapedArray:
    """``aval`` with a new axis of length ``size`` at ``axis``; ``None``: unchanged. fcore avals
    carry no sharding, so ``explicit_mesh_axis`` has nothing to annotate."""
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"no unmapping handler for {aval} of type {type(aval)}")
    if axis is None:
        return aval
    if type(axis) is not int:
        raise TypeError(axis)
    _check_axis(axis, aval.ndim + 1, aval.ndim, "unmapped_aval")
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def jaxprs_in_params(params: Mapping[str, object]) -> Iterator[Jaxpr]:
    """The jaxprs among ``params``' values (a closed one gives its jaxpr), one tuple level deep."""
    for val in params.values():
        vals = val if isinstance(val, tuple) else (val,)
        for v in vals:
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs in the params of ``jaxpr``'s equations (not recursively)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def valid_jaxtype(x: object) -> bool:
    """Whether ``x`` is a value fcore can trace and compute with (strings, lists, objects are not)."""
    try:
        typeof(x)
    except TypeError:
        return False
    return True


def primal_dtype_to_tangent_dtype(primal_dtype: T) -> T | np.dtype[Any]:
    """The dtype of a tangent of ``primal_dtype``: itself when inexact, ``float0`` otherwise
    (integers, booleans and PRNG keys have no tangent space)."""
    if isinstance(primal_dtype, ExtendedDType) or not issubdtype(primal_dtype, np.inexact):
        return float0
    return primal_dtype


def concrete_or_error(force: Callable[[Any], T] | None, val: Any, context: str = "") -> T | Any:
    """``force(val)``, where a traced ``val`` must have a concrete value behind it (under
    ``grad`` it does; under ``jit`` it does not: ``ConcretizationError`` naming ``context``)."""
    if isinstance(val, Tracer):
        val = val._concrete(context or "a concrete value (concrete_or_error)")
    return val if force is None else force(val)

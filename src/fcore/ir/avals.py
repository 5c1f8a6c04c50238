"""Abstract values: what a tracer or a jaxpr variable knows about an array."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import attrs
import numpy as np

from fcore.errors import InvalidShapeError
from fcore.ir import dtypes
from fcore.ir.dtypes import DType

Shape = tuple[int, ...]


#: The largest element count a shape may have: XLA indexes with int64.
MAX_SIZE = 2**63 - 1


def _to_shape(shape: Iterable[int]) -> Shape:
    if type(shape) is not tuple:
        shape = tuple(int(d) for d in shape)
    # The common case costs two builtin calls: dimensions below 2**20 in rank <= 3 cannot overflow.
    if shape and (min(shape) < 0 or len(shape) > 3 or max(shape) >= 1 << 20):
        _check_shape(shape)
    return shape


def _check_shape(shape: Shape) -> None:
    if min(shape) < 0:
        raise InvalidShapeError(f"array dimensions must be non-negative, got shape {shape}")
    if math.prod(shape) > MAX_SIZE:
        raise InvalidShapeError(f"shape {shape} has {math.prod(shape)} elements, more than int64 can index ({MAX_SIZE})")


def _to_dtype(dtype: Any) -> DType:
    return dtype if type(dtype) is np.dtype else np.dtype(dtype)


@attrs.frozen(slots=True, repr=False, cache_hash=True)
class ShapedArray:
    """An array's shape, dtype and weak-type flag (JAX's ``ShapedArray``).

    A *weak* type is the type of a Python scalar: it adopts the precision of
    whatever array it meets in a binary operation (docs/guide.md, "Dtypes and promotion").
    """

    shape: Shape = attrs.field(converter=_to_shape)
    dtype: DType = attrs.field(converter=_to_dtype)
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        """JAX's ``str_short``: ``float32[3,4]`` (``f32[3,4]`` with ``short_dtypes``), weak
        type not shown; fcore's avals carry no mesh, so ``mesh_axis_types`` changes nothing."""
        name = dtypes.short_name(self.dtype) if short_dtypes else dtypes.dtype_name(self.dtype)
        return f"{name}[{','.join(map(str, self.shape))}]"

    def jaxpr_text(self) -> str:
        """The type as jaxpr text writes it: ``f32[3,4]``, with ``{weak}`` appended for weak
        types so that the text parses back to the same type."""
        text = self.str_short(short_dtypes=True)
        return text + "{weak}" if self.weak_type else text

    def strip_weak_type(self) -> ShapedArray:
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def update(
        self, shape: Shape | None = None, dtype: Any = None, weak_type: bool | None = None
    ) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def replace(self, **changes: Any) -> ShapedArray:
        return attrs.evolve(self, **changes)

    def __str__(self) -> str:
        """JAX's ``str``: ``float32[3]``, ``~float32[]`` for a weak type."""
        return ("~" if self.weak_type else "") + self.str_short()

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Same shape and dtype; weak types may differ (JAX's ``typematch``): a nested jaxpr
    traced for a weakly typed input runs as well on a strongly typed one."""
    return a.shape == b.shape and a.dtype == b.dtype


_aval_cache: dict[tuple[Shape, DType, bool], ShapedArray] = {}


def shaped_array(shape: Shape, dtype: DType, weak_type: bool = False) -> ShapedArray:
    """An interned ``ShapedArray``: tracing long programs reuses one aval per type.

    Interning is invisible (avals are immutable values) and keeps the memory per
    equation low.
    """
    key = (shape, dtype, weak_type)
    aval = _aval_cache.get(key)
    if aval is None:
        aval = ShapedArray(shape, dtype, weak_type)
        if len(_aval_cache) < 65536:
            _aval_cache[key] = aval
    return aval

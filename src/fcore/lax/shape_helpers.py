"""``lax.broadcast_shapes`` (NumPy broadcasting of static shapes, with ``jax.lax``'s errors),
``lax.broadcast_like`` (an operand broadcast to another's shape) and ``lax.empty`` (an array whose contents are unspecified; fcore fills it with zeros, which
is what XLA's CPU and GPU backends give JAX's ``empty`` too)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from fcore.interpreters.array import Array
from fcore.ir.dtypes import DTypeLike
from fcore.interpreters.eval import get_aval
from fcore.lax._base import ArrayLike
from fcore.lax.elementwise import convert_element_type
from fcore.lax.shapes import broadcast_in_dim, full

__all__ = ["broadcast_like", "broadcast_shapes", "empty"]


def _static_shape(shape: Any) -> tuple[int, ...]:
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None
    if any(d < 0 for d in dims):
        raise TypeError(f"Only non-negative indices are allowed when broadcasting static shapes, but got shape {shape!r}.")
    return dims


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives ``shapes`` (``ValueError`` if they are incompatible)."""
    if not shapes:
        raise ValueError("broadcast_shapes needs at least one shape")
    dims = [_static_shape(s) for s in shapes]
    ndim = max(len(s) for s in dims)
    padded = [(1,) * (ndim - len(s)) + s for s in dims]
    out = []
    for ds in zip(*padded):
        sizes = {d for d in ds if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def empty(shape: Sequence[int] | int, dtype: DTypeLike, *, out_sharding: Any = None) -> Array:
    """An array of ``shape`` and ``dtype`` with unspecified contents (zeros in fcore)."""
    if out_sharding is not None:
        raise NotImplementedError("fcore's lax.empty does not take out_sharding; use device_put on the result")
    return full(shape, 0, dtype)


def broadcast_like(arr: ArrayLike, like_arr: ArrayLike) -> Array:
    """``arr`` broadcast to ``like_arr``'s shape (``lax.broadcast_like``): new leading axes, and
    size-1 axes stretched; ``arr`` itself (as an array) when the shapes already agree."""
    a, shape = get_aval(arr), get_aval(like_arr).shape
    if a.shape == shape:
        return arr if isinstance(arr, Array) else convert_element_type(arr, a.dtype, a.weak_type)
    if len(shape) < len(a.shape):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={a.shape} shape={shape}")
    lead = len(shape) - len(a.shape)
    if any(d not in (1, s) for d, s in zip(a.shape, shape[lead:])):
        raise ValueError(
            f"Incompatible types for broadcasting: input type={a.str_short()} and requested type="
            f"{a.update(shape=shape).str_short()}"
        )
    return broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))

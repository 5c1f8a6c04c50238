"""``lax.broadcast_shapes`` (NumPy broadcasting of static shapes, with ``jax.lax``'s errors)
and ``lax.empty`` (an array whose contents are unspecified; fcore fills it with zeros, which
is what XLA's CPU and GPU backends give JAX's ``empty`` too)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from fcore.interpreters.array import Array
from fcore.ir.dtypes import DTypeLike
from fcore.lax.shapes import full

__all__ = ["broadcast_shapes", "empty"]


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

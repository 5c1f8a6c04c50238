"""The array operations ``fcore.transforms`` needs, registered from this layer above it
(docs/design.md: the transformations cannot import ``fcore.lax``)."""

from __future__ import annotations

import numpy as np

from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir.avals import ShapedArray
from fcore.lax import shapes
from fcore.lax._base import ArrayLike, shape_of
from fcore.lax.elementwise import add
from fcore.transforms.ad_util import VSpaceOps, register_vspace_ops


def zeros_like_aval(aval: ShapedArray) -> Array:
    zero = ArrayImpl(np.zeros((), aval.dtype), aval.weak_type)
    if aval.shape == ():
        return zero
    return shapes.broadcast_in_dim(zero, aval.shape, ())


def broadcast_batched(x: ArrayLike, axis_size: int, dim: int) -> Array:
    """``x`` with a new axis of ``axis_size`` at ``dim`` (an unbatched value made batched)."""
    shape = shape_of(x)
    out_shape = shape[:dim] + (axis_size,) + shape[dim:]
    dims = tuple(i if i < dim else i + 1 for i in range(len(shape)))
    return shapes.broadcast_in_dim(x, out_shape, dims)


def moveaxis(x: ArrayLike, src: int, dst: int) -> Array:
    perm = [i for i in range(len(shape_of(x))) if i != src]
    perm.insert(dst, src)
    return shapes.transpose(x, tuple(perm))


register_vspace_ops(
    VSpaceOps(
        zeros_like_aval=zeros_like_aval,
        add=add,
        broadcast_batched=broadcast_batched,
        moveaxis=moveaxis,
        broadcast_in_dim=shapes.broadcast_in_dim,
    )
)

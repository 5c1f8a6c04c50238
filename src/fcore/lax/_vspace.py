"""The array operations ``fcore.transforms`` needs, registered from this layer above it."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore.lax import elementwise
from fcore.interpreters.array import ArrayImpl
from fcore.ir.avals import ShapedArray
from fcore.transforms.ad_util import VSpaceOps, register_vspace_ops


def _structural() -> Any:
    from fcore.lax import shapes

    return shapes


def _broadcast_in_dim(x: Any, shape: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    return _structural().broadcast_in_dim(x, shape, dims)


def zeros_like_aval(aval: ShapedArray) -> Any:
    zero = ArrayImpl(np.zeros((), aval.dtype), aval.weak_type)
    if aval.shape == ():
        return zero
    return _broadcast_in_dim(zero, aval.shape, ())


def broadcast_batched(x: Any, axis_size: int, dim: int) -> Any:
    shape = tuple(x.shape) if hasattr(x, "shape") else ()
    out_shape = shape[:dim] + (axis_size,) + shape[dim:]
    dims = tuple(i if i < dim else i + 1 for i in range(len(shape)))
    return _broadcast_in_dim(x, out_shape, dims)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    perm = [i for i in range(np.ndim(x) if not hasattr(x, "ndim") else x.ndim) if i != src]
    perm.insert(dst, src)
    return _structural().transpose(x, tuple(perm))


register_vspace_ops(
    VSpaceOps(
        zeros_like_aval=zeros_like_aval,
        add=elementwise.add,
        broadcast_batched=broadcast_batched,
        moveaxis=moveaxis,
        broadcast_in_dim=_broadcast_in_dim,
    )
)

"""Sorting and searching of ``fcore.numpy``: ``sort``, ``argsort``, ``lexsort``, ``partition``,
``searchsorted``... built on ``lax.sort``/``lax.top_k`` exactly as ``jnp`` builds them, so
ties, NaNs (sorted last) and index dtypes agree with JAX.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert, normalize_axis, result_of



def _flat_or_axis(x: Array, axis: int | None) -> tuple[Array, int]:
    if axis is None:
        return (lax.reshape(x, (x.size,)) if x.ndim != 1 else x), 0
    return x, normalize_axis(axis, x.ndim)


def sort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: str | None = None, stable: bool = True,
         descending: bool = False) -> Array:
    """Sorted copy of ``a`` along ``axis`` (of the flattened array when ``axis`` is None);
    NaNs go last, ``-0.0`` and ``0.0`` tie."""
    if order is not None:
        raise ValueError("'order' argument to sort is not supported.")
    x, dim = _flat_or_axis(asarray(a, "sort"), axis)
    out: Array = lax.sort(x, dimension=dim, is_stable=stable)
    return lax.rev(out, (dim,)) if descending else out


def argsort(a: ArrayLike, axis: int | None = -1, *, kind: None = None, order: str | None = None, stable: bool = True,
            descending: bool = False) -> Array:
    """Indices that sort ``a`` along ``axis`` (default int dtype); a stable descending sort keeps
    equal elements in their original order, as ``jnp.argsort``."""
    if order is not None:
        raise ValueError("'order' argument to argsort is not supported.")
    x, dim = _flat_or_axis(asarray(a, "argsort"), axis)
    n = x.shape[dim]
    idt = dtypes.int64 if n >= 2**31 else dtypes.default_int_dtype()
    iota = lax.broadcasted_iota(idt, x.shape, dim)
    if descending and stable:
        x, iota = lax.rev(x, (dim,)), lax.rev(iota, (dim,))
    _, idx = lax.sort_key_val(x, iota, dimension=dim, is_stable=stable)
    return lax.rev(idx, (dim,)) if descending else idx


def lexsort(keys: Sequence[ArrayLike] | Array | np.ndarray[Any, Any], axis: int = -1) -> Array:
    """Indices that sort by the last key, then the one before... (``np.lexsort``)."""
    arrays = [asarray(k, "lexsort", i) for i, k in enumerate(keys)]
    if not arrays:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = arrays[0].shape
    if not shape:
        return ArrayImpl(np.zeros((), dtypes.default_int_dtype()), False)
    dim = normalize_axis(axis, len(shape))
    idt = dtypes.int64 if shape[dim] >= 2**31 else dtypes.default_int_dtype()
    iota = lax.broadcasted_iota(idt, shape, dim)
    out = lax.sort([*arrays[::-1], iota], dimension=dim, num_keys=len(arrays))
    result: Array = out[-1]
    return result


def _bottom_k(x: Array, k: int) -> tuple[Array, Array]:
    """The ``k`` smallest entries along the last axis (``-top_k(-x)``, as jnp; unsigned
    integers shift by one so that 0 survives negation)."""
    if dtypes.is_unsigned_int(x.dtype):
        one = ArrayImpl(np.ones((), x.dtype), False)
        vals, idx = lax.top_k(lax.neg(lax.add(x, one)), k)
        return lax.sub(lax.neg(vals), one), idx
    vals, idx = lax.top_k(lax.neg(x), k)  # a TypeError for bool, as in jnp
    return lax.neg(vals), idx


def _partition_setup(name: str, a: ArrayLike, kth: int, axis: int) -> tuple[Array, int, int]:
    x = asarray(a, name)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    ax = normalize_axis(axis, x.ndim)
    k = normalize_axis(kth, x.shape[ax], "kth")
    return _swap_last(x, ax), ax, k


def _swap_last(x: Array, ax: int) -> Array:
    last = x.ndim - 1
    if ax == last:
        return x
    perm = list(range(x.ndim))
    perm[ax], perm[last] = perm[last], perm[ax]
    return lax.transpose(x, tuple(perm))


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """``a`` with the ``kth`` element in its sorted place, smaller ones before it (sorted) and
    larger ones after it (in descending order, as ``jnp.partition`` leaves them)."""
    x, ax, k = _partition_setup("partition", a, kth, axis)
    bottom, _ = _bottom_k(x, k + 1)
    top, _ = lax.top_k(x, x.shape[-1] - k - 1)
    return _swap_last(lax.concatenate([bottom, top], x.ndim - 1), ax)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """Indices that ``partition`` ``a`` (int32, as ``jnp.argpartition``)."""
    x, ax, k = _partition_setup("argpartition", a, kth, axis)
    n = x.shape[-1]
    _, bottom_idx = _bottom_k(x, k + 1)
    # The remaining indices, in the order jnp's proxy top_k gives them: ascending.
    chosen = lax.reduce_or(
        lax.eq(lax.broadcast_in_dim(bottom_idx, (*x.shape[:-1], k + 1, n), tuple(range(x.ndim))),
               lax.broadcasted_iota(dtypes.int32, (*x.shape[:-1], k + 1, n), x.ndim)),
        (x.ndim - 1,),
    )
    proxy = lax.select_n(chosen, ArrayImpl(np.ones(x.shape, np.float32), False), ArrayImpl(np.zeros(x.shape, np.float32), False))
    _, top_idx = lax.top_k(proxy, n - k - 1)
    return _swap_last(lax.concatenate([bottom_idx, top_idx], x.ndim - 1), ax)


def sort_complex(a: ArrayLike) -> Array:
    """Sorted along the last axis, as a complex array."""
    x = lax.sort(asarray(a, "sort_complex"))
    dt = x.dtype
    target = dt if dtypes.is_complex(dt) else (
        dtypes.canonicalize_dtype(dtypes.complex128) if dt in (dtypes.float64, dtypes.int64, dtypes.uint64)
        else dtypes.complex64
    )
    return lax.convert_element_type(x, target)


# -- searchsorted ----------------------------------------------------------------------------
def _is_nan(x: Array) -> Array:
    return lax.ne(x, x)


def _sort_lt(x: Array, y: Array) -> Array:
    """``x < y`` in ``lax.sort``'s order (NaNs last and equal, ``-0.0 == 0.0``)."""
    if dtypes.is_complex(x.dtype):
        xr, yr = lax.real(x), lax.real(y)
        return lax.or_(_sort_lt(xr, yr), lax.and_(_sort_eq(xr, yr), _sort_lt(lax.imag(x), lax.imag(y))))
    if dtypes.is_floating(x.dtype):
        return lax.or_(lax.lt(x, y), lax.and_(lax.not_(_is_nan(x)), _is_nan(y)))
    if dtypes.is_bool(x.dtype):
        return lax.and_(lax.not_(x), y)
    return lax.lt(x, y)


def _sort_eq(x: Array, y: Array) -> Array:
    if dtypes.is_floating(x.dtype):
        return lax.or_(lax.eq(x, y), lax.and_(_is_nan(x), _is_nan(y)))
    return lax.eq(x, y)


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None, *,
                 method: str = "scan") -> Array:
    """Where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted (int32 indices): a
    binary search of ``ceil(log2(len(a) + 1))`` steps, JAX's ``scan`` method unrolled."""
    from fcore.numpy.indexing import getitem

    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right'].")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"Invalid method {method!r}: expected one of 'scan', 'scan_unrolled', 'sort' or 'compare_all'")
    dt, weak = result_of(a, v, name="searchsorted")
    arr, q = convert(a, dt, weak), convert(v, dt, weak)
    if arr.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        arr = getitem(arr, asarray(sorter, "searchsorted", 2))
    n = arr.shape[0]
    idt: DType = dtypes.int32 if n < 2**31 else dtypes.int64
    # go_left(query, pivot): for side="left", query <= pivot; for "right", query < pivot.
    low = lax.broadcast_in_dim(ArrayImpl(np.zeros((), idt), False), q.shape, ())
    high = lax.broadcast_in_dim(ArrayImpl(np.asarray(n, idt), False), q.shape, ())
    if n == 0:
        return high
    two = ArrayImpl(np.asarray(2, idt), False)
    for _ in range(math.ceil(math.log2(n + 1))):
        mid = lax.div(lax.add(low, high), two)
        pivot = getitem(arr, mid)
        go_left = lax.not_(_sort_lt(pivot, q)) if side == "left" else _sort_lt(q, pivot)
        low, high = lax.select_n(go_left, mid, low), lax.select_n(go_left, high, mid)
    return high


"""Array manipulation beyond reshaping: ``diff``, ``append``/``insert``/``delete``, ``rot90``,
``unstack``, ``resize``, ``block``, ``trim_zeros``, ``diagflat``, ``fill_diagonal``,
``choose``, written as ``jnp`` writes them (so dtypes, weak types and errors agree)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, broadcast_shapes, broadcast_to, convert, normalize_axis
from fcore.numpy.searching import concrete



def _index_along(axis: int, idx: object) -> tuple[object, ...]:
    return (slice(None),) * axis + (idx,)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """The ``n``-th discrete difference along ``axis`` (``!=`` for booleans)."""
    from fcore.numpy.shape_ops import concatenate
    from fcore.numpy.ufuncs_logic import not_equal
    from fcore.numpy.ufuncs_binary import subtract

    arr = asarray(a, "diff")
    n = operator.index(n)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    ax = normalize_axis(axis, arr.ndim)
    edge_shape = tuple(1 if d == ax else s for d, s in enumerate(arr.shape))

    def edge(e: ArrayLike) -> Array:
        v = asarray(e, "diff")
        return broadcast_to(v, edge_shape) if v.ndim == 0 else v

    parts = [*([edge(prepend)] if prepend is not None else []), arr, *([edge(append)] if append is not None else [])]
    if len(parts) > 1:
        arr = concatenate(parts, ax)
    op = not_equal if dtypes.is_bool(arr.dtype) else subtract
    for _ in range(n):
        m = arr.shape[ax]
        arr = op(lax.slice_in_dim(arr, min(1, m), m, axis=ax), lax.slice_in_dim(arr, 0, max(m - 1, 0), axis=ax))
    return arr


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None) -> Array:
    """Differences of consecutive elements of the flattened array, with optional ends."""
    from fcore.numpy.shape_ops import concatenate, ravel

    arr = ravel(asarray(ary, "ediff1d"))
    n = arr.shape[0]
    result = lax.sub(lax.slice_in_dim(arr, min(1, n), n), lax.slice_in_dim(arr, 0, max(n - 1, 0)))
    if to_begin is not None:
        result = concatenate((ravel(convert(asarray(to_begin, "ediff1d"), arr.dtype)), result))
    if to_end is not None:
        result = concatenate((result, ravel(convert(asarray(to_end, "ediff1d"), arr.dtype))))
    return result


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None)."""
    from fcore.numpy.shape_ops import concatenate, ravel

    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None) -> Array:
    """``values`` inserted before the indices ``obj`` along ``axis`` (jnp's scatter scheme)."""
    from fcore.numpy.creation import arange, array, full, ones, zeros_like
    from fcore.numpy.searching import nonzero
    from fcore.numpy.shape_ops import moveaxis, ravel
    from fcore.numpy.sorting import argsort
    from fcore.numpy.ufuncs_binary import add, clip
    from fcore.numpy.ufuncs_logic import less, where

    a = asarray(arr, "insert")
    if not isinstance(obj, slice):
        asarray(obj, "insert", 1)
    vals = asarray(values, "insert", 2)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = normalize_axis(axis, a.ndim)
    if isinstance(obj, slice):
        indices = arange(*obj.indices(a.shape[ax]))
    else:
        indices = array(obj) if isinstance(obj, (list, tuple)) else asarray(obj, "insert", 1)
    if indices.ndim > 1:
        raise ValueError(f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}")
    if not dtypes.is_integer(indices.dtype):
        if indices.size == 0 and not isinstance(obj, Array):
            indices = convert(indices, dtypes.default_int_dtype())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = array(vals, ndmin=a.ndim, dtype=a.dtype)
    if indices.size == 1:
        index = ravel(indices)[0]
        if indices.ndim == 0:
            vals = moveaxis(vals, 0, ax)
        indices = full(vals.shape[ax], index)
    n_input = a.shape[ax]
    n_insert = broadcast_shapes(indices.shape, (vals.shape[ax],))[0]
    out_shape = list(a.shape)
    out_shape[ax] += n_insert
    out = zeros_like(a, shape=tuple(out_shape))
    indices = where(less(indices, 0), add(indices, n_input), indices)
    indices = clip(indices, 0, n_input)
    values_ind = indices.at[argsort(indices)].add(arange(n_insert, dtype=indices.dtype))
    arr_mask = ones(n_input + n_insert, dtype=bool).at[values_ind].set(False)
    arr_ind = nonzero(arr_mask, size=n_input)[0]
    out = out.at[_index_along(ax, values_ind)].set(vals)
    result: Array = out.at[_index_along(ax, arr_ind)].set(a)
    return result


def delete(arr: ArrayLike, obj: ArrayLike | slice, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Array:
    """``arr`` without the entries ``obj`` along ``axis`` (static indices, a slice, a boolean
    mask, or traced indices with ``assume_unique_indices=True``)."""
    from fcore.numpy.creation import arange
    from fcore.numpy.indexing import getitem
    from fcore.numpy.shape_ops import concatenate, ravel
    from fcore.numpy.sorting import sort
    from fcore.numpy.ufuncs_binary import add, clip
    from fcore.numpy.ufuncs_logic import less, where

    a = asarray(arr, "delete")
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = normalize_axis(axis, a.ndim)
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        i = normalize_axis(obj, a.shape[ax])
        n = a.shape[ax]
        return concatenate([lax.slice_in_dim(a, 0, i, axis=ax), lax.slice_in_dim(a, i + 1, n, axis=ax)], axis=ax)
    if isinstance(obj, slice):
        obj = arange(a.shape[ax])[obj]
        assume_unique_indices = True
    idx = asarray(obj, "delete", 1)
    if dtypes.is_integer(idx.dtype) and assume_unique_indices:
        flat = ravel(idx)
        flat = clip(where(less(flat, 0), add(flat, a.shape[ax]), flat), 0, a.shape[ax])
        flat = sort(flat)
        flat = lax.sub(flat, arange(flat.shape[0], dtype=flat.dtype))
        keep = arange(a.shape[ax] - flat.size, dtype=flat.dtype)
        hits = lax.ge(lax.broadcast_in_dim(keep, (flat.shape[0], keep.shape[0]), (1,)),
                      lax.broadcast_in_dim(flat, (flat.shape[0], keep.shape[0]), (0,)))
        from fcore.numpy.reductions import sum as _sum

        keep = lax.add(keep, _sum(hits, axis=0, dtype=keep.dtype))
        return getitem(a, _index_along(ax, keep))
    host = concrete(idx, "'obj' array argument of jnp.delete()")
    if np.issubdtype(host.dtype, np.integer):
        mask = np.ones(a.shape[ax], dtype=bool)
        mask[host] = False
    elif host.dtype == bool:
        if host.shape != (a.shape[ax],):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with length matching specified axis."
            )
        mask = ~host
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={host.dtype}; must be integer or bool.")
    return getitem(a, _index_along(ax, mask))


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    from fcore.numpy.shape_ops import flip, transpose

    x = asarray(m, "rot90")
    if x.ndim < 2:
        raise ValueError(
            f"rot90 requires its first argument to have ndim at least two, but got first argument of shape {x.shape}, "
            f"which has ndim {x.ndim}"
        )
    ax1, ax2 = normalize_axis(axes[0], x.ndim), normalize_axis(axes[1], x.ndim)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, ax1), ax2)
    perm = list(range(x.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(x, ax2), perm)
    return flip(transpose(x, perm), ax2)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    arr = asarray(x, "unstack")
    if arr.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    ax = normalize_axis(axis, arr.ndim)
    return tuple(lax.index_in_dim(arr, i, ax, keepdims=False) for i in range(arr.shape[ax]))


def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Split along the third axis."""
    from fcore.numpy.shape_ops import split

    x = asarray(ary, "dsplit")
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Array:
    """The flattened ``a`` repeated cyclically to fill ``new_shape``."""
    from fcore.numpy.creation import zeros_like
    from fcore.numpy.shape_ops import ravel, reshape, tile

    shape = (operator.index(new_shape),) if isinstance(new_shape, (int, np.integer)) else tuple(operator.index(d) for d in new_shape)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = ravel(asarray(a, "resize"))
    size = math.prod(shape)
    if arr.size == 0 or size == 0:
        return zeros_like(arr, shape=shape)
    reps = -(-size // arr.size)
    return reshape(lax.slice_in_dim(tile(arr, reps), 0, size), shape)


def _block(xs: Any) -> tuple[Array, int]:
    from fcore.numpy.shape_ops import concatenate

    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if not xs:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts = [_block(x) for x in xs]
        depths = [d for _, d in parts]
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], max(p.ndim for p, _ in parts))
        arrays = [lax.reshape(p, (1,) * (rank - p.ndim) + p.shape) if p.ndim < rank else p for p, _ in parts]
        return concatenate(arrays, axis=-depths[0]), depths[0] + 1
    return asarray(xs, "block"), 1


def block(arrays: Any) -> Array:
    """Assemble an array from nested lists of blocks."""
    out, _ = _block(arrays)
    return out


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Array:
    """``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros (concrete input)."""
    from fcore.numpy.indexing import getitem

    x = asarray(filt, "trim_zeros")
    host = concrete(x, "Error arose in the `filt` argument of trim_zeros()")
    if axis is None:
        axes = set(range(host.ndim))
    else:
        axes = {normalize_axis(a, host.ndim) for a in ((axis,) if isinstance(axis, int) else axis)}
    lower = trim.lower()
    if not axes or ("f" not in lower and "b" not in lower):
        return x
    slices: list[slice] = []
    for ax in range(host.ndim):
        if ax not in axes:
            slices.append(slice(None))
            continue
        mask = np.asarray(host.astype(bool).any(axis=tuple(i for i in range(host.ndim) if i != ax)))
        if not mask.any():
            slices.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in lower else None
        stop = host.shape[ax] - int(mask[::-1].argmax()) if "b" in lower else None
        slices.append(slice(start, stop))
    return getitem(x, tuple(slices))


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
    from fcore.numpy.creation import zeros
    from fcore.numpy.shape_ops import ravel

    flat = ravel(asarray(v, "diagflat"))
    n = flat.shape[0] + abs(k)
    i = np.arange(n - abs(k))
    pos = i + k + i * n if k >= 0 else i + (i - k) * n
    res: Array = zeros(n * n, dtype=flat.dtype).at[pos].set(flat)
    return lax.reshape(res, (n, n))


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *, inplace: bool = True) -> Array:
    """A copy of ``a`` with ``val`` on its main diagonal (``inplace=False`` is required)."""
    from fcore.numpy.shape_ops import ravel, tile

    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    x, v = asarray(a, "fill_diagonal"), asarray(val, "fill_diagonal", 1)
    if x.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if x.ndim > 2 and not all(n == x.shape[0] for n in x.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(x.shape)
    idx = (np.arange(n),) * x.ndim
    if v.ndim != 0:
        flat = ravel(v)
        reps = -(-n // flat.shape[0]) if flat.shape[0] else 1
        v = lax.slice_in_dim(tile(flat, reps), 0, n)
    result: Array = x.at[idx].set(v)
    return result


def choose(a: ArrayLike, choices: Sequence[ArrayLike] | Array | np.ndarray[Any, Any], out: None = None,
           mode: str = "raise") -> Array:
    """For each element, the entry of ``choices[a]`` (``mode`` handles out-of-range ``a``)."""
    from fcore.numpy.creation import array
    from fcore.numpy.indexing import getitem
    from fcore.numpy.shape_ops import broadcast_arrays
    from fcore.numpy.ufuncs_binary import clip, remainder

    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    idx = asarray(a, "choose")
    opts = [asarray(c, "choose", i + 1) for i, c in enumerate(choices)]
    if not dtypes.is_integer(idx.dtype):
        raise ValueError("`a` array must be integer typed")
    n = len(opts)
    if mode == "raise":
        host = concrete(idx, "The error occurred because jnp.choose was jit-compiled with mode='raise'. "
                             "Use mode='wrap' or mode='clip' instead")
        if ((host < 0) | (host >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = remainder(idx, n)
    elif mode == "clip":
        idx = clip(idx, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    idx, *opts = broadcast_arrays(idx, *opts)
    grid = tuple(ArrayImpl(np.arange(s).reshape((1,) * d + (s,) + (1,) * (idx.ndim - d - 1)), False)
                 for d, s in enumerate(idx.shape))
    return getitem(array(opts), (idx, *grid))

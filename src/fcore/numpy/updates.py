"""NumPy's in-place updates in ``fcore.numpy``: ``put``, ``place`` and ``put_along_axis``.

fcore arrays are immutable, so these return an updated copy and, as in ``jnp``, require
``inplace=False`` to say so: the default ``inplace=True`` raises ``ValueError``.
"""

from __future__ import annotations

import math

from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, broadcast_to, normalize_axis
from fcore.numpy.index_tricks import indices as _indices, unravel_index
from fcore.numpy.indexing import at
from fcore.numpy.shape_ops import ravel, tile
from fcore.numpy.ufuncs_binary import clip, remainder
from fcore.numpy.ufuncs_logic import where


def _tile_to_size(arr: Array, size: int) -> Array:
    """The 1-D ``arr`` repeated or cut to ``size`` elements."""
    if arr.size < size:
        arr = tile(arr, math.ceil(size / arr.size))
    return arr[:size] if arr.size > size else arr


def _immutable(name: str) -> ValueError:
    return ValueError(
        f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array."
    )


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *, inplace: bool = True) -> Array:
    """``a`` with the elements at flat indices ``ind`` replaced by ``v`` (repeated as needed);
    out-of-bounds indices are dropped, or clipped/wrapped with ``mode``."""
    if inplace:
        raise _immutable("put")
    arr, ind_arr, v_arr = asarray(a, "put"), ravel(asarray(ind, "put", 1)), ravel(asarray(v, "put", 2))
    if not arr.size or not ind_arr.size or not v_arr.size:
        return arr
    v_arr = _tile_to_size(v_arr, ind_arr.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr, scatter_mode = clip(ind_arr, 0, arr.size - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind_arr, scatter_mode = remainder(ind_arr, arr.size), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return at(arr)[unravel_index(ind_arr, arr.shape)].set(v_arr, mode=scatter_mode)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Array:
    """``arr`` with the elements where ``mask`` holds replaced, in order, by ``vals`` (repeated
    as needed)."""
    data, mask_arr, vals_arr = asarray(arr, "place"), asarray(mask, "place", 1), ravel(asarray(vals, "place", 2))
    if inplace:
        raise _immutable("place")
    if data.size != mask_arr.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals_arr.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    idx = where(ravel(mask_arr), size=mask_arr.size, fill_value=mask_arr.size)[0]
    vals_arr = _tile_to_size(vals_arr, idx.shape[0])
    return at(ravel(data))[idx].set(vals_arr, mode="drop").reshape(data.shape)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None, inplace: bool = True, *,
                   mode: str | None = None) -> Array:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the other axes matched
    elementwise, as ``take_along_axis`` reads them)."""
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
            "are immutable. Pass inplace=False to instead return an updated array."
        )
    a, ind, vals = asarray(arr, "put_along_axis"), asarray(indices, "put_along_axis", 1), asarray(values, "put_along_axis", 2)
    shape = a.shape
    flat = axis is None
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim != ind.ndim:
        raise ValueError(f"put_along_axis arguments 'arr' and 'indices' must have same ndim. Got arr.ndim={a.ndim} and indices.ndim={ind.ndim}.")
    try:
        vals = broadcast_to(vals, ind.shape)
    except ValueError:
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={vals.shape} and indices.shape={ind.shape}."
        ) from None
    ax = normalize_axis(axis, a.ndim)
    idx = list(_indices(a.shape, sparse=True))
    idx[ax] = ind
    result = at(a)[tuple(idx)].set(vals, mode=mode)
    return result.reshape(shape) if flat else result

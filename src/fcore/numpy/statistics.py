"""Order statistics of ``fcore.numpy``: ``quantile``, ``percentile``, ``median`` (and their
NaN-ignoring versions) and ``ptp``, computed as ``jnp`` computes them (a sort, then a gather
of the neighbouring order statistics and an interpolation), so values and dtypes agree.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import Axis, asarray, convert, normalize_axis, to_inexact
from fcore.numpy.reductions import any as _any, max as _max, min as _min, sum as _sum
from fcore.numpy.ufuncs_logic import isnan as _isnan, where as _where


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _scalar(value: float, like: Array) -> Array:
    return ArrayImpl(np.asarray(value).astype(like.dtype), False)


def _flatten_axes(a: Array, axis: Axis, keepdims: bool) -> tuple[Array, int, list[int]]:
    """Reduce the quantile over one axis: ``None`` flattens, a tuple of axes is moved last and
    merged. Returns the array, the axis, and the keepdims shape (``[]`` when not needed)."""
    keepdim: list[int] = []
    if axis is None:
        if keepdims:
            keepdim = [1] * a.ndim
        return lax.reshape(a, (a.size,)), 0, keepdim
    if isinstance(axis, (tuple, list)):
        nd = a.ndim
        axes = tuple(normalize_axis(ax, nd) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        keepdim = [1 if d in axes else n for d, n in enumerate(a.shape)]
        keep = [d for d in range(nd) if d not in axes]
        moved = lax.transpose(a, (*keep, *axes)) if (*keep, *axes) != tuple(range(nd)) else a
        flat = lax.reshape(moved, (*(a.shape[d] for d in keep), math.prod(a.shape[d] for d in axes)))
        return flat, flat.ndim - 1, keepdim
    return a, normalize_axis(axis, a.ndim), keepdim


def _quantile(a: ArrayLike, q: ArrayLike, axis: Axis, method: str, keepdims: bool, squash_nans: bool,
              name: str) -> Array:
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', or 'nearest'")
    x = asarray(a, name)
    qa = asarray(q, name, 1)
    x = convert(x, to_inexact(x.dtype), x.weak_type)
    if dtypes.is_complex(x.dtype):
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    x, axis_, keepdim = _flatten_axes(x, axis, keepdims)
    q_shape, q_ndim = qa.shape, qa.ndim
    if q_ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {qa.shape}")
    a_shape = x.shape
    int_dt = dtypes.default_int_dtype()
    if squash_nans:
        x = _where(_isnan(x), np.nan, x)  # every NaN positive, so that they sort last
        x = lax.sort(x, dimension=axis_)
        counts = _sum(lax.not_(_isnan(x)), axis=axis_, dtype=qa.dtype, keepdims=keepdims)
        after = counts.shape
        qq = lax.expand_dims(qa, tuple(range(q_ndim, len(after) + q_ndim))) if after else qa
        counts = lax.expand_dims(counts, tuple(range(q_ndim))) if q_ndim else counts
        qq, counts = _broadcast_pair(qq, counts)
        one = _scalar(1, qq)
        qq = lax.mul(qq, lax.sub(counts, one))
        low, high = lax.floor(qq), lax.ceil(qq)
        high_weight = lax.sub(qq, low)
        low_weight = lax.sub(one, high_weight)
        top = lax.sub(counts, one)
        zero = _scalar(0, qq)
        low = lax.max(zero, lax.min(low, top))
        high = lax.max(zero, lax.min(high, top))
        low_i, high_i = lax.convert_element_type(low, int_dt), lax.convert_element_type(high, int_dt)
        out_shape = q_shape + after
        index: list[Any] = [lax.broadcasted_iota(int_dt, out_shape, d + q_ndim) for d in range(len(after))]
        from fcore.numpy.indexing import getitem

        if keepdims:
            index[axis_] = low_i
        else:
            index.insert(axis_, low_i)
        low_value = getitem(x, tuple(index))
        index[axis_] = high_i
        high_value = getitem(x, tuple(index))
    else:
        x = _where(_any(_isnan(x), axis=axis_, keepdims=True), np.nan, x)
        x = lax.sort(x, dimension=axis_)
        n = _scalar(a_shape[axis_], qa)
        one = _scalar(1, qa)
        qq = lax.mul(qa, lax.sub(n, one))
        low, high = lax.floor(qq), lax.ceil(qq)
        high_weight = lax.sub(qq, low)
        low_weight = lax.sub(one, high_weight)
        zero = _scalar(0, qq)
        low = lax.clamp(zero, low, lax.sub(n, one))
        high = lax.clamp(zero, high, lax.sub(n, one))
        low_i, high_i = lax.convert_element_type(low, int_dt), lax.convert_element_type(high, int_dt)
        slice_sizes = list(a_shape)
        slice_sizes[axis_] = 1
        rank = len(a_shape)
        dnums = lax.GatherDimensionNumbers(
            offset_dims=tuple(range(q_ndim, rank + q_ndim if keepdims else rank + q_ndim - 1)),
            collapsed_slice_dims=() if keepdims else (axis_,),
            start_index_map=(axis_,),
        )
        low_value = lax.gather(x, lax.expand_dims(low_i, (q_ndim,)), dnums, slice_sizes)
        high_value = lax.gather(x, lax.expand_dims(high_i, (q_ndim,)), dnums, slice_sizes)
        if q_ndim == 1:
            low_weight = lax.broadcast_in_dim(low_weight, low_value.shape, (0,))
            high_weight = lax.broadcast_in_dim(high_weight, high_value.shape, (0,))
    result = _interpolate(method, low_value, high_value, low_weight, high_weight, qa.dtype)
    if keepdims and keepdim:
        if q_ndim > 0:
            keepdim = [q_shape[0], *keepdim]
        result = lax.reshape(result, tuple(keepdim))
    return lax.convert_element_type(result, x.dtype)


def _broadcast_pair(a: Array, b: Array) -> tuple[Array, Array]:
    from fcore.numpy._promotion import broadcast_shapes, broadcast_to

    shape = broadcast_shapes(a.shape, b.shape)
    return broadcast_to(a, shape), broadcast_to(b, shape)


def _interpolate(method: str, low: Array, high: Array, low_w: Array, high_w: Array, q_dtype: Any) -> Array:
    if method == "linear":
        lo, hi = lax.convert_element_type(low, q_dtype), lax.convert_element_type(high, q_dtype)
        lo, low_w = _broadcast_pair(lo, low_w)
        hi, high_w = _broadcast_pair(hi, high_w)
        return lax.add(lax.mul(lo, low_w), lax.mul(hi, high_w))
    if method == "lower":
        return low
    if method == "higher":
        return high
    if method == "nearest":
        half = _scalar(0.5, high_w)
        pred = lax.le(high_w, half)
        pred, low = _broadcast_pair(pred, low)
        return lax.select_n(pred, high, low)
    return lax.mul(lax.add(low, high), _scalar(0.5, low))  # midpoint


def _check_args(name: str, out: object, overwrite_input: bool, weights: object) -> None:
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")
    if weights is not None:
        raise NotImplementedError(f"fcore.numpy.{name}: weights are not supported")


def quantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: ArrayLike | None = None) -> Array:
    """The ``q``-th quantiles (``q`` in ``[0, 1]``) along ``axis``; NaN where the data has NaNs."""
    _check_args("quantile", out, overwrite_input, weights)
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False) -> Array:
    """``quantile`` ignoring NaNs."""
    _check_args("nanquantile", out, overwrite_input, None)
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


def _percent(q: ArrayLike) -> Array:
    from fcore.numpy.ufuncs_binary import true_divide

    return true_divide(q, 100.0)


def percentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: ArrayLike | None = None) -> Array:
    """The ``q``-th percentiles (``q`` in ``[0, 100]``)."""
    _check_args("percentile", out, overwrite_input, weights)
    x = asarray(a, "percentile")
    qa = asarray(q, "percentile", 1)
    return quantile(x, _percent(convert(qa, to_inexact(qa.dtype), qa.weak_type)), axis, method=method, keepdims=keepdims)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False) -> Array:
    """``percentile`` ignoring NaNs."""
    _check_args("nanpercentile", out, overwrite_input, None)
    qa = asarray(q, "nanpercentile", 1)
    return nanquantile(a, _percent(convert(qa, to_inexact(qa.dtype), qa.weak_type)), axis, method=method, keepdims=keepdims)


def median(a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The median along ``axis`` (the mean of the two middle values for an even count)."""
    _check_args("median", out, overwrite_input, None)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanmedian(a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """``median`` ignoring NaNs."""
    _check_args("nanmedian", out, overwrite_input, None)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """Range of values (``max - min``) along ``axis``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    x = asarray(a, "ptp")
    return lax.sub(_max(x, axis, keepdims=keepdims), _min(x, axis, keepdims=keepdims))  # bool: a TypeError, as jnp

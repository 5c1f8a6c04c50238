"""NaN-ignoring reductions of ``fcore.numpy`` (``nansum``, ``nanmean``, ``nanargmax``...), with
``jnp``'s formulas: NaNs are replaced by the reduction's identity (integers pass through), an
all-NaN slice gives NaN for ``nanmax``/``nanmin`` and ``-1`` for ``nanargmax``/``nanargmin``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._dtypes import canonical_dtype
from fcore.numpy._promotion import Axis, asarray, to_inexact
from fcore.numpy import reductions as R
from fcore.numpy.ufuncs_logic import isnan as _isnan, where as _where



def _init_value(dt: Any, value: float) -> Array:
    """jnp's ``_reduction_init_val``: the identity as a value of ``dt`` (clamped for ints)."""
    if dtypes.is_bool(dt):
        return ArrayImpl(np.asarray(value > 0, dt), False)
    if dtypes.is_integer(dt) and np.isinf(value):
        info = np.iinfo(dt)
        return ArrayImpl(np.asarray(info.min if value < 0 else info.max, dt), False)
    return ArrayImpl(np.asarray(value).astype(dt), False)


def _nan_reduction(a: ArrayLike, name: str, reduction: Callable[..., Array], init: float, nan_if_all_nan: bool,
                   axis: Axis, keepdims: bool, where: ArrayLike | None, **kwargs: Any) -> Array:
    x = asarray(a, name)
    R._check_where(name, where)
    if not dtypes.is_inexact(x.dtype):
        return reduction(x, axis=axis, keepdims=keepdims, where=where, **kwargs)
    out = reduction(_where(_isnan(x), _init_value(x.dtype, init), x), axis=axis, keepdims=keepdims, where=where, **kwargs)
    if not nan_if_all_nan:
        return out
    all_nan = R.all(_isnan(x), axis=axis, keepdims=keepdims)
    return _where(all_nan, ArrayImpl(np.asarray(np.nan).astype(x.dtype), False), out)


def _user_dtype(dtype: Any) -> Any:
    return None if dtype is None else canonical_dtype(dtype)


def nansum(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """``sum`` treating NaNs as zero."""
    R._no_out(out, "nansum")
    return _nan_reduction(a, "nansum", R.sum, 0, False, axis, keepdims, where, dtype=_user_dtype(dtype), initial=initial)


def nanprod(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """``prod`` treating NaNs as one."""
    R._no_out(out, "nanprod")
    return _nan_reduction(a, "nanprod", R.prod, 1, False, axis, keepdims, where, dtype=_user_dtype(dtype), initial=initial)


def nanmax(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """``max`` ignoring NaNs (NaN where a slice is all NaN and no ``initial`` is given)."""
    R._no_out(out, "nanmax")
    return _nan_reduction(a, "nanmax", R.max, -np.inf, initial is None, axis, keepdims, where, initial=initial)


def nanmin(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """``min`` ignoring NaNs (NaN where a slice is all NaN and no ``initial`` is given)."""
    R._no_out(out, "nanmin")
    return _nan_reduction(a, "nanmin", R.min, np.inf, initial is None, axis, keepdims, where, initial=initial)


def nanmean(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            where: ArrayLike | None = None) -> Array:
    """``mean`` of the non-NaN elements."""
    R._no_out(out, "nanmean")
    x = asarray(a, "nanmean")
    w = R._check_where("nanmean", where)
    if not dtypes.is_inexact(x.dtype):
        return R.mean(x, axis, dtype, keepdims=keepdims, where=w)
    dt = to_inexact(x.dtype) if dtype is None else canonical_dtype(dtype)
    normalizer = R.sum(lax.not_(_isnan(x)), axis=axis, dtype=dt, keepdims=keepdims, where=w)
    return lax.div(nansum(x, axis, dtype=dt, keepdims=keepdims, where=w), normalizer)


def nanvar(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: ArrayLike | None = None, mean: ArrayLike | None = None) -> Array:
    """``var`` of the non-NaN elements."""
    R._no_out(out, "nanvar")
    x = asarray(a, "nanvar")
    w = R._check_where("nanvar", where)
    comp, out_dtype = R._var_promote_types(x.dtype, _user_dtype(dtype))
    x = lax.convert_element_type(x, comp)
    if mean is None:
        a_mean = nanmean(x, axis, dtype=comp, keepdims=True, where=w)
    else:
        a_mean = lax.convert_element_type(asarray(mean, "nanvar"), comp)
    from fcore.numpy.ufuncs_binary import subtract

    centered = _where(_isnan(x), 0, subtract(x, a_mean))
    if dtypes.is_complex(centered.dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.integer_pow(centered, 2)
    normalizer = R.sum(lax.not_(_isnan(x)), axis=axis, keepdims=keepdims, where=w)
    normalizer = lax.sub(normalizer, ArrayImpl(np.asarray(ddof, normalizer.dtype), False))
    empty = lax.le(normalizer, ArrayImpl(np.zeros((), normalizer.dtype), False))
    result = R.sum(centered, axis, keepdims=keepdims, where=w)
    result = _where(empty, np.nan, result)
    divisor = _where(empty, 1, normalizer)
    result = lax.div(result, lax.convert_element_type(divisor, result.dtype))
    return lax.convert_element_type(result, out_dtype)


def nanstd(a: ArrayLike, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: ArrayLike | None = None, mean: ArrayLike | None = None) -> Array:
    """``std`` of the non-NaN elements."""
    R._no_out(out, "nanstd")
    return lax.sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean))


def _nanarg(name: str, fill: float, arg: Callable[..., Array], a: ArrayLike, axis: int | None, out: None,
            keepdims: bool | None) -> Array:
    R._no_out(out, name)
    x = asarray(a, name)
    kd = bool(keepdims)
    if not dtypes.is_inexact(x.dtype):
        return arg(x, axis=axis, keepdims=kd)
    nan_mask = _isnan(x)
    res = arg(_where(nan_mask, fill, x), axis=axis, keepdims=kd)
    return _where(R.all(nan_mask, axis=axis, keepdims=kd), -1, res)


def nanargmax(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Array:
    """``argmax`` ignoring NaNs (``-1`` where a slice is all NaN)."""
    return _nanarg("nanargmax", -np.inf, R.argmax, a, axis, out, keepdims)


def nanargmin(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Array:
    """``argmin`` ignoring NaNs (``-1`` where a slice is all NaN)."""
    return _nanarg("nanargmin", np.inf, R.argmin, a, axis, out, keepdims)

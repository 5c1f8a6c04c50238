"""Reductions of ``fcore.numpy``: ``sum``, ``mean``, ``var``, ``argmax``, ``cumsum``...

The dtype rules are ``jnp``'s: ``sum``/``prod`` of bools and small integers accumulate in the
default integer dtype (``promote_integers``), float16/bfloat16 sums are computed in float32 and
cast back, ``mean``/``var`` of integers are floating, and results are never weakly typed.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fcore import lax
from fcore.config import x64_enabled
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.numpy._dtypes import canonical_dtype
from fcore.numpy._promotion import Axis, asarray, broadcast_to, convert, normalize_axes, normalize_axis, to_inexact
from fcore.numpy.ufuncs_logic import where as _where

ReduceLax = Callable[[ArrayLike, tuple[int, ...]], Array]


def _upcast_f16(dt: DType) -> DType:
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


def _promote_integer_dtype(dt: DType) -> DType:
    """jnp's ``promote_integers``: bool and narrow ints accumulate in the default (u)int."""
    x64 = x64_enabled()
    if dtypes.is_bool(dt):
        return dtypes.default_int_dtype(x64)
    if dtypes.is_unsigned_int(dt):
        du = dtypes.uint64 if x64 else dtypes.uint32
        return du if dt.itemsize < du.itemsize else dt
    if dtypes.is_signed_int(dt):
        di = dtypes.default_int_dtype(x64)
        return di if dt.itemsize < di.itemsize else dt
    return dt


def _expand(result: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    return lax.expand_dims(result, axes) if keepdims and axes else result


def _check_where(name: str, where_: ArrayLike | None) -> Array | None:
    if where_ is None:
        return None
    w = asarray(where_, name)
    if w.dtype != dtypes.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got dtype={w.dtype}.")
    return w


def _no_out(out: object, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to fnp.{name} is not supported.")


def _reduction(
    a: ArrayLike,
    name: str,
    op: ReduceLax,
    bool_op: ReduceLax,
    identity: Any,
    *,
    has_identity: bool = True,
    axis: Axis,
    dtype: Any,
    keepdims: bool,
    initial: ArrayLike | None,
    where_: ArrayLike | None,
    preproc: Callable[[Array], Array] | None = None,
    upcast_f16: bool = False,
    promote_integers: bool = False,
    binary: Callable[[Array, Array], Array] | None = None,
) -> Array:
    """jnp's ``_reduction``: dtype rules, then one ``lax.reduce_*``, then ``initial``/keepdims."""
    x = asarray(a, name)
    if preproc is not None:
        x = preproc(x)
    w = _check_where(name, where_)
    axes = normalize_axes(axis, x.ndim)
    if not has_identity and initial is None:
        if w is not None:
            raise ValueError(
                f"reduction operation {name} does not have an identity, so to use a where mask one has to specify 'initial'"
            )
        if builtins.any(x.shape[d] == 0 for d in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = x.dtype
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = canonical_dtype(dtype)
    comp = _upcast_f16(result_dtype) if upcast_f16 and dtypes.is_inexact(result_dtype) else result_dtype
    x = lax.convert_element_type(x, comp)
    fn = bool_op if comp == dtypes.bool_ else op
    if w is not None:
        x = _where(broadcast_to(w, x.shape) if w.shape != x.shape else w, x, _init_value(comp, identity))
    result = fn(x, axes)
    if initial is not None:
        assert binary is not None
        init = convert(initial, comp)
        if init.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {init.shape}")
        result = binary(init, result)
    result = _expand(result, axes, keepdims)
    return lax.convert_element_type(result, result_dtype)


def _init_value(dt: DType, value: Any) -> Array:
    if dtypes.is_bool(dt):
        return ArrayImpl(np.asarray(value > 0, dt), False)
    if dtypes.is_floating(dt) and np.isinf(value):
        return ArrayImpl(np.asarray(value).astype(dt), False)
    if dtypes.is_integer(dt) and np.isinf(value):
        info = np.iinfo(dt)
        return ArrayImpl(np.asarray(info.min if value < 0 else info.max, dt), False)
    return ArrayImpl(np.asarray(value).astype(dt), False)


def _cast_to_numeric(x: Array) -> Array:
    return lax.convert_element_type(x, dtypes.int32, x.weak_type) if x.dtype == dtypes.bool_ else x


def _cast_to_bool(x: Array) -> Array:
    if dtypes.is_complex(x.dtype):
        x = lax.real(x)
    return lax.convert_element_type(x, dtypes.bool_)


def sum(  # noqa: A001
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Sum over ``axis`` (``jnp.sum``): bools and narrow ints accumulate in the default int."""
    _no_out(out, "sum")
    return _reduction(
        a, "sum", lax.reduce_sum, lax.reduce_or, 0, axis=axis, dtype=dtype, keepdims=keepdims,
        initial=initial, where_=where, preproc=_cast_to_numeric, upcast_f16=dtype is None,
        promote_integers=promote_integers, binary=_sum_binary,
    )


def _sum_binary(a: Array, b: Array) -> Array:
    return lax.or_(a, b) if a.dtype == dtypes.bool_ else lax.add(a, b)


def _prod_binary(a: Array, b: Array) -> Array:
    return lax.and_(a, b) if a.dtype == dtypes.bool_ else lax.mul(a, b)


def prod(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Product over ``axis`` (``jnp.prod``)."""
    _no_out(out, "prod")
    return _reduction(
        a, "prod", lax.reduce_prod, lax.reduce_and, 1, axis=axis, dtype=dtype, keepdims=keepdims,
        initial=initial, where_=where, preproc=_cast_to_numeric, upcast_f16=dtype is None,
        promote_integers=promote_integers, binary=_prod_binary,
    )


def max(  # noqa: A001
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Maximum over ``axis`` (NaN-propagating; an empty reduction needs ``initial``)."""
    _no_out(out, "max")
    return _reduction(
        a, "max", lax.reduce_max, lax.reduce_max, -np.inf, has_identity=False, axis=axis, dtype=None, keepdims=keepdims,
        initial=initial, where_=where, binary=lax.max,
    )


def min(  # noqa: A001
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Minimum over ``axis`` (NaN-propagating; an empty reduction needs ``initial``)."""
    _no_out(out, "min")
    return _reduction(
        a, "min", lax.reduce_min, lax.reduce_min, np.inf, has_identity=False, axis=axis, dtype=None, keepdims=keepdims,
        initial=initial, where_=where, binary=lax.min,
    )


amax, amin = max, min


def all(  # noqa: A001
    a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False, *, where: ArrayLike | None = None
) -> Array:
    """Whether all elements (along ``axis``) are nonzero."""
    _no_out(out, "all")
    return _reduction(
        a, "all", lax.reduce_and, lax.reduce_and, True, axis=axis, dtype=None, keepdims=keepdims,
        initial=None, where_=where, preproc=_cast_to_bool,
    )


def any(  # noqa: A001
    a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False, *, where: ArrayLike | None = None
) -> Array:
    """Whether any element (along ``axis``) is nonzero."""
    _no_out(out, "any")
    return _reduction(
        a, "any", lax.reduce_or, lax.reduce_or, False, axis=axis, dtype=None, keepdims=keepdims,
        initial=None, where_=where, preproc=_cast_to_bool,
    )


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[d] for d in axes)


def mean(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
) -> Array:
    """Arithmetic mean (``jnp.mean``): integer inputs give floating results."""
    _no_out(out, "mean")
    x = asarray(a, "mean")
    w = _check_where("mean", where)
    result_dtype = to_inexact(x.dtype) if dtype is None else canonical_dtype(dtype)
    comp = _upcast_f16(result_dtype) if dtypes.is_inexact(result_dtype) else result_dtype
    axes = normalize_axes(axis, x.ndim)
    total = sum(x, axis, dtype=comp, keepdims=keepdims, where=w)
    if w is None:
        normalizer: Array = ArrayImpl(np.asarray(_count(x.shape, axes)).astype(comp), False)
    else:
        normalizer = sum(broadcast_to(w, x.shape), axis, dtype=comp, keepdims=keepdims)
    return lax.convert_element_type(lax.div(total, normalizer), result_dtype)


_mean = mean  # var's ``mean`` parameter shadows the function


def _var_promote_types(a_dtype: DType, dtype: DType | None) -> tuple[DType, DType]:
    if dtype is not None:
        if not dtypes.is_complex(dtype) and dtypes.is_complex(a_dtype):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the variance of an array of complex values."
            )
        computation = dtype
        out = dtype
    elif not dtypes.is_inexact(a_dtype):
        out = to_inexact(a_dtype)
        computation = out
    else:
        out = np.dtype(np.real(np.zeros((), a_dtype)).dtype)
        computation = a_dtype
    return _upcast_f16(computation), out


def var(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Array:
    """Variance with ``ddof`` delta degrees of freedom (``jnp.var``); a given ``mean`` (shaped
    as with ``keepdims=True``) is used instead of recomputing it."""
    _no_out(out, "var")
    if correction is None:
        correction = ddof
    elif ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    x = asarray(a, "var")
    w = _check_where("var", where)
    comp, out_dtype = _var_promote_types(x.dtype, None if dtype is None else canonical_dtype(dtype))
    x = lax.convert_element_type(x, comp)
    if mean is None:
        a_mean = _mean(x, axis, dtype=comp, keepdims=True, where=w)
    else:
        a_mean = lax.convert_element_type(asarray(mean, "var"), comp)
    centered = lax.sub(x, broadcast_to(a_mean, x.shape))
    if dtypes.is_complex(comp):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        comp = centered.dtype
    else:
        centered = lax.integer_pow(centered, 2)
    axes = normalize_axes(axis, x.ndim)
    if w is None:
        count = float(_count(x.shape, axes)) - float(correction)
        normalizer: Array = ArrayImpl(np.asarray(count).astype(comp), False)
    else:
        normalizer = lax.sub(
            sum(broadcast_to(w, x.shape), axis, dtype=comp, keepdims=keepdims),
            ArrayImpl(np.asarray(correction).astype(comp), False),
        )
    total = sum(centered, axis, dtype=comp, keepdims=keepdims, where=w)
    result = lax.convert_element_type(lax.div(total, normalizer), out_dtype)
    if w is None:
        if count > 0 and dtypes.is_inexact(out_dtype):
            return result
        # As jnp: ``where(normalizer > 0, result, nan)``, which also makes an integer
        # ``dtype``'s result a weakly typed float.
        return _where(ArrayImpl(np.asarray(count > 0), False), result, np.nan)
    return _where(lax.gt(normalizer, ArrayImpl(np.zeros((), normalizer.dtype), False)), result, np.nan)


def std(
    a: ArrayLike,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    correction: int | float | None = None,
) -> Array:
    """Standard deviation (``sqrt(var)``)."""
    _no_out(out, "std")
    if dtype is not None and not dtypes.is_inexact(canonical_dtype(dtype)):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    return lax.sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean, correction=correction))


def _arg(name: str, fn: Callable[[ArrayLike, int, Any], Array], a: ArrayLike, axis: int | None, keepdims: bool) -> Array:
    x = asarray(a, name)
    index_dtype = dtypes.default_int_dtype()
    if axis is None:
        if x.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        flat = lax.reshape(x, (x.size,)) if x.ndim != 1 else x
        result = fn(flat, 0, index_dtype)
        if keepdims:
            result = lax.expand_dims(result, tuple(range(x.ndim)))
        return result
    ax = normalize_axis(axis, x.ndim)
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = fn(x, ax, index_dtype)
    return lax.expand_dims(result, (ax,)) if keepdims else result


def argmax(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum (of the flattened array when ``axis`` is None)."""
    _no_out(out, "argmax")
    return _arg("argmax", lax.argmax, a, axis, keepdims)


def argmin(a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum (of the flattened array when ``axis`` is None)."""
    _no_out(out, "argmin")
    return _arg("argmin", lax.argmin, a, axis, keepdims)


def _cumulative(
    name: str, fn: Callable[[ArrayLike, int, bool], Array], a: ArrayLike, axis: int | None, dtype: Any, promote_integers: bool,
    nan_fill: float | None = None,
) -> Array:
    x = asarray(a, name)
    if nan_fill is not None and dtypes.is_inexact(x.dtype):
        x = _where(lax.ne(x, x), ArrayImpl(np.asarray(nan_fill, x.dtype), False), x)
    if axis is None or x.ndim == 0:
        x = lax.reshape(x, (x.size,)) if x.ndim != 1 else x
    ax = 0 if axis is None else normalize_axis(axis, x.ndim)
    if dtype is None:
        result_dtype = _promote_integer_dtype(x.dtype) if (promote_integers or x.dtype == dtypes.bool_) else x.dtype
        comp = result_dtype
    elif canonical_dtype(dtype) == dtypes.bool_:
        result_dtype = dtypes.bool_
        if x.dtype != dtypes.bool_:
            x = lax.ne(x, ArrayImpl(np.zeros((), x.dtype), False))
        comp = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = canonical_dtype(dtype)
        comp = result_dtype
    x = lax.convert_element_type(x, comp)
    return lax.convert_element_type(fn(x, ax, False), result_dtype)


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """Cumulative sum along ``axis`` (of the flattened array when ``axis`` is None)."""
    _no_out(out, "cumsum")
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, False)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """Cumulative product along ``axis``."""
    _no_out(out, "cumprod")
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, False)


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """``cumsum`` with NaNs counted as zero."""
    _no_out(out, "nancumsum")
    return _cumulative("nancumsum", lax.cumsum, a, axis, dtype, False, nan_fill=0.0)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
    """``cumprod`` with NaNs counted as one."""
    _no_out(out, "nancumprod")
    return _cumulative("nancumprod", lax.cumprod, a, axis, dtype, False, nan_fill=1.0)


def _array_api_cumulative(
    name: str, what: str, fn: Callable[[ArrayLike, int, bool], Array], x: ArrayLike, axis: int | None,
    dtype: Any, include_initial: bool, promote_integers: bool, initial: int,
) -> Array:
    """The Array API's ``cumulative_sum``/``cumulative_prod``: ``axis`` may be omitted only
    for 1-D input, and ``include_initial`` prepends the identity."""
    arr = asarray(x, name)
    if arr.ndim == 0:
        raise ValueError(
            f"The input must be non-scalar to take a cumulative {what}, however a scalar value or scalar array was given."
        )
    if axis is None:
        if arr.ndim > 1:
            raise ValueError(
                f"The input array has rank {arr.ndim}, however axis was not set to an explicit value. "
                "The axis argument is only optional for one-dimensional arrays."
            )
        axis = 0
    ax = normalize_axis(axis, arr.ndim)
    out = _cumulative(name, fn, arr, ax, dtype, promote_integers)
    if not include_initial:
        return out
    shape = tuple(1 if d == ax else n for d, n in enumerate(out.shape))
    first = lax.broadcast_in_dim(ArrayImpl(np.asarray(initial, out.dtype), False), shape, ())
    return lax.concatenate([first, out], ax)


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Array:
    """Array API cumulative sum: narrow integers accumulate in the default int (as ``sum``)."""
    return _array_api_cumulative("cumulative_sum", "sum", lax.cumsum, x, axis, dtype, include_initial, True, 0)


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Array:
    """Array API cumulative product (no integer promotion, as in jnp)."""
    return _array_api_cumulative("cumulative_prod", "product", lax.cumprod, x, axis, dtype, include_initial, False, 1)


def count_nonzero(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """Number of nonzero elements along ``axis`` (default int dtype)."""
    x = asarray(a, "count_nonzero")
    nz = lax.ne(x, ArrayImpl(np.zeros((), x.dtype), False))
    return sum(nz, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """``|a - b| <= atol + rtol * |b|`` elementwise (infinities equal themselves)."""
    from fcore.numpy import ufuncs_binary
    from fcore.numpy import ufuncs_logic
    from fcore.numpy._promotion import promote_n, result_of

    dt, weak = result_of(a, b, name="isclose")
    x, y = promote_n("isclose", a, b, dt=to_inexact(dt), weak=weak, full=True)
    rdt = np.dtype(np.real(np.zeros((), x.dtype)).dtype)
    rt = convert(rtol, rdt)
    at = convert(atol, rdt)
    both_nan = ufuncs_logic.logical_and(ufuncs_logic.isnan(x), ufuncs_logic.isnan(y))
    check_fin = ufuncs_logic.isfinite(y)
    in_range = lax.le(lax.abs(lax.sub(x, y)), lax.add(at, lax.mul(rt, lax.abs(y))))
    out = ufuncs_logic.logical_or(lax.eq(x, y), ufuncs_logic.logical_and(check_fin, in_range))
    return ufuncs_logic.logical_or(out, both_nan) if equal_nan else out


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """Whether all elements are ``isclose``."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array:
    """Whether both arrays have one shape and equal elements (a bool array, as jnp)."""
    from fcore.numpy import ufuncs_binary
    from fcore.numpy import ufuncs_logic

    x, y = asarray(a1, "array_equal", 0), asarray(a2, "array_equal", 1)
    if x.shape != y.shape:
        return ArrayImpl(np.asarray(False), False)
    eq = ufuncs_logic.equal(x, y)
    if equal_nan:
        eq = ufuncs_logic.logical_or(eq, ufuncs_logic.logical_and(ufuncs_logic.isnan(x), ufuncs_logic.isnan(y)))
    return all(eq)


def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None, returned: bool = False, keepdims: bool = False) -> Any:
    """Weighted mean along ``axis`` (the plain mean without ``weights``)."""
    from fcore.numpy import ufuncs_binary
    from fcore.numpy import ufuncs_logic
    from fcore.numpy._promotion import result_of

    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        x = asarray(a, "average")
        axes = normalize_axes(axis, x.ndim)
        count = ArrayImpl(np.asarray(_count(x.shape, axes)).astype(avg.dtype), False)
        return (avg, lax.broadcast_in_dim(count, avg.shape, ()) if avg.shape else count) if returned else avg
    dt, weak = result_of(a, weights, name="average")
    dt = to_inexact(dt)
    x, w = convert(a, dt, weak), convert(weights, dt, weak)
    if w.shape != x.shape:
        if axis is None or w.ndim != 1:
            raise ValueError("Length of weights not compatible with specified axis.")
        ax = normalize_axis(axis, x.ndim)
        w = lax.broadcast_in_dim(w, x.shape, (ax,))
    total_w = sum(w, axis=axis, keepdims=keepdims)
    avg = ufuncs_binary.true_divide(sum(ufuncs_binary.multiply(x, w), axis=axis, keepdims=keepdims), total_w)
    return (avg, total_w) if returned else avg


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Whether the arrays are equal after broadcasting (False when they do not broadcast)."""
    from fcore.numpy.creation import asarray as to_array
    from fcore.numpy.ufuncs_logic import equal

    x, y = to_array(a1), to_array(a2)
    try:
        eq = equal(x, y)
    except ValueError:
        return ArrayImpl(np.asarray(False), False)
    return all(eq)


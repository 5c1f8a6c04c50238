"""Array creation of ``fcore.numpy``: ``array``, ``asarray``, ``zeros``, ``arange``, ``eye``...

Dtype rules follow ``jnp``: Python scalars give weakly typed arrays of the default dtypes
(``fnp.asarray(2)`` is a weak int32 without 64-bit mode), NumPy inputs are canonicalized
(float64 becomes float32 without 64-bit mode), nested lists are strongly typed with the
promoted dtype of their leaves, and an explicit ``dtype`` always gives a strong type.
Constant fills are a ``broadcast_in_dim`` of a scalar, so they stage as one equation.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from fcore import lax
from fcore.api.jit import device_put
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.lax.copy import copy as lax_copy
from fcore.numpy._dtypes import canonical_dtype
from fcore.numpy._promotion import (
    Shape,
    asarray as _asarray,
    broadcast_to,
    convert,
    operand,
    to_inexact,
)
from fcore.sharding import apply_out_sharding

if TYPE_CHECKING:
    from fcore.typing import DTypeLike, Shape as ShapeLike

_canon = dtypes.canonicalize_dtype


def _shape(shape: Any) -> Shape:
    if isinstance(shape, (int, np.integer)) or (
        not isinstance(shape, (tuple, list, np.ndarray)) and hasattr(shape, "__index__")
    ):
        shp: Shape = (operator.index(shape),)
    else:
        shp = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shp):
        # jnp's error comes from lax.broadcast_in_dim: a TypeError.
        raise TypeError(f"negative dimensions are not allowed, got shape {shp}")
    return shp


def _leaves(obj: object, out: list[object]) -> None:
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)


def _nested_shape(obj: object) -> Shape:
    if isinstance(obj, (list, tuple)):
        if not obj:
            return (0,)
        inner = {_nested_shape(o) for o in obj}
        if len(inner) != 1:
            raise ValueError(f"setting an array element with a sequence: inhomogeneous shapes {sorted(inner)}")
        return (len(obj), *inner.pop())
    if isinstance(obj, (Array, np.ndarray, np.generic)):
        return tuple(obj.shape)
    return ()


def _stack_nested(obj: object, dt: DType) -> Array:
    """A nested list containing fcore arrays (maybe traced), stacked with ``lax``."""
    if isinstance(obj, (list, tuple)):
        parts = [_stack_nested(o, dt) for o in obj]
        parts = [lax.expand_dims(p, (0,)) for p in parts]
        return parts[0] if len(parts) == 1 else lax.concatenate(parts, 0)
    return convert(obj, dt, False)


def asarray(a: Any, dtype: DTypeLike | None = None, order: str | None = None, *, copy: bool | None = None) -> Array:
    """Convert to an fcore array (``jnp.asarray``): see the module docstring for the dtypes."""
    return array(a, dtype=dtype, copy=copy if copy else False, order=order)


def array(object: Any, dtype: DTypeLike | None = None, copy: bool = True, order: str | None = "K", ndmin: int = 0) -> Array:  # noqa: A002  # NumPy's name
    """Create an fcore array from an array-like (nested lists included)."""
    dt: DType | None = None if dtype is None else canonical_dtype(dtype)
    out: Array
    if isinstance(object, Array):
        out = object if dt is None else convert(object, dt, False)
    elif type(object) in (bool, int, float, complex):
        out = _asarray(object) if dt is None else convert(object, dt, False)
    elif isinstance(object, (np.ndarray, np.generic)):
        arr = np.array(object, copy=True) if copy else np.asarray(object)
        out = _asarray(arr) if dt is None else convert(arr, dt, False)
    elif isinstance(object, (list, tuple)):
        leaves: list[object] = []
        _leaves(object, leaves)
        if dt is None:
            if leaves:
                dt = dtypes.result_type(*(operand(x, "array") for x in leaves))[0]
            else:
                dt = _canon(dtypes.float64)
        if any(isinstance(x, Array) and not isinstance(x, ArrayImpl) for x in leaves):
            _nested_shape(object)
            out = _stack_nested(object, dt)
        else:
            _nested_shape(object)
            host = _to_host_nested(object)
            out = ArrayImpl(np.array(host, dtype=dt), False)
    elif hasattr(object, "__array__"):
        out = array(np.asarray(object), dtype=dtype, copy=False)
    elif object is None:
        raise ValueError("None is not a valid value for fnp.array")
    else:
        raise TypeError(f"Unexpected input type for array: {type(object)}")
    if ndmin > out.ndim:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _to_host_nested(obj: object) -> object:
    """Nested lists with concrete fcore arrays replaced by their NumPy values."""
    if isinstance(obj, (list, tuple)):
        return [_to_host_nested(o) for o in obj]
    if isinstance(obj, ArrayImpl):
        return obj.host()
    return obj



def _fill(shape: Shape, value: ArrayLike, dt: DType, weak: bool) -> Array:
    v = convert(value, dt, weak)
    if v.shape == shape:
        return v
    if v.shape == ():
        return lax.broadcast_in_dim(v, shape, ())
    return broadcast_to(v, shape)


def _placed(x: Array, device: Any, out_sharding: Any) -> Array:
    """``x`` on ``device`` (a device or sharding) or laid out as ``out_sharding`` (jnp's keywords)."""
    if out_sharding is not None:
        if device is not None:
            raise ValueError("Only one of `device` and `out_sharding` may be given")
        placed: Array = apply_out_sharding(x, out_sharding)
        return placed
    if device is not None:
        on_device: Array = device_put(x, device)
        return on_device
    return x


def zeros(shape: ShapeLike, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None) -> Array:
    """An array of zeros (default dtype: the default float)."""
    dt = _canon(dtypes.float64) if dtype is None else canonical_dtype(dtype)
    return _placed(_fill(_shape(shape), 0, dt, False), device, out_sharding)


def ones(shape: ShapeLike, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None) -> Array:
    """An array of ones (default dtype: the default float)."""
    dt = _canon(dtypes.float64) if dtype is None else canonical_dtype(dtype)
    return _placed(_fill(_shape(shape), 1, dt, False), device, out_sharding)


def empty(shape: ShapeLike, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None) -> Array:
    """Like ``zeros`` (fcore arrays are immutable, so "uninitialized" is zeros)."""
    return zeros(shape, dtype, device=device, out_sharding=out_sharding)


def full(
    shape: ShapeLike, fill_value: ArrayLike, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None,
) -> Array:
    """An array filled with ``fill_value`` (weakly typed for a Python scalar and no dtype)."""
    shp = _shape(shape)
    if dtype is None:
        dt, weak = operand(fill_value, "full")
    else:
        dt, weak = canonical_dtype(dtype), False
    if isinstance(fill_value, (Array, np.ndarray)) and fill_value.ndim:
        return _placed(broadcast_to(convert(fill_value, dt, weak), shp), device, out_sharding)
    return _placed(_fill(shp, fill_value, dt, weak), device, out_sharding)


def _like(a: ArrayLike, dtype: Any, shape: Any) -> tuple[Shape, DType, bool]:
    dt_a, weak_a = operand(a, "full_like")
    shp = tuple(np.shape(a)) if not isinstance(a, Array) else a.shape
    if shape is not None:
        shp = _shape(shape)
    if dtype is None:
        return shp, dt_a, weak_a
    return shp, canonical_dtype(dtype), False


def zeros_like(
    a: ArrayLike, dtype: DTypeLike | None = None, shape: ShapeLike | None = None, *, device: Any = None, out_sharding: Any = None,
) -> Array:
    """Zeros with the shape and dtype (and weak type) of ``a``."""
    shp, dt, weak = _like(a, dtype, shape)
    return _placed(_fill(shp, 0, dt, weak), device, out_sharding)


def ones_like(
    a: ArrayLike, dtype: DTypeLike | None = None, shape: ShapeLike | None = None, *, device: Any = None, out_sharding: Any = None,
) -> Array:
    """Ones with the shape and dtype (and weak type) of ``a``."""
    shp, dt, weak = _like(a, dtype, shape)
    return _placed(_fill(shp, 1, dt, weak), device, out_sharding)


def empty_like(
    prototype: ArrayLike, dtype: DTypeLike | None = None, shape: ShapeLike | None = None, *, device: Any = None,
) -> Array:
    """Zeros shaped like ``prototype`` (fcore arrays are never uninitialized)."""
    return zeros_like(prototype, dtype, shape, device=device)


def full_like(
    a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None, shape: ShapeLike | None = None, *, device: Any = None, out_sharding: Any = None,
) -> Array:
    """``fill_value`` with the shape and dtype (and weak type) of ``a``."""
    shp, dt, weak = _like(a, dtype, shape)
    if isinstance(fill_value, (Array, np.ndarray)) and fill_value.ndim:
        return _placed(broadcast_to(convert(fill_value, dt, weak), shp), device, out_sharding)
    return _placed(_fill(shp, fill_value, dt, weak), device, out_sharding)


def _static_scalar(x: Any, name: str) -> Any:
    if isinstance(x, ArrayImpl) or isinstance(x, np.ndarray):
        if np.ndim(x) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={x}")
        return np.asarray(x)[()]
    if isinstance(x, Array):
        from fcore.interpreters.trace import Tracer

        if isinstance(x, Tracer):
            x._concrete(f"the jnp.arange argument '{name}'")
    return x


def arange(start: Any, stop: Any = None, step: Any = None, dtype: DTypeLike | None = None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (static bounds), with ``jnp``'s dtype rules."""
    start_name = "stop" if stop is None and step is None else "start"
    start = _static_scalar(start, start_name)
    stop = None if stop is None else _static_scalar(stop, "stop")
    step = None if step is None else _static_scalar(step, "step")
    for v in (start, stop, step):
        if v is not None and np.iscomplexobj(v):
            raise ValueError("Passing complex start/stop/step to jnp.arange is not supported")
    if dtype is None:
        ops = [operand(v, "arange") for v in (start, stop, step) if v is not None]
        dt = dtypes.result_type(*ops)[0]
    else:
        dt = canonical_dtype(dtype)
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = dtypes.float32 if dtypes.is_floating(dt) and dt.itemsize < 4 else dt
        size = max(0, int(np.ceil((stop - start) / step)))
        iota = lax.broadcasted_iota(working, (size,), 0)
        return lax.convert_element_type(
            lax.add(convert(start, working), lax.mul(convert(step, working), iota)), dt
        )
    if start == 0:
        return lax.broadcasted_iota(dt, (max(0, int(np.ceil(stop))),), 0)
    size = max(0, int(np.ceil(stop - start)))
    return lax.add(convert(start, dt), lax.broadcasted_iota(dt, (size,), 0))


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: DTypeLike | None = None,
    axis: int = 0,
) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (``jnp.linspace``)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if dtype is None:
        rdt = dtypes.result_type(operand(start, "linspace"), operand(stop, "linspace"))[0]
        dt = to_inexact(rdt)
    else:
        dt = canonical_dtype(dtype)
    comp = to_inexact(dt)
    s = convert(start, comp)
    e = convert(stop, comp)
    from fcore.numpy._promotion import broadcast_shapes

    bshape = list(broadcast_shapes(s.shape, e.shape))
    bs, be = broadcast_to(s, tuple(bshape)), broadcast_to(e, tuple(bshape))
    ax = len(bshape) + axis + 1 if axis < 0 else axis
    bounds_shape = list(bshape)
    bounds_shape.insert(ax, 1)
    div = (num - 1) if endpoint else num
    real = dtypes.float64 if comp in (dtypes.float64, dtypes.complex128) else (
        dtypes.float32 if dtypes.is_complex(comp) else comp
    )
    delta: Array
    if num > 1:
        delta = lax.div(lax.sub(be, bs), convert(div, comp))
        iota_shape = [1] * len(bounds_shape)
        iota_shape[ax] = div
        stp = lax.div(lax.reshape(lax.iota(real, div), tuple(iota_shape)), convert(div, real))
        stp = lax.convert_element_type(stp, comp)
        out_shape = tuple(bounds_shape[:ax] + [div] + bounds_shape[ax + 1:])
        one = convert(1, comp)
        rs = broadcast_to(lax.reshape(bs, tuple(bounds_shape)), out_shape)
        re = broadcast_to(lax.reshape(be, tuple(bounds_shape)), out_shape)
        st = broadcast_to(stp, out_shape)
        out = lax.add(lax.mul(rs, lax.sub(one, st)), lax.mul(re, st))
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(be, (ax,))], ax)
    elif num == 1:
        delta = convert(np.nan, comp) if endpoint else lax.sub(be, bs)
        out = lax.reshape(bs, tuple(bounds_shape))
    else:
        empty_shape = list(bshape)
        empty_shape.insert(ax, 0)
        delta = convert(np.nan, comp)
        out = zeros(tuple(empty_shape), dt)
    if dtypes.is_integer(dt) and not dtypes.is_integer(out.dtype):
        out = lax.floor(out)
    result = convert(out, dt, False)
    return (result, delta) if retstep else result


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, base: float = 10.0, dtype: DTypeLike | None = None, axis: int = 0) -> Array:
    from fcore.numpy.ufuncs_binary import power

    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = power(base, lin)
    return out if dtype is None else convert(out, canonical_dtype(dtype))


def eye(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike | None = None) -> Array:
    """A 2-D array with ones on the ``k``-th diagonal."""
    dt = _canon(dtypes.float64) if dtype is None else canonical_dtype(dtype)
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    i = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    j = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    return lax.convert_element_type(lax.eq(lax.add(i, convert(operator.index(k), dtypes.int32, True)), j), dt)


def identity(n: int, dtype: DTypeLike | None = None) -> Array:
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike | None = None) -> Array:
    """Ones at and below the ``k``-th diagonal."""
    dt = _canon(dtypes.float64) if dtype is None else canonical_dtype(dtype)
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    i = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    j = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    return lax.convert_element_type(lax.ge(lax.add(i, convert(operator.index(k), dtypes.int32, True)), j), dt)


def _tri_mask(x: Array, k: int, lower: bool) -> Array:
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'} requires an array of at least 2 dimensions")
    n, m = x.shape[-2:]
    i = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    j = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    kk = convert(operator.index(k), dtypes.int32, True)
    mask = lax.ge(lax.add(i, kk), j) if lower else lax.le(lax.add(i, kk), j)
    return broadcast_to(mask, x.shape)


def tril(m: ArrayLike, k: int = 0) -> Array:
    """Zero out the elements above the ``k``-th diagonal."""
    x = _asarray(m, "tril")
    zero = _fill(x.shape, 0, x.dtype, x.weak_type)
    return lax.select_n(_tri_mask(x, k, True), zero, x)


def triu(m: ArrayLike, k: int = 0) -> Array:
    """Zero out the elements below the ``k``-th diagonal."""
    x = _asarray(m, "triu")
    zero = _fill(x.shape, 0, x.dtype, x.weak_type)
    return lax.select_n(_tri_mask(x, k - 1, True), x, zero)


def diag(v: ArrayLike, k: int = 0) -> Array:
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with ``v`` on that diagonal."""
    x = _asarray(v, "diag")
    k = operator.index(k)
    if x.ndim == 1:
        n = x.shape[0] + abs(k)
        cols = lax.broadcast_in_dim(x, (n - abs(k), n - abs(k)), (1,))
        mask = eye(n - abs(k), dtype=dtypes.bool_)
        zero = _fill(cols.shape, 0, x.dtype, x.weak_type)
        d = lax.select_n(mask, zero, cols)
        lo, hi = (0, k) if k >= 0 else (-k, 0)
        return lax.pad(d, convert(0, x.dtype, x.weak_type), [(lo, hi, 0), (hi, lo, 0)])
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("diag input must be 1d or 2d")


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The ``offset``-th diagonal over ``axis1``/``axis2`` (last axis of the result)."""
    from fcore.numpy.shape_ops import moveaxis

    x = _asarray(a, "diagonal")
    x = moveaxis(x, (axis1, axis2), (-2, -1))
    n, m = x.shape[-2:]
    offset = operator.index(offset)
    if offset >= 0:
        x = lax.slice_in_dim(x, min(offset, m), m, axis=x.ndim - 1)
    else:
        x = lax.slice_in_dim(x, min(-offset, n), n, axis=x.ndim - 2)
    n, m = x.shape[-2:]
    d = min(n, m)
    x = lax.slice_in_dim(lax.slice_in_dim(x, 0, d, axis=x.ndim - 2), 0, d, axis=x.ndim - 1)
    mask = broadcast_to(eye(d, dtype=dtypes.bool_), x.shape)
    zero = _fill(x.shape, 0, x.dtype, x.weak_type)
    picked = lax.select_n(mask, zero, x)
    axis = x.ndim - 2
    return lax.reduce_or(picked, (axis,)) if dtypes.is_bool(x.dtype) else lax.reduce_sum(picked, (axis,))


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: DTypeLike | None = None) -> Array:
    """Sum along the diagonal."""
    from fcore.numpy.reductions import sum as _sum

    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Array]:
    """Coordinate matrices from coordinate vectors."""
    arrs = [_asarray(x, "meshgrid") for x in xi]
    for a in arrs:
        if a.ndim != 1:
            raise ValueError("Arguments to jax.numpy.meshgrid must be 1D")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    shape = [a.shape[0] for a in arrs]
    if indexing == "xy" and len(arrs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrs):
        dim = i
        if indexing == "xy" and len(arrs) >= 2 and i < 2:
            dim = 1 - i
        if sparse:
            s = [1] * len(arrs)
            s[dim] = a.shape[0]
            out.append(lax.reshape(a, tuple(s)))
        else:
            out.append(lax.broadcast_in_dim(a, tuple(shape), (dim,)))
    return out


def copy(a: ArrayLike, order: str | None = None) -> Array:
    """A copy of ``a``: one ``copy`` equation, as JAX's (fcore's arrays are immutable)."""
    return lax_copy(array(a, copy=True))


def astype(x: ArrayLike, dtype: DTypeLike | None, /, *, copy: bool = False, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` (the default float dtype when ``dtype`` is None)."""
    arr = _asarray(x, "astype")
    dt = dtypes.canonicalize_dtype(dtypes.float64) if dtype is None else canonical_dtype(dtype)
    if dtypes.is_complex(arr.dtype) and dtypes.is_bool(dt):
        return lax.ne(arr, ArrayImpl(np.zeros((), arr.dtype), False))
    return convert(arr, dt, False)



def fromfunction(function: Callable[..., Array], shape: ShapeLike, *, dtype: DTypeLike = float, **kwargs: Any) -> Array:
    """``function`` evaluated on the index grid of ``shape`` (one ``vmap`` per axis, so it is
    traced once on scalar indices of ``dtype``)."""
    from fcore.api.vectorize import vmap

    dims = _shape(shape)
    fn = function
    for i in range(len(dims)):
        in_axes = [0 if i == j else None for j in range(len(dims))]
        fn = vmap(fn, in_axes=tuple(in_axes[::-1]))
    out: Array = fn(*(arange(s, dtype=dtype) for s in dims), **kwargs)
    return out

"""More elementwise functions of ``fcore.numpy``, composed from the basic ones as ``jnp``
composes them: ``fmax``/``fmin``, ``logaddexp2``, ``gcd``/``lcm``, ``frexp``/``ldexp``,
``modf``, ``spacing``, ``angle``, ``unwrap``, and the ``iscomplex``/``isreal`` family."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax import ArrayLike
from fcore.numpy._promotion import asarray, broadcast_shapes, broadcast_to, convert, result_of
from fcore.numpy import ufuncs as U

__all__ = [
    "fmax", "fmin", "logaddexp2", "gcd", "lcm", "frexp", "ldexp", "modf", "spacing", "angle", "unwrap",
    "iscomplex", "isreal", "iscomplexobj", "isrealobj", "isscalar", "array_equiv", "copy", "astype",
]


def fmax(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Elementwise maximum that ignores NaNs (NaN only where both are NaN)."""
    return U.where(U.logical_or(U.greater(x1, x2), U.isnan(x2)), x1, x2)


def fmin(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Elementwise minimum that ignores NaNs (NaN only where both are NaN)."""
    return U.where(U.logical_or(U.less(x1, x2), U.isnan(x2)), x1, x2)


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``log2(2**x1 + 2**x2)`` without overflow."""
    a, b = U._promote2_inexact(x1, x2, "logaddexp2")
    ln2 = U._const(a, np.log(2))
    return U.true_divide(U.logaddexp(lax.mul(a, ln2), lax.mul(b, ln2)), ln2)


def _promote_int_pair(x1: ArrayLike, x2: ArrayLike, name: str) -> tuple[Array, Array]:
    dt, weak = result_of(x1, x2, name=name)
    a, b = convert(x1, dt, weak), convert(x2, dt, weak)
    if not dtypes.is_integer(dt):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    shape = broadcast_shapes(a.shape, b.shape)
    return broadcast_to(a, shape), broadcast_to(b, shape)


def gcd(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Greatest common divisor (Euclid's algorithm in a ``while_loop``)."""
    a, b = _promote_int_pair(x1, x2, "gcd")
    zero = U._const(b, 0)

    def cond(xs: list[Array]) -> Array:
        return lax.reduce_or(lax.ne(xs[1], broadcast_to(zero, xs[1].shape)), tuple(range(xs[1].ndim)))

    def body(xs: list[Array]) -> list[Array]:
        p, q = xs
        nonzero = U.not_equal(q, 0)
        p, q = U.where(nonzero, q, p), U.where(nonzero, lax.rem(p, U.where(nonzero, q, 1)), zero)
        small = U.less(p, q)
        return [U.where(small, q, p), U.where(small, p, q)]

    result, _ = lax.while_loop(cond, body, [U.absolute(a), U.absolute(b)])
    out: Array = result
    return out


def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Least common multiple (0 where either is 0)."""
    a, b = _promote_int_pair(x1, x2, "lcm")
    a, b = U.absolute(a), U.absolute(b)
    d = gcd(a, b)
    return U.where(U.equal(d, 0), U._const(d, 0), U.multiply(a, U.floor_divide(b, U.where(U.equal(d, 0), 1, d))))


def _scale2(x: Array, e: Array) -> Array:
    """``x * 2**e`` for integral float ``e``: two exact power-of-two factors applied in turn,
    so that neither factor over/underflows where the result does not."""
    half = U.floor(U.true_divide(e, 2))
    two = U._const(x, 2)
    return lax.mul(lax.mul(x, lax.pow(two, half)), lax.pow(two, lax.sub(e, half)))


def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """Mantissa in ``[0.5, 1)`` and int32 exponent with ``x == m * 2**e`` (0, inf, NaN: ``(x, 0)``)."""
    a = U._promote_inexact1(x, "frexp")
    if dtypes.is_complex(a.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    wide = dtypes.float64 if a.dtype == dtypes.float64 else dtypes.float32
    w = lax.convert_element_type(a, wide)
    special = U.logical_or(U.logical_or(U.isinf(w), U.isnan(w)), U.equal(w, 0))
    safe = U.where(special, U._const(w, 1), U.absolute(w))
    e = lax.add(U.floor(U.log2(safe)), U._const(w, 1))
    m = _scale2(w, lax.neg(e))
    # log2 may round across a power of two: bring |m| into [0.5, 1).
    for _ in range(2):
        big = U.greater_equal(U.absolute(m), 1)
        m, e = U.where(big, lax.mul(m, U._const(m, 0.5)), m), U.where(big, lax.add(e, U._const(e, 1)), e)
        small = U.less(U.absolute(m), 0.5)
        m, e = U.where(small, lax.mul(m, U._const(m, 2)), m), U.where(small, lax.sub(e, U._const(e, 1)), e)
    m = U.where(special, w, m)
    e = U.where(special, U._const(e, 0), e)
    return lax.convert_element_type(m, a.dtype), lax.convert_element_type(e, dtypes.int32)


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 * 2**x2`` for an integer ``x2``, via ``frexp`` as in jnp (so that a small ``x1``
    and a large ``x2`` do not overflow in between)."""
    a, n = asarray(x1, "ldexp"), asarray(x2, "ldexp", 1)
    if dtypes.is_complex(a.dtype) or dtypes.is_inexact(n.dtype):
        raise ValueError(f"ldexp not supported for input types {(a.dtype, n.dtype)}")
    a = U._promote_inexact1(a, "ldexp")
    n = convert(n, a.dtype)
    m, e = frexp(a)
    total = convert(U.add(convert(e, n.dtype), n), a.dtype)
    positive = U.greater(total, 0)
    m = U.where(positive, U.multiply(m, 2), m)
    total = U.where(positive, U.subtract(total, 1), total)
    x = U.multiply(m, U.power(U._const(m, 2), convert(total, m.dtype)))
    return U.where(U.logical_or(U.isinf(a), U.equal(a, 0)), a, x)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Array, Array]:
    """Fractional and integral parts, both with the sign of ``x``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    a = U._promote_inexact1(x, "modf")
    whole = U.where(lax.ge(a, U._const(a, 0)), U.floor(a), U.ceil(a))
    return U.subtract(a, whole), whole


def spacing(x: ArrayLike, /) -> Array:
    """The distance from ``x`` to the next representable number away from zero."""
    a = U._promote_inexact1(x, "spacing")
    if dtypes.is_complex(a.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = U._const(a, np.inf)
    if a.dtype == dtypes.float16:
        return U.subtract(U.nextafter(a, inf), a)
    from fcore.numpy._dtypes import finfo

    tiny = np.asarray(finfo(a.dtype).smallest_subnormal)
    result = U.subtract(U.nextafter(a, U.copysign(inf, a)), a)
    return U.where(U.equal(result, 0), U.copysign(ArrayImpl(tiny.astype(a.dtype), False), a), result)


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex ``z`` (in degrees with ``deg``)."""
    arr = asarray(z, "angle")
    re, im = U.real(arr), U.imag(arr)
    dt = re.dtype
    if not dtypes.is_inexact(dt) or (dtypes.is_floating(arr.dtype) and arr.ndim == 0):
        dt = dtypes.canonicalize_dtype(dtypes.float64)
        re, im = lax.convert_element_type(re, dt), lax.convert_element_type(im, dt)
    result = lax.atan2(im, re)
    return U.degrees(result) if deg else result


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Array:
    """``p`` with jumps larger than ``discont`` unwrapped by multiples of ``period``."""
    from fcore.numpy._promotion import normalize_axis
    from fcore.numpy.manipulation import diff
    from fcore.numpy.reductions import cumsum
    from fcore.numpy.shape_ops import concatenate

    dt, weak = result_of(p, period, name="unwrap")
    arr, per = convert(p, dt, weak), convert(period, dt, weak)
    if dtypes.is_complex(dt):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    ax = normalize_axis(axis, arr.ndim)
    if arr.shape[ax] == 0:
        return arr
    disc: ArrayLike = U.true_divide(per, 2) if discont is None else discont
    interval = U.floor_divide(per, 2) if dtypes.is_integer(dt) else U.true_divide(per, 2)
    dd = diff(arr, axis=ax)
    ddmod = U.subtract(U.remainder(U.add(dd, interval), per), interval)
    ddmod = U.where(U.logical_and(U.equal(ddmod, U.negative(interval)), U.greater(dd, 0)), interval, ddmod)
    correct = U.where(U.less(U.absolute(dd), disc), 0, U.subtract(ddmod, dd))
    n = arr.shape[ax]
    return concatenate(
        (lax.slice_in_dim(arr, 0, 1, axis=ax), U.add(lax.slice_in_dim(arr, 1, n, axis=ax), cumsum(correct, axis=ax))),
        axis=ax,
    )


def iscomplex(x: ArrayLike) -> Array:
    """Whether each element has a nonzero imaginary part."""
    i = U.imag(x)
    return lax.ne(i, U._const(i, 0))


def isreal(x: ArrayLike) -> Array:
    """Whether each element has a zero imaginary part."""
    i = U.imag(x)
    return lax.eq(i, U._const(i, 0))


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (a Python bool, not an array)."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        from fcore.numpy.creation import asarray as to_array

        dt = to_array(x).dtype
    return bool(dtypes.is_complex(np.dtype(dt)))


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: a Python/NumPy scalar or a 0-d array."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array)):
        return element.ndim == 0
    return False


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Whether the arrays are equal after broadcasting (False when they do not broadcast)."""
    from fcore.numpy.creation import asarray as to_array
    from fcore.numpy.reductions import all as _all

    x, y = to_array(a1), to_array(a2)
    try:
        eq = U.equal(x, y)
    except ValueError:
        return ArrayImpl(np.asarray(False), False)
    return _all(eq)


def copy(a: ArrayLike, order: str | None = None) -> Array:
    """A copy of ``a`` (fcore arrays are immutable, so this is the array itself for fcore arrays)."""
    from fcore.numpy.creation import array

    return array(a, copy=True)


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` (the default float dtype when ``dtype`` is None)."""
    from fcore.numpy._dtypes import canonical_dtype

    arr = asarray(x, "astype")
    dt = dtypes.canonicalize_dtype(dtypes.float64) if dtype is None else canonical_dtype(dtype)
    if dtypes.is_complex(arr.dtype) and dtypes.is_bool(dt):
        return lax.ne(arr, U._const(arr, 0))
    return convert(arr, dt, False)


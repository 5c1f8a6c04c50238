"""Ufuncs of ``fcore.numpy`` that take numbers apart or reassemble them: real and imaginary
parts and the argument of complex numbers, mantissa and exponent (``frexp``/``ldexp``),
integral and fractional parts, the sign bit, ``copysign``, ``nextafter`` and ``spacing``."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert
from fcore.numpy._ufunc_helpers import (
    _const,
    _full_bool,
    _promote1,
    _promote2_inexact,
    _promote_inexact1,
    _strong_const,
)
from fcore.numpy.ufuncs_binary import add, multiply, power, subtract, true_divide
from fcore.numpy.ufuncs_logic import equal, greater, greater_equal, isinf, isnan, less, logical_or, where
from fcore.numpy.ufuncs_unary import absolute, ceil, degrees, floor, log2


def real(x: ArrayLike, /) -> Array:
    """Real part (the input itself when it is not complex)."""
    a = _promote1(x, "real")
    return lax.real(a) if dtypes.is_complex(a.dtype) else a


def imag(x: ArrayLike, /) -> Array:
    """Imaginary part (zeros of the input's dtype when it is not complex)."""
    a = _promote1(x, "imag")
    if dtypes.is_complex(a.dtype):
        return lax.imag(a)
    zero = ArrayImpl(np.zeros((), a.dtype), a.weak_type)
    return zero if a.shape == () else lax.broadcast_in_dim(zero, a.shape, ())


def conjugate(x: ArrayLike, /) -> Array:
    """Complex conjugate (the input itself when it is not complex)."""
    a = _promote1(x, "conjugate")
    return lax.conj(a) if dtypes.is_complex(a.dtype) else a


conj = conjugate


def signbit(x: ArrayLike, /) -> Array:
    """Whether the sign bit is set (``x < 0`` for integers; ``-0.0`` counts for floats)."""
    a = _promote1(x, "signbit")
    dt = a.dtype
    if dtypes.is_integer(dt):
        return lax.lt(a, _strong_const(a, 0))
    if dtypes.is_bool(dt):
        return _full_bool(a, False)
    if not dtypes.is_floating(dt):
        raise ValueError("jnp.signbit is not well defined for complex input")
    # -0.0 counts as negative: compare 1/x for zeros. Strong constants: jnp's result is a
    # strongly typed bool even for a Python scalar.
    zero_c = _strong_const(a, 0)
    neg = lax.lt(a, zero_c)
    zero = lax.eq(a, zero_c)
    return lax.or_(neg, lax.and_(zero, lax.lt(lax.div(_strong_const(a, 1), a), zero_c)))



def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x1, x2, "nextafter")
    return lax.nextafter(a, b)



def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x1, x2, "copysign")
    if dtypes.is_complex(a.dtype):
        raise TypeError("copysign does not support complex-valued inputs")
    return where(signbit(b), lax.neg(lax.abs(a)), lax.abs(a))



def _scale2(x: Array, e: Array) -> Array:
    """``x * 2**e`` for integral float ``e``: two exact power-of-two factors applied in turn,
    so that neither factor over/underflows where the result does not."""
    half = floor(true_divide(e, 2))
    two = _const(x, 2)
    return lax.mul(lax.mul(x, lax.pow(two, half)), lax.pow(two, lax.sub(e, half)))


def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """Mantissa in ``[0.5, 1)`` and int32 exponent with ``x == m * 2**e`` (0, inf, NaN: ``(x, 0)``)."""
    a = _promote_inexact1(x, "frexp")
    if dtypes.is_complex(a.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    wide = dtypes.float64 if a.dtype == dtypes.float64 else dtypes.float32
    w = lax.convert_element_type(a, wide)
    special = logical_or(logical_or(isinf(w), isnan(w)), equal(w, 0))
    safe = where(special, _const(w, 1), absolute(w))
    e = lax.add(floor(log2(safe)), _const(w, 1))
    m = _scale2(w, lax.neg(e))
    # log2 may round across a power of two: bring |m| into [0.5, 1).
    for _ in range(2):
        big = greater_equal(absolute(m), 1)
        m, e = where(big, lax.mul(m, _const(m, 0.5)), m), where(big, lax.add(e, _const(e, 1)), e)
        small = less(absolute(m), 0.5)
        m, e = where(small, lax.mul(m, _const(m, 2)), m), where(small, lax.sub(e, _const(e, 1)), e)
    m = where(special, w, m)
    e = where(special, _const(e, 0), e)
    return lax.convert_element_type(m, a.dtype), lax.convert_element_type(e, dtypes.int32)


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 * 2**x2`` for an integer ``x2``, via ``frexp`` as in jnp (so that a small ``x1``
    and a large ``x2`` do not overflow in between)."""
    a, n = asarray(x1, "ldexp"), asarray(x2, "ldexp", 1)
    if dtypes.is_complex(a.dtype) or dtypes.is_inexact(n.dtype):
        raise ValueError(f"ldexp not supported for input types {(a.dtype, n.dtype)}")
    a = _promote_inexact1(a, "ldexp")
    n = convert(n, a.dtype)
    m, e = frexp(a)
    total = convert(add(convert(e, n.dtype), n), a.dtype)
    positive = greater(total, 0)
    m = where(positive, multiply(m, 2), m)
    total = where(positive, subtract(total, 1), total)
    x = multiply(m, power(_const(m, 2), convert(total, m.dtype)))
    return where(logical_or(isinf(a), equal(a, 0)), a, x)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Array, Array]:
    """Fractional and integral parts, both with the sign of ``x``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    a = _promote_inexact1(x, "modf")
    whole = where(lax.ge(a, _const(a, 0)), floor(a), ceil(a))
    return subtract(a, whole), whole


def spacing(x: ArrayLike, /) -> Array:
    """The distance from ``x`` to the next representable number away from zero."""
    a = _promote_inexact1(x, "spacing")
    if dtypes.is_complex(a.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = _const(a, np.inf)
    if a.dtype == dtypes.float16:
        return subtract(nextafter(a, inf), a)
    from fcore.numpy._dtypes import finfo

    tiny = np.asarray(finfo(a.dtype).smallest_subnormal)
    result = subtract(nextafter(a, copysign(inf, a)), a)
    return where(equal(result, 0), copysign(ArrayImpl(tiny.astype(a.dtype), False), a), result)


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex ``z`` (in degrees with ``deg``)."""
    arr = asarray(z, "angle")
    re, im = real(arr), imag(arr)
    dt = re.dtype
    if not dtypes.is_inexact(dt) or (dtypes.is_floating(arr.dtype) and arr.ndim == 0):
        dt = dtypes.canonicalize_dtype(dtypes.float64)
        re, im = lax.convert_element_type(re, dt), lax.convert_element_type(im, dt)
    result = lax.atan2(im, re)
    return degrees(result) if deg else result



def iscomplex(x: ArrayLike) -> Array:
    """Whether each element has a nonzero imaginary part."""
    i = imag(x)
    return lax.ne(i, _const(i, 0))


def isreal(x: ArrayLike) -> Array:
    """Whether each element has a zero imaginary part."""
    i = imag(x)
    return lax.eq(i, _const(i, 0))


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



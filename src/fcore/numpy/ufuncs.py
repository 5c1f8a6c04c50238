"""Elementwise functions of ``fcore.numpy`` (``jnp``'s ufuncs), built on ``fcore.lax``.

Each function promotes its operands as ``jax.numpy`` does (JAX's lattice, weak types, strict
mode), broadcasts them NumPy-style and applies the ``lax`` primitive. Functions that only make
sense for inexact values (``sin``, ``true_divide``...) first promote integers and bools to the
default floating dtype, exactly as ``jnp`` does.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import overload

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax import ArrayLike
from fcore.numpy._promotion import (
    INEXACT_DTYPES,
    is_array,
    asarray,
    broadcast_shapes,
    broadcast_to,
    convert,
    operand,
    promote2,
    promote2_dtype,
    promote_n,
    result_of,
    to_inexact,
    to_numeric,
)

UnaryLax = Callable[[ArrayLike], Array]
BinaryLax = Callable[[ArrayLike, ArrayLike], Array]

_bool = dtypes.bool_


def _const(x: Array, value: object) -> Array:
    """A rank-0 constant of ``x``'s dtype, as ``lax._const``: weakly typed exactly when ``x``
    is a weakly typed scalar (so it does not make a weak scalar's result strong)."""
    return ArrayImpl(np.asarray(value).astype(x.dtype), x.weak_type and x.ndim == 0)


def _strong_const(x: Array, value: object) -> Array:
    """A strongly typed rank-0 constant of ``x``'s dtype (``jnp``'s ``_constant_like``)."""
    return ArrayImpl(np.asarray(value).astype(x.dtype), False)


def _like(x: Array, value: object) -> Array:
    """A rank-0 constant of ``x``'s dtype and weak type: what a Python literal (or
    ``lax.full_like``) contributes in ``jnp``'s own formulas (``quotient - 1``)."""
    return ArrayImpl(np.asarray(value).astype(x.dtype), x.weak_type)


def _cmp(fn: BinaryLax, a: Array, b: Array) -> Array:
    """``fn(a, b)`` for a comparison: like ``jax.lax``, a comparison of two weakly typed
    operands is a weakly typed bool (``fcore.lax`` comparisons always return strong bools)."""
    out = fn(a, b)
    if a.weak_type and b.weak_type and not out.weak_type:
        return lax.convert_element_type(out, _bool, True)
    return out


# -- promotion helpers ------------------------------------------------------------------
def _promote_inexact1(x: ArrayLike, name: str) -> Array:
    dt, weak = operand(x, name)
    if not dtypes.is_inexact(dt):
        dt = to_inexact(dt)
    return convert(x, dt, weak)


def _promote1(x: ArrayLike, name: str) -> Array:
    return asarray(x, name)


def _promote_numeric1(x: ArrayLike, name: str) -> Array:
    dt, weak = operand(x, name)
    return convert(x, to_numeric(dt), weak)


def _promote2_inexact(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    dt, weak = result_of(x, y, name=name)
    return promote2_dtype(x, y, to_inexact(dt), weak)


def _promote2_numeric(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    dt, weak = result_of(x, y, name=name)
    return promote2_dtype(x, y, to_numeric(dt), weak)


def _unary_inexact(fn: UnaryLax, name: str, doc: str) -> UnaryLax:
    def f(x: ArrayLike, /) -> Array:
        if type(x) is ArrayImpl:  # the eager hot path: no property calls
            host = x._np
            if (host.dtype if host is not None else x.aval.dtype) in INEXACT_DTYPES:
                return fn(x)
        elif is_array(x) and x.dtype in INEXACT_DTYPES:
            return fn(x)
        return fn(_promote_inexact1(x, name))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc} (``jnp.{name}``; integer and bool inputs are promoted to floating)."
    return f


# -- unary ------------------------------------------------------------------------------
exp = _unary_inexact(lax.exp, "exp", "Elementwise ``e**x``")
exp2 = _unary_inexact(lax.exp2, "exp2", "Elementwise ``2**x``")
log = _unary_inexact(lax.log, "log", "Natural logarithm")
log1p = _unary_inexact(lax.log1p, "log1p", "``log(1 + x)``")
expm1 = _unary_inexact(lax.expm1, "expm1", "``exp(x) - 1``")
sqrt = _unary_inexact(lax.sqrt, "sqrt", "Square root")
cbrt = _unary_inexact(lax.cbrt, "cbrt", "Cube root")
sin = _unary_inexact(lax.sin, "sin", "Sine")
cos = _unary_inexact(lax.cos, "cos", "Cosine")
tan = _unary_inexact(lax.tan, "tan", "Tangent")
arcsin = _unary_inexact(lax.asin, "arcsin", "Inverse sine")
arccos = _unary_inexact(lax.acos, "arccos", "Inverse cosine")
arctan = _unary_inexact(lax.atan, "arctan", "Inverse tangent")
sinh = _unary_inexact(lax.sinh, "sinh", "Hyperbolic sine")
cosh = _unary_inexact(lax.cosh, "cosh", "Hyperbolic cosine")
tanh = _unary_inexact(lax.tanh, "tanh", "Hyperbolic tangent")
arcsinh = _unary_inexact(lax.asinh, "arcsinh", "Inverse hyperbolic sine")
arccosh = _unary_inexact(lax.acosh, "arccosh", "Inverse hyperbolic cosine")
arctanh = _unary_inexact(lax.atanh, "arctanh", "Inverse hyperbolic tangent")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def log2(x: ArrayLike, /) -> Array:
    """Base-2 logarithm (``jnp.log2``)."""
    a = _promote_inexact1(x, "log2")
    if dtypes.is_complex(a.dtype):
        r = lax.log(a)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(_strong_const(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(a), lax.log(_strong_const(a, 2)))


def log10(x: ArrayLike, /) -> Array:
    """Base-10 logarithm (``jnp.log10``)."""
    a = _promote_inexact1(x, "log10")
    if dtypes.is_complex(a.dtype):
        r = lax.log(a)
        re, im = lax.real(r), lax.imag(r)
        inv = lax.div(_strong_const(re, 1), lax.log(_strong_const(re, 10)))
        return lax.complex(lax.mul(re, inv), lax.mul(im, inv))
    return lax.div(lax.log(a), lax.log(_strong_const(a, 10)))


def negative(x: ArrayLike, /) -> Array:
    """``-x`` (``jnp.negative``; bool is rejected, as in JAX)."""
    return lax.neg(x if type(x) is ArrayImpl else _promote1(x, "negative"))


def positive(x: ArrayLike, /) -> Array:
    """``+x``: the input as an array."""
    return _promote1(x, "positive")


def sign(x: ArrayLike, /) -> Array:
    """Elementwise sign (``jnp.sign``)."""
    return lax.sign(_promote1(x, "sign"))


def floor(x: ArrayLike, /) -> Array:
    """Round down; integer and bool inputs are returned unchanged (``jnp.floor``)."""
    a = _promote1(x, "floor")
    if dtypes.is_integer(a.dtype) or dtypes.is_bool(a.dtype):
        return a
    return lax.floor(_promote_inexact1(a, "floor"))


def ceil(x: ArrayLike, /) -> Array:
    """Round up; integer and bool inputs are returned unchanged (``jnp.ceil``)."""
    a = _promote1(x, "ceil")
    if dtypes.is_integer(a.dtype) or dtypes.is_bool(a.dtype):
        return a
    return lax.ceil(_promote_inexact1(a, "ceil"))


def trunc(x: ArrayLike, /) -> Array:
    """Round towards zero (``jnp.trunc``)."""
    a = _promote1(x, "trunc")
    if dtypes.is_integer(a.dtype) or dtypes.is_bool(a.dtype):
        return a
    return where(lax.lt(a, _const(a, 0)), ceil(a), floor(a))


fix = trunc


def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:  # noqa: A001
    """Round to ``decimals`` decimals, halves to even (``jnp.round``)."""
    x = _promote1(a, "round")
    decimals = operator.index(decimals)
    dt = x.dtype
    if dtypes.is_bool(dt):
        raise ValueError("data type <class 'numpy.bool'> not inexact")
    if dtypes.is_integer(dt):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x

    def round_float(v: Array) -> Array:
        if decimals == 0:
            return lax.round(v, 1)
        w = lax.convert_element_type(v, dtypes.float32) if v.dtype == dtypes.float16 else v
        factor = _const(w, 10**decimals)
        out_ = lax.div(lax.round(lax.mul(w, factor), 1), factor)
        return lax.convert_element_type(out_, v.dtype) if v.dtype == dtypes.float16 else out_

    if dtypes.is_complex(dt):
        return lax.complex(round_float(lax.real(x)), round_float(lax.imag(x)))
    return round_float(x)


around = round


def rint(x: ArrayLike, /) -> Array:
    """Round to the nearest integer, halves to even (``jnp.rint``)."""
    a = _promote1(x, "rint")
    if dtypes.is_integer(a.dtype) or dtypes.is_bool(a.dtype):
        return lax.convert_element_type(a, to_inexact(dtypes.int64))
    if dtypes.is_complex(a.dtype):
        return lax.complex(rint(lax.real(a)), rint(lax.imag(a)))
    return lax.round(a, 1)


def absolute(x: ArrayLike, /) -> Array:
    """Absolute value; bool and unsigned inputs are returned unchanged (``jnp.abs``)."""
    a = _promote1(x, "absolute")
    dt = a.dtype
    if dtypes.is_bool(dt) or dtypes.is_unsigned_int(dt):
        return a
    return lax.abs(a)


abs = absolute  # noqa: A001


def fabs(x: ArrayLike, /) -> Array:
    """Absolute value after promotion to floating (``jnp.fabs``; complex is rejected)."""
    a = _promote_inexact1(x, "fabs")
    if dtypes.is_complex(a.dtype):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(a)


def square(x: ArrayLike, /) -> Array:
    """``x * x`` (``lax.integer_pow(x, 2)``)."""
    return lax.integer_pow(_promote_numeric1(x, "square"), 2)


def reciprocal(x: ArrayLike, /) -> Array:
    """``1 / x`` after promotion to floating."""
    return lax.integer_pow(_promote_inexact1(x, "reciprocal"), -1)


def invert(x: ArrayLike, /) -> Array:
    """Bitwise NOT of an integer or bool array (``~x``)."""
    return lax.not_(_promote1(x, "invert"))


bitwise_not = bitwise_invert = invert


def _to_bool(x: Array) -> Array:
    return x if x.dtype == _bool else _cmp(lax.ne, x, _const(x, 0))


def logical_not(x: ArrayLike, /) -> Array:
    """Elementwise logical NOT."""
    return lax.not_(_to_bool(_promote1(x, "logical_not")))


def _full_bool(x: Array, value: bool) -> Array:
    c = ArrayImpl(np.asarray(value, _bool), False)
    return c if x.shape == () else lax.broadcast_in_dim(c, x.shape, ())


def isfinite(x: ArrayLike, /) -> Array:
    """Elementwise finiteness test."""
    a = _promote1(x, "isfinite")
    dt = a.dtype
    if dtypes.is_floating(dt):
        out = lax.is_finite(a)
        return lax.convert_element_type(out, _bool, True) if a.weak_type else out
    if dtypes.is_complex(dt):
        out = lax.and_(lax.is_finite(lax.real(a)), lax.is_finite(lax.imag(a)))
        return lax.convert_element_type(out, _bool, True) if a.weak_type else out
    return _full_bool(a, True)


def isinf(x: ArrayLike, /) -> Array:
    """Elementwise test for positive or negative infinity."""
    a = _promote1(x, "isinf")
    dt = a.dtype
    if dtypes.is_floating(dt):
        return lax.eq(lax.abs(a), _strong_const(a, np.inf))
    if dtypes.is_complex(dt):
        re, im = lax.real(a), lax.imag(a)
        return lax.or_(lax.eq(lax.abs(re), _strong_const(re, np.inf)), lax.eq(lax.abs(im), _strong_const(im, np.inf)))
    return _full_bool(a, False)


def _isposneginf(x: ArrayLike, value: float, name: str) -> Array:
    a = _promote1(x, name)
    if dtypes.is_floating(a.dtype):
        return lax.eq(a, _strong_const(a, value))
    if dtypes.is_complex(a.dtype):
        raise ValueError(f"{name} is not well defined for complex input")
    return _full_bool(a, False)


def isposinf(x: ArrayLike, /) -> Array:
    return _isposneginf(x, np.inf, "isposinf")


def isneginf(x: ArrayLike, /) -> Array:
    return _isposneginf(x, -np.inf, "isneginf")


def isnan(x: ArrayLike, /) -> Array:
    """Elementwise NaN test (``x != x``)."""
    a = _promote1(x, "isnan")
    return _cmp(lax.ne, a, a)


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


def deg2rad(x: ArrayLike, /) -> Array:
    a = _promote_inexact1(x, "deg2rad")
    return lax.mul(a, _const(a, np.pi / 180))


def rad2deg(x: ArrayLike, /) -> Array:
    a = _promote_inexact1(x, "rad2deg")
    return lax.mul(a, _const(a, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


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


# -- binary -----------------------------------------------------------------------------
def add(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x + y`` (logical OR for bools, as in JAX)."""
    a, b, dt = promote2(x, y, "add")
    if dt is _bool:
        return lax.or_(a, b)
    return lax.add(a, b)


def subtract(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x - y``."""
    a, b, _ = promote2(x, y, "subtract")
    return lax.sub(a, b)


def multiply(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x * y`` (logical AND for bools, as in JAX)."""
    a, b, dt = promote2(x, y, "multiply")
    if dt is _bool:
        return lax.and_(a, b)
    return lax.mul(a, b)


def true_divide(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x / y``; integer and bool operands are promoted to floating."""
    dt, weak = result_of(x, y, name="true_divide")
    if not dtypes.is_inexact(dt):
        dt = to_inexact(dt)
    a, b = promote2_dtype(x, y, dt, weak)
    return lax.div(a, b)


divide = true_divide


def _float_divmod(x: Array, y: Array) -> tuple[Array, Array]:
    mod = lax.rem(x, y)
    x_corrected = where(lax.eq(y, _const(y, 0)), x, lax.sub(x, mod))
    div = lax.div(x_corrected, y)
    ind = lax.and_(lax.ne(mod, _const(mod, 0)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select_n(ind, mod, lax.add(mod, y))
    div = lax.select_n(ind, div, lax.sub(div, _like(div, 1)))
    return lax.round(div, 0), mod


def floor_divide(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x // y``, rounding towards negative infinity."""
    a, b = _promote2_numeric(x, y, "floor_divide")
    dt = a.dtype
    if dtypes.is_unsigned_int(dt):
        return lax.div(a, b)
    if dtypes.is_signed_int(dt):
        quotient = lax.div(a, b)
        select = lax.and_(lax.ne(lax.sign(a), lax.sign(b)), lax.ne(lax.rem(a, b), _const(a, 0)))
        return where(select, lax.sub(quotient, _like(quotient, 1)), quotient)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(a, b)[0]


def remainder(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x % y`` with the sign of ``y`` (Python's modulo)."""
    a, b = _promote2_numeric(x, y, "remainder")
    zero = _strong_const(a, 0)
    if dtypes.is_integer(b.dtype):
        b = where(lax.eq(b, _like(b, 0)), _like(b, 1), b)
    trunc_mod = lax.rem(a, b)
    nonzero = lax.ne(trunc_mod, zero)
    do_plus = lax.and_(lax.ne(lax.lt(trunc_mod, zero), lax.lt(b, zero)), nonzero)
    return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, b))


mod = remainder


def fmod(x: ArrayLike, y: ArrayLike, /) -> Array:
    """C-style remainder, with the sign of ``x`` (``lax.rem``); an integer remainder by zero
    is 0, as in jnp (which divides by one there)."""
    a, b = _promote2_numeric(x, y, "fmod")
    if dtypes.is_integer(a.dtype):
        zero = lax.eq(b, _const(b, 0))
        b = lax.select_n(zero, b, lax.broadcast_in_dim(_like(b, 1), b.shape, ()) if b.shape else _like(b, 1))
    return lax.rem(a, b)


def divmod(x: ArrayLike, y: ArrayLike, /) -> tuple[Array, Array]:  # noqa: A001
    """``(x // y, x % y)``."""
    a, b = _promote2_numeric(x, y, "divmod")
    if dtypes.is_integer(a.dtype):
        return floor_divide(a, b), remainder(a, b)
    return _float_divmod(a, b)


def _concrete_int(y: object) -> int | None:
    """``y`` as a Python int when it is a concrete integer scalar (for ``integer_pow``)."""
    if type(y) is int or type(y) is bool:
        return int(y)
    if isinstance(y, (np.integer,)) or (
        isinstance(y, (np.ndarray, ArrayImpl)) and y.shape == () and dtypes.is_integer(np.dtype(y.dtype))
    ):
        return int(y)
    return None


def _pow_int_int(x: Array, y: Array) -> Array:
    """Integer ``x ** y`` by binary exponentiation over the low 6 bits of ``y`` (as jnp)."""
    zero = _strong_const(y, 0)
    one = _strong_const(y, 1)
    acc = where(lax.and_(lax.eq(x, zero), lax.ne(y, zero)), zero, one)
    acc = broadcast_to(acc, broadcast_shapes(x.shape, y.shape))
    for bit in range(6):
        set_ = lax.ne(lax.and_(y, _strong_const(y, 1 << bit)), zero) if bit else lax.ne(lax.and_(y, one), zero)
        acc = where(set_, lax.mul(acc, x), acc)
        x = lax.mul(x, x)
    return acc


def power(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x ** y``; a concrete integer exponent uses ``lax.integer_pow`` (as ``jnp.power``)."""
    n = _concrete_int(y)
    if n is not None:
        base = _promote_numeric1(x, "power")
        if n < 0 and dtypes.is_integer(base.dtype):
            raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({base.aval.str_short()}, {n})")
        return lax.integer_pow(base, n)
    dx, wx = operand(x, "power", 0)
    dy, wy = operand(y, "power", 1)
    dt, weak = dtypes.result_type((dx, wx), (dy, wy))
    dt = to_numeric(dt)
    if dtypes.is_integer(dt):
        a, b = promote2_dtype(x, y, dt, weak)
        return _pow_int_int(a, b)
    if dtypes.is_inexact(dx) and (dtypes.is_integer(dy)):
        # Float base, integer exponent: no promotion of the base (JAX's case 3).
        a, b = promote2_dtype(x, y, dx, wx)
        if not wy and b.weak_type:
            b = lax.convert_element_type(b, dx, False)
        return lax.pow(a, b)
    a, b = promote2_dtype(x, y, dt, weak)
    return lax.pow(a, b)


pow = power  # noqa: A001


def float_power(x: ArrayLike, y: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x, y, "float_power")
    return lax.pow(a, b)


def maximum(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise maximum (NaN-propagating)."""
    a, b, _ = promote2(x, y, "maximum")
    return lax.max(a, b)


def minimum(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise minimum (NaN-propagating)."""
    a, b, _ = promote2(x, y, "minimum")
    return lax.min(a, b)


def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise ``atan2(x1, x2)``."""
    a, b = _promote2_inexact(x1, x2, "arctan2")
    return lax.atan2(a, b)


atan2 = arctan2


def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x1, x2, "nextafter")
    return lax.nextafter(a, b)


def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``sqrt(x1**2 + x2**2)`` without undue overflow."""
    a, b = _promote2_inexact(x1, x2, "hypot")
    if dtypes.is_complex(a.dtype):
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert to real values first, such as by using abs(x)"
        )
    a, b = lax.abs(a), lax.abs(b)
    idx_inf = lax.or_(isposinf(a), isposinf(b))
    hi = lax.max(a, b)
    lo = lax.min(a, b)
    hi_zero = lax.eq(hi, _like(hi, 0))
    safe_hi = where(hi_zero, _like(hi, 1), hi)
    r = where(hi_zero, hi, lax.mul(hi, lax.sqrt(lax.add(_like(hi, 1), lax.integer_pow(lax.div(lo, safe_hi), 2)))))
    return where(idx_inf, _const(r, np.inf), r)


def logaddexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``log(exp(x1) + exp(x2))`` without overflow."""
    a, b = _promote2_inexact(x1, x2, "logaddexp")
    amax = lax.max(a, b)
    if dtypes.is_floating(a.dtype):
        delta = lax.sub(a, b)
        return lax.select_n(
            lax.ne(delta, delta),
            lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))),
            lax.add(a, b),
        )
    delta = lax.sub(lax.add(a, b), lax.mul(amax, _const(amax, 2)))
    out = lax.add(amax, lax.log1p(lax.exp(delta)))
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), math.pi))


def _wrap_between(x: Array, a: float) -> Array:
    two_a = _const(x, 2 * a)
    zero = _const(x, 0)
    rem = lax.rem(lax.add(x, _const(x, a)), two_a)
    rem = lax.select_n(lax.lt(rem, zero), rem, lax.add(rem, two_a))
    return lax.sub(rem, _const(x, a))


def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x1, x2, "copysign")
    if dtypes.is_complex(a.dtype):
        raise TypeError("copysign does not support complex-valued inputs")
    return where(signbit(b), lax.neg(lax.abs(a)), lax.abs(a))


def _bitwise(fn: BinaryLax, name: str) -> BinaryLax:
    def f(x: ArrayLike, y: ArrayLike, /) -> Array:
        a, b, _ = promote2(x, y, name)
        return fn(a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` of integer or bool arrays."
    return f


bitwise_and = _bitwise(lax.and_, "bitwise_and")
bitwise_or = _bitwise(lax.or_, "bitwise_or")
bitwise_xor = _bitwise(lax.xor, "bitwise_xor")


def left_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x << y`` elementwise; bools count as integers (``jnp.left_shift``)."""
    a, b = _promote2_numeric(x, y, "left_shift")
    return lax.shift_left(a, b)


def right_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x >> y`` elementwise: arithmetic for signed integers, logical for unsigned ones."""
    a, b = _promote2_numeric(x, y, "right_shift")
    if dtypes.is_unsigned_int(a.dtype):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def _logical(fn: BinaryLax, name: str) -> BinaryLax:
    def f(x: ArrayLike, y: ArrayLike, /) -> Array:
        a, b, _ = promote2(x, y, name)
        return fn(_to_bool(a), _to_bool(b))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (operands are compared with zero)."
    return f


logical_and = _logical(lax.and_, "logical_and")
logical_or = _logical(lax.or_, "logical_or")
logical_xor = _logical(lax.xor, "logical_xor")


def _comparison(fn: BinaryLax, name: str) -> BinaryLax:
    def f(x: ArrayLike, y: ArrayLike, /) -> Array:
        a, b, dt = promote2(x, y, name)
        if dtypes.is_complex(dt):
            # Lexicographic on (real, imag), as jnp.
            ra, rb = lax.real(a), lax.real(b)
            out = lax.select_n(lax.eq(ra, rb), fn(ra, rb), fn(lax.imag(a), lax.imag(b)))
            if a.weak_type and b.weak_type:
                out = lax.convert_element_type(out, _bool, True)
            return out
        return _cmp(fn, a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (bool result)."
    return f


def equal(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise ``x == y``."""
    a, b, _ = promote2(x, y, "equal")
    return _cmp(lax.eq, a, b)


def not_equal(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise ``x != y``."""
    a, b, _ = promote2(x, y, "not_equal")
    return _cmp(lax.ne, a, b)


less = _comparison(lax.lt, "less")
less_equal = _comparison(lax.le, "less_equal")
greater = _comparison(lax.gt, "greater")
greater_equal = _comparison(lax.ge, "greater_equal")


# -- selection ----------------------------------------------------------------------------
@overload
def where(condition: ArrayLike, x: None = None, y: None = None, /, *, size: int | None = None,
          fill_value: ArrayLike | None = None) -> tuple[Array, ...]: ...


@overload
def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /, *, size: int | None = None,
          fill_value: ArrayLike | None = None) -> Array: ...


def where(condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None, /, *,
          size: int | None = None, fill_value: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """``x`` where ``condition`` holds, else ``y``; with ``condition`` alone, ``nonzero`` of it
    (which needs a concrete condition or a static ``size``)."""
    if x is None and y is None:
        from fcore.numpy.searching import nonzero
        from fcore.numpy.shape_ops import atleast_1d

        return nonzero(atleast_1d(condition), size=size, fill_value=fill_value)
    if x is None or y is None:
        pos = 1 if x is None else 2
        raise TypeError(f"where requires ndarray or scalar arguments, got {type(None)} at position {pos}.")
    c = _promote1(condition, "where")
    if c.dtype != _bool:
        c = lax.ne(c, _const(c, 0))
    dt, weak = result_of(x, y, name="where")
    if c.shape == ():
        a, b = promote_n("where", x, y, dt=dt, weak=weak, full=True)
        return lax.select_n(c, b, a)
    c, a, b = _where_args(c, x, y, dt, weak)
    return lax.select_n(c, b, a)


def _where_args(c: Array, x: ArrayLike, y: ArrayLike, dt: DType, weak: bool) -> tuple[Array, Array, Array]:
    a, b = convert(x, dt, weak), convert(y, dt, weak)
    shape = broadcast_shapes(c.shape, a.shape, b.shape)
    return broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape)


def clip(
    arr: ArrayLike | None = None,
    /,
    min: ArrayLike | None = None,  # noqa: A002
    max: ArrayLike | None = None,  # noqa: A002
) -> Array:
    """Limit values to ``[min, max]`` (``maximum(min, arr)`` then ``minimum(max, ...)``, as jnp)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    out: ArrayLike = arr
    for v in (arr, min, max):
        if v is not None and dtypes.is_complex(operand(v, "clip")[0]):
            raise ValueError("Clip received a complex value either through the input or the min/max keywords.")
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return _promote1(out, "clip")


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Array:
    """Replace NaN and infinities with finite numbers."""
    a = _promote1(x, "nan_to_num")
    dt = a.dtype
    if not dtypes.is_inexact(dt):
        return a
    if dtypes.is_complex(dt):
        return lax.complex(
            nan_to_num(lax.real(a), nan=nan, posinf=posinf, neginf=neginf),
            nan_to_num(lax.imag(a), nan=nan, posinf=posinf, neginf=neginf),
        )
    info = np.finfo(np.float32) if dt == dtypes.bfloat16 else np.finfo(dt)
    big = float(info.max) if dt != dtypes.bfloat16 else 3.3895313892515355e38
    pos = big if posinf is None else posinf
    ng = -big if neginf is None else neginf
    out = where(isnan(a), _strong_const(a, nan), a)
    out = where(isposinf(out), _strong_const(a, pos), out)
    out = where(isneginf(out), _strong_const(a, ng), out)
    return out


def sinc(x: ArrayLike, /) -> Array:
    """``sin(pi x) / (pi x)``, 1 at 0."""
    a = _promote_inexact1(x, "sinc")
    eq_zero = lax.eq(a, _const(a, 0))
    pi_x = lax.mul(_const(a, np.pi), a)
    safe = where(eq_zero, _const(a, 1), pi_x)
    return where(eq_zero, _const(a, 1), lax.div(lax.sin(safe), safe))


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x1, x2, "heaviside")
    if dtypes.is_complex(a.dtype):
        raise TypeError("heaviside does not support complex-valued inputs")
    zero = _const(a, 0)
    return where(lax.lt(a, zero), zero, where(lax.gt(a, zero), _const(a, 1), b))

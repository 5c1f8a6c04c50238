"""Unary math ufuncs of ``fcore.numpy``: exponentials, logarithms, trigonometric and
hyperbolic functions, rounding, absolute values, ``sinc``, ``i0`` and ``nan_to_num``.

Each promotes its operand as ``jax.numpy`` does (integers and bools become the default floating
dtype where the function only makes sense for inexact values) and applies the ``lax`` primitive.
"""

from __future__ import annotations

import operator

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import to_inexact
from fcore.numpy._ufunc_helpers import (
    _const,
    _promote1,
    _promote_inexact1,
    _promote_numeric1,
    _strong_const,
    _unary_inexact,
)
from fcore.numpy.ufuncs_logic import isnan, isneginf, isposinf, where


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
    """``x * x`` (``lax.square``)."""
    return lax.square(_promote_numeric1(x, "square"))


def reciprocal(x: ArrayLike, /) -> Array:
    """``1 / x`` after promotion to floating."""
    return lax.integer_pow(_promote_inexact1(x, "reciprocal"), -1)


def deg2rad(x: ArrayLike, /) -> Array:
    a = _promote_inexact1(x, "deg2rad")
    return lax.mul(a, _const(a, np.pi / 180))


def rad2deg(x: ArrayLike, /) -> Array:
    a = _promote_inexact1(x, "rad2deg")
    return lax.mul(a, _const(a, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


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




# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8] (A) and of exp(-x) sqrt(x) I0(x)
# on (8, inf) in 32/x - 2 (B), as XLA's BesselI0e uses them: all of them for float64, the last
# 18 and 7 (in float32 arithmetic) for the narrower types.
_I0E_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0E_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)


def _chebyshev(x: Array, coeffs: tuple[float, ...]) -> Array:
    """Clenshaw's recurrence for a Chebyshev series (Cephes' ``chbevl``)."""
    b0 = _const(x, coeffs[0])
    b1 = b2 = _const(x, 0)
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(x, b1), b2), _const(x, c))
    return lax.mul(_const(x, 0.5), lax.sub(b0, b2))


def _i0e_of_abs(ax: Array) -> Array:
    """``exp(-x) I0(x)`` for ``x >= 0`` by XLA's method, in float32 for the narrow types."""
    wide = ax.dtype == dtypes.float64
    x = ax if wide else lax.convert_element_type(ax, dtypes.float32, ax.weak_type)
    a, b = (_I0E_A, _I0E_B) if wide else (_I0E_A[-18:], _I0E_B[-7:])
    le8 = lax.le(x, _const(x, 8))
    # Each branch sees only arguments in its own range, so neither produces inf or NaN (nor a
    # NaN derivative) where the other is selected.
    x_small = where(le8, x, _const(x, 8))
    x_large = where(le8, _const(x, 16), x)
    small = _chebyshev(lax.sub(lax.mul(_const(x, 0.5), x_small), _const(x, 2)), a)
    large = lax.div(_chebyshev(lax.sub(lax.div(_const(x, 32), x_large), _const(x, 2)), b), lax.sqrt(x_large))
    out = where(le8, small, large)
    return out if wide else lax.convert_element_type(out, ax.dtype, ax.weak_type)


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind, order 0: ``exp(|x|) * i0e(|x|)``."""
    a = _promote_inexact1(x, "i0")
    if not dtypes.is_floating(a.dtype):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {a.dtype}")
    ax = lax.abs(a)
    return lax.mul(lax.exp(ax), _i0e_of_abs(ax))

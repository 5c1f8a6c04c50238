"""Binary arithmetic ufuncs of ``fcore.numpy``: the four operations, division and remainders,
powers, extrema (``maximum``, ``fmax``, ``clip``), ``arctan2``, ``hypot``, ``logaddexp``,
``gcd``/``lcm`` and ``heaviside``.

Each promotes its operands as ``jax.numpy`` does (JAX's lattice, weak types, strict mode),
broadcasts them NumPy-style and applies the ``lax`` primitive.
"""

from __future__ import annotations

import math

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import (
    broadcast_shapes,
    broadcast_to,
    convert,
    operand,
    promote2,
    promote2_dtype,
    result_of,
    to_inexact,
    to_numeric,
)
from fcore.numpy._ufunc_helpers import (
    _bool,
    _const,
    _like,
    _promote1,
    _promote2_inexact,
    _promote2_numeric,
    _promote_numeric1,
    _strong_const,
)
from fcore.numpy.ufuncs_logic import equal, greater, isnan, isposinf, less, logical_or, not_equal, where
from fcore.numpy.ufuncs_unary import absolute


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
        # Float base, integer exponent: no promotion of the base, and lax.pow takes the
        # integer exponent as it is (JAX's case 3: its jvp is 0 where the exponent is 0).
        a, b = convert(x, dx, wx), convert(y, dy, wy)
        if a.shape != b.shape and a.shape and b.shape:
            shape = broadcast_shapes(a.shape, b.shape)
            a, b = broadcast_to(a, shape), broadcast_to(b, shape)
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



def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    a, b = _promote2_inexact(x1, x2, "heaviside")
    if dtypes.is_complex(a.dtype):
        raise TypeError("heaviside does not support complex-valued inputs")
    zero = _const(a, 0)
    return where(lax.lt(a, zero), zero, where(lax.gt(a, zero), _const(a, 1), b))


def fmax(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Elementwise maximum that ignores NaNs (NaN only where both are NaN)."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Elementwise minimum that ignores NaNs (NaN only where both are NaN)."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``log2(2**x1 + 2**x2)`` without overflow."""
    a, b = _promote2_inexact(x1, x2, "logaddexp2")
    ln2 = _const(a, np.log(2))
    return true_divide(logaddexp(lax.mul(a, ln2), lax.mul(b, ln2)), ln2)


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
    zero = _const(b, 0)

    def cond(xs: list[Array]) -> Array:
        return lax.reduce_or(lax.ne(xs[1], broadcast_to(zero, xs[1].shape)), tuple(range(xs[1].ndim)))

    def body(xs: list[Array]) -> list[Array]:
        p, q = xs
        nonzero = not_equal(q, 0)
        p, q = where(nonzero, q, p), where(nonzero, lax.rem(p, where(nonzero, q, 1)), zero)
        small = less(p, q)
        return [where(small, q, p), where(small, p, q)]

    result, _ = lax.while_loop(cond, body, [absolute(a), absolute(b)])
    out: Array = result
    return out


def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Least common multiple (0 where either is 0)."""
    a, b = _promote_int_pair(x1, x2, "lcm")
    a, b = absolute(a), absolute(b)
    d = gcd(a, b)
    return where(equal(d, 0), _const(d, 0), multiply(a, floor_divide(b, where(equal(d, 0), 1, d))))



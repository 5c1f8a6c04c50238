"""Special-function primitives: ``erfc``, ``erf_inv``, ``lgamma``, ``digamma``,
``polygamma``, ``zeta`` (Hurwitz), with JAX's names, jvps and CHLO lowerings.

They are elementwise primitives (the elementwise family's shape, dtype and weak-type rules,
built with its ``_define``); the eager impls evaluate in float64 on the host and follow
XLA's conventions at poles and infinities (e.g. ``lgamma`` is ``inf`` at non-positive
integers, ``digamma`` is NaN there, ``zeta(1, q)`` is ``inf``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.lax._primitive import Primitive
from fcore.lax._base import ArrayLike, weak_scalar
from fcore.lax.elementwise import _define, _lower_nary, _lower_unary  # the elementwise machinery, shared
from fcore.lax.elementwise import add, exp, mul, neg, square
from fcore.transforms.batching import defbroadcasting
from fcore.transforms.jvp import defjvp

NpArray = np.ndarray[Any, Any]

__all__ = ["erfc", "erf_inv", "lgamma", "digamma", "polygamma", "zeta",
           "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p", "polygamma_p", "zeta_p"]


def _host(fn: Callable[..., float]) -> Callable[..., NpArray]:
    """A scalar float64 function applied elementwise (results cast back by ``_define``)."""
    vec = np.vectorize(fn, otypes=[np.float64])

    def impl(*args: NpArray) -> NpArray:
        with np.errstate(all="ignore"):
            return np.asarray(vec(*(a.astype(np.float64) for a in args)))

    return impl


def _is_pole(x: float) -> bool:
    return x <= 0 and math.isfinite(x) and x == math.floor(x)


def _lgamma(x: float) -> float:
    if math.isnan(x):
        return math.nan
    if math.isinf(x) or _is_pole(x):
        return math.inf
    return math.lgamma(x)


def _digamma(x: float) -> float:
    if math.isnan(x) or x == -math.inf or _is_pole(x):
        return math.nan
    if x == math.inf:
        return math.inf
    if x < 0:  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        return _digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132 - inv2 * (691 / 32760))))))
    return acc + math.log(x) - 0.5 / x - series


_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330]


def _zeta(s: float, q: float) -> float:
    """Hurwitz zeta ``sum_k (q + k)**-s`` by Euler-Maclaurin summation (XLA's domain)."""
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s == 1:
        return math.inf
    if _is_pole(q):  # XLA: inf for an even integer s, else NaN
        return math.inf if math.isfinite(s) and s == math.floor(s) and s % 2 == 0 else math.nan
    if q == -math.inf:
        return math.inf
    if s < 1 or math.isinf(s) or q == math.inf:
        return math.nan
    acc, n = 0.0, 0
    while q + n < 12.0:
        base = q + n
        term = base ** -s if base > 0 or s == math.floor(s) else math.nan
        acc += term
        n += 1
    a = q + n
    acc += a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    factor, fact, power = s, 2.0, a ** (-s - 1)
    for j, b2j in enumerate(_BERNOULLI, start=1):
        acc += b2j / fact * factor * power
        factor *= (s + 2 * j - 1) * (s + 2 * j)
        fact *= (2 * j + 1) * (2 * j + 2)
        power /= a * a
    return float(acc)


def _polygamma(n: float, x: float) -> float:
    if math.isnan(n) or n < 0 or n != math.floor(n):
        return math.nan
    if n == 0:
        return _digamma(x)
    sign = -1.0 if int(n) % 2 == 0 else 1.0
    return sign * math.gamma(n + 1) * _zeta(n + 1, x)


def _erf_inv(x: float) -> float:
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    a = 0.147  # Winitzki's approximation, refined by Newton steps on erf (erfc in the tails)
    ln = math.log1p(-x * x)
    t = 2 / (math.pi * a) + ln / 2
    y = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), x)
    tail = abs(x) > 0.5
    target = 1.0 - abs(x)
    for _ in range(4):
        deriv = 2 / math.sqrt(math.pi) * math.exp(-y * y)
        if deriv == 0:
            break
        if tail:
            yy = abs(y)
            yy -= (target - math.erfc(yy)) / deriv
            y = math.copysign(yy, x)
        else:
            y -= (math.erf(y) - x) / deriv
    return y


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _scalar(x: ArrayLike, value: float) -> Array:
    return weak_scalar(value, get_aval(x).dtype)


def _bind(p: Primitive, *args: ArrayLike) -> Array:
    out: Array = p.bind(*args)
    return out


# -- erfc -------------------------------------------------------------------------------------
erfc_p = _define("erfc", 1, "float", _host(math.erfc))
defjvp(erfc_p, lambda g, x: mul(g, mul(_scalar(x, -_TWO_OVER_SQRT_PI), exp(neg(square(x))))))
defbroadcasting(erfc_p)
lowering_rules.register(erfc_p)(_lower_unary("chlo.erfc"))


def erfc(x: ArrayLike) -> Array:
    """``1 - erf(x)``, accurate where ``erf(x)`` is close to 1."""
    return _bind(erfc_p, x)


# -- erf_inv ----------------------------------------------------------------------------------
erf_inv_p = _define("erf_inv", 1, "float", _host(_erf_inv))
defjvp(erf_inv_p, lambda g, x: mul(g, mul(_scalar(x, math.sqrt(math.pi) / 2), exp(square(erf_inv(x))))))
defbroadcasting(erf_inv_p)
lowering_rules.register(erf_inv_p)(_lower_unary("chlo.erf_inv"))


def erf_inv(x: ArrayLike) -> Array:
    """The inverse of ``erf`` on ``[-1, 1]``."""
    return _bind(erf_inv_p, x)


# -- lgamma -----------------------------------------------------------------------------------
lgamma_p = _define("lgamma", 1, "float", _host(_lgamma))
defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))
defbroadcasting(lgamma_p)
lowering_rules.register(lgamma_p)(_lower_unary("chlo.lgamma"))


def lgamma(x: ArrayLike) -> Array:
    """``log|Gamma(x)|``."""
    return _bind(lgamma_p, x)


# -- digamma ----------------------------------------------------------------------------------
digamma_p = _define("digamma", 1, "float", _host(_digamma))
defjvp(digamma_p, lambda g, x: mul(g, polygamma(_scalar(x, 1.0), x)))
defbroadcasting(digamma_p)
lowering_rules.register(digamma_p)(_lower_unary("chlo.digamma"))


def digamma(x: ArrayLike) -> Array:
    """The logarithmic derivative of Gamma."""
    return _bind(digamma_p, x)


# -- polygamma (m, x) -------------------------------------------------------------------------
polygamma_p = _define("polygamma", 2, "float", _host(_polygamma))
defjvp(polygamma_p, None, lambda g, m, x: mul(g, polygamma(add(m, _scalar(m, 1.0)), x)))
defbroadcasting(polygamma_p)
lowering_rules.register(polygamma_p)(_lower_nary("chlo.polygamma"))


def polygamma(m: ArrayLike, x: ArrayLike) -> Array:
    """The ``m``-th derivative of ``digamma`` (``m`` a non-negative integer value)."""
    return _bind(polygamma_p, m, x)


# -- zeta (s, q) ------------------------------------------------------------------------------
zeta_p = _define("zeta", 2, "float", _host(_zeta))
defjvp(zeta_p, None, lambda g, s, q: mul(g, mul(neg(s), zeta(add(s, _scalar(s, 1.0)), q))))
defbroadcasting(zeta_p)
lowering_rules.register(zeta_p)(_lower_nary("chlo.zeta"))


def zeta(x: ArrayLike, q: ArrayLike) -> Array:
    """The Hurwitz zeta function ``sum_k (q + k)**-x``."""
    return _bind(zeta_p, x, q)

"""Confluent and Gauss hypergeometric functions of ``fcore.scipy.special``: ``hyp1f1`` and
``hyp2f1``, with JAX's series, transformations (Pearson, Olver, Porter and Williams,
arXiv:1407.7786) and custom derivatives."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.scipy.special._gamma import digamma, gamma
from fcore.scipy._util import finfo_eps, promote_args_inexact, vectorize

__all__ = ["hyp1f1", "hyp2f1"]

State = tuple[Any, Any, Any]


def _series_loop(body: Any, init: State, precision: float) -> Array:
    """Sum terms until one is below ``precision`` relative to the sum (at most 250). The sum
    starts in ``x``'s dtype (JAX starts from a weak Python scalar that its ``while_loop``
    promotes to the body's output type)."""

    def cond(state: State) -> Array:
        serie, k, term = state
        going: Array = (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
        return going

    out: Array = lax.while_loop(cond, body, init)[0]
    return out


# -- 1F1 ----------------------------------------------------------------------------------------
def _hyp1f1_serie(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        return serie + term, k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    return _series_loop(body, (fnp.array(1, dtype=x.dtype), 1, a / b * x), finfo_eps(x.dtype))


def _hyp1f1_asymptotic(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        return serie + term, k + 1, term * ((b - a + k) * (1 - a + k) / (k + 1) / x)

    serie = _series_loop(body, (fnp.array(1, dtype=x.dtype), 1, (b - a) * (1 - a) / x), finfo_eps(x.dtype))
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


def _hyp1f1_a_derivative_scalar(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        return serie + term * (digamma(a + k) - digamma(a)), k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    return _series_loop(body, (fnp.array(0, dtype=x.dtype), 1, a / b * x), finfo_eps(x.dtype))


def _hyp1f1_b_derivative_scalar(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        return serie + term * (digamma(b) - digamma(b + k)), k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    return _series_loop(body, (fnp.array(0, dtype=x.dtype), 1, a / b * x), finfo_eps(x.dtype))


_hyp1f1_a_derivative = jit(vectorize(_hyp1f1_a_derivative_scalar))
_hyp1f1_b_derivative = jit(vectorize(_hyp1f1_b_derivative_scalar))


def _hyp1f1_scalar(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    a_, b_, x_ = promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.is_complex(x_.dtype):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    result = lax.cond(lax.abs(x_) < 100, _hyp1f1_serie, _hyp1f1_asymptotic, a_, b_, x_)
    index = (a_ == 0) * 1 + ((a_ == b_) & (a_ != 0)) * 2 + ((b_ == 0) & (a_ != 0)) * 3
    return lax.select_n(index.astype(np.int32), result, fnp.array(1, dtype=x_.dtype), fnp.exp(x_), fnp.array(np.inf, dtype=x_.dtype))


hyp1f1 = custom_jvp(jit(vectorize(_hyp1f1_scalar)))
hyp1f1.__doc__ = """The confluent hypergeometric function ``1F1(a; b; x)`` (real arguments)."""


def _hyp1f1_x_derivative_impl(a: Array, b: Array, x: Array) -> Array:
    out: Array = a / b * hyp1f1(a + 1, b + 1, x)
    return out


_hyp1f1_x_derivative = jit(_hyp1f1_x_derivative_impl)


hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot,
    lambda x_dot, ans, a, b, x: _hyp1f1_x_derivative(a, b, x) * x_dot,
)


# -- 2F1 ----------------------------------------------------------------------------------------
def _hyp2f1_terminal(a: Array, b: Array, c: Array, x: Array) -> Array:
    """The terminating series (``a`` or ``b`` a non-positive integer): of the two, the one with
    the larger magnitude that is still below ``|c|`` for non-positive integer ``c`` bounds it."""
    eps = finfo_eps(x.dtype) * 50
    ib = fnp.round(b)
    mask = fnp.logical_and(
        b < a,
        fnp.logical_and(fnp.abs(b - ib) < eps,
                        fnp.logical_not(fnp.logical_and(c % 1 == 0, fnp.logical_and(c <= 0, c > b)))))
    orig_a = a
    a = fnp.where(mask, b, a)
    b = fnp.where(mask, orig_a, b)
    a = fnp.abs(a)

    def body(i: Array, state: tuple[Array, Array]) -> tuple[Array, Array]:
        serie, term = state
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return serie + term, term

    init = (fnp.array(1, dtype=x.dtype), fnp.array(1, dtype=x.dtype))
    out: Array = lax.fori_loop(fnp.array(1, dtype=a.dtype), a + 1, body, init)[0]
    return out


def _hyp2f1_serie(a: Array, b: Array, c: Array, x: Array) -> Array:
    rtol = finfo_eps(x.dtype)

    def body(state: State) -> State:
        serie, k, term = state
        return serie + term, k + 1, term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)

    def cond(state: State) -> Array:
        serie, k, term = state
        going: Array = (k < 250) & (lax.abs(term) > rtol * lax.abs(serie))
        return going

    init = (fnp.array(0, dtype=x.dtype), fnp.array(1, dtype=x.dtype), fnp.array(1, dtype=x.dtype))
    out: Array = lax.while_loop(cond, body, init)[0]
    return out


def _hyp2f1_terminal_or_serie(a: Array, b: Array, c: Array, x: Array) -> Array:
    eps = finfo_eps(x.dtype) * 50
    d = c - a - b
    ia, ib, id_ = fnp.round(a), fnp.round(b), fnp.round(d)
    neg_int_a = fnp.logical_and(a <= 0, fnp.abs(a - ia) < eps)
    neg_int_b = fnp.logical_and(b <= 0, fnp.abs(b - ib) < eps)
    neg_int_a_or_b = fnp.logical_or(neg_int_a, neg_int_b)
    index = fnp.where(fnp.logical_and(x > 0.9, fnp.logical_not(neg_int_a_or_b)),
                      fnp.where(fnp.abs(d - id_) >= eps, 0, 1),
                      fnp.where(neg_int_a_or_b, 2, 0))
    return lax.select_n(index.astype(np.int32), _hyp2f1_serie(a, b, c, x), _hyp2f1_digamma_transform(a, b, c, x),
                        _hyp2f1_terminal(a, b, c, x))


def _hyp2f1_digamma_transform(a: Array, b: Array, c: Array, x: Array) -> Array:
    """The transformation to ``1 - x`` where ``c - a - b`` is an integer (digamma series)."""
    rtol = finfo_eps(x.dtype)
    d = c - a - b
    s = 1 - x
    rd = fnp.round(d)
    e = fnp.where(rd >= 0, d, -d)
    d1 = fnp.where(rd >= 0, d, fnp.array(0, dtype=d.dtype))
    d2 = fnp.where(rd >= 0, fnp.array(0, dtype=d.dtype), d)
    ard = fnp.where(rd >= 0, rd, -rd).astype("int32")
    ax = fnp.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y = y / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state: tuple[Array, ...]) -> Array:
        q, t, y = state[6], state[9], state[10]
        return fnp.logical_and(t < 250, fnp.abs(q) >= rtol * fnp.abs(y))

    def body(state: tuple[Array, ...]) -> tuple[Array, ...]:
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - ax
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return a, ax, b, d1, e, p, q, r, s, t + 1.0, y

    init = (a, ax, b, d1, e, p, y, fnp.array(0, dtype=x.dtype), s, fnp.array(1, dtype=x.dtype), y)
    y = lax.while_loop(cond, body, init)[10]

    def compute_sum(y: Array) -> Array:
        def for_body(i: Array, state: tuple[Array, ...]) -> tuple[Array, ...]:
            a, b, d2, e, p, s, t, y1 = state
            r = 1.0 - e + t
            p = p * (s * (a + t + d2) * (b + t + d2) / r)
            t = t + 1.0
            p = p / t
            return a, b, d2, e, p, s, t, y1 + p

        init_val = (a, b, d2, e, fnp.array(1, dtype=x.dtype), s, fnp.array(0, dtype=x.dtype), fnp.array(1, dtype=x.dtype))
        y1: Array = lax.fori_loop(1, ard, for_body, init_val)[-1]
        gc = gamma(c)
        y1 = y1 * (gamma(e) * gc / (gamma(a + d1) * gamma(b + d1)))
        y = y * (gc / (gamma(a + d2) * gamma(b + d2)))
        y = fnp.where((ard & 1) != 0, -y, y)
        q = s ** rd
        return fnp.where(rd > 0, y * q + y1, y + y1 * q)

    return fnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), compute_sum(y))


def _hyp2f1_param_derivative(which: str) -> Any:
    """d/da, d/db or d/dc of 2F1 by differentiating its series term by term."""

    def scalar(a: Array, b: Array, c: Array, x: Array) -> Array:
        def shift(k: Array) -> Array:
            if which == "a":
                return digamma(a + k) - digamma(a)
            if which == "b":
                return digamma(b + k) - digamma(b)
            return digamma(c) - digamma(c + k)

        def body(state: State) -> State:
            serie, k, term = state
            return serie + term * shift(k), k + 1, term * ((a + k) * (b + k) / (c + k) / (k + 1) * x)

        return _series_loop(body, (fnp.array(0, dtype=x.dtype), 1, a * b / c * x), finfo_eps(x.dtype))

    return jit(vectorize(scalar))


_hyp2f1_a_derivative = _hyp2f1_param_derivative("a")
_hyp2f1_b_derivative = _hyp2f1_param_derivative("b")
_hyp2f1_c_derivative = _hyp2f1_param_derivative("c")


def _hyp2f1_scalar(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Array:
    a_, b_, c_, x_ = promote_args_inexact("hyp2f1", a, b, c, x)
    eps = finfo_eps(x_.dtype) * 50
    d = c_ - a_ - b_
    s = 1 - x_
    ca, cb = c_ - a_, c_ - b_
    id_ = fnp.round(d)
    where, lor, land, lnot = fnp.where, fnp.logical_or, fnp.logical_and, fnp.logical_not
    index = where(lor(x_ == 0, land(lor(a_ == 0, b_ == 0), c_ != 0)), 0,
                  where(lor(c_ == 0, land(c_ < 0, c_ % 1 == 0)), 1,
                        where(land(d <= -1, lnot(land(fnp.abs(d - id_) >= eps, s < 0))), 2,
                              where(land(d <= 0, x_ == 1), 1,
                                    where(land(x_ < 1, b_ == c_), 3,
                                          where(land(x_ < 1, a_ == c_), 4,
                                                where(x_ > 1, 1, where(x_ == 1, 5, 6))))))))
    return lax.select_n(index.astype(np.int32),  # fcore's select_n takes int32 (JAX's any integer)
                        fnp.array(1, dtype=x_.dtype),
                        fnp.array(np.inf, dtype=x_.dtype),
                        s ** d * _hyp2f1_terminal_or_serie(ca, cb, c_, x_),
                        s ** (-a_),
                        s ** (-b_),
                        gamma(c_) * gamma(d) / (gamma(ca) * gamma(cb)),
                        _hyp2f1_terminal_or_serie(a_, b_, c_, x_))


hyp2f1 = custom_jvp(jit(vectorize(_hyp2f1_scalar)))
hyp2f1.__doc__ = """The Gauss hypergeometric function ``2F1(a, b; c; x)`` (real arguments)."""


def _hyp2f1_x_derivative_impl(a: Array, b: Array, c: Array, x: Array) -> Array:
    out: Array = a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)
    return out


_hyp2f1_x_derivative = jit(_hyp2f1_x_derivative_impl)


hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot,
    lambda x_dot, ans, a, b, c, x: _hyp2f1_x_derivative(a, b, c, x) * x_dot,
)

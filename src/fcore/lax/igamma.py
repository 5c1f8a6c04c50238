"""The regularized incomplete gamma primitives ``igamma``, ``igammac``, ``igamma_grad_a``
and the function ``random_gamma_grad``, with JAX's algorithms (ported from XLA's
``math.cc``: a power series below ``max(1, a)``, a continued fraction above), jvps and
lowering (the algorithm itself, traced, as JAX's ``lower_fun``).

``igamma(a, x) = P(a, x) = gamma(a, x) / Gamma(a)``; ``igammac = 1 - igamma`` (computed
directly, accurate in the upper tail); ``igamma_grad_a`` is ``dP/da``;
``random_gamma_grad(a, x)`` is ``dx/da`` for a sample ``x ~ Gamma(a, 1)`` at fixed ``P``
(what ``random.gamma``'s reparameterized gradient needs).
"""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike, const
from fcore.lax._decomposed import call_decomposed, elementwise_run_by_xla, lower_decomposed, up_and_broadcast
from fcore.lax.control_flow import while_loop
from fcore.lax.elementwise import (
    abs, add, and_, convert_element_type, div, eq, exp, ge, gt, le, log, lt, mul, ne, neg, not_, or_, select, sub,
)
from fcore.lax.reductions import reduce_or
from fcore.lax.special import digamma, lgamma
from fcore.lax.shapes import full_like
from fcore.transforms.batching import defbroadcasting
from fcore.transforms.jvp import defjvp

__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "igamma_p", "igammac_p", "igamma_grad_a_p"]


# -- the algorithms (lax operations; operands of one shape and dtype) ------------------------
def _c(x: ArrayLike, v: float) -> Array:
    """``v`` in ``x``'s dtype; ``x`` may be a user's Python scalar (its default dtype)."""
    return const(x, v)


def _isnan(x: Array) -> Array:
    return ne(x, x)


def _any(pred: Array) -> Array:
    return reduce_or(pred, tuple(range(pred.ndim)))


def _or(*preds: Array) -> Array:
    out = preds[0]
    for p in preds[1:]:
        out = or_(out, p)
    return out


class _Mode(enum.Enum):
    VALUE = 1
    DERIVATIVE = 2
    SAMPLE_DERIVATIVE = 3


def _series(ax: Array, x: Array, a: Array, enabled: Array, dtype: DType, mode: _Mode) -> Array:
    eps = float(np.finfo(dtype).eps)

    def cond(vals: tuple[Array, ...]) -> Array:
        return _any(vals[0])

    def body(vals: tuple[Array, ...]) -> tuple[Array, ...]:
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = add(r, _c(r, 1.0))
        dc_da = sub(mul(dc_da, div(x, r)), div(mul(c, x), mul(r, r)))
        dans_da = add(dans_da, dc_da)
        c = mul(c, div(x, r))
        ans = add(ans, c)
        if mode is _Mode.VALUE:
            going = and_(enabled, gt(div(c, ans), _c(c, eps)))
        else:
            going = and_(enabled, gt(abs(div(dc_da, dans_da)), _c(dc_da, eps)))
        new = (r, c, ans, x, dc_da, dans_da)
        return (going, *[select(enabled, n, o) for n, o in zip(new, vals[1:])])

    init = (enabled, a, full_like(a, 1), full_like(a, 1), x, full_like(a, 0), full_like(a, 0))
    vals = while_loop(cond, body, init)
    ans, dans_da = vals[3], vals[6]
    if mode is _Mode.VALUE:
        return div(mul(ans, ax), a)
    dlogax_da = sub(log(x), digamma(add(a, _c(a, 1.0))))
    if mode is _Mode.DERIVATIVE:
        return div(mul(ax, add(mul(ans, dlogax_da), dans_da)), a)
    return div(mul(neg(add(dans_da, mul(ans, dlogax_da))), x), a)


def _continued_fraction(ax: Array, x: Array, a: Array, enabled: Array, dtype: DType, mode: _Mode) -> Array:
    eps = float(np.finfo(dtype).eps)

    def cond(vals: tuple[Array, ...]) -> Array:
        return and_(lt(vals[5], _c(vals[5], 2000)), _any(vals[0]))

    def body(vals: tuple[Array, ...]) -> tuple[Array, ...]:
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = add(c, _c(c, 1.0))
        y = add(y, _c(y, 1.0))
        z = add(z, _c(z, 2.0))
        yc = mul(y, c)
        pk = sub(mul(pkm1, z), mul(pkm2, yc))
        qk = sub(mul(qkm1, z), mul(qkm2, yc))
        qk_nonzero = ne(qk, _c(qk, 0.0))
        r = div(pk, qk)
        t = select(qk_nonzero, abs(div(sub(ans, r), r)), full_like(r, 1))
        ans = select(qk_nonzero, r, ans)
        dpk_da = add(sub(sub(mul(dpkm1_da, z), pkm1), mul(dpkm2_da, yc)), mul(pkm2, c))
        dqk_da = add(sub(sub(mul(dqkm1_da, z), qkm1), mul(dqkm2_da, yc)), mul(qkm2, c))
        dans_da_new = select(qk_nonzero, div(sub(dpk_da, mul(ans, dqk_da)), qk), dans_da)
        grad_going = select(qk_nonzero, abs(sub(dans_da_new, dans_da)), full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = gt(abs(pk), _c(pk, 1.0 / eps))

        def scaled(v: Array) -> Array:
            return select(rescale, mul(v, _c(v, eps)), v)

        pkm2, pkm1, qkm2, qkm1 = scaled(pkm2), scaled(pkm1), scaled(qkm2), scaled(qkm1)
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = scaled(dpkm2_da), scaled(dqkm2_da), scaled(dpkm1_da), scaled(dqkm1_da)
        if mode is _Mode.VALUE:
            going = and_(enabled, gt(t, _c(t, eps)))
        else:
            going = and_(enabled, gt(grad_going, _c(grad_going, eps)))
        new = (ans, t, y, z)
        kept = [select(enabled, n, o) for n, o in zip(new, vals[1:5])]
        rest = (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        return (going, *kept, c, *[select(enabled, n, o) for n, o in zip(rest, vals[6:])])

    y = sub(_c(a, 1.0), a)
    z = add(add(x, y), _c(x, 1.0))
    c = ArrayImpl(np.zeros((), x.dtype), False)  # the iteration count, a scalar as in JAX
    pkm2 = full_like(x, 1)
    qkm2 = x
    pkm1 = add(x, _c(x, 1.0))
    qkm1 = mul(z, x)
    ans = div(pkm1, qkm1)
    t = full_like(x, 1)
    dpkm2_da, dqkm2_da, dpkm1_da = full_like(x, 0), full_like(x, 0), full_like(x, 0)
    dqkm1_da = neg(x)
    dans_da = div(sub(dpkm1_da, mul(ans, dqkm1_da)), qkm1)
    init = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
    vals = while_loop(cond, body, init)
    ans = vals[1]
    if mode is _Mode.VALUE:
        return mul(ans, ax)
    dlogax_da = sub(log(x), digamma(a))
    if mode is _Mode.DERIVATIVE:
        return mul(ax, add(mul(ans, dlogax_da), vals[14]))
    return neg(mul(add(vals[14], mul(ans, dlogax_da)), x))


def _log_ax(a: Array, x: Array) -> Array:
    """``a log(x) - x - lgamma(a)``, the log of the series' common factor."""
    return sub(sub(mul(a, log(x)), x), lgamma(a))


def _underflows(log_ax: Array, dtype: DType) -> Array:
    return lt(log_ax, _c(log_ax, -math.log(float(np.finfo(dtype).max))))


def _igamma_impl(a: Array, x: Array, *, dtype: DType) -> Array:
    x_is_inf = eq(x, _c(x, math.inf))
    x_is_zero = eq(x, _c(x, 0.0))
    domain_error = _or(lt(x, _c(x, 0.0)), lt(a, _c(a, 0.0)), and_(eq(a, _c(a, 0.0)), x_is_zero),
                       or_(_isnan(a), _isnan(x)))
    use_igammac = and_(ge(x, _c(x, 1.0)), gt(x, a))
    log_ax = _log_ax(a, x)
    underflow = _underflows(log_ax, dtype)
    ax = exp(log_ax)
    enabled = not_(_or(x_is_zero, domain_error, underflow, x_is_inf))
    output = select(use_igammac,
                    sub(_c(a, 1.0), _continued_fraction(ax, x, a, and_(enabled, use_igammac), dtype, _Mode.VALUE)),
                    _series(ax, x, a, and_(enabled, not_(use_igammac)), dtype, _Mode.VALUE))
    output = select(x_is_zero, full_like(a, 0), output)
    output = select(x_is_inf, full_like(a, 1), output)
    return select(domain_error, full_like(a, math.nan), output)


def _igammac_impl(a: Array, x: Array, *, dtype: DType) -> Array:
    a_is_zero = eq(a, _c(a, 0.0))
    x_is_inf = eq(x, _c(x, math.inf))
    domain_error = _or(lt(x, _c(x, 0.0)), lt(a, _c(a, 0.0)), and_(a_is_zero, eq(x, _c(x, 0.0))),
                       or_(_isnan(a), _isnan(x)))
    use_igamma = or_(lt(x, _c(x, 1.0)), lt(x, a))
    log_ax = _log_ax(a, x)
    underflow = _underflows(log_ax, dtype)
    enabled = not_(_or(domain_error, underflow, x_is_inf, a_is_zero))
    ax = exp(log_ax)
    series = _series(ax, x, a, and_(enabled, use_igamma), dtype, _Mode.VALUE)
    fraction = _continued_fraction(ax, x, a, and_(enabled, not_(use_igamma)), dtype, _Mode.VALUE)
    output = select(use_igamma, sub(_c(a, 1.0), series), fraction)
    output = select(or_(x_is_inf, a_is_zero), full_like(output, 0), output)
    return select(domain_error, full_like(a, math.nan), output)


def _derivative_impl(a: Array, x: Array, dtype: DType, mode: _Mode) -> Array:
    is_nan = or_(_isnan(a), _isnan(x))
    x_is_zero = eq(x, _c(x, 0.0))
    domain_error = or_(lt(x, _c(x, 0.0)), le(a, _c(a, 0.0)))
    use_igammac = and_(gt(x, _c(x, 1.0)), gt(x, a))
    log_ax = _log_ax(a, x)
    underflow = _underflows(log_ax, dtype)
    ax = exp(log_ax)
    enabled = not_(_or(x_is_zero, domain_error, underflow, is_nan))
    output = select(use_igammac,
                    neg(_continued_fraction(ax, x, a, and_(enabled, use_igammac), dtype, mode)),
                    _series(ax, x, a, and_(enabled, not_(use_igammac)), dtype, mode))
    output = select(x_is_zero, full_like(output, 0), output)
    return select(or_(domain_error, is_nan), full_like(a, math.nan), output)


def _igamma_grad_a_impl(a: Array, x: Array, *, dtype: DType) -> Array:
    return _derivative_impl(a, x, dtype, _Mode.DERIVATIVE)


def _random_gamma_grad_impl(a: Array, x: Array, *, dtype: DType) -> Array:
    return _derivative_impl(a, x, dtype, _Mode.SAMPLE_DERIVATIVE)


def _igamma_grad_x(g: Any, a: Array, x: Array) -> Array:
    """``dP/dx = x^(a-1) e^-x / Gamma(a)``."""
    return mul(g, exp(sub(add(neg(x), mul(sub(a, _c(a, 1.0)), log(x))), lgamma(a))))


# -- igamma: P(a, x) ----------------------------------------------------------------------------
igamma_p = elementwise_run_by_xla("igamma", 2)
defjvp(igamma_p, lambda g, a, x: mul(g, igamma_grad_a(a, x)), _igamma_grad_x)
defbroadcasting(igamma_p)
lowering_rules.register(igamma_p)(lower_decomposed(up_and_broadcast(_igamma_impl), "igamma"))


def igamma(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    out: Array = igamma_p.bind(a, x)
    return out


# -- igammac: Q(a, x) = 1 - P(a, x) -------------------------------------------------------------
igammac_p = elementwise_run_by_xla("igammac", 2)
defjvp(igammac_p, lambda g, a, x: neg(mul(g, igamma_grad_a(a, x))), lambda g, a, x: neg(_igamma_grad_x(g, a, x)))
defbroadcasting(igammac_p)
lowering_rules.register(igammac_p)(lower_decomposed(up_and_broadcast(_igammac_impl), "igammac"))


def igammac(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    out: Array = igammac_p.bind(a, x)
    return out


# -- igamma_grad_a: dP/da (not differentiable, as in JAX) ---------------------------------------
igamma_grad_a_p = elementwise_run_by_xla("igamma_grad_a", 2)


def _no_derivative(g: Any, a: Array, x: Array) -> Array:
    raise NotImplementedError("Differentiation rule for 'igamma_grad_a' not implemented")


defjvp(igamma_grad_a_p, _no_derivative, _no_derivative)
defbroadcasting(igamma_grad_a_p)
lowering_rules.register(igamma_grad_a_p)(lower_decomposed(up_and_broadcast(_igamma_grad_a_impl), "igamma_grad_a"))


def igamma_grad_a(a: ArrayLike, x: ArrayLike) -> Array:
    """``dP(a, x)/da``."""
    out: Array = igamma_grad_a_p.bind(a, x)
    return out


# -- random_gamma_grad: a function of lax operations, as in JAX ----------------------------------
_random_gamma_grad = up_and_broadcast(_random_gamma_grad_impl)


def random_gamma_grad(a: ArrayLike, x: ArrayLike) -> Array:
    """``dx/da`` for a sample ``x`` of ``Gamma(a, 1)`` held at its quantile (JAX computes this
    with lax operations, not as a primitive; fcore stages them as one ``jit`` call, so that
    eager calls run compiled too). Operands broadcast as NumPy's do."""
    ta, tx = get_aval(a), get_aval(x)
    if ta.dtype != tx.dtype or not dtypes.is_floating(ta.dtype):
        raise TypeError(f"random_gamma_grad requires arguments of one floating dtype, got {ta.dtype} and {tx.dtype}")
    return call_decomposed(_random_gamma_grad, "random_gamma_grad", convert_element_type(a, ta.dtype, ta.weak_type),
                           convert_element_type(x, tx.dtype, tx.weak_type))

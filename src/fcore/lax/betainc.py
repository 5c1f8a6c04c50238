"""The regularized incomplete beta primitive ``regularized_incomplete_beta`` (``lax.betainc``)
with JAX's algorithm (XLA's ``math.cc``: a continued fraction evaluated by the modified
Lentz method, DLMF 8.17.22, on the side of the symmetry relation where it converges
fast), jvp (in ``x`` only, as JAX) and lowering (the algorithm, traced).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike, const, weak_scalar
from fcore.lax._decomposed import elementwise_run_by_xla, lower_decomposed, up_and_broadcast
from fcore.lax.control_flow import while_loop
from fcore.lax.elementwise import (
    abs, add, and_, convert_element_type, div, eq, exp, ge, gt, log, log1p, lt, mul, ne, neg, not_, or_,
    reciprocal, rem, select, sub,
)
from fcore.lax.reductions import reduce_or
from fcore.lax.special import lgamma
from fcore.lax.shapes import broadcast_in_dim, full_like
from fcore.transforms.batching import defbroadcasting
from fcore.transforms.jvp import defjvp

__all__ = ["betainc", "regularized_incomplete_beta_p"]


def _c(x: ArrayLike, v: float) -> Array:
    """``v`` in ``x``'s dtype; ``x`` may be a user's Python scalar (its default dtype)."""
    return const(x, v)


def _lentz_thompson_barnett(num_iterations: int, small: float, threshold: float,
                            numerator: Callable[..., Array], denominator: Callable[..., Array],
                            inputs: Sequence[Array]) -> Array:
    """The modified Lentz evaluation of a continued fraction ``b0 + a1/(b1 + a2/(b2 + ...))``
    (``numerator(n, *inputs)`` is ``a_n``, ``denominator(n, *inputs)`` is ``b_n``)."""

    def cond(values: tuple[Array, ...]) -> Array:
        iteration, unconverged = values[0], values[1]
        return and_(lt(iteration, weak_scalar(num_iterations, iteration.dtype)), unconverged)

    def body(values: tuple[Array, ...]) -> tuple[Array, ...]:
        iteration, _, c_prev, d_prev, h_prev = values
        a_n = numerator(iteration, *inputs)
        b_n = denominator(iteration, *inputs)
        c = add(b_n, div(a_n, c_prev))
        tiny = full_like(c, small)
        c = select(lt(abs(c), tiny), tiny, c)
        d = add(b_n, mul(a_n, d_prev))
        d = select(lt(abs(d), tiny), tiny, d)
        d = reciprocal(d)
        delta = mul(c, d)
        h = mul(h_prev, delta)
        unconverged = ge(abs(sub(delta, _c(delta, 1.0))), _c(delta, threshold))
        return add(iteration, weak_scalar(1, iteration.dtype)), _any(unconverged), c, d, h

    b0 = denominator(ArrayImpl(np.zeros((), np.int32), True), *inputs)
    h = select(lt(abs(b0), _c(b0, small)), full_like(b0, small), b0)
    init = (ArrayImpl(np.ones((), np.int32), True), ArrayImpl(np.asarray(True), False), h, full_like(h, 0), h)
    result: Array = while_loop(cond, body, init)[4]
    return result


def _any(pred: Array) -> Array:
    return reduce_or(pred, tuple(range(pred.ndim)))


def _betainc_impl(a: Array, b: Array, x: Array, *, dtype: DType) -> Array:
    shape = a.shape

    def numerator(iteration: Array, a: Array, b: Array, x: Array) -> Array:
        """DLMF 8.17.23; the first partial numerator is one."""
        it = broadcast_in_dim(iteration, shape, ())
        is_even = eq(rem(it, full_like(it, 2)), full_like(it, 0))
        is_one = eq(it, full_like(it, 1))
        m_int = div(sub(it, full_like(it, 1)), full_like(it, 2))  # iteration >= 1 here
        m_is_zero = eq(m_int, full_like(m_int, 0))
        m = convert_element_type(m_int, dtype)
        one, two = full_like(a, 1), full_like(a, 2.0)
        # For a close to zero and m == 0, this form avoids inaccuracy under FTZ/DAZ.
        zero_numerator = div(mul(neg(add(a, b)), x), add(a, one))
        a2m = add(a, mul(two, m))
        even = select(m_is_zero, zero_numerator,
                      div(mul(mul(neg(add(a, m)), add(add(a, b), m)), x), mul(a2m, add(a2m, one))))
        odd = div(mul(mul(m, sub(b, m)), x), mul(sub(a2m, one), a2m))
        return select(is_one, full_like(x, 1.0), select(is_even, even, odd))

    def denominator(iteration: Array, a: Array, b: Array, x: Array) -> Array:
        it = broadcast_in_dim(iteration, shape, ())
        return select(eq(it, full_like(it, 0)), full_like(x, 0), full_like(x, 1))

    a_is_zero = or_(eq(a, _c(a, 0.0)), eq(b, _c(b, math.inf)))
    b_is_zero = or_(eq(b, _c(b, 0.0)), eq(a, _c(a, math.inf)))
    x_is_zero, x_is_one = eq(x, _c(x, 0.0)), eq(x, _c(x, 1.0))
    is_nan = or_(or_(ne(a, a), ne(b, b)), ne(x, x))
    result_is_zero = or_(and_(b_is_zero, not_(x_is_one)), and_(a_is_zero, x_is_zero))
    result_is_one = or_(and_(a_is_zero, not_(x_is_zero)), and_(b_is_zero, x_is_one))
    result_is_nan = or_(or_(lt(a, _c(a, 0.0)), lt(b, _c(b, 0.0))), or_(lt(x, _c(x, 0.0)), gt(x, _c(x, 1.0))))
    result_is_nan = or_(result_is_nan, or_(and_(a_is_zero, b_is_zero), is_nan))

    # The fraction converges fast for x < (a + 1) / (a + b + 2) (DLMF 8.17.23); otherwise use
    # the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) (DLMF 8.17.4).
    converges_rapidly = lt(x, div(add(a, _c(a, 1.0)), add(add(a, b), _c(b, 2.0))))
    a, b = select(converges_rapidly, a, b), select(converges_rapidly, b, a)
    x = select(converges_rapidly, x, sub(full_like(x, 1), x))
    eps = float(np.finfo(dtype).eps)
    fraction = _lentz_thompson_barnett(200 if dtype == dtypes.float32 else 600, float(np.asarray(eps / 2, dtype)),
                                       float(np.asarray(eps / 2, dtype)), numerator, denominator, [a, b, x])
    # For very small a, a * gamma(a) = gamma(a + 1) -> 1 avoids dividing by zero.
    very_small = float(np.asarray(np.finfo(dtype).tiny * 2, dtype))
    lbeta_small_a = sub(lgamma(b), lgamma(add(a, b)))
    lbeta = add(lgamma(a), lbeta_small_a)
    factor = select(lt(a, full_like(a, very_small)),
                    exp(sub(mul(log1p(neg(x)), b), lbeta_small_a)),
                    div(exp(sub(add(mul(log(x), a), mul(log1p(neg(x)), b)), lbeta)), a))
    result = mul(fraction, factor)
    result = select(converges_rapidly, result, sub(full_like(result, 1), result))
    result = select(result_is_zero, full_like(a, 0), result)
    result = select(result_is_one, full_like(a, 1), result)
    return select(result_is_nan, full_like(a, math.nan), result)


# -- regularized_incomplete_beta ------------------------------------------------------------------
regularized_incomplete_beta_p = elementwise_run_by_xla("regularized_incomplete_beta", 3)


def _grad_not_implemented(g: Any, a: Array, b: Array, x: Array) -> Array:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_grad_x(g: Any, a: Array, b: Array, x: Array) -> Array:
    lbeta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    partial_x = exp(sub(add(mul(sub(b, _c(b, 1.0)), log1p(neg(x))), mul(sub(a, _c(a, 1.0)), log(x))), lbeta))
    return mul(partial_x, g)


defjvp(regularized_incomplete_beta_p, _grad_not_implemented, _grad_not_implemented, _betainc_grad_x)
defbroadcasting(regularized_incomplete_beta_p)
lowering_rules.register(regularized_incomplete_beta_p)(
    lower_decomposed(up_and_broadcast(_betainc_impl), "regularized_incomplete_beta"))


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    out: Array = regularized_incomplete_beta_p.bind(a, b, x)
    return out

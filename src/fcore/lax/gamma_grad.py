"""``random_gamma_grad(a, x)``: the derivative ``dx/da`` of a sample ``x`` of ``Gamma(a, 1)``
held at its quantile ``P(a, x)`` — what ``fcore.random.gamma``'s implicit
reparameterisation gradient needs. As in JAX it is a function of lax operations (JAX's
port of XLA's ``math.cc``: a power series for ``x <= max(1, a)``, a continued fraction
above), not a primitive.

(Written for ``fcore.random``. The incomplete-gamma primitives share this series and
continued fraction; where ``fcore.lax`` has them, this function should be theirs.)
"""

from __future__ import annotations

import numpy as np

from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.lax.control_flow import while_loop
from fcore.lax.elementwise import (
    abs, add, and_, convert_element_type, div, eq, exp, gt, le, log, lt, mul, ne, neg, not_, or_, select, sub,
)
from fcore.lax.reductions import reduce_or
from fcore.lax.special import digamma, lgamma
from fcore.lax.structural import broadcast_in_dim, full_like
from fcore.numpy._dtypes import finfo

__all__ = ["random_gamma_grad"]


def _c(x: Array, value: float) -> Array:
    return full_like(x, value)


def _any(pred: Array) -> Array:
    return reduce_or(pred, tuple(range(pred.ndim)))


def _series(ax: Array, x: Array, a: Array, enabled: Array, dtype: DType) -> Array:
    """``x < max(1, a)``: the series of ``P(a, x)`` and of its derivative in ``a``."""
    eps = np.array(finfo(dtype).eps, dtype)
    State = tuple[Array, Array, Array, Array, Array, Array, Array]

    def body(vals: State) -> State:
        on, r, c, ans, xx, dc_da, dans_da = vals
        r = add(r, _c(r, 1.0))
        dc_da = sub(mul(dc_da, div(xx, r)), div(mul(c, xx), mul(r, r)))
        dans_da = add(dans_da, dc_da)
        c = mul(c, div(xx, r))
        ans = add(ans, c)
        more = and_(on, gt(abs(div(dc_da, dans_da)), eps))
        return (more, select(on, r, vals[1]), select(on, c, vals[2]), select(on, ans, vals[3]),
                select(on, xx, vals[4]), select(on, dc_da, vals[5]), select(on, dans_da, vals[6]))

    init: State = (enabled, a, _c(a, 1.0), _c(a, 1.0), x, _c(a, 0.0), _c(a, 0.0))
    out = while_loop(lambda vals: _any(vals[0]), body, init)
    ans, dans_da = out[3], out[6]
    dlogax_da = sub(log(x), digamma(add(a, _c(a, 1.0))))
    return div(mul(neg(add(dans_da, mul(ans, dlogax_da))), x), a)


def _continued_fraction(ax: Array, x: Array, a: Array, enabled: Array, dtype: DType) -> Array:
    """``x > max(1, a)``: the continued fraction of ``Q(a, x)`` and of its derivative in ``a``."""
    eps_value = float(finfo(dtype).eps)
    eps = np.array(eps_value, dtype)
    State = tuple[Array, ...]

    def cond(vals: State) -> Array:
        return and_(lt(vals[5], _c(vals[5], 2000.0)), _any(vals[0]))

    def body(vals: State) -> State:
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = add(c, _c(c, 1.0))
        y = add(y, _c(y, 1.0))
        z = add(z, _c(z, 2.0))
        yc = mul(y, c)
        pk = sub(mul(pkm1, z), mul(pkm2, yc))
        qk = sub(mul(qkm1, z), mul(qkm2, yc))
        qk_nonzero = ne(qk, _c(qk, 0.0))
        r = div(pk, qk)
        t = select(qk_nonzero, abs(div(sub(ans, r), r)), _c(r, 1.0))
        ans = select(qk_nonzero, r, ans)
        dpk_da = add(sub(sub(mul(dpkm1_da, z), pkm1), mul(dpkm2_da, yc)), mul(pkm2, c))
        dqk_da = add(sub(sub(mul(dqkm1_da, z), qkm1), mul(dqkm2_da, yc)), mul(qkm2, c))
        dans_da_new = select(qk_nonzero, div(sub(dpk_da, mul(ans, dqk_da)), qk), dans_da)
        grad_change = select(qk_nonzero, abs(sub(dans_da_new, dans_da)), _c(dans_da, 1.0))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        rescale = gt(abs(pk), np.array(1.0 / eps_value, dtype))

        def scaled(v: Array) -> Array:
            return select(rescale, mul(v, eps), v)

        pkm2, pkm1, qkm2, qkm1 = scaled(pkm2), scaled(pkm1), scaled(qkm2), scaled(qkm1)
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = scaled(dpkm2_da), scaled(dqkm2_da), scaled(dpkm1_da), scaled(dqkm1_da)
        more = and_(on, gt(grad_change, eps))
        new = (ans, t, y, z)
        kept = tuple(select(on, v, old) for v, old in zip(new, vals[1:5]))
        rest = (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        kept_rest = tuple(select(on, v, old) for v, old in zip(rest, vals[6:]))
        return (more, *kept, c, *kept_rest)

    y = sub(_c(a, 1.0), a)
    z = add(add(x, y), _c(x, 1.0))
    c = convert_element_type(np.zeros((), dtype), dtype)  # the iteration count, a scalar
    pkm2 = _c(x, 1.0)
    qkm2 = x
    pkm1 = add(x, _c(x, 1.0))
    qkm1 = mul(z, x)
    ans = div(pkm1, qkm1)
    zeros = _c(x, 0.0)
    dqkm1_da = neg(x)
    dans_da = div(sub(zeros, mul(ans, dqkm1_da)), qkm1)
    init: State = (enabled, ans, _c(x, 1.0), y, z, c, pkm1, qkm1, pkm2, qkm2, zeros, zeros, zeros, dqkm1_da, dans_da)
    out = while_loop(cond, body, init)
    dlogax_da = sub(log(x), digamma(a))
    return neg(mul(add(out[14], mul(out[1], dlogax_da)), x))


def _random_gamma_grad(a: Array, x: Array, dtype: DType) -> Array:
    is_nan = or_(ne(a, a), ne(x, x))
    x_is_zero = eq(x, _c(x, 0.0))
    domain_error = or_(lt(x, _c(x, 0.0)), le(a, _c(a, 0.0)))
    use_continued_fraction = and_(gt(x, _c(x, 1.0)), gt(x, a))
    log_ax = sub(sub(mul(a, log(x)), x), lgamma(a))
    underflow = lt(log_ax, np.array(-np.log(finfo(dtype).max), dtype))
    ax = exp(log_ax)
    enabled = not_(or_(or_(or_(x_is_zero, domain_error), underflow), is_nan))
    output = select(
        use_continued_fraction,
        neg(_continued_fraction(ax, x, a, and_(enabled, use_continued_fraction), dtype)),
        _series(ax, x, a, and_(enabled, not_(use_continued_fraction)), dtype),
    )
    output = select(x_is_zero, _c(output, 0.0), output)
    return select(or_(domain_error, is_nan), _c(a, float("nan")), output)


def random_gamma_grad(a: ArrayLike, x: ArrayLike) -> Array:
    """``dx/da`` for samples ``x`` of ``Gamma(a, 1)`` (operands broadcast; 16-bit floats are
    computed in float32, as JAX's ``_up_and_broadcast`` does)."""
    a_arr, x_arr = (v if isinstance(v, Array) else convert_element_type(v, np.asarray(v).dtype) for v in (a, x))
    shape = tuple(np.broadcast_shapes(a_arr.shape, x_arr.shape))
    a_arr, x_arr = (
        v if v.shape == shape else broadcast_in_dim(v, shape, tuple(range(len(shape) - v.ndim, len(shape))))
        for v in (a_arr, x_arr)
    )
    dt = a_arr.dtype
    if dt != x_arr.dtype or not dtypes.is_floating(dt):
        raise TypeError(f"random_gamma_grad requires arguments of one floating dtype, got {dt} and {x_arr.dtype}")
    if dt in (dtypes.float16, dtypes.bfloat16):
        f32 = dtypes.float32
        out = _random_gamma_grad(convert_element_type(a_arr, f32), convert_element_type(x_arr, f32), f32)
        return convert_element_type(out, dt)
    return _random_gamma_grad(a_arr, x_arr, dt)

"""The Gamma and Beta function families of ``fcore.scipy.special``."""

from __future__ import annotations

import math
import operator

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import convert, operand, result_of, to_inexact
from fcore.scipy._util import const, inexact, promote_args_inexact


def _promote2(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    a, b = promote_args_inexact(name, x, y)
    return a, b


def gammaln(x: ArrayLike) -> Array:
    """``log|Gamma(x)|``."""
    return lax.lgamma(inexact(x))


def loggamma(x: ArrayLike) -> Array:
    """``log(Gamma(x))`` for real ``x > 0`` (NaN elsewhere, as scipy's real ``loggamma``)."""
    a = inexact(x)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("fcore.scipy.special.loggamma does not support complex inputs")
    return fnp.where(fnp.greater(a, 0), lax.lgamma(a), np.nan)


def gammasgn(x: ArrayLike) -> Array:
    """The sign of ``Gamma(x)`` (NaN at the poles)."""
    a = inexact(x)
    if dtypes.is_complex(a.dtype):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    floor_x = lax.floor(a)
    negative = fnp.less(a, 0)
    nan_case = fnp.logical_or(fnp.logical_and(negative, fnp.equal(a, floor_x)), fnp.isnan(a))
    neg_case = fnp.logical_or(fnp.logical_and(negative, fnp.not_equal(fnp.remainder(floor_x, 2), 0)),
                              fnp.logical_and(fnp.equal(a, 0), fnp.signbit(a)))
    return fnp.select([nan_case, neg_case], [const(a, np.nan), const(a, -1.0)], const(a, 1.0))


def gamma(x: ArrayLike) -> Array:
    """The Gamma function (real arguments)."""
    a = inexact(x)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("fcore.scipy.special.gamma does not support complex inputs")
    return fnp.multiply(gammasgn(a), lax.exp(lax.lgamma(a)))


def digamma(x: ArrayLike) -> Array:
    """The logarithmic derivative of Gamma."""
    return lax.digamma(inexact(x))


def polygamma(n: ArrayLike, x: ArrayLike) -> Array:
    """The ``n``-th derivative of ``digamma`` (``n`` integer-typed)."""
    if not dtypes.is_integer(operand(n, "polygamma")[0]):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {operand(n, 'polygamma')[0]}.")
    a, b = _promote2(n, x, "polygamma")
    if dtypes.is_complex(b.dtype):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(a, b)


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Array:
    """The Hurwitz zeta function ``sum_k (q + k)**-x`` (``q`` is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function."
        )
    a, b = _promote2(x, q, "zeta")
    return lax.zeta(a, b)


def _algdiv(a: Array, b: Array) -> Array:
    """``log(gamma(a)) - log(gamma(a + b))`` for ``b >= 8`` (scipy's ``algdiv``, as in JAX)."""
    c0, c1, c2, c3 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03, -0.595202931351870e-03
    c4, c5 = 0.837308034031215e-03, -0.165322962780713e-02
    h = fnp.true_divide(a, b)
    c = fnp.true_divide(h, fnp.add(1, h))
    x = c
    d = fnp.add(b, fnp.subtract(a, 0.5))
    x2 = fnp.multiply(x, x)
    s3 = fnp.add(1.0, fnp.add(x, x2))
    s5 = fnp.add(1.0, fnp.add(x, fnp.multiply(x2, s3)))
    s7 = fnp.add(1.0, fnp.add(x, fnp.multiply(x2, s5)))
    s9 = fnp.add(1.0, fnp.add(x, fnp.multiply(x2, s7)))
    s11 = fnp.add(1.0, fnp.add(x, fnp.multiply(x2, s9)))
    t = fnp.power(fnp.true_divide(1.0, b), 2)
    w = fnp.add(fnp.multiply(fnp.add(fnp.multiply(fnp.add(fnp.multiply(fnp.add(fnp.multiply(fnp.add(
        fnp.multiply(fnp.multiply(c5, s11), t), fnp.multiply(c4, s9)), t), fnp.multiply(c3, s7)), t),
        fnp.multiply(c2, s5)), t), fnp.multiply(c1, s3)), t), c0)
    w = fnp.multiply(w, fnp.true_divide(c, b))
    u = fnp.multiply(d, lax.log1p(fnp.true_divide(a, b)))
    v = fnp.multiply(a, fnp.subtract(lax.log(b), 1.0))
    return fnp.where(fnp.less_equal(u, v), fnp.subtract(fnp.subtract(w, v), u), fnp.subtract(fnp.subtract(w, u), v))


def betaln(a: ArrayLike, b: ArrayLike) -> Array:
    """``log|B(a, b)|``, accurate for large arguments (``algdiv`` when ``max(a, b) >= 8``)."""
    x, y = _promote2(a, b, "betaln")
    lo, hi = fnp.minimum(x, y), fnp.maximum(x, y)
    small = fnp.add(lax.lgamma(lo), fnp.subtract(lax.lgamma(hi), lax.lgamma(fnp.add(lo, hi))))
    large = fnp.add(lax.lgamma(lo), _algdiv(lo, hi))
    return fnp.where(fnp.less(hi, 8), small, large)


def beta(a: ArrayLike, b: ArrayLike) -> Array:
    """The Beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``."""
    x, y = _promote2(a, b, "beta")
    if dtypes.is_complex(x.dtype):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = fnp.multiply(fnp.multiply(gammasgn(x), gammasgn(y)), gammasgn(fnp.add(x, y)))
    return fnp.multiply(sign, lax.exp(betaln(x, y)))


def factorial(n: ArrayLike, exact: bool = False) -> Array:
    """``n!`` as ``Gamma(n + 1)`` (0 for negative ``n``)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    a = inexact(n)
    return fnp.where(fnp.less(a, 0), 0, lax.exp(lax.lgamma(fnp.add(a, 1))))


def multigammaln(a: ArrayLike, d: int) -> Array:
    """The log of the multivariate Gamma function of dimension ``d``."""
    d = int(d)
    dt, weak = result_of(a, d, name="multigammaln")
    x, d_arr = convert(a, to_inexact(dt), weak), convert(d, to_inexact(dt), weak)
    constant = fnp.multiply(fnp.multiply(fnp.multiply(0.25, d_arr), fnp.subtract(d_arr, 1)), math.log(math.pi))
    b = fnp.true_divide(fnp.arange(d, dtype=x.dtype), 2)
    res = fnp.sum(gammaln(fnp.subtract(fnp.expand_dims(x, -1), fnp.expand_dims(b, tuple(range(x.ndim))))), axis=-1)
    return fnp.add(res, constant)



def comb(N: ArrayLike, k: ArrayLike, *, repetition: bool = False) -> Array:
    """The number of combinations of ``N`` things taken ``k`` at a time, through ``gammaln``."""
    n_, k_ = promote_args_inexact("comb", N, k)
    if repetition:
        cond = (k_ == 0) & (n_ >= 0)
        return fnp.where(cond, 1.0, comb(n_ + k_ - 1, k_, repetition=False))
    cond = (k_ <= n_) & (n_ >= 0) & (k_ >= 0)
    safe_n = fnp.where(cond, n_, 0.0)
    safe_k = fnp.where(cond, k_, 0.0)
    result = lax.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
    return fnp.where(cond, result, 0.0)


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularized incomplete beta function ``I_x(a, b)`` (differentiable in ``x``)."""
    a_, b_, x_ = promote_args_inexact("betainc", a, b, x)
    if dtypes.is_complex(x_.dtype):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax.betainc(a_, b_, x_)


def gammainc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    a_, x_ = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a_, x_)


def gammaincc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    a_, x_ = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a_, x_)


@custom_jvp
def poch(z: ArrayLike, m: ArrayLike) -> Array:
    """The Pochhammer symbol ``Gamma(z + m) / Gamma(z)`` (1 where ``m`` is 0)."""
    z_, m_ = promote_args_inexact("poch", z, m)
    if dtypes.is_complex(z_.dtype):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return fnp.where(m_ == 0.0, fnp.array(1, dtype=z_.dtype), gamma(z_ + m_) / gamma(z_))


def _poch_z_tangent(g: Array, ans: Array, z: Array, m: Array) -> Array:
    return (digamma(z + m) - digamma(z)) * ans * g


def _poch_m_tangent(g: Array, ans: Array, z: Array, m: Array) -> Array:
    return digamma(z + m) * ans * g


poch.defjvps(_poch_z_tangent, _poch_m_tangent)


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers ``B_0 .. B_n`` (Chowla and Hartung's algorithm)."""
    n = operator.index(n)  # a tracer raises ConcretizationError here
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = fnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[: n + 1]
    bn = fnp.zeros(n + 1).at[:3].set(b3)
    m = fnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1.0 / np.pi ** 2) * fnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = fnp.arange(2, 50, dtype=bn.dtype)  # 2 ** -50 < 1e-15
    q2 = fnp.sum(k[:, None] ** -m[None, :], axis=0)
    out: Array = bn.at[4::2].set(q1 * (1 + q2))
    return out

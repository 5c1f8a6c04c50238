"""``fcore.scipy.special``: special functions with ``jax.scipy.special``'s formulas, dtypes and
custom derivatives (``erf``, ``erfc``, ``erfinv``, ``gammaln``, ``digamma``, ``polygamma``,
``zeta``, ``betaln``, ``xlogy``, ``entr``, ``ndtr``, ``ndtri``, ``log_ndtr``, ...)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax import ArrayLike
from fcore.nn import log_softmax as _nn_log_softmax, logsumexp as logsumexp, softmax as _nn_softmax
from fcore.numpy._promotion import convert, operand, result_of, to_inexact

__all__ = [
    "logsumexp", "erf", "erfc", "erfinv", "expit", "logit", "gammaln", "gamma", "gammasgn", "loggamma", "digamma",
    "polygamma", "zeta", "betaln", "beta", "factorial", "multigammaln", "xlogy", "xlog1py", "entr", "rel_entr",
    "kl_div", "ndtr", "ndtri", "log_ndtr", "softmax", "log_softmax",
]


def _inexact(x: ArrayLike) -> Array:
    dt, weak = operand(x, "special")
    return convert(x, to_inexact(dt), weak)


def _inexact2(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    dt, weak = result_of(x, y, name=name)
    dt = to_inexact(dt)
    a, b = convert(x, dt, weak), convert(y, dt, weak)
    shape = fnp.broadcast_shapes(a.shape, b.shape)
    return fnp.broadcast_to(a, shape), fnp.broadcast_to(b, shape)


def _const(x: Array, value: float) -> Array:
    return ArrayImpl(np.asarray(value).astype(x.dtype), False)


def erf(x: ArrayLike) -> Array:
    """The error function."""
    return lax.erf(_inexact(x))


def erfc(x: ArrayLike) -> Array:
    """The complementary error function ``1 - erf(x)`` (accurate in the tail)."""
    return lax.erfc(_inexact(x))


def erfinv(x: ArrayLike) -> Array:
    """The inverse error function."""
    return lax.erf_inv(_inexact(x))


def expit(x: ArrayLike) -> Array:
    """The logistic sigmoid."""
    return lax.logistic(_inexact(x))


@custom_jvp
def logit(x: ArrayLike) -> Array:
    """``log(x / (1 - x))``."""
    a = _inexact(x)
    return lax.log(lax.div(a, lax.sub(convert(1, a.dtype, a.weak_type), a)))


def _logit_tangent(g: Array, ans: Array, x: ArrayLike) -> Array:
    a = _inexact(x)
    return lax.div(g, lax.mul(a, lax.sub(convert(1, a.dtype, a.weak_type), a)))


logit.defjvps(_logit_tangent)


def gammaln(x: ArrayLike) -> Array:
    """``log|Gamma(x)|``."""
    return lax.lgamma(_inexact(x))


def loggamma(x: ArrayLike) -> Array:
    """``log(Gamma(x))`` for real ``x > 0`` (NaN elsewhere, as scipy's real ``loggamma``)."""
    a = _inexact(x)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("fcore.scipy.special.loggamma does not support complex inputs")
    return fnp.where(fnp.greater(a, 0), lax.lgamma(a), np.nan)


def gammasgn(x: ArrayLike) -> Array:
    """The sign of ``Gamma(x)`` (NaN at the poles)."""
    a = _inexact(x)
    if dtypes.is_complex(a.dtype):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    floor_x = lax.floor(a)
    negative = fnp.less(a, 0)
    nan_case = fnp.logical_or(fnp.logical_and(negative, fnp.equal(a, floor_x)), fnp.isnan(a))
    neg_case = fnp.logical_or(fnp.logical_and(negative, fnp.not_equal(fnp.remainder(floor_x, 2), 0)),
                              fnp.logical_and(fnp.equal(a, 0), fnp.signbit(a)))
    return fnp.select([nan_case, neg_case], [_const(a, np.nan), _const(a, -1.0)], _const(a, 1.0))


def gamma(x: ArrayLike) -> Array:
    """The Gamma function (real arguments)."""
    a = _inexact(x)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("fcore.scipy.special.gamma does not support complex inputs")
    return fnp.multiply(gammasgn(a), lax.exp(lax.lgamma(a)))


def digamma(x: ArrayLike) -> Array:
    """The logarithmic derivative of Gamma."""
    return lax.digamma(_inexact(x))


def polygamma(n: ArrayLike, x: ArrayLike) -> Array:
    """The ``n``-th derivative of ``digamma`` (``n`` integer-typed)."""
    if not dtypes.is_integer(operand(n, "polygamma")[0]):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {operand(n, 'polygamma')[0]}.")
    a, b = _inexact2(n, x, "polygamma")
    if dtypes.is_complex(b.dtype):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(a, b)


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Array:
    """The Hurwitz zeta function ``sum_k (q + k)**-x`` (``q`` is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function."
        )
    a, b = _inexact2(x, q, "zeta")
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
    x, y = _inexact2(a, b, "betaln")
    lo, hi = fnp.minimum(x, y), fnp.maximum(x, y)
    small = fnp.add(lax.lgamma(lo), fnp.subtract(lax.lgamma(hi), lax.lgamma(fnp.add(lo, hi))))
    large = fnp.add(lax.lgamma(lo), _algdiv(lo, hi))
    return fnp.where(fnp.less(hi, 8), small, large)


def beta(a: ArrayLike, b: ArrayLike) -> Array:
    """The Beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``."""
    x, y = _inexact2(a, b, "beta")
    if dtypes.is_complex(x.dtype):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = fnp.multiply(fnp.multiply(gammasgn(x), gammasgn(y)), gammasgn(fnp.add(x, y)))
    return fnp.multiply(sign, lax.exp(betaln(x, y)))


def factorial(n: ArrayLike, exact: bool = False) -> Array:
    """``n!`` as ``Gamma(n + 1)`` (0 for negative ``n``)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    a = _inexact(n)
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


@custom_jvp
def xlogy(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log(y)``, 0 where ``x`` is 0 (unless ``y`` is NaN)."""
    a, b = _inexact2(x, y, "xlogy")
    ok = fnp.logical_or(fnp.not_equal(a, 0.0), fnp.isnan(b))
    return fnp.where(ok, lax.mul(a, lax.log(b)), fnp.zeros_like(a))


@xlogy.defjvp
def _xlogy_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Array, Array]:
    (x, y), (tx, ty) = primals, tangents
    result = xlogy(x, y)
    return result, fnp.asarray(fnp.add(fnp.multiply(tx, lax.log(y)), fnp.true_divide(fnp.multiply(ty, x), y)), dtype=result.dtype)


@custom_jvp
def xlog1py(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log1p(y)``, 0 where ``x`` is 0 (unless ``y`` is NaN)."""
    a, b = _inexact2(x, y, "xlog1py")
    ok = fnp.logical_or(fnp.not_equal(a, 0.0), fnp.isnan(b))
    return fnp.where(ok, lax.mul(a, lax.log1p(b)), fnp.zeros_like(a))


@xlog1py.defjvp
def _xlog1py_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Array, Array]:
    (x, y), (tx, ty) = primals, tangents
    result = xlog1py(x, y)
    tangent = fnp.add(fnp.multiply(tx, lax.log1p(y)), fnp.true_divide(fnp.multiply(ty, x), fnp.add(1, y)))
    return result, fnp.asarray(tangent, dtype=result.dtype)


@custom_jvp
def _xlogx(x: Array) -> Array:
    out: Array = xlogy(x, x)
    return out


_xlogx.defjvps(lambda g, ans, x: fnp.multiply(g, fnp.add(lax.log(x), 1)))


def entr(x: ArrayLike) -> Array:
    """Elementwise entropy ``-x log(x)`` (``-inf`` for negative ``x``)."""
    a = _inexact(x)
    if dtypes.is_complex(a.dtype):
        raise ValueError("entr does not support complex-valued inputs.")
    neg_inf = fnp.full_like(a, -np.inf)
    return lax.select(lax.lt(a, convert(0, a.dtype, a.weak_type)), neg_inf, lax.neg(_xlogx(a)))


def rel_entr(p: ArrayLike, q: ArrayLike) -> Array:
    """Elementwise relative entropy ``p log(p / q)`` (with scipy's conventions at 0)."""
    a, b = _inexact2(p, q, "rel_entr")
    if dtypes.is_complex(a.dtype):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    zero = _const(a, 0.0)
    both = fnp.logical_and(fnp.greater(a, zero), fnp.greater(b, zero))
    one_zero = fnp.logical_and(fnp.equal(a, zero), fnp.greater_equal(b, zero))
    safe_p, safe_q = fnp.where(both, a, 1), fnp.where(both, b, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return fnp.where(both, log_val, fnp.where(one_zero, zero, np.inf))


def kl_div(p: ArrayLike, q: ArrayLike) -> Array:
    """Elementwise Kullback-Leibler divergence ``p log(p / q) - p + q``."""
    a, b = _inexact2(p, q, "kl_div")
    if dtypes.is_complex(a.dtype):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return fnp.add(fnp.subtract(rel_entr(a, b), a), b)


def _check_f32_f64(x: Array, name: str = "x") -> None:
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{name}.dtype={x.dtype} is not supported, see docstring for supported types.")


def _ndtr(x: Array) -> Array:
    half_sqrt_2 = _const(x, 0.5 * np.sqrt(2.0))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    one, two = _const(x, 1.0), _const(x, 2.0)
    y = fnp.where(lax.lt(z, half_sqrt_2), lax.add(one, lax.erf(w)),
                  fnp.where(lax.gt(w, _const(x, 0.0)), lax.sub(two, lax.erfc(z)), lax.erfc(z)))
    return lax.mul(_const(x, 0.5), y)


def ndtr(x: ArrayLike) -> Array:
    """The standard normal CDF (float32/float64 inputs)."""
    a = fnp.asarray(x)
    _check_f32_f64(a)
    return _ndtr(a)


_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1, 1.39312609387279679503E1,
             -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1, 1.59056225126211695515E1,
             -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1, 4.40805073893200834700E1,
             1.46849561928858024014E1, 2.18663306850790267539E0, -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1, 1.50425385692907503408E1,
             2.50464946208309415979E0, -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0, 1.33303460815807542389E0,
             2.01485389549179081538E-1, 1.23716634817820021358E-2, 3.01581553508235416007E-4, 2.65806974686737550832E-6,
             6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0, 2.16236993594496635890E-1,
             1.34204006088543189037E-2, 3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p: ArrayLike) -> Array:
    """The inverse of the standard normal CDF (Cephes' rational approximations, as JAX)."""
    a = fnp.asarray(p)
    _check_f32_f64(a)
    dt = a.dtype

    def coeffs(c: list[float]) -> Array:
        return ArrayImpl(np.asarray(c, dt), False)

    def sc(v: float) -> Array:
        return _const(a, v)

    mcp = fnp.where(fnp.greater(a, sc(-np.expm1(-2.0))), fnp.subtract(sc(1.0), a), a)
    mcp = fnp.where(fnp.equal(mcp, sc(0.0)), fnp.full(a.shape, sc(0.5)), mcp)
    w = fnp.subtract(mcp, sc(0.5))
    ww = lax.mul(w, w)
    big = fnp.add(w, fnp.multiply(fnp.multiply(w, ww), fnp.true_divide(fnp.polyval(coeffs(_NDTRI_P0), ww), fnp.polyval(coeffs(_NDTRI_Q0), ww))))
    big = fnp.multiply(big, sc(-np.sqrt(2.0 * np.pi)))
    z = lax.sqrt(fnp.multiply(sc(-2.0), lax.log(mcp)))
    first = fnp.subtract(z, fnp.true_divide(lax.log(z), z))
    inv_z = fnp.true_divide(1, z)
    small = fnp.subtract(first, fnp.true_divide(fnp.true_divide(fnp.polyval(coeffs(_NDTRI_P2), inv_z), fnp.polyval(coeffs(_NDTRI_Q2), inv_z)), z))
    other = fnp.subtract(first, fnp.true_divide(fnp.true_divide(fnp.polyval(coeffs(_NDTRI_P1), inv_z), fnp.polyval(coeffs(_NDTRI_Q1), inv_z)), z))
    x = fnp.where(fnp.greater(mcp, sc(np.exp(-2.0))), big, fnp.where(fnp.greater_equal(z, sc(8.0)), small, other))
    x = fnp.where(fnp.greater(a, sc(1.0 - np.exp(-2.0))), x, fnp.negative(x))
    inf = fnp.full(a.shape, sc(np.inf))
    return fnp.where(fnp.equal(a, sc(0.0)), fnp.negative(inf), fnp.where(fnp.equal(a, sc(1.0)), inf, x))


def _log_ndtr_lower(x: Array, series_order: int) -> Array:
    x2 = lax.mul(x, x)
    log_scale = fnp.subtract(fnp.subtract(fnp.multiply(_const(x, -0.5), x2), lax.log(lax.neg(x))), _const(x, 0.5 * np.log(2.0 * np.pi)))
    if series_order <= 0:
        return log_scale
    even, odd = fnp.zeros_like(x), fnp.zeros_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = fnp.true_divide(_const(x, float(np.prod(np.arange(2 * n - 1, 1, -2)))), x2n)
        if n % 2:
            odd = fnp.add(odd, term)
        else:
            even = fnp.add(even, term)
        x2n = fnp.multiply(x2n, x2)
    return fnp.add(log_scale, lax.log(fnp.subtract(fnp.add(_const(x, 1.0), even), odd)))


def _log_ndtr(x: Array, series_order: int) -> Array:
    lower, upper = (-20.0, 8.0) if x.dtype == dtypes.float64 else (-10.0, 5.0)
    above = lax.gt(x, _const(x, upper))
    arg = fnp.where(above, fnp.negative(x), lax.max(x, fnp.full(x.shape, _const(x, lower))) if x.shape else lax.max(x, _const(x, lower)))
    res = _ndtr(arg)
    low_x = lax.min(x, fnp.full(x.shape, _const(x, lower))) if x.shape else lax.min(x, _const(x, lower))
    return fnp.where(above, fnp.negative(res), fnp.where(lax.gt(x, _const(x, lower)), lax.log(res), _log_ndtr_lower(low_x, series_order)))


def _log_ndtr_core_impl(x: Array, series_order: int) -> Array:
    return _log_ndtr(x, series_order)


_log_ndtr_core = custom_jvp(_log_ndtr_core_impl, nondiff_argnums=(1,))


def _log_ndtr_rule(series_order: int, primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    logpdf = fnp.subtract(fnp.multiply(_const(x, -0.5), lax.mul(x, x)), _const(x, 0.5 * np.log(2 * np.pi)))
    return ans, lax.mul(t, lax.exp(lax.sub(logpdf, ans)))


_log_ndtr_core.defjvp(_log_ndtr_rule)


def log_ndtr(x: ArrayLike, series_order: int = 3) -> Array:
    """``log(ndtr(x))``, accurate far into both tails (an asymptotic series for small ``x``)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    a = fnp.asarray(x)
    if a.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"x.dtype={a.dtype} is not supported.")
    out: Array = _log_ndtr_core(a, series_order)
    return out


def softmax(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (all axes by default)."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x - logsumexp(x)`` along ``axis`` (all axes by default)."""
    return _nn_log_softmax(x, axis=axis)

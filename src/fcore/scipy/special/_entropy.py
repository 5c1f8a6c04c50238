"""Logistic, logarithmic and entropy functions of ``fcore.scipy.special``."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import convert
from fcore.scipy._util import const, inexact, promote_args_inexact
from fcore.nn import log_softmax as _nn_log_softmax, logsumexp as logsumexp, softmax as _nn_softmax


def _promote2(x: ArrayLike, y: ArrayLike, name: str) -> tuple[Array, Array]:
    a, b = promote_args_inexact(name, x, y)
    return a, b


def expit(x: ArrayLike) -> Array:
    """The logistic sigmoid."""
    return lax.logistic(inexact(x))


@custom_jvp
def logit(x: ArrayLike) -> Array:
    """``log(x / (1 - x))``."""
    a = inexact(x)
    return lax.log(lax.div(a, lax.sub(convert(1, a.dtype, a.weak_type), a)))


def _logit_tangent(g: Array, ans: Array, x: ArrayLike) -> Array:
    a = inexact(x)
    return lax.div(g, lax.mul(a, lax.sub(convert(1, a.dtype, a.weak_type), a)))


logit.defjvps(_logit_tangent)



@custom_jvp
def xlogy(x: ArrayLike, y: ArrayLike) -> Array:
    """``x * log(y)``, 0 where ``x`` is 0 (unless ``y`` is NaN)."""
    a, b = _promote2(x, y, "xlogy")
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
    a, b = _promote2(x, y, "xlog1py")
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
    a = inexact(x)
    if dtypes.is_complex(a.dtype):
        raise ValueError("entr does not support complex-valued inputs.")
    neg_inf = fnp.full_like(a, -np.inf)
    return lax.select(lax.lt(a, convert(0, a.dtype, a.weak_type)), neg_inf, lax.neg(_xlogx(a)))


def rel_entr(p: ArrayLike, q: ArrayLike) -> Array:
    """Elementwise relative entropy ``p log(p / q)`` (with scipy's conventions at 0)."""
    a, b = _promote2(p, q, "rel_entr")
    if dtypes.is_complex(a.dtype):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    zero = const(a, 0.0)
    both = fnp.logical_and(fnp.greater(a, zero), fnp.greater(b, zero))
    one_zero = fnp.logical_and(fnp.equal(a, zero), fnp.greater_equal(b, zero))
    safe_p, safe_q = fnp.where(both, a, 1), fnp.where(both, b, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return fnp.where(both, log_val, fnp.where(one_zero, zero, np.inf))


def kl_div(p: ArrayLike, q: ArrayLike) -> Array:
    """Elementwise Kullback-Leibler divergence ``p log(p / q) - p + q``."""
    a, b = _promote2(p, q, "kl_div")
    if dtypes.is_complex(a.dtype):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return fnp.add(fnp.subtract(rel_entr(a, b), a), b)



def softmax(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (all axes by default)."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x - logsumexp(x)`` along ``axis`` (all axes by default)."""
    return _nn_log_softmax(x, axis=axis)



def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Array:
    """The Box-Cox transformation ``(x**lmbda - 1) / lmbda`` (``log(x)`` where ``lmbda`` is 0)."""
    x_, lm = promote_args_inexact("boxcox", x, lmbda)
    is_zero = lm == 0
    safe = fnp.where(is_zero, fnp.ones_like(lm), lm)
    log_x = fnp.log(x_)
    return fnp.where(is_zero, log_x, fnp.expm1(safe * log_x) / safe)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Array:
    """The Box-Cox transformation of ``1 + x``."""
    x_, lm = promote_args_inexact("boxcox1p", x, lmbda)
    is_zero = lm == 0
    safe = fnp.where(is_zero, fnp.ones_like(lm), lm)
    log1p_x = fnp.log1p(x_)
    return fnp.where(is_zero, log1p_x, fnp.expm1(safe * log1p_x) / safe)

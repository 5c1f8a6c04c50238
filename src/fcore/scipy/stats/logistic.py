"""``fcore.scipy.stats.logistic``: as ``jax.scipy.stats.logistic``."""

from __future__ import annotations

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import expit, logit
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic log probability distribution function."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    x = lax.div(lax.sub(x, loc), scale)
    two = const(x, 2)
    half_x = lax.div(x, two)
    return lax.sub(lax.mul(lax.neg(two), fnp.logaddexp(half_x, lax.neg(half_x))), lax.log(scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic probability distribution function."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic distribution percent point function."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic distribution survival function."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def isf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic distribution inverse survival function."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic cumulative distribution function."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))

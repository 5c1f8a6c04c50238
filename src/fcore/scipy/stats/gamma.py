"""``fcore.scipy.stats.gamma``: as ``jax.scipy.stats.gamma``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import gammainc, gammaincc, gammaln, xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma log probability distribution function."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = const(x, 1)
    y = fnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear_term = lax.sub(xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    log_probs = lax.sub(log_linear_term, shape_terms)
    return fnp.where(ok, log_probs, -np.inf)


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma probability distribution function."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma cumulative distribution function."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(
      a,
      lax.clamp(
        const(x, 0),
        lax.div(lax.sub(x, loc), scale),
        const(x, np.inf),
      )
    )


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma log cumulative distribution function."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma survival function."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return fnp.where(lax.lt(y, const(y, 0)), 1, gammaincc(a, y))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma log survival function."""
    return lax.log(sf(x, a, loc, scale))

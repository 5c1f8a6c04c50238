"""``fcore.scipy.stats.pareto``: as ``jax.scipy.stats.pareto``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(
  x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto log probability distribution function."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    one = const(x, 1)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.div(scale, b))
    log_probs = lax.neg(
      lax.add(normalize_term, lax.mul(lax.add(b, one), lax.log(scaled_x)))
    )
    return fnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(
  x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto probability distribution function."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(
  x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto cumulative distribution function."""
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    one = const(x, 1)
    zero = const(x, 0)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    cdf = lax.sub(one, lax.pow(scaled_x, lax.neg(b)))
    return fnp.where(lax.lt(x, lax.add(loc, scale)), zero, cdf)


def logcdf(
  x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto log cumulative distribution function."""
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    logcdf_val = lax.log1p(lax.neg(lax.pow(scaled_x, lax.neg(b))))
    return fnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, logcdf_val)


def logsf(
  x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto log survival function."""
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    zero = const(x, 0)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    logsf_val = lax.neg(lax.mul(b, lax.log(scaled_x)))
    return fnp.where(lax.lt(x, lax.add(loc, scale)), zero, logsf_val)


def sf(
  x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto survival function."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(
  q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Pareto percent point function (inverse CDF)."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    ppf_val = lax.add(
      loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b))))
    )
    return fnp.where(fnp.isnan(q) | (q < 0) | (q > 1), np.nan, ppf_val)

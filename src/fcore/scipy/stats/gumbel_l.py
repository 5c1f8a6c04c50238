"""``fcore.scipy.stats.gumbel_l``: as ``jax.scipy.stats.gumbel_l``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import xlog1py, xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike,
           loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) log probability distribution function."""

    x, loc, scale = promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    # logpdf = -log(scale) + z - exp(z)
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    t2 = lax.sub(z, lax.exp(z))
    log_pdf = lax.add(neg_log_scale, t2)
    return fnp.where(ok, log_pdf, np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) probability distribution function."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike,
           loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) log cumulative density function."""
    x, loc, scale = promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_exp_z = lax.neg(lax.exp(z))
    # xlog1p fails here, that's why log1p is used here
    # even log1p fails for some cases when using float64 mode
    # so we're using this formula which is stable
    log_cdf = lax.log(-lax.expm1(neg_exp_z))
    return fnp.where(ok, log_cdf, np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) cumulative density function."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) percent point function (inverse of CDF)"""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, const(p, 0)),
                         lax.lt(p, const(p, 1)))
    # quantile = loc + (scale)*log(-log(1 - p))
    t1 = xlog1py(-1, lax.neg(p))
    # xlogp failed here too, that's why log is used
    t = lax.mul(scale, lax.log(t1))
    quantile = lax.add(loc, t)
    return fnp.where(ok, quantile, np.nan)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) survival function."""
    return fnp.exp(logsf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Left Skewed) log survival function."""
    x, loc, scale = promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    # logsf = -exp(z)
    z = lax.div(lax.sub(x, loc), scale)
    log_sf = lax.neg(lax.exp(z))
    return fnp.where(ok, log_sf, np.nan)

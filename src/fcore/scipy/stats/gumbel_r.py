"""``fcore.scipy.stats.gumbel_r``: as ``jax.scipy.stats.gumbel_r``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.nn import log1mexp
from fcore.scipy.special import xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike,
           loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) log probability distribution function."""

    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    # logpdf = -log(beta) - (z + exp(-z))
    neg_log_scale = xlogy(-1, scale)
    t2 = lax.neg(lax.add(z, lax.exp(lax.neg(z))))
    log_pdf = lax.add(neg_log_scale, t2)
    return fnp.where(ok, log_pdf, np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) probability distribution function."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike,
           loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) log cumulative density function."""
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    # log cdf = -exp(-z)
    log_cdf = lax.neg(lax.exp(lax.neg(z)))
    return fnp.where(ok, log_cdf, np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) cumulative density function."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) percent point function."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    # 0 < p < 1
    ok = lax.bitwise_and(lax.gt(p, const(p, 0)),
                         lax.lt(p, const(p, 1)))

    # quantile = loc - (scale)*log(-log(p))
    t1 = xlogy(-1, p)
    t = lax.mul(scale, lax.log(t1))
    quantile = lax.sub(loc, t)
    return fnp.where(ok, quantile, np.nan)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) survival function."""
    x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    # sf = 1 - exp(-exp(-z))
    neg_z = lax.div(lax.sub(loc, x), scale)
    t1 = lax.exp(lax.neg(lax.exp(neg_z)))
    _sf = lax.sub(const(x, 1), t1)
    return fnp.where(ok, _sf, np.nan)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gumbel Distribution (Right Skewed) log survival function."""
    x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    ok = lax.gt(scale, const(scale, 0))
    # logsf = log(1 - exp(-exp(-z)))
    neg_z = lax.div(lax.sub(loc, x), scale)
    log_sf = log1mexp(lax.exp(neg_z))
    return fnp.where(ok, log_sf, np.nan)

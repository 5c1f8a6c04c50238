"""``fcore.scipy.stats.chi2``: as ``jax.scipy.stats.chi2``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import gammainc, gammaincc
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-square log probability distribution function."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one = const(x, 1)
    two = const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    df_on_two = lax.div(df, two)

    kernel = lax.sub(lax.mul(lax.sub(df_on_two, one), lax.log(y)), lax.div(y,two))

    nrml_cnst = lax.neg(lax.add(lax.lgamma(df_on_two),lax.div(lax.mul(lax.log(two), df),two)))

    log_probs = lax.add(lax.sub(nrml_cnst, lax.log(scale)), kernel)
    return fnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-square probability distribution function."""
    return lax.exp(logpdf(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-square cumulative distribution function."""
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    two = const(scale, 2)
    return gammainc(
      lax.div(df, two),
      lax.clamp(
        const(x, 0),
        lax.div(
          lax.sub(x, loc),
          lax.mul(scale, two),
        ),
        const(x, np.inf),
      ),
    )


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-square log cumulative distribution function."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-square survival function."""
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    two = const(scale, 2)
    return gammaincc(
      lax.div(df, two),
      lax.clamp(
        const(x, 0),
        lax.div(
          lax.sub(x, loc),
          lax.mul(scale, two),
        ),
        const(x, np.inf),
      ),
    )


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-square log survival function."""
    return lax.log(sf(x, df, loc, scale))

"""``fcore.scipy.stats.beta``: as ``jax.scipy.stats.beta``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import betainc, betaln, xlog1py, xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike,
           loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta log probability distribution function."""
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one = const(x, 1)
    zero = const(a, 0)
    shape_term = lax.neg(betaln(a, b))
    y = lax.div(lax.sub(x, loc), scale)
    log_linear_term = lax.add(xlogy(lax.sub(a, one), y),
                              xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(shape_term, log_linear_term), lax.log(scale))
    result = fnp.where(fnp.logical_or(lax.gt(x, lax.add(loc, scale)),
                                      lax.lt(x, loc)), -np.inf, log_probs)
    result_positive_constants = fnp.where(fnp.logical_or(fnp.logical_or(lax.le(a, zero), lax.le(b, zero)),
                                                         lax.le(scale, zero)), np.nan, result)
    return result_positive_constants


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike,
        loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta probability distribution function."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike,
        loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta cumulative distribution function"""
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(
      a,
      b,
      lax.clamp(
        const(x, 0),
        lax.div(lax.sub(x, loc), scale),
        const(x, 1),
      )
    )


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike,
           loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta log cumulative distribution function."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike,
       loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta distribution survival function."""
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return betainc(
      b,
      a,
      1 - lax.clamp(
        const(x, 0),
        lax.div(lax.sub(x, loc), scale),
        const(x, 1),
      )
    )


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike,
          loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta distribution log survival function."""
    return lax.log(sf(x, a, b, loc, scale))

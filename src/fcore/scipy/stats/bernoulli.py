"""``fcore.scipy.stats.bernoulli``: as ``jax.scipy.stats.bernoulli``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import xlog1py, xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Bernoulli log probability mass function."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    zero = const(k, 0)
    one = const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return fnp.where(fnp.logical_or(lax.lt(x, zero), lax.gt(x, one)),
                    -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Bernoulli probability mass function."""
    return fnp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike) -> Array:
    """Bernoulli cumulative distribution function."""
    k, p = promote_args_inexact('bernoulli.cdf', k, p)
    zero, one = const(k, 0), const(k, 1)
    conds = [
      fnp.isnan(k) | fnp.isnan(p) | (p < zero) | (p > one),
      lax.lt(k, zero),
      fnp.logical_and(lax.ge(k, zero), lax.lt(k, one)),
      lax.ge(k, one)
      ]
    vals: list[ArrayLike] = [fnp.nan, zero, one - p, one]
    return fnp.select(conds, vals)


def ppf(q: ArrayLike, p: ArrayLike) -> Array:
    """Bernoulli percent point function."""
    q, p = promote_args_inexact('bernoulli.ppf', q, p)
    zero, one = const(q, 0), const(q, 1)
    return fnp.where(
      fnp.isnan(q) | fnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one),
      fnp.nan,
      fnp.where(lax.le(q, one - p), zero, one)
    )

"""``fcore.scipy.stats.nbinom``: as ``jax.scipy.stats.nbinom``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import gammaln, xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["logpmf", "pmf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Negative-binomial log probability mass function."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(
      lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one))
    )
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    log_probs = lax.add(comb_term, log_linear_term)
    return fnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Negative-binomial probability mass function."""
    return lax.exp(logpmf(k, n, p, loc))

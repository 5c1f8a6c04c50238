"""``fcore.scipy.stats.binom``: as ``jax.scipy.stats.binom``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import gammaln, xlog1py, xlogy
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["logpmf", "pmf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Binomial log probability mass function."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = const(y, 0)
    comb_term = lax.sub(
        gammaln(n + 1),
        lax.add(gammaln(y + 1), gammaln(n - y + 1))
    )
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    y_n_cond = fnp.logical_or(fnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                              lax.eq(log_linear_term, zero))
    log_probs = fnp.where(y_n_cond, 0., log_probs)
    return fnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Binomial probability mass function."""
    return lax.exp(logpmf(k, n, p, loc))

"""``fcore.scipy.stats.betabinom``: as ``jax.scipy.stats.betabinom``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.api.jit import jit
from fcore.lax._base import ArrayLike
from fcore.scipy.special import betaln
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["logpmf", "pmf"]


def __dir__() -> list[str]:
    return list(__all__)


@jit
def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
           loc: ArrayLike = 0) -> Array:
    """Beta-binomial log probability mass function."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one = const(y, 1)
    zero = const(y, 0)
    combiln = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n,y), one), lax.add(y,one))))
    beta_lns = lax.sub(betaln(lax.add(y,a), lax.add(lax.sub(n,y),b)), betaln(a,b))
    log_probs = lax.add(combiln, beta_lns)
    log_probs = fnp.where(fnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0., log_probs)
    y_cond = fnp.logical_or(fnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)),
                            lax.le(lax.add(y, a), zero))
    log_probs = fnp.where(y_cond, -np.inf, log_probs)
    n_a_b_cond = fnp.logical_or(fnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
    return fnp.where(n_a_b_cond, np.nan, log_probs)


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
        loc: ArrayLike = 0) -> Array:
    """Beta-binomial probability mass function."""
    return lax.exp(logpmf(k, n, a, b, loc))

"""``fcore.scipy.stats.uniform``: as ``jax.scipy.stats.uniform``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform log probability distribution function."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.log(scale))
    return fnp.where(fnp.logical_or(lax.gt(x, lax.add(loc, scale)),
                                    lax.lt(x, loc)),
                     -np.inf, log_probs)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform probability distribution function."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform cumulative distribution function."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = fnp.array(0, x.dtype), fnp.array(1, x.dtype)
    conds = [lax.lt(x, loc), lax.gt(x, lax.add(loc, scale)), lax.ge(x, loc) & lax.le(x, lax.add(loc, scale))]
    vals = [zero, one, lax.div(lax.sub(x, loc), scale)]

    return fnp.select(conds, vals)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform distribution percent point function."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return fnp.where(
      fnp.isnan(q) | (q < 0) | (q > 1),
      np.nan,
      lax.add(loc, lax.mul(scale, q))
    )

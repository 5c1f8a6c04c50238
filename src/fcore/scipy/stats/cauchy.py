"""``fcore.scipy.stats.cauchy``: as ``jax.scipy.stats.cauchy``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy log probability distribution function."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    pi = const(x, np.pi)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.mul(pi, scale))
    return lax.neg(lax.add(normalize_term, lax.log1p(lax.mul(scaled_x, scaled_x))))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy probability distribution function."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy cumulative distribution function."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    pi = const(x, np.pi)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(const(x, 0.5), lax.mul(lax.div(const(x, 1.), pi), fnp.arctan(scaled_x)))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy log cumulative distribution function."""
    return lax.log(cdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy distribution log survival function."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy distribution log survival function."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy distribution inverse survival function."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    pi = const(q, np.pi)
    half_pi = const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(half_pi, lax.mul(pi, q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy distribution percent point function."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    pi = const(q, np.pi)
    half_pi = const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(lax.mul(pi, q), half_pi))
    return lax.add(lax.mul(unscaled, scale), loc)

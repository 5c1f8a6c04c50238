"""``fcore.scipy.stats.truncnorm``: as ``jax.scipy.stats.truncnorm``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.api.jit import jit
from fcore.lax._base import ArrayLike
from fcore.scipy.stats import norm
from fcore.scipy.special import log_ndtr, logsumexp, ndtr
from fcore.scipy._util import promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__() -> list[str]:
    return list(__all__)


def _log_diff(x: Array, y: Array) -> Array:
    out: Array = logsumexp(fnp.array([x, y]), b=fnp.array([fnp.ones_like(x), -fnp.ones_like(y)]), axis=0)
    return out


def _log_gauss_mass(a: ArrayLike, b: ArrayLike) -> Array:
    """Log of Gaussian probability mass within an interval"""
    a, b = fnp.broadcast_arrays(fnp.array(a), fnp.array(b))

    # Note: Docstring carried over from scipy
    # Calculations in right tail are inaccurate, so we'll exploit the
    # symmetry and work only in the left tail
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)

    # By conditionally swapping arguments if we're in the right tail,
    # we only need to compile the mass_case_left graph once instead of twice.
    a_tail = fnp.where(case_right, -b, a)
    b_tail = fnp.where(case_right, -a, b)

    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))

    # Catastrophic cancellation occurs as np.exp(log_mass) approaches 1.
    # Correct for this with an alternative formulation.
    # We're not concerned with underflow here: if only one term
    # underflows, it was insignificant; if both terms underflow,
    # the result can't accurately be represented in logspace anyway
    # because sc.log1p(x) ~ x for small x.
    mass_central = fnp.log1p(-ndtr(a) - ndtr(-b))

    out = fnp.where(case_central, mass_central, mass_tail)
    return out


@jit
def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Truncated normal log probability distribution function."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))

    x_scaled = lax.div(lax.sub(x, loc), scale)
    val = fnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    val = fnp.where(a >= b, np.nan, val)
    return val


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Truncated normal probability distribution function."""
    return lax.exp(logpdf(x, a, b, loc, scale))

@jit
def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Truncated normal distribution log survival function."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    out: Array = logcdf(-x, -b, -a, -loc, scale)
    return out


@jit
def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Truncated normal distribution survival function."""
    return lax.exp(logsf(x, a, b, loc, scale))


@jit
def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Truncated normal log cumulative distribution function."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = fnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    lgm_ab = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - lgm_ab
    log_sf = _log_gauss_mass(x, b) - lgm_ab
    log_cdf = fnp.select(
      # third condition: avoid catastrophic cancellation (from scipy)
      [x >= b, x <= a, log_cdf > -0.1, x > a],
      [0, -np.inf, fnp.log1p(-fnp.exp(log_sf)), log_cdf]
    )
    return fnp.where(a >= b, np.nan, log_cdf)

@jit
def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Truncated normal cumulative distribution function."""
    return lax.exp(logcdf(x, a, b, loc, scale))

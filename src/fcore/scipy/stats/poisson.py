"""``fcore.scipy.stats.poisson``: as ``jax.scipy.stats.poisson``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.api.jit import jit
from fcore.lax._base import ArrayLike
from fcore.scipy.special import entr, gammaincc, gammaln, xlogy
from fcore.scipy._util import const, promote_args_inexact, promote_dtypes_inexact

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Poisson log probability mass function."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = const(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return fnp.where(fnp.logical_or(lax.lt(x, zero),
                                    lax.ne(fnp.round(k), k)), -np.inf, log_probs)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Poisson probability mass function."""
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Poisson cumulative distribution function."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = const(k, 0)
    x = lax.sub(k, loc)
    p = gammaincc(fnp.floor(1 + x), mu)
    return fnp.where(lax.lt(x, zero), zero, p)

@jit
def entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Shannon entropy of the Poisson distribution."""
    mu, loc = fnp.asarray(mu), fnp.asarray(loc)
    promoted_mu, promoted_loc = promote_dtypes_inexact(mu, loc)

    #Note: loc does not affect the entropy - translation invariant
    #it has only been taken to maintain compatibility with scipy api
    result_shape = fnp.broadcast_shapes(
      promoted_mu.shape,
      promoted_loc.shape
    )

    mu_flat = fnp.ravel(promoted_mu)
    zero_result = fnp.zeros_like(mu_flat)


    # Choose the computation regime based on mu value
    result = fnp.where(
      mu_flat == 0,
      zero_result,
      fnp.where(
        mu_flat < 10,
        _entropy_small_mu(mu_flat),
        fnp.where(
          mu_flat < 100,
          _entropy_medium_mu(mu_flat),
          _entropy_large_mu(mu_flat)
        )
      )
    )

    result_mu_shape = fnp.reshape(result, promoted_mu.shape)

    # Restore original shape
    return fnp.broadcast_to(result_mu_shape, result_shape)

def _entropy_small_mu(mu: Array) -> Array:
    """Entropy via direct PMF summation for small μ (< 10)."""
    max_k = 35

    k = fnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)

    # Mask: only compute up to mu + 20 for each value
    upper_bounds = fnp.ceil(mu + 20).astype(k.dtype)
    mask = k < upper_bounds[None, :]
    probs_masked = fnp.where(mask, probs, 0.0)

    return fnp.sum(entr(probs_masked), axis=0)

def _entropy_medium_mu(mu: Array) -> Array:
    """Entropy for medium mu (10-100): Adaptive bounds based on std dev."""
    max_k = 250  # Static bound for JIT. For mu<100, upper bound < 220

    k = fnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)

    upper_bounds = fnp.ceil(mu + 10 * fnp.sqrt(mu) + 20).astype(k.dtype)
    mask = k < upper_bounds[None, :]
    probs_masked = fnp.where(mask, probs, 0.0)

    return fnp.sum(entr(probs_masked), axis=0)

def _entropy_large_mu(mu: Array) -> Array:
    """Entropy for large mu (>= 100): Asymptotic approximation."""
    return 0.5 * fnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)

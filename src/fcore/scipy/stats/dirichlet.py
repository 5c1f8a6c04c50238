"""``fcore.scipy.stats.dirichlet``: as ``jax.scipy.stats.dirichlet``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import gammaln, xlogy
from fcore.scipy._util import const, promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def __dir__() -> list[str]:
    return list(__all__)


def _is_simplex(x: Array) -> Array:
    x_sum = fnp.sum(x, axis=0)
    return fnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1E-6)


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Dirichlet log probability distribution function."""
    return _logpdf(*promote_dtypes_inexact(x, alpha))

def _logpdf(x: Array, alpha: Array) -> Array:
    if alpha.ndim != 1:
        raise ValueError(
          f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}"
        )
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
          "`x` must have either the same number of entries as `alpha` "
          f"or one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = fnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = fnp.sum(gammaln(alpha)) - gammaln(fnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(fnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
    return fnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Dirichlet probability distribution function."""
    return lax.exp(logpdf(x, alpha))

"""``fcore.scipy.stats.gennorm``: as ``jax.scipy.stats.gennorm``."""

from __future__ import annotations

from fcore import lax
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """Generalized normal log probability distribution function."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(.5 * beta) - lax.lgamma(1/beta) - lax.abs(x)**beta


def cdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """Generalized normal cumulative distribution function."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return .5 * (1 + lax.sign(x) * lax.igamma(1/beta, lax.abs(x)**beta))


def pdf(x: ArrayLike, beta: ArrayLike) -> Array:
    """Generalized normal probability distribution function."""
    return lax.exp(logpdf(x, beta))

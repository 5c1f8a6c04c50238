"""``fcore.scipy.stats.laplace``: as ``jax.scipy.stats.laplace``."""

from __future__ import annotations

from fcore import lax
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Laplace log probability distribution function."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    two = const(x, 2)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(two, scale))))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Laplace probability distribution function."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Laplace cumulative distribution function."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half = const(x, 0.5)
    one = const(x, 1)
    zero = const(x, 0)
    diff = lax.div(lax.sub(x, loc), scale)
    return lax.select(lax.le(diff, zero),
                      lax.mul(half, lax.exp(diff)),
                      lax.sub(one, lax.mul(half, lax.exp(lax.neg(diff)))))

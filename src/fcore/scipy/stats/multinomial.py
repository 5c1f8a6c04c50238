"""``fcore.scipy.stats.multinomial``: as ``jax.scipy.stats.multinomial``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import gammaln, xlogy
from fcore.ir import dtypes
from fcore.scipy._util import promote_args_inexact, promote_args_numeric

__all__ = ["logpmf", "pmf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """Multinomial log probability mass function."""
    p, = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.is_integer(x.dtype):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + fnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return fnp.where(fnp.equal(fnp.sum(x), n), logprobs, -np.inf)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """Multinomial probability mass function."""
    return lax.exp(logpmf(x, n, p))

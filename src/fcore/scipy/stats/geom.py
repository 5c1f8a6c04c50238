"""``fcore.scipy.stats.geom``: as ``jax.scipy.stats.geom``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy.special import xlog1py
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["logpmf", "pmf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Geometric log probability mass function."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    zero = const(k, 0)
    one = const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, one), -p) + lax.log(p)
    return fnp.where(lax.le(x, zero), -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Geometric probability mass function."""
    return fnp.exp(logpmf(k, p, loc))

"""``fcore.scipy.stats.vonmises``: as ``jax.scipy.stats.vonmises``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["logpdf", "pdf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """von Mises log probability distribution function."""
    x, kappa = promote_args_inexact('vonmises.logpdf', x, kappa)
    zero = const(kappa, 0)
    return fnp.where(lax.gt(kappa, zero), kappa * (fnp.cos(x) - 1) - fnp.log(2 * np.pi * lax.bessel_i0e(kappa)), np.nan)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """von Mises probability distribution function."""
    return lax.exp(logpdf(x, kappa))

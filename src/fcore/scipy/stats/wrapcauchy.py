"""``fcore.scipy.stats.wrapcauchy``: as ``jax.scipy.stats.wrapcauchy``."""

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


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
    """Wrapped Cauchy log probability distribution function."""
    x, c = promote_args_inexact('wrapcauchy.logpdf', x, c)
    return fnp.where(
      lax.gt(c, const(c, 0)) & lax.lt(c, const(c, 1)),
      fnp.where(
        lax.ge(x, const(x, 0)) & lax.le(x, const(x, np.pi * 2)),
        fnp.log(1 - c * c) - fnp.log(2 * np.pi) - fnp.log(1 + c * c - 2 * c * fnp.cos(x)),
        -np.inf,
      ),
      np.nan,
    )


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
    """Wrapped Cauchy probability distribution function."""
    return lax.exp(logpdf(x, c))

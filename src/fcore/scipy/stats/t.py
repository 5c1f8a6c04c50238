"""``fcore.scipy.stats.t``: as ``jax.scipy.stats.t``."""

from __future__ import annotations

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["logpdf", "pdf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Student's T log probability distribution function."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = const(x, 2)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    df_over_two = lax.div(df, two)
    df_plus_one_over_two = lax.add(df_over_two, const(x, 0.5))
    normalize_term_const = lax.mul(lax.mul(scale, scale), const(x, np.pi))
    normalize_term_tmp = lax.div(lax.log(lax.mul(normalize_term_const, df)), two)
    normalize_term = lax.sub(lax.add(lax.lgamma(df_over_two), normalize_term_tmp),
                             lax.lgamma(df_plus_one_over_two))
    quadratic = lax.div(lax.mul(scaled_x, scaled_x), df)
    return lax.neg(lax.add(normalize_term, lax.mul(df_plus_one_over_two, lax.log1p(quadratic))))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Student's T probability distribution function."""
    return lax.exp(logpdf(x, df, loc, scale))

"""``fcore.scipy.stats.multivariate_normal``: as ``jax.scipy.stats.multivariate_normal``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.lax import linalg as lax_linalg
from fcore.scipy._util import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def __dir__() -> list[str]:
    return list(__all__)


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None) -> Array:
    """Multivariate normal log probability distribution function (``cov`` a scalar, or a
    positive definite matrix over the last two axes)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x_, mean_, cov_ = promote_dtypes_inexact(x, mean, cov)
    if not mean_.shape:
        return -1 / 2 * fnp.square(x_ - mean_) / cov_ - 1 / 2 * (fnp.log(2 * np.pi) + fnp.log(cov_))
    n = mean_.shape[-1]
    if not cov_.shape:
        y = x_ - mean_
        return -1 / 2 * fnp.einsum("...i,...i->...", y, y) / cov_ - n / 2 * (fnp.log(2 * np.pi) + fnp.log(cov_))
    if cov_.ndim < 2 or cov_.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax_linalg.cholesky(cov_)
    diff = x_ - mean_
    shape = fnp.broadcast_shapes(factor.shape[:-2], diff.shape[:-1])
    y = lax_linalg.triangular_solve(fnp.broadcast_to(factor, shape + (n, n)), fnp.broadcast_to(diff, shape + (n,)),
                                    lower=True, transpose_a=True)
    return (-1 / 2 * fnp.einsum("...i,...i->...", y, y) - n / 2 * fnp.log(2 * np.pi)
            - fnp.log(fnp.diagonal(factor, axis1=-1, axis2=-2)).sum(-1))


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    """Multivariate normal probability distribution function."""
    return lax.exp(logpdf(x, mean, cov))

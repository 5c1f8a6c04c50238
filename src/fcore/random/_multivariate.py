"""Samplers of vectors and matrices: ``multivariate_normal`` (a Cholesky, eigh or SVD factor
of the covariance times standard normals) and ``orthogonal`` (Haar-distributed orthogonal
matrices, the Q of a QR factorization of a normal matrix with R's diagonal made positive)."""

from __future__ import annotations

import operator
from typing import Any

from fcore import numpy as fnp
from fcore.numpy import linalg as fnp_linalg
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.numpy._promotion import to_inexact
from fcore.random._checks import Shape, broadcast_shapes, canonicalize_shape, check_shape, user_dtype
from fcore.random._continuous import normal_floats
from fcore.random._compiled import operand, specialize
from fcore.random._key_ops import KeyArrayLike
from fcore.random._keys import check_prng_key

__all__ = ["multivariate_normal", "orthogonal"]


def _multivariate_normal(key: Array, mean: Array, cov: Array, shape: Shape | None, dtype: DType, method: str) -> Array:
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got cov.shape == {tuple(cov.shape)}."
        )
    if shape is None:
        shape = broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    else:
        check_shape("normal", shape, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = fnp_linalg.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = fnp_linalg.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    else:
        factor = fnp_linalg.cholesky(cov)
    samples = normal_floats(key, (*shape, n), dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, samples)



def multivariate_normal(key: KeyArrayLike, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Array:
    """Samples of the multivariate normal distribution with ``mean`` (``(..., n)``) and
    positive definite covariance ``cov`` (``(..., n, n)``)."""
    data, _ = check_prng_key("multivariate_normal", key)
    mean_arr, cov_arr = fnp.asarray(mean), fnp.asarray(cov)
    common = to_inexact(fnp.result_type(mean_arr, cov_arr))
    mean_arr, cov_arr = mean_arr.astype(common), cov_arr.astype(common)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = mean_arr.dtype if dtype is None else user_dtype(dtype, float)
    if not dtypes.is_floating(dt):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dt}")
    shp = None if shape is None else canonicalize_shape(shape)
    return specialize(_multivariate_normal, shp, dt, method)(data, operand(mean_arr), operand(cov_arr))


def _orthogonal(key: Array, n: int, m: int, shape: Shape, dtype: DType) -> Array:
    z = normal_floats(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = fnp_linalg.qr(z)
    x = q * fnp.expand_dims(fnp.sign(fnp_linalg.diagonal(r)), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x



def orthogonal(key: KeyArrayLike, n: int, shape: Any = (), dtype: Any = None, m: int | None = None) -> Array:
    """Haar-random ``n x m`` matrices with orthonormal columns (or rows, when ``n < m``);
    ``m`` defaults to ``n``."""
    shp = canonicalize_shape(shape)
    data, _ = check_prng_key("orthogonal", key)
    dt = user_dtype(dtype, float)
    rows = operator.index(n)
    cols = rows if m is None else operator.index(m)
    return specialize(_orthogonal, rows, cols, shp, dt)(data)


"""``roots`` and ``polyfit``: the polynomial functions that need ``fcore.numpy.linalg``
(companion-matrix eigenvalues, least squares), as ``jnp`` computes them."""

from __future__ import annotations

from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy import linalg
from fcore.numpy._promotion import asarray, promote_dtypes
from fcore.numpy.searching import concrete

__all__ = ["roots", "polyfit"]


def _complex_of(dt: Any) -> Any:
    return np.complex128 if dt in (np.float64, np.complex128) else np.complex64


def _roots_no_zeros(p: Array) -> Array:
    if p.size < 2:
        return fnp.array([], dtype=_complex_of(p.dtype))
    A = fnp.diag(fnp.ones((p.size - 2,), p.dtype), -1)
    A = A.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(A)


def _roots_with_zeros(p: Array, num_leading_zeros: Array) -> Array:
    p = fnp.where(len(p) == num_leading_zeros, 1.0, p)
    n = p.shape[0]
    r = _roots_no_zeros(fnp.take(p, (fnp.arange(n) + num_leading_zeros) % n))  # roll by -num_leading_zeros
    r = lax.sort_key_val(r == 0, r)[1]
    return fnp.where(fnp.arange(r.size) < r.size - num_leading_zeros, r, complex(np.nan, np.nan))


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Array:
    """The roots of the polynomial with coefficients ``p`` (highest degree first): the
    eigenvalues of its companion matrix (complex)."""
    (arr,) = promote_dtypes(asarray(p, "roots"), name="roots", inexact=True)
    arr = fnp.atleast_1d(arr)
    if arr.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if arr.size < 2:
        return fnp.array([], dtype=_complex_of(arr.dtype))
    num_leading_zeros = fnp.where(fnp.all(arr == 0), len(arr), fnp.argmin(arr == 0))
    if strip_zeros:
        n = int(concrete(num_leading_zeros, "The error occurred in the jnp.roots() function. To use this within a "
                         "JIT-compiled context, pass strip_zeros=False, but be aware that leading zeros will result "
                         "in some returned roots being set to NaN."))
        return _roots_no_zeros(arr[n:])
    return _roots_with_zeros(arr, num_leading_zeros)


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None, full: bool = False,
            w: ArrayLike | None = None, cov: bool | str = False) -> Any:
    """Least-squares fit of a degree-``deg`` polynomial to ``(x, y)`` (coefficients highest
    degree first; with ``full``, also residuals, rank, singular values and ``rcond``)."""
    x_arr, y_arr = asarray(x, "polyfit"), asarray(y, "polyfit", 1)
    deg = int(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_arr.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x_arr.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y_arr.ndim < 1 or y_arr.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_arr.shape[0] != y_arr.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x_arr) * float(fnp.finfo(x_arr.dtype).eps)
    rcond = float(rcond)
    lhs = fnp.vander(x_arr, order)
    rhs = y_arr
    if w is not None:
        (w_arr,) = promote_dtypes(asarray(w, "polyfit", 2), name="polyfit", inexact=True)
        if w_arr.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w_arr.shape[0] != y_arr.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w_arr[:, None]
        rhs = rhs * w_arr[:, None] if rhs.ndim == 2 else rhs * w_arr
    scale = fnp.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, fnp.asarray(rcond, dtype=dtypes.default_float_dtype())
    if cov:
        vbase = linalg.inv(fnp.dot(lhs.T, lhs)) / fnp.outer(scale, scale)
        if cov == "unscaled":
            fac = fnp.array(1.0)
        else:
            if len(x_arr) <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = resids / (len(x_arr) - order)
        if y_arr.ndim == 1:
            return c, vbase * fnp.atleast_1d(fac)[None]
        return c, vbase[:, :, None] * fnp.atleast_1d(fac)[None, None, :]
    return c

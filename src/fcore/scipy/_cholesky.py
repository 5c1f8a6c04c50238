"""Cholesky factorization and triangular solves in lax operations, for ``scipy.stats``
(``multivariate_normal``, ``gaussian_kde``).

A stopgap: JAX calls LAPACK (``lax.linalg.cholesky``/``triangular_solve``); fcore has no
``lax.linalg`` yet. These are the textbook column-by-column algorithms written with
one-hot vectors (no scatter), so they batch over leading axes and differentiate in both
modes; their results agree with LAPACK's to rounding. Replace with ``fcore.lax.linalg``
when it exists.
"""

from __future__ import annotations

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array

__all__ = ["cholesky", "solve_lower", "solve_upper_transposed", "cho_solve", "spd_inverse"]


def _one_hot(i: Array, n: int, like: Array) -> Array:
    return (fnp.arange(n) == i).astype(like.dtype)


def cholesky(a: Array) -> Array:
    """The lower-triangular ``L`` with ``L L^T = a`` over the last two axes (NaN where ``a``
    is not positive definite, as LAPACK's failure shows in JAX)."""
    n = a.shape[-1]
    idx = fnp.arange(n)

    def column(j: Array, factor: Array) -> Array:
        e = _one_hot(j, n, a)
        before = (idx < j).astype(a.dtype)
        row = fnp.einsum("...jk,j->...k", factor, e) * before  # L[j, :j]
        a_col = fnp.einsum("...ij,j->...i", a, e)
        diag = fnp.sqrt(fnp.einsum("...i,i->...", a_col, e) - fnp.sum(row * row, axis=-1))
        col = (a_col - fnp.einsum("...ik,...k->...i", factor, row)) / diag[..., None]
        col = fnp.where(idx > j, col, fnp.where(idx == j, diag[..., None], 0))
        return factor + col[..., :, None] * e
    out: Array = lax.fori_loop(0, n, column, fnp.zeros_like(a))
    return out


def solve_lower(factor: Array, b: Array) -> Array:
    """``x`` with ``factor @ x = b`` for lower-triangular ``factor`` (``b``: ``(..., n, m)``)."""
    n = factor.shape[-1]
    idx = fnp.arange(n)

    def row(i: Array, x: Array) -> Array:
        e = _one_hot(i, n, factor)
        l_row = fnp.einsum("...ik,i->...k", factor, e) * (idx < i).astype(factor.dtype)
        rhs = fnp.einsum("...im,i->...m", b, e) - fnp.einsum("...k,...km->...m", l_row, x)
        l_ii = fnp.einsum("...ik,i,k->...", factor, e, e)
        return x + e[:, None] * (rhs / l_ii[..., None])[..., None, :]

    out: Array = lax.fori_loop(0, n, row, fnp.zeros_like(b))
    return out


def solve_upper_transposed(factor: Array, b: Array) -> Array:
    """``x`` with ``factor^T @ x = b`` for lower-triangular ``factor`` (back substitution)."""
    n = factor.shape[-1]
    idx = fnp.arange(n)

    def row(k: Array, x: Array) -> Array:
        i = n - 1 - k
        e = _one_hot(i, n, factor)
        u_row = fnp.einsum("...ki,i->...k", factor, e) * (idx > i).astype(factor.dtype)  # (L^T)[i, i+1:]
        rhs = fnp.einsum("...im,i->...m", b, e) - fnp.einsum("...k,...km->...m", u_row, x)
        l_ii = fnp.einsum("...ik,i,k->...", factor, e, e)
        return x + e[:, None] * (rhs / l_ii[..., None])[..., None, :]

    out: Array = lax.fori_loop(0, n, row, fnp.zeros_like(b))
    return out


def cho_solve(factor: Array, b: Array) -> Array:
    """``x`` with ``(L L^T) x = b`` given the lower Cholesky factor ``L``."""
    return solve_upper_transposed(factor, solve_lower(factor, b))


def spd_inverse(a: Array) -> Array:
    """The inverse of a symmetric positive definite matrix, through its Cholesky factor."""
    return cho_solve(cholesky(a), fnp.broadcast_to(fnp.eye(a.shape[-1], dtype=a.dtype), a.shape))

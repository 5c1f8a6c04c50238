"""The two factorizations the samplers need — a Householder QR (``orthogonal``) and a
Cholesky factor (``multivariate_normal``) — written in ``fcore.numpy`` operations, since
fcore has no ``lax.linalg`` yet.

JAX calls LAPACK (``geqrf``/``orgqr``, ``potrf``) on the CPU; these compute the same unique
factors (Q with a positive-diagonal R, lower-triangular L) in a different order of
operations, so results agree with JAX's to float rounding, not to the last bit. Both are
unrolled over the (static) matrix size, for small matrices.
"""

from __future__ import annotations

from fcore import numpy as fnp
from fcore.interpreters.array import Array

__all__ = ["householder_qr", "cholesky"]


def householder_qr(a: Array) -> tuple[Array, Array]:
    """``(q, diag(r))`` of the reduced QR factorization of ``a`` (``(..., m, n)``, ``m >= n``):
    LAPACK's reflectors (``dlarfg``: ``beta = -sign(alpha) * |x|``), accumulated as ``orgqr``."""
    m, n = a.shape[-2], a.shape[-1]
    rows = fnp.arange(m)
    reflectors: list[tuple[Array, Array]] = []
    diag = []
    for k in range(n):
        col = a[..., :, k]
        alpha = col[..., k]
        below = fnp.where(rows > k, col, 0)
        xnorm2 = fnp.sum(below * below, axis=-1)
        trivial = xnorm2 == 0  # nothing to annihilate: H = I
        beta = -fnp.copysign(fnp.sqrt(alpha * alpha + xnorm2), alpha)
        tau = fnp.where(trivial, 0, (beta - alpha) / beta)
        scale = fnp.where(trivial, 0, 1 / (alpha - beta))
        v = below * scale[..., None] + (rows == k).astype(a.dtype)
        w = fnp.einsum("...m,...mn->...n", v, a)
        update = tau[..., None, None] * v[..., :, None] * w[..., None, :]
        a = a - fnp.where(fnp.arange(n) >= k, update, 0)
        reflectors.append((v, tau))
        diag.append(fnp.where(trivial, alpha, beta))
    q = fnp.broadcast_to(fnp.eye(m, n, dtype=a.dtype), a.shape)
    for v, tau in reversed(reflectors):
        w = fnp.einsum("...m,...mn->...n", v, q)
        q = q - tau[..., None, None] * v[..., :, None] * w[..., None, :]
    return q, fnp.stack(diag, axis=-1)


def cholesky(a: Array) -> Array:
    """The lower-triangular ``l`` with ``l @ l.T == a`` for symmetric positive definite ``a``
    (``(..., n, n)``; symmetrized first, as JAX's ``cholesky`` does). NaN where ``a`` is not
    positive definite."""
    a = (a + fnp.swapaxes(fnp.conj(a), -1, -2)) / 2
    n = a.shape[-1]
    rows = fnp.arange(n)
    cols: list[Array] = []
    for j in range(n):
        col = a[..., :, j]
        if cols:
            prev = fnp.stack(cols, axis=-1)  # (..., n, j)
            col = col - fnp.einsum("...ik,...k->...i", prev, fnp.conj(prev[..., j, :]))
        d = fnp.sqrt(col[..., j])
        cols.append(fnp.where(rows > j, col / d[..., None], 0) + fnp.where(rows == j, d[..., None], 0))
    return fnp.stack(cols, axis=-1)

"""Matrix functions of ``jax.scipy.linalg`` written as JAX writes them: ``sqrtm`` (Björck and
Hammarling's Schur method) and ``polar`` (by the SVD, or by QDWH: the QR-based dynamically
weighted Halley iteration of Nakatsukasa, Bai and Gygi, with JAX's coefficients and cutoffs)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.lax import linalg as lax_linalg
from fcore.lax._base import ArrayLike
from fcore.numpy import linalg as np_linalg

__all__ = ["polar", "sqrtm"]


# -- sqrtm --------------------------------------------------------------------------------------
def _sqrtm_triu(T: Array) -> Array:
    """The upper triangular square root of the upper triangular ``T``, column by column."""
    diag = fnp.sqrt(fnp.diag(T))
    n = diag.size
    U = fnp.diag(diag)
    zero = fnp.zeros((), T.dtype)

    def i_loop(l: Any, data: tuple[Any, Array]) -> tuple[Any, Array]:
        j, U = data
        i = j - 1 - l
        s = lax.fori_loop(i + 1, j, lambda k, val: val + U[i, k] * U[k, j], zero)
        value = fnp.where(T[i, j] == s, zero, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, U.at[i, j].set(value)

    def j_loop(j: Any, U: Array) -> Array:
        _, U = lax.fori_loop(0, j, i_loop, (j, U))
        return U

    out: Array = lax.fori_loop(0, n, j_loop, U)
    return out


@jit
def _sqrtm(A: Array) -> Array:
    from fcore.scipy.linalg import schur  # the module that re-exports this one

    T, Z = schur(A, output="complex")
    sqrt_T = _sqrtm_triu(T)
    highest = lax.Precision.HIGHEST
    return fnp.matmul(fnp.matmul(Z, sqrt_T, precision=highest), fnp.conj(Z.T), precision=highest)


def sqrtm(A: ArrayLike, blocksize: int = 1) -> Array:
    """The matrix square root of the square ``A`` (``jax.scipy.linalg.sqrtm``), complex, by the
    complex Schur form; ``blocksize`` must be 1 (no blocked algorithm, as in JAX).

    >>> import numpy as np
    >>> import fcore
    >>> a = np.array([[4.0, 1.0], [0.0, 9.0]], np.float32)
    >>> r = fcore.scipy.linalg.sqrtm(a)
    >>> r.dtype, bool(np.allclose(r @ r, a, atol=1e-5))
    (dtype('complex64'), True)
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(fnp.asarray(A))


# -- polar --------------------------------------------------------------------------------------
_CHOLESKY_CUTOFF = 100


def _use_qr(u: Array, params: tuple[Any, Any, Any]) -> Array:
    """One QDWH step by a QR factorization (for the first, badly conditioned iterates)."""
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    M, N = u.shape
    y = fnp.concatenate([sqrt_c * u, fnp.eye(N, dtype=u.dtype)], axis=0)
    q, _ = lax_linalg.qr(y, full_matrices=False)
    q1 = q[:M, :N]
    q2 = q[M:, :].T.conj()
    out: Array = e * u + a_minus_e_by_sqrt_c * (q1 @ q2)
    return out


def _use_cholesky(u: Array, params: tuple[Any, Any, Any]) -> Array:
    """One QDWH step by a Cholesky factorization."""
    a_minus_e, c, e = params
    _, N = u.shape
    x = c * (u.T.conj() @ u) + fnp.eye(N, dtype=u.dtype)
    y = lax_linalg.cholesky(x, symmetrize_input=False)
    z = lax_linalg.triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True).conj()
    z = lax_linalg.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True).T.conj()
    out: Array = e * u + a_minus_e * z
    return out


def _qdwh(x: Array, max_iterations: int, eps: float | None) -> tuple[Array, Array]:
    """The unitary and Hermitian factors of ``x`` (M >= N) by QDWH (JAX's ``qdwh``)."""
    if eps is None:
        eps = float(fnp.finfo(x.dtype).eps)
    one_norm = np_linalg.norm(x, ord=1)
    inf_norm = np_linalg.norm(x, ord=np.inf)
    alpha_inverse = lax.rsqrt(one_norm) * lax.rsqrt(inf_norm)
    alpha_inverse = fnp.where(one_norm == 0, fnp.ones((), alpha_inverse.dtype), alpha_inverse)
    u = x * alpha_inverse.astype(x.dtype)
    l = eps
    tol_l = 10.0 * eps / 2.0
    tol_norm = float(np.cbrt(tol_l))

    qr_coefs: list[tuple[float, float, float]] = []
    chol_coefs: list[tuple[float, float, float]] = []
    k = 0
    while l + tol_l < 1 and k < max_iterations:  # the coefficients depend on eps only: computed here
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_coefs.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            chol_coefs.append((a - e, c, e))

    def run(u: Array, coefs: list[tuple[float, float, float]], step: Any, test: bool) -> tuple[Array, Any]:
        if not coefs:
            return u, fnp.array(True)
        table = fnp.array(coefs).astype(x.dtype)

        def body(i: Any, state: tuple[Array, Any]) -> tuple[Array, Any]:
            u_prev, _ = state
            row = lax.dynamic_index_in_dim(table, i, keepdims=False)
            u_new = step(u_prev, (row[0], row[1], row[2]))
            not_converged = np_linalg.norm(u_new - u_prev) > tol_norm if test else fnp.array(True)
            return u_new, not_converged

        out: tuple[Array, Any] = lax.fori_loop(0, len(coefs), body, (u, fnp.array(True)))
        return out

    u, _ = run(u, qr_coefs, _use_qr, False)
    u, is_not_converged = run(u, chol_coefs, _use_cholesky, True)
    default = (3 - 1 / 3, 3.0, 1 / 3)  # the Cholesky step's coefficients once l is 1

    def cond_fun(state: tuple[Any, Array, Any]) -> Any:
        k, _, not_converged = state
        return fnp.logical_and(not_converged, k < max_iterations)

    def body_fun(state: tuple[Any, Array, Any]) -> tuple[Any, Array, Any]:
        k, u_prev, _ = state
        u_new = _use_cholesky(u_prev, default)
        return k + 1, u_new, np_linalg.norm(u_new - u_prev) > tol_norm

    _, u, _ = lax.while_loop(cond_fun, body_fun, (len(qr_coefs) + len(chol_coefs), u, is_not_converged))
    u = 1.5 * u - 0.5 * u @ (u.T.conj() @ u)
    h = u.T.conj() @ x
    h = (h + h.T.conj()) / 2
    return u, h


@functools.partial(jit, static_argnames=("side", "method", "eps", "max_iterations"))
def _polar_2d(a: Array, side: str, method: str, eps: float | None, max_iterations: int | None) -> tuple[Array, Array]:
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef = _qdwh(a, 10, eps)
        elif m < n and side == "left":
            unitary, posdef = _qdwh(a.T.conj(), 10, eps)
            posdef, unitary = posdef.T.conj(), unitary.T.conj()
        else:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' and m >= n "
                f"side='left', got {a.shape} with {side=}"
            )
    elif method == "svd":
        u_svd, s_svd, vh_svd = lax_linalg.svd(a, full_matrices=False)
        s_svd = s_svd.astype(u_svd.dtype)
        unitary = u_svd @ vh_svd
        if side == "right":
            posdef = (vh_svd.T.conj() * s_svd[None, :]) @ vh_svd
        else:
            posdef = (u_svd * s_svd[None, :]) @ (u_svd.T.conj())
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


def polar(a: ArrayLike, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Array, Array]:
    """The polar decomposition ``a = u p`` (``side="right"``) or ``a = p u`` (``"left"``) with
    ``u`` unitary and ``p`` positive semidefinite (``jax.scipy.linalg.polar``), by QDWH or the
    SVD; batched over leading axes. As in JAX, QDWH runs at most 10 iterations.

    >>> import numpy as np
    >>> import fcore
    >>> a = np.array([[1.0, 2.0, 3.0], [5.0, 4.0, 2.0], [3.0, 2.0, 1.0]], np.float32)
    >>> u, p = fcore.scipy.linalg.polar(a)
    >>> bool(np.allclose(u @ p, a, atol=1e-4)), bool(np.allclose(u.T @ u, np.eye(3), atol=1e-4))
    (True, True)
    """
    arr = fnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    one = functools.partial(_polar_2d, side=side, method=method, eps=eps, max_iterations=max_iterations)
    out: tuple[Array, Array] = fnp.vectorize(one, signature=sig)(arr)
    return out

"""Matrix functions of ``jax.scipy.linalg`` written as JAX writes them: ``sqrtm`` (Björck and
Hammarling's Schur method), ``polar`` (by the SVD, or by QDWH: the QR-based dynamically
weighted Halley iteration of Nakatsukasa, Bai and Gygi, with JAX's coefficients and cutoffs),
``rsf2csf`` and ``funm`` (Golub and Van Loan's algorithm 11.1.1 on the complex Schur form),
``expm_frechet`` (the jvp of ``expm``) and ``solve_sylvester`` (Bartels-Stewart, or
eigendecompositions).

``schur`` and ``expm`` live in ``fcore.scipy.linalg``, which re-exports this module: they are
imported where they are called."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.autodiff import jvp
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.lax import linalg as lax_linalg
from fcore.lax._base import ArrayLike
from fcore.numpy import linalg as np_linalg
from fcore.scipy._util import promote_args_complex, promote_dtypes_inexact

__all__ = ["expm_frechet", "funm", "polar", "rsf2csf", "solve_sylvester", "sqrtm"]


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


# -- rsf2csf and funm ---------------------------------------------------------------------------
@jit
def _rsf2csf_2d(T: Array, Z: Array) -> tuple[Array, Array]:
    T, Z = promote_args_complex("rsf2csf", T, Z)
    eps = float(fnp.finfo(T.dtype).eps)
    N = T.shape[0]
    if N == 1:
        return T, Z

    def update(m: Any, T: Array, Z: Array) -> tuple[Array, Array]:
        """A Givens rotation that zeroes the subdiagonal entry ``T[m, m-1]``."""
        mu = np_linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
        r = np_linalg.norm(fnp.array([mu[0], T[m, m - 1]])).astype(T.dtype)
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = fnp.array([[c.conj(), s], [-s, c]], dtype=T.dtype)
        T_rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        col_mask = fnp.arange(N) >= m - 1
        T_rows_new = fnp.where(~col_mask, T_rows, G @ fnp.where(col_mask, T_rows, 0))
        T = lax.dynamic_update_slice_in_dim(T, T_rows_new, m - 1, axis=0)
        T_cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        row_mask = fnp.arange(N)[:, None] < m + 1
        T_cols_new = fnp.where(~row_mask, T_cols, fnp.where(row_mask, T_cols, 0) @ G.conj().T)
        T = lax.dynamic_update_slice_in_dim(T, T_cols_new, m - 1, axis=1)
        Z_cols = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = lax.dynamic_update_slice_in_dim(Z, Z_cols @ G.conj().T, m - 1, axis=1)
        return T, Z

    def step(i: Any, TZ: tuple[Array, Array]) -> tuple[Array, Array]:
        m = N - i
        T, Z = TZ
        T, Z = lax.cond(fnp.abs(T[m, m - 1]) > eps * (fnp.abs(T[m - 1, m - 1]) + fnp.abs(T[m, m])),
                        update, lambda m, T, Z: (T, Z), m, T, Z)
        return T.at[m, m - 1].set(0.0), Z

    out: tuple[Array, Array] = lax.fori_loop(1, N, step, (T, Z))
    return out


def rsf2csf(T: ArrayLike, Z: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """The complex Schur form ``(T, Z)`` from the real one (``jax.scipy.linalg.rsf2csf``):
    Givens rotations zero the subdiagonal of ``T``'s 2x2 blocks; batched over leading axes.

    >>> import numpy as np
    >>> import fcore
    >>> t, z = fcore.scipy.linalg.schur(np.array([[0.0, -1.0], [1.0, 0.0]], np.float32))
    >>> tc, zc = fcore.scipy.linalg.rsf2csf(t, z)
    >>> tc.dtype, bool(np.allclose(np.asarray(tc)[1, 0], 0))
    (dtype('complex64'), True)
    """
    del check_finite  # unused, as in JAX
    T_arr = fnp.asarray(T)
    Z_arr = fnp.asarray(Z)
    if T_arr.ndim < 2 or T_arr.shape[-1] != T_arr.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z_arr.ndim < 2 or Z_arr.shape[-1] != Z_arr.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T_arr.shape[-1] != Z_arr.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z_arr.shape} vs. T: {T_arr.shape}")
    out: tuple[Array, Array] = fnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T_arr, Z_arr)
    return out


@jit
def _algorithm_11_1_1(F: Array, T: Array) -> tuple[Array, Array]:
    """Golub and Van Loan's algorithm 11.1.1: ``F = f(T)`` above the diagonal, superdiagonal by
    superdiagonal, and the smallest difference of eigenvalues met (for the error estimate)."""
    N = T.shape[0]
    minden = fnp.abs(T[0, 0])

    def inner(i: Any, p_F_minden: tuple[Any, Array, Array]) -> tuple[Any, Array, Array]:
        p, F, minden = p_F_minden
        j = i + p
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        T_row, T_col = T[i - 1], T[:, j - 1]
        F_row, F_col = F[i - 1], F[:, j - 1]
        ind = (fnp.arange(N) >= i) & (fnp.arange(N) < j - 1)
        val = fnp.where(ind, T_row, 0) @ fnp.where(ind, F_col, 0) - fnp.where(ind, F_row, 0) @ fnp.where(ind, T_col, 0)
        s = s + val
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = fnp.where(den != 0, s / den, s)
        F = F.at[i - 1, j - 1].set(s)
        minden = fnp.minimum(minden, fnp.abs(den))
        return p, F, minden

    def outer(p: Any, F_minden: tuple[Array, Array]) -> tuple[Array, Array]:
        _, F, minden = lax.fori_loop(1, N - p + 1, inner, (p, *F_minden))
        return F, minden

    out: tuple[Array, Array] = lax.fori_loop(1, N, outer, (F, minden))
    return out


def funm(A: ArrayLike, func: Callable[[Array], Array], disp: bool = True) -> Array | tuple[Array, Array]:
    """The matrix function ``func(A)`` of the square ``A`` for an elementwise ``func``
    (``jax.scipy.linalg.funm``); with ``disp=False`` also an estimate of the relative error.

    >>> import numpy as np
    >>> import fcore
    >>> a = np.array([[1.0, 2.0], [0.0, 3.0]], np.float32)
    >>> e = fcore.scipy.linalg.funm(a, fcore.numpy.exp)
    >>> bool(np.allclose(e, fcore.scipy.linalg.expm(a), rtol=1e-5))
    True
    """
    from fcore.scipy.linalg import schur  # the module that re-exports this one

    A_arr = fnp.asarray(A)
    if A_arr.ndim != 2 or A_arr.shape[0] != A_arr.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = schur(A_arr)
    T, Z = rsf2csf(T, Z)
    F = fnp.diag(func(fnp.diag(T)))
    F = F.astype(T.dtype.char)
    F, minden = _algorithm_11_1_1(F, T)
    F = Z @ F @ Z.conj().T
    if disp:
        return F
    if F.dtype.char.lower() == "e":  # as JAX (whose float16 branch is overwritten by the next test)
        tol = float(fnp.finfo(np.float16).eps)
    if F.dtype.char.lower() == "f":
        tol = float(fnp.finfo(np.float32).eps)
    else:
        tol = float(fnp.finfo(np.float64).eps)
    minden = fnp.where(minden == 0.0, tol, minden)
    err = fnp.where(fnp.any(fnp.isinf(F)), np.inf,
                    fnp.minimum(1, fnp.maximum(tol, (tol / minden) * np_linalg.norm(fnp.triu(T, 1), 1))))
    return F, err


# -- expm_frechet -------------------------------------------------------------------------------
@functools.partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A: ArrayLike, E: ArrayLike, *, method: str | None = None,
                 compute_expm: bool = True) -> Array | tuple[Array, Array]:
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E`` (with ``expm(A)``
    first unless ``compute_expm=False``): the jvp of ``expm`` (``jax.scipy.linalg.expm_frechet``).

    >>> import numpy as np
    >>> import fcore
    >>> a = np.array([[1.0, 2.0], [0.0, 3.0]], np.float32)
    >>> d = fcore.scipy.linalg.expm_frechet(a, np.eye(2, dtype=np.float32), compute_expm=False)
    >>> bool(np.allclose(d, fcore.scipy.linalg.expm(a), rtol=1e-5))  # A commutes with I
    True
    """
    from fcore.scipy.linalg import expm  # the module that re-exports this one

    del method  # unused, as in JAX
    A_arr = fnp.asarray(A)
    E_arr = fnp.asarray(E)
    if A_arr.ndim < 2 or A_arr.shape[-2] != A_arr.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A_arr.shape}")
    if E_arr.ndim < 2 or E_arr.shape[-2] != E_arr.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E_arr.shape}")
    if A_arr.shape != E_arr.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={A_arr.shape} E.shape={E_arr.shape}")
    bound_fun = functools.partial(expm, upper_triangular=False, max_squarings=16)
    expm_A, expm_frechet_AE = jvp(bound_fun, (A_arr,), (E_arr,))
    if compute_expm:
        return expm_A, expm_frechet_AE
    out: Array = expm_frechet_AE
    return out


# -- solve_sylvester ----------------------------------------------------------------------------
def _solve_sylvester_triangular_scan(R: Array, S: Array, F: Array) -> Array:
    """``R Y + Y S = F`` for upper triangular ``R`` and lower triangular ``S``, element by element
    from the bottom right."""
    m, n = F.shape
    total = m * n
    zero = fnp.zeros((), F.dtype)

    def scan_fn(Y_flat: Array, idx: Any) -> tuple[Array, None]:
        i = idx // n
        j = idx % n
        Y = Y_flat.reshape((m, n))
        row_term = fnp.sum(fnp.where(fnp.arange(m) > i, R[i, :] * Y[:, j], zero))
        col_term = fnp.sum(fnp.where(fnp.arange(n) > j, Y[i, :] * S[:, j], zero))
        val = (F[i, j] - (row_term + col_term)) / (R[i, i] + S[j, j])
        return Y_flat.at[i * n + j].set(val), None

    Y_flat, _ = lax.scan(scan_fn, fnp.zeros((total,), dtype=F.dtype), fnp.arange(total - 1, -1, -1))
    out: Array = Y_flat.reshape((m, n))
    return out


@functools.partial(jit, static_argnames=["method"])
def _solve_sylvester_2d(A: Array, B: Array, C: Array, *, method: str, tol: float) -> Array:
    from fcore.scipy.linalg import inv, schur, solve  # the module that re-exports this one

    m, n = C.shape[-2:]
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(B.conj().T, output="complex")
        F = U.conj().T @ C.astype(R.dtype) @ V
        Y = _solve_sylvester_triangular_scan(R, S.conj().T, F)
        X = U @ Y @ V.conj().T
    elif method == "eigen":
        RA, UA = np_linalg.eig(A)
        RB, UB = np_linalg.eig(B)
        F = solve(UA, C.astype(RA.dtype) @ UB)
        W = RA[:, None] + RB[None, :]
        Y = F / W
        X = UA[:m, :m] @ Y[:m, :n] @ inv(UB)[:n, :n]
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    if not fnp.issubdtype(C.dtype, np.complexfloating):
        X = X.real
    singular = fnp.any(fnp.abs(np_linalg.eigvals(A)[:, None] + np_linalg.eigvals(B)[None, :]) < tol)
    out: Array = lax.cond(singular, lambda: fnp.zeros_like(X) * np.nan, lambda: X)
    return out


def solve_sylvester(A: ArrayLike, B: ArrayLike, C: ArrayLike, *, method: str = "schur", tol: float = 1e-8) -> Array:
    """``X`` with ``A X + X B = C`` (``jax.scipy.linalg.solve_sylvester``) by the Bartels-Stewart
    algorithm (``method="schur"``) or eigendecompositions (``"eigen"``); NaN where the sums of
    eigenvalues of ``A`` and ``B`` come within ``tol`` of 0. Batched over leading axes.

    >>> import numpy as np
    >>> import fcore
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    >>> b = np.array([[5.0, 6.0], [7.0, 8.0]], np.float32)
    >>> x = fcore.scipy.linalg.solve_sylvester(a, b, np.array([[6.0, 8.0], [10.0, 12.0]], np.float32))
    >>> bool(np.allclose(a @ x + x @ b, [[6.0, 8.0], [10.0, 12.0]], atol=1e-3))
    True
    """
    A, B, C = promote_dtypes_inexact(fnp.asarray(A), fnp.asarray(B), fnp.asarray(C))
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\nB: {B.shape}\nC: {C.shape}")
    one = functools.partial(_solve_sylvester_2d, method=method, tol=tol)
    out: Array = fnp.vectorize(one, signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
    return out

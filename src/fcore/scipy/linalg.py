"""``fcore.scipy.linalg``: ``jax.scipy.linalg`` on ``fcore.lax.linalg`` — SciPy's names and
argument conventions (``lower``, ``trans``, ``(c, lower)`` and ``(lu, piv)`` factor pairs) over
the same LAPACK-backed primitives as ``fcore.numpy.linalg``; ``expm`` is JAX's Padé
approximation with scaling and squaring."""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.custom import custom_jvp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.lax import linalg as lax_linalg
from fcore.numpy import linalg as np_linalg
from fcore.numpy._promotion import promote_dtypes
from fcore.scipy._matfuncs import (
    expm_frechet as expm_frechet, funm as funm, polar as polar, rsf2csf as rsf2csf, solve_sylvester as solve_sylvester,
    sqrtm as sqrtm,
)
from fcore.random import PRNGKeyArray
from fcore.scipy._eigh_tridiagonal import eigh_tridiagonal as _eigh_tridiagonal
from fcore.scipy._util import promote_args_inexact, promote_dtypes_inexact
from fcore.scipy.special import comb

__all__ = [
    "solve_triangular", "cho_factor", "cho_solve", "cholesky", "lu", "lu_factor", "lu_solve", "expm", "block_diag",
    "eigh", "inv", "det", "qr", "svd", "solve", "schur", "hessenberg", "toeplitz", "hankel", "circulant", "companion",
    "leslie", "fiedler", "hilbert", "helmert", "hadamard", "dft", "pascal", "convolution_matrix", "polar", "sqrtm",
    "funm", "rsf2csf", "expm_frechet", "solve_sylvester", "invhilbert", "invpascal", "fiedler_companion",
    "qr_multiply", "eigh_tridiagonal",
]


def _mT(x: Array) -> Array:
    return fnp.matrix_transpose(x)


def cholesky(a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The Cholesky factor (upper by default, as SciPy), reading only one triangle of ``a``."""
    (x,) = promote_dtypes_inexact(a)
    l = lax_linalg.cholesky(x if lower else fnp.conj(_mT(x)), symmetrize_input=False)
    return l if lower else fnp.conj(_mT(l))


def cho_factor(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """``(c, lower)``: the Cholesky factor and which triangle it is, for ``cho_solve``."""
    return cholesky(a, lower=lower), lower


def _vector_or_matrix_rhs(name: str, a: Array, b: Array) -> bool:
    """Whether ``b`` holds vectors (SciPy's ``(n,n),(n)->(n)`` signature), warning as JAX does
    for the deprecated batched-vector form."""
    if b.ndim == 1:
        return True
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in the future will be "
            f"treated as a batched 2D solve. Use {name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            FutureWarning, stacklevel=3,
        )
        return True
    return False


def _batched_solve(a: Array, b: Array, vector: bool, solve: Any) -> Array:
    """``solve(a, b)`` on the broadcast batch axes of ``a`` (``[..., n, n]``) and ``b``."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected a (batched) square matrix, got shape {a.shape}")
    bm = b[..., None] if vector else b
    if bm.shape[-2] != a.shape[-1]:
        raise ValueError(f"incompatible shapes for a linear solve: {a.shape} and {b.shape}")
    batch = tuple(np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]))
    out: Array = solve(fnp.broadcast_to(a, batch + a.shape[-2:]), fnp.broadcast_to(bm, batch + bm.shape[-2:]))
    return out[..., 0] if vector else out


def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """Solve ``a x = b`` given ``cho_factor(a)``."""
    c_, lower = c_and_lower
    c, bb = promote_dtypes_inexact(c_, b)
    vector = _vector_or_matrix_rhs("cho_solve", c, bb)

    def solve(cc: Array, rhs: Array) -> Array:
        y = lax_linalg.triangular_solve(cc, rhs, left_side=True, lower=lower, transpose_a=not lower,
                                        conjugate_a=not lower)
        return lax_linalg.triangular_solve(cc, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)

    return _batched_solve(c, bb, vector, solve)


def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Array:
    """Solve ``op(a) x = b`` for triangular ``a`` (``trans``: 0/'N', 1/'T', 2/'C')."""
    if trans == 0 or trans == "N":
        transpose_a, conjugate_a = False, False
    elif trans == 1 or trans == "T":
        transpose_a, conjugate_a = True, False
    elif trans == 2 or trans == "C":
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    x, bb = promote_dtypes_inexact(a, b)
    vector = _vector_or_matrix_rhs("solve_triangular", x, bb)
    return _batched_solve(x, bb, vector, lambda p, q: lax_linalg.triangular_solve(
        p, q, left_side=True, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal))


def lu_factor(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, Array]:
    """``(lu, piv)``: the packed LU factors and LAPACK's (0-based) row swaps."""
    (x,) = promote_dtypes_inexact(a)
    lu_, pivots, _ = lax_linalg.lu(x)
    return lu_, pivots


def lu_solve(lu_and_piv: tuple[ArrayLike, ArrayLike], b: ArrayLike, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """Solve ``op(a) x = b`` given ``lu_factor(a)`` (``trans``: 0, 1 transpose, 2 adjoint)."""
    lu_, pivots = lu_and_piv
    lu_a, bb = promote_dtypes_inexact(lu_, b)
    m = lu_a.shape[-2]
    perm = lax_linalg.lu_pivots_to_permutation(fnp.asarray(pivots), m)
    vector = _vector_or_matrix_rhs("lu_solve", lu_a, bb)
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    batch = tuple(np.broadcast_shapes(lu_a.shape[:-2], perm.shape[:-1], (bb[..., None] if vector else bb).shape[:-2]))
    perm = fnp.broadcast_to(perm, batch + perm.shape[-1:])

    def solve(f: Array, rhs: Array) -> Array:
        if trans == 0:
            x = fnp.take_along_axis(rhs, fnp.broadcast_to(perm[..., :, None], rhs.shape), axis=-2)
            x = lax_linalg.triangular_solve(f, x, left_side=True, lower=True, unit_diagonal=True)
            return lax_linalg.triangular_solve(f, x, left_side=True, lower=False)
        conj = trans == 2
        x = lax_linalg.triangular_solve(f, rhs, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = lax_linalg.triangular_solve(f, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
                                        conjugate_a=conj)
        inverse = fnp.argsort(perm, axis=-1).astype(perm.dtype)
        return fnp.take_along_axis(x, fnp.broadcast_to(inverse[..., :, None], x.shape), axis=-2)

    return _batched_solve(lu_a, bb, vector, solve)


def lu(a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """``(p, l, u)`` with ``a = p @ l @ u`` (``(p @ l, u)`` with ``permute_l``)."""
    (x,) = promote_dtypes_inexact(a)
    lu_, _, permutation = lax_linalg.lu(x)
    dtype = x.dtype
    m, n = x.shape[-2:]
    p = fnp.real((permutation[..., None, :] == fnp.arange(m, dtype=permutation.dtype)[:, None]).astype(dtype))
    k = min(m, n)
    l = fnp.tril(lu_, -1)[..., :, :k] + fnp.eye(m, k, dtype=dtype)
    u = fnp.triu(lu_)[..., :k, :]
    if permute_l:
        return fnp.matmul(p, l), u
    return p, l, u


def qr(a: ArrayLike, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True) -> Any:
    """QR decomposition: ``(q, r)`` (``mode`` ``"full"`` or ``"economic"``) or ``(r,)`` (``"r"``)."""
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (x,) = promote_dtypes_inexact(a)
    q, r, *p = lax_linalg.qr(x, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, *p)
    return (q, r, *p)


def qr_multiply(a: ArrayLike, c: ArrayLike, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False) -> Any:
    """``(Q @ c, R)`` (``mode="left"``) or ``(c @ Q, R)`` (``"right"``) for the reduced QR
    decomposition of ``a``, ``conj(Q)`` with ``conjugate``, and the pivots last with
    ``pivoting``; a 1-D ``c`` is a column (left) or row (right) and comes back 1-D. Q is applied
    with LAPACK's ``ormqr``, as JAX does (with ``pivoting``, fcore multiplies by the pivoted QR's
    reduced Q instead: the same numbers to rounding)."""
    x, y = promote_dtypes_inexact(fnp.asarray(a), fnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = y.ndim == 1
    if onedim:
        y = y[:, None] if mode == "left" else y[None, :]
    m, n = x.shape[-2:]
    k = min(m, n)
    if mode == "left" and y.shape[-2] != k:
        raise ValueError(
            f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(x.shape)} so Q has {k} columns, "
            f"but c has {y.shape[-2]} rows (expected {k})."
        )
    if mode == "right" and y.shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(x.shape)} so Q has {m} rows, "
            f"but c has {y.shape[-1]} columns (expected {m})."
        )
    batch = lax.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = fnp.broadcast_to(x, batch + x.shape[-2:])
    y = fnp.broadcast_to(y, batch + y.shape[-2:])
    if pivoting:  # fcore has no public geqp3: Q from the pivoted QR, then a product
        q, r, p = lax_linalg.qr(x, pivoting=True, full_matrices=False)
        out = fnp.matmul(fnp.conj(q) if conjugate else q, y) if mode == "left" else fnp.matmul(
            y, fnp.conj(q) if conjugate else q)
        return (out.ravel() if onedim else out), r, p
    h, taus = lax_linalg.geqrf(x)
    if m > n and mode == "left":
        y = fnp.concatenate([y, fnp.zeros(y.shape[:-2] + (m - k,) + y.shape[-1:], dtype=y.dtype)], axis=-2)
    if conjugate:  # conj(Q) @ c == (c^T @ Q^H)^T: c and Q change sides
        y = y.swapaxes(-1, -2)
    out = lax_linalg.ormqr(h, taus, y, left=(mode == "left") != conjugate, transpose=conjugate)
    if conjugate:
        out = out.swapaxes(-1, -2)
    if mode == "right":
        out = out[..., :k]
    if onedim:
        out = out.ravel()
    return out, fnp.triu(h[..., :k, :])


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """Singular value decomposition: ``(u, s, vh)``, or ``s`` when not ``compute_uv``."""
    (x,) = promote_dtypes_inexact(a)
    return lax_linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: ArrayLike, b: ArrayLike | None = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True, eigvals: None = None,
         type: int = 1, check_finite: bool = True) -> Any:  # noqa: A002
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix: ``(w, v)``, or ``w``."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (x,) = promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(x, lower=lower)
    return w if eigvals_only else (w, v)


def eigh_tridiagonal(d: ArrayLike, e: ArrayLike, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Array | PRNGKeyArray | None = None) -> Any:
    """Eigenvalues (ascending; those with indices ``select_range[0]..select_range[1]`` when
    ``select="i"``) and, unless ``eigvals_only``, eigenvectors (columns) of the Hermitian
    tridiagonal matrix with diagonal ``d`` and superdiagonal ``e``: bisection and inverse
    iteration from random starts drawn with ``key`` (default ``random.key(42)``), as JAX."""
    out: Any = _eigh_tridiagonal(d, e, eigvals_only=eigvals_only, select=select, select_range=select_range, tol=tol,
                                 key=key)
    return out


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse of square matrices."""
    return np_linalg.inv(a)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant of square matrices."""
    return np_linalg.det(a)


def solve(a: ArrayLike, b: ArrayLike, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Array:
    """Solve ``a x = b``; ``assume_a="pos"`` uses a Cholesky factorization."""
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    x, bb = promote_dtypes_inexact(a, b)
    if not (x.ndim >= 2 and bb.ndim in (x.ndim, x.ndim - 1) and x.shape[-1] == x.shape[-2] == bb.shape[x.ndim - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
                         f"got a={x.shape} and b={bb.shape}")
    out: Array = _solve_pos(x, bb, lower)
    return out


def _solve_pos_fun(a: Array, b: Array, lower: bool) -> Array:
    return cho_solve(cho_factor(a, lower=lower), b)


_solve_pos = custom_jvp(_solve_pos_fun, nondiff_argnums=(2,))


@_solve_pos.defjvp
def _solve_pos_jvp(lower: bool, primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> tuple[Array, Array]:
    """The derivative of a linear solve, ``dx = a^-1 (db - da x)``, reusing the factorization
    (what JAX's ``custom_linear_solve`` gives: the whole of ``da`` counts, not one triangle)."""
    (a, b), (da, db) = primals, tangents
    factors = cho_factor(a, lower=lower)
    x = cho_solve(factors, b)
    dax = fnp.matmul(da, x[..., None])[..., 0] if b.ndim == a.ndim - 1 else fnp.matmul(da, x)
    return x, cho_solve(factors, db - dax)


def block_diag(*arrs: ArrayLike) -> Array:
    """The block-diagonal matrix with the given (at most 2-D) blocks."""
    if len(arrs) == 0:
        arrs = (fnp.zeros((1, 0)),)
    blocks = promote_dtypes(*arrs, name="jax.scipy.linalg.block_diag")
    bad = [i for i, v in enumerate(blocks) if v.ndim > 2]
    if bad:
        raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got {blocks[bad[0]]} "
                         f"at argument {bad[0]}.")
    blocks = [fnp.atleast_2d(v) for v in blocks]
    total_cols = sum(v.shape[1] for v in blocks)
    padded, col = [], 0
    for v in blocks:
        cols = v.shape[1]
        padded.append(lax.pad(v, np.zeros((), v.dtype), ((0, 0, 0), (col, total_cols - cols - col, 0))))
        col += cols
    return fnp.concatenate(padded, axis=0)


# -- expm: Padé approximation with scaling and squaring (Higham 2005, as JAX) -------------------
def _dot(a: Array, b: Array) -> Array:
    return fnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pade_terms(A: Array, b: tuple[float, ...]) -> tuple[Array, Array]:
    """JAX's exact term order for orders 3..9 (so rounding matches)."""
    M, N = A.shape
    ident = fnp.eye(M, N, dtype=A.dtype)
    A2 = _dot(A, A)
    if len(b) == 4:
        return _dot(A, b[3] * A2 + b[1] * ident), b[2] * A2 + b[0] * ident
    A4 = _dot(A2, A2)
    if len(b) == 6:
        return _dot(A, b[5] * A4 + b[3] * A2 + b[1] * ident), b[4] * A4 + b[2] * A2 + b[0] * ident
    A6 = _dot(A4, A2)
    if len(b) == 8:
        return (_dot(A, b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident),
                b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)
    A8 = _dot(A6, A2)
    return (_dot(A, b[9] * A8 + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident),
            b[8] * A8 + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)


_B3 = (120.0, 60.0, 12.0, 1.0)
_B5 = (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0)
_B7 = (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0)
_B9 = (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0, 1.0)
_B13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
        10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def _pade13(A: Array) -> tuple[Array, Array]:
    b = _B13
    M, N = A.shape
    ident = fnp.eye(M, N, dtype=A.dtype)
    A2 = _dot(A, A)
    A4 = _dot(A2, A2)
    A6 = _dot(A4, A2)
    U = _dot(A, _dot(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = _dot(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def _calc_P_Q(A: Array) -> tuple[Array, Array, Array]:
    A_L1 = np_linalg.norm(A, 1)
    if A.dtype in (np.float64, np.complex128):
        maxnorm = 5.371920351148152
        conds = fnp.asarray([0.01495585217958292, 0.253939833006323, 0.9504178996162932, 2.097847961257068],
                            dtype=A_L1.dtype)
        branches = [lambda x: _pade_terms(x, _B3), lambda x: _pade_terms(x, _B5), lambda x: _pade_terms(x, _B7),
                    lambda x: _pade_terms(x, _B9), _pade13]
    elif A.dtype in (np.float32, np.complex64):
        maxnorm = 3.92572478313866
        conds = fnp.asarray([0.4258730016922831, 1.880152677804762], dtype=A_L1.dtype)
        branches = [lambda x: _pade_terms(x, _B3), lambda x: _pade_terms(x, _B5), lambda x: _pade_terms(x, _B7)]
    else:
        raise TypeError(f"A.dtype={A.dtype} is not supported.")
    n_squarings = fnp.maximum(0, fnp.floor(fnp.log2(A_L1 / maxnorm)))
    A = A / (2 ** n_squarings).astype(A.dtype)
    idx = fnp.digitize(A_L1, conds)
    U, V = lax.switch(idx, branches, A)
    return U + V, -U + V, n_squarings


def _expm2(A: Array, upper_triangular: bool, max_squarings: int) -> Array:
    P, Q, n_squarings = _calc_P_Q(A)

    def nan(args: tuple[Array, Array, Array]) -> Array:
        return fnp.full_like(args[0], np.nan)

    def compute(args: tuple[Array, Array, Array]) -> Array:
        _, p, q = args
        R = solve_triangular(q, p) if upper_triangular else np_linalg.solve(q, p)

        def step(c: Array, i: Array) -> tuple[Array, None]:
            return lax.cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, c), None

        res, _ = lax.scan(step, R, fnp.arange(max_squarings, dtype=n_squarings.dtype))
        out: Array = res
        return out

    out: Array = lax.cond(n_squarings > max_squarings, nan, compute, (A, P, Q))
    return out


def expm(A: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """The matrix exponential (Padé approximation with scaling and squaring); batched."""
    (x,) = promote_dtypes_inexact(A)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={x.shape!r}.")
    if x.ndim > 2:
        batched: Array = fnp.vectorize(lambda m: _expm2(m, upper_triangular, max_squarings),
                                       signature="(n,n)->(n,n)")(x)
        return batched
    return _expm2(x, upper_triangular, max_squarings)


def schur(a: ArrayLike, output: str = "real") -> tuple[Array, Array]:
    """Schur decomposition ``a = z t z^H`` (``output`` ``"real"`` or ``"complex"``)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output}.")
    (x,) = promote_dtypes_inexact(a)
    if output == "complex" and not fnp.iscomplexobj(x):
        x = x.astype(np.complex128 if x.dtype == np.float64 else np.complex64)
    t, z = lax_linalg.schur(x)
    return t, z


# -- special matrices and hessenberg (as jax.scipy.linalg builds them) ---------------------------
def hessenberg(a: ArrayLike, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Upper Hessenberg form ``h`` of square matrices (and ``q`` with ``a = q h q^H``)."""
    x = fnp.asarray(a)
    n = x.shape[-1]
    if n == 0:
        return (fnp.zeros_like(x), fnp.zeros_like(x)) if calc_q else fnp.zeros_like(x)
    a_out, taus = lax_linalg.hessenberg(x)
    h = fnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    nb = q.ndim - 2
    q = lax.pad(q, np.zeros((), q.dtype), [(0, 0, 0)] * nb + [(1, 0, 0), (1, 0, 0)])
    corner = (fnp.arange(n)[:, None] == 0) & (fnp.arange(n)[None, :] == 0)
    return h, fnp.where(corner, fnp.ones((), q.dtype), q)


def _toeplitz2(c: Array, r: Array) -> Array:
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return fnp.empty((m, n), dtype=fnp.promote_types(c.dtype, r.dtype))
    elems = fnp.concatenate((c[::-1], r[1:]))
    return elems[(m - 1) - fnp.arange(m)[:, None] + fnp.arange(n)[None, :]]


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``conj(c)`` by default)."""
    cc = fnp.asarray(c)
    rr = fnp.conj(cc) if r is None else fnp.asarray(r)
    out: Array = fnp.vectorize(_toeplitz2, signature="(m),(n)->(m,n)")(fnp.atleast_1d(cc), fnp.atleast_1d(rr))
    return out


def _hankel2(c: Array, r: Array) -> Array:
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return fnp.empty((m, n), dtype=fnp.result_type(c, r))
    v = fnp.concatenate((c, r[1:]))
    return v[fnp.arange(m)[:, None] + fnp.arange(n)[None, :]]


def hankel(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Hankel matrix with first column ``c`` and last row ``r`` (zeros by default)."""
    cc = fnp.asarray(c)
    rr = fnp.zeros_like(cc) if r is None else fnp.asarray(r)
    if cc.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if rr.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    out: Array = fnp.vectorize(_hankel2, signature="(m),(n)->(m,n)")(cc, rr)
    return out


def circulant(c: ArrayLike) -> Array:
    """The circulant matrix with first column ``c``."""
    def one(v: Array) -> Array:
        n = v.shape[0]
        return v[(fnp.arange(n)[:, None] - fnp.arange(n)[None, :]) % n]

    out: Array = fnp.vectorize(one, signature="(n)->(n,n)")(fnp.atleast_1d(fnp.asarray(c)))
    return out


def companion(a: ArrayLike) -> Array:
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree first)."""
    (x,) = promote_dtypes_inexact(a)
    x = fnp.atleast_1d(x)
    if x.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {x.shape}.")

    def one(v: Array) -> Array:
        first_row = -v[1:] / v[0]
        m = v.shape[0] - 1
        out: Array = fnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)
        return out

    out: Array = fnp.vectorize(one, signature="(n)->(m,m)")(x)
    return out


def leslie(f: ArrayLike, s: ArrayLike) -> Array:
    """The Leslie matrix of fecundities ``f`` and survival rates ``s``."""
    f_arr, s_arr = fnp.atleast_1d(fnp.asarray(f)), fnp.atleast_1d(fnp.asarray(s))
    if f_arr.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must be one less than the "
                         f"length of f; got f shape {f_arr.shape} and s shape {s_arr.shape}.")

    def one(fv: Array, sv: Array) -> Array:
        fv, sv = promote_dtypes(fv, sv, name="leslie")
        out: Array = fnp.diag(sv, k=-1).at[0].set(fv)
        return out

    out: Array = fnp.vectorize(one, signature="(n),(m)->(n,n)")(f_arr, s_arr)
    return out


def fiedler(a: ArrayLike) -> Array:
    """The symmetric Fiedler matrix ``|a_i - a_j|``."""
    arr = fnp.atleast_1d(fnp.asarray(a))
    return fnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a: ArrayLike) -> Array:
    """The pentadiagonal Fiedler companion matrix of the polynomial with coefficients ``a``
    (highest degree first, along the last axis): its eigenvalues are the roots."""
    (x,) = promote_args_inexact("fiedler_companion", a)
    x = fnp.atleast_1d(x)
    if x.shape[-1] == 0:
        raise ValueError(
            f"fiedler_companion requires the last axis of 'a' to have nonzero length, but got an array of shape {x.shape}."
        )
    out: Array = fnp.vectorize(_fiedler_companion, signature="(n)->(m,m)")(x)
    return out


def _fiedler_companion(a: Array) -> Array:
    n = a.shape[0] - 1
    if n == 0:
        return fnp.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = fnp.arange(n)[:, None]
    j = fnp.arange(n)[None, :]
    super_val = -a[fnp.minimum(i + 2, n)]
    sub_val = -a[fnp.minimum(i + 1, n)]
    i_even, i_odd = i % 2 == 0, i % 2 == 1
    one, zero = fnp.array(1, dtype=a.dtype), fnp.array(0, dtype=a.dtype)
    conditions = [
        (i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & i_even, (j == i + 2) & i_even,
        (j == i - 1) & i_even & (i >= 2), (j == i - 2) & i_odd & (i >= 3),
    ]
    return fnp.select(conditions, [-a[1], one, super_val, one, sub_val, one], default=zero)


def hilbert(n: int) -> Array:
    """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)``."""
    a = lax.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def invhilbert(n: int) -> Array:
    """The inverse of the ``n x n`` Hilbert matrix, from its closed form in binomial
    coefficients (in floating point: no ``exact=True``)."""
    a = fnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    s = i + j
    return (-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1) * comb(s, i) ** 2


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix of order ``n`` (the first row omitted unless ``full``)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = fnp.arange(n - 1)[:, None]
    j = fnp.arange(n)[None, :]
    k = i + 1
    k_f = k.astype(dtypes.default_float_dtype())
    denom = fnp.sqrt(k_f * (k_f + 1))
    H = fnp.where(j <= i, 1.0 / denom, fnp.where(j == k, -k_f / denom, fnp.zeros_like(denom)))
    if full:
        H = fnp.concatenate([fnp.full((1, n), 1.0 / fnp.sqrt(n), dtype=H.dtype), H], axis=0)
    return H


def hadamard(n: int, dtype: Any = int) -> Array:
    """The ``n x n`` Hadamard matrix (Sylvester's construction; ``n`` a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    H = fnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        H = fnp.block([[H, H], [H, -H]])
    return H


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The ``n``-point discrete Fourier transform matrix (scaled by ``1/sqrt(n)`` or ``1/n``)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dt = dtypes.default_complex_dtype() if dtype is None else dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    if not dtypes.is_complex(dt):
        raise ValueError(f"dtype must be a complex floating-point type; got {dt}.")
    a = fnp.arange(n, dtype=dt)
    omegas = fnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / fnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas


def _binom(n: Array, k: Array) -> Array:
    return fnp.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def pascal(n: int, kind: str | None = None) -> Array:
    """The Pascal matrix (``"symmetric"``, ``"lower"`` or ``"upper"``)."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be on of: {valid}; got {kind}")
    a = fnp.arange(n, dtype=np.float32)
    L_n = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return L_n
    if kind == "upper":
        return L_n.T
    return fnp.dot(L_n, L_n.T)


def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of the Pascal matrix (``"symmetric"``, ``"lower"`` or ``"upper"``):
    ``(-1)**(i - j) * binom(i, j)`` below the diagonal, transposed for upper, ``U^-1 L^-1``."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be one of: {valid}; got {kind}")
    a = fnp.arange(n, dtype=dtypes.default_float_dtype())
    i, j = a[:, None], a[None, :]
    l_inv = (-1.0) ** (i - j) * _binom(i, j)
    if kind == "lower":
        return l_inv
    if kind == "upper":
        return l_inv.T
    return fnp.dot(l_inv.T, l_inv)


def convolution_matrix(a: ArrayLike, n: int, mode: str = "full") -> Array:
    """The Toeplitz matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for length-``n`` ``v``."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a_arr = fnp.asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (a_arr.ndim - 1) + [(0, n - 1)]
    az = fnp.pad(a_arr, widths)
    raz = fnp.pad(fnp.flip(a_arr, axis=-1), widths)
    L = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb:L - te], raz[..., L - n - tb:L - tb])

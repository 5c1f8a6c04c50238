"""``fcore.numpy.linalg``: ``jnp.linalg`` — norms and products, and the factorizations, solves,
determinants and inverses built on ``fcore.lax.linalg`` (as ``jnp.linalg`` builds them on
``jax.lax.linalg``, so results and dtypes are JAX's)."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.custom import custom_jvp
from fcore.lax import linalg as lax_linalg
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy import reductions, ufuncs_binary, ufuncs_unary
from fcore.numpy._promotion import asarray, convert, normalize_axis, operand, promote_dtypes, to_inexact
from fcore.numpy.products import matmul as matmul, tensordot as tensordot, vecdot as vecdot
from fcore.numpy.shape_ops import matrix_transpose as matrix_transpose

__all__ = [
    "norm", "vector_norm", "matrix_norm", "matmul", "tensordot", "vecdot", "matrix_transpose", "outer", "trace",
    "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "inv", "solve", "det", "slogdet", "pinv", "lstsq",
    "matrix_rank", "matrix_power", "cond", "multi_dot", "tensorsolve", "tensorinv", "cross", "eig", "eigvals",
    "diagonal", "EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult",
]


def _inexact(x: ArrayLike) -> Array:
    dt, weak = operand(x, "norm")
    return convert(x, to_inexact(dt), weak)


def _abs2(x: Array) -> Array:
    if dtypes.is_complex(x.dtype):
        return lax.real(lax.mul(x, lax.conj(x)))
    return lax.mul(x, x)


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A002
    """Vector and matrix norms (``jnp.linalg.norm``), without the SVD-based ones (2, -2, 'nuc' on matrices)."""
    a = _inexact(x)
    if axis is None:
        if ord is None:
            return lax.sqrt(reductions.sum(_abs2(a), keepdims=keepdims))
        axes: tuple[int, ...] = tuple(range(a.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(i, a.ndim) for i in axis)
    else:
        axes = (normalize_axis(operator.index(axis), a.ndim),)
    if len(axes) == 1:
        return vector_norm(a, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        return matrix_norm(a, axes=axes, keepdims=keepdims, ord="fro" if ord is None else ord)
    raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")


def vector_norm(x: ArrayLike, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:  # noqa: A002
    a = _inexact(x)
    if ord is None or ord == 2:
        return lax.sqrt(reductions.sum(_abs2(a), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return reductions.max(ufuncs_unary.abs(a), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(ufuncs_unary.abs(a), axis=axis, keepdims=keepdims)
    if ord == 0:
        nz = lax.ne(a, convert(0, a.dtype))
        return reductions.sum(nz, axis=axis, dtype=lax.real(a).dtype if dtypes.is_complex(a.dtype) else a.dtype, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs_unary.abs(a), axis=axis, keepdims=keepdims)
    absx = ufuncs_unary.abs(a)
    p = float(ord)
    return ufuncs_binary.power(reductions.sum(ufuncs_binary.power(absx, p), axis=axis, keepdims=keepdims), 1.0 / p)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro", axes: tuple[int, int] = (-2, -1)) -> Array:  # noqa: A002
    a = _inexact(x)
    r, c = (normalize_axis(axes[0], a.ndim), normalize_axis(axes[1], a.ndim))
    if ord in ("fro", "f", None):
        return lax.sqrt(reductions.sum(_abs2(a), axis=(r, c), keepdims=keepdims))
    absx = ufuncs_unary.abs(a)
    if ord in (1, -1):
        s = reductions.sum(absx, axis=r, keepdims=True)
        f = reductions.max if ord == 1 else reductions.min
        out = f(s, axis=c, keepdims=True)
    elif ord in (np.inf, -np.inf):
        s = reductions.sum(absx, axis=c, keepdims=True)
        f = reductions.max if ord == np.inf else reductions.min
        out = f(s, axis=r, keepdims=True)
    elif ord in ("nuc", 2, -2):
        sv = svd(fnp.moveaxis(a, (r, c), (-2, -1)), compute_uv=False)
        y = reductions.max(sv, axis=-1) if ord == 2 else reductions.min(sv, axis=-1) if ord == -2 else reductions.sum(sv, axis=-1)
        return fnp.expand_dims(y, (r, c)) if keepdims else y
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    return out if keepdims else lax.squeeze(out, tuple(sorted((r, c))))


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    from fcore.numpy.products import outer as _outer

    return _outer(x1, x2)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    from fcore.numpy.creation import trace as _trace

    return _trace(x, offset, -2, -1, dtype)


# -- factorizations and what is built on them ---------------------------------------------------
class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _inexact1(a: ArrayLike, name: str) -> Array:
    (out,) = promote_dtypes(asarray(a, name), name=name, inexact=True)
    return out


def _H(x: Array) -> Array:
    return fnp.conj(fnp.matrix_transpose(x))


def _main_diagonal(x: Array) -> Array:
    """The diagonal of square matrices as a strided slice of the flattened matrix (O(n), where
    ``fnp.diagonal``'s masked reduction is O(n^2))."""
    n = x.shape[-1]
    return x.reshape(*x.shape[:-2], n * n)[..., :: n + 1]


def cholesky(a: ArrayLike, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of Hermitian positive definite matrices (lower, or upper with
    ``upper``); NaNs where the factorization fails."""
    x = _inexact1(a, "jnp.linalg.cholesky")
    L = lax_linalg.cholesky(x, symmetrize_input=symmetrize_input)
    return fnp.conj(fnp.matrix_transpose(L)) if upper else L


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Singular value decomposition: ``SVDResult(U, S, Vh)``, or ``S`` when not ``compute_uv``."""
    x = _inexact1(a, "jnp.linalg.svd")
    if hermitian:
        w, v = lax_linalg.eigh(x, subset_by_index=subset_by_index)
        s = lax.abs(v)
        if compute_uv:
            sign = lax.sign(v)
            idxs = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
            s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
            s, idxs, sign = (lax.rev(t, (s.ndim - 1,)) for t in (s, idxs, sign))
            u = fnp.take_along_axis(w, idxs[..., None, :], axis=-1)
            return SVDResult(u, s, _H(u * sign[..., None, :].astype(u.dtype)))
        return lax.rev(lax.sort(s, dimension=-1), (s.ndim - 1,))
    if compute_uv:
        u, s, vh = lax_linalg.svd(x, full_matrices=full_matrices, compute_uv=True, subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    out: Array = lax_linalg.svd(x, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index)
    return out


def svdvals(x: ArrayLike, /) -> Array:
    """The singular values, descending."""
    out: Array = svd(x, compute_uv=False)
    return out


def matrix_power(a: ArrayLike, n: int) -> Array:
    """``a`` raised to the integer power ``n`` by repeated squaring (``inv`` first for ``n < 0``)."""
    arr = asarray(a, "jnp.linalg.matrix_power")
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return fnp.broadcast_to(fnp.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = abs(n)
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return (arr @ arr) @ arr
    z: Array | None = None
    result: Array | None = None
    while n > 0:
        z = arr if z is None else (z @ z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else (result @ z)
    assert result is not None
    return result


def matrix_rank(M: ArrayLike, rtol: ArrayLike | None = None, *, hermitian: bool = False,
                tol: ArrayLike | None = None) -> Array:
    """The number of singular values above ``rtol`` times the largest (default: ``eps * max(m, n)``)."""
    x = asarray(M, "jnp.linalg.matrix_rank")
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    x = _inexact1(x, "jnp.linalg.matrix_rank")
    if x.ndim < 2:
        return fnp.any(x != 0).astype(np.int32)
    S: Array = svd(x, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rt = S.max(-1) * fnp.asarray(max(x.shape[-2:]), dtype=S.dtype) * fnp.finfo(S.dtype).eps
    else:
        rt = fnp.asarray(rtol)
    rt = fnp.expand_dims(rt, rt.ndim)
    return reductions.sum(S > rt, axis=-1)


def _slogdet_small(a: Array) -> tuple[Array, Array]:
    if a.shape[-1] == 1:
        d = a[..., 0, 0]
    else:
        d = a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    return fnp.sign(d), fnp.real(fnp.log(fnp.abs(d)))


def _slogdet_lu_fun(a: Array) -> tuple[Array, Array]:
    dtype = a.dtype
    lu, pivot, _ = lax_linalg.lu(a)
    diag = _main_diagonal(lu)
    is_zero = fnp.any(diag == fnp.asarray(0, dtype=dtype), axis=-1)
    iota = lax.expand_dims(fnp.arange(a.shape[-1], dtype=pivot.dtype), tuple(range(pivot.ndim - 1)))
    parity = fnp.count_nonzero(pivot != iota, axis=-1)
    if fnp.iscomplexobj(a):
        sign = fnp.prod(diag / fnp.abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = fnp.asarray(1, dtype=dtype)
        parity = parity + fnp.count_nonzero(diag < 0, axis=-1)
    sign = fnp.where(is_zero, fnp.asarray(0, dtype=dtype), sign * fnp.asarray(-2 * (parity % 2) + 1, dtype=dtype))
    logdet = fnp.where(is_zero, fnp.asarray(-np.inf, dtype=dtype), fnp.sum(fnp.log(fnp.abs(diag)).astype(dtype), axis=-1))
    return sign, fnp.real(logdet)


_slogdet_lu = custom_jvp(_slogdet_lu_fun)


@_slogdet_lu.defjvp
def _slogdet_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
    """``d log|det x| = tr(x^-1 dx)`` (its imaginary part turns the sign of a complex det)."""
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_lu(x)
    ans_dot = fnp.trace(solve(x, g), axis1=-1, axis2=-2)
    if fnp.iscomplexobj(x):
        sign_dot = (ans_dot - fnp.real(ans_dot).astype(ans_dot.dtype)) * sign
        ans_dot = fnp.real(ans_dot)
    else:
        sign_dot = fnp.zeros_like(sign)
    return (sign, ans), (sign_dot, ans_dot)


def _slogdet_qr_fun(a: Array) -> tuple[Array, Array]:
    if fnp.iscomplexobj(a):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = a.shape[-1]
    r, taus = lax_linalg.geqrf(a)
    diag = _main_diagonal(r)
    log_abs_det = fnp.sum(fnp.log(fnp.abs(diag)), axis=-1)
    sign_diag = fnp.prod(fnp.sign(diag), axis=-1)
    sign_taus = fnp.prod(fnp.where(taus[..., : (n - 1)] != 0, -1, 1), axis=-1).astype(sign_diag.dtype)
    return sign_diag * sign_taus, log_abs_det


_slogdet_qr = custom_jvp(_slogdet_qr_fun)
_slogdet_qr.defjvp(_slogdet_jvp)


def slogdet(a: ArrayLike, *, method: str | None = None) -> SlogdetResult:
    """Sign and log of the absolute value of the determinant (through LU)."""
    x = _inexact1(a, "jnp.linalg.slogdet")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {x.shape}")
    if method is None or method == "lu":
        if x.shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(x))
        return SlogdetResult(*_slogdet_lu(x))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(x))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'.")


def _cofactor_solve(a: Array, b: Array) -> tuple[Array, Array]:
    """``(det(a), det(a) a^-1 b)``, finite for singular ``a`` (JAX's ``_cofactor_solve``)."""
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch_dims = tuple(np.broadcast_shapes(lu.shape[:-2], b.shape[:-2]))
    x = fnp.broadcast_to(b, batch_dims + b.shape[-2:])
    lu = fnp.broadcast_to(lu, batch_dims + lu.shape[-2:])
    diag = _main_diagonal(lu)
    iota = lax.expand_dims(fnp.arange(n, dtype=pivots.dtype), tuple(range(pivots.ndim - 1)))
    parity = fnp.count_nonzero(pivots != iota, axis=-1)
    sign = fnp.asarray(-2 * (parity % 2) + 1, dtype=dtype)
    partial_det = fnp.cumprod(diag, axis=-1) * sign[..., None]
    last = (fnp.arange(n) == n - 1)[:, None] & (fnp.arange(n) == n - 1)[None, :]
    lu = fnp.where(last, (1.0 / partial_det[..., -2])[..., None, None], lu)
    permutation = fnp.broadcast_to(permutation, (*batch_dims, n))
    d = fnp.ones(x.shape[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    bad = fnp.any(fnp.isnan(d) | fnp.isinf(d), axis=-1)[..., None, None]
    x = fnp.where(bad, fnp.zeros_like(x), x)
    x = fnp.take_along_axis(x, fnp.broadcast_to(permutation[..., :, None], x.shape), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = fnp.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = fnp.where(bad, fnp.zeros_like(x), x)
    return partial_det[..., -1], x


def _det_fun(a: Array) -> Array:
    sign, logdet = slogdet(a)
    return sign * fnp.exp(logdet).astype(sign.dtype)


_det = custom_jvp(_det_fun)


@_det.defjvp
def _det_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, fnp.trace(z, axis1=-1, axis2=-2)


def det(a: ArrayLike) -> Array:
    """The determinant (explicit formulas for 2x2 and 3x3, LU otherwise)."""
    x = _inexact1(a, "jnp.linalg.det")
    if x.ndim >= 2 and x.shape[-2:] == (2, 2):
        return x[..., 0, 0] * x[..., 1, 1] - x[..., 0, 1] * x[..., 1, 0]
    if x.ndim >= 2 and x.shape[-2:] == (3, 3):
        return (x[..., 0, 0] * x[..., 1, 1] * x[..., 2, 2] + x[..., 0, 1] * x[..., 1, 2] * x[..., 2, 0]
                + x[..., 0, 2] * x[..., 1, 0] * x[..., 2, 1] - x[..., 0, 2] * x[..., 1, 1] * x[..., 2, 0]
                - x[..., 0, 0] * x[..., 1, 2] * x[..., 2, 1] - x[..., 0, 1] * x[..., 1, 0] * x[..., 2, 2])
    if x.ndim >= 2 and x.shape[-1] == x.shape[-2]:
        out: Array = _det(x)
        return out
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {x.shape}")


def eig(a: ArrayLike) -> EigResult:
    """Eigenvalues and right eigenvectors of general square matrices (complex; CPU)."""
    x = _inexact1(a, "jnp.linalg.eig")
    w, v = lax_linalg.eig(x, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: ArrayLike) -> Array:
    """Eigenvalues of general square matrices (complex; CPU)."""
    x = _inexact1(a, "jnp.linalg.eigvals")
    return lax_linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eigh(a: ArrayLike, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    x = _inexact1(a, "jnp.linalg.eigh")
    v, w = lax_linalg.eigh(x, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: ArrayLike, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:  # noqa: N803
    """Eigenvalues (ascending) of Hermitian matrices."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def _pinv_fun(a: Array, rtol: Any, hermitian: bool) -> Array:
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return fnp.empty(a.shape[:-2] + (n, m), a.dtype)
    arr = fnp.conj(a)
    if rtol is None:
        rtol = 10.0 * max(m, n) * fnp.asarray(fnp.finfo(arr.dtype).eps)
    rt = fnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rt = lax.expand_dims(rt[..., None], tuple(range(s.ndim - rt.ndim - 1)))
    cutoff = rt * s[..., 0:1]
    s = fnp.where(s > cutoff, s, np.inf).astype(u.dtype)
    res = fnp.matmul(fnp.matrix_transpose(vh), fnp.divide(fnp.matrix_transpose(u), s[..., None]))
    return res.astype(arr.dtype)


_pinv = custom_jvp(_pinv_fun, nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol: Any, hermitian: bool, primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    """Golub and Pereyra's derivative of the pseudo-inverse (JAX's rule)."""
    (a,), (a_dot,) = primals, tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a = (a + _H(a)) / 2
        a_dot = (a_dot + _H(a_dot)) / 2
    m, n = a.shape[-2:]
    if m >= n:
        s = (p @ _H(p)) @ _H(a_dot)
        t = (_H(a_dot) @ _H(p)) @ p
        p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (_H(p) @ _H(a_dot))
        t = _H(a_dot) @ (_H(p) @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, p_dot


def pinv(a: ArrayLike, rtol: ArrayLike | None = None, hermitian: bool = False, *,
         rcond: ArrayLike | None = None) -> Array:
    """Moore–Penrose pseudo-inverse through the SVD (singular values below ``rtol`` times the
    largest are dropped)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    x = _inexact1(a, "jnp.linalg.pinv")
    out: Array = _pinv(x, rtol, hermitian)
    return out


def _lu_solve(lu: Array, permutation: Array, b: Array) -> Array:
    """``a^-1 b`` for ``b`` of shape ``[..., m, k]`` from ``a``'s LU factors (same batch shape)."""
    x = fnp.take_along_axis(b, fnp.broadcast_to(permutation[..., :, None], b.shape), axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """Solve ``a x = b`` (``b``: ``[..., m]`` or ``[..., m, k]``; batch axes broadcast) by LU
    with partial pivoting. A singular ``a`` gives infs/NaNs, as in JAX."""
    x, y = promote_dtypes(asarray(a, "jnp.linalg.solve"), asarray(b, "jnp.linalg.solve", 1),
                          name="jnp.linalg.solve", inexact=True)
    if x.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={x.shape}")
    if y.ndim > 1 and x.ndim == y.ndim + 1 and x.shape[-1] == y.shape[-1] and x.shape[-1] != y.shape[-2]:
        raise ValueError(f"Invalid shapes for solve: {x.shape}, {y.shape}. Prior to JAX v0.5.0, this would have been "
                         "treated as a batched 1-dimensional solve. To recover this behavior, use "
                         "solve(a, b[..., None]).squeeze(-1).")
    vector = y.ndim == 1
    m = x.shape[-1]
    if x.shape[-2] != m or y.shape[-1 if vector else -2] != m:
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
                         f"got a={x.shape} and b={y.shape}")
    yy = y[:, None] if vector else y
    batch = tuple(np.broadcast_shapes(x.shape[:-2], yy.shape[:-2]))
    x = fnp.broadcast_to(x, batch + x.shape[-2:])
    yy = fnp.broadcast_to(yy, batch + yy.shape[-2:])
    lu, _, permutation = lax_linalg.lu(x)
    out = _lu_solve(lu, permutation, yy)
    return out[..., 0] if vector else out


def inv(a: ArrayLike) -> Array:
    """The inverse of square matrices (``solve`` against the identity)."""
    arr = asarray(a, "jnp.linalg.inv")
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    return solve(arr, fnp.broadcast_to(fnp.eye(arr.shape[-1], dtype=arr.dtype), arr.shape))


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """Least-squares solution through the SVD: ``(x, residuals, rank, singular values)``."""
    x, y = promote_dtypes(asarray(a, "jnp.linalg.lstsq"), asarray(b, "jnp.linalg.lstsq", 1),
                          name="jnp.linalg.lstsq", inexact=True)
    if x.shape[0] != y.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = y.ndim
    if b_orig_ndim == 1:
        y = y[:, None]
    if x.ndim != 2:
        raise TypeError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    if y.ndim != 2:
        raise TypeError(f"{y.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = x.shape
    dtype = x.dtype
    if x.size == 0:
        s = fnp.empty(0, dtype=dtype)
        rank = fnp.asarray(0, dtype=int)
        sol = fnp.zeros((n, *y.shape[1:]), dtype=dtype)
    else:
        rc: Any = float(fnp.finfo(dtype).eps) * max(n, m) if rcond is None else fnp.where(
            fnp.asarray(rcond) < 0, fnp.finfo(dtype).eps, rcond)
        u, s, vt = svd(x, full_matrices=False)
        mask = (s > 0) & (s >= fnp.asarray(rc, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = fnp.where(mask, s, 1).astype(dtype)
        s_inv = fnp.where(mask, 1 / safe_s, 0)[:, None]
        uTb = fnp.matmul(u.conj().T, y)
        sol = fnp.matmul(vt.conj().T, s_inv * uTb)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = fnp.asarray([])
    else:
        resid = norm(y - fnp.matmul(x, sol), axis=0) ** 2
    if b_orig_ndim == 1:
        sol = sol.ravel()
    return sol, resid, rank, s


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Cross product of 3-vectors along ``axis``."""
    a, b = asarray(x1, "jnp.linalg.cross"), asarray(x2, "jnp.linalg.cross", 1)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, "
                         f"but they have x1.shape[axis]={a.shape[axis]} and x2.shape[axis]={b.shape[axis]}")
    return fnp.cross(a, b, axis=axis)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The ``offset`` diagonal of the trailing two axes."""
    return fnp.diagonal(asarray(x, "jnp.linalg.diagonal"), offset=offset, axis1=-2, axis2=-1)


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """The inverse of ``a`` seen as a linear map from its trailing axes to its first ``ind`` axes."""
    arr = asarray(a, "tensorinv")
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting_shape, batch_shape = arr.shape[:ind], arr.shape[ind:]
    flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
    if flatshape[0] != flatshape[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` dimensions equals that of "
                         f"the remaining dimensions. got arr.shape={arr.shape} with ind={ind}.")
    return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: tuple[int, ...] | None = None) -> Array:
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x``."""
    a_arr, b_arr = asarray(a, "tensorsolve"), asarray(b, "tensorsolve", 1)
    if axes is not None:
        a_arr = fnp.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim:]
    if a_arr.shape[: b_arr.ndim] != b_arr.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b."
                         f" got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
    if b_arr.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]);"
                         f" got a.shape={a_arr.shape}, b.ndim={b_arr.ndim}.")
    a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)


def multi_dot(arrays: Sequence[ArrayLike], *, precision: Any = None) -> Array:
    """The product of a chain of matrices (first and last may be vectors), in the cheapest order."""
    arrs = [asarray(v, "jnp.linalg.multi_dot", i) for i, v in enumerate(arrays)]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2) and all(v.ndim == 2 for v in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the first and last array "
                         f"which may be 1 or 2 dimensional. Got array shapes {[v.shape for v in arrs]}")
    if any(p.shape[-1] != q.shape[0] for p, q in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of following array. "
                         f"Got array shapes {[v.shape for v in arrs]}")
    einsum_axes: list[tuple[int, ...]] = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        einsum_axes[0] = einsum_axes[0][1:]
    if arrs[-1].ndim == 1:
        einsum_axes[-1] = einsum_axes[-1][:1]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    specs = ["".join(letters[i] for i in ax) for ax in einsum_axes]
    used = sorted(set(itertools.chain(*einsum_axes)))
    counts = {i: sum(i in ax for ax in einsum_axes) for i in used}
    out = "".join(letters[i] for i in used if counts[i] == 1)
    return fnp.einsum(",".join(specs) + "->" + out, *arrs, optimize="auto", precision=precision)


def cond(x: ArrayLike, p: Any = None) -> Array:
    """The condition number in the ``p`` norm (2 by default, through the singular values)."""
    arr = asarray(x, "cond")
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={arr.shape}")
    if p is None or p == 2:
        s = svdvals(arr)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(arr)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got arr.shape={arr.shape}")
        r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
    return fnp.where(fnp.isnan(r) & ~fnp.isnan(arr).any(axis=(-2, -1)), np.inf, r)


def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """QR decomposition: ``QRResult(Q, R)`` (``mode`` ``"reduced"``/``"complete"``) or ``R`` (``"r"``)."""
    x = _inexact1(a, "jnp.linalg.qr")
    if mode == "raw":
        a_raw, taus = lax_linalg.geqrf(x)
        return QRResult(fnp.matrix_transpose(a_raw), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(x, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)

"""``fcore.lax.linalg`` against ``jax.lax.linalg``: the same LAPACK kernels, so the same bits;
jvp/grad, vmap, jit, dtypes, NaNs on failure and shape errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.lax import linalg as jl

import fcore
import fcore.numpy as fnp
from fcore.lax import linalg as fl
from test_numpy_common import modes

RNG = np.random.default_rng(0)


def _spd(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    a = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.normal(size=shape)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _mat(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    a = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


def _flat(x: Any) -> list[np.ndarray[Any, Any]]:
    return [np.asarray(v) for v in (x if isinstance(x, (tuple, list)) else [x])]


def _same_bits(got: Any, want: Any) -> None:
    g, w = _flat(got), _flat(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_array_equal(a, b)


def _close(got: Any, want: Any, tol: float = 1e-5) -> None:
    g, w = _flat(got), _flat(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        scale = max(1.0, float(np.nanmax(np.abs(b)))) if b.size else 1.0
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, equal_nan=True)


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]

CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], Callable[[Any], np.ndarray[Any, Any]]]] = [
    ("cholesky", fl.cholesky, jl.cholesky, lambda dt: _spd((2, 4, 4), dt)),
    ("lu", fl.lu, jl.lu, lambda dt: _mat((2, 4, 4), dt)),
    ("lu_tall", fl.lu, jl.lu, lambda dt: _mat((5, 3), dt)),
    ("lu_wide", fl.lu, jl.lu, lambda dt: _mat((2, 3, 5), dt)),
    ("qr", fl.qr, jl.qr, lambda dt: _mat((2, 5, 3), dt)),
    ("qr_reduced", lambda x: fl.qr(x, full_matrices=False), lambda x: jl.qr(x, full_matrices=False), lambda dt: _mat((5, 3), dt)),
    ("qr_wide", fl.qr, jl.qr, lambda dt: _mat((3, 5), dt)),
    ("qr_pivoting", lambda x: fl.qr(x, pivoting=True), lambda x: jl.qr(x, pivoting=True), lambda dt: _mat((2, 5, 3), dt)),
    ("qr_pivoting_wide", lambda x: fl.qr(x, pivoting=True, full_matrices=False),
     lambda x: jl.qr(x, pivoting=True, full_matrices=False), lambda dt: _mat((3, 5), dt)),
    ("eigh", fl.eigh, jl.eigh, lambda dt: _spd((2, 4, 4), dt)),
    ("eigh_qr", lambda x: fl.eigh(x, implementation=fl.EighImplementation.QR),
     lambda x: jl.eigh(x, implementation=jl.EighImplementation.QR), lambda dt: _spd((4, 4), dt)),
    ("svd_gesvd", lambda x: fl.svd(x, algorithm=fl.SvdAlgorithm.QR), lambda x: jl.svd(x, algorithm=jl.SvdAlgorithm.QR),
     lambda dt: _mat((2, 5, 3), dt)),
    ("eigh_upper", lambda x: fl.eigh(x, lower=False, symmetrize_input=False),
     lambda x: jl.eigh(x, lower=False, symmetrize_input=False), lambda dt: _mat((4, 4), dt)),
    ("svd", fl.svd, jl.svd, lambda dt: _mat((2, 5, 3), dt)),
    ("svd_reduced", lambda x: fl.svd(x, full_matrices=False), lambda x: jl.svd(x, full_matrices=False), lambda dt: _mat((3, 5), dt)),
    ("svdvals", lambda x: fl.svd(x, compute_uv=False), lambda x: jl.svd(x, compute_uv=False), lambda dt: _mat((4, 3), dt)),
    ("eig", fl.eig, jl.eig, lambda dt: _mat((2, 4, 4), dt)),
    ("eig_right", lambda x: fl.eig(x, compute_left_eigenvectors=False),
     lambda x: jl.eig(x, compute_left_eigenvectors=False), lambda dt: _mat((3, 3), dt)),
    ("eigvals", lambda x: fl.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False),
     lambda x: jl.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False), lambda dt: _mat((3, 3), dt)),
    ("schur", fl.schur, jl.schur, lambda dt: _mat((2, 4, 4), dt)),
    ("schur_t", lambda x: fl.schur(x, compute_schur_vectors=False), lambda x: jl.schur(x, compute_schur_vectors=False),
     lambda dt: _mat((3, 3), dt)),
    ("hessenberg", fl.hessenberg, jl.hessenberg, lambda dt: _mat((2, 4, 4), dt)),
    ("tridiagonal", fl.tridiagonal, jl.tridiagonal, lambda dt: _spd((2, 4, 4), dt)),
    ("tridiagonal_upper", lambda x: fl.tridiagonal(x, lower=False), lambda x: jl.tridiagonal(x, lower=False),
     lambda dt: _mat((3, 3), dt)),
    ("symmetric_product", lambda x: fl.symmetric_product(x[..., :2], x, alpha=2.0, beta=0.5),
     lambda x: jl.symmetric_product(x[..., :2], x, alpha=2.0, beta=0.5), lambda dt: _mat((3, 3), dt)),
    ("triangular_solve", lambda a: fl.triangular_solve(a, a[..., :2], left_side=True, lower=True),
     lambda a: jl.triangular_solve(a, a[..., :2], left_side=True, lower=True), lambda dt: _spd((2, 4, 4), dt)),
    ("triangular_solve_right_adjoint", lambda a: fl.triangular_solve(a, a[..., :2, :], transpose_a=True, conjugate_a=True, unit_diagonal=True),
     lambda a: jl.triangular_solve(a, a[..., :2, :], transpose_a=True, conjugate_a=True, unit_diagonal=True), lambda dt: _spd((4, 4), dt)),
    ("triangular_solve_conj", lambda a: fl.triangular_solve(a, a, conjugate_a=True, lower=True),
     lambda a: jl.triangular_solve(a, a, conjugate_a=True, lower=True), lambda dt: _spd((3, 3), dt)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(("name", "f", "g", "make"), CASES, ids=[c[0] for c in CASES])
def test_bit_exact_with_jax(name: str, f: Callable[..., Any], g: Callable[..., Any],
                            make: Callable[[Any], np.ndarray[Any, Any]], dtype: Any) -> None:
    """Eager and jitted results are JAX's, bit for bit (the same LAPACK calls)."""
    x = make(dtype)
    with modes(x64=True):
        try:
            want = g(x)
        except TypeError:
            with pytest.raises(TypeError):
                f(x)
            return
        _same_bits(f(x), want)
        _same_bits(fcore.jit(f)(x), want)


def test_failures_give_nans() -> None:
    bad = -_spd((2, 3, 3), np.float32)
    _same_bits(fl.cholesky(bad), jl.cholesky(jnp.asarray(bad)))
    assert np.isnan(np.asarray(fl.cholesky(bad))[:, [0, 1, 2], [0, 1, 2]]).all()
    singular = np.zeros((3, 3), np.float32)
    _same_bits(fl.lu(singular), jl.lu(singular))


def test_eig_vector_derivatives_need_opt_in() -> None:
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        fcore.jvp(fl.eig, (A,), (W,))
    with pytest.raises(ValueError, match="lapack"):
        fl.eig(A, implementation=fl.EigImplementation.MAGMA)
    _same_bits(fl.eig(A, implementation=fl.EigImplementation.LAPACK), jl.eig(A, implementation=jl.EigImplementation.LAPACK))
    with pytest.raises(NotImplementedError, match="Jacobi"):
        fl.svd(A, algorithm=fl.SvdAlgorithm.JACOBI)


def test_shape_and_dtype_errors() -> None:
    with pytest.raises(ValueError, match="square"):
        fl.cholesky(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="rank"):
        fl.lu(np.ones((3,), np.float32))
    with pytest.raises(TypeError, match="floating"):
        fl.qr(np.ones((3, 3), np.int32))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        fl.triangular_solve(np.eye(3, dtype=np.float32), np.ones((4, 2), np.float32), left_side=True)
    with pytest.raises(ValueError, match="square"):
        fl.eig(np.ones((2, 3), np.float32))


S = _spd((4, 4), np.float32)
A = _mat((4, 4), np.float32)
R = _mat((4, 3), np.float32)
W = _mat((4, 4), np.float32)

GRADS: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], np.ndarray[Any, Any]]] = [
    ("cholesky", lambda x: fnp.sum(fl.cholesky(x) * W), lambda x: jnp.sum(jl.cholesky(x) * W), S),
    ("triangular_solve_a", lambda x: fnp.sum(fl.triangular_solve(x, R, left_side=True, lower=True) * W[:, :3]),
     lambda x: jnp.sum(jl.triangular_solve(x, R, left_side=True, lower=True) * W[:, :3]), S),
    ("triangular_solve_b", lambda x: fnp.sum(fl.triangular_solve(S, x, left_side=True, transpose_a=True) * W[:, :3]),
     lambda x: jnp.sum(jl.triangular_solve(S, x, left_side=True, transpose_a=True) * W[:, :3]), R),
    ("triangular_solve_right", lambda x: fnp.sum(fl.triangular_solve(x, R.T, lower=True) ** 2),
     lambda x: jnp.sum(jl.triangular_solve(x, R.T, lower=True) ** 2), S),
    ("lu", lambda x: fnp.sum(fl.lu(x)[0] * W), lambda x: jnp.sum(jl.lu(x)[0] * W), A),
    ("qr", lambda x: fnp.sum(fl.qr(x, full_matrices=False)[0] * W[:, :3]) + fnp.sum(fl.qr(x, full_matrices=False)[1] ** 2),
     lambda x: jnp.sum(jl.qr(x, full_matrices=False)[0] * W[:, :3]) + jnp.sum(jl.qr(x, full_matrices=False)[1] ** 2), R),
    ("qr_wide", lambda x: fnp.sum(fl.qr(x)[1] * W[:3]), lambda x: jnp.sum(jl.qr(x)[1] * W[:3]), R.T.copy()),
    ("qr_full_tall", lambda x: fnp.sum(fl.qr(x)[0] ** 3) + fnp.sum(fl.qr(x)[1] * W[:, :3]),
     lambda x: jnp.sum(jl.qr(x)[0] ** 3) + jnp.sum(jl.qr(x)[1] * W[:, :3]), R),
    ("qr_pivoting", lambda x: fnp.sum(fl.qr(x, pivoting=True)[0] ** 3) + fnp.sum(fl.qr(x, pivoting=True)[1] ** 3),
     lambda x: jnp.sum(jl.qr(x, pivoting=True)[0] ** 3) + jnp.sum(jl.qr(x, pivoting=True)[1] ** 3), R.T.copy()),
    ("eigvals", lambda x: fnp.sum(fnp.abs(fl.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0])),
     lambda x: jnp.sum(jnp.abs(jl.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0])), A),
    ("eig_vectors", lambda x: fnp.sum(fnp.abs(fl.eig(x, enable_eigvec_derivs=True)[2]) ** 2 * W),
     lambda x: jnp.sum(jnp.abs(jl.eig(x, enable_eigvec_derivs=True)[2]) ** 2 * W), A),
    ("eigh", lambda x: fnp.sum(fl.eigh(x)[1] * W[0]) + fnp.sum(fnp.abs(fl.eigh(x)[0][:, 0])),
     lambda x: jnp.sum(jl.eigh(x)[1] * W[0]) + jnp.sum(jnp.abs(jl.eigh(x)[0][:, 0])), S),
    ("svd", lambda x: fnp.sum(fl.svd(x, full_matrices=False)[1] * W[0, :3]) + fnp.sum(fl.svd(x, full_matrices=False)[0] * W[:, :3]),
     lambda x: jnp.sum(jl.svd(x, full_matrices=False)[1] * W[0, :3]) + jnp.sum(jl.svd(x, full_matrices=False)[0] * W[:, :3]), R),
    ("svdvals", lambda x: fnp.sum(fl.svd(x, compute_uv=False)), lambda x: jnp.sum(jl.svd(x, compute_uv=False)), R.T.copy()),
]


@pytest.mark.parametrize(("name", "f", "g", "x"), GRADS, ids=[c[0] for c in GRADS])
def test_grad_and_jvp(name: str, f: Callable[[Any], Any], g: Callable[[Any], Any], x: np.ndarray[Any, Any]) -> None:
    want = jax.grad(g)(x)
    _close(fcore.grad(f)(x), want, 1e-4)
    _close(fcore.jit(fcore.grad(f))(x), want, 1e-4)
    t = _mat(x.shape, np.float32)
    _close(fcore.jvp(f, (x,), (t,))[1], jax.jvp(g, (x,), (t,))[1], 1e-4)


VMAPS: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("cholesky", fl.cholesky, jl.cholesky), ("lu", fl.lu, jl.lu), ("qr", fl.qr, jl.qr), ("eigh", fl.eigh, jl.eigh),
    ("svd", fl.svd, jl.svd), ("eig", fl.eig, jl.eig),
]


@pytest.mark.parametrize(("name", "f", "g"), VMAPS, ids=[c[0] for c in VMAPS])
def test_vmap(name: str, f: Callable[..., Any], g: Callable[..., Any]) -> None:
    xs = np.moveaxis(_spd((3, 4, 4), np.float32), 0, 2).copy()
    _same_bits(fcore.vmap(f, in_axes=2)(xs), jax.vmap(g, in_axes=2)(xs))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("which", ["a", "b", "both"])
def test_triangular_solve_vmap(left_side: bool, which: str) -> None:
    a = _spd((3, 4, 4), np.float32)
    b = _mat((3, 4, 2) if left_side else (3, 2, 4), np.float32)
    in_axes = {"a": (0, None), "b": (None, 0), "both": (0, 0)}[which]
    args = (a if which != "b" else a[0], b if which != "a" else b[0])
    kw = dict(left_side=left_side, lower=True)
    _close(fcore.vmap(lambda p, q: fl.triangular_solve(p, q, **kw), in_axes=in_axes)(*args),
           jax.vmap(lambda p, q: jl.triangular_solve(p, q, **kw), in_axes=in_axes)(*args))


def test_vector_right_hand_side() -> None:
    b = _mat((4,), np.float32)
    _same_bits(fl.triangular_solve(S, b, left_side=True, lower=True), jl.triangular_solve(S, b, left_side=True, lower=True))


def _tridiagonal(batch: tuple[int, ...], m: int, dtype: Any) -> list[np.ndarray[Any, Any]]:
    dl, d, du = (_mat((*batch, m), dtype) for _ in range(3))
    d = d + 4
    dl[..., 0] = 0
    du[..., -1] = 0
    return [dl, d, du, _mat((*batch, m, 3), dtype)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("perturb_singular", [False, True])
def test_tridiagonal_solve(dtype: Any, perturb_singular: bool) -> None:
    args = _tridiagonal((2,), 5, dtype)
    with modes(x64=True):
        want = jl.tridiagonal_solve(*(jnp.asarray(v) for v in args), perturb_singular=perturb_singular)
        _same_bits(fl.tridiagonal_solve(*args, perturb_singular=perturb_singular), want)
        _same_bits(fcore.jit(lambda *v: fl.tridiagonal_solve(*v, perturb_singular=perturb_singular))(*args), want)
        # Thomas's algorithm, the lowering off the CPU, agrees to rounding.
        _close(fcore.jit(lambda *v: fl._thomas(*v)[0])(*args), want, 1e-4)


def test_tridiagonal_solve_grads_and_vmap() -> None:
    args = _tridiagonal((2,), 5, np.float32)
    jargs = [jnp.asarray(v) for v in args]
    for argnum in range(4):
        _close(fcore.grad(lambda *v: fnp.sum(fl.tridiagonal_solve(*v) ** 2), argnum)(*args),
               jax.grad(lambda *v: jnp.sum(jl.tridiagonal_solve(*v) ** 2), argnum)(*jargs))
    stacked_b = np.stack([args[3], args[3] * 2], 2)
    _same_bits(fcore.vmap(fl.tridiagonal_solve, in_axes=(None, None, None, 2))(args[0], args[1], args[2], stacked_b),
               jax.vmap(lambda p, q, r, t: jl.tridiagonal_solve(p, q, r, t), in_axes=(None, None, None, 2))(
                   jargs[0], jargs[1], jargs[2], jnp.asarray(stacked_b)))
    dls = np.stack([args[0], args[0] * 0.5])
    _same_bits(fcore.vmap(fl.tridiagonal_solve, in_axes=(0, None, None, None))(dls, *args[1:]),
               jax.vmap(lambda p, q, r, t: jl.tridiagonal_solve(p, q, r, t), in_axes=(0, None, None, None))(
                   jnp.asarray(dls), jargs[1], jargs[2], jargs[3]))
    with pytest.raises(TypeError, match="same shape"):
        fl.tridiagonal_solve(args[0][..., :4], *args[1:])


def test_geqrf_and_householder_product() -> None:
    from jax._src.lax.linalg import geqrf as jax_geqrf

    x = _mat((2, 5, 3), np.float32)
    _same_bits(fl.geqrf(x), jax_geqrf(jnp.asarray(x)))
    a, taus = (np.asarray(v) for v in jax_geqrf(jnp.asarray(x)))
    _same_bits(fl.householder_product(a, taus), jl.householder_product(a, taus))
    _same_bits(fcore.vmap(fl.householder_product, in_axes=(0, None))(a, taus[0]),
               jax.vmap(lambda p, t: jl.householder_product(p, t), in_axes=(0, None))(jnp.asarray(a), jnp.asarray(taus[0])))
    with pytest.raises(ValueError, match="at least as many rows"):
        fl.householder_product(np.swapaxes(a, -1, -2), taus)


def test_lu_pivots_to_permutation() -> None:
    piv = np.array([[2, 2, 3, 3], [0, 3, 2, 3]], np.int32)
    _same_bits(fl.lu_pivots_to_permutation(piv, 5), jl.lu_pivots_to_permutation(piv, 5))

"""``fcore.scipy.linalg`` against ``jax.scipy.linalg``: values, dtypes, shapes, errors, grads."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
import fcore.scipy.linalg as fsl
from test_numpy_common import modes

RNG = np.random.default_rng(2)
A = RNG.normal(size=(4, 4)).astype(np.float32)
S = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = RNG.normal(size=(4, 3)).astype(np.float32)
L = np.linalg.cholesky(S).astype(np.float32)
LU, PIV = (np.asarray(v) for v in jsl.lu_factor(A))


def _check(got: Any, want: Any, tol: float = 2e-4) -> None:
    g = list(got) if isinstance(got, (tuple, list)) else [got]
    w = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(g) == len(w)
    for a, b in zip(g, w):
        if isinstance(b, bool):
            assert a == b
            continue
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
        scale = max(1.0, float(np.abs(y).max())) if y.size else 1.0
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol * scale)


CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("solve_triangular", (np.tril(S), B), {"lower": True}),
    ("solve_triangular", (np.triu(S), B[:, 0]), {"trans": "C"}),
    ("solve_triangular", (np.triu(S), B), {"trans": 1, "unit_diagonal": True}),
    ("cho_factor", (S,), {}), ("cho_factor", (S,), {"lower": True}),
    ("cho_solve", ((L, True), B), {}), ("cho_solve", ((L.T.copy(), False), B[:, 0]), {}),
    ("cholesky", (S,), {}), ("cholesky", (S,), {"lower": True}),
    ("lu", (A,), {}), ("lu", (B,), {}), ("lu", (B.T.copy(),), {"permute_l": True}), ("lu_factor", (A,), {}),
    ("lu_solve", ((LU, PIV), B), {}), ("lu_solve", ((LU, PIV), B), {"trans": 1}),
    ("lu_solve", ((LU, PIV), B[:, 0]), {"trans": 2}),
    ("expm", (A * 0.1,), {}), ("expm", (A,), {}), ("expm", (np.stack([A, A * 0.5]),), {}),
    ("expm", (np.triu(A),), {"upper_triangular": True}),
    ("block_diag", (A, B, np.ones(2, np.float32), np.float32(3)), {}), ("block_diag", (), {}),
    ("block_diag", (np.ones((2, 2), np.int32), np.ones(1, np.int8)), {}),
    ("eigh", (S,), {}), ("eigh", (S,), {"eigvals_only": True}), ("eigh", (S,), {"lower": False}),
    ("inv", (S,), {}), ("det", (S,), {}), ("qr", (B,), {}), ("qr", (B,), {"mode": "economic"}),
    ("qr", (B,), {"mode": "r"}), ("svd", (B,), {}), ("svd", (B,), {"compute_uv": False}),
    ("svd", (B,), {"full_matrices": False}), ("solve", (S, B), {}), ("solve", (S, B), {"assume_a": "pos"}),
    ("solve", (S, B[:, 0]), {"assume_a": "pos", "lower": True}), ("schur", (A,), {}),
    ("schur", (A,), {"output": "complex"}),
    ("hessenberg", (A,), {}), ("hessenberg", (A,), {"calc_q": True}), ("toeplitz", (B[:, 0], B[:3, 1]), {}),
    ("toeplitz", (B[:, 0],), {}), ("toeplitz", (B.T, B[:2, 0]), {}), ("hankel", (B[:, 0], B[:3, 1]), {}),
    ("hankel", (B[:, 0],), {}), ("circulant", (B.T,), {}), ("companion", (B[:, 0],), {}),
    ("leslie", (B[:, 0], B[:3, 1]), {}), ("fiedler", (B[:, 0],), {}), ("hilbert", (4,), {}),
    ("helmert", (4,), {}), ("helmert", (5,), {"full": True}), ("hadamard", (8,), {}), ("dft", (4,), {}),
    ("dft", (5,), {"scale": "n"}), ("pascal", (4,), {}), ("pascal", (4,), {"kind": "upper"}),
    ("convolution_matrix", (B[:, 0], 3), {}), ("convolution_matrix", (B[:, 0], 3), {"mode": "same"}),
    ("convolution_matrix", (B[:, 0], 5), {"mode": "valid"}),
]


@pytest.mark.parametrize(("name", "args", "kw"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    _check(getattr(fsl, name)(*args, **kw), getattr(jsl, name)(*args, **kw))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32], ids=lambda d: np.dtype(d).name)
def test_dtypes(dtype: Any, x64: bool) -> None:
    a = (S * 2).astype(dtype) if np.dtype(dtype).kind != "c" else (S + 0.5j * (A - A.T)).astype(dtype)
    with modes(x64):
        for name in ["cholesky", "lu", "inv", "det", "expm", "eigh", "qr", "svd"]:
            arg = a * 0.01 if name == "expm" and np.dtype(dtype).kind != "i" else a
            _check(getattr(fsl, name)(arg), getattr(jsl, name)(arg), 1e-3)


def test_errors() -> None:
    with pytest.raises(ValueError, match="trans"):
        fsl.solve_triangular(S, B, trans=3)
    with pytest.raises(ValueError, match="assume_a"):
        fsl.solve(S, B, assume_a="bogus")
    with pytest.raises(ValueError, match="square"):
        fsl.expm(B)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        fsl.block_diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="Unsupported QR"):
        fsl.qr(S, mode="bogus")
    with pytest.raises(NotImplementedError):
        fsl.eigh(S, S)
    with pytest.warns(FutureWarning):
        fsl.solve_triangular(np.stack([S, S]), np.ones((2, 4), np.float32))


def test_grads_and_jit() -> None:
    for f, g, x in [
        (lambda v: fnp.sum(fsl.expm(v * 0.3)), lambda v: jnp.sum(jsl.expm(v * 0.3)), A),
        (lambda v: fnp.sum(fsl.solve(v, B, assume_a="pos")), lambda v: jnp.sum(jsl.solve(v, B, assume_a="pos")), S),
        (lambda v: fnp.sum(fsl.cho_solve(fsl.cho_factor(v), B)), lambda v: jnp.sum(jsl.cho_solve(jsl.cho_factor(v), B)), S),
        (lambda v: fnp.sum(fsl.solve_triangular(v, B, lower=True)), lambda v: jnp.sum(jsl.solve_triangular(v, B, lower=True)), S),
        (lambda v: fnp.sum(fsl.lu(v)[2]), lambda v: jnp.sum(jsl.lu(v)[2]), A),
    ]:
        want = jax.grad(g)(x)
        _check(fcore.grad(f)(x), want)
        _check(fcore.jit(fcore.grad(f))(x), want)
    _check(fcore.vmap(fsl.expm)(np.stack([A, A * 0.2])), jax.vmap(jsl.expm)(np.stack([A, A * 0.2])))

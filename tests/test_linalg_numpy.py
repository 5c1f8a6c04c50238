"""``fcore.numpy.linalg`` against ``jax.numpy.linalg``: values, dtypes (x64 on and off), batched
shapes, named-tuple fields, errors, gradients, jit and vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from test_numpy_common import modes

RNG = np.random.default_rng(1)


def _mat(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-4, 5, size=shape).astype(dtype)
    a = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        return (a + 1j * RNG.normal(size=shape)).astype(dtype)
    return a.astype(dtype)


def _spd(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    a = _mat(shape, np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    n = shape[-1]
    out = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return (np.round(out) if np.dtype(dtype).kind in "iu" else out).astype(dtype)


def _tol(dt: np.dtype[Any]) -> float:
    return 1e-9 if dt in (np.float64, np.complex128) else 2e-4


def _check(got: Any, want: Any) -> None:
    if hasattr(want, "_fields"):
        assert type(got).__name__ == type(want).__name__, (type(got), type(want))
        assert got._fields == want._fields
    g = list(got) if isinstance(got, (tuple, list)) else [got]
    w = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(g) == len(w)
    for a, b in zip(g, w):
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
        if x.dtype.kind in "biu":
            np.testing.assert_array_equal(x, y)
            continue
        tol = _tol(x.dtype)
        scale = max(1.0, float(np.nanmax(np.abs(y)))) if y.size and np.isfinite(y).any() else 1.0
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol * scale, equal_nan=True)


SQUARE = ["cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "inv", "det", "slogdet", "pinv", "matrix_rank",
          "cond", "eig", "eigvals", "diagonal", "matrix_transpose"]


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", SQUARE)
def test_square_functions(name: str, dtype: Any, x64: bool) -> None:
    a = _spd((2, 4, 4), dtype)
    with modes(x64):
        _check(getattr(fnp.linalg, name)(a), getattr(jnp.linalg, name)(a))


@pytest.mark.parametrize("name", ["det", "slogdet", "inv"])
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_small_and_batched_sizes(name: str, n: int) -> None:
    a = _mat((3, 2, n, n), np.float32)
    _check(getattr(fnp.linalg, name)(a), getattr(jnp.linalg, name)(a))
    _check(fcore.jit(getattr(fnp.linalg, name))(a), getattr(jnp.linalg, name)(a))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 2)])
def test_rectangular(shape: tuple[int, ...]) -> None:
    a = _mat(shape, np.float32)
    cases: list[tuple[str, dict[str, Any]]] = [("svd", {}), ("svd", {"full_matrices": False}), ("svdvals", {}), ("pinv", {}), ("qr", {}),
                     ("qr", {"mode": "complete"}), ("qr", {"mode": "r"}), ("matrix_rank", {}), ("cond", {})]
    for name, kw in cases:
        _check(getattr(fnp.linalg, name)(a, **kw), getattr(jnp.linalg, name)(a, **kw))
    _check(fnp.linalg.svd(a @ np.swapaxes(a, -1, -2), hermitian=True), jnp.linalg.svd(a @ np.swapaxes(a, -1, -2), hermitian=True))


def test_solve_lstsq_and_friends() -> None:
    a, b = _spd((2, 4, 4), np.float32), _mat((2, 4, 3), np.float32)
    cases: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("solve", (a, b), {}), ("solve", (a[0], b), {}), ("solve", (a, b[0, :, 0]), {}), ("solve", (a[0], b[0]), {}),
        ("lstsq", (b[0], a[0, :, :2]), {}), ("lstsq", (b[0], a[0, :, 0]), {}), ("lstsq", (b[0].T, a[0, :3, 0]), {}),
        ("matrix_power", (a, 0), {}), ("matrix_power", (a, 3), {}), ("matrix_power", (a, -1), {}),
        ("matrix_power", (a / 4, 6), {}), ("multi_dot", ([a[0], b[0], b[1].T, a[1]],), {}),
        ("multi_dot", ([b[0, :, 0], a[0], b[1]],), {}), ("tensorinv", (a[0].reshape(2, 2, 4),), {"ind": 2}),
        ("tensorsolve", (a[0].reshape(4, 2, 2), b[0, :, 0]), {}), ("cross", (b, b[::-1]), {}),
        ("eigh", (a,), {"UPLO": "U"}), ("eigvalsh", (a,), {"UPLO": "U", "symmetrize_input": False}),
        ("cholesky", (a,), {"upper": True}), ("pinv", (b,), {"rtol": 0.5}), ("matrix_rank", (b,), {"rtol": 0.5}),
        ("cond", (a,), {"p": 1}), ("cond", (a,), {"p": -2}), ("cond", (a,), {"p": "fro"}),
        ("qr", (b,), {"mode": "raw"}), ("slogdet", (a,), {"method": "qr"}),
    ]
    for name, args, kw in cases:
        _check(getattr(fnp.linalg, name)(*args, **kw), getattr(jnp.linalg, name)(*args, **kw))


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord: Any) -> None:
    a = _mat((2, 3, 4), np.float32)
    for axis in [(1, 2), (2, 0)]:
        for keepdims in [False, True]:
            _check(fnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims),
                   jnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims))


def test_singular_matrices() -> None:
    z = np.zeros((4, 4), np.float32)
    r1 = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 5.0)).astype(np.float32)
    for name in ["det", "slogdet", "inv", "matrix_rank", "cond", "pinv"]:
        for m in (z, r1):
            _check(getattr(fnp.linalg, name)(m), getattr(jnp.linalg, name)(m))
    _check(fnp.linalg.solve(z, np.ones(4, np.float32)), jnp.linalg.solve(z, np.ones(4, np.float32)))
    _check(fnp.linalg.cholesky(-np.eye(3, dtype=np.float32)), jnp.linalg.cholesky(-np.eye(3, dtype=np.float32)))


def test_errors() -> None:
    rect = np.ones((3, 4), np.float32)
    for name in ["det", "slogdet", "inv", "cholesky", "eigh", "eig"]:
        with pytest.raises(ValueError):
            getattr(fnp.linalg, name)(rect)
    with pytest.raises(ValueError, match="at least two dimensional"):
        fnp.linalg.solve(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        fnp.linalg.solve(np.ones((2, 4, 4), np.float32), np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="shapes"):
        fnp.linalg.solve(np.eye(3, dtype=np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="square"):
        fnp.linalg.matrix_power(rect, 2)
    with pytest.raises(TypeError, match="integer"):
        fnp.linalg.matrix_power(np.eye(2), 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="UPLO"):
        fnp.linalg.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="Unsupported QR"):
        fnp.linalg.qr(np.eye(2), mode="bogus")
    with pytest.raises(ValueError, match="at least two arrays"):
        fnp.linalg.multi_dot([np.eye(2)])
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        fnp.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="Invalid order"):
        fnp.linalg.norm(np.eye(2), ord=3)


W = _mat((4, 4), np.float32)
A = _spd((4, 4), np.float32)

GRADS: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("det", fnp.linalg.det, jnp.linalg.det),
    ("slogdet", lambda x: fnp.linalg.slogdet(x).logabsdet, lambda x: jnp.linalg.slogdet(x).logabsdet),
    ("inv", lambda x: fnp.sum(fnp.linalg.inv(x) * W), lambda x: jnp.sum(jnp.linalg.inv(x) * W)),
    ("solve", lambda x: fnp.sum(fnp.linalg.solve(x, W) * W), lambda x: jnp.sum(jnp.linalg.solve(x, W) * W)),
    ("cholesky", lambda x: fnp.sum(fnp.linalg.cholesky(x) * W), lambda x: jnp.sum(jnp.linalg.cholesky(x) * W)),
    ("eigvalsh", lambda x: fnp.sum(fnp.linalg.eigvalsh(x) * W[0]), lambda x: jnp.sum(jnp.linalg.eigvalsh(x) * W[0])),
    ("svdvals", lambda x: fnp.sum(fnp.linalg.svdvals(x * W) * W[0]), lambda x: jnp.sum(jnp.linalg.svdvals(x * W) * W[0])),
    ("qr", lambda x: fnp.sum(fnp.linalg.qr(x).R * W) + fnp.sum(fnp.linalg.qr(x).Q * W),
     lambda x: jnp.sum(jnp.linalg.qr(x).R * W) + jnp.sum(jnp.linalg.qr(x).Q * W)),
    ("pinv", lambda x: fnp.sum(fnp.linalg.pinv(x) * W), lambda x: jnp.sum(jnp.linalg.pinv(x) * W)),
    ("det_singular", lambda x: fnp.linalg.det(x * np.array([1, 1, 1, 0], np.float32)),
     lambda x: jnp.linalg.det(x * np.array([1, 1, 1, 0], np.float32))),
    ("det3", lambda x: fnp.linalg.det(x[:3, :3]), lambda x: jnp.linalg.det(x[:3, :3])),
    ("slogdet_qr", lambda x: fnp.linalg.slogdet(x, method="qr").logabsdet,
     lambda x: jnp.linalg.slogdet(x, method="qr").logabsdet),
]


@pytest.mark.parametrize(("name", "f", "g"), GRADS, ids=[c[0] for c in GRADS])
def test_grads(name: str, f: Callable[[Any], Any], g: Callable[[Any], Any]) -> None:
    want = jax.grad(g)(A)
    _check(fcore.grad(f)(A), want)
    _check(fcore.jit(fcore.grad(f))(A), want)
    _check(fcore.jvp(f, (A,), (W,))[1], jax.jvp(g, (A,), (W,))[1])


@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "eigh", "svd", "qr", "cholesky", "pinv"])
def test_vmap_and_jit(name: str) -> None:
    a = np.moveaxis(_spd((3, 4, 4), np.float32), 0, 1).copy()
    f, g = getattr(fnp.linalg, name), getattr(jnp.linalg, name)
    _check(fcore.vmap(f, in_axes=1)(a), jax.vmap(g, in_axes=1)(a))
    _check(fcore.jit(f)(a[:, 0]), g(a[:, 0]))


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 6), batch=st.integers(1, 3), k=st.integers(1, 3))
def test_property_solve_and_slogdet(n: int, batch: int, k: int) -> None:
    a = _mat((batch, n, n), np.float32) + 3 * np.eye(n, dtype=np.float32)
    b = _mat((batch, n, k), np.float32)
    _check(fnp.linalg.solve(a, b), jnp.linalg.solve(a, b))
    _check(fnp.linalg.slogdet(a), jnp.linalg.slogdet(a))
    x = np.asarray(fnp.linalg.solve(a, b))
    np.testing.assert_allclose(a @ x, b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("strip_zeros", [True, False])
def test_roots(strip_zeros: bool) -> None:
    for p in [np.array([1.0, -3.0, 2.0], np.float32), np.array([0.0, 0.0, 1.0, 2.0, 5.0], np.float32),
              np.array([2.0], np.float32), np.array([1, 0, -4], np.int32)]:
        _check(fnp.roots(p, strip_zeros=strip_zeros), jnp.roots(p, strip_zeros=strip_zeros))
    _check(fcore.jit(lambda v: fnp.roots(v, strip_zeros=False))(np.array([0.0, 1.0, -1.0], np.float32)),
           jnp.roots(np.array([0.0, 1.0, -1.0], np.float32), strip_zeros=False))


def test_polyfit() -> None:
    x = np.linspace(0, 1, 10).astype(np.float32)
    y = (3 * x**2 + 1 + 0.1 * np.sin(7 * x)).astype(np.float32)
    y2 = np.stack([y, 2 * y], 1)
    w = np.linspace(1, 2, 10).astype(np.float32)
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((x, y, 2), {}), ((x, y2, 3), {"full": True}), ((x, y, 2), {"cov": True, "w": w}),
                     ((x, y2, 1), {"cov": "unscaled"})]
    for args, kw in cases:
        _check(fnp.polyfit(*args, **kw), jnp.polyfit(*args, **kw))
    with pytest.raises(ValueError, match="deg >= 0"):
        fnp.polyfit(x, y, -1)

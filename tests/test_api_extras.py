"""Smaller JAX names, differential against jax: ``dtypes.itemsize_bits`` / ``scalar_type_of``."""

from __future__ import annotations

import re
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import fcore


@pytest.mark.parametrize("dtype", [ml_dtypes.int4, np.bool_, np.uint16, np.float16, ml_dtypes.bfloat16, np.complex64,
                                   ml_dtypes.float8_e4m3fn, "int8", np.dtype("O"), None])
def test_itemsize_bits_matches_jax(dtype: Any) -> None:
    try:
        expected = jax.dtypes.itemsize_bits(dtype)
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e).split(":")[0])):
            fcore.dtypes.itemsize_bits(dtype)
        return
    assert fcore.dtypes.itemsize_bits(dtype) == expected


@pytest.mark.parametrize("value", [1, 1.0, True, 1j, np.int8(1), np.ones(2, ml_dtypes.bfloat16), np.ones(2, ml_dtypes.int4),
                                   "float32", "abc", None, [1, 2]])
def test_scalar_type_of_matches_jax(value: Any) -> None:
    try:
        expected = jax.dtypes.scalar_type_of(value)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e), match=re.escape(str(e).split(":")[0])):
            fcore.dtypes.scalar_type_of(value)
        return
    assert fcore.dtypes.scalar_type_of(value) is expected
    if not isinstance(value, str):
        assert fcore.dtypes.scalar_type_of(fcore.numpy.asarray(value)) is expected


def test_mulhi_matches_jax() -> None:
    """Eager and jitted (one program over every dtype), against jax.lax.mulhi."""
    rng = np.random.default_rng(0)
    pairs = []
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32):
        info = np.iinfo(dt)
        x, y = (rng.integers(info.min, info.max, size=16, dtype=dt, endpoint=True) for _ in range(2))
        x[:2], y[:2] = info.min, info.max  # the extremes
        pairs.append((x, y))
    theirs = jax.jit(lambda ps: [jax.lax.mulhi(x, y) for x, y in ps])(pairs)
    ours_jit = fcore.jit(lambda ps: [fcore.lax.mulhi(x, y) for x, y in ps])(pairs)
    for (x, y), t, o in zip(pairs, theirs, ours_jit):
        for ours in (o, fcore.lax.mulhi(x, y)):
            assert np.asarray(ours).dtype == np.asarray(t).dtype
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(t))
    batched = fcore.vmap(fcore.lax.mulhi, in_axes=(0, None))(pairs[4][0], pairs[4][1][0])
    np.testing.assert_array_equal(np.asarray(batched), np.asarray(jax.lax.mulhi(pairs[4][0], pairs[4][1][0])))
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32"):
        fcore.lax.mulhi(np.float32(1), np.float32(2))


_SQUARE = np.array([[4.0, 1.0, 0.5], [0.2, 3.0, 0.0], [0.1, 0.5, 2.0]], np.float32)
_INDEFINITE = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 2.0], [3.0, 2.0, 1.0]], np.float32)


def _close_to_jax(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    for o, t in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        assert np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=tol, atol=tol)


def test_sqrtm_matches_jax() -> None:
    _close_to_jax(fcore.scipy.linalg.sqrtm(_INDEFINITE), jax.scipy.linalg.sqrtm(_INDEFINITE))  # a complex root
    root = fcore.scipy.linalg.sqrtm(_SQUARE)
    np.testing.assert_allclose(np.asarray(root @ root), _SQUARE, atol=1e-5)
    with pytest.raises(NotImplementedError, match="Blocked version"):
        fcore.scipy.linalg.sqrtm(_SQUARE, blocksize=2)


def test_polar() -> None:
    """QDWH (slow to compile: once) against the SVD method, which is compared with jax's."""
    a = np.random.default_rng(0).normal(size=(2, 4, 3)).astype(np.float32)
    u, p = fcore.scipy.linalg.polar(a[0])
    _close_to_jax((u, p), fcore.scipy.linalg.polar(a[0], method="svd"), 1e-4)
    np.testing.assert_allclose(np.asarray(u @ p), a[0], atol=1e-5)
    for side, x in (("right", a), ("left", a.swapaxes(-1, -2))):
        _close_to_jax(fcore.scipy.linalg.polar(x, side=side, method="svd"),
                      jax.scipy.linalg.polar(x, side=side, method="svd"), 1e-4)
    with pytest.raises(NotImplementedError, match="method='qdwh' only supports"):
        fcore.scipy.linalg.polar(a.swapaxes(-1, -2))  # m < n on the right
    with pytest.raises(ValueError, match="Unknown polar decomposition method"):
        fcore.scipy.linalg.polar(a, method="newton")
    with pytest.raises(ValueError, match="must be either 'right' or 'left'"):
        fcore.scipy.linalg.polar(a, side="up")
    with pytest.raises(ValueError, match="at least a 2-D array"):
        fcore.scipy.linalg.polar(a[0, 0])


def test_funm_rsf2csf_expm_frechet_solve_sylvester() -> None:
    """Against NumPy references and identities (each function compiles once)."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 4)).astype(np.float32)
    b = rng.normal(size=(3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    c = rng.normal(size=(4, 3)).astype(np.float32)
    w, v = np.linalg.eig(a.astype(np.float64))
    f, err = fcore.scipy.linalg.funm(a, fcore.numpy.sin, disp=False)  # funm runs rsf2csf
    np.testing.assert_allclose(np.asarray(f), v @ np.diag(np.sin(w)) @ np.linalg.inv(v), atol=1e-4)
    assert np.asarray(f).dtype == np.complex64 and 0 < float(err) < 1
    t, z = fcore.scipy.linalg.rsf2csf(*fcore.scipy.linalg.schur(a))
    assert np.allclose(np.tril(np.asarray(t), -1), 0) and np.allclose(np.asarray(z @ t @ z.conj().T), a, atol=1e-5)
    shifted = a + 5 * np.eye(4, dtype=np.float32)
    for method in ("schur", "eigen"):
        x = fcore.scipy.linalg.solve_sylvester(shifted, b, c, method=method)
        assert np.asarray(x).dtype == np.float32
        np.testing.assert_allclose(np.asarray(shifted @ x + x @ b), c, atol=1e-4)
    singular = fcore.scipy.linalg.solve_sylvester(2 * np.eye(4, dtype=np.float32), -2 * np.eye(3, dtype=np.float32), c)
    assert np.isnan(np.asarray(singular)).all()  # eigenvalue sums of 0: NaN, as JAX
    # Mathias: expm([[A, E], [0, A]]) holds the Frechet derivative L(A, E) in its upper right block.
    e = rng.normal(size=(4, 4)).astype(np.float32)
    expm_a, frechet = fcore.scipy.linalg.expm_frechet(a, e)
    block = np.asarray(fcore.scipy.linalg.expm(np.block([[a, e], [np.zeros_like(a), a]])))
    np.testing.assert_allclose(np.asarray(expm_a), block[:4, :4], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(frechet), block[:4, 4:], rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation"):
        fcore.scipy.linalg.solve_sylvester(a, b, a)
    with pytest.raises(ValueError, match='Unrecognized method x. The two valid methods are either "schur" or "eigen".'):
        fcore.scipy.linalg.solve_sylvester(a, a, a, method="x")
    with pytest.raises(ValueError, match="expected square array_like input"):
        fcore.scipy.linalg.funm(c, fcore.numpy.sin)
    with pytest.raises(ValueError, match="expected A and E to be the same shape"):
        fcore.scipy.linalg.expm_frechet(a, b)
    with pytest.raises(ValueError, match="Input array shapes must match"):
        fcore.scipy.linalg.rsf2csf(a, b)

"""``lax.fft`` and ``fcore.numpy.fft`` against JAX: values, dtypes, shapes, grads, vmap, jit, errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore import lax
from test_numpy_common import modes


def _close(got: Any, want: Any, tol: float = 1e-4) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 6, 5)).astype(np.float32)
XC = (X + 1j * RNG.normal(size=X.shape)).astype(np.complex64)

ONE_D = [{}, {"n": 7}, {"n": 3}, {"axis": 0, "norm": "ortho"}, {"n": 4, "axis": 1, "norm": "forward"}, {"norm": "backward"}]


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("kw", ONE_D, ids=str)
def test_one_dimensional(name: str, kw: dict[str, Any]) -> None:
    arg = X if name in ("rfft", "ihfft") else XC
    _close(getattr(fnp.fft, name)(arg, **kw), getattr(jnp.fft, name)(arg, **kw))


ND = [{}, {"s": (3, 4)}, {"axes": (0, 2), "norm": "ortho"}, {"s": (2, 8), "axes": (2, 0)}, {"axes": (-1, -2), "norm": "forward"}]


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("kw", ND, ids=str)
def test_multi_dimensional(name: str, kw: dict[str, Any]) -> None:
    arg = X if name.startswith("rfft") else XC
    _close(getattr(fnp.fft, name)(arg, **kw), getattr(jnp.fft, name)(arg, **kw))


def test_more_than_three_axes() -> None:
    y = RNG.normal(size=(2, 3, 4, 5, 2)).astype(np.float32)
    _close(fnp.fft.rfftn(y), jnp.fft.rfftn(y))
    _close(fnp.fft.fftn(y), jnp.fft.fftn(y))
    spec = np.asarray(jnp.fft.rfftn(y))
    _close(fnp.fft.irfftn(spec), jnp.fft.irfftn(spec))
    _close(fnp.fft.ifftn(y, axes=(0, 1, 2, 3)), jnp.fft.ifftn(y, axes=(0, 1, 2, 3)))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64, np.bool_, np.float16])
def test_dtypes(x64: bool, dtype: Any) -> None:
    a = np.arange(8).astype(dtype)
    with modes(x64):
        for name in ("fft", "ifft", "rfft", "ihfft", "hfft", "irfft"):
            try:
                want = getattr(jnp.fft, name)(a)
            except (TypeError, ValueError):
                with pytest.raises((TypeError, ValueError)):
                    getattr(fnp.fft, name)(a)
                continue
            _close(getattr(fnp.fft, name)(a), want, 1e-3)


@pytest.mark.parametrize("x64", [False, True])
def test_frequencies_and_shifts(x64: bool) -> None:
    with modes(x64):
        for n in (1, 4, 7):
            for d in (1.0, 0.3):
                for name in ("fftfreq", "rfftfreq"):
                    got, want = getattr(fnp.fft, name)(n, d), getattr(jnp.fft, name)(n, d)
                    assert got.dtype == want.dtype
                    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        np.testing.assert_array_equal(fnp.fft.fftfreq(5, dtype=np.float16), jnp.fft.fftfreq(5, dtype=np.float16))
    for axes in (None, 1, (0, 2)):
        np.testing.assert_array_equal(fnp.fft.fftshift(X, axes), jnp.fft.fftshift(X, axes))
        np.testing.assert_array_equal(fnp.fft.ifftshift(X, axes), jnp.fft.ifftshift(X, axes))


def test_errors() -> None:
    with pytest.raises(ValueError, match="multiple axes"):
        fnp.fft.fft(XC, axis=(0, 1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repeated axes"):
        fnp.fft.fftn(XC, axes=(0, 0))
    with pytest.raises(ValueError, match="different lengths"):
        fnp.fft.fftn(XC, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="positive"):
        fnp.fft.fft(XC, n=0)
    with pytest.raises(ValueError, match="only supports 2 axes"):
        fnp.fft.fft2(XC, axes=(0,))
    with pytest.raises(ValueError, match="real valued"):
        fnp.fft.rfft(XC)
    with pytest.raises(ValueError, match="norm"):
        fnp.fft.fft(XC, norm="bogus")
    with pytest.raises(ValueError, match="minor dimensions"):
        lax.fft(XC, "fft", (3,))
    with pytest.raises(ValueError, match="Unknown FFT type"):
        lax.fft(XC, "dct", (5,))


@pytest.mark.parametrize("fft_type", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_lax_fft_transforms(fft_type: str) -> None:
    """Eager, jit, vmap and grad of the primitive agree with ``jax.lax.fft``."""
    arg = X if fft_type == "RFFT" else (np.fft.rfft(X).astype(np.complex64) if fft_type == "IRFFT" else XC)
    lengths = (6, 5) if fft_type != "IRFFT" else (6, 8)
    if fft_type == "IRFFT":
        arg = np.fft.rfftn(RNG.normal(size=(4, 6, 8))).astype(np.complex64)
    want = jax.lax.fft(arg, fft_type, lengths)
    _close(lax.fft(arg, fft_type, lengths), want)
    _close(fcore.jit(lambda v: lax.fft(v, fft_type, lengths))(arg), want)
    _close(fcore.vmap(lambda v: lax.fft(v, fft_type, lengths), in_axes=2, out_axes=2)(np.moveaxis(arg, 0, 2)),
           np.moveaxis(np.asarray(want), 0, 2))
    w = RNG.normal(size=want.shape).astype(np.float32)

    def loss_f(v: Any) -> Any:
        y = lax.fft(v, fft_type, lengths)
        return fnp.sum(fnp.real(y) * w + fnp.imag(y) ** 2) if fft_type != "IRFFT" else fnp.sum(y * w + y**3)

    def loss_j(v: Any) -> Any:
        y = jax.lax.fft(v, fft_type, lengths)
        return jnp.sum(jnp.real(y) * w + jnp.imag(y) ** 2) if fft_type != "IRFFT" else jnp.sum(y * w + y**3)

    _close(fcore.grad(loss_f)(arg), jax.grad(loss_j)(arg), 1e-3)
    _close(fcore.jit(fcore.grad(loss_f))(arg), jax.grad(loss_j)(arg), 1e-3)
    t = RNG.normal(size=arg.shape).astype(arg.dtype)
    _close(fcore.jvp(lambda v: lax.fft(v, fft_type, lengths), (arg,), (t,))[1],
           jax.jvp(lambda v: jax.lax.fft(v, fft_type, lengths), (arg,), (t,))[1])


def test_grad_through_rfft_irfft() -> None:
    x = RNG.normal(size=(3, 10)).astype(np.float32)
    w = RNG.normal(size=(3, 10)).astype(np.float32)
    gf = fcore.grad(lambda v: fnp.sum(fnp.fft.irfft(fnp.fft.rfft(v) * (1 + 0.5j), n=10) * w))(x)
    gj = jax.grad(lambda v: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(v) * (1 + 0.5j), n=10) * w))(x)
    _close(gf, gj)
    gf = fcore.grad(lambda v: fnp.sum(fnp.abs(fnp.fft.rfft2(v, norm="ortho"))))(x)
    gj = jax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.rfft2(v, norm="ortho"))))(x)
    _close(gf, gj)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 9), m=st.integers(1, 5), kind=st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
       norm=st.sampled_from([None, "ortho", "forward"]), size=st.one_of(st.none(), st.integers(1, 12)))
def test_property_one_dimensional(n: int, m: int, kind: str, norm: str | None, size: int | None) -> None:
    rng = np.random.default_rng(n * 31 + m)
    x = rng.normal(size=(m, n)).astype(np.float32)
    arg = x if kind in ("rfft", "ihfft") else (x + 1j * x[::-1]).astype(np.complex64)
    if kind in ("irfft", "hfft") and size is None and n == 1:
        size = 2
    _close(fcore.jit(lambda v: getattr(fnp.fft, kind)(v, n=size, norm=norm))(arg),
           getattr(jnp.fft, kind)(arg, n=size, norm=norm))

"""``fcore.scipy.signal`` against ``jax.scipy.signal``: every function over its modes and
options (values, dtypes, weak types, shapes), all in one ``jit`` program per library to keep
compiles few; staged types in 64-bit mode; ``grad`` and ``vmap``; the errors JAX raises."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.signal as jss
import numpy as np
import pytest

import fcore
from fcore.scipy import signal as fss
from test_numpy_common import modes

RNG = np.random.default_rng(0)
X = RNG.standard_normal(50).astype(np.float32)
Y = RNG.standard_normal(7).astype(np.float32)
A = RNG.standard_normal((6, 5)).astype(np.float32)
B = RNG.standard_normal((3, 2)).astype(np.float32)
XC = (X + 1j * RNG.standard_normal(50)).astype(np.complex64)
X2 = RNG.standard_normal((3, 64)).astype(np.float32)

Case = tuple[str, tuple[Any, ...], dict[str, Any]]


def _cases() -> list[Case]:
    cases: list[Case] = []
    for mode in ["full", "same", "valid"]:
        cases.extend([
            ("convolve", (X, Y), {"mode": mode}), ("correlate", (X, Y), {"mode": mode}),
            ("convolve", (X, Y), {"mode": mode, "method": "fft"}), ("correlate", (XC, Y), {"mode": mode}),
            ("convolve2d", (A, B), {"mode": mode}), ("correlate2d", (A, B), {"mode": mode}),
            ("correlate2d", (B, A), {"mode": mode}), ("fftconvolve", (A, B), {"mode": mode}),
        ])
    z = np.asarray(jss.stft(jnp.asarray(X2), nperseg=16)[2])
    cases.extend([
        ("fftconvolve", (X2, X2[:, :5]), {"axes": -1}),
        ("detrend", (X2,), {}), ("detrend", (X2,), {"type": "constant", "axis": 0}), ("detrend", (X,), {"bp": [10, 30]}),
        ("welch", (X2,), {"nperseg": 16}), ("welch", (X2,), {"nperseg": 16, "average": "median", "scaling": "spectrum"}),
        ("welch", (XC,), {"nperseg": 10, "detrend": "linear"}), ("csd", (X2, X2[::-1]), {"nperseg": 16}),
        ("stft", (X2,), {"nperseg": 16}), ("stft", (X,), {"nperseg": 8, "boundary": "even", "noverlap": 3, "nfft": 10}),
        ("stft", (X2,), {"nperseg": 16, "axis": 0, "boundary": "odd"}),
        ("istft", (z,), {}), ("istft", (z,), {"nperseg": 16, "noverlap": 4}),
    ])
    return cases


CASES = _cases()


def _all(lib: Any) -> Callable[..., Any]:
    """Every case as one function of the inputs (one program under ``jit``)."""
    def run(*arrays: Any) -> list[Any]:
        return [getattr(lib, name)(*arrays[i: i + len(args)], **kw)
                for (name, args, kw), i in zip(CASES, np.cumsum([0] + [len(a) for _, a, _ in CASES]))]
    return run


def _inputs() -> list[Any]:
    return [np.asarray(a) for _, args, _ in CASES for a in args]


def _compare(got: Any, want: Any, what: str) -> None:
    g_leaves, w_leaves = fcore.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g_leaves) == len(w_leaves), what
    for g, w in zip(g_leaves, w_leaves):
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type), what
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-5, err_msg=what)


def test_signal_matches_jax_under_jit() -> None:
    with modes(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fcore.jit(_all(fss))(*_inputs())
        want = jax.jit(_all(jss))(*_inputs())
    for (name, _, kw), g, w in zip(CASES, got, want):
        _compare(g, w, f"{name} {kw}")


def test_signal_eager_and_x64_types() -> None:
    """A few eager calls (values), and every case's staged types in 64-bit mode."""
    with modes():
        _compare(fss.convolve(X, Y, mode="same"), jss.convolve(jnp.asarray(X), jnp.asarray(Y), mode="same"), "eager convolve")
        _compare(fss.detrend(X), jss.detrend(X), "eager detrend")
    with modes(x64=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = [a.astype(np.float64) if a.dtype == np.float32 else a for a in _inputs()]
        mine = fcore.make_jaxpr(_all(fss))(*inputs).out_avals
        theirs = jax.make_jaxpr(_all(jss))(*inputs).out_avals
        assert [(a.shape, a.dtype, a.weak_type) for a in mine] == [(a.shape, a.dtype, a.weak_type) for a in theirs]


def test_signal_grad_and_vmap() -> None:
    def loss(lib: Any) -> Callable[[Any], Any]:
        return lambda x: (lib.convolve(x, x[:3], mode="same") ** 2).sum() + lib.welch(x, nperseg=8)[1].sum()

    def batched(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.correlate2d(x, x[:2, :2])

    with modes():
        _compare(fcore.jit(fcore.grad(loss(fss)))(X[:20]), jax.jit(jax.grad(loss(jss)))(X[:20]), "grad")
        _compare(fcore.vmap(batched(fss))(np.stack([A, A * 2])), jax.vmap(batched(jss))(np.stack([A, A * 2])), "vmap")


@pytest.mark.parametrize("call", [
    lambda m: m.convolve(X, Y, mode="bogus"),
    lambda m: m.convolve(X, Y, method="bogus"),
    lambda m: m.convolve(X, A),
    lambda m: m.convolve(A, np.ones((7, 1), np.float32)),
    lambda m: m.convolve2d(X, Y),
    lambda m: m.fftconvolve(X, A),
    lambda m: m.fftconvolve(X2, X2[:2], axes=-1),
    lambda m: m.detrend(X, type="quadratic"),
    lambda m: m.detrend(X, bp=[60]),
    lambda m: m.welch(X, nperseg=8, noverlap=8),
    lambda m: m.welch(X, nperseg=8, nfft=4),
    lambda m: m.welch(X, nperseg=8, scaling="power"),
    lambda m: m.stft(X, boundary="wrap"),
    lambda m: m.istft(X),
    lambda m: m.istft(A, time_axis=0, freq_axis=0),
])
def test_signal_errors_match_jax(call: Callable[[Any], Any]) -> None:
    with pytest.raises(ValueError) as theirs:
        call(jss)
    with pytest.raises(ValueError) as mine:
        call(fss)
    assert str(mine.value) == str(theirs.value)


def test_signal_not_implemented() -> None:
    for m in (fss, jss):
        with pytest.raises(NotImplementedError, match="boundary='fill'"):
            m.convolve2d(A, B, boundary="wrap")
        with pytest.raises(NotImplementedError, match="overwrite_data"):
            m.detrend(X, overwrite_data=True)


def test_public_names() -> None:
    assert sorted(n for n in dir(fss) if not n.startswith("_")) == sorted(n for n in dir(jss) if not n.startswith("_"))

"""The incomplete gamma/beta and Bessel primitives of ``fcore.lax`` (``igamma``, ``igammac``,
``igamma_grad_a``, ``betainc``, ``bessel_i0e``, ``bessel_i1e``) and ``random_gamma_grad``,
against ``jax.lax``: the values (bit for bit: both run the same algorithm through XLA), at
domain edges, in every float dtype, jitted, differentiated, batched, and their errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.lax as jlax
import ml_dtypes
import numpy as np
import pytest

import fcore
from fcore import lax
from test_numpy_common import check, check_raises, modes

A = np.array([0.5, 1.0, 2.0, 5.0, 10.0, 0.1, 3.0, 0.0, -1.0, np.nan, 2.0, 1e-3, 40.0, 2.5, np.inf], np.float32)
X = np.array([0.3, 1.0, 5.0, 3.0, 12.0, 2.0, 0.0, 1.0, 1.0, 1.0, np.inf, 0.5, 35.0, -1.0, 3.0], np.float32)
U = np.array([0.3, 0.5, 0.1, 0.9, 0.7, 0.01, 0.5, 0.2, 0.5, 0.5, 0.5, 0.999, 0.45, 1.0, 0.0], np.float32)
V = np.array([-20.0, -3.0, -1e-9, 0.0, 1e-5, 0.5, 7.9, 8.1, 30.0, 700.0, np.inf, -np.inf, np.nan], np.float32)

BINARY = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"]
UNARY = ["bessel_i0e", "bessel_i1e"]
FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32]


def _exact(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    wide = np.float64 if g.dtype == np.float64 else np.float32  # NumPy compares bfloat16 NaNs as unequal
    np.testing.assert_array_equal(g.astype(wide), w.astype(wide))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_incomplete_gamma_values(name: str, dtype: Any) -> None:
    f, g = getattr(lax, name), getattr(jlax, name)
    a, x = A.astype(dtype), X.astype(dtype)
    with modes():
        _exact(f(a, x), g(a, x))
        _exact(fcore.jit(f)(a, x), g(a, x))
        check(f, g, a, x)


@pytest.mark.parametrize("name", BINARY)
def test_incomplete_gamma_float64(name: str) -> None:
    f, g = getattr(lax, name), getattr(jlax, name)
    with modes(x64=True):
        got, want = f(A.astype(np.float64), X.astype(np.float64)), g(A.astype(np.float64), X.astype(np.float64))
        if name == "random_gamma_grad":  # JAX runs it op by op, fcore as one XLA program: the last bit may differ
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14)
        else:
            _exact(got, want)


def test_incomplete_gamma_broadcasts_scalars_and_weak_types() -> None:
    with modes():
        for name in ("igamma", "igammac", "igamma_grad_a"):
            check(getattr(lax, name), getattr(jlax, name), np.float32(2.0), X)
            check(getattr(lax, name), getattr(jlax, name), A, np.float32(3.0))
            check(lambda a, n=name: getattr(lax, n)(a, 2.5), lambda a, n=name: getattr(jlax, n)(a, 2.5), A)


def test_incomplete_gamma_derivatives() -> None:
    a = np.array([0.5, 1.0, 2.0, 5.0, 10.0], np.float32)
    x = np.array([0.3, 1.0, 5.0, 3.0, 12.0], np.float32)
    with modes():
        for name in ("igamma", "igammac"):
            f, g = getattr(lax, name), getattr(jlax, name)
            check(fcore.grad(lambda a, x: f(a, x).sum(), argnums=(0, 1)),
                  jax.grad(lambda a, x: g(a, x).sum(), argnums=(0, 1)), a, x, staged=False)
            check(fcore.jit(fcore.grad(lambda a, x: f(a, x).sum(), argnums=(0, 1))),
                  jax.jit(jax.grad(lambda a, x: g(a, x).sum(), argnums=(0, 1))), a, x, staged=False)
        with pytest.raises(NotImplementedError, match="igamma_grad_a"):
            fcore.grad(lambda a: lax.igamma_grad_a(a, np.float32(1.0)))(np.float32(2.0))
        with pytest.raises(NotImplementedError, match="igamma_grad_a"):  # d2P/da2, as in JAX
            fcore.grad(fcore.grad(lambda a: lax.igamma(a, np.float32(1.0))))(np.float32(2.0))


def test_random_gamma_grad_is_the_implicit_derivative() -> None:
    """d sample / d alpha at fixed quantile = -(dP/da) / (dP/dx)."""
    a = np.array([0.5, 1.0, 2.0, 5.0, 10.0], np.float32)
    x = np.array([0.3, 1.0, 5.0, 3.0, 12.0], np.float32)
    with modes(x64=True):
        a64, x64 = a.astype(np.float64), x.astype(np.float64)
        implicit = -np.asarray(lax.igamma_grad_a(a64, x64)) / np.asarray(fcore.grad(lambda v: lax.igamma(a64, v).sum())(x64))
        np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a64, x64)), implicit, rtol=1e-8)


def test_incomplete_gamma_batching_and_staging() -> None:
    a = A[:6].reshape(2, 3)
    x = X[:6].reshape(2, 3)
    with modes():
        for name in ("igamma", "igammac", "igamma_grad_a"):
            f, g = getattr(lax, name), getattr(jlax, name)
            check(fcore.vmap(f), jax.vmap(g), a, x, staged=False)
        # the three share one batching rule: its axis handling once
        f, g = lax.igamma, jlax.igamma
        check(fcore.vmap(f, (0, None)), jax.vmap(g, (0, None)), a, x[0], staged=False)
        check(fcore.vmap(f, (1, 0)), jax.vmap(g, (1, 0)), a, x.T, staged=False)
        check(fcore.vmap(lax.random_gamma_grad), jax.vmap(jlax.random_gamma_grad), a, x, staged=False)
        closed = fcore.make_jaxpr(lax.igamma)(a, x)
        assert [e.primitive.name for e in closed.jaxpr.eqns] == ["igamma"]
        text = fcore.jit(lax.igamma).trace(a, x).lower().as_text()
        assert "func.call @igamma" in text and "stablehlo.while" in text


def test_incomplete_gamma_errors() -> None:
    with modes():
        for name in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad"):
            check_raises(getattr(lax, name), getattr(jlax, name), np.float32(1.0), np.int32(1), exc=TypeError)
            check_raises(getattr(lax, name), getattr(jlax, name), np.int32(1), np.int32(1), exc=TypeError)
        with pytest.raises(TypeError, match="igamma"):
            lax.igamma(np.ones(3, np.float32), np.ones(2, np.float32))


@pytest.mark.parametrize("dtype", FLOATS)
def test_betainc_values(dtype: Any) -> None:
    b = np.abs(X[::-1]).astype(dtype)
    a, u = A.astype(dtype), U.astype(dtype)
    with modes():
        _exact(lax.betainc(a, b, u), jlax.betainc(a, b, u))
        _exact(fcore.jit(lax.betainc)(a, b, u), jlax.betainc(a, b, u))
        check(lax.betainc, jlax.betainc, a, b, u)
        if dtype == np.float32:  # jax.lax gives Python scalars float32, not the other operands' dtype
            check(lambda x: lax.betainc(2.0, 3.0, x), lambda x: jlax.betainc(2.0, 3.0, x), u)
    with modes(x64=True):
        a64, b64, u64 = (v.astype(np.float64) for v in (A, np.abs(X[::-1]), U))
        _exact(lax.betainc(a64, b64, u64), jlax.betainc(a64, b64, u64))


def test_betainc_derivatives_and_batching() -> None:
    u = np.array([0.1, 0.4, 0.7], np.float32)
    with modes():
        check(fcore.grad(lambda x: lax.betainc(2.0, 3.0, x).sum()), jax.grad(lambda x: jlax.betainc(2.0, 3.0, x).sum()),
              u, staged=False)
        check(fcore.vmap(lax.betainc, (None, 0, 0)), jax.vmap(jlax.betainc, (None, 0, 0)), np.float32(2.0),
              np.array([1.0, 2.0, 3.0], np.float32), u, staged=False)
        with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported."):
            fcore.grad(lambda a: lax.betainc(a, np.float32(3.0), np.float32(0.4)))(np.float32(2.0))
        with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported."):
            jax.grad(lambda a: jlax.betainc(a, np.float32(3.0), np.float32(0.4)))(np.float32(2.0))


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_bessel_values(name: str, dtype: Any) -> None:
    f, g = getattr(lax, name), getattr(jlax, name)
    with modes():
        _exact(f(V.astype(dtype)), g(V.astype(dtype)))
        _exact(fcore.jit(f)(V.astype(dtype)), g(V.astype(dtype)))
        check(f, g, V.astype(dtype))
        check(f, g, 2.5)
    with modes(x64=True):
        _exact(f(V.astype(np.float64)), g(V.astype(np.float64)))


@pytest.mark.parametrize("name", UNARY)
def test_bessel_derivatives_and_batching(name: str) -> None:
    f: Callable[..., Any] = getattr(lax, name)
    g: Callable[..., Any] = getattr(jlax, name)
    pts = np.array([-4.0, -0.5, 0.0, 1e-9, 0.7, 9.0], np.float32)
    with modes():
        check(fcore.grad(lambda v: f(v).sum()), jax.grad(lambda v: g(v).sum()), pts, staged=False)
        check(fcore.grad(fcore.grad(lambda v: f(v).sum())), jax.grad(jax.grad(lambda v: g(v).sum())), np.float32(0.7),
              staged=False)
        check(fcore.vmap(f), jax.vmap(g), pts.reshape(2, 3), staged=False)
    assert "chlo.bessel_i1e" in fcore.jit(lax.bessel_i1e).trace(pts).lower().as_text()


def test_primitive_objects_are_exported() -> None:
    for name in ("igamma_p", "igammac_p", "igamma_grad_a_p", "regularized_incomplete_beta_p", "bessel_i0e_p",
                 "bessel_i1e_p", "digamma_p", "erf_inv_p", "erfc_p", "lgamma_p", "polygamma_p", "zeta_p"):
        assert getattr(lax, name).name == getattr(jlax, name).name

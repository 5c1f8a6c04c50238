"""custom_jvp / custom_vjp / checkpoint, compared with jax where the semantics coincide."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp


def _safe_log1pexp(np_mod: Any, custom: Any) -> Any:
    def plain(x: Any) -> Any:
        return np_mod.log(1.0 + np_mod.exp(x))

    f = custom(plain)

    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), t * (1.0 - 1.0 / (1.0 + np_mod.exp(x)))

    f.defjvp(f_jvp)
    return f


def test_custom_jvp_matches_jax() -> None:
    ff = _safe_log1pexp(fnp, fcore.custom_jvp)
    jf = _safe_log1pexp(jnp, jax.custom_jvp)
    for x in (0.3, 2.0, -1.5):
        np.testing.assert_allclose(float(fcore.grad(ff)(x)), float(jax.grad(jf)(x)), rtol=1e-6)
        np.testing.assert_allclose(float(fcore.jit(fcore.grad(ff))(x)), float(jax.grad(jf)(x)), rtol=1e-6)
    xs = np.linspace(-2, 2, 5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(fcore.vmap(fcore.grad(ff))(xs)), np.asarray(jax.vmap(jax.grad(jf))(xs)),
                               rtol=1e-6)


def test_custom_jvp_rule_is_used() -> None:
    @fcore.custom_jvp
    def f(x: Any) -> Any:
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        return fnp.sin(primals[0]), 3.0 * tangents[0]

    assert float(fcore.grad(f)(0.5)) == 3.0
    _, t = fcore.jvp(f, (0.5,), (2.0,))
    assert float(t) == 6.0
    np.testing.assert_allclose(np.asarray(f(0.5)), np.sin(0.5), rtol=1e-6)


def _clip_gradient(np_mod: Any, custom: Any) -> Any:
    def plain(x: Any, y: Any) -> Any:
        return np_mod.sin(x) * y

    f = custom(plain)

    def fwd(x: Any, y: Any) -> Any:
        return f(x, y), (np_mod.cos(x), np_mod.sin(x), y)

    def bwd(res: Any, ct: Any) -> Any:
        cos_x, sin_x, y = res
        return (np_mod.clip(cos_x * y * ct, -0.1, 0.1), sin_x * ct)

    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_matches_jax() -> None:
    ff = _clip_gradient(fnp, fcore.custom_vjp)
    jf = _clip_gradient(jnp, jax.custom_vjp)
    for x, y in ((0.3, 2.0), (1.0, -0.5)):
        got = fcore.grad(ff, argnums=(0, 1))(x, y)
        want = jax.grad(jf, argnums=(0, 1))(x, y)
        np.testing.assert_allclose([float(g) for g in got], [float(w) for w in want], rtol=1e-6)
        np.testing.assert_allclose(float(fcore.jit(fcore.grad(ff))(x, y)), float(jax.grad(jf)(x, y)), rtol=1e-6)


def test_custom_vjp_forward_mode_is_an_error() -> None:
    f = _clip_gradient(fnp, fcore.custom_vjp)
    with pytest.raises(TypeError, match="forward-mode"):
        fcore.jvp(f, (1.0, 2.0), (1.0, 1.0))


def test_checkpoint_preserves_values_and_gradients() -> None:
    def f(x: Any) -> Any:
        return fnp.sin(fnp.cos(x))

    g = fcore.checkpoint(f)
    assert float(g(0.7)) == float(f(0.7))
    assert float(fcore.grad(g)(0.7)) == float(fcore.grad(f)(0.7))
    assert fcore.remat is fcore.checkpoint

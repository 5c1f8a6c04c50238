"""fcore.experimental.ode.odeint against jax.experimental.ode.odeint: solutions over a pytree
state, adjoint gradients in y0, t and args, a closed-over traced value, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import ode as _jode

import fcore
import fcore.numpy as fnp
from fcore.experimental.ode import odeint

jodeint: Any = _jode.odeint  # JAX's module is untyped; the oracle is called through Any

Y0 = (np.float32(1.0), np.float32(0.5))
TS = np.linspace(0.0, 2.0, 4, dtype=np.float32)
A = np.float32(0.7)


def _dynamics(np_: Any) -> Callable[..., Any]:
    return lambda y, t, a: (-a * y[0] + np_.sin(t) * y[1], a * y[1] * 0.5 - y[0])


def _loss(solve: Any, np_: Any) -> Callable[..., Any]:
    return lambda y0, ts, a: sum((x**2).sum() for x in solve(_dynamics(np_), y0, ts, a))


def _close(ours: Any, theirs: Any) -> None:
    for o, t in zip(fcore.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True):
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-5, atol=2e-6)


def test_odeint_and_its_adjoint_gradients_match_jax() -> None:
    _close(odeint(_dynamics(fnp), Y0, fnp.asarray(TS), A), jodeint(_dynamics(jnp), Y0, jnp.asarray(TS), A))
    ours = fcore.grad(_loss(odeint, fnp), argnums=(0, 1, 2))(Y0, fnp.asarray(TS), A)
    theirs = jax.grad(_loss(jodeint, jnp), argnums=(0, 1, 2))(Y0, jnp.asarray(TS), A)
    _close(ours, theirs)


def test_odeint_closing_over_a_traced_value_under_jit() -> None:
    def final(np_: Any, solve: Any) -> Callable[[Any], Any]:
        return lambda k: solve(lambda y, t: -k * y, np_.ones(2, np_.float32), np_.asarray(TS))[-1].sum()

    _close(fcore.jit(fcore.value_and_grad(final(fnp, odeint)))(A), jax.jit(jax.value_and_grad(final(jnp, jodeint)))(A))


def test_odeint_errors_match_jax() -> None:
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(_dynamics(fnp), Y0, fnp.arange(3), A)
    with pytest.raises(TypeError, match=r"odeint \*args must be arrays or scalars, but got hello"):
        odeint(lambda y, t, s: y, Y0, fnp.asarray(TS), "hello")
    with pytest.raises(TypeError, match=r"odeint \*args must be arrays or scalars, but got hello"):
        jodeint(lambda y, t, s: y, Y0, jnp.asarray(TS), "hello")

"""Gradients survive JAX interop: for the differentiable programs of tests/jax_corpus.py,
fcore's gradient of the imported jaxpr and JAX's gradient of the jaxpr converted back equal
JAX's gradient of the original (custom rules, checkpoints and control flow included)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_corpus import CORPUS, DIFFERENTIABLE

import fcore
import fcore.numpy as fnp
from fcore.core import eval_jaxpr
from fcore.interop import from_jax, to_jax_callable

BY_NAME = {entry[0]: entry for entry in CORPUS}


def _assert_same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert (g.shape, g.dtype) == (w.shape, w.dtype)
    np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def _float_sum(np_: Any, outs: list[Any]) -> Any:
    return sum(np_.sum(o) for o in outs if np_.issubdtype(o.dtype, np_.floating))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_corpus_round_trips_with_equal_gradients(name: str) -> None:
    _, f, args = BY_NAME[name]
    closed = from_jax(jax.make_jaxpr(f)(*args))
    rest = args[1:]
    want = jax.grad(lambda x: _float_sum(jnp, jax.tree_util.tree_leaves(f(x, *rest))))(args[0])
    ours = fcore.grad(lambda x: _float_sum(fnp, eval_jaxpr(closed.jaxpr, closed.consts, x, *rest)))(args[0])
    _assert_same(ours, want)
    back = to_jax_callable(closed)
    _assert_same(jax.grad(lambda x: _float_sum(jnp, back(x, *rest)))(args[0]), want)


@fcore.custom_vjp
def _scaled_sin(x: Any) -> Any:
    return fnp.sin(x) * 2.0


_scaled_sin.defvjp(lambda x: (_scaled_sin(x), fnp.cos(x)), lambda r, ct: (ct * 0.75 * r,))


@fcore.custom_jvp
def _odd_square(x: Any) -> Any:
    return x * x


_odd_square.defjvp(lambda p, t: (_odd_square(p[0]), 1.5 * p[0] * t[0]))


def test_fcore_custom_rules_survive_jax_and_back() -> None:
    """fcore's own custom rules go out as ``jax.custom_jvp``/``custom_vjp`` and come back."""

    def f(x: Any) -> Any:
        return (_scaled_sin(x) + _odd_square(x) + fcore.nn.relu(x)).sum()

    x = np.linspace(-1, 1, 4).astype(np.float32)
    want = fcore.grad(f)(x)
    np.testing.assert_allclose(want, 0.75 * np.cos(x) + 1.5 * x + (x > 0), rtol=1e-6)
    fun = to_jax_callable(fcore.make_jaxpr(f)(x))
    _assert_same(jax.grad(lambda a: fun(a)[0])(x), want)
    back = from_jax(jax.make_jaxpr(fun)(x))
    _assert_same(fcore.grad(lambda a: eval_jaxpr(back.jaxpr, back.consts, a)[0])(x), want)

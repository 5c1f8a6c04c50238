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

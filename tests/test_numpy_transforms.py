"""``fcore.numpy`` under fcore's transformations (grad, vmap, jit) against JAX's."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import fcore
import fcore.numpy as fnp
from fcore import nn
from test_numpy_common import modes

RNG = np.random.default_rng(0)
A = RNG.normal(size=(5, 4)).astype(np.float32)
B = RNG.normal(size=(5, 4, 3)).astype(np.float32)


def _close(got: Any, want: Any, rtol: float = 1e-4) -> None:
    got_l = got if isinstance(got, (tuple, list)) else [got]
    want_l = want if isinstance(want, (tuple, list)) else [want]
    for g, w in zip(got_l, want_l):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)


def test_mlp_grad_and_jit() -> None:
    params = (A[:, :3].T.copy(), A[:, 0].copy(), B[:, 0, :].copy())

    def loss_f(p: Any, x: Any) -> Any:
        w1, b1, w2 = p
        return fnp.mean((fnp.tanh(x @ w1 + b1) @ w2 - 1.0) ** 2)

    def loss_j(p: Any, x: Any) -> Any:
        w1, b1, w2 = p
        return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 - 1.0) ** 2)

    x = A[:, :3]
    with modes():
        _close(fcore.grad(loss_f)(params, x), jax.grad(loss_j)(params, x))
        _close(fcore.jit(loss_f)(params, x), jax.jit(loss_j)(params, x))


def test_vmap_indexing_and_updates() -> None:
    def f(a: Any, i: Any) -> Any:
        return a[i] + a.at[fnp.stack([i, i])].add(1.0).sum() + a[fnp.array([0, 2])].sum() + a[::-1][1]

    def g(a: Any, i: Any) -> Any:
        return a[i] + a.at[jnp.stack([i, i])].add(1.0).sum() + a[jnp.array([0, 2])].sum() + a[::-1][1]

    idx = np.array([0, 3, -1, 2, 1], np.int32)
    with modes():
        _close(fcore.vmap(f)(A, idx), jax.vmap(g)(A, idx))


def test_vmap_select_n_on_per_example_scalars() -> None:
    def f(a: Any, i: Any) -> Any:
        return fnp.where(a[0] > 0, a[0], 0.0) + a.at[i].add(1.0).sum()

    def g(a: Any, i: Any) -> Any:
        return jnp.where(a[0] > 0, a[0], 0.0) + a.at[i].add(1.0).sum()

    idx = np.array([0, 3, -1, 2, 1], np.int32)
    with modes():
        _close(fcore.vmap(f)(A, idx), jax.vmap(g)(A, idx))


def test_grad_through_softmax_where_gather_scatter() -> None:
    def h(a: Any) -> Any:
        return (nn.logsumexp(a, axis=1) + nn.softmax(a)[:, 0] + fnp.where(a > 0, a, 0.1 * a).max(axis=1)
                + a[:, fnp.array([1, 1, 2])].sum(1) + a.at[:, 0].set(3.0).var(axis=1)).sum()

    def hj(a: Any) -> Any:
        return (jax.nn.logsumexp(a, axis=1) + jax.nn.softmax(a)[:, 0] + jnp.where(a > 0, a, 0.1 * a).max(axis=1)
                + a[:, jnp.array([1, 1, 2])].sum(1) + a.at[:, 0].set(3.0).var(axis=1)).sum()

    with modes():
        _close(fcore.grad(h)(A), jax.grad(hj)(A))


def test_vmap_grad_of_onehot_scatters_and_einsum() -> None:
    def k(a: Any) -> Any:
        return a.at[fnp.array([0, 2, 2])].mul(2.0).sum() + a.at[1].max(0.5).sum() + a.at[fnp.array([0, 0])].min(-1.0).sum()

    def kj(a: Any) -> Any:
        return a.at[jnp.array([0, 2, 2])].mul(2.0).sum() + a.at[1].max(0.5).sum() + a.at[jnp.array([0, 0])].min(-1.0).sum()

    with modes():
        _close(fcore.vmap(fcore.grad(k))(A), jax.vmap(jax.grad(kj))(A))
        _close(fcore.vmap(lambda a, b: fnp.einsum("i,ij->j", a, b) + fnp.cumsum(a).sum())(A, B),
               jax.vmap(lambda a, b: jnp.einsum("i,ij->j", a, b) + jnp.cumsum(a).sum())(A, B))

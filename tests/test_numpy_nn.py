"""``fcore.nn`` activations/softmax and ``fcore.scipy.special`` against ``jax.nn``/``jax.scipy``."""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.special as jsp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import nn
from fcore.scipy import special
from test_numpy_common import BF16, check, check_or_raises, modes, sample

ACTIVATIONS = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "elu", "selu", "celu",
               "leaky_relu", "hard_tanh", "soft_sign", "tanh", "hard_sigmoid", "hard_silu", "hard_swish", "identity",
               "mish", "sparse_plus", "sparse_sigmoid", "squareplus"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32], ids=str)
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation(name: str, dtype: Any) -> None:
    x = sample(np.dtype(dtype), (3, 4), seed=51) * (3 if np.dtype(dtype).kind == "f" else 1)
    with modes():
        check_or_raises(getattr(nn, name), getattr(jax.nn, name), x)
        check_or_raises(getattr(nn, name), getattr(jax.nn, name), 1.5)


@pytest.mark.parametrize("approximate", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8], ids=str)
def test_gelu(approximate: bool, dtype: Any) -> None:
    x = sample(np.dtype(dtype), (5,), seed=52)
    with modes():
        check(lambda v: nn.gelu(v, approximate), lambda v: jax.nn.gelu(v, approximate), x)
        check(lambda v: nn.gelu(v, approximate), lambda v: jax.nn.gelu(v, approximate), 0.7)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=str)
def test_softmax_family(axis: Any, dtype: Any) -> None:
    x = sample(np.dtype(dtype), (3, 4), seed=53) * 4
    with modes():
        check(lambda v: nn.softmax(v, axis), lambda v: jax.nn.softmax(v, axis), x)
        check(lambda v: nn.log_softmax(v, axis), lambda v: jax.nn.log_softmax(v, axis), x)
        check(lambda v: nn.logsumexp(v, axis), lambda v: jax.nn.logsumexp(v, axis), x)
        check(lambda v: nn.logsumexp(v, axis, keepdims=True), lambda v: jax.nn.logsumexp(v, axis, keepdims=True), x)
        check(lambda v: special.logsumexp(v, axis), lambda v: jsp.logsumexp(v, axis), x)


def test_softmax_stability_and_where() -> None:
    with modes():
        big = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, 1.0]], np.float32)
        check(nn.softmax, jax.nn.softmax, big)
        check(nn.log_softmax, jax.nn.log_softmax, big)
        check(lambda v: nn.logsumexp(v, axis=1), lambda v: jax.nn.logsumexp(v, axis=1), big)
        check(lambda v: nn.logsumexp(v), lambda v: jax.nn.logsumexp(v), np.full((3,), -np.inf, np.float32))
        w = np.array([[True, False, True], [True, True, False]])
        check(lambda v: nn.softmax(v, where=w), lambda v: jax.nn.softmax(v, where=w), big)
        check(lambda v: nn.log_softmax(v, where=w), lambda v: jax.nn.log_softmax(v, where=w), big)
        b = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0]], np.float32)
        check(lambda v: nn.logsumexp(v, axis=1, b=b), lambda v: jax.nn.logsumexp(v, axis=1, b=b), big * 0.001)
        check(lambda v: nn.logsumexp(v, axis=1, b=b, return_sign=True), lambda v: jax.nn.logsumexp(v, axis=1, b=b, return_sign=True), big * 0.001)
        check(lambda v: nn.logsumexp(v, axis=1, where=w), lambda v: jax.nn.logsumexp(v, axis=1, where=w), big * 0.001)
        check(lambda v: nn.logsumexp(v), lambda v: jax.nn.logsumexp(v), np.arange(4))


def test_one_hot_and_standardize() -> None:
    with modes():
        check(lambda v: nn.one_hot(v, 4), lambda v: jax.nn.one_hot(v, 4), np.array([0, 3, 1, 5, -1]))
        check(lambda v: nn.one_hot(v, 3, dtype=np.int8, axis=0), lambda v: jax.nn.one_hot(v, 3, dtype=np.int8, axis=0), np.array([[0, 2], [1, 1]]))
        x = sample(np.dtype(np.float32), (3, 4), seed=54)
        check(nn.standardize, jax.nn.standardize, x)
        check(lambda v: nn.standardize(v, axis=0), lambda v: jax.nn.standardize(v, axis=0), x)


def test_special() -> None:
    with modes():
        x = np.linspace(-2, 2, 7).astype(np.float32)
        check(special.erf, jsp.erf, x)
        check(special.erfc, jsp.erfc, x)
        check(special.expit, jsp.expit, x)
        check(special.logit, jsp.logit, (x + 2.5) / 5)


def test_staged_softmax_jaxpr() -> None:
    with modes():
        closed = fcore.make_jaxpr(lambda v: nn.softmax(v @ v.T))(np.ones((3, 4), np.float32))
        names = [e.primitive.name for e in closed.eqns]
        assert "reduce_max" in names and "exp" in names and "reduce_sum" in names and "div" in names
        assert bool(fnp.allclose(nn.softmax(np.zeros(4, np.float32)), 0.25))


KINKS = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0], np.float32)


@pytest.mark.parametrize("name", [*ACTIVATIONS, "log1mexp"])
def test_derivatives_at_kinks(name: str) -> None:
    """relu/relu6 have JAX's custom derivatives (0 at the kinks), the others their formulas'."""
    x = np.array([0.1, 0.5, 1.0, 3.0], np.float32) if name == "log1mexp" else KINKS
    if name == "identity":
        return
    with modes():
        check(fcore.grad(lambda v: getattr(nn, name)(v).sum()), jax.grad(lambda v: getattr(jax.nn, name)(v).sum()), x,
              staged=False)


def test_glu_logmeanexp_standardize() -> None:
    y = sample(np.dtype(np.float32), (3, 4), seed=52)
    with modes():
        check(nn.glu, jax.nn.glu, y)
        check(lambda v: nn.glu(v, 0), lambda v: jax.nn.glu(v, 0), np.ones((4, 3), np.float32))
        check(nn.log1mexp, jax.nn.log1mexp, np.array([0.1, 0.5, 1.0, 3.0], np.float32))
        some = np.arange(12).reshape(3, 4) % 3 != 0  # two or three entries per row
        options: list[dict[str, Any]] = [{}, {"axis": 1}, {"axis": 0, "keepdims": True}, {"where": y > 0}]
        for kw in options:
            check(lambda v, k=kw: nn.logmeanexp(v, **k), lambda v, k=kw: jax.nn.logmeanexp(v, **k), y)
        options = [{}, {"algorithm": "stable"}, {"where": some}, {"axis": 0}, {"mean": 0.5, "variance": 2.0}]
        for kw in options:
            check(lambda v, k=kw: nn.standardize(v, **k), lambda v, k=kw: jax.nn.standardize(v, **k), y)
    with pytest.raises(ValueError):
        nn.standardize(y, algorithm="foo")


ATTENTION_OPTIONS: list[dict[str, Any]] = [
    {}, {"is_causal": True}, {"scale": 0.3}, {"local_window_size": 1}, {"local_window_size": (0, 2)},
    {"query_seq_lengths": np.array([2, 3], np.int32)}, {"key_value_seq_lengths": np.array([1, 4], np.int32)},
    {"return_residual": True},
]


@pytest.mark.parametrize("kwargs", ATTENTION_OPTIONS, ids=repr)
def test_dot_product_attention(kwargs: dict[str, Any]) -> None:
    rng = np.random.default_rng(53)
    q = rng.normal(size=(2, 3, 4, 8)).astype(np.float32)
    k = rng.normal(size=(2, 4, 2, 8)).astype(np.float32)
    v = rng.normal(size=(2, 4, 2, 8)).astype(np.float32)
    with modes():
        check(lambda q, k, v: nn.dot_product_attention(q, k, v, **kwargs),
              lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **kwargs), q, k, v)


def test_dot_product_attention_bias_mask_and_transforms() -> None:
    rng = np.random.default_rng(54)
    q = rng.normal(size=(2, 3, 4, 8)).astype(np.float32)
    k = rng.normal(size=(2, 4, 2, 8)).astype(np.float32)
    v = rng.normal(size=(2, 4, 2, 8)).astype(np.float32)
    bias = rng.normal(size=(2, 4, 3, 4)).astype(np.float32)
    mask = rng.random((2, 1, 3, 4)) > 0.3
    with modes():
        check(lambda q: nn.dot_product_attention(q, k, v, bias, mask), lambda q: jax.nn.dot_product_attention(q, k, v, bias, mask), q)
        check(lambda q, k, v: nn.dot_product_attention(q, k, v), lambda q, k, v: jax.nn.dot_product_attention(q, k, v),
              q.astype(BF16), k.astype(BF16), v.astype(BF16))
        check(fcore.grad(lambda q: nn.dot_product_attention(q, k, v, is_causal=True).sum()),
              jax.grad(lambda q: jax.nn.dot_product_attention(q, k, v, is_causal=True).sum()), q, staged=False)
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(q[:, :, :3], k, v)

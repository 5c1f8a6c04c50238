"""A corpus of ordinary JAX programs (written against ``jax`` itself) for the interop and
parser tests: each entry is a name, a function and example arguments.

The programs cover what JAX 0.10 emits for everyday code: gradients (``add_any``,
transposes), ``x[i]`` with a traced index (``gather`` with a mode), control flow, custom
derivatives, rematerialization, sorting, random numbers, convolutions and ``einsum``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

NpArray = np.ndarray[Any, Any]
Entry = tuple[str, Callable[..., Any], tuple[Any, ...]]

_RNG = np.random.default_rng(0)
X6 = np.linspace(-1.7, 2.3, 6, dtype=np.float32)
X23 = X6.reshape(2, 3)
W1 = _RNG.normal(size=(3, 4)).astype(np.float32)
W2 = _RNG.normal(size=(4, 2)).astype(np.float32)
Y = _RNG.normal(size=(2, 2)).astype(np.float32)


def mlp_loss(params: tuple[Any, Any], x: Any, y: Any) -> Any:
    w1, w2 = params
    h = jnp.tanh(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


def mlp_grad(w1: Any, w2: Any, x: Any, y: Any) -> Any:
    return jax.value_and_grad(mlp_loss)((w1, w2), x, y)


def traced_index(x: Any, i: Any) -> Any:
    return x[i] * 2.0 + x[:, i].sum()


def gather(x: Any, idx: Any) -> Any:
    return x[idx] * 2.0 + x[idx[0]]


def scatter_add(x: Any, i: Any) -> Any:
    return jnp.asarray(x).at[i].add(10.0)


def scan_rnn(w: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = jnp.tanh(h @ w + x)
        return h, h.sum()

    return lax.scan(step, jnp.zeros(3, jnp.float32), xs)


def scan_rnn_grad(w: Any, xs: Any) -> Any:
    return jax.grad(lambda w: scan_rnn(w, xs)[1].sum())(w)


def while_loop(x: Any) -> Any:
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5 + 0.5), (0, x))


def fori_sum(n: Any, x: Any) -> Any:
    return lax.fori_loop(0, n, lambda i, acc: acc + x * i, jnp.zeros_like(x))


def cond(x: Any) -> Any:
    return lax.cond(x.sum() > 0, lambda a: jnp.sin(a), lambda a: a * 3.0, x)


@jax.custom_jvp
def softplus(x: Any) -> Any:
    return jnp.logaddexp(x, 0.0)


@softplus.defjvp
def _softplus_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return softplus(x), t * jax.nn.sigmoid(x)


@jax.custom_jvp
def odd_square(x: Any) -> Any:
    """``x**2`` whose derivative is declared to be ``1.5 * x``: imports must keep the rule."""
    return x * x


@odd_square.defjvp
def _odd_square_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return odd_square(x), 1.5 * x * t


@jax.custom_vjp
def clipped_sin(x: Any) -> Any:
    return jnp.sin(x) * 2.0


def _clipped_sin_fwd(x: Any) -> tuple[Any, Any]:
    return clipped_sin(x), jnp.cos(x)


def _clipped_sin_bwd(r: Any, ct: Any) -> tuple[Any]:
    return (jnp.clip(ct * 0.75 * r, -1.0, 1.0),)


clipped_sin.defvjp(_clipped_sin_fwd, _clipped_sin_bwd)


def custom_jvp_program(x: Any) -> Any:
    return softplus(x).sum() + odd_square(x).sum()


def custom_vjp_program(x: Any) -> Any:
    return clipped_sin(x * 2.0).sum()


def custom_rules_with_closures(x: Any, y: Any) -> Any:
    """Custom rules closing over a traced value (the calls get closure operands, ``num_consts``)."""

    @jax.custom_jvp
    def f(a: Any) -> Any:
        return a * y

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 3.0 * y))

    @jax.custom_vjp
    def g(a: Any) -> Any:
        return jnp.sin(a) * y

    g.defvjp(lambda a: (g(a), (a, y)), lambda r, ct: (ct * 5.0 * r[1],))
    return (f(x) + g(x)).sum()


def checkpointed(x: Any) -> Any:
    f = jax.checkpoint(lambda a: jnp.sin(jnp.sin(a)) * a)
    return f(x).sum()


def sort_top_k(x: Any) -> Any:
    values, idx = lax.top_k(x, 3)
    return jnp.sort(x), jnp.argsort(-x), values, idx


def random_normal(key: Any) -> Any:
    return jax.random.normal(key, (2, 3))


def random_split_uniform(key: Any) -> Any:
    k1, k2 = jax.random.split(key)
    return jax.random.uniform(k1, (4,)) + jax.random.uniform(jax.random.fold_in(k2, 3), (4,))


def random_typed_key(seed: Any) -> Any:
    return jax.random.bits(jax.random.key(seed), (3,))


def randint_typed_key(seed: Any) -> Any:
    """Structural operations (``slice``, ``squeeze``) on a typed key array."""
    return jax.random.randint(jax.random.key(seed), (3,), 0, 10)


def det_searchsorted(x: Any) -> Any:
    """``platform_index`` and a platform-dependent ``cond``; total-order ``le_to``; shared
    jaxprs JAX prints after their first use."""
    return jnp.linalg.det(jnp.outer(x, x) + jnp.eye(x.shape[0])), jnp.searchsorted(jnp.sort(x), 0.5)


def conv(x: Any, w: Any) -> Any:
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))


def einsum(a: Any, b: Any) -> Any:
    return jnp.einsum("ij,jk->ik", a, b) + jnp.einsum("ij,ij->i", a, a)[:, None]


def cumsum(x: Any) -> Any:
    return jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0)


def softmax_jit(x: Any) -> Any:
    return jax.jit(jax.nn.softmax)(x) + jax.nn.relu(x)


CORPUS: list[Entry] = [
    ("mlp_grad", mlp_grad, (W1, W2, X23, Y)),
    ("traced_index", traced_index, (X23, np.int32(1))),
    ("gather", gather, (X6, np.array([4, 0, 5], np.int32))),
    ("scatter_add", scatter_add, (X6, np.int32(4))),
    ("scan_rnn", scan_rnn, (W1[:, :3], X23.repeat(2, 0).reshape(4, 3))),
    ("scan_rnn_grad", scan_rnn_grad, (W1[:, :3], X23.repeat(2, 0).reshape(4, 3))),
    ("while_loop", while_loop, (X6,)),
    ("fori_sum", fori_sum, (np.int32(4), X6)),
    ("cond", cond, (X6,)),
    ("custom_jvp", custom_jvp_program, (X6,)),
    ("custom_vjp", custom_vjp_program, (X6,)),
    ("custom_closures", custom_rules_with_closures, (X6, np.float32(2.0))),
    ("checkpoint", checkpointed, (X6,)),
    ("sort_top_k", sort_top_k, (X6,)),
    ("random_normal", random_normal, (np.array([0, 42], np.uint32),)),
    ("random_split_uniform", random_split_uniform, (np.array([1, 7], np.uint32),)),
    ("random_typed_key", random_typed_key, (np.int32(5),)),
    ("randint_typed_key", randint_typed_key, (np.int32(3),)),
    ("det_searchsorted", det_searchsorted, (X6[:4],)),
    ("conv", conv, (_RNG.normal(size=(1, 2, 5, 5)).astype(np.float32), _RNG.normal(size=(3, 2, 3, 3)).astype(np.float32))),
    ("einsum", einsum, (X23, W1)),
    ("cumsum", cumsum, (X23,)),
    ("softmax_jit", softmax_jit, (X23,)),
]

#: Entries whose first argument is a float array that ``jax.grad`` of the summed outputs accepts.
DIFFERENTIABLE = ["scan_rnn", "cond", "custom_jvp", "custom_vjp", "custom_closures", "checkpoint", "conv", "einsum",
                  "cumsum", "softmax_jit", "traced_index", "gather", "scatter_add"]

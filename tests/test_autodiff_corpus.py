"""Differential corpus: fcore's transformations against JAX's on one set of functions.

Each corpus entry is written once against a ``Lib`` (``numpy``/``lax``/``nn`` modules) and run
with fcore's (``fnp``, ``fcore.lax``, ``fcore.nn``) and JAX's (``jnp``, ``jax.lax``, ``jax.nn``)
modules on the same seeded NumPy inputs. Every transformation output is compared with JAX's:
values (``assert_allclose``), dtypes, shapes, weak types and pytree structure.

Per entry: the plain value, ``value_and_grad`` (scalar losses), ``jvp`` and ``linearize`` with a
random tangent, ``vjp`` with a random cotangent, ``jacfwd``/``jacrev`` (small outputs), ``vmap``
over a leading batch axis, ``vmap(grad)`` per-example gradients, and for some ``hessian`` and
``jit(grad)``/``grad(jit)``. Integer and boolean arguments sit next to float ones; the
transformations differentiate only the float arguments (``argnums``), the others are closed over.

The end of the file checks error behaviour against JAX's; the front end's options, argument
checks and ``float0`` handling are covered in detail by ``test_api_*.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import tree_util as ftu
from test_numpy_common import modes

F = TypeVar("F", bound=Callable[..., Any])
Rng = np.random.Generator
Args = tuple[Any, ...]


@dataclass(frozen=True)
class Lib:
    """One library: its numpy, lax, nn modules and its transformations (``fcore`` or ``jax``)."""

    name: str
    np: Any
    lax: Any
    nn: Any
    ad: Any


FC = Lib("fcore", fnp, fcore.lax, fcore.nn, fcore)
JX = Lib("jax", jnp, jax.lax, jax.nn, jax)


@dataclass(frozen=True)
class Case:
    """A corpus entry: ``fun(lib, *args)`` with ``args = make_args(rng)``."""

    name: str
    fun: Callable[..., Any]
    make_args: Callable[[Rng], Args]
    #: Which positional arguments are differentiated (an int means the non-tuple form).
    argnums: int | tuple[int, ...] = 0
    #: True when the output is one float scalar (grad, per-example grads apply).
    scalar: bool = False
    #: vmap in_axes over the arguments.
    in_axes: int | tuple[int | None, ...] = 0
    jac: bool = True
    hess: bool = False
    jit: bool = False
    #: Reverse mode (vjp, grad, jacrev) applies; JAX has no reverse mode for while_loop.
    reverse: bool = True
    x64: bool = False
    #: Python control flow on concrete values: neither jit nor vmap applies.
    concrete: bool = False

    @property
    def diff(self) -> tuple[int, ...]:
        return (self.argnums,) if isinstance(self.argnums, int) else self.argnums

    def args(self, seed: int = 0) -> Args:
        return self.make_args(np.random.default_rng(seed))

    def bound(self, lib: Lib) -> Callable[..., Any]:
        return functools.partial(self.fun, lib)

    def restricted(self, lib: Lib, args: Args) -> Callable[..., Any]:
        """The function of the differentiated arguments only (the others closed over)."""

        def g(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(self.diff, diff):
                full[i] = d
            return self.fun(lib, *full)

        return g


CORPUS: list[Case] = []


def case(make_args: Callable[[Rng], Args], name: str | None = None, **kw: Any) -> Callable[[F], F]:
    """Register ``fun`` in the corpus (under ``name``, default the function's name)."""

    def register(fun: F) -> F:
        CORPUS.append(Case(name or fun.__name__, fun, make_args, **kw))
        return fun

    return register


def normal(rng: Rng, *shape: int, dtype: type[np.floating[Any]] = np.float32) -> np.ndarray[Any, Any]:
    return rng.normal(size=shape).astype(dtype)


def away_from_zero(rng: Rng, *shape: int, dtype: type[np.floating[Any]] = np.float32) -> np.ndarray[Any, Any]:
    """Normal values with magnitude at least 0.3 (for ``prod``, divisions, powers)."""
    v = rng.normal(size=shape)
    return (np.sign(v) * (np.abs(v) + 0.3)).astype(dtype)


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


@case(lambda r: (normal(r, 3, 4),), scalar=True, hess=True, jit=True)
def trig_chain(L: Lib, x: Any) -> Any:
    y = L.np.sin(L.np.cos(x)) * L.np.tan(x / 4) + L.np.sin(x) ** 2
    return L.np.sum(y * L.np.cosh(x / 3))


case(lambda r: (normal(r, 3, 4, dtype=np.float64),), "trig_chain_f64", scalar=True, hess=True, x64=True)(trig_chain)


@case(lambda r: (normal(r, 5),))
def exp_log_chain(L: Lib, x: Any) -> Any:
    return L.np.log1p(L.np.exp(x)) - L.np.log(x * x + 1) + L.np.expm1(x / 3) * L.np.sqrt(L.np.exp(-x * x) + 1)


@case(lambda r: (away_from_zero(r, 4), normal(r, 4)), argnums=(0, 1), scalar=True, hess=True)
def powers_and_division(L: Lib, x: Any, y: Any) -> Any:
    return L.np.sum(x**3 / (1 + y**2) + L.np.abs(y) ** 1.5 + (x**2 + 1) ** -0.5 - 1 / x + L.np.arctan2(x, y))


def mlp_args(dtype: type[np.floating[Any]]) -> Callable[[Rng], Args]:
    def make(r: Rng) -> Args:
        params = {"w1": normal(r, 3, 5, dtype=dtype), "b1": normal(r, 5, dtype=dtype),
                  "w2": normal(r, 5, 2, dtype=dtype), "b2": normal(r, 2, dtype=dtype)}
        return params, normal(r, 4, 3, dtype=dtype), normal(r, 4, 2, dtype=dtype)

    return make


@case(mlp_args(np.float32), scalar=True, in_axes=(None, 0, 0), hess=True, jit=True)
def mlp_tanh(L: Lib, p: Any, x: Any, y: Any) -> Any:
    h = L.np.tanh(x @ p["w1"] + p["b1"])
    out = L.np.dot(h, p["w2"]) + p["b2"]
    return L.np.mean((out - y) ** 2)


case(mlp_args(np.float64), "mlp_tanh_f64", scalar=True, in_axes=(None, 0, 0), jit=True, x64=True)(mlp_tanh)


@case(lambda r: (normal(r, 3, 4), normal(r, 2, 4), normal(r, 2, 5, 3)), argnums=(0, 1), scalar=True,
      in_axes=(None, None, 0), jit=True)
def mlp_dot_general(L: Lib, w: Any, v: Any, x: Any) -> Any:
    h = L.np.tanh(L.lax.dot_general(x, w, (((2,), (0,)), ((), ()))))  # (2, 5, 4)
    o = L.lax.dot_general(h, v, (((2,), (1,)), ((0,), (0,))))  # batch dim 0: (2, 5)
    return L.np.sum(L.np.tanh(o) ** 2)


@case(lambda r: (normal(r, 4, 5), r.integers(0, 5, 4).astype(np.int32)), scalar=True, hess=True)
def softmax_xent_int_labels(L: Lib, logits: Any, labels: Any) -> Any:
    lse = L.nn.logsumexp(logits, axis=-1)
    picked = L.np.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return L.np.mean(lse - picked)


@case(lambda r: (normal(r, 2, 3),))
def softmax_log_softmax(L: Lib, x: Any) -> Any:
    return L.nn.softmax(x, axis=-1) * L.nn.log_softmax(x, axis=0)


@case(lambda r: (normal(r, 3, 4),))
def reductions_tuple_out(L: Lib, x: Any) -> Any:
    return L.np.sum(x, axis=0) * 2, L.np.mean(x, axis=1, keepdims=True) * x, x.sum()


@case(lambda r: (normal(r, 3, 4),), scalar=True)
def max_min_reductions(L: Lib, x: Any) -> Any:
    return L.np.max(x, axis=1).sum() + L.np.min(x, axis=0, keepdims=True).mean() + x.max() - L.np.amin(x)


@case(lambda r: (away_from_zero(r, 3, 4),), scalar=True, hess=True)
def prod_var_std(L: Lib, x: Any) -> Any:
    return (L.np.prod(x, axis=-1).sum() + L.np.var(x, axis=0).sum() + L.np.std(x)
            + x.prod(axis=(0,), keepdims=True).mean())


@case(lambda r: (normal(r, 3), normal(r, 2, 4, 1), np.float32(r.normal())), argnums=(0, 1, 2))
def broadcast_ranks(L: Lib, a: Any, b: Any, c: Any) -> Any:
    return a * b + c / (1 + b**2) + a[None, None, :] ** 2 * c


@case(lambda r: (normal(r, 6), normal(r, 6)), argnums=(0, 1), scalar=True)
def where_select_clip(L: Lib, x: Any, y: Any) -> Any:
    w = L.np.where(x > 0, x**2, L.np.sin(y))
    s = L.lax.select_n(y < x, y - x, x * y) + L.lax.select(x < y, L.np.cos(x), y)
    return L.np.sum(w + s + L.np.maximum(x, 0.1 * x) + L.np.clip(y, -0.5, 0.5))


@case(lambda r: (normal(r, 4, 6),))
def slicing_concatenate(L: Lib, x: Any) -> Any:
    a = x[1:, ::2]
    b = x[:-1, 1::2]
    c = L.np.concatenate([a, b * 2, x[None, 0, :3]], axis=0)  # (7, 3)
    return L.np.stack([c[:, 0], c[:, 2]], axis=1).ravel() + x[-1, -1]


@case(lambda r: (normal(r, 2, 3, 4), normal(r, 4, 3)), argnums=(0, 1))
def reshape_transpose(L: Lib, x: Any, y: Any) -> Any:
    a = L.np.transpose(x, (2, 0, 1)).reshape(4, 6) * L.np.swapaxes(x, 0, 2).reshape(4, 6)
    b = (y.T[None] * L.np.moveaxis(x, 0, 0)).sum(axis=1) + x.reshape(2, 12)[:, ::3]
    return a, b


@case(lambda r: (normal(r, 5, 3), r.integers(0, 5, 4).astype(np.int32), normal(r, 4, 3)), argnums=(0, 2),
      scalar=True)
def gather_scatter_int_index(L: Lib, x: Any, idx: Any, y: Any) -> Any:
    g = x[idx]
    s = x.at[idx].add(y * 2)
    return (g * y).sum() + (s**2).sum() + x[idx[0]].sum()


@case(lambda r: (normal(r, 3, 4),))
def cumsum_cumprod(L: Lib, x: Any) -> Any:
    return L.np.cumsum(x, axis=1) * L.np.cumprod(x / 2 + 1, axis=0)


@case(lambda r: ({"a": normal(r, 3), "b": [normal(r, 2, 3), np.float32(r.normal())]},))
def dict_in_tuple_out(L: Lib, d: Any) -> Any:
    a, (m, s) = d["a"], d["b"]
    return (a * s).sum(), {"c": m @ a, "d": [L.np.sin(m) * s, a[::-1]]}


def layers_args(r: Rng) -> Args:
    return [(normal(r, 3, 3), normal(r, 3)), (normal(r, 3, 2), normal(r, 2))], normal(r, 4, 3)


@case(layers_args, scalar=True, in_axes=(None, 0), jit=True)
def nested_list_params(L: Lib, layers: Any, x: Any) -> Any:
    for w, b in layers[:-1]:
        x = L.np.maximum(x @ w + b, 0.0)
    w, b = layers[-1]
    return L.np.sum(L.np.tanh(x @ w + b))


def int_bool_args(r: Rng) -> Args:
    return normal(r, 5), r.integers(-3, 4, 5).astype(np.int32), r.random(5) > 0.5, np.int32(r.integers(0, 5))


@case(int_bool_args, scalar=True, jit=True)
def int_and_bool_args(L: Lib, x: Any, n: Any, flag: Any, k: Any) -> Any:
    y = L.np.where(flag, x * n, x / (n**2 + 1))
    return y.sum() + x[k] * k + L.np.sum(flag * x)


@case(lambda r: (normal(r, 3),), scalar=True, concrete=True)
def python_control_flow(L: Lib, x: Any) -> Any:
    """Python ``if``/``for`` on concrete values (works outside jit in both libraries)."""
    for i in range(3):
        if x.sum() > 0:
            x = L.np.sin(x) * 2
        else:
            x = L.np.cos(x) + x * i
    total = x.sum()
    if total > 1.0:
        total = total**2
    return total


@case(lambda r: (normal(r, 4, 5), normal(r, 4, 5)), argnums=(0, 1), scalar=True)
def argmax_argmin_pick(L: Lib, x: Any, y: Any) -> Any:
    i = L.np.argmax(x, axis=1)
    picked = L.np.take_along_axis(y, i[:, None], axis=1)
    return (picked**2).sum() + x.max(axis=1).sum() + y[L.np.argmin(y.sum(axis=1))].sum()


@case(lambda r: (normal(r, 3), np.float32(r.normal())), argnums=(0, 1), scalar=True)
def lax_cond(L: Lib, x: Any, y: Any) -> Any:
    out = L.lax.cond(y > 0, lambda a: L.np.sin(a) * y, lambda a: L.np.cos(a) - y, x)
    return out.sum()


@case(lambda r: (normal(r, 3), np.int32(r.integers(0, 3))))
def lax_switch_int_index(L: Lib, x: Any, i: Any) -> Any:
    return L.lax.switch(i, [lambda a: a * 2, L.np.sin, lambda a: a**2 - a], x)


@case(lambda r: (normal(r, 3, 3) * 0.5, normal(r, 5, 3), normal(r, 3)), argnums=(0, 1, 2), scalar=True,
      in_axes=(None, 0, 0), jit=True)
def lax_scan_rnn(L: Lib, w: Any, xs: Any, h0: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = L.np.tanh(h @ w + x)
        return h, h * 2

    h, ys = L.lax.scan(step, h0, xs)
    return (ys**2).sum() + h.sum()


@case(lambda r: (normal(r, 3),))
def lax_fori_loop(L: Lib, x: Any) -> Any:
    return L.lax.fori_loop(0, 4, lambda i, v: v * L.np.cos(v) + i, x)


@case(lambda r: (normal(r, 3),), reverse=False)
def lax_while_loop_forward(L: Lib, x: Any) -> Any:
    def body(c: tuple[Any, Any]) -> tuple[Any, Any]:
        return c[0] + 1, c[1] * 0.5 + L.np.sin(c[1])

    return L.lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


@case(lambda r: (normal(r, 3, 4), normal(r, 4, 2), normal(r, 3)), argnums=(0, 1, 2))
def einsum_tensordot(L: Lib, a: Any, b: Any, v: Any) -> Any:
    m = L.np.einsum("ij,jk->ik", a, b) + L.np.tensordot(a, b, axes=1)
    return m, L.np.einsum("i,ij->j", v, a) + L.np.einsum("ij,ij->", a, a)


@case(lambda r: (normal(r, 4), normal(r, 4)), argnums=(0, 1), scalar=True, hess=True)
def vector_dot_outer(L: Lib, u: Any, v: Any) -> Any:
    return L.np.dot(u, v) + L.np.outer(u, v).sum() * 0.5 + u @ L.np.outer(v, u) @ v


@case(lambda r: (normal(r, 4),), scalar=True)
def stop_gradient_mix(L: Lib, x: Any) -> Any:
    sg = L.lax.stop_gradient(x)
    return (x * sg).sum() + L.np.exp(sg) @ x


@case(lambda r: (normal(r, 6), np.int32(r.integers(0, 4))))
def dynamic_slice_int_start(L: Lib, x: Any, i: Any) -> Any:
    return L.lax.dynamic_slice(x, (i,), (3,)) * 2 + L.lax.dynamic_update_slice(x, x[:2] ** 2, (i,))[:3]


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def tolerance(want: np.ndarray[Any, Any]) -> tuple[float, float]:
    """``(rtol, atol)``; atol scales with the leaf's largest entry, since sums of products lose
    absolute, not relative, precision in their small entries."""
    scale = max(1.0, float(np.abs(want).max(initial=0.0))) if want.dtype.kind in "fc" else 1.0
    if want.dtype == np.float64:
        return 1e-12, 1e-13 * scale
    return 1e-5, 2e-6 * scale


def assert_same(got: Any, want: Any, what: str) -> None:
    """Same pytree structure, and leaf by leaf the same shape, dtype, weak type and values."""
    g_leaves, g_tree = ftu.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree), f"{what}: tree {g_tree} != jax's {w_tree}"
    for k, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        g_np, w_np = np.asarray(g), np.asarray(w)
        where = f"{what}, leaf {k}"
        assert g_np.dtype == w_np.dtype, f"{where}: dtype {g_np.dtype} != jax's {w_np.dtype}"
        assert g_np.shape == w_np.shape, f"{where}: shape {g_np.shape} != jax's {w_np.shape}"
        g_weak, w_weak = getattr(g, "weak_type", False), getattr(w, "weak_type", False)
        assert g_weak == w_weak, f"{where}: weak_type {g_weak} != jax's {w_weak}"
        rtol, atol = tolerance(w_np)
        np.testing.assert_allclose(g_np, w_np, rtol=rtol, atol=atol, err_msg=where)


def both(c: Case, run: Callable[[Lib], Any], what: str) -> None:
    """Run ``run`` with fcore and with jax (in the case's x64 mode) and compare the results.

    JAX's side runs under ``jax.jit`` (one compilation instead of one per eager op, which is
    what keeps this file fast), except for cases with Python control flow on concrete values.
    """
    with modes(x64=c.x64):
        want = run(JX) if c.concrete else jax.jit(lambda: run(JX))()
        got = run(FC)
    assert_same(got, want, what)


def as_arrays(L: Lib, args: Args) -> Args:
    """The NumPy arguments as the library's arrays (so that ``x.at`` and friends work)."""
    out: Args = jax.tree_util.tree_map(L.np.asarray, args)
    return out


def output_shape(c: Case, args: Args) -> Any:
    """JAX's output for ``args``, as ``jax.ShapeDtypeStruct`` leaves (arrays for concrete cases)."""
    with modes(x64=c.x64):
        if c.concrete:  # jax.eval_shape would trace it abstractly: run it
            return c.fun(JX, *as_arrays(JX, args))
        return jax.eval_shape(lambda: c.fun(JX, *as_arrays(JX, args)))


def random_like(tree: Any, seed: int) -> Any:
    """Normal values with the shapes and dtypes of ``tree``'s leaves (arrays or ShapeDtypeStructs)."""
    rng = np.random.default_rng(seed)
    return jax.tree_util.tree_map(lambda x: rng.normal(size=x.shape).astype(x.dtype), tree)


def batched_args(c: Case, size: int = 3) -> Args:
    """``size`` examples stacked along axis 0 for the mapped arguments (seed 0 for the others)."""
    examples = [c.args(seed) for seed in range(size)]
    axes = c.in_axes if isinstance(c.in_axes, tuple) else (0,) * len(examples[0])
    out = []
    for i, ax in enumerate(axes):
        if ax is None:
            out.append(examples[0][i])
        else:
            out.append(jax.tree_util.tree_map(lambda *xs: np.stack(xs), *(e[i] for e in examples)))
    return tuple(out)


def ids(c: Case) -> str:
    return c.name


def select(pred: Callable[[Case], bool]) -> list[Case]:
    return [c for c in CORPUS if pred(c)]


# ---------------------------------------------------------------------------
# Tests over the corpus
# ---------------------------------------------------------------------------


def test_corpus_size() -> None:
    assert len(CORPUS) >= 24
    assert len({c.name for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("c", CORPUS, ids=ids)
def test_value(c: Case) -> None:
    args = c.args()
    both(c, lambda L: c.fun(L, *as_arrays(L, args)), "value")
    out = output_shape(c, args)
    is_scalar = not isinstance(out, (tuple, list, dict)) and out.shape == () and jnp.issubdtype(out.dtype, jnp.floating)
    assert c.scalar == is_scalar, "the case's `scalar` flag does not match its output"


@pytest.mark.parametrize("c", select(lambda c: c.scalar), ids=ids)
def test_value_and_grad(c: Case) -> None:
    args = c.args()
    both(c, lambda L: L.ad.value_and_grad(c.bound(L), argnums=c.argnums)(*args), "value_and_grad")


@pytest.mark.parametrize("c", select(lambda c: c.scalar and c.reverse), ids=ids)
def test_grad_has_aux(c: Case) -> None:
    """The auxiliary output comes back as primal values (here: the loss itself, and its square)."""
    args = c.args()

    def with_aux(L: Lib) -> Callable[..., Any]:
        def f(*a: Any) -> Any:
            loss = c.fun(L, *a)
            return loss, {"loss": loss, "sq": loss * loss}

        return f

    both(c, lambda L: L.ad.grad(with_aux(L), argnums=c.argnums, has_aux=True)(*args), "grad(has_aux)")


@pytest.mark.parametrize("c", CORPUS, ids=ids)
def test_jvp_and_linearize(c: Case) -> None:
    args = c.args()
    primals = tuple(args[i] for i in c.diff)
    tangents = random_like(primals, seed=1)
    both(c, lambda L: L.ad.jvp(c.restricted(L, args), primals, tangents), "jvp")
    tangents2 = random_like(primals, seed=2)

    def lin(L: Lib) -> Any:
        out, f_jvp = L.ad.linearize(c.restricted(L, args), *primals)
        return out, f_jvp(*tangents), f_jvp(*tangents2)

    both(c, lin, "linearize")


@pytest.mark.parametrize("c", select(lambda c: c.reverse), ids=ids)
def test_vjp(c: Case) -> None:
    args = c.args()
    primals = tuple(args[i] for i in c.diff)
    ct = random_like(output_shape(c, args), seed=3)

    def run(L: Lib) -> Any:
        out, f_vjp = L.ad.vjp(c.restricted(L, args), *primals)
        return out, f_vjp(ct)

    both(c, run, "vjp")


@pytest.mark.parametrize("c", select(lambda c: c.jac), ids=ids)
def test_jacfwd(c: Case) -> None:
    args = c.args()
    both(c, lambda L: L.ad.jacfwd(c.bound(L), argnums=c.argnums)(*args), "jacfwd")


@pytest.mark.parametrize("c", select(lambda c: c.jac and c.reverse), ids=ids)
def test_jacrev(c: Case) -> None:
    args = c.args()
    both(c, lambda L: L.ad.jacrev(c.bound(L), argnums=c.argnums)(*args), "jacrev")


@pytest.mark.parametrize("c", select(lambda c: not c.concrete), ids=ids)
def test_vmap(c: Case) -> None:
    args = batched_args(c)
    both(c, lambda L: L.ad.vmap(c.bound(L), in_axes=c.in_axes)(*args), "vmap")


@pytest.mark.parametrize("c", select(lambda c: c.scalar and not c.concrete), ids=ids)
def test_vmap_of_grad(c: Case) -> None:
    """Per-example gradients."""
    args = batched_args(c)
    both(c, lambda L: L.ad.vmap(L.ad.grad(c.bound(L), argnums=c.argnums), in_axes=c.in_axes)(*args),
         "vmap(grad)")


@pytest.mark.parametrize("c", select(lambda c: c.hess), ids=ids)
def test_hessian(c: Case) -> None:
    args = c.args()
    both(c, lambda L: L.ad.hessian(c.bound(L), argnums=c.argnums)(*args), "hessian")


@pytest.mark.parametrize("c", select(lambda c: c.jit), ids=ids)
def test_jit_of_grad_and_grad_of_jit(c: Case) -> None:
    args = c.args()
    both(c, lambda L: L.ad.jit(L.ad.grad(c.bound(L), argnums=c.argnums))(*args), "jit(grad)")
    both(c, lambda L: L.ad.grad(L.ad.jit(c.bound(L)), argnums=c.argnums)(*args), "grad(jit)")


# ---------------------------------------------------------------------------
# Error behaviour, against JAX's
# ---------------------------------------------------------------------------


def raised(fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def errors(run: Callable[[Lib], Any]) -> tuple[BaseException, BaseException]:
    """The exceptions fcore and jax raise for ``run``."""
    with modes():
        return raised(lambda: run(FC)), raised(lambda: run(JX))


X3 = np.arange(3, dtype=np.float32)


def test_error_grad_of_non_scalar_output() -> None:
    got, want = errors(lambda L: L.ad.grad(L.np.sin)(X3))
    assert type(got) is type(want) is TypeError
    assert "scalar" in str(got) and "(3,)" in str(got), str(got)


def test_error_grad_of_tuple_output() -> None:
    got, want = errors(lambda L: L.ad.grad(lambda x: (x.sum(), x.sum()))(X3))
    assert type(got) is type(want) is TypeError
    assert "scalar" in str(got), str(got)


@pytest.mark.parametrize("argnums", [1, (0, 1)])
def test_error_grad_wrt_integer_input(argnums: int | tuple[int, ...]) -> None:
    def run(L: Lib) -> Any:
        return L.ad.grad(lambda x, n: (x * n).sum(), argnums=argnums)(X3, np.arange(3, dtype=np.int32))

    got, want = errors(run)
    assert type(got) is type(want) is TypeError
    assert "int32" in str(got) and "grad" in str(got), str(got)


def test_error_grad_wrt_integer_leaf_of_a_pytree() -> None:
    params = {"w": X3, "n": np.int32(2)}
    got, want = errors(lambda L: L.ad.grad(lambda p: (p["w"] * p["n"]).sum())(params))
    assert type(got) is type(want) is TypeError
    assert "int32" in str(got), str(got)


def test_error_grad_of_integer_output() -> None:
    got, want = errors(lambda L: L.ad.grad(lambda x: x.astype(L.np.int32).sum())(X3))
    assert type(got) is type(want) is TypeError
    assert "int32" in str(got), str(got)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_error_jacobian_wrt_integer_input(name: str) -> None:
    got, want = errors(lambda L: getattr(L.ad, name)(lambda n: n * 2.0)(np.arange(3, dtype=np.int32)))
    assert type(got) is type(want) is TypeError
    assert name in str(got) and "int32" in str(got), str(got)


def test_error_vmap_inconsistent_axis_sizes() -> None:
    def f(a: Any, b: Any) -> Any:
        return a + b

    got, want = errors(lambda L: L.ad.vmap(f)(np.ones(3, np.float32), np.ones(4, np.float32)))
    assert type(got) is type(want) is ValueError
    msg = str(got)
    assert "inconsistent sizes" in msg and "size 3" in msg and "size 4" in msg, msg
    assert "argument a" in msg and "argument b" in msg, msg


def test_error_vmap_inconsistent_axis_sizes_in_pytree() -> None:
    def f(p: Any) -> Any:
        return p["u"] * p["v"][0]

    args = {"u": np.ones(3, np.float32), "v": [np.ones((2, 5), np.float32)]}
    got, want = errors(lambda L: L.ad.vmap(f)(args))
    assert type(got) is type(want) is ValueError
    msg = str(got)
    assert "size 3" in msg and "size 2" in msg and "argument p['v'][0]" in msg, msg


def test_error_while_loop_reverse_mode() -> None:
    def run(L: Lib) -> Any:
        return L.ad.grad(lambda x: L.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1])(
            np.float32(1.0)
        )

    got, want = errors(run)
    assert type(got) is type(want), (got, want)
    assert "while_loop" in str(got), str(got)


def test_error_jvp_tangent_dtype_mismatch() -> None:
    got, want = errors(lambda L: L.ad.jvp(L.np.sin, (X3,), (X3.astype(np.float16),)))
    assert type(got) is type(want) is TypeError
    assert "float32" in str(got) and "float16" in str(got), str(got)


def test_error_linearize_tangent_dtype_mismatch() -> None:
    got, want = errors(lambda L: L.ad.linearize(L.np.sin, X3)[1](X3.astype(np.float16)))
    assert type(got) is type(want) is ValueError
    assert "float32" in str(got) and "float16" in str(got), str(got)


def test_error_vjp_cotangent_dtype_mismatch() -> None:
    got, want = errors(lambda L: L.ad.vjp(L.np.sin, X3)[1](X3.astype(np.int32)))
    assert type(got) is type(want) is ValueError
    assert "float32" in str(got) and "int32" in str(got), str(got)


def test_error_vjp_cotangent_shape_mismatch() -> None:
    got, want = errors(lambda L: L.ad.vjp(L.np.sin, X3)[1](np.ones(4, np.float32)))
    assert type(got) is type(want) is ValueError
    for msg in (str(got), str(want)):
        assert "float32[4]" in msg and "float32[3]" in msg, msg


def test_error_float_of_differentiated_value() -> None:
    got, want = errors(lambda L: L.ad.grad(lambda x: float(x) * x)(np.float32(3.0)))
    assert type(want) is jax.errors.ConcretizationTypeError
    assert isinstance(got, fcore.ConcretizationError), repr(got)
    assert "float()" in str(got)


@pytest.mark.parametrize("conv", [float, complex, int, bool])
def test_scalar_conversions_under_jvp_match_jax(conv: Callable[[Any], Any]) -> None:
    """int() and bool() see the primal under jvp; float() and complex() always refuse a tracer."""
    def outcome(L: Lib) -> str:
        try:
            primal, tangent = L.ad.jvp(lambda x: conv(x) * x, (np.float32(3.0),), (np.float32(1.0),))
        except (fcore.ConcretizationError, jax.errors.ConcretizationTypeError):
            return "refused"
        return f"{float(primal)} {float(tangent)}"

    with modes():
        assert outcome(FC) == outcome(JX)


# ---------------------------------------------------------------------------
# Integer arguments next to float ones (float0 tangents: test_api_float0.py)
# ---------------------------------------------------------------------------

N3 = np.array([1, -2, 3], np.int32)


def scale(L: Lib) -> Callable[[Any, Any], Any]:
    return lambda x, n: L.np.sin(x) * n


def test_jacobians_with_integer_argument_closed_over() -> None:
    """``argnums`` picking the float argument next to an integer one works in both."""
    for name in ("jacfwd", "jacrev"):
        with modes():
            want = getattr(jax, name)(scale(JX), argnums=0)(X3, N3)
            got = getattr(fcore, name)(scale(FC), argnums=0)(X3, N3)
        assert_same(got, want, name)

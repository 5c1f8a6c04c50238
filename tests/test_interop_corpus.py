"""Lossless JAX interop on a corpus of ordinary JAX programs (tests/jax_corpus.py): each
imports with ``from_jax``, evaluates in fcore as in JAX, converts back with
``to_jax_callable`` and evaluates in JAX as before; values *and gradients* agree both ways,
so custom derivative rules, checkpoints, control flow and PRNG keys survive the trip.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_corpus import CORPUS, X6, Entry, odd_square

import fcore
import fcore.numpy as fnp
from fcore import lax as flax
from fcore.core import ClosedJaxpr, eval_jaxpr
from fcore.interop import from_jax, to_jax_callable

NpArray = np.ndarray[Any, Any]
BY_NAME = {entry[0]: entry for entry in CORPUS}


def _leaves(tree: Any) -> list[NpArray]:
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(tree)]


def _assert_same(got: Any, want: Any) -> None:
    got_l, want_l = _leaves(got), _leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def _imported(entry: Entry) -> ClosedJaxpr:
    _, f, args = entry
    return from_jax(jax.make_jaxpr(f)(*args))


@pytest.mark.parametrize("entry", CORPUS, ids=[name for name, *_ in CORPUS])
def test_corpus_round_trips_with_equal_values(entry: Entry) -> None:
    _, f, args = entry
    closed = _imported(entry)
    want = f(*args)
    _assert_same(eval_jaxpr(closed.jaxpr, closed.consts, *args), want)
    _assert_same(jax.jit(to_jax_callable(closed))(*args), want)


def _names(closed: ClosedJaxpr) -> set[str]:
    return {e.primitive.name for e in closed.eqns}


def test_custom_jvp_rule_is_kept() -> None:
    """``odd_square`` computes ``x*x`` but declares the derivative ``1.5*x``: it stays so."""
    closed = from_jax(jax.make_jaxpr(odd_square)(np.float32(2.0)))
    assert _names(closed) == {"custom_jvp_call"}
    grad = fcore.grad(lambda x: eval_jaxpr(closed.jaxpr, closed.consts, x)[0])(np.float32(1.0))
    np.testing.assert_allclose(grad, 1.5)
    back = to_jax_callable(closed)
    np.testing.assert_allclose(jax.grad(lambda x: back(x)[0])(np.float32(1.0)), 1.5)


def test_custom_vjp_rule_and_checkpoint_are_kept() -> None:
    for name, prim in (("custom_vjp", "custom_vjp_call"), ("checkpoint", "remat2")):
        assert prim in _names(_imported(BY_NAME[name]))


def test_gather_mode_is_kept() -> None:
    closed = _imported(BY_NAME["gather"])
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "gather"]
    assert eqn.params["mode"] is flax.GatherScatterMode.PROMISE_IN_BOUNDS


def test_typed_keys_are_key_data() -> None:
    """A ``key<fry>[]`` value is its ``u32[2]`` key data in fcore, and the bits are JAX's."""
    closed = _imported(BY_NAME["random_typed_key"])
    assert not _names(closed) & {"random_seed", "random_bits", "random_wrap"}
    assert "threefry2x32" in _names(closed)


# -- fcore programs out to JAX and back ------------------------------------------------------------
def _fcore_while(x: Any) -> Any:
    return flax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]


def _fcore_cond_scan(x: Any) -> Any:
    y = flax.cond(x.sum() > 0, fnp.sin, fnp.cos, x)
    return flax.scan(lambda c, a: (c + a, c * a), 0.0, y)


def _fcore_gather_top_k(x: Any) -> Any:
    return x[fnp.array([3, 1])], flax.top_k(x, 2), fnp.sort(x)


def _fcore_random(key: Any) -> Any:
    return fcore.random.normal(key, (3,))


def _fcore_maxpool_grad(x: Any) -> Any:
    """``reduce_window_max`` and ``select_and_scatter_add``: bound as JAX's primitives of the name."""
    return fcore.grad(lambda a: flax.reduce_window(a, -np.inf, flax.max, (2,), (1,), "VALID").sum())(x)


def _fcore_fft_inv(x: Any) -> Any:
    return fnp.abs(fnp.fft.fft(x)), fnp.linalg.inv(fnp.outer(x[:3], x[:3]) + fnp.eye(3))


FCORE_PROGRAMS: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (_fcore_while, (X6,)), (_fcore_cond_scan, (X6,)), (_fcore_gather_top_k, (X6,)),
    (_fcore_random, (np.array([0, 3], np.uint32),)), (_fcore_maxpool_grad, (X6,)), (_fcore_fft_inv, (X6,)),
]


@pytest.mark.parametrize(("program", "args"), FCORE_PROGRAMS, ids=[p.__name__.strip("_") for p, _ in FCORE_PROGRAMS])
def test_fcore_programs_round_trip_through_jax(program: Callable[..., Any], args: tuple[Any, ...]) -> None:
    closed = fcore.make_jaxpr(program)(*args)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    fun = to_jax_callable(closed)
    _assert_same(jax.jit(fun)(*args), want)
    back = from_jax(jax.make_jaxpr(fun)(*args))
    _assert_same(eval_jaxpr(back.jaxpr, back.consts, *args), want)


# -- fcore programs out to JAX, against the same program written with JAX -------------------------
def _linear_solve(lax: Any, d: Any, b: Any) -> Any:
    """A diagonal system, its gradient through the (symmetric) transposed solve."""
    return lax.custom_linear_solve(lambda v: d * v, b, lambda matvec, v: v / d, symmetric=True)


def _custom_vmap(custom_batching: Any, x: Any, y: Any) -> Any:
    """Batched, the rule adds 1: the converted function must run fcore's rule under ``jax.vmap``."""
    def rule(axis_size: int, in_batched: list[bool], a: Any, b: Any) -> tuple[Any, bool]:
        return a * b + 1.0, True

    f = custom_batching.custom_vmap(lambda a, b: a * b)
    f.def_vmap(rule)
    return f(x, y)


def _mulhi(lax: Any, x: Any, y: Any) -> Any:
    return lax.mulhi(x, y), lax.mulhi(x.astype(np.uint32), y.astype(np.uint32))


_SOLVE_ARGS = (np.array([2.0, 4.0, 0.5], np.float32), np.array([1.0, -2.0, 3.0], np.float32))
_INTS = (np.array([7, -3, 2**30, -(2**31)], np.int32), np.array([-5, 2**31 - 1, 9, 3], np.int32))
JAX_PAIRED: list[tuple[str, Callable[[Any, Any, Any], Any], Any, Any, tuple[Any, ...]]] = [
    # (name, program(module, *args), fcore module, jax module, args)
    ("custom_linear_solve", _linear_solve, flax, jax.lax, _SOLVE_ARGS),
    ("custom_vmap_call", _custom_vmap, fcore.custom_batching, jax.custom_batching, (X6[:3], X6[3:])),
    ("mulhi", _mulhi, flax, jax.lax, _INTS),
]


@pytest.mark.parametrize("entry", JAX_PAIRED, ids=[e[0] for e in JAX_PAIRED])
def test_to_jax_callable_computes_like_jax(
    entry: tuple[str, Callable[[Any, Any, Any], Any], Any, Any, tuple[Any, ...]]
) -> None:
    """The converted primitive is JAX's own, and it computes what the JAX program does (the
    solve's gradient and the vmap rule included), both in one compile."""
    name, program, fmod, jmod, args = entry
    closed = fcore.make_jaxpr(lambda *a: program(fmod, *a))(*args)
    assert name in _names(closed)
    fun: Callable[..., Any] = to_jax_callable(closed)

    def want_fun(*a: Any) -> Any:
        return jax.tree_util.tree_leaves(program(jmod, *a))

    if name == "custom_linear_solve":  # values and the gradient with respect to both operands
        fun, want = (jax.value_and_grad(lambda *a, g=g: g(*a)[0].sum(), argnums=(0, 1)) for g in (fun, want_fun))
    elif name == "custom_vmap_call":  # batched over x only
        fun, want = (jax.vmap(g, in_axes=(0, None)) for g in (fun, want_fun))
        args = (np.stack([args[0], args[0] * 2.0]), args[1])
    else:
        want = want_fun
    assert name in {e.primitive.name for e in jax.make_jaxpr(to_jax_callable(closed))(*closed.in_avals).eqns}

    def both(*a: Any) -> tuple[Any, Any]:
        return fun(*a), want(*a)

    got_values, want_values = jax.jit(both)(*args)
    _assert_same(got_values, want_values)

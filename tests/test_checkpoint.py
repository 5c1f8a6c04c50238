"""checkpoint / remat: the ``remat2`` primitive, differentially against jax.

Values and derivatives must equal the un-checkpointed function's and jax's under every
composition; the staged gradient must recompute the primal inside a ``remat2`` equation
(``differentiated=True``) the way jax's does, saving only what the policy allows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore import core, transforms
from test_custom_derivatives import ARGS, COMPOSITIONS, FC, JX, Lib, assert_same, run_both, scalar_compositions

W = np.linspace(-1.0, 1.0, 9).reshape(3, 3).astype(np.float32)
X = np.float32(0.5)
POLICIES = ["None", "nothing_saveable", "everything_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable"]


def policy(L: Lib, name: str) -> Any:
    return None if name == "None" else getattr(L.ad.checkpoint_policies, name)


def chain(L: Lib) -> Callable[[Any], Any]:
    return lambda x: L.np.sin(L.np.cos(x)) * x


def mlp(L: Lib) -> Callable[[Any], Any]:
    """Matrix products between nonlinearities (what the dots policies look at)."""

    def f(x: Any) -> Any:
        h = L.np.sin(W @ (x * np.arange(3, dtype=np.float32)))
        return L.np.tanh(W @ h).sum()

    return f


def with_custom_jvp(L: Lib) -> Callable[[Any], Any]:
    """A checkpointed function calling a custom_jvp function (whose rule is not its derivative)."""
    f = L.ad.custom_jvp(L.np.sin)
    f.defjvp(lambda p, t: (f(p[0]), t[0] * p[0] * 3.0))
    return lambda x: f(L.np.cos(x)) * x


BODIES = {f.__name__: f for f in (chain, mlp, with_custom_jvp)}


# mlp meets strongly typed weights: with a Python-float argument fcore's plain grad already
# differs from jax's in weak type (jax makes the cotangent weak again), so it gets NumPy ones.
CASES = [(b, a) for b in BODIES for a in ARGS if not (b == "mlp" and a == "python float")]


@pytest.mark.parametrize("composition", COMPOSITIONS)
@pytest.mark.parametrize(("body", "arg"), CASES)
def test_checkpoint_matches_jax_and_the_plain_function(body: str, arg: str, composition: str) -> None:
    run_both(lambda L: scalar_compositions(L, L.ad.checkpoint(BODIES[body](L)))[composition], ARGS[arg])
    plain = scalar_compositions(FC, BODIES[body](FC))[composition](ARGS[arg])
    assert_same(scalar_compositions(FC, fcore.checkpoint(BODIES[body](FC)))[composition](ARGS[arg]), plain)


@pytest.mark.parametrize("composition", ["grad", "jit(grad)", "vmap(grad)", "grad(vmap)", "hessian", "jacrev"])
@pytest.mark.parametrize("name", POLICIES)
def test_policies_keep_values_and_derivatives(name: str, composition: str) -> None:
    run_both(lambda L: scalar_compositions(L, L.ad.checkpoint(mlp(L), policy=policy(L, name)))[composition], X)


def test_static_argnums_and_prevent_cse() -> None:
    def make(L: Lib) -> Any:
        def f(x: Any, mode: str, n: int) -> Any:
            for _ in range(n):  # Python control flow on static arguments
                x = L.np.sin(x) if mode == "sin" else L.np.cos(x)
            return x

        g = L.ad.checkpoint(f, static_argnums=(1, 2), prevent_cse=False)
        return L.ad.grad(lambda x: g(x, "sin", 3) + g(x, "cos", 2))

    run_both(make, X)
    run_both(lambda L: L.ad.jit(make(L)), X)


def test_closure_over_a_differentiated_value() -> None:
    """Unlike custom rules, a checkpointed function may close over values being differentiated."""
    run_both(lambda L: L.ad.grad(lambda y: L.ad.checkpoint(lambda x: L.np.sin(x * y))(y * 2.0)), X)
    run_both(lambda L: L.ad.jit(L.ad.grad(lambda y: L.ad.checkpoint(lambda x: L.np.sin(x * y))(y * 2.0))), X)


def test_checkpointed_scan_body() -> None:
    def make(L: Lib) -> Any:
        body = L.ad.checkpoint(lambda c, x: (L.np.sin(c) * x, c))
        return L.ad.grad(lambda c: L.ad.lax.scan(body, c, np.arange(1.0, 4.0, dtype=np.float32))[0])

    run_both(make, X)
    run_both(lambda L: L.ad.jit(make(L)), X)


def test_pytrees_and_keyword_arguments() -> None:
    def make(L: Lib) -> Any:
        f = L.ad.checkpoint(lambda d, *, s: {"out": L.np.sin(d["a"]) * d["b"][0] * s})
        return L.ad.grad(lambda x: f({"a": x, "b": [x * 2.0]}, s=3.0)["out"])

    run_both(make, X)


def test_remat_is_checkpoint() -> None:
    assert fcore.remat is fcore.checkpoint
    assert fcore.checkpoint_policies.checkpoint_dots == fcore.checkpoint_policies.dots_saveable


def test_static_argnums_errors() -> None:
    with pytest.raises(ValueError, match="static_argnums"):
        fcore.checkpoint(lambda x: x, static_argnums=(3,))(1.0)
    with pytest.raises(TypeError, match="static_argnums"):
        fcore.checkpoint(lambda x: x, static_argnums=[0])  # type: ignore[arg-type]


# -- what is staged ------------------------------------------------------------------------
def _remat_eqn(closed: Any) -> Any:
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "remat2"]
    return eqn


def _inner_names(eqn: Any) -> Counter[str]:
    inner = eqn.params["jaxpr"]
    inner = getattr(inner, "jaxpr", inner)
    skip = {"reduce_precision"}  # jax marks its residuals; fcore does not
    return Counter({"add_any": "add"}.get(e.primitive.name, e.primitive.name)
                   for e in inner.eqns if e.primitive.name not in skip)


def test_make_jaxpr_shows_the_remat_equation() -> None:
    closed = fcore.make_jaxpr(fcore.checkpoint(chain(FC)))(X)
    eqn = _remat_eqn(closed)
    assert (eqn.params["prevent_cse"], eqn.params["differentiated"], eqn.params["policy"]) == (True, False, None)
    assert str(closed).count("remat2[") == 1


def test_staged_gradient_recomputes_inside_remat() -> None:
    """make_jaxpr(grad(checkpoint(f))): the primal runs outside and again inside the remat2
    equation (only the input is saved), as in jax; without checkpoint nothing is recomputed."""
    f = lambda x: fnp.sin(fnp.sin(x))  # noqa: E731
    closed = fcore.make_jaxpr(fcore.grad(fcore.checkpoint(f)))(X)
    eqn = _remat_eqn(closed)
    assert eqn.params["differentiated"] is True
    assert len(eqn.invars) == 2  # the input x (the only residual) and the cotangent
    inner_sins = _inner_names(eqn)["sin"]
    assert inner_sins == 1
    plain = fcore.make_jaxpr(fcore.grad(f))(X)
    assert sum(e.primitive.name == "sin" for e in plain.jaxpr.eqns) == 2
    assert Counter(e.primitive.name for e in closed.jaxpr.eqns)["sin"] == 2  # the primal, outside
    want = _remat_eqn(jax.make_jaxpr(jax.grad(jax.checkpoint(lambda x: jax.numpy.sin(jax.numpy.sin(x)))))(X))
    assert _inner_names(eqn) == _inner_names(want)


@pytest.mark.parametrize("name", POLICIES)
def test_policies_save_what_jax_saves(name: str) -> None:
    """What the rematerialized equation recomputes, per policy, is jax's (``add_any`` and
    unit-cotangent multiplications aside)."""
    got = _remat_eqn(fcore.make_jaxpr(fcore.grad(fcore.checkpoint(mlp(FC), policy=policy(FC, name))))(X))
    want = _remat_eqn(jax.make_jaxpr(jax.grad(jax.checkpoint(mlp(JX), policy=policy(JX, name))))(X))
    g, w = _inner_names(got), _inner_names(want)
    for prim in ("sin", "cos", "tanh", "dot_general"):
        assert g[prim] == w[prim], (prim, g, w)


def test_linearize_keeps_the_recomputation_in_the_linear_jaxpr() -> None:
    closed = fcore.make_jaxpr(fcore.checkpoint(chain(FC)))(X)
    primal, linear, num_res = transforms.linearize_jaxpr(closed)
    assert num_res == 1  # the input only
    eqn = _remat_eqn(linear)
    assert _inner_names(eqn)["cos"] >= 1 and eqn.params["differentiated"] is True
    res = core.eval_jaxpr(primal.jaxpr, primal.consts, X)[1:]
    got = core.eval_jaxpr(linear.jaxpr, linear.consts, *res, np.float32(1.0))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(jax.grad(chain(JX))(X)), rtol=1e-6)


def test_jaxpr_passes_on_remat() -> None:
    closed = fcore.make_jaxpr(fcore.checkpoint(lambda x, y: (fnp.sin(x), fnp.cos(y) * 2.0)))(X, X)
    dced, used = transforms.dce_jaxpr(closed, [False, True])
    assert used == [False, True] and len(_remat_eqn(dced).outvars) == 1
    batched, dims = transforms.batch_jaxpr(closed, 3, [0, None])
    assert dims == [0, None]
    xs = np.linspace(0.0, 1.0, 3).astype(np.float32)
    out = core.eval_jaxpr(batched.jaxpr, batched.consts, xs, X)
    np.testing.assert_allclose(np.asarray(out[0]), np.sin(xs), rtol=1e-6)
    known, unknown, out_unknowns, num_res = transforms.partial_eval_jaxpr(closed, [False, True], False)
    assert out_unknowns == [False, True] and num_res == 0
    lin = fcore.make_jaxpr(lambda t: fcore.jvp(fcore.checkpoint(chain(FC)), (X,), (t,))[1])(X)
    transposed = transforms.transpose_jaxpr(lin, [True])
    assert _remat_eqn(transposed).params["differentiated"] is False
    got = core.eval_jaxpr(transposed.jaxpr, transposed.consts, np.float32(1.0))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(jax.grad(chain(JX))(X)), rtol=1e-6)


@pytest.mark.parametrize("name", ["None", "nothing_saveable", "everything_saveable", "dots_saveable"])
def test_print_parse_round_trip(name: str) -> None:
    closed = fcore.make_jaxpr(fcore.grad(fcore.checkpoint(mlp(FC), policy=policy(FC, name))))(X)
    assert core.parse_jaxpr(str(closed)) == closed.jaxpr


def test_callable_policy() -> None:
    def save_sines(prim: Any, *avals: Any, **params: Any) -> bool:
        return str(prim) == "sin"

    run_both(lambda L: L.ad.grad(L.ad.checkpoint(chain(L), policy=save_sines)), X)
    closed = fcore.make_jaxpr(fcore.grad(fcore.checkpoint(chain(FC), policy=save_sines)))(X)
    assert "policy=CallablePolicy(save_sines)" in str(closed)
    assert _inner_names(_remat_eqn(closed))["sin"] == 0  # the saved sine is a residual


def test_lowering_puts_a_barrier_before_the_recomputation() -> None:
    f = chain(FC)
    assert "optimization_barrier" in fcore.jit(fcore.grad(fcore.checkpoint(f))).lower(X).as_text()
    no_cse = fcore.checkpoint(f, prevent_cse=False)
    assert "optimization_barrier" not in fcore.jit(fcore.grad(no_cse)).lower(X).as_text()
    assert "optimization_barrier" not in fcore.jit(fcore.checkpoint(f)).lower(X).as_text()


# -- property: checkpointing any part of a program changes no derivative -------------------
UNARY: dict[str, Callable[[Any], Any]] = {
    "sin": fnp.sin, "cos": fnp.cos, "tanh": fnp.tanh, "square": lambda v: v * v, "scale": lambda v: v * 1.5,
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=6),
    cut=st.tuples(st.integers(0, 6), st.integers(0, 6)),
    name=st.sampled_from(POLICIES),
    x=st.floats(-2.0, 2.0, width=32),
)
def test_checkpointing_a_segment_keeps_derivatives(ops: list[str], cut: tuple[int, int], name: str, x: float) -> None:
    """The ops ``lo:hi`` run under checkpoint (with a policy); each op also sees the input,
    so residuals cross the segment. grad, hessian and the staged linearization agree with
    the plain program, and the staged gradient's jaxpr prints and parses back."""
    lo, hi = sorted(cut)

    def run(v: Any, x0: Any, names: list[str]) -> Any:
        for n in names:
            v = UNARY[n](v) + x0 * 0.25
        return v

    def plain(x0: Any) -> Any:
        return run(x0, x0, ops)

    def checkpointed(x0: Any) -> Any:
        mid = fcore.checkpoint(lambda v, x1: run(v, x1, ops[lo:hi]), policy=policy(FC, name))
        return run(mid(run(x0, x0, ops[:lo]), x0), x0, ops[hi:])

    x32 = np.float32(x)
    for make in (fcore.grad, fcore.hessian, lambda f: fcore.jit(fcore.grad(f))):
        np.testing.assert_allclose(np.asarray(make(checkpointed)(x32)), np.asarray(make(plain)(x32)),
                                   rtol=2e-5, atol=1e-5)
    closed = fcore.make_jaxpr(fcore.grad(checkpointed))(x32)
    assert core.parse_jaxpr(str(closed)) == closed.jaxpr
    primal, linear, _ = transforms.linearize_jaxpr(fcore.make_jaxpr(checkpointed)(x32))
    res = core.eval_jaxpr(primal.jaxpr, primal.consts, x32)[1:]
    got = core.eval_jaxpr(linear.jaxpr, linear.consts, *res, np.float32(1.0))[0]
    np.testing.assert_allclose(np.asarray(got), np.asarray(fcore.grad(plain)(x32)), rtol=2e-5, atol=1e-5)

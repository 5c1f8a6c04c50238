"""custom_jvp_call / custom_vjp_call as jaxpr equations: what is staged, and every pure pass.

The staged programs are compared with jax's by their equations' primitives; the pure passes
(``fcore.transforms``) are run on jaxprs holding these equations and their results checked
numerically (the rules are deliberately not the bodies' derivatives).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import core, transforms
from test_custom_derivatives import FC, JX, Lib

X = np.float32(0.5)
XS = np.linspace(-1.0, 1.0, 3).astype(np.float32)


def two_outputs(L: Lib) -> Any:
    """sin and 2cos, with tangents 3t and x t (not the derivatives)."""
    f = L.ad.custom_jvp(lambda x: (L.np.sin(x), L.np.cos(x) * 2.0))

    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), (t * 3.0, t * x)

    f.defjvp(f_jvp)
    return f


def scaled_vjp(L: Lib) -> Any:
    """sin(x) * y whose bwd scales the cotangents by 3 and 5."""
    f = L.ad.custom_vjp(lambda x, y: L.np.sin(x) * y)
    f.defvjp(lambda x, y: (f(x, y), (L.np.cos(x), y)), lambda r, ct: (r[0] * r[1] * ct * 3.0, ct * 5.0))
    return f


STAGED: dict[str, Callable[[Lib], Callable[[Any], Any]]] = {
    "custom_jvp": lambda L: two_outputs(L),
    "grad(custom_jvp)": lambda L: L.ad.grad(lambda x: two_outputs(L)(x)[0] + two_outputs(L)(x)[1]),
    "jvp(custom_jvp)": lambda L: lambda x: L.ad.jvp(two_outputs(L), (x,), (x,)),
    "custom_vjp": lambda L: lambda x: scaled_vjp(L)(x, x * 2.0),
    "grad(custom_vjp)": lambda L: L.ad.grad(lambda x: scaled_vjp(L)(x, 3.0)),
}


@pytest.mark.parametrize("case", list(STAGED))
def test_staged_equations_match_jax(case: str) -> None:
    """make_jaxpr shows the custom call as one equation, and under differentiation only
    the rule's work next to it (the primal call stays, as jax's does)."""
    got = [e.primitive.name for e in fcore.make_jaxpr(STAGED[case](FC))(X).jaxpr.eqns]
    want = [{"add_any": "add"}.get(e.primitive.name, e.primitive.name)
            for e in jax.make_jaxpr(STAGED[case](JX))(X).jaxpr.eqns]
    # fcore's vjp drops jax's multiplication by the unit cotangent (``mul ct 1.0``).
    it = iter(want)
    assert all(any(g == w for w in it) for g in got), (got, want)
    assert [w for w in want if w != "mul"] == [g for g in got if g != "mul"]


def test_vmap_stages_one_batched_call() -> None:
    got = fcore.make_jaxpr(fcore.vmap(two_outputs(FC)))(XS)
    (eqn,) = got.jaxpr.eqns
    assert eqn.primitive.name == "custom_jvp_call"
    assert [v.aval.shape for v in eqn.outvars] == [(3,), (3,)]


def test_custom_jvp_call_params() -> None:
    y = fnp.arange(3.0)
    f = fcore.custom_jvp(lambda x: fnp.sin(x) * y)

    def f_rule(p: Any, t: Any) -> Any:
        return f(p[0]), t[0] * y

    f.defjvp(f_rule)
    (eqn,) = fcore.make_jaxpr(f)(X).jaxpr.eqns
    params = eqn.params
    assert params["num_consts"] == 1 and params["symbolic_zeros"] is False and params["name"] == "<lambda>"
    assert str(params["jvp"]) == "f_rule"
    assert "jvp=f_rule" in str(fcore.make_jaxpr(f)(X))
    # the closed-over array is the leading operand, the body takes it as its first input
    call = params["call_jaxpr"]
    assert isinstance(call, core.ClosedJaxpr)
    assert len(eqn.invars) == 2 and call.in_avals[0].shape == (3,)


def test_rules_are_traced_lazily() -> None:
    """As in jax, staging or batching a call does not trace its rule; differentiating does, once."""
    calls: list[int] = []
    f = fcore.custom_jvp(fnp.sin)

    def f_jvp(p: Any, t: Any) -> Any:
        calls.append(1)
        return f(p[0]), t[0] * 2.0

    f.defjvp(f_jvp)
    fcore.make_jaxpr(f)(X)
    fcore.vmap(fcore.jit(f))(XS)
    assert calls == []
    closed = fcore.make_jaxpr(f)(X)
    transforms.jvp_jaxpr(closed, [True], False)
    transforms.jvp_jaxpr(closed, [True], False)
    assert calls == [1]


def test_custom_call_text_does_not_parse_back() -> None:
    """The rule is a Python function: the text names it, and what parses is refused by the verifier."""
    named = fcore.make_jaxpr(two_outputs(FC))(X)
    parsed = core.parse_jaxpr(str(named))
    with pytest.raises(fcore.JaxprTypeError, match="jaxpr text cannot carry"):
        core.typecheck(parsed)
    lam = fcore.custom_jvp(fnp.sin)
    lam.defjvp(lambda p, t: (lam(p[0]), t[0]))
    with pytest.raises(fcore.JaxprParseError):
        core.parse_jaxpr(str(fcore.make_jaxpr(lam)(X)))


# -- the pure passes on jaxprs holding custom calls ----------------------------------------
def _run(closed: core.ClosedJaxpr, *args: Any) -> list[np.ndarray[Any, Any]]:
    return [np.asarray(o) for o in core.eval_jaxpr(closed.jaxpr, closed.consts, *args)]


def test_jvp_jaxpr_applies_the_rule() -> None:
    closed = fcore.make_jaxpr(two_outputs(FC))(X)
    jvp, out_nz = transforms.jvp_jaxpr(closed, [True], False)
    assert out_nz == [True, True]
    np.testing.assert_allclose(_run(jvp, X, np.float32(2.0)), [np.sin(X), 2 * np.cos(X), 6.0, 2 * X], rtol=1e-6)


def test_batch_jaxpr_batches_body_and_rule() -> None:
    closed = fcore.make_jaxpr(two_outputs(FC))(X)
    batched, dims = transforms.batch_jaxpr(closed, 3, [0])
    assert dims == [0, 0]
    np.testing.assert_allclose(_run(batched, XS), [np.sin(XS), 2 * np.cos(XS)], rtol=1e-6)
    jvp, _ = transforms.jvp_jaxpr(batched, [True], False)
    np.testing.assert_allclose(_run(jvp, XS, np.ones(3, np.float32))[2:], [np.full(3, 3.0), XS], rtol=1e-6)


def test_dce_jaxpr_prunes_outputs_of_body_and_rule() -> None:
    closed = fcore.make_jaxpr(two_outputs(FC))(X)
    dced, used_inputs = transforms.dce_jaxpr(closed, [False, True])
    assert used_inputs == [True]
    (eqn,) = dced.jaxpr.eqns
    call = eqn.params["call_jaxpr"]
    assert isinstance(call, core.ClosedJaxpr)
    assert len(eqn.outvars) == 1 and len(call.out_avals) == 1
    jvp, _ = transforms.jvp_jaxpr(dced, [True], False)
    np.testing.assert_allclose(_run(jvp, X, np.float32(2.0)), [2 * np.cos(X), 2 * X], rtol=1e-6)
    assert transforms.dce_jaxpr(closed, [False, False])[0].jaxpr.eqns == ()


def test_partial_eval_jaxpr_stages_the_whole_call() -> None:
    closed = fcore.make_jaxpr(lambda x, y: two_outputs(FC)(x * y))(X, X)
    known, unknown, out_unknowns, num_res = transforms.partial_eval_jaxpr(closed, [False, True], False)
    assert out_unknowns == [True, True] and num_res == 1
    assert [e.primitive.name for e in unknown.jaxpr.eqns] == ["mul", "custom_jvp_call"]
    res = _run(known, X)
    np.testing.assert_allclose(_run(unknown, *res, np.float32(3.0)), [np.sin(1.5), 2 * np.cos(1.5)], rtol=1e-6)


def test_linearize_and_vjp_jaxpr_apply_the_rules() -> None:
    closed = fcore.make_jaxpr(lambda x: two_outputs(FC)(x)[1])(X)
    primal, linear, num_res = transforms.linearize_jaxpr(closed)
    res = _run(primal, X)[1:]
    np.testing.assert_allclose(_run(linear, *res, np.float32(2.0)), [2 * X], rtol=1e-6)
    closed = fcore.make_jaxpr(lambda x: scaled_vjp(FC)(x, 3.0))(X)
    primal, backward, num_res = transforms.vjp_jaxpr(closed)
    res = _run(primal, X)[1:]
    np.testing.assert_allclose(_run(backward, *res, np.float32(1.0)), [np.cos(X) * 9.0], rtol=1e-6)


def test_transpose_jaxpr_through_a_linear_custom_function() -> None:
    """A custom function applied to tangents sits in a linear program: transposed through its body."""
    f = fcore.custom_jvp(lambda x: x * 4.0)
    f.defjvp(lambda p, t: (f(p[0]), f(t[0])))
    closed = fcore.make_jaxpr(lambda x: fcore.jvp(f, (X,), (x,))[1])(X)
    assert "custom_jvp_call" in [e.primitive.name for e in closed.jaxpr.eqns]
    transposed = transforms.transpose_jaxpr(closed, [True])
    np.testing.assert_allclose(_run(transposed, np.float32(1.0)), [4.0])
    np.testing.assert_allclose(np.asarray(fcore.grad(lambda x: fcore.jvp(f, (X,), (x,))[1])(X)), 4.0)


def test_custom_vjp_call_batching_and_dce_in_passes() -> None:
    closed = fcore.make_jaxpr(lambda x: scaled_vjp(FC)(x, x * 2.0))(X)
    batched, _ = transforms.batch_jaxpr(closed, 3, [0])
    primal, backward, _ = transforms.vjp_jaxpr(batched)
    res = _run(primal, XS)[1:]
    # d/dx with the custom bwd: cos(x) * 2x * 3 (through x) + 5 * 2 (through y = 2x)
    np.testing.assert_allclose(_run(backward, *res, np.ones(3, np.float32)), [np.cos(XS) * 2 * XS * 3 + 10],
                               rtol=1e-5)


def test_custom_lin_is_not_lowered_or_batched() -> None:
    f = scaled_vjp(FC)
    with pytest.raises(TypeError, match="forward-mode"):
        fcore.jit(lambda x: fcore.jvp(lambda y: f(y, 2.0), (x,), (x,)))(X)
    with pytest.raises(TypeError, match="forward-mode"):
        fcore.vmap(fcore.linearize(lambda y: f(y, 2.0), X)[1])(XS)


def test_jit_compiles_custom_calls() -> None:
    """The lowering of both calls is their body's."""
    for make in (lambda L: two_outputs(L), lambda L: lambda x: scaled_vjp(L)(x, x)):
        got = fcore.jit(make(FC))(XS)
        want = jax.jit(make(JX))(jnp.asarray(XS))
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    text = fcore.jit(two_outputs(FC)).lower(X).as_text()
    assert "func.call" in text and "sine" in text

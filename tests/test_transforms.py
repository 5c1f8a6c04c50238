"""The pure passes and the front end built on them: properties and differential checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
from fcore import lax
from fcore.config import enable_x64
from fcore.core import ClosedJaxpr, eval_jaxpr, typecheck
from fcore.transforms import (
    batch_jaxpr,
    dce_jaxpr,
    jvp_jaxpr,
    linearize_jaxpr,
    partial_eval_jaxpr,
    transpose_jaxpr,
    vjp_jaxpr,
)

UNARY: list[Callable[[Any], Any]] = [lax.sin, lax.cos, lax.tanh, lax.logistic, lambda x: lax.mul(x, x), lax.neg]
BINARY: list[Callable[[Any, Any], Any]] = [lax.add, lax.sub, lax.mul]

# A random straight-line program: each step applies a unary op to one earlier value or a
# binary op to two earlier values.
programs = st.lists(
    st.one_of(
        st.tuples(st.just("u"), st.integers(0, len(UNARY) - 1), st.integers(0, 100)),
        st.tuples(st.just("b"), st.integers(0, len(BINARY) - 1), st.integers(0, 100), st.integers(0, 100)),
    ),
    min_size=1,
    max_size=12,
)


def make_program(steps: list[tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def f(x: Any, y: Any) -> Any:
        vals = [x, y]
        for step in steps:
            if step[0] == "u":
                vals.append(UNARY[step[1]](vals[step[2] % len(vals)]))
            else:
                vals.append(BINARY[step[1]](vals[step[2] % len(vals)], vals[step[3] % len(vals)]))
        return vals[-1]

    return f


def run(closed: ClosedJaxpr, *args: Any) -> list[np.ndarray[Any, Any]]:
    return [np.asarray(o) for o in eval_jaxpr(closed.jaxpr, closed.consts, *args)]


X = np.array([0.3, -1.2, 2.0], np.float64)
Y = np.array([1.5, 0.7, -0.4], np.float64)


@settings(max_examples=60, deadline=None)
@given(programs, st.floats(-1, 1), st.floats(-1, 1))
def test_jvp_matches_central_differences(steps: list[tuple[Any, ...]], tx: float, ty: float) -> None:
    f = make_program(steps)
    with enable_x64():
        closed = fcore.make_jaxpr(f)(X, Y)
        jvp, out_nz = jvp_jaxpr(closed, [True, True], True)
        typecheck(jvp)
        txs, tys = np.full(3, tx), np.full(3, ty)
        primal, tangent = run(jvp, X, Y, txs, tys)
        eps = 1e-6
        plus = run(closed, X + eps * txs, Y + eps * tys)[0]
        minus = run(closed, X - eps * txs, Y - eps * tys)[0]
        np.testing.assert_allclose(primal, run(closed, X, Y)[0], rtol=1e-12)
        np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(programs)
def test_passes_are_pure_and_typecheck(steps: list[tuple[Any, ...]]) -> None:
    f = make_program(steps)
    closed = fcore.make_jaxpr(f)(X.astype(np.float32), Y.astype(np.float32))
    before = str(closed)
    for result in (
        jvp_jaxpr(closed, [True, False], False)[0],
        batch_jaxpr(closed, 4, [0, None])[0],
        partial_eval_jaxpr(closed, [False, True], False)[0],
        partial_eval_jaxpr(closed, [False, True], False)[1],
        dce_jaxpr(closed, [True])[0],
        linearize_jaxpr(closed)[1],
        vjp_jaxpr(closed)[1],
    ):
        typecheck(result)
    assert str(closed) == before
    assert jvp_jaxpr(closed, [True, False], False) == jvp_jaxpr(closed, [True, False], False)
    assert batch_jaxpr(closed, 4, [0, None]) == batch_jaxpr(closed, 4, [0, None])
    assert partial_eval_jaxpr(closed, [False, True], True) == partial_eval_jaxpr(closed, [False, True], True)


@settings(max_examples=60, deadline=None)
@given(programs, st.sampled_from([[True, False], [False, True], [True, True], [False, False]]))
def test_partial_eval_halves_recombine(steps: list[tuple[Any, ...]], unknowns: list[bool]) -> None:
    f = make_program(steps)
    with enable_x64():
        closed = fcore.make_jaxpr(f)(X, Y)
        known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, unknowns, False)
        args = [X, Y]
        known_args = [a for a, u in zip(args, unknowns) if not u]
        unknown_args = [a for a, u in zip(args, unknowns) if u]
        k_out = run(known, *known_args)
        n_known = len(k_out) - num_res
        residuals = k_out[n_known:]
        u_out = run(unknown, *residuals, *unknown_args)
        known_it, unknown_it = iter(k_out[:n_known]), iter(u_out)
        combined = [next(unknown_it) if u else next(known_it) for u in out_unknowns]
        np.testing.assert_allclose(combined[0], run(closed, X, Y)[0], rtol=1e-12)
        assert len(unknown.jaxpr.invars) == num_res + sum(unknowns)
        used = {id(a) for e in unknown.jaxpr.eqns for a in e.invars} | {id(a) for a in unknown.jaxpr.outvars}
        assert all(id(v) in used for v in unknown.jaxpr.invars[:num_res]), "every residual is used"


@settings(max_examples=60, deadline=None)
@given(programs)
def test_transpose_is_the_adjoint(steps: list[tuple[Any, ...]]) -> None:
    """<ȳ, A x> == <Aᵀ ȳ, x> for the linear map A = the linearization of a random program."""
    f = make_program(steps)
    rng = np.random.default_rng(len(steps))
    with enable_x64():
        closed = fcore.make_jaxpr(f)(X, Y)
        _, linear, num_res = linearize_jaxpr(closed)
        known = linearize_jaxpr(closed)[0]
        residuals = run(known, X, Y)[1:]
        assert len(residuals) == num_res
        tx, ty = rng.normal(size=3), rng.normal(size=3)
        ybar = rng.normal(size=3)
        (ax,) = run(linear, *residuals, tx, ty)
        transposed = transpose_jaxpr(linear, [False] * num_res + [True, True])
        ct_x, ct_y = run(transposed, *residuals, ybar)
        np.testing.assert_allclose(np.dot(ybar, ax), np.dot(ct_x, tx) + np.dot(ct_y, ty), rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(programs, st.sampled_from([0, 1]))
def test_vmap_equals_stacking(steps: list[tuple[Any, ...]], axis: int) -> None:
    f = make_program(steps)
    xs = np.stack([X, X * 0.5, -X, X + 1.0], axis=axis).astype(np.float32)
    ys = Y.astype(np.float32)
    out = fcore.vmap(f, in_axes=(axis, None))(xs, ys)
    expected = np.stack([np.asarray(f(np.take(xs, i, axis=axis), ys)) for i in range(4)])
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-6)
    closed = fcore.make_jaxpr(f)(X.astype(np.float32), ys)
    batched, out_dims = batch_jaxpr(closed, 4, [axis, None], out_dims=[0])
    np.testing.assert_allclose(run(batched, xs, ys)[0], expected, rtol=1e-5, atol=1e-6)


def test_jvp_symbolic_zeros_emit_no_work() -> None:
    closed = fcore.make_jaxpr(lambda x, y: lax.add(lax.sin(x), lax.cos(y)))(np.float32(1), np.float32(2))
    jvp, out_nz = jvp_jaxpr(closed, [True, False], False)
    names = [e.primitive.name for e in jvp.eqns]
    assert out_nz == [True]
    assert names.count("sin") == 1 and names.count("cos") == 2  # cos(x) for d sin; cos(y) primal only
    assert len(jvp.jaxpr.invars) == 3
    jvp0, out_nz0 = jvp_jaxpr(closed, [False, False], False)
    assert out_nz0 == [False] and len(jvp0.eqns) == len(closed.eqns)


def test_integer_inputs_have_no_tangent() -> None:
    closed = fcore.make_jaxpr(lambda x, n: lax.mul(x, lax.convert_element_type(n, np.float32)))(
        np.float32(1), np.int32(3)
    )
    jvp, out_nz = jvp_jaxpr(closed, [False, True], False)
    assert out_nz == [False]


def test_batch_jaxpr_forced_out_dims_and_errors() -> None:
    closed = fcore.make_jaxpr(lambda x, y: (lax.sin(x), lax.cos(y)))(np.ones(3, np.float32), np.float32(1))
    batched, dims = batch_jaxpr(closed, 5, [0, None], out_dims=[1, 0])
    assert [a.shape for a in batched.out_avals] == [(3, 5), (5,)]
    with pytest.raises(ValueError, match="depends on a batched input"):
        batch_jaxpr(closed, 5, [0, None], out_dims=[None, None])


def test_dce_drops_unused_outputs_equations_and_inputs() -> None:
    closed = fcore.make_jaxpr(lambda x, y: (lax.sin(x), lax.cos(y)))(np.float32(1), np.float32(2))
    pruned, used = dce_jaxpr(closed, [True, False])
    assert used == [True, False]
    assert [e.primitive.name for e in pruned.eqns] == ["sin"]
    assert len(pruned.jaxpr.invars) == 1


def test_grad_of_python_control_flow_on_concrete_values() -> None:
    f = lambda x: lax.mul(x, x) if x > 0 else 0.0  # noqa: E731
    assert float(fcore.grad(f)(3.0)) == 6.0
    with pytest.raises(fcore.ConcretizationError):
        fcore.make_jaxpr(f)(3.0)


def test_higher_order_derivatives() -> None:
    f = lambda x: lax.mul(lax.sin(x), x)  # noqa: E731
    x = 0.7
    d1 = float(fcore.grad(f)(x))
    d2 = float(fcore.grad(fcore.grad(f))(x))
    d3 = float(fcore.grad(fcore.grad(fcore.grad(f)))(x))
    np.testing.assert_allclose(d1, np.cos(x) * x + np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(d2, 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(d3, -3 * np.sin(x) - x * np.cos(x), rtol=1e-4)


def test_closing_over_outer_tracers() -> None:
    def outer(x: Any) -> Any:
        inner = lambda y: lax.mul(x, y)  # noqa: E731
        return fcore.grad(inner)(lax.sin(x))

    np.testing.assert_allclose(float(fcore.grad(outer)(0.5)), 1.0)


def test_linearize_replays_linear_part() -> None:
    out, f_jvp = fcore.linearize(lambda x: lax.mul(lax.sin(x), x), 0.5)
    np.testing.assert_allclose(float(f_jvp(1.0)), np.cos(0.5) * 0.5 + np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(float(f_jvp(2.0)), 2 * (np.cos(0.5) * 0.5 + np.sin(0.5)), rtol=1e-6)


def test_vjp_has_aux_and_pytrees() -> None:
    def f(p: dict[str, Any]) -> tuple[Any, str]:
        return lax.mul(p["a"], p["b"]), "aux"

    out, f_vjp, aux = fcore.vjp(f, {"a": 2.0, "b": 3.0}, has_aux=True)
    assert aux == "aux"
    (ct,) = f_vjp(1.0)
    assert float(ct["a"]) == 3.0 and float(ct["b"]) == 2.0


def test_grad_errors() -> None:
    with pytest.raises(TypeError, match="scalar-output"):
        fcore.grad(lambda x: x)(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="real-valued outputs"):
        fcore.grad(lambda x: lax.convert_element_type(x, np.int32))(1.0)
    with pytest.raises(TypeError, match="inexact"):
        fcore.grad(lambda x: x)(np.int32(1))


def test_vmap_errors_name_sizes() -> None:
    with pytest.raises(ValueError, match="inconsistent sizes"):
        fcore.vmap(lax.add)(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError, match="prefix"):
        fcore.vmap(lax.add, in_axes=(0, 0, 0))(np.ones(3, np.float32), np.ones(3, np.float32))

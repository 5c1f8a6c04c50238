"""Effects as IR values: equation and jaxpr effect sets, their propagation through higher-order
primitives, printing/parsing, the verifier, and the passes that must respect them."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
import jax
import numpy as np
import pytest
from hypothesis import given, settings

import fcore
import fcore.numpy as fnp
from fcore import lax
from fcore.errors import JaxprTypeError
from fcore.ir.core import Jaxpr
from fcore.ir.effects import NO_EFFECTS, debug_effect, io_effect, ordered_debug_effect, ordered_io_effect
from fcore.ir.parser import parse_jaxpr
from fcore.ir.typecheck import typecheck
from fcore.transforms.dce import dce_jaxpr
from fcore.transforms.simplify import cse, fold_constants

X = np.arange(3.0, dtype=np.float32)
F32 = fcore.ShapeDtypeStruct((3,), np.float32)


def _effectful(x: Any) -> Any:
    fcore.debug.print("x={}", x)
    y = fcore.experimental.io_callback(lambda v: np.asarray(v) * 2, F32, x, ordered=True)
    z = fcore.pure_callback(lambda v: np.asarray(v) + 1, F32, x)
    return y + z


def test_effect_sets_of_equations_and_jaxprs() -> None:
    j = fcore.make_jaxpr(_effectful)(X)
    assert j.effects == frozenset({debug_effect, ordered_io_effect})
    assert [e.effects for e in j.eqns[:3]] == [frozenset({debug_effect}), frozenset({ordered_io_effect}), NO_EFFECTS]
    assert isinstance(j.effects, frozenset) and ordered_io_effect.ordered and not debug_effect.ordered
    pure = fcore.make_jaxpr(lambda x: fnp.sin(x) * 2)(X)
    assert pure.effects == NO_EFFECTS and all(not e.effects for e in pure.eqns)


def test_effects_match_jax_kinds() -> None:
    """The same programs have effects of the same kinds (by JAX's class names) as in JAX."""

    def jax_f(x: Any) -> Any:
        jax.debug.print("x={}", x, ordered=True)
        jax.experimental.io_callback(lambda v: None, None, x)
        return x

    def fcore_f(x: Any) -> Any:
        fcore.debug.print("x={}", x, ordered=True)
        fcore.experimental.io_callback(lambda v: None, None, x)
        return x

    theirs = {type(e).__name__ for e in jax.make_jaxpr(jax_f)(X).effects}
    ours = {type(e).__name__ for e in fcore.make_jaxpr(fcore_f)(X).effects}
    assert ours == theirs == {"OrderedDebugEffect", "IOEffect"}
    assert fcore.make_jaxpr(fcore_f)(X).effects == frozenset({ordered_debug_effect, io_effect})


@pytest.mark.parametrize(
    "wrap",
    [
        lambda f: fcore.jit(f),
        lambda f: (lambda x: lax.scan(lambda c, xi: (f(c), None), x, None, length=2)[0]),
        lambda f: (lambda x: lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, f(c[1])), (0, x))[1]),
        lambda f: (lambda x: lax.cond(True, f, lambda v: v, x)),
        lambda f: fcore.checkpoint(f),
        lambda f: fcore.vmap(f),
    ],
    ids=["jit", "scan", "while", "cond", "remat", "vmap"],
)
def test_higher_order_primitives_propagate_effects(wrap: Any) -> None:
    def f(x: Any) -> Any:
        fcore.debug.print("{}", x, ordered=True)
        return x + 1

    j = fcore.make_jaxpr(wrap(f))(X)
    assert j.effects == frozenset({ordered_debug_effect})
    typecheck(j)


def test_custom_jvp_propagates_effects() -> None:
    @fcore.custom_jvp
    def f(x: Any) -> Any:
        fcore.debug.print("{}", x)
        return x * 2

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 2))
    assert fcore.make_jaxpr(f)(X).effects == frozenset({debug_effect})


def test_parse_round_trip_keeps_effects() -> None:
    def f(x: Any) -> Any:
        fcore.debug.print("a={a} b={}", x, a=x[0], ordered=True)
        fcore.debug.print("plain", x, skip_format_check=True)
        return lax.scan(lambda c, xi: (c + xi, fcore.debug.print("{}", c)), 0.0, x)[0]

    j = fcore.make_jaxpr(f)(X).jaxpr
    parsed = parse_jaxpr(str(j))
    assert parsed == j
    assert parsed.effects == j.effects == frozenset({debug_effect, ordered_debug_effect})
    typecheck(parsed)


def test_equations_without_results_print_as_jax_prints_them() -> None:
    """``debug_print[...] a`` with no binders (JAX's text); the older ``_ = ...`` still parses."""
    j = fcore.make_jaxpr(lambda x: fcore.debug.print("{}", x))(np.float32(1.0)).jaxpr
    text = str(j)
    assert text.splitlines()[1].startswith("    debug_print[") and " = debug_print" not in text
    assert parse_jaxpr(text) == j
    one_line = "{ lambda ; a:f32[]. let debug_callback_nothing a in (a,) }"
    with pytest.raises(fcore.errors.JaxprParseError, match="unknown primitive 'debug_callback_nothing'"):
        parse_jaxpr(one_line)
    old = text.replace("    debug_print[", "    _ = debug_print[", 1)
    assert parse_jaxpr(old) == j


def test_typecheck_rejects_undeclared_effects() -> None:
    j = fcore.make_jaxpr(_effectful)(X).jaxpr
    bad = Jaxpr(j.constvars, j.invars, j.outvars, j.eqns, effects=frozenset({debug_effect}))
    with pytest.raises(JaxprTypeError, match="OrderedIOEffect"):
        typecheck(bad)
    declared = Jaxpr(j.constvars, j.invars, j.outvars, j.eqns, effects=j.effects | {io_effect})
    typecheck(declared)  # a jaxpr may declare more effects than its equations have
    assert declared != j  # effects are part of the structure


def test_dce_keeps_effectful_equations() -> None:
    def f(x: Any) -> Any:
        fcore.debug.print("{}", x)
        fcore.experimental.io_callback(lambda v: v, F32, x)  # result unused, still effectful
        fcore.pure_callback(lambda v: v, F32, x)  # pure: dropped
        lax.scan(lambda c, xi: (c, fcore.debug.print("{}", xi)), 0.0, x)  # unused loop with a print
        _ = fnp.sin(x)
        return x

    closed = fcore.make_jaxpr(f)(X)
    dced, _ = dce_jaxpr(closed, [True])
    assert [e.primitive.name for e in dced.eqns] == ["debug_print", "io_callback", "scan"]
    assert dced.effects == closed.effects


def test_cse_and_folding_leave_effects_alone() -> None:
    def f(x: Any) -> Any:
        fcore.debug.print("{}", 1.0)
        fcore.debug.print("{}", 1.0)
        return fnp.sin(x) + fnp.sin(x)

    closed = fcore.make_jaxpr(f)(X)
    out = fold_constants(cse(closed))
    assert [e.primitive.name for e in out.eqns] == ["debug_print", "debug_print", "sin", "add"]


def test_grad_and_linearize_keep_prints_out_of_the_transpose(capsys: pytest.CaptureFixture[str]) -> None:
    def f(x: Any) -> Any:
        fcore.debug.print("p {}", x)
        return fnp.sum(x * x)

    j = fcore.make_jaxpr(fcore.grad(f))(X)
    assert j.effects == frozenset({debug_effect})
    assert [e.primitive.name for e in j.eqns].count("debug_print") == 1


def test_user_primitive_declares_its_effects() -> None:
    """``Primitive.def_effects``: a user's effectful primitive is kept by DCE and not merged by CSE."""
    from fcore.core import Effect, Primitive, ShapedArray

    class CounterEffect(Effect):
        pass

    counter_effect = CounterEffect()
    ticks: list[int] = []
    tick_p = Primitive("test_tick", multiple_results=True)
    tick_p.def_abstract_eval(lambda x: [])
    tick_p.def_effects(lambda: frozenset({counter_effect}))

    @tick_p.def_impl
    def _tick_impl(x: Any) -> list[Any]:
        ticks.append(int(x))
        return []

    def f(x: Any) -> Any:
        tick_p.bind(x)
        tick_p.bind(x)
        return x

    closed = fcore.make_jaxpr(f)(1)
    assert closed.effects == frozenset({counter_effect})
    assert len(cse(dce_jaxpr(closed, [True])[0]).eqns) == 2
    f(3)
    assert ticks == [3, 3]
    assert isinstance(closed.in_avals[0], ShapedArray)


@settings(max_examples=10, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["print", "sin", "add", "io"]), st.integers(0, 5), st.integers(0, 5)),
                    min_size=1, max_size=8))
def test_passes_keep_effects_of_random_programs(ops: list[tuple[str, int, int]]) -> None:
    """Whatever the program, DCE and CSE keep every effectful equation, in order."""

    def f(x: Any) -> Any:
        vals = [x]
        for k, (op, i, j) in enumerate(ops):
            a, b = vals[i % len(vals)], vals[j % len(vals)]
            if op == "print":
                fcore.debug.print(f"p{k} {{}}", a)
            elif op == "io":
                vals.append(fcore.experimental.io_callback(lambda v: v, F32, a))
            else:
                vals.append(fnp.sin(a) if op == "sin" else a + b)
        return vals[0]

    closed = fcore.make_jaxpr(f)(X)
    effectful = [e for e in closed.eqns if e.effects]
    for out in (dce_jaxpr(closed, [True])[0], cse(closed), fold_constants(closed)):
        kept = [e for e in out.eqns if e.effects]
        assert [(e.primitive, e.params) for e in kept] == [(e.primitive, e.params) for e in effectful]
        assert out.effects == closed.effects
        typecheck(out)

"""The rewrite API (fcore.transforms.rewrite): rules with use-def information, replacement forms,
the fixpoint driver recursing into every nested jaxpr, primitive traits and fold/canonicalize
hooks, and the built-in passes consulting them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import lax
from fcore.core import ClosedJaxpr, Jaxpr, JaxprBuilder, JaxprEqn, Literal, Primitive, eval_jaxpr, typecheck
from fcore.ir import dtypes
from fcore.ir.avals import shaped_array
from fcore.lax.elementwise import add_p, mul_p, neg_p, sin_p
from fcore.lax.traced_rules import LazyJaxpr
from fcore.transforms import cse, dce, fold_constants, simplify_algebra
from fcore.transforms.rewrite import (
    Pattern,
    Rewrite,
    RewriteContext,
    RewriteError,
    canonicalize_rules,
    fold_rules,
    is_effectful,
    is_pure,
    literal_value,
    pattern,
    rewrite,
)

F32 = dtypes.float32
VEC = shaped_array((3,), F32)
X = np.array([0.5, -1.0, 2.0], np.float32)


def _all_eqns(jaxpr: Jaxpr) -> Iterator[JaxprEqn]:
    """Every equation, in nested jaxprs too."""
    for e in jaxpr.eqns:
        yield e
        for value in e.params.values():
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, ClosedJaxpr):
                    yield from _all_eqns(v.jaxpr)


@pattern(mul_p)
def times_two_to_add(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
    """``x * 2 -> x + x``."""
    x, y = eqn.invars
    if literal_value(y) != 2 or x.aval != eqn.outvars[0].aval:
        return None
    return ctx.emit(add_p, x, x)


def _program(x: Any) -> Any:
    y = lax.cond(x[0] > 0, lambda v: v * 2.0, lambda v: v * 3.0, x)
    y = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, y))[1]
    y, _ = lax.scan(lambda c, v: (c * 2.0, v * 2.0), y, x)
    y = fcore.jit(lambda v: v * 2.0)(y)
    return fcore.checkpoint(lambda v: fnp.sin(v) * 2.0)(y) * 2.0


def test_user_rule_reaches_every_nested_jaxpr_and_keeps_type_and_values() -> None:
    closed = fcore.make_jaxpr(_program)(X)
    doubled = [e for e in _all_eqns(closed.jaxpr) if e.primitive is mul_p and literal_value(e.invars[1]) == 2]
    assert len(doubled) >= 7
    out = rewrite(closed, [times_two_to_add], check=True)
    assert typecheck(out) == typecheck(closed)
    assert not [e for e in _all_eqns(out.jaxpr) if e.primitive is mul_p and literal_value(e.invars[1]) == 2]
    assert sum(e.primitive is mul_p for e in _all_eqns(out.jaxpr)) == 1  # v * 3.0 stays
    np.testing.assert_allclose(eval_jaxpr(out.jaxpr, out.consts, X)[0], eval_jaxpr(closed.jaxpr, closed.consts, X)[0])
    assert rewrite(out, [times_two_to_add]) is out  # nothing left to do: the same value back


def _fma_p() -> Primitive:
    p = Primitive("test_rewrite_fma")
    p.def_abstract_eval(lambda a, b, c: a)
    p.def_impl(lambda a, b, c: a * b + c)
    return p


def test_fusion_rule_uses_definitions_and_use_counts() -> None:
    fma_p = _fma_p()

    @pattern(add_p)
    def fuse(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
        x, y = eqn.invars
        prod = ctx.definition_of(x, mul_p)
        if prod is None or ctx.num_uses(x) != 1:
            return None
        return ctx.emit(fma_p, *prod.invars, y)

    def f(a: Any, b: Any) -> Any:
        return a * b + a, (a * a) + b + (a * a)

    closed = fcore.make_jaxpr(f)(X, X)
    cse_first = cse(closed)  # a * a appears twice: after cse it has two uses and is not fused
    out = rewrite(cse_first, [fuse], dce=True, check=True)
    prims = [e.primitive.name for e in out.eqns]
    assert prims.count("test_rewrite_fma") == 1 and prims.count("mul") == 1, out
    want = [np.asarray(v) for v in eval_jaxpr(closed.jaxpr, (), X, X)]
    got = [np.asarray(v) for v in eval_jaxpr(out.jaxpr, (), X, X)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_use_def_queries() -> None:
    b = JaxprBuilder()
    x = b.invar(VEC)
    (s,) = b.eqn(sin_p, [x])
    (t,) = b.eqn(add_p, [s, s])
    (u,) = b.eqn(neg_p, [t])
    closed = b.build_closed([u, s])
    seen: dict[str, object] = {}

    def look(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
        if eqn.primitive is neg_p:
            (arg,) = eqn.invars
            seen["def"] = ctx.definition(arg)
            seen["users_s"] = [e.primitive.name for e in ctx.users(s)]
            seen["uses"] = (ctx.num_uses(s), ctx.num_uses(t), ctx.num_uses(x), ctx.num_uses(Literal.of(1.0, VEC.update(shape=()))))
            seen["outputs"] = (ctx.is_output(s), ctx.is_output(t))
            seen["input_def"] = ctx.definition(x)
        return None

    assert rewrite(closed, [look]) is closed
    assert isinstance(seen["def"], JaxprEqn) and seen["def"].primitive is add_p
    assert seen["users_s"] == ["add", "add"]
    assert seen["uses"] == (3, 1, 1, 0)  # s: twice in add, once as an output
    assert seen["outputs"] == (True, False)
    assert seen["input_def"] is None


def test_replacement_forms() -> None:
    b = JaxprBuilder()
    x = b.invar(VEC)
    (y,) = b.eqn(neg_p, [x])
    (z,) = b.eqn(sin_p, [y])
    closed = b.build_closed([z])

    # A jaxpr taking the equation's operands, inlined with fresh variables.
    body = JaxprBuilder()
    v = body.invar(VEC)
    (w,) = body.eqn(mul_p, [v, body.literal(-1.0, F32)])
    neg_as_mul = body.build_closed([w])
    out = rewrite(closed, [Pattern(lambda e, ctx: neg_as_mul, frozenset({neg_p}))], check=True)
    assert [e.primitive for e in out.eqns] == [mul_p, sin_p]
    # An equation binding the same outputs.
    out = rewrite(closed, [Pattern(lambda e, ctx: e.replace(primitive=sin_p), frozenset({neg_p}))], check=True)
    assert [e.primitive for e in out.eqns] == [sin_p, sin_p]
    np.testing.assert_allclose(eval_jaxpr(out.jaxpr, (), X)[0], np.sin(np.sin(X)), rtol=1e-6)


def test_replacement_of_another_type_is_rejected() -> None:
    b = JaxprBuilder()
    x = b.invar(VEC)
    (y,) = b.eqn(sin_p, [x])
    (s,) = b.eqn(sin_p, [b.literal(1.0, F32)])
    closed = b.build_closed([y, s])
    with pytest.raises(RewriteError, match=r"replaced sin \(results \(f32\[3\]\)\) by values of types \(f32\[\]\)"):
        rewrite(closed, [Pattern(lambda e, ctx: [s] if e.invars[0] is x else None)])
    body = JaxprBuilder()
    body.invar(shaped_array((), F32))
    wrong = body.build_closed([body.literal(0.0, F32)])
    with pytest.raises(RewriteError, match="returned a jaxpr taking"):
        rewrite(closed, [Pattern(lambda e, ctx: wrong if e.invars[0] is x else None)])


def test_rule_that_never_settles_is_reported() -> None:
    b = JaxprBuilder()
    x = b.invar(VEC)
    (y,) = b.eqn(sin_p, [x])
    closed = b.build_closed([y])
    fresh_copy = Pattern(lambda e, ctx: ctx.emit(sin_p, *e.invars), frozenset({sin_p}))  # always "changes"
    with pytest.raises(RuntimeError, match="did not reach a fixpoint in 5 sweeps"):
        rewrite(closed, [fresh_copy], max_sweeps=5)
    once = rewrite(closed, [fresh_copy], fixpoint=False)  # one sweep: one replacement
    assert len(once.eqns) == 1 and once.eqns[0] is not closed.eqns[0]


# -- traits and hooks ------------------------------------------------------------------------
def _binary(name: str, *, commutative: bool = False, idempotent: bool = False, pure: bool = True) -> Primitive:
    p = Primitive(name, commutative=commutative, idempotent=idempotent, pure=pure)
    p.def_abstract_eval(lambda a, b: a)
    p.def_impl(lambda a, b: np.maximum(a, b))
    return p


def _two_way(p: Primitive) -> ClosedJaxpr:
    b = JaxprBuilder()
    x, y = b.invar(VEC), b.invar(VEC)
    (u,) = b.eqn(p, [x, y])
    (v,) = b.eqn(p, [y, x])
    (w,) = b.eqn(p, [u, u])
    return b.build_closed([u, v, w])


def test_cse_merges_operand_orders_of_a_commutative_primitive() -> None:
    plain = cse(_two_way(_binary("test_rewrite_plain")))
    assert len(plain.eqns) == 3
    merged = cse(_two_way(_binary("test_rewrite_commutative", commutative=True)))
    assert len(merged.eqns) == 2 and merged.jaxpr.outvars[0] is merged.jaxpr.outvars[1]


def test_simplify_applies_idempotence() -> None:
    out = simplify_algebra(_two_way(_binary("test_rewrite_idempotent", idempotent=True)))
    assert out.jaxpr.outvars[2] is out.jaxpr.outvars[0]  # p(u, u) -> u
    unary = Primitive("test_rewrite_clamp", idempotent=True)
    unary.def_abstract_eval(lambda a: a)
    b = JaxprBuilder()
    x = b.invar(VEC)
    (y,) = b.eqn(unary, [x])
    (z,) = b.eqn(unary, [y])
    out = simplify_algebra(b.build_closed([z]))
    assert len(out.eqns) == 1  # p(p(x)) -> p(x)
    # fcore's own primitives declare their traits: max(x, x) -> x, abs(abs(x)) -> abs(x).
    closed = fcore.make_jaxpr(lambda v: (lax.max(v, v), fnp.abs(fnp.abs(v))))(X)
    assert [e.primitive.name for e in simplify_algebra(closed).eqns] == ["abs"]


def test_impure_primitive_is_neither_merged_nor_dropped() -> None:
    p = _binary("test_rewrite_impure", pure=False, commutative=True)
    closed = _two_way(p)
    assert len(cse(closed).eqns) == 3
    b = JaxprBuilder()
    x = b.invar(VEC)
    b.eqn(p, [x, x])
    assert len(dce(b.build_closed([x])).eqns) == 1
    assert not is_pure(closed.eqns[0]) and not is_effectful(closed.eqns[0])


def test_effectful_equations_are_not_pure() -> None:
    def f(x: Any) -> Any:
        fcore.debug.print("x={}", x)
        fcore.debug.print("x={}", x)
        return x

    closed = fcore.make_jaxpr(f)(X)
    prints = [e for e in closed.eqns if is_effectful(e)]
    assert len(prints) == 2 and not any(is_pure(e) for e in prints)
    assert sum(is_effectful(e) for e in simplify_algebra(cse(closed)).eqns) == 2  # neither merged nor dropped


def test_fold_and_canonicalize_hooks() -> None:
    """A primitive folds ``zeros_like(x)`` to a literal whatever ``x`` is, and canonicalizes
    ``scaled(x, 1) -> x``."""
    zeros_like = Primitive("test_rewrite_zeros_like")
    zeros_like.def_abstract_eval(lambda a: a)
    scaled = Primitive("test_rewrite_scaled")
    scaled.def_abstract_eval(lambda a, s: a)

    @fold_rules.register(zeros_like)
    def _fold(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
        aval = eqn.outvars[0].aval
        return [Literal.of(0, aval)] if aval.shape == () else None

    @canonicalize_rules.register(scaled)
    def _canon(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
        x, s = eqn.invars
        return [x] if literal_value(s) == 1 and x.aval == eqn.outvars[0].aval else None

    b = JaxprBuilder()
    x = b.invar(shaped_array((), F32))
    (z,) = b.eqn(zeros_like, [x])
    (y,) = b.eqn(scaled, [x, b.literal(1.0, F32)])
    (w,) = b.eqn(add_p, [y, z])
    closed = b.build_closed([w])
    folded = fold_constants(closed)
    assert [e.primitive for e in folded.eqns] == [scaled, add_p]
    simple = simplify_algebra(folded)
    assert simple.eqns == () and simple.jaxpr.outvars[0] is simple.jaxpr.invars[0]  # x + 0 -> x


def test_passes_reach_nested_jaxprs() -> None:
    def f(x: Any) -> Any:
        def body(v: Any) -> Any:
            return fnp.sin(v) + fnp.sin(v) + (v * 1.0)

        return lax.cond(x[0] > 0, body, lambda v: -(-v), x)

    closed = fcore.make_jaxpr(f)(X)
    out = simplify_algebra(cse(closed))
    (cond,) = [e for e in out.eqns if e.primitive.name == "cond"]
    branches = cond.params["branches"]
    assert isinstance(branches, tuple)
    names = [[e.primitive.name for e in br.jaxpr.eqns] for br in branches if isinstance(br, ClosedJaxpr)]
    assert sorted(names) == [[], ["sin", "add", "add"]], names
    typecheck(out)


def test_rule_sets_accept_bare_functions() -> None:
    closed = fcore.make_jaxpr(lambda v: v * 2.0)(X)
    assert rewrite(closed, [times_two_to_add.rule]).eqns[0].primitive is add_p


def test_custom_jvp_rule_is_rewritten_when_traced() -> None:
    @fcore.custom_jvp
    def f(x: Any) -> Any:
        return fnp.sin(x) * 2.0

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 2.0))
    closed = fcore.make_jaxpr(f)(X)
    out = rewrite(closed, [times_two_to_add], check=True)
    (call,) = out.eqns

    def doubles(jaxpr: Jaxpr) -> int:
        return sum(e.primitive is mul_p and literal_value(e.invars[1]) == 2 for e in _all_eqns(jaxpr))

    body, rule, old_rule = call.params["call_jaxpr"], call.params["jvp"], closed.eqns[0].params["jvp"]
    assert isinstance(body, ClosedJaxpr) and doubles(body.jaxpr) == 0
    assert isinstance(rule, LazyJaxpr) and isinstance(old_rule, LazyJaxpr) and rule is not old_rule
    assert doubles(rule.get().jaxpr) == 0 and doubles(old_rule.get().jaxpr) > 0  # traced now
    run_old, run_new = fcore.core.jaxpr_as_fun(closed), fcore.core.jaxpr_as_fun(out)
    np.testing.assert_allclose(
        fcore.grad(lambda x: fnp.sum(run_new(x)[0]))(X), fcore.grad(lambda x: fnp.sum(run_old(x)[0]))(X), rtol=1e-6
    )


def test_replacements_keep_the_source_line() -> None:
    closed = fcore.make_jaxpr(lambda v: v * 2.0)(X)
    (mul,) = closed.eqns
    assert mul.source_info is not None
    (add,) = rewrite(closed, [times_two_to_add]).eqns
    assert add.primitive is add_p and add.source_info is mul.source_info

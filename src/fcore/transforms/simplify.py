"""Simplification passes: CSE, constant folding, algebraic identities, call inlining.

Each is a pure ``ClosedJaxpr -> ClosedJaxpr`` function that preserves types and
semantics and is idempotent; ``cse``, ``fold_constants`` and ``simplify_algebra`` are rule sets
run by the rewrite driver (``fcore.transforms.rewrite``), so they also simplify every jaxpr
nested in parameters. ``pipeline`` composes passes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, new_eqn
from fcore.ir.primitive import Primitive, lookup_primitive
from fcore.transforms.rewrite import Pattern, Rewrite, RewriteContext, canonicalize_rules, fold_rules, is_pure, rewrite
from fcore.transforms.util import verified

Pass = Callable[[ClosedJaxpr], ClosedJaxpr]


def _sub(subst: dict[int, Atom], a: Atom) -> Atom:
    return subst.get(id(a), a) if type(a) is Var else a


def _rebuild(jaxpr: Jaxpr, eqns: list[JaxprEqn], subst: dict[int, Atom]) -> Jaxpr:
    return Jaxpr(jaxpr.constvars, jaxpr.invars, tuple(_sub(subst, a) for a in jaxpr.outvars), tuple(eqns))


# -- cse -------------------------------------------------------------------------------------
def _cse_rule(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
    """An equation equal to an earlier one (primitive, operands, params; operands in either
    order for a commutative primitive) is replaced by the earlier one's results."""
    prim = eqn.primitive
    if not prim.pure or eqn.effects:
        return None
    operands = tuple([a.key() if type(a) is Literal else id(a) for a in eqn.invars])
    if prim.commutative and len(operands) == 2 and hash(operands[0]) > hash(operands[1]):
        operands = (operands[1], operands[0])
    key = (prim, operands, eqn.params)
    prev: tuple[Var, ...] | None = ctx.memo.get(key)
    if prev is None:
        ctx.memo[key] = eqn.outvars
        return None
    if all(p.aval == v.aval for p, v in zip(prev, eqn.outvars)):
        return prev
    return None


def cse(closed: ClosedJaxpr) -> ClosedJaxpr:
    """cse : (a -> b) -> (a -> b)

    Equations with the same primitive, operands and params compute the same value
    (pure primitives): later copies are replaced by the first. Effectful equations are
    never merged (two prints print twice).
    """
    return rewrite(closed, [_cse_rule], fixpoint=False)


# -- constant folding ------------------------------------------------------------------------
def _fold_rule(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
    """The primitive's own ``fold_rules`` hook, else: all operands literals and all results
    scalars -> the impl's results as literals."""
    prim = eqn.primitive
    hook = fold_rules.get(prim)
    invars = eqn.invars
    if hook is None:
        if not invars or type(invars[0]) is not Literal:  # the common case, decided at once
            return None
    elif is_pure(eqn):
        folded = hook(eqn, ctx)
        if folded is not None:
            return folded
    if (
        not invars
        or not all(type(a) is Literal for a in invars)
        or prim.impl_rule is None
        or prim.impl_takes_arrays
        or not all(v.aval.shape == () for v in eqn.outvars)
        or not is_pure(eqn)
    ):
        return None
    vals = [np.asarray(a.val) for a in invars if type(a) is Literal]
    out = prim.impl_rule(*vals, **eqn.params)
    outs = list(out) if prim.multiple_results else [out]
    return [Literal.of(np.asarray(o, v.aval.dtype), v.aval) for v, o in zip(eqn.outvars, outs)]


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """fold_constants : (a -> b) -> (a -> b)

    Equations whose operands are all literals and whose results are scalars are
    evaluated now (with the primitive's impl) and replaced by literals; a primitive may
    register its own folding in ``fold_rules``. Effectful equations are never evaluated
    at compile time.
    """
    return rewrite(closed, [_fold_rule], fixpoint=False)


# -- algebraic simplification ------------------------------------------------------------------
def _is_literal(a: Atom, value: float) -> bool:
    return type(a) is Literal and bool(np.asarray(a.val) == value)


_UNITS = {"mul": 1.0, "add": 0.0, "sub": 0.0}


def _unit_rule(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
    """``x * 1 -> x``, ``x + 0 -> x``, ``x - 0 -> x`` (and the unit on the left where the
    primitive is commutative), when the result has ``x``'s type."""
    unit = _UNITS[eqn.primitive.name]
    (out,) = eqn.outvars
    x, y = eqn.invars
    if _is_literal(y, unit) and x.aval == out.aval:
        return [x]
    if eqn.primitive.commutative and _is_literal(x, unit) and y.aval == out.aval:
        return [y]
    return None


def _single_use_def(ctx: RewriteContext, a: Atom, name: str) -> JaxprEqn | None:
    if ctx.num_uses(a) != 1:
        return None
    d = ctx.definition(a)
    return d if d is not None and d.primitive.name == name else None


def _neg_rule(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
    """``neg(neg x) -> x`` and ``neg(mul(neg a, b)) -> mul(a, b)`` when the inner values have
    no other use."""
    (x,) = eqn.invars
    inner = _single_use_def(ctx, x, "neg")
    if inner is not None:
        return [inner.invars[0]]
    prod = _single_use_def(ctx, x, "mul")
    if prod is None:
        return None
    a, b = prod.invars
    neg_a, neg_b = _single_use_def(ctx, a, "neg"), _single_use_def(ctx, b, "neg")
    if neg_a is not None:
        return prod.replace(invars=(neg_a.invars[0], b), outvars=eqn.outvars)
    if neg_b is not None:
        return prod.replace(invars=(a, neg_b.invars[0]), outvars=eqn.outvars)
    return None


def _trait_rule(eqn: JaxprEqn, ctx: RewriteContext) -> Rewrite:
    """The primitive's ``canonicalize_rules`` hook, and for an idempotent primitive
    ``f(f(x)) -> f(x)`` (unary, same params) and ``f(x, x) -> x`` (binary, when the result has
    ``x``'s type)."""
    prim = eqn.primitive
    hook = canonicalize_rules.get(prim)
    if hook is not None:
        result = hook(eqn, ctx)
        if result is not None:
            return result
    if not prim.idempotent or len(eqn.outvars) != 1 or not is_pure(eqn):
        return None
    if len(eqn.invars) == 1:
        inner = ctx.definition_of(eqn.invars[0], prim)
        if inner is not None and inner.params == eqn.params:
            return [eqn.invars[0]]
    elif len(eqn.invars) == 2:
        x, y = eqn.invars
        if (x is y or (type(x) is Literal and x == y)) and x.aval == eqn.outvars[0].aval:
            return [x]
    return None


@functools.cache
def _simplify_patterns() -> tuple[Pattern, ...]:
    """The rules of ``simplify_algebra``, indexed by the primitives they match (looked up by name
    when first needed: this module is imported before fcore.lax defines them)."""

    def prims(*names: str) -> frozenset[Primitive[Any]]:
        found = (lookup_primitive(n) for n in names)
        return frozenset(p for p in found if p is not None)

    return (
        Pattern(_unit_rule, prims(*_UNITS)),
        Pattern(_neg_rule, prims("neg")),
        Pattern(_trait_rule),
    )


def simplify_algebra(closed: ClosedJaxpr) -> ClosedJaxpr:
    """simplify_algebra : (a -> b) -> (a -> b)

    Local identities that transposition and differentiation leave behind:
    ``x * 1 -> x``, ``x + 0 -> x``, ``neg(neg x) -> x`` and
    ``neg(mul(neg a, b)) -> mul(a, b)`` (when the inner values have no other use); for
    idempotent primitives ``f(f(x)) -> f(x)`` and ``f(x, x) -> x``; and each primitive's
    ``canonicalize_rules`` hook. Unused equations are removed; rewriting repeats until
    nothing changes.
    """
    return rewrite(closed, _simplify_patterns(), dce=True)


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """inline_calls : (a -> b) -> (a -> b)

    Replaces every ``jit`` equation by the equations of its jaxpr (recursively, with
    fresh variables for each inlined body), so later passes see one flat program.
    """
    jaxpr = closed.jaxpr
    eqns: list[JaxprEqn] = []
    env: dict[int, Atom] = {}
    _inline_into(eqns, jaxpr, env, fresh=False)
    return verified(ClosedJaxpr(_rebuild(jaxpr, eqns, env), closed.consts))


def _inline_into(out: list[JaxprEqn], jaxpr: Jaxpr, env: dict[int, Atom], fresh: bool) -> list[Atom]:
    """Append ``jaxpr``'s equations (calls inlined) to ``out``; return its outputs.

    Recursion follows call nesting only, never the equation list.
    """
    for eqn in jaxpr.eqns:
        invars = tuple(_sub(env, a) for a in eqn.invars)
        inner = eqn.params.get("jaxpr") if eqn.primitive.name == "jit" else None
        if isinstance(inner, ClosedJaxpr) and not inner.consts:
            inner_env: dict[int, Atom] = {
                id(v): _retyped(out, a, v) for v, a in zip(inner.jaxpr.invars, invars)
            }
            results = _inline_into(out, inner.jaxpr, inner_env, fresh=True)
            for v, r in zip(eqn.outvars, results):
                env[id(v)] = r
            continue
        outvars = eqn.outvars
        if fresh:
            outvars = tuple(Var(v.aval) for v in eqn.outvars)
            for v, n in zip(eqn.outvars, outvars):
                env[id(v)] = n
        if invars != eqn.invars or outvars is not eqn.outvars:
            eqn = eqn.replace(invars=invars, outvars=outvars)
        out.append(eqn)
    return [_sub(env, a) for a in jaxpr.outvars]


def _retyped(out: list[JaxprEqn], a: Atom, param: Var) -> Atom:
    """``a`` as the call's parameter ``param`` is typed: a call accepts an argument whose weak
    type differs (as in JAX), but its inlined body was typed for ``param``, so convert."""
    if a.aval.weak_type == param.aval.weak_type:
        return a
    convert = lookup_primitive("convert_element_type")
    assert convert is not None
    v = Var(param.aval)
    out.append(new_eqn(convert, [a], [v], {"new_dtype": param.aval.dtype, "weak_type": param.aval.weak_type}))
    return v


def pipeline(*passes: Pass) -> Pass:
    """Compose passes left to right into one ``ClosedJaxpr -> ClosedJaxpr`` pass."""

    def run(closed: ClosedJaxpr) -> ClosedJaxpr:
        for p in passes:
            closed = p(closed)
        return closed

    return run


def dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """dce : (a -> b) -> (a -> b)

    Dead-code elimination that keeps the signature (every input and output), so it
    composes in pipelines, in every nested jaxpr too; ``dce_jaxpr`` is the variant that also
    prunes inputs.
    """
    return rewrite(closed, (), dce=True)



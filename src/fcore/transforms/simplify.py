"""Simplification passes: CSE, constant folding, algebraic identities, call inlining.

Each is a pure ``ClosedJaxpr -> ClosedJaxpr`` function that preserves types and
semantics, walks the equations once, and is idempotent. ``pipeline`` composes passes.
"""

from __future__ import annotations

from collections.abc import Callable


import numpy as np

from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, new_eqn
from fcore.ir.primitive import lookup_primitive
from fcore.transforms.dce import dce_jaxpr_open
from fcore.transforms.util import verified

Pass = Callable[[ClosedJaxpr], ClosedJaxpr]


def _sub(subst: dict[int, Atom], a: Atom) -> Atom:
    return subst.get(id(a), a) if type(a) is Var else a


def _rebuild(jaxpr: Jaxpr, eqns: list[JaxprEqn], subst: dict[int, Atom]) -> Jaxpr:
    return Jaxpr(jaxpr.constvars, jaxpr.invars, tuple(_sub(subst, a) for a in jaxpr.outvars), tuple(eqns))


def _renamed(eqn: JaxprEqn, subst: dict[int, Atom]) -> JaxprEqn:
    if not subst:
        return eqn
    invars = tuple(_sub(subst, a) for a in eqn.invars)
    return eqn if invars == eqn.invars else eqn.replace(invars=invars)


def cse(closed: ClosedJaxpr) -> ClosedJaxpr:
    """cse : (a -> b) -> (a -> b)

    Equations with the same primitive, operands and params compute the same value
    (pure primitives): later copies are replaced by the first. Effectful equations are
    never merged (two prints print twice).
    """
    jaxpr = closed.jaxpr
    seen: dict[tuple[object, ...], tuple[Var, ...]] = {}
    subst: dict[int, Atom] = {}
    eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        eqn = _renamed(eqn, subst)
        if eqn.effects:
            eqns.append(eqn)
            continue
        key = (eqn.primitive, tuple(a.key() if type(a) is Literal else id(a) for a in eqn.invars), eqn.params)
        prev = seen.get(key)
        if prev is not None and all(p.aval == v.aval for p, v in zip(prev, eqn.outvars)):
            for v, p in zip(eqn.outvars, prev):
                subst[id(v)] = p
            continue
        seen[key] = eqn.outvars
        eqns.append(eqn)
    return verified(ClosedJaxpr(_rebuild(jaxpr, eqns, subst), closed.consts))


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """fold_constants : (a -> b) -> (a -> b)

    Equations whose operands are all literals and whose results are scalars are
    evaluated now (with the primitive's impl) and replaced by literals; effectful
    equations are never evaluated at compile time.
    """
    jaxpr = closed.jaxpr
    subst: dict[int, Atom] = {}
    eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        eqn = _renamed(eqn, subst)
        prim = eqn.primitive
        if (
            eqn.invars
            and all(type(a) is Literal for a in eqn.invars)
            and all(v.aval.shape == () for v in eqn.outvars)
            and prim.impl_rule is not None
            and not prim.impl_takes_arrays
            and not eqn.effects
        ):
            vals = [np.asarray(a.val) for a in eqn.invars if type(a) is Literal]
            out = prim.impl_rule(*vals, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
            for v, o in zip(eqn.outvars, outs):
                subst[id(v)] = Literal.of(np.asarray(o, v.aval.dtype), v.aval)
            continue
        eqns.append(eqn)
    return verified(ClosedJaxpr(_rebuild(jaxpr, eqns, subst), closed.consts))


def _is_literal(a: Atom, value: float) -> bool:
    return type(a) is Literal and bool(np.asarray(a.val) == value)


def simplify_algebra(closed: ClosedJaxpr) -> ClosedJaxpr:
    """simplify_algebra : (a -> b) -> (a -> b)

    Local identities that transposition and differentiation leave behind:
    ``x * 1 -> x``, ``x + 0 -> x``, ``neg(neg x) -> x`` and
    ``neg(mul(neg a, b)) -> mul(a, b)`` (when the inner values have no other use).
    Unused equations are removed; rewriting repeats until nothing changes.
    """
    current = dce(closed)
    while True:
        simplified = _simplify_once(current)
        if len(simplified.jaxpr.eqns) == len(current.jaxpr.eqns):
            return verified(simplified)
        current = simplified


def _simplify_once(closed: ClosedJaxpr) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    uses: dict[int, int] = {}
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Var:
                uses[id(a)] = uses.get(id(a), 0) + 1
    for a in jaxpr.outvars:
        if type(a) is Var:
            uses[id(a)] = uses.get(id(a), 0) + 2  # outputs are never folded away

    defs: dict[int, JaxprEqn] = {}
    subst: dict[int, Atom] = {}
    eqns: list[JaxprEqn] = []

    def single_use_def(a: Atom, name: str) -> JaxprEqn | None:
        if type(a) is not Var or uses.get(id(a), 0) != 1:
            return None
        d = defs.get(id(a))
        return d if d is not None and d.primitive.name == name else None

    for eqn in jaxpr.eqns:
        eqn = _renamed(eqn, subst)
        name = eqn.primitive.name
        out = eqn.outvars[0] if len(eqn.outvars) == 1 else None
        if out is not None and name in ("mul", "add", "sub"):
            x, y = eqn.invars
            unit = 1.0 if name == "mul" else 0.0
            if _is_literal(y, unit) and x.aval == out.aval:
                subst[id(out)] = x
                continue
            if name != "sub" and _is_literal(x, unit) and y.aval == out.aval:
                subst[id(out)] = y
                continue
        if out is not None and name == "neg":
            (x,) = eqn.invars
            inner = single_use_def(x, "neg")
            if inner is not None:
                subst[id(out)] = inner.invars[0]
                continue
            prod = single_use_def(x, "mul")
            if prod is not None:
                a, b = prod.invars
                neg_a, neg_b = single_use_def(a, "neg"), single_use_def(b, "neg")
                if neg_a is not None:
                    eqn = prod.replace(invars=(neg_a.invars[0], b), outvars=eqn.outvars)
                elif neg_b is not None:
                    eqn = prod.replace(invars=(a, neg_b.invars[0]), outvars=eqn.outvars)
        for v in eqn.outvars:
            defs[id(v)] = eqn
        eqns.append(eqn)
    return dce(ClosedJaxpr(_rebuild(jaxpr, eqns, subst), closed.consts))


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
    composes in pipelines; ``dce_jaxpr`` is the variant that also prunes inputs.
    """
    jaxpr, _ = dce_jaxpr_open(closed.jaxpr, [True] * len(closed.jaxpr.outvars), prune_inputs=False)
    keep = {id(v) for v in jaxpr.constvars}
    consts = tuple(c for v, c in zip(closed.jaxpr.constvars, closed.consts) if id(v) in keep)
    return verified(ClosedJaxpr(jaxpr, consts))



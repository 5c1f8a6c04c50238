"""Rewriting jaxprs with rules: the bookkeeping every pass needs, written once.

A *rule* looks at one equation (its operands already renamed by earlier rewrites) and a
``RewriteContext`` (use-def information: the equation defining a value, the users of a value,
literal values) and returns ``None`` (no change) or a replacement: an equation with the same
outputs, the atoms the outputs become (existing values, or new ones made with ``ctx.emit``), or a
const-free jaxpr of the same type to inline. ``rewrite`` applies rules to every equation, in
every jaxpr nested in parameters (cond branches, loop bodies, calls, custom rules, checkpoint),
until nothing changes, optionally drops dead code, and type-checks the result on request.
fcore's own ``cse``, ``fold_constants`` and ``simplify_algebra`` are rule sets run by this
driver (``fcore.transforms.simplify``); docs/embedding.md shows user rules.

Primitives carry the traits rules consult (``commutative``, ``idempotent``, ``pure``; an
equation is effectful when its ``effects`` are not empty) and may register hooks in
``fold_rules`` (evaluate an equation at compile time) and ``canonicalize_rules`` (a
primitive's own simplifications), which the built-in passes apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.errors import JaxprTypeError
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import EMPTY_PARAMS, ParamStruct, ParamValue, make_params
from fcore.ir.primitive import Primitive
from fcore.ir.rules import RuleTable
from fcore.ir.typecheck import typecheck
from fcore.config import verify_enabled
from fcore.transforms.dce import dce_jaxpr_open

#: What a rule may return: ``None`` (no change); an equation binding the same output variables;
#: the atoms the outputs become; or a const-free jaxpr (open or closed) taking the equation's
#: operands, inlined with fresh variables.
Rewrite: TypeAlias = Union[JaxprEqn, Sequence[Atom], Jaxpr, ClosedJaxpr, None]
Rule: TypeAlias = Callable[[JaxprEqn, "RewriteContext"], Rewrite]

#: A primitive's compile-time evaluation hook: consulted by ``fold_constants`` before its generic
#: rule (all-literal scalar operands through the impl); same signature and results as a rule.
fold_rules: RuleTable[Rule] = RuleTable("Constant folding")
#: A primitive's own simplifications (``f(x, 0) -> x`` ...), applied by ``simplify_algebra``.
canonicalize_rules: RuleTable[Rule] = RuleTable("Canonicalization")


class RewriteError(JaxprTypeError):
    """A rule returned a replacement of another type than the equation it replaces."""


@attrs.frozen
class Pattern:
    """A rule and the primitives it applies to (``None``: every equation)."""

    rule: Rule
    primitives: frozenset[Primitive[Any]] | None = None


def pattern(*primitives: Primitive[Any]) -> Callable[[Rule], Pattern]:
    """Decorator making a rule a ``Pattern`` over ``primitives`` (every equation if none given)."""

    def make(rule: Rule) -> Pattern:
        return Pattern(rule, frozenset(primitives) if primitives else None)

    return make


def is_pure(eqn: JaxprEqn) -> bool:
    """Whether ``eqn`` may be merged with an equal one, evaluated early or dropped when unused:
    its primitive is pure and the equation has no effects."""
    return eqn.primitive.pure and not eqn.effects


def is_effectful(eqn: JaxprEqn) -> bool:
    """Whether ``eqn`` does something besides computing its results: it has effects (from its
    primitive's effects rule, or the jaxprs in its parameters; ``fcore.ir.effects``)."""
    return bool(eqn.effects)


def literal_value(a: Atom) -> np.generic | None:
    """The value of a literal operand, ``None`` for a variable."""
    return a.val if type(a) is Literal else None


class RewriteContext:
    """Use-def information for the rules of one sweep over one jaxpr.

    ``definition`` sees the program as rewritten so far in this sweep (an operand's defining
    equation after its own rewrite); ``users`` and ``num_uses`` count uses in the jaxpr as it was
    when the sweep began (a rule can only make a value's use count smaller or move it to another
    value, so a count read as 1 never hides a second use that a rewrite would lose). ``memo`` is a
    dict the rules may use for this sweep and scope (``cse`` keeps its table there).
    """

    __slots__ = ("jaxpr", "memo", "_emitted", "_defs", "_defs_upto", "_users", "_outputs", "_pending")

    def __init__(self, jaxpr: Jaxpr, emitted: list[JaxprEqn]) -> None:
        self.jaxpr = jaxpr
        self.memo: dict[object, Any] = {}
        #: The equations the sweep has produced so far; ``_defs`` indexes the first ``_defs_upto``.
        self._emitted = emitted
        self._defs: dict[int, JaxprEqn] = {}
        self._defs_upto = 0
        self._users: dict[int, list[JaxprEqn]] | None = None
        self._outputs: dict[int, int] = {}
        self._pending: list[JaxprEqn] = []

    def definition(self, a: Atom) -> JaxprEqn | None:
        """The equation that binds ``a`` (``None`` for inputs, constants and literals)."""
        if type(a) is not Var:
            return None
        emitted, defs = self._emitted, self._defs
        if self._defs_upto < len(emitted):  # indexed on first use: passes that never ask pay nothing
            for e in emitted[self._defs_upto :]:
                for v in e.outvars:
                    defs[id(v)] = e
            self._defs_upto = len(emitted)
        return defs.get(id(a))

    def definition_of(self, a: Atom, primitive: Primitive[Any]) -> JaxprEqn | None:
        """``definition(a)`` if it is an equation of ``primitive``, else ``None``."""
        d = self.definition(a)
        return d if d is not None and d.primitive is primitive else None

    def users(self, v: Var) -> list[JaxprEqn]:
        """The equations that take ``v`` as an operand (once per use)."""
        return self._use_table().get(id(v), [])

    def num_uses(self, v: Atom) -> int:
        """How often ``v`` is used, counting each appearance among the jaxpr's outputs."""
        if type(v) is not Var:
            return 0
        return len(self._use_table().get(id(v), ())) + self._outputs.get(id(v), 0)

    def is_output(self, v: Atom) -> bool:
        self._use_table()
        return id(v) in self._outputs

    def emit(self, primitive: Primitive[Any], *invars: Atom, **params: ParamValue) -> list[Var]:
        """Add an equation to the replacement being built; returns its outputs, typed by the
        primitive's abstract evaluation. Discarded unless the rule then returns a replacement."""
        out_avals = primitive.abstract_eval([a.aval for a in invars], params)
        outvars = tuple(Var(aval) for aval in out_avals)
        self._pending.append(JaxprEqn(primitive, tuple(invars), outvars, make_params(params)))
        return list(outvars)

    def _use_table(self) -> dict[int, list[JaxprEqn]]:
        users = self._users
        if users is None:
            users = {}
            for eqn in self.jaxpr.eqns:
                for a in eqn.invars:
                    if type(a) is Var:
                        users.setdefault(id(a), []).append(eqn)
            for a in self.jaxpr.outvars:
                if type(a) is Var:
                    self._outputs[id(a)] = self._outputs.get(id(a), 0) + 1
            self._users = users
        return users


class _Rules:
    """Patterns indexed by primitive, in the order given."""

    def __init__(self, patterns: Iterable[Pattern | Rule]) -> None:
        self.by_primitive: dict[Primitive[Any], list[Rule]] = {}
        self.generic: list[Rule] = []
        ordered: list[Pattern] = [p if isinstance(p, Pattern) else Pattern(p) for p in patterns]
        prims = {q for p in ordered if p.primitives is not None for q in p.primitives}
        for prim in prims:
            self.by_primitive[prim] = [p.rule for p in ordered if p.primitives is None or prim in p.primitives]
        self.generic = [p.rule for p in ordered if p.primitives is None]



def rewrite(
    closed: ClosedJaxpr,
    rules: Iterable[Pattern | Rule],
    *,
    fixpoint: bool = True,
    dce: bool = False,
    nested: bool = True,
    check: bool | None = None,
    max_sweeps: int = 100,
) -> ClosedJaxpr:
    """Apply ``rules`` to every equation of ``closed`` (and, with ``nested``, of every jaxpr in
    its equations' parameters) until a sweep changes nothing.

    For each equation the first rule that returns a replacement wins. ``fixpoint=False`` runs one
    sweep (for rule sets that finish in one, such as CSE); ``dce`` drops unused pure equations
    after the rules (keeping every input and output); ``check`` type-checks the result (default:
    when ``fcore.config`` verify-each is on). The result has ``closed``'s type; a rule whose
    replacement has another type raises ``RewriteError``.
    """
    table = _Rules(rules)
    driver = _Driver(table, fixpoint, dce, nested, max_sweeps)
    jaxpr = driver.jaxpr(closed.jaxpr)
    consts = closed.consts
    if len(jaxpr.constvars) != len(closed.jaxpr.constvars):
        kept = {id(v) for v in jaxpr.constvars}
        consts = tuple(c for v, c in zip(closed.jaxpr.constvars, closed.consts) if id(v) in kept)
    out = closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, consts)
    if check or (check is None and verify_enabled()):
        typecheck(out)
    return out


class _Driver:
    __slots__ = ("rules", "fixpoint", "dce", "nested", "max_sweeps", "_done", "_lazy", "_fired")

    def __init__(self, rules: _Rules, fixpoint: bool, dce: bool, nested: bool, max_sweeps: int) -> None:
        self.rules = rules
        self.fixpoint = fixpoint
        self.dce = dce
        self.nested = nested
        self.max_sweeps = max_sweeps
        #: Nested jaxprs already rewritten (by id; a body shared by many equations is done once).
        self._done: dict[int, tuple[Jaxpr, Jaxpr]] = {}
        self._lazy: dict[int, tuple[ParamStruct, ParamStruct]] = {}
        #: How many replacements rules have made, in any jaxpr: the fixpoint test (a new object
        #: alone, e.g. a call rebuilt by DCE, is no progress).
        self._fired = 0

    def jaxpr(self, jaxpr: Jaxpr, prune_consts: bool = True) -> Jaxpr:
        """Sweeps to a fixpoint, each on the program the previous one left (dead code dropped
        first when ``dce``, so that use counts see only live uses)."""
        if self.dce:
            jaxpr = self._dce(jaxpr, prune_consts)
        for _ in range(self.max_sweeps):
            fired = self._fired
            jaxpr, changed = self._sweep(jaxpr)
            if changed and self.dce:
                jaxpr = self._dce(jaxpr, prune_consts)
            if self._fired == fired or not self.fixpoint:
                return jaxpr
        raise RuntimeError(
            f"rewrite did not reach a fixpoint in {self.max_sweeps} sweeps: some rule keeps changing the program"
        )

    @staticmethod
    def _dce(jaxpr: Jaxpr, prune_consts: bool) -> Jaxpr:
        pruned, _ = dce_jaxpr_open(jaxpr, [True] * len(jaxpr.outvars), prune_inputs=False)
        if not prune_consts and len(pruned.constvars) != len(jaxpr.constvars):
            pruned = pruned.replace(constvars=jaxpr.constvars)
        return pruned

    def _sweep(self, jaxpr: Jaxpr) -> tuple[Jaxpr, bool]:
        by_primitive, generic = self.rules.by_primitive, self.rules.generic
        nested = self.nested
        if not by_primitive and not generic:
            return self._sweep_nested_only(jaxpr) if nested else (jaxpr, False)
        eqns: list[JaxprEqn] = []
        ctx = RewriteContext(jaxpr, eqns)
        pending = ctx._pending
        subst: dict[int, Atom] = {}
        changed = False
        for eqn in jaxpr.eqns:
            if subst:
                invars = tuple([subst.get(id(a), a) if type(a) is Var else a for a in eqn.invars])
                if invars != eqn.invars:
                    eqn = eqn.replace(invars=invars)
            if nested and eqn.params is not EMPTY_PARAMS:
                inner = self._rewrite_params(eqn)
                if inner is not eqn:
                    eqn, changed = inner, True
            result: Rewrite = None
            for rule in by_primitive.get(eqn.primitive, generic) if by_primitive else generic:
                if pending:
                    pending.clear()
                result = rule(eqn, ctx)
                if result is not None and result is not eqn:
                    break
            else:
                eqns.append(eqn)
                continue
            changed = True
            self._fired += 1
            outputs = self._replacement(eqn, result, pending, eqns, subst, rule)
            for v, r in zip(eqn.outvars, outputs):
                if r is not v:
                    subst[id(v)] = r
        if not changed:
            return jaxpr, False
        outvars = tuple([subst.get(id(a), a) if type(a) is Var else a for a in jaxpr.outvars])
        return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, tuple(eqns)), changed

    def _sweep_nested_only(self, jaxpr: Jaxpr) -> tuple[Jaxpr, bool]:
        """A sweep without rules (e.g. DCE alone): only the nested jaxprs are visited."""
        eqns: list[JaxprEqn] | None = None
        empty = EMPTY_PARAMS
        for i, eqn in enumerate(jaxpr.eqns):
            if eqn.params is not empty:
                new = self._rewrite_params(eqn)
                if new is not eqn:
                    if eqns is None:
                        eqns = list(jaxpr.eqns)
                    eqns[i] = new
        return (jaxpr, False) if eqns is None else (jaxpr.replace(eqns=tuple(eqns)), True)

    def _replacement(
        self,
        eqn: JaxprEqn,
        result: Rewrite,
        pending: list[JaxprEqn],
        eqns: list[JaxprEqn],
        subst: dict[int, Atom],
        rule: Rule,
    ) -> Sequence[Atom]:
        """Append what replaces ``eqn``; return the atoms its outputs become."""
        new: list[JaxprEqn] = list(pending)
        pending.clear()
        if isinstance(result, JaxprEqn):
            new.append(result)
            outputs: Sequence[Atom] = result.outvars
        elif isinstance(result, (Jaxpr, ClosedJaxpr)):
            outputs = _inline(result, eqn, new, rule)
        elif result is not None:
            outputs = [subst.get(id(a), a) if type(a) is Var else a for a in result]
        else:  # the driver passes only replacements
            raise AssertionError("no replacement")
        _check_outputs(eqn, outputs, rule)
        source = eqn.source_info
        for e in new:
            if source is not None and e.source_info is None:
                e = e.replace(source_info=source)  # the replacement came from the user's same line
            if self.nested and e.params:
                e = self._rewrite_params(e)
            eqns.append(e)
        return outputs

    def _rewrite_params(self, eqn: JaxprEqn) -> JaxprEqn:
        changes: dict[str, ParamValue] = {}
        for name, value in eqn.params.items():
            new = self._rewrite_value(value)
            if new is not value:
                changes[name] = new
        return eqn.replace(params=eqn.params.replace(**changes)) if changes else eqn

    def _rewrite_value(self, value: ParamValue) -> ParamValue:
        if isinstance(value, ClosedJaxpr):
            inner = self._nested(value.jaxpr, prune_consts=True)
            if inner is value.jaxpr:
                return value
            consts = value.consts
            if len(inner.constvars) != len(value.jaxpr.constvars):
                kept = {id(v) for v in inner.constvars}
                consts = tuple(c for v, c in zip(value.jaxpr.constvars, value.consts) if id(v) in kept)
            return ClosedJaxpr(inner, consts)
        if isinstance(value, Jaxpr):
            return self._nested(value, prune_consts=False)
        if isinstance(value, ParamStruct):
            return self._rewrite_lazy(value)
        if type(value) is tuple and any(isinstance(v, (Jaxpr, ClosedJaxpr, tuple)) for v in value):
            new = tuple(self._rewrite_value(v) for v in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        return value

    def _rewrite_lazy(self, value: ParamStruct) -> ParamValue:
        """A custom rule traced on first use (``LazyJaxpr``: a ``derive(transform)`` method):
        rewritten when it is traced, memoized so that equal calls keep equal params."""
        derive: Callable[[Callable[[ClosedJaxpr], ClosedJaxpr]], ParamStruct] | None = getattr(value, "derive", None)
        if derive is None:
            return value
        done = self._lazy.get(id(value))
        if done is not None and done[0] is value:
            return done[1]

        def rewritten(closed: ClosedJaxpr) -> ClosedJaxpr:
            out = self._rewrite_value(closed)
            assert isinstance(out, ClosedJaxpr)
            return out

        derived = derive(rewritten)
        self._lazy[id(value)] = (value, derived)
        self._lazy[id(derived)] = (derived, derived)
        return derived

    def _nested(self, jaxpr: Jaxpr, prune_consts: bool) -> Jaxpr:
        """A nested jaxpr keeps its signature; unused constants of a closed one go with their values."""
        done = self._done.get(id(jaxpr))
        if done is not None and done[0] is jaxpr:
            return done[1]
        out = self.jaxpr(jaxpr, prune_consts)
        self._done[id(jaxpr)] = (jaxpr, out)
        self._done[id(out)] = (out, out)  # a fixpoint: seen again in a later sweep, it stays
        return out


def _inline(body: Jaxpr | ClosedJaxpr, eqn: JaxprEqn, new: list[JaxprEqn], rule: Rule) -> list[Atom]:
    """The equations of a const-free ``body`` applied to ``eqn``'s operands, with fresh variables."""
    if isinstance(body, ClosedJaxpr):
        if body.consts:
            raise RewriteError(f"rule {_name(rule)} returned a jaxpr with constants; pass them as operands")
        body = body.jaxpr
    if body.constvars:
        raise RewriteError(f"rule {_name(rule)} returned a jaxpr with constvars; pass them as operands")
    if [v.aval for v in body.invars] != [a.aval for a in eqn.invars]:
        raise RewriteError(
            f"rule {_name(rule)} for {eqn.primitive.name} returned a jaxpr taking "
            f"{_avals(v.aval for v in body.invars)}, but the equation's operands are {_avals(a.aval for a in eqn.invars)}"
        )
    env: dict[int, Atom] = {id(v): a for v, a in zip(body.invars, eqn.invars)}
    for e in body.eqns:
        outvars = tuple(Var(v.aval) for v in e.outvars)
        env.update((id(v), n) for v, n in zip(e.outvars, outvars))
        invars = tuple(env.get(id(a), a) if type(a) is Var else a for a in e.invars)
        new.append(e.replace(invars=invars, outvars=outvars))
    return [env.get(id(a), a) if type(a) is Var else a for a in body.outvars]


def _check_outputs(eqn: JaxprEqn, outputs: Sequence[Atom], rule: Rule) -> None:
    ok = len(outputs) == len(eqn.outvars)
    if ok:
        for r, v in zip(outputs, eqn.outvars):
            if r.aval is not v.aval and r.aval != v.aval:
                ok = False
    if not ok:
        raise RewriteError(
            f"rule {_name(rule)} replaced {eqn.primitive.name} (results {_avals(v.aval for v in eqn.outvars)}) "
            f"by values of types {_avals(a.aval for a in outputs)}"
        )


def _avals(avals: Iterable[ShapedArray]) -> str:
    return "(" + ", ".join(a.jaxpr_text() for a in avals) + ")"


def _name(rule: Rule) -> str:
    return getattr(rule, "__qualname__", repr(rule))


__all__ = [
    "Pattern",
    "Rewrite",
    "RewriteContext",
    "RewriteError",
    "Rule",
    "canonicalize_rules",
    "fold_rules",
    "is_effectful",
    "is_pure",
    "literal_value",
    "pattern",
    "rewrite",
]



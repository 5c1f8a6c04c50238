"""Forward-mode differentiation: the jvp rules, applied by a trace and by a jaxpr pass.

Both ``JVPTrace`` (the front end behind ``fcore.jvp``/``linearize``) and
``jvp_jaxpr`` (the pure pass) call the same per-primitive rule; a rule is written once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal as TypingLiteral, overload

from typing_extensions import Concatenate, TypeAlias

from fcore.interpreters.array import Array, ArrayImpl
from fcore.config import eager_checks
from fcore.interpreters.eval import EvalTrace, check_eager, get_aval
from fcore.interpreters.stack import CURRENT_TRACE, bind_with_trace, set_current_trace, trace_now
from fcore.interpreters.staging import StagingTrace
from fcore.interpreters.trace import (
    EQN_SOURCE,
    Trace,
    Tracer,
    current_source_info,
    equation_source,
    transform_name_stack,
)
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import SUPPORTED_DTYPES, is_inexact
from fcore.ir.core import ClosedJaxpr, Literal
from fcore.ir.params import ParamValue
from fcore.ir.primitive import P, Primitive
from fcore.ir.rules import RuleTable
from fcore.transforms import ad_util
from fcore.transforms.ad_util import Tangent, Zero, add_tangents, has_tangent, zero_of
from fcore.transforms.util import bools, literal_value

#: The trace variable's ``set``/``reset``, bound once (a method looked up on the variable makes a
#: bound-method object per call): ``JVPTrace`` makes its rule trace current around every rule.
_set_trace, _reset_trace = CURRENT_TRACE.set, CURRENT_TRACE.reset
#: ``object.__new__``, looked up once: ``JVPTrace`` fills a result tracer's slots itself (an
#: ``__init__`` frame costs more than the four stores).
_new_tracer = object.__new__
#: The dtypes with a tangent space (``has_tangent``'s test, as one set lookup inline).
_INEXACT = frozenset(d for d in SUPPORTED_DTYPES if is_inexact(d))

#: A jvp rule: ``(primals, tangents, **params) -> (primals_out, tangents_out)`` (lists where the
#: primitive has several results). ``P`` is the primitive's parameter signature.
JvpRule: TypeAlias = Callable[Concatenate[list[Array], list[Array], P], tuple[Any, Any]]
#: A jvp rule that receives ``Zero`` for a symbolic-zero tangent instead of materialized zeros.
SymbolicZerosJvpRule: TypeAlias = Callable[Concatenate[list[Array], list[Tangent], P], tuple[Any, Any]]


class JvpRules(RuleTable["SymbolicZerosJvpRule[...]"]):
    """The jvp rules, applied by ``JVPTrace`` and by ``jvp_jaxpr``.

    Stored rules take symbolic zeros; a rule registered without ``symbolic_zeros=True``
    (the usual case for a user's rule) is given materialized zeros.
    """

    __slots__ = ()

    @overload  # type: ignore[override]
    def register(
        self, prim: Primitive[P], *, symbolic_zeros: TypingLiteral[False] = False
    ) -> Callable[[JvpRule[P]], JvpRule[P]]: ...
    @overload
    def register(
        self, prim: Primitive[P], *, symbolic_zeros: TypingLiteral[True]
    ) -> Callable[[SymbolicZerosJvpRule[P]], SymbolicZerosJvpRule[P]]: ...
    def register(self, prim: Primitive[P], *, symbolic_zeros: bool = False) -> Callable[[Any], Any]:
        store = super().register(prim)

        def define(rule: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
            _self_contained.discard(prim)  # the def* helpers mark their own rules again
            _tangent_halves.pop(prim, None)
            if symbolic_zeros:
                store(rule)
                return rule

            @functools.wraps(rule)  # keeps the rule's signature visible (tests check it against the schema)
            def instantiating(primals: list[Array], tangents: list[Tangent], /, **params: ParamValue) -> tuple[Any, Any]:
                return rule(primals, [ad_util.instantiate(t) for t in tangents], **params)

            store(instantiating)
            return rule

        return define


jvp_rules = JvpRules("Differentiation")
_jvp_rule = jvp_rules.get

#: Primitives whose jvp rule is one of the ``def*`` helpers below over fcore's own tangent
#: functions: it runs no user code, so every equation it stages comes from the user's bind.
#: ``JVPTrace`` captures that bind's source info once and the rule's equations inherit it,
#: instead of each staged equation walking the stack up through the rule's frames.
_self_contained: set[Primitive] = set()


def _mark_self_contained(prim: Primitive, fns: Sequence[TangentFn | None] = ()) -> None:
    if all(fn is None or getattr(fn, "__module__", "").startswith("fcore.") for fn in fns):
        _self_contained.add(prim)


def call_jvp_rule(
    prim: Primitive, primals: list[Any], tangents: list[Any], params: dict[str, ParamValue]
) -> tuple[list[Any], list[Any]]:
    """Apply ``prim``'s jvp rule (it may not mutate the lists it is given); results as lists,
    integer outputs get ``Zero`` tangents."""
    out, tout = jvp_rules[prim](primals, tangents, **params)
    if not prim.multiple_results:
        aval = get_aval(out)
        return [out], [Zero(aval) if tout is None or not has_tangent(aval) else tout]
    outs, touts = list(out), list(tout)
    for i, (o, t) in enumerate(zip(outs, touts)):
        aval = get_aval(o)
        if t is None or not has_tangent(aval):
            touts[i] = Zero(aval)
    return outs, touts


def zero_tangent(x: object) -> Zero:
    return Zero(get_aval(x))


# -- rule helpers used by fcore's own primitive families ------------------------------------
TangentFn = Callable[..., Any]


def sum_tangent_terms(out: Any, terms: Sequence[Any], arity: int = 2) -> Any:
    """Add per-operand tangent contributions; a term of a broadcast operand (rank 0, or with
    size-1 dimensions) is broadcast to the output's shape (only an operation of several
    operands can need it)."""
    if not terms:
        return Zero(get_aval(out))
    acc = terms[0]
    for term in terms[1:]:
        acc = add_tangents(acc, term)
    if arity > 1 and type(acc) is not Zero:
        shape = get_aval(out).shape
        acc_shape = get_aval(acc).shape
        if acc_shape != shape:  # rank 0, or size-1 dimensions of the same rank
            acc = ad_util.vspace().broadcast_in_dim(acc, shape, tuple(range(len(acc_shape))))
    return acc


#: A single-result primitive whose rule was built by the ``def*`` helpers below -> the rule's
#: tangent half, ``(primals, tangents, out, **params) -> tangent``. ``JVPTrace`` binds the primal
#: itself (in the parent, without passing through the rule trace: ``linearize``'s primal work is
#: computed now) and calls only this half. Registering another rule for the primitive (a user's)
#: removes its entry: the registered rule stays the one definition.
_tangent_halves: dict[Primitive, Callable[..., Any]] = {}


def _register_split(prim: Primitive, tangent: Callable[..., Any]) -> None:
    """Register ``prim``'s rule: bind the primal under the current trace, then ``tangent``."""

    def rule(primals: list[Any], tangents: list[Any], **params: ParamValue) -> tuple[Any, Any]:
        out = trace_now().process_primitive(prim, primals, params)  # bind, without repacking
        return out, tangent(primals, tangents, out, **params)

    jvp_rules.register(prim, symbolic_zeros=True)(rule)
    if not prim.multiple_results:
        _tangent_halves[prim] = tangent


def defjvp(prim: Primitive, *fns: TangentFn | None) -> None:
    """Jvp from one function per operand: ``fns[i](t_i, *primals, **params)`` is the
    contribution of operand i's tangent (``None`` = not differentiable)."""

    def tangent(primals: list[Any], tangents: list[Any], out: Any, **params: ParamValue) -> Any:
        terms = []
        for fn, t in zip(fns, tangents):  # a loop, not a comprehension: one frame less per operation
            if fn is not None and type(t) is not Zero:
                terms.append(fn(t, *primals, **params))
        if len(terms) == 1:  # ``sum_tangent_terms`` of one term that needs no broadcast, inline
            t = terms[0]
            if len(primals) == 1 or type(t) is Zero or get_aval(t).shape == get_aval(out).shape:
                return t
        return sum_tangent_terms(out, terms, len(primals))

    fn0 = fns[0] if len(fns) == 1 else None
    if fn0 is None:
        _register_split(prim, tangent)
    else:

        def unary_tangent(primals: list[Any], tangents: list[Any], out: Any, **params: ParamValue) -> Any:
            """``tangent`` of a unary primitive: its one term, without the loop and the list."""
            if len(tangents) == 1 and type(tangents[0]) is not Zero:
                return fn0(tangents[0], *primals, **params)
            return tangent(primals, tangents, out, **params)

        _register_split(prim, unary_tangent)
    _mark_self_contained(prim, fns)


def defjvp_with_output(prim: Primitive, *fns: TangentFn | None) -> None:
    """Like ``defjvp`` but each ``fns[i](t_i, out, *primals, **params)`` also sees the output."""

    def tangent(primals: list[Any], tangents: list[Any], out: Any, **params: ParamValue) -> Any:
        terms = []
        for fn, t in zip(fns, tangents):
            if fn is not None and type(t) is not Zero:
                terms.append(fn(t, out, *primals, **params))
        if len(terms) == 1 and len(primals) == 1:
            return terms[0]
        return sum_tangent_terms(out, terms, len(primals))

    _register_split(prim, tangent)
    _mark_self_contained(prim, fns)


def defjvp_zero(prim: Primitive) -> None:
    """The output does not depend differentiably on any input (comparisons, floor, ...)."""

    def tangent(primals: list[Any], tangents: list[Any], out: Any, **params: ParamValue) -> Any:
        if prim.multiple_results:
            return [Zero(get_aval(o)) for o in out]
        return Zero(get_aval(out))

    _register_split(prim, tangent)
    _mark_self_contained(prim)


def deflinear(prim: Primitive, linear_argnums: Sequence[int] | None = None) -> None:
    """Jvp of a primitive linear in the operands ``linear_argnums`` (default: all):
    apply the primitive to the tangents (zeros instantiated only where needed)."""

    def tangent(primals: list[Any], tangents: list[Any], out: Any, **params: ParamValue) -> Any:
        if linear_argnums is None and len(tangents) == 1 and not prim.multiple_results:  # unary (neg)
            t = tangents[0]
            if type(t) is Zero:
                return Zero(get_aval(out))
            return trace_now().process_primitive(prim, [t], params)
        lin = range(len(primals)) if linear_argnums is None else linear_argnums
        for i in lin:  # a loop, not ``all()`` over a generator: one frame less per operation
            if type(tangents[i]) is not Zero:
                break
        else:
            if prim.multiple_results:
                return [Zero(get_aval(o)) for o in out]
            return Zero(get_aval(out))
        args = list(primals)
        for i in lin:
            args[i] = ad_util.instantiate(tangents[i])
        return trace_now().process_primitive(prim, args, params)

    _register_split(prim, tangent)
    _mark_self_contained(prim)


# -- the front end: a trace ---------------------------------------------------------------
class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "_aval")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any, aval: ShapedArray | None = None) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._aval = aval

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            aval = self._aval = get_aval(self.primal)
        return aval

    def __repr__(self) -> str:
        """As JAX prints them: a ``GradTracer`` under ``grad``/``vjp``/``linearize`` (its tangent
        is being staged), a ``JVPTracer`` under ``jvp``."""
        primal = _short_repr(self.primal)
        trace = self._trace
        if isinstance(trace, JVPTrace) and trace.rule_trace is not trace.parent:
            return f"GradTracer(primal={primal}, typeof(tangent)={get_aval(self.tangent).str_short(True)})"
        return f"JVPTracer(primal={primal}, tangent={_short_repr(self.tangent)})"


def _short_repr(x: object) -> str:
    return repr(x) if isinstance(x, Tracer) else str(x)


class JVPTrace(Trace):
    """Carries (primal, tangent) pairs. Rules run with ``rule_trace`` current: the parent
    for ``jvp``; a partial-evaluation trace for ``linearize`` (so tangent work is staged)."""

    __slots__ = ("parent", "rule_trace", "stages_rules", "eager_parent")

    def __init__(self, parent: Trace, description: str, rule_trace: Trace | None = None) -> None:
        super().__init__(description)
        self.parent = parent
        self.rule_trace = parent if rule_trace is None else rule_trace
        #: Whether the rules' binds become equations that record source info (``linearize``;
        #: ``jvp`` under staging).
        self.stages_rules = isinstance(self.rule_trace, StagingTrace) and getattr(
            self.rule_trace, "record_source_info", True
        )
        #: Whether primal work is evaluated now, by the eager trace.
        self.eager_parent = type(parent) is EvalTrace

    def unpack(self, x: Any) -> tuple[Any, Any]:
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        if type(x) is ArrayImpl:
            return x, zero_of(x.aval)
        if isinstance(x, Tracer):
            x._trace.check_alive()
        return x, zero_tangent(x)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        primals = []
        tangents = []
        nonzero = False
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                p, t = a.primal, a.tangent
            else:
                p, t = self.unpack(a)
            primals.append(p)
            tangents.append(t)
            nonzero = nonzero or type(t) is not Zero
        if not nonzero:
            return bind_with_trace(self.parent, prim, primals, params)
        tangent = _tangent_halves.get(prim)
        if tangent is not None and self.eager_parent:
            # A ``def*`` rule, split, under eager evaluation (``grad`` called eagerly): the primal
            # computed now by ``EvalTrace.process_primitive``'s eager fast path, inline (the rule
            # trace would forward it there), then only the tangent half runs under the rule trace.
            eager = prim.eager_rule
            if eager is None:
                out = None
            else:  # (no keyword arguments to unpack for a parameterless primitive)
                out = eager(*primals, **params) if params else eager(*primals)
            if out is None:
                out = self.parent.process_primitive(prim, primals, params)
            elif eager_checks():  # verify-each, NaN/Inf checks (``EvalTrace``'s)
                check_eager(prim, primals, params, out)
            if not self.stages_rules:  # nothing records source info: no capture to set up
                token = _set_trace(self.rule_trace)
                try:
                    tout = tangent(primals, tangents, out, **params) if params else tangent(primals, tangents, out)
                finally:
                    _reset_trace(token)
            else:
                tout = self._tangent_with_source(prim, tangent, primals, tangents, out, params)
        else:
            token = _set_trace(self.rule_trace)
            source = None
            try:
                if self.stages_rules and prim in _self_contained and EQN_SOURCE.get() is None:
                    # The user's line, found once here rather than by each equation the rule stages.
                    source = EQN_SOURCE.set(current_source_info())
                if tangent is not None:  # the primal is bound in the (staging) parent directly
                    out = bind_with_trace(self.parent, prim, primals, params)
                    tout = tangent(primals, tangents, out, **params)
                elif (rule := _jvp_rule(prim)) is None or prim.multiple_results:
                    outs, touts = call_jvp_rule(prim, primals, tangents, params)
                    if not prim.multiple_results:
                        return JVPTracer(self, outs[0], touts[0])
                    return [JVPTracer(self, o, t) for o, t in zip(outs, touts)]
                else:
                    out, tout = rule(primals, tangents, **params)
            finally:
                if source is not None:
                    EQN_SOURCE.reset(source)
                _reset_trace(token)
        # ``call_jvp_rule``'s single-result case, inline.
        if type(out) is ArrayImpl:
            aval = out._aval  # (the eager fast paths give their results their operand's type)
            if aval is None:
                aval = out.aval
        else:
            aval = get_aval(out)
        if tout is None or aval.dtype not in _INEXACT:  # ``has_tangent``, inline
            tout = Zero(aval)
        r = _new_tracer(JVPTracer)  # JVPTracer(self, out, tout, aval) without the ``__init__`` frame
        r._trace = self
        r.primal = out
        r.tangent = tout
        r._aval = aval
        return r

    def _tangent_with_source(
        self, prim: Primitive, tangent: Callable[..., Any], primals: list[Any], tangents: list[Any], out: Any,
        params: dict[str, ParamValue],
    ) -> Any:
        """``tangent`` under the rule trace, its equations given the user's line found once."""
        token = _set_trace(self.rule_trace)
        source = None
        try:
            if prim in _self_contained and EQN_SOURCE.get() is None:
                source = EQN_SOURCE.set(current_source_info())
            return tangent(primals, tangents, out, **params)
        finally:
            if source is not None:
                EQN_SOURCE.reset(source)
            _reset_trace(token)

    def to_concrete(self, tracer: Tracer, reason: str) -> object:
        assert isinstance(tracer, JVPTracer)
        return tracer.primal


# -- the pure pass ------------------------------------------------------------------------
def jvp_jaxpr(
    closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: bool | Sequence[bool]
) -> tuple[ClosedJaxpr, list[bool]]:
    """jvp_jaxpr : (a -> b) -> ((a, T a_nz) -> (b, T b_nz))

    Inputs of the result: all primals, then tangents for the ``nonzeros`` inputs.
    Outputs: all primals, then tangents for the outputs reported in ``out_nonzeros``
    (an output has a tangent if it depends on a nonzero tangent, or ``instantiate``
    forces one). Symbolic zeros emit no equations.
    """
    jaxpr = closed.jaxpr
    nonzeros = bools(nonzeros, len(jaxpr.invars), "nonzeros")
    inst = bools(instantiate, len(jaxpr.outvars), "instantiate")
    builder = StagingTrace("jvp_jaxpr")
    env: dict[int, tuple[Any, Any]] = {}
    with set_current_trace(builder), transform_name_stack("jvp"):
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[id(v)] = (builder.tracer(builder.lift_const(c)), Zero(v.aval))
        for v in jaxpr.invars:
            env[id(v)] = (builder.new_arg(v.aval), Zero(v.aval))
        for v, nz in zip(jaxpr.invars, nonzeros):
            if nz and has_tangent(v.aval):
                env[id(v)] = (env[id(v)][0], builder.new_arg(v.aval))
            elif nz:
                builder.new_arg(v.aval)  # keep the input signature; integer tangents are unused

        def read(a: Any) -> tuple[Any, Any]:
            if type(a) is Literal:
                return literal_value(a), Zero(a.aval)
            return env[id(a)]

        for eqn in jaxpr.eqns:
            pairs = [read(a) for a in eqn.invars]
            primals = [p for p, _ in pairs]
            tangents = [t for _, t in pairs]
            if all(type(t) is Zero for t in tangents):
                with equation_source(eqn):
                    outvars = builder.emit(eqn.primitive, [builder.to_atom(p) for p in primals], eqn.params)
                for v, ov in zip(eqn.outvars, outvars):
                    env[id(v)] = (builder.tracer(ov), Zero(v.aval))
                continue
            with equation_source(eqn):
                outs, touts = call_jvp_rule(eqn.primitive, primals, tangents, eqn.params.as_dict())
            for v, o, t in zip(eqn.outvars, outs, touts):
                env[id(v)] = (o, t)
        out_pairs = [read(a) for a in jaxpr.outvars]
        out_nonzeros = [type(t) is not Zero or i for (_, t), i in zip(out_pairs, inst)]
        tangent_outs = [ad_util.instantiate(t) for (_, t), nz in zip(out_pairs, out_nonzeros) if nz]
        result = builder.to_closed_jaxpr([p for p, _ in out_pairs] + tangent_outs)
    builder.alive = False
    return result, out_nonzeros


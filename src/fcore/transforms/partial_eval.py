"""Partial evaluation: split a computation into a known part and an unknown part.

``PartialEvalTrace`` does it while tracing (``linearize``: primal work runs now, in the
parent trace; tangent work is staged); ``partial_eval_jaxpr`` does it to a jaxpr.

A higher-order primitive's rule in ``partial_eval_rules``, ``(unknowns, **params)``, returns
``(known, unknown, out_unknowns, num_res)`` where ``known``/``unknown`` are either the
params of two equations of the same primitive (the known one maps the known inputs to
the known outputs and the residuals; the unknown one maps the residuals and the unknown
inputs to the unknown outputs), or, when one equation of the primitive cannot express a
half (control flow: forwarding inputs, promoting a known loop carry to unknown,
recomputation), two ``ClosedJaxpr`` s with those same signatures (consts allowed), whose
equations are inlined: the known ones run now (trace) or join the known jaxpr (pass),
the unknown ones are staged as they are, without further splitting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Union

from typing_extensions import Concatenate, TypeAlias

from fcore.interpreters.array import ArrayImpl
from fcore.config import eager_checks
from fcore.interpreters.eval import EvalTrace, check_eager
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.stack import bind_with_trace, set_current_trace
from fcore.interpreters.staging import StagingTrace, StagingTracer
from fcore.interpreters.trace import Trace, current_source_info, equation_source
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, new_eqn
from fcore.ir.params import EMPTY_PARAMS, Params, ParamValue
from fcore.ir.primitive import P, Primitive
from fcore.ir.rules import RuleTable
from fcore.transforms.util import bools, verified

#: One half of a split equation: the params of an equation of the same primitive, or a jaxpr.
Half: TypeAlias = Union[dict[str, ParamValue], ClosedJaxpr]
#: A partial-evaluation rule: ``(unknowns, **params) -> (known, unknown, out_unknowns, num_res)``.
PartialEvalRule: TypeAlias = Callable[Concatenate[list[bool], P], tuple[Half, Half, list[bool], int]]


class PartialEvalRules(RuleTable["PartialEvalRule[...]"]):
    """Rules of the higher-order primitives; any other primitive is staged whole when one of
    its operands is unknown."""

    __slots__ = ()

    def register(self, prim: Primitive[P]) -> Callable[[PartialEvalRule[P]], PartialEvalRule[P]]:
        return super().register(prim)


partial_eval_rules = PartialEvalRules("Partial evaluation")
_partial_eval_rule = partial_eval_rules.get
#: ``object.__new__``, looked up once: the per-operation path fills a tracer's two slots itself.
_new_tracer = object.__new__

#: One equation of a transient linear map on ``PartialEvalTrace.tape``: a parameterless
#: single-result primitive, its operands (this trace's variables, all of them linear, or the
#: residual values themselves) and its result variable.
TapeEntry: TypeAlias = tuple[Primitive, list[Union[Var, ArrayImpl]], Var]


class PartialEvalTrace(StagingTrace):
    """Stages equations that touch one of its own tracers (the unknowns); everything
    else is handed to ``parent`` and so computed now. Known values used by staged
    equations become constvars of the staged jaxpr: the residuals."""

    __slots__ = ("parent", "record_source_info", "share_residuals", "tape")

    def __init__(self, parent: Trace, description: str) -> None:
        super().__init__(description)
        self.parent = parent
        #: False where nothing will read a parameterless equation's source info (``linearize_flat``'s
        #: ``transient``): those are staged without it.
        self.record_source_info = True
        #: Whether a residual used twice is one constvar (``lift_const``'s deduplication); off
        #: where the linear jaxpr is transposed now and dropped (``linearize_flat``'s
        #: ``transient``): a constvar per use costs less than finding the earlier one.
        self.share_residuals = True
        #: ``linearize_flat``'s ``transient`` map, while it has only parameterless single-result
        #: equations: recorded as ``TapeEntry`` s instead of ``JaxprEqn`` s with a constvar per
        #: residual (building those was a sixth of eager ``grad``), for ``backward_tape``.
        #: Anything else staged, or ``to_jaxpr``, first writes the tape out as equations
        #: (``_flush_tape``) and stages into ``eqns`` from then on; ``None``: no tape.
        self.tape: list[TapeEntry] | None = None

    def _flush_tape(self) -> None:
        """The tape's entries as the equations they stand for (``process_primitive``'s transient
        ones: a constvar per residual, no source info); staging continues in ``eqns``."""
        tape = self.tape
        if tape is None:
            return
        self.tape = None
        for prim, operands, out in tape:
            invars: list[Atom] = []
            for a in operands:
                if type(a) is Var:
                    invars.append(a)
                else:
                    v = Var(a.aval)
                    self.const_vars.append(v)
                    self.const_vals.append(a)
                    invars.append(v)
            self.eqns.append(JaxprEqn(prim, tuple(invars), (out,), EMPTY_PARAMS, None))

    def to_jaxpr(self, outs: Sequence[object]) -> tuple[Jaxpr, list[Any]]:
        self._flush_tape()
        return super().to_jaxpr(outs)

    def to_atom(self, x: object) -> Atom:
        if type(x) is StagingTracer and x._trace is self:
            return x.atom
        if type(x) is ArrayImpl and not x._weak:
            # A residual computed now: keep it a constvar even when it is 0-d. Making it a
            # literal (and the transpose turning it back into an array) costs more than it
            # saves; weak ones (Python constants) still become literals.
            return self.lift_const(x)
        return super().to_atom(x)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        # An unknown is one of this trace's own tracers.
        for a in args:
            if type(a) is StagingTracer and a._trace is self:
                break
        else:
            parent = self.parent
            if type(parent) is EvalTrace:
                # Known work computed now. The eager trace hands any nested bind of an impl
                # back to the current trace, which (this one) forwards known work to it
                # again: making it current first would only cost time.
                eager = prim.eager_rule  # ``EvalTrace.process_primitive``'s fast path, inline
                if eager is not None:
                    out = eager(*args, **params) if params else eager(*args)
                    if out is not None:
                        if eager_checks():
                            check_eager(prim, args, params, out)
                        return out
                return parent.process_primitive(prim, args, params)
            return bind_with_trace(parent, prim, args, params)
        rule = _partial_eval_rule(prim)
        if rule is None:
            abstract_eval = prim.abstract_eval_rule
            if prim.multiple_results or abstract_eval is None or not self.alive:
                self._flush_tape()
                return super().process_primitive(prim, args, params)
            tape = self.tape
            if tape is not None:
                if not params:  # on the tape: the transient map's per-op path
                    operands: list[Var | ArrayImpl] = []
                    avals = []
                    for a in args:
                        if type(a) is StagingTracer and a._trace is self and type(a.atom) is Var:
                            v = a.atom  # (``new_arg``'s or the tape's: linear)
                            operands.append(v)
                            avals.append(v.aval)
                        elif type(a) is ArrayImpl and not a._weak:
                            operands.append(a)  # a residual
                            typed = a._aval
                            avals.append(typed if typed is not None else a.aval)
                        else:  # a literal, another trace's value: an equation of its own
                            break
                    else:
                        if len(avals) == 2:
                            aval = abstract_eval(avals[0], avals[1])
                        elif len(avals) == 1:
                            aval = abstract_eval(avals[0])
                        else:
                            aval = abstract_eval(*avals)
                        if type(aval) is ShapedArray:
                            out = Var(aval)
                            tape.append((prim, operands, out))
                            tracer = _new_tracer(StagingTracer)  # StagingTracer(self, out), no ``__init__``
                            tracer._trace = self
                            tracer.atom = out
                            return tracer
                self._flush_tape()
            # ``StagingTrace.process_primitive``'s single-result case, with this trace's operands
            # (its own tracers, residuals as constvars) read inline: the per-op path of ``linearize``.
            invars = []
            for a in args:
                if type(a) is StagingTracer and a._trace is self:
                    invars.append(a.atom)
                elif type(a) is ArrayImpl and not a._weak:
                    if self.share_residuals:
                        invars.append(self.lift_const(a))
                    else:
                        typed = a._aval  # (``a.aval``, without the property's frame where it is known)
                        v = Var(typed if typed is not None else a.aval)
                        self.const_vars.append(v)
                        self.const_vals.append(a)
                        invars.append(v)
                else:
                    invars.append(self.to_atom(a))
            if params:
                aval = abstract_eval(*[a.aval for a in invars], **params)
                if type(aval) is not ShapedArray:
                    return super().process_primitive(prim, args, params)
                out = Var(aval)
                self.eqns.append(JaxprEqn(prim, tuple(invars), (out,), Params(params), current_source_info()))
                return StagingTracer(self, out)
            # Parameterless (most elementwise operations): no keyword arguments to pass.
            if len(invars) == 2:
                aval = abstract_eval(invars[0].aval, invars[1].aval)
            elif len(invars) == 1:
                aval = abstract_eval(invars[0].aval)
            else:
                aval = abstract_eval(*[a.aval for a in invars])
            if type(aval) is not ShapedArray:
                return super().process_primitive(prim, args, params)
            out = Var(aval)
            info = current_source_info() if self.record_source_info else None
            self.eqns.append(JaxprEqn(prim, tuple(invars), (out,), EMPTY_PARAMS, info))
            tracer = _new_tracer(StagingTracer)  # StagingTracer(self, out) without the ``__init__`` frame
            tracer._trace = self
            tracer.atom = out
            return tracer
        self._flush_tape()
        unknowns = [type(a) is StagingTracer and a._trace is self for a in args]
        known_params, unknown_params, out_unknowns, num_res = rule(unknowns, **params)
        known_args = [a for a, u in zip(args, unknowns) if not u]
        unknown_args = [a for a, u in zip(args, unknowns) if u]
        if isinstance(known_params, ClosedJaxpr):
            # The rule returned the two halves as jaxprs (see the module docstring):
            # run the known one now in the parent, stage the unknown one equation by equation.
            with set_current_trace(self.parent):
                known = eval_jaxpr(known_params.jaxpr, known_params.consts, *known_args)
            res = known[len(known) - num_res :]
            assert isinstance(unknown_params, ClosedJaxpr)
            staged = self._stage_closed(unknown_params, res + unknown_args)
        else:
            assert not isinstance(unknown_params, ClosedJaxpr)
            known = bind_with_trace(self.parent, prim, known_args, known_params)
            res = known[len(known) - num_res :]
            staged = super().process_primitive(prim, res + unknown_args, unknown_params)
        n_known = len(known) - num_res
        known_it, staged_it = iter(known[:n_known]), iter(staged)
        return [next(staged_it) if u else next(known_it) for u in out_unknowns]

    def _stage_closed(self, closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
        """Stage every equation of ``closed`` (no further splitting); returns its outputs."""
        env: dict[int, Any] = {id(v): c for v, c in zip(closed.jaxpr.constvars, closed.consts)}
        env.update((id(v), a) for v, a in zip(closed.jaxpr.invars, args))

        def read(a: Atom) -> Any:
            return a if type(a) is Literal else env[id(a)]

        for eqn in closed.jaxpr.eqns:
            ins = [read(a) for a in eqn.invars]
            with equation_source(eqn):
                out = StagingTrace.process_primitive(self, eqn.primitive, ins, eqn.params.as_dict())
            outs = out if eqn.primitive.multiple_results else [out]
            env.update((id(v), o) for v, o in zip(eqn.outvars, outs))
        return [read(a) for a in closed.jaxpr.outvars]


def _inline(
    closed: ClosedJaxpr, args: Sequence[Atom], out: list[JaxprEqn], constvars: list[Var], consts: list[Any]
) -> tuple[list[Atom], list[JaxprEqn]]:
    """Append ``closed``'s equations to ``out`` with fresh binders (its constvars become new
    constvars); returns its outputs and the appended equations."""
    env: dict[int, Atom] = dict(zip(map(id, closed.jaxpr.invars), args))
    for v, c in zip(closed.jaxpr.constvars, closed.consts):
        fresh = Var(v.aval)
        constvars.append(fresh)
        consts.append(c)
        env[id(v)] = fresh
    added: list[JaxprEqn] = []
    for e in closed.jaxpr.eqns:
        ins = tuple(env.get(id(a), a) if isinstance(a, Var) else a for a in e.invars)
        outs = tuple(Var(v.aval) for v in e.outvars)
        env.update(zip(map(id, e.outvars), outs))
        added.append(e.replace(invars=ins, outvars=outs))
    out.extend(added)
    return [env.get(id(a), a) if isinstance(a, Var) else a for a in closed.jaxpr.outvars], added


def partial_eval_jaxpr(
    closed: ClosedJaxpr, unknowns: Sequence[bool], instantiate: bool | Sequence[bool]
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """partial_eval : ((a1, a2) -> (b1, b2)) -> (a1 -> (b1, r), (r, a2) -> b2)

    ``unknowns[i]`` marks input i unknown (an ``a2``). An equation is unknown when any
    input is. ``known`` maps the known inputs to the known outputs followed by the
    residuals; ``unknown`` maps the residuals followed by the unknown inputs to the
    unknown outputs. ``instantiate`` forces outputs to be unknown. Residuals are
    deduplicated and each is used by the unknown half. Equations are shared, not copied.
    """
    jaxpr = closed.jaxpr
    unknowns = bools(unknowns, len(jaxpr.invars), "unknowns")
    inst = bools(instantiate, len(jaxpr.outvars), "instantiate")
    unknown_ids: set[int] = {id(v) for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns: list[JaxprEqn] = []
    unknown_eqns: list[JaxprEqn] = []
    residuals: dict[int, Var] = {}
    # Outputs of equations whose rule returned jaxpr halves are renamed to the inlined atoms.
    subst: dict[int, Atom] = {}
    known_constvars: list[Var] = []
    known_consts: list[Any] = []
    unknown_constvars: list[Var] = []
    unknown_consts: list[Any] = []

    def sub(a: Atom) -> Atom:
        return subst.get(id(a), a) if isinstance(a, Var) else a

    def residual(a: Atom) -> None:
        if isinstance(a, Var) and id(a) not in unknown_ids and id(a) not in residuals:
            residuals[id(a)] = a

    for eqn in jaxpr.eqns:
        if subst:
            invars = tuple(sub(a) for a in eqn.invars)
            if invars != eqn.invars:
                eqn = eqn.replace(invars=invars)
        if not any(isinstance(a, Var) and id(a) in unknown_ids for a in eqn.invars):
            known_eqns.append(eqn)
            continue
        rule = partial_eval_rules.get(eqn.primitive)
        if rule is not None:
            in_unknowns = [isinstance(a, Var) and id(a) in unknown_ids for a in eqn.invars]
            with equation_source(eqn):  # the halves' equations come from this one
                known_params, unknown_params, out_unknowns, num_res = rule(in_unknowns, **eqn.params)
            known_ins = [a for a, u in zip(eqn.invars, in_unknowns) if not u]
            eqn_known_outs = [v for v, u in zip(eqn.outvars, out_unknowns) if not u]
            unknown_outs = [v for v, u in zip(eqn.outvars, out_unknowns) if u]
            if isinstance(known_params, ClosedJaxpr):
                assert isinstance(unknown_params, ClosedJaxpr)
                k_outs, _ = _inline(known_params, known_ins, known_eqns, known_constvars, known_consts)
                assert len(k_outs) == len(eqn_known_outs) + num_res
                for v, a in zip(eqn_known_outs, k_outs):
                    subst[id(v)] = a
                u_ins = k_outs[len(eqn_known_outs) :] + [a for a, u in zip(eqn.invars, in_unknowns) if u]
                u_outs, added = _inline(unknown_params, u_ins, unknown_eqns, unknown_constvars, unknown_consts)
                for e in added:
                    for a in e.invars:
                        residual(a)
                    unknown_ids.update(id(v) for v in e.outvars)
                unknown_ids.update(id(v) for v in unknown_constvars)
                for v, a in zip(unknown_outs, u_outs):
                    subst[id(v)] = a
                continue
            assert not isinstance(unknown_params, ClosedJaxpr)
            res_avals = eqn.primitive.abstract_eval([a.aval for a in known_ins], known_params)[len(eqn_known_outs):]
            res = [Var(a) for a in res_avals]
            assert len(res) == num_res
            known_eqns.append(new_eqn(eqn.primitive, known_ins, eqn_known_outs + res, known_params, eqn.source_info))
            unknown_ins = res + [a for a, u in zip(eqn.invars, in_unknowns) if u]
            unknown_eqns.append(new_eqn(eqn.primitive, unknown_ins, unknown_outs, unknown_params, eqn.source_info))
            for r in res:
                residuals[id(r)] = r
            unknown_ids.update(id(v) for v in unknown_outs)
            continue
        unknown_eqns.append(eqn)
        for a in eqn.invars:
            residual(a)
        unknown_ids.update(id(v) for v in eqn.outvars)

    outvars = [sub(a) for a in jaxpr.outvars]
    out_unknowns = [
        (isinstance(a, Var) and id(a) in unknown_ids) or i for a, i in zip(outvars, inst)
    ]
    for a, u in zip(outvars, out_unknowns):
        if u:
            residual(a)
    res_vars = list(residuals.values())
    known_outs: list[Atom] = [a for a, u in zip(outvars, out_unknowns) if not u]
    known = Jaxpr(
        jaxpr.constvars + tuple(known_constvars),
        tuple(v for v, u in zip(jaxpr.invars, unknowns) if not u),
        tuple(known_outs + list[Atom](res_vars)),
        tuple(known_eqns),
    )
    unknown = Jaxpr(
        tuple(unknown_constvars),
        tuple(res_vars) + tuple(v for v, u in zip(jaxpr.invars, unknowns) if u),
        tuple(a for a, u in zip(outvars, out_unknowns) if u),
        tuple(unknown_eqns),
    )
    return (
        verified(ClosedJaxpr(known, closed.consts + tuple(known_consts))),
        verified(ClosedJaxpr(unknown, tuple(unknown_consts))),
        out_unknowns,
        len(res_vars),
    )

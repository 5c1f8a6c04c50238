"""Partial evaluation: split a computation into a known part and an unknown part.

``PartialEvalTrace`` does it while tracing (``linearize``: primal work runs now, in the
parent trace; tangent work is staged); ``partial_eval_jaxpr`` does it to a jaxpr.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcore.interpreters.stack import bind_with_trace
from fcore.interpreters.staging import StagingTrace, StagingTracer
from fcore.interpreters.trace import Trace
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Var, new_eqn
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.transforms.util import bools, verified


class PartialEvalTrace(StagingTrace):
    """Stages equations that touch one of its own tracers (the unknowns); everything
    else is handed to ``parent`` and so computed now. Known values used by staged
    equations become constvars of the staged jaxpr: the residuals."""

    __slots__ = ("parent",)

    def __init__(self, parent: Trace, description: str) -> None:
        super().__init__(description)
        self.parent = parent

    def is_unknown(self, x: object) -> bool:
        return type(x) is StagingTracer and x._trace is self

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        unknowns = [self.is_unknown(a) for a in args]
        if not any(unknowns):
            return bind_with_trace(self.parent, prim, args, params)
        rule = prim.partial_eval_rule
        if rule is None:
            return super().process_primitive(prim, args, params)
        known_params, unknown_params, out_unknowns, num_res = rule(unknowns, **params)
        known = bind_with_trace(self.parent, prim, [a for a, u in zip(args, unknowns) if not u], known_params)
        n_known = len(known) - num_res
        res = known[n_known:]
        staged = super().process_primitive(prim, res + [a for a, u in zip(args, unknowns) if u], unknown_params)
        known_it, staged_it = iter(known[:n_known]), iter(staged)
        return [next(staged_it) if u else next(known_it) for u in out_unknowns]


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

    def residual(a: Atom) -> None:
        if isinstance(a, Var) and id(a) not in unknown_ids and id(a) not in residuals:
            residuals[id(a)] = a

    for eqn in jaxpr.eqns:
        if not any(isinstance(a, Var) and id(a) in unknown_ids for a in eqn.invars):
            known_eqns.append(eqn)
            continue
        rule = eqn.primitive.partial_eval_rule
        if rule is not None:
            in_unknowns = [isinstance(a, Var) and id(a) in unknown_ids for a in eqn.invars]
            known_params, unknown_params, out_unknowns, num_res = rule(in_unknowns, **eqn.params)
            known_ins = [a for a, u in zip(eqn.invars, in_unknowns) if not u]
            eqn_known_outs = [v for v, u in zip(eqn.outvars, out_unknowns) if not u]
            res_avals = eqn.primitive.abstract_eval([a.aval for a in known_ins], known_params)[len(eqn_known_outs):]
            res = [Var(a) for a in res_avals]
            assert len(res) == num_res
            known_eqns.append(new_eqn(eqn.primitive, known_ins, eqn_known_outs + res, known_params))
            unknown_ins = res + [a for a, u in zip(eqn.invars, in_unknowns) if u]
            unknown_outs = [v for v, u in zip(eqn.outvars, out_unknowns) if u]
            unknown_eqns.append(new_eqn(eqn.primitive, unknown_ins, unknown_outs, unknown_params))
            for r in res:
                residuals[id(r)] = r
            unknown_ids.update(id(v) for v in unknown_outs)
            continue
        unknown_eqns.append(eqn)
        for a in eqn.invars:
            residual(a)
        unknown_ids.update(id(v) for v in eqn.outvars)

    out_unknowns = [
        (isinstance(a, Var) and id(a) in unknown_ids) or i for a, i in zip(jaxpr.outvars, inst)
    ]
    for a, u in zip(jaxpr.outvars, out_unknowns):
        if u:
            residual(a)
    res_vars = list(residuals.values())
    known_outs: list[Atom] = [a for a, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known = Jaxpr(
        jaxpr.constvars,
        tuple(v for v, u in zip(jaxpr.invars, unknowns) if not u),
        tuple(known_outs + list[Atom](res_vars)),
        tuple(known_eqns),
    )
    unknown = Jaxpr(
        (),
        tuple(res_vars) + tuple(v for v, u in zip(jaxpr.invars, unknowns) if u),
        tuple(a for a, u in zip(jaxpr.outvars, out_unknowns) if u),
        tuple(unknown_eqns),
    )
    return (
        verified(ClosedJaxpr(known, closed.consts)),
        verified(ClosedJaxpr(unknown, ())),
        out_unknowns,
        len(res_vars),
    )



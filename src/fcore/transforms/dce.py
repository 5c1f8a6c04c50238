"""Dead-code elimination: equations nothing uses are dropped, unless they have effects or their
primitive is not pure (``Primitive.pure``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from typing_extensions import TypeAlias

from fcore.ir.core import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from fcore.ir.rules import RuleTable
from fcore.transforms.util import bools, verified

#: DCE of one equation of a higher-order primitive: ``(used_outputs, eqn) -> (used_inputs, eqn or
#: None)``; ``None`` drops the equation. Other primitives are kept whole or dropped whole.
DceRule: TypeAlias = Callable[[Sequence[bool], JaxprEqn], tuple[list[bool], JaxprEqn | None]]

dce_rules: RuleTable[DceRule] = RuleTable("DCE")


def dce_jaxpr_open(jaxpr: Jaxpr, used_outputs: Sequence[bool], prune_inputs: bool = True) -> tuple[Jaxpr, list[bool]]:
    """DCE of an open jaxpr; constvars are kept, invars pruned when ``prune_inputs``."""
    used_outputs = bools(used_outputs, len(jaxpr.outvars), "used_outputs")
    live: set[int] = {id(a) for a, u in zip(jaxpr.outvars, used_outputs) if u and isinstance(a, Var)}
    kept: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        used = [id(v) in live for v in eqn.outvars]
        if not any(used) and not eqn.effects and eqn.primitive.pure:  # effectful or impure: kept even then
            continue
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            used_ins, new_eqn = rule(used, eqn)
            if new_eqn is None and eqn.effects:
                used_ins, new_eqn = [True] * len(eqn.invars), eqn
            if new_eqn is None:
                continue
            for a, u in zip(eqn.invars, used_ins):  # the mask is over the original operands
                if u and isinstance(a, Var):
                    live.add(id(a))
            kept.append(new_eqn)
            continue
        kept.append(eqn)
        for a in eqn.invars:
            if isinstance(a, Var):
                live.add(id(a))
    kept.reverse()
    used_inputs = [id(v) in live for v in jaxpr.invars]
    invars = tuple(v for v, u in zip(jaxpr.invars, used_inputs) if u) if prune_inputs else jaxpr.invars
    outvars = tuple(a for a, u in zip(jaxpr.outvars, used_outputs) if u)
    used_consts = [id(v) in live for v in jaxpr.constvars]
    constvars = tuple(v for v, u in zip(jaxpr.constvars, used_consts) if u)
    if (
        len(kept) == len(jaxpr.eqns)
        and len(invars) == len(jaxpr.invars)
        and len(outvars) == len(jaxpr.outvars)
        and len(constvars) == len(jaxpr.constvars)
        and all(a is b for a, b in zip(kept, jaxpr.eqns))
    ):
        return jaxpr, used_inputs  # nothing to drop: the same value, so callers can tell
    return Jaxpr(constvars, invars, outvars, tuple(kept)), used_inputs


def dce_jaxpr(closed: ClosedJaxpr, used_outputs: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """dce : (a -> b) -> (a' -> b') where b' are the used outputs and a' the inputs they need.

    Drops unused outputs, the equations only they needed, and unused inputs and
    constants; ``used_inputs`` says which inputs survived.
    """
    jaxpr = closed.jaxpr
    new, used_inputs = dce_jaxpr_open(jaxpr, used_outputs)
    kept_ids = {id(v) for v in new.constvars}
    consts = tuple(c for v, c in zip(jaxpr.constvars, closed.consts) if id(v) in kept_ids)
    return verified(ClosedJaxpr(new, consts)), used_inputs

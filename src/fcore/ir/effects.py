"""Effects: what an equation does besides computing its results (JAX's ``core.Effect``).

An effect is a frozen value. Equations carry the set of their effects (``JaxprEqn.effects``,
computed by the primitive's effects rule from its parameters), and a jaxpr the union of its
equations' (``Jaxpr.effects``). Passes consult them: DCE keeps an effectful equation whose
results are unused, CSE never merges two, constant folding never runs one. An *ordered*
effect must also happen in program order: lowering threads a token through the equations
that have one.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs


@attrs.frozen(slots=True)
class Effect:
    """One kind of effect, named as JAX names its class (``Debug``, ``OrderedIO``, ...)."""

    name: str
    ordered: bool

    def __repr__(self) -> str:
        return f"{self.name}Effect"


#: ``Effects`` are frozen sets of effects; pure programs have the empty one.
Effects = frozenset[Effect]
NO_EFFECTS: Effects = frozenset()

#: ``fcore.debug.print`` / ``fcore.debug.callback`` (JAX's ``DebugEffect``).
debug_effect = Effect("Debug", ordered=False)
#: ``debug.print(..., ordered=True)`` (JAX's ``OrderedDebugEffect``).
ordered_debug_effect = Effect("OrderedDebug", ordered=True)
#: ``io_callback(..., ordered=False)`` (JAX's ``IOEffect``).
io_effect = Effect("IO", ordered=False)
#: ``io_callback(..., ordered=True)`` (JAX's ``OrderedIOEffect``).
ordered_io_effect = Effect("OrderedIO", ordered=True)


def union(sets: Iterable[Effects]) -> Effects:
    """The union of effect sets, sharing ``NO_EFFECTS`` when all are empty."""
    out: set[Effect] = set()
    for s in sets:
        if s:
            out.update(s)
    return frozenset(out) if out else NO_EFFECTS


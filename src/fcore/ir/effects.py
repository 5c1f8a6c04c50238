"""Effects: what an equation does besides computing its results (JAX's ``core.Effect``).

An effect is a frozen value; each kind is a subclass of ``Effect`` (as in JAX, a user's
primitive declares its own kind by subclassing), and *ordered* kinds set ``ordered = True``.
Equations carry the set of their effects (``JaxprEqn.effects``, computed by the primitive's
effects rule from its parameters), and a jaxpr the union of its equations' (``Jaxpr.effects``).
Passes consult them: DCE keeps an effectful equation whose results are unused, CSE never
merges two, constant folding never runs one. An ordered effect must also happen in program
order: lowering threads a token through the equations that have one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

import attrs


@attrs.frozen(slots=True)
class Effect:
    """The base class of effect kinds; two effects are equal when they are of the same kind
    (and have equal fields, for kinds that have fields). Prints as its class name."""

    #: Whether effects of this kind must happen in program order (JAX's ``ordered_effects``).
    ordered: ClassVar[bool] = False
    #: Why a ``while`` whose predicate is batched cannot hold an effect of this kind (its body
    #: also runs for the elements that are done); ``None``: it can.
    batched_while_error: ClassVar[str | None] = None

    def __repr__(self) -> str:
        return type(self).__name__


@attrs.frozen(slots=True, repr=False)
class DebugEffect(Effect):
    """``fcore.debug.print`` / ``fcore.debug.callback``."""


@attrs.frozen(slots=True, repr=False)
class OrderedDebugEffect(Effect):
    """``debug.print(..., ordered=True)``."""

    ordered: ClassVar[bool] = True


@attrs.frozen(slots=True, repr=False)
class IOEffect(Effect):
    """``io_callback(..., ordered=False)``."""


@attrs.frozen(slots=True, repr=False)
class OrderedIOEffect(Effect):
    """``io_callback(..., ordered=True)``."""

    ordered: ClassVar[bool] = True


#: ``Effects`` are frozen sets of effects; pure programs have the empty one.
Effects = frozenset[Effect]
NO_EFFECTS: Effects = frozenset()

debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()


def union(sets: Iterable[Effects]) -> Effects:
    """The union of effect sets, sharing ``NO_EFFECTS`` when all are empty."""
    out: set[Effect] = set()
    for s in sets:
        if s:
            out.update(s)
    return frozenset(out) if out else NO_EFFECTS

"""Rule tables: the per-primitive rules of one interpreter, as data the interpreter owns.

Each transformation owns a table (``jvp_rules`` in ``fcore.transforms.jvp``, ``lowering_rules``
in ``fcore.backend.lowering``, ...), as JAX's ``ad.primitive_jvps`` and Autodidax's
``jvp_rules`` do; a primitive holds only what is its own (docs/design.md, "The rule surface").
A user's own interpreter (a FLOP counter, an interval analysis) makes a table of its own and
registers rules in it the same way (docs/embedding.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar, cast, overload

from fcore.ir.primitive import Primitive

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
D = TypeVar("D")


class _Lookup(Protocol[R_co]):
    """``dict.get`` typed for a table: ``get(prim)`` or ``get(prim, default)``."""

    @overload
    def __call__(self, prim: Primitive[Any], default: None = None, /) -> R_co | None: ...
    @overload
    def __call__(self, prim: Primitive[Any], default: D, /) -> R_co | D: ...


class MissingRuleError(NotImplementedError):
    """A primitive has no rule in the table an interpreter needs."""


class RuleTable(Generic[R]):
    """A map from primitive to the rule of type ``R`` that one interpreter applies to it.

    Register with ``@table.register(prim)`` (or ``table.register(prim)(rule)``); look up with
    ``table.get(prim[, default])`` (``None`` when absent) or ``table[prim]``, which raises
    ``MissingRuleError`` naming the interpreter and the primitive.
    """

    __slots__ = ("name", "_rules", "get")

    def __init__(self, name: str) -> None:
        #: Names the interpreter in error messages ("Differentiation rule for 'sin' ...").
        self.name = name
        self._rules: dict[Primitive[Any], R] = {}
        #: The dict's own ``get``: interpreters look a rule up per equation.
        self.get = cast("_Lookup[R]", self._rules.get)  # dict.get has exactly these overloads

    def register(self, prim: Primitive[Any]) -> Callable[[R], R]:
        """Decorator registering its argument as ``prim``'s rule (replacing any earlier one)."""

        def define(rule: R) -> R:
            self._rules[prim] = rule
            return rule

        return define

    def __getitem__(self, prim: Primitive[Any]) -> R:
        try:
            return self._rules[prim]
        except KeyError:
            raise MissingRuleError(f"{self.name} rule for '{prim.name}' not implemented") from None

    def __contains__(self, prim: object) -> bool:
        return prim in self._rules

    def __iter__(self) -> Iterator[Primitive[Any]]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def __repr__(self) -> str:
        return f"RuleTable({self.name!r}, {len(self._rules)} rules)"

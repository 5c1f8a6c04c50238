"""JAX's rule registries (``ad.primitive_jvps``, ``batching.primitive_batchers``, ...) as views of
fcore's rule tables: ``view[p] = rule`` registers an adapter of ``rule`` in the table, so there is
one rule system, and ``view[p]`` gives back the user's rule (or, for a primitive whose rule fcore
registered itself, that rule in JAX's calling convention)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fcore.ir.primitive import Primitive
from fcore.ir.rules import RuleTable

#: A rule in JAX's calling convention (untyped in JAX too: each registry has its own signature).
JaxRule = Callable[..., Any]


class RuleView:
    """A mapping from primitive to JAX-convention rule, stored in an fcore ``RuleTable``.

    ``register(prim, rule)`` puts the adapted rule in the table; ``from_table(prim, rule)``
    presents a rule fcore registered itself in JAX's convention (``None`` where there is none).
    """

    __slots__ = ("_table", "_register", "_from_table", "_given", "_adapted")

    def __init__(
        self,
        table: RuleTable[Any],
        register: Callable[[Primitive[Any], JaxRule], Any],
        from_table: Callable[[Primitive[Any], Any], JaxRule],
    ) -> None:
        self._table = table
        self._register = register
        self._from_table = from_table
        #: The rules set through this view (what ``view[p]`` returns, as JAX's dict would) and
        #: the adapters registered for them (to tell whether the table still holds them).
        self._given: dict[Primitive[Any], JaxRule] = {}
        self._adapted: dict[Primitive[Any], Any] = {}

    def __setitem__(self, prim: Primitive[Any], rule: JaxRule) -> None:
        if not isinstance(prim, Primitive):
            raise TypeError(f"rules are registered for a Primitive, got {type(prim).__name__} {prim!r}")
        if not callable(rule):
            raise TypeError(f"the rule registered for '{prim.name}' must be callable, got {type(rule).__name__}")
        self._adapted[prim] = self._register(prim, rule)
        self._given[prim] = rule

    def __getitem__(self, prim: Primitive[Any]) -> JaxRule:
        stored = self._table[prim]  # MissingRuleError (a NotImplementedError, as JAX's KeyError is not)
        if self._adapted.get(prim) is stored:
            return self._given[prim]
        return self._from_table(prim, stored)

    def get(self, prim: Primitive[Any], default: JaxRule | None = None) -> JaxRule | None:
        return self[prim] if prim in self._table else default

    def __contains__(self, prim: object) -> bool:
        return prim in self._table

    def __iter__(self) -> Iterator[Primitive[Any]]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"<JAX-style view of {self._table!r}>"

"""``fcore.core.Primitive``: the IR's primitive plus the one-call rule registration of docs/adding_a_primitive.md.

``p.def_jvp(f)`` is shorthand for ``jvp_rules.register(p)(f)`` (and so on for transpose,
batching and lowering): the rules live in the tables of the interpreters that apply them
(docs/design.md, "The rule surface"); nothing is stored on the primitive. fcore's own
primitives register in the tables directly; the shorthands serve users who define a
primitive in a few lines, as docs/embedding.md shows.
"""

from __future__ import annotations

from collections.abc import Callable

from fcore.backend.lowering import LoweringRule, lowering_rules
from fcore.ir.primitive import P
from fcore.ir.primitive import Primitive as IrPrimitive
from fcore.ir.serialize import reduce_primitive
from fcore.transforms.batching import BatchingRule, batching_rules
from fcore.transforms.jvp import JvpRule, jvp_rules
from fcore.transforms.transpose import TransposeRule, transpose_rules


class Primitive(IrPrimitive[P]):
    """A primitive (see ``fcore.ir.primitive.Primitive``) with ``def_*`` shorthands for its rules."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Callable[[str], IrPrimitive], tuple[str]]:
        """Pickled by its registered name (``fcore.ir.serialize``): its rules are functions."""
        return reduce_primitive(self)

    def def_jvp(self, rule: JvpRule[P]) -> JvpRule[P]:
        """``jvp_rules.register(self)(rule)``: the rule gets materialized zero tangents."""
        return jvp_rules.register(self)(rule)

    def def_transpose(self, rule: TransposeRule) -> TransposeRule:
        """``transpose_rules.register(self)(rule)``."""
        return transpose_rules.register(self)(rule)

    def def_batching(self, rule: BatchingRule[P]) -> BatchingRule[P]:
        """``batching_rules.register(self)(rule)``."""
        return batching_rules.register(self)(rule)

    def def_lowering(self, rule: LoweringRule) -> LoweringRule:
        """``lowering_rules.register(self)(rule)``."""
        return lowering_rules.register(self)(rule)

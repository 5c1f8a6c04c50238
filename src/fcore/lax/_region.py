"""StableHLO text of one-block regions: the reducers of ``reduce``/``reduce_window`` and the
comparators of ``sort``, which the reduction and sorting lowerings write inline
(docs/backend.md describes the lowering).
"""

from __future__ import annotations

from collections.abc import Sequence

from fcore.backend.lowering import LoweringRuleContext, tensor_type
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType

#: The type of a region's predicates.
BOOL = ShapedArray((), dtypes.bool_)


def compare_type(dt: DType) -> str:
    """The ``compare_type`` of ``stablehlo.compare`` for operands of ``dt``."""
    if dtypes.is_inexact(dt):
        return "FLOAT"
    return "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"


class RegionBody:
    """The text of a one-block region: its values are named ``%r<N>_<i>``, with ``N`` a fresh
    number of the enclosing function, so they never clash with outer names."""

    def __init__(self, ctx: LoweringRuleContext) -> None:
        self.prefix = "%r" + ctx.fn.fresh()[1:] + "_"
        self.count = 0
        self.lines: list[str] = []

    def name(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count - 1}"

    def emit(self, rhs: str) -> str:
        out = self.name()
        self.lines.append(f"      {out} = {rhs}")
        return out

    def op(self, op: str, operands: Sequence[str], aval: ShapedArray) -> str:
        return self.emit(f"{op} {', '.join(operands)} : {tensor_type(aval)}")

    def compare(self, direction: str, x: str, y: str, aval: ShapedArray) -> str:
        t = tensor_type(aval)
        return self.emit(
            f"stablehlo.compare {direction}, {x}, {y}, {compare_type(aval.dtype)} : ({t}, {t}) -> tensor<i1>"
        )

    def select(self, pred: str, on_true: str, on_false: str, aval: ShapedArray) -> str:
        return self.emit(f"stablehlo.select {pred}, {on_true}, {on_false} : tensor<i1>, {tensor_type(aval)}")

    def part(self, op: str, x: str, aval: ShapedArray) -> tuple[str, ShapedArray]:
        """``stablehlo.real``/``imag`` of a complex scalar, and the real type it has."""
        real = aval.update(dtype=dtypes.float64 if aval.dtype == dtypes.complex128 else dtypes.float32)
        return self.emit(f"{op} {x} : ({tensor_type(aval)}) -> {tensor_type(real)}"), real

    def ret(self, values: Sequence[str], avals: Sequence[ShapedArray]) -> str:
        """The region's lines, ending in ``stablehlo.return`` of ``values``."""
        types = ", ".join(tensor_type(a) for a in avals)
        return "\n".join([*self.lines, f"      stablehlo.return {', '.join(values)} : {types}"])

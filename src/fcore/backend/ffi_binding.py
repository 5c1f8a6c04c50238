"""The FFI ``stablehlo.custom_call`` built with jaxlib's MLIR bindings (``fcore.ffi.ffi_lowering``),
for lowering rules written JAX's way: the same attributes as fcore's text lowering writes
(``fcore.backend.custom_call``), parsed into the rule's MLIR context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcore.backend.binding_lowering import aval_to_ir_type
from fcore.backend.custom_call import custom_call_attributes, string_literal
from fcore.backend.mlir_api import ir, stablehlo
from fcore.ir.avals import ShapedArray

__all__ = ["custom_call_op"]


def custom_call_op(
    target: str, operands: Sequence[ir.Value[Any]], avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray],
    **attributes: Any,
) -> stablehlo.CustomCallOp:
    """A ``stablehlo.custom_call`` of ``target`` at the current insertion point; ``attributes``
    are ``custom_call_attributes``'s keywords."""
    texts = custom_call_attributes(len(avals_out), **attributes)
    texts["call_target_name"] = string_literal(target)
    attrs = {k: ir.Attribute.parse(v) for k, v in texts.items()}
    return stablehlo.CustomCallOp.build_generic(
        results=[aval_to_ir_type(a) for a in avals_out], operands=list(operands), attributes=attrs
    )

"""``stablehlo.custom_call`` text for foreign-function (XLA FFI) calls, as JAX writes them.

Two pieces: ``attribute_text`` turns a Python value into the MLIR attribute JAX's
``mlir.ir_attribute`` makes of it (the typed attributes an FFI handler decodes: a Python
``int`` is ``i64``, a ``float`` ``f64``, NumPy scalars keep their dtype, arrays are dense
elements, strings, dtypes, sequences and dicts nest), and ``custom_call_text`` writes the op
with JAX's attribute set: the handler's attributes in ``mhlo.backend_config`` (typed FFI,
``api_version = 4``) or an opaque ``backend_config`` string (older APIs), operand and result
layouts (minor-to-major), output/operand aliases and ``has_side_effect``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fcore.backend.lowering import dense_attr, element_type, tensor_type
from fcore.ir.avals import ShapedArray

__all__ = ["attribute_text", "custom_call_attributes", "custom_call_text", "string_literal", "symbol_ref"]

#: NumPy scalar types whose values become typed scalar attributes (JAX's list).
_SCALAR_TYPES: tuple[type[np.generic], ...] = (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32,
    np.float64, np.complex64, np.complex128, np.bool_,
)
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def string_literal(text: str | bytes) -> str:
    """An MLIR string literal: printable ASCII as is, other bytes as ``\\XX``."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data) + '"'


def symbol_ref(name: str) -> str:
    """``@name``, quoted when ``name`` is not a bare MLIR identifier."""
    return f"@{name}" if _BARE_NAME.fullmatch(name) else f"@{string_literal(name)}"


def _key(name: str) -> str:
    return name if _BARE_NAME.fullmatch(name) else string_literal(name)


def _float_literal(value: np.generic) -> str:
    """An exact float literal: the shortest decimal that reads back (with the '.' MLIR needs),
    or the bit pattern in hex for infinities and NaNs."""
    x = float(value)
    if not math.isfinite(x):
        return "0x" + np.asarray(value).tobytes()[::-1].hex().upper()
    text = repr(x)
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _scalar_text(value: np.generic) -> str:
    """A typed scalar attribute (JAX's ``_numpy_scalar_attribute``)."""
    dtype = value.dtype
    if dtype == np.bool_:
        return "true" if bool(value) else "false"
    if dtype.kind in "iu":
        return f"{int(value)} : {element_type(dtype)}"
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return f"{_float_literal(value)} : {element_type(dtype)}"
    raise TypeError(f"Unsupported scalar attribute type: {type(value)}")


def _array_text(value: np.ndarray[Any, Any]) -> str:
    """A dense elements attribute (JAX's ``_numpy_array_attribute_handler``)."""
    if 0 in value.strides and value.size > 0:
        raise ValueError("NumPy arrays with zero strides are not supported as MLIR attributes")
    typ = tensor_type(ShapedArray(tuple(value.shape), value.dtype))
    return f"dense<> : {typ}" if value.size == 0 else f"{dense_attr(np.ascontiguousarray(value))} : {typ}"


def attribute_text(value: object) -> str:
    """The MLIR attribute JAX's ``mlir.ir_attribute`` makes of ``value``; ``TypeError`` for a
    value no attribute stands for (as JAX's message)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _scalar_text(np.int64(np.array(value, np.int64)))  # (out of range: OverflowError, as JAX)
    if isinstance(value, float):
        return _scalar_text(np.float64(value))
    if isinstance(value, complex):
        raise TypeError(f"Unsupported scalar attribute type: {np.ndarray}")
    if isinstance(value, (str, bytes)):
        return string_literal(value)
    if isinstance(value, np.ndarray):
        return _array_text(value)
    if isinstance(value, _SCALAR_TYPES) or (isinstance(value, np.generic) and value.dtype.name == "bfloat16"):
        return _scalar_text(value)
    if isinstance(value, np.dtype):
        return element_type(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k))} = {attribute_text(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(attribute_text(v) for v in value) + "]"
    raise TypeError(f"No attribute handler defined for type: {type(value)}")


def _layouts(layouts: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join(
        f"dense<[{', '.join(map(str, lay))}]> : tensor<{len(lay)}xindex>" if len(lay) else "dense<> : tensor<0xindex>"
        for lay in layouts
    ) + "]"


def custom_call_attributes(
    n_results: int,
    *,
    api_version: int,
    backend_config: Mapping[str, str] | str | None,
    has_side_effect: bool = False,
    operand_layouts: Sequence[Sequence[int]] | None = None,
    result_layouts: Sequence[Sequence[int]] | None = None,
    aliases: Sequence[tuple[int, int]] = (),
) -> dict[str, str]:
    """The attributes of a ``stablehlo.custom_call`` as text, by name (JAX's ``mlir.custom_call``).

    ``backend_config``: attribute texts by name (typed FFI: written as ``mhlo.backend_config``,
    with ``api_version`` 1 as JAX does), or an opaque string (``api_version`` as given).
    ``aliases``: ``(operand, result)`` pairs whose buffers are shared.
    """
    attrs: dict[str, str] = {}
    if isinstance(backend_config, Mapping):
        attrs["backend_config"] = '""'
        cfg = ", ".join(f"{_key(k)} = {v}" for k, v in sorted(backend_config.items()))
        attrs["mhlo.backend_config"] = "{" + cfg + "}"
    else:
        attrs["backend_config"] = string_literal(backend_config or "")
        if api_version != 1:
            attrs["api_version"] = f"{api_version} : i32"
    if has_side_effect:
        attrs["has_side_effect"] = "true"
    if aliases:
        attrs["output_operand_aliases"] = "[" + ", ".join(
            f"#stablehlo.output_operand_alias<output_tuple_indices = {[o] if n_results > 1 else []}, "
            f"operand_index = {i}, operand_tuple_indices = []>"
            for i, o in aliases
        ) + "]"
    if operand_layouts is not None:
        attrs["operand_layouts"] = _layouts(operand_layouts)
    if result_layouts is not None:
        attrs["result_layouts"] = _layouts(result_layouts)
    return attrs


def custom_call_text(
    target: str, operands: Sequence[str], avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray],
    **attributes: Any,
) -> str:
    """The right-hand side of a ``stablehlo.custom_call`` of ``target``; ``attributes`` are
    ``custom_call_attributes``'s keywords."""
    attrs = custom_call_attributes(len(avals_out), **attributes)
    ins = ", ".join(tensor_type(a) for a in avals_in)
    outs = ", ".join(tensor_type(a) for a in avals_out)
    body = ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items()))
    return (f"stablehlo.custom_call {symbol_ref(target)}({', '.join(operands)}) {{{body}}} : "
            f"({ins}) -> {outs if len(avals_out) == 1 else '(' + outs + ')'}")

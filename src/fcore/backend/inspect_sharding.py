"""The ``InspectSharding`` custom call: XLA's SPMD partitioner reports an operand's sharding.

jaxlib ships the mechanism JAX's ``inspect_array_sharding`` uses: a custom-call partitioner
registered for the target ``InspectSharding`` calls the Python function whose handle
(``encode_inspect_sharding_callback``) the call's ``backend_config`` holds, with the
``HloSharding`` the partitioner chose, while the program compiles. The handle does not keep
the function alive: the caller keeps the returned function until compilation is over.
"""

from __future__ import annotations

from collections.abc import Callable

from jaxlib import xla_client as xc

__all__ = ["OpSharding", "ShardingCallback", "custom_call"]

OpSharding = xc.OpSharding
#: Called with the partitioner's choice as an ``OpSharding``, or None for a manual
#: (``shard_map``) sharding.
ShardingCallback = Callable[[OpSharding | None], None]


def _escaped(data: bytes) -> str:
    """MLIR string-literal text of arbitrary bytes."""
    return "".join(f"\\{b:02X}" for b in data)


def custom_call(callback: ShardingCallback, operand: str, operand_type: str) -> tuple[str, Callable[..., None]]:
    """The custom call's text (without the ``%N =`` binder) and the function to keep alive."""

    def on_sharding(hlo: xc.HloSharding) -> None:
        manual = hlo.is_manual()  # type: ignore[attr-defined]  # in jaxlib, not in its stub
        callback(None if manual else hlo.to_proto())

    handle = xc.encode_inspect_sharding_callback(on_sharding)  # type: ignore[attr-defined]  # in jaxlib, not in its stub
    key = _escaped(handle)
    text = (
        f'stablehlo.custom_call @InspectSharding({operand}) {{backend_config = "{key}", has_side_effect = true}}'
        f" : ({operand_type}) -> {operand_type}"
    )
    return text, on_sharding

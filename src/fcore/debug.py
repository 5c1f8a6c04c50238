"""``fcore.debug``: printing and callbacks that work inside transformed code (``jax.debug``)."""

from fcore.api.debugger import breakpoint as breakpoint  # noqa: A004 - JAX's name
from fcore.api.inspect_sharding import inspect_array_sharding as inspect_array_sharding
from fcore.api.inspect_sharding import visualize_array_sharding as visualize_array_sharding
from fcore.api.sharding_viz import visualize_sharding as visualize_sharding
from fcore.ir.effects import DebugEffect as DebugEffect, OrderedDebugEffect as OrderedDebugEffect
from fcore.lax.callbacks import debug_callback as callback
from fcore.lax.callbacks import debug_log as log
from fcore.lax.callbacks import debug_print as print  # noqa: A001 - JAX's name

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]

"""``fcore.experimental``: JAX's experimental names that fcore provides (``io_callback``).

Its submodules load on first use (``fcore.experimental.multihost_utils`` works after
``import fcore``, as it does in JAX programs once jax has loaded it for its own use)."""

import importlib
from types import ModuleType

from fcore.lax.callbacks import io_callback as io_callback

__all__ = ["io_callback"]

_SUBMODULES = frozenset({"checkify", "mesh_utils", "multihost_utils", "ode", "pjit", "shard_map", "compilation_cache", "xla_metadata"})


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"fcore.experimental.{name}")
    raise AttributeError(f"module 'fcore.experimental' has no attribute {name!r}")

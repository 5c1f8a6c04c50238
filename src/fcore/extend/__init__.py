"""``fcore.extend`` as ``jax.extend``: the pieces people use to write their own primitives and
interpreters (docs/adding_a_primitive.md, docs/embedding.md). As in JAX, this surface follows
fcore's internals more closely than the rest of the API."""

import importlib
from types import ModuleType

from fcore.extend import core as core
from fcore.extend import source_info_util as source_info_util


def __getattr__(name: str) -> ModuleType:
    """``fcore.extend.mlir`` on first use, as ``jax.extend.mlir`` (importing jaxlib's MLIR
    bindings only then keeps ``import fcore`` fast)."""
    if name == "mlir":
        return importlib.import_module("fcore.extend.mlir")
    raise AttributeError(f"module 'fcore.extend' has no attribute {name!r}")

"""``fcore.experimental.shard_map``: the legacy path of :func:`fcore.shard_map`, deprecated
as in JAX (accessing ``shard_map`` here warns with JAX's message)."""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable
from typing import Any

from fcore.sharding import Mesh

__all__: list[str] = []

_MESSAGE = "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead."


def _legacy_shard_map(f: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any, check_rep: bool = True) -> Any:
    """Please use `fcore.shard_map`: this is its legacy spelling with ``check_rep``."""
    from fcore.api.shard_map import shard_map as _shard_map

    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=frozenset(), check_vma=check_rep)


if typing.TYPE_CHECKING:
    shard_map = _legacy_shard_map
else:

    def __getattr__(name: str) -> Any:
        if name == "shard_map":
            warnings.warn(_MESSAGE, DeprecationWarning, stacklevel=2)
            return _legacy_shard_map
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

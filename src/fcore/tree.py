"""``fcore.tree``: the short names of ``fcore.tree_util``, as ``jax.tree`` is to ``jax.tree_util``.

``fcore.tree.map(f, tree)`` is ``fcore.tree_util.tree_map(f, tree)`` and so on; ``static`` is a
``dataclasses.field`` marked static for ``register_dataclass``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from fcore.tree_util import tree_all as all
from fcore.tree_util import tree_broadcast as broadcast
from fcore.tree_util import tree_flatten as flatten
from fcore.tree_util import tree_flatten_with_path as flatten_with_path
from fcore.tree_util import tree_leaves as leaves
from fcore.tree_util import tree_leaves_with_path as leaves_with_path
from fcore.tree_util import tree_map as map
from fcore.tree_util import tree_map_with_path as map_with_path
from fcore.tree_util import tree_reduce as reduce
from fcore.tree_util import tree_reduce_associative as reduce_associative
from fcore.tree_util import tree_structure as structure
from fcore.tree_util import tree_transpose as transpose
from fcore.tree_util import tree_unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]

if TYPE_CHECKING:
    # Type checkers treat dataclasses.field specially (PEP 681); static must look like it.
    static = dataclasses.field
else:

    def static(**kwargs: Any) -> Any:
        """``dataclasses.field(**kwargs)`` with ``metadata={"static": True}`` added: a field that
        ``register_dataclass`` makes part of the treedef rather than a leaf."""
        metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
        return dataclasses.field(metadata=metadata, **kwargs)

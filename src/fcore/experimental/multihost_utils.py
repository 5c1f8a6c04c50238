"""``fcore.experimental.multihost_utils``: synchronisation and data exchange across the
processes of a job (``jax.experimental.multihost_utils``).

With one process (fcore's supported case) every process-level collective is local, as it is
in JAX: ``process_allgather`` stacks (or, ``tiled``, returns) the host's data, broadcasting
returns it, and barriers pass at once. Several processes raise ``NotImplementedError``."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from fcore.api.devices import process_count
from fcore.api.jit import device_put
from fcore.sharding import Mesh, NamedSharding, PartitionSpec
from fcore.tree_util import broadcast_prefix, tree_all, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array", "host_local_array_to_global_array",
    "process_allgather", "sync_global_devices",
]


def _single_process(what: str) -> None:
    if process_count() != 1:
        raise NotImplementedError(f"fcore's multihost_utils.{what} supports a single process; this job has {process_count()}")


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """``in_tree`` as the source process (process 0 by default) holds it, on every process,
    as NumPy arrays."""
    _single_process("broadcast_one_to_all")
    return tree_map(np.asarray, in_tree)


def _allgather_leaf(x: Any, tiled: bool) -> np.ndarray[Any, Any]:
    out = np.asarray(x)
    return out if tiled else np.expand_dims(out, axis=0)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's ``in_tree`` gathered, as NumPy arrays: stacked on a new leading axis,
    or concatenated along the first with ``tiled=True``."""
    _single_process("process_allgather")
    return tree_map(lambda x: _allgather_leaf(x, tiled), in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raise ``AssertionError`` unless every process holds the same ``in_tree``."""

    def concat_in_tree(x: Any) -> np.ndarray[Any, Any]:
        a = np.asarray(x)
        if a.ndim == 0:
            a = np.expand_dims(a, axis=0)
        return np.concatenate([a] * process_count())

    out = process_allgather(in_tree, tiled=True)
    expected = tree_map(concat_in_tree, in_tree)
    if not tree_all(tree_map(lambda a, b: bool(np.all(np.equal(a, b))), expected, out)):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """A barrier across all processes, named so that mismatched barriers are caught."""
    assert_equal(np.uint32(zlib.crc32(name.encode())), f"sync_global_devices name mismatch ('{name}')")


def _place(name: str, inputs: Any, mesh: Mesh, pspecs: Any) -> Any:
    _single_process(name)
    leaves, tree = tree_flatten(inputs)
    specs = broadcast_prefix(pspecs, inputs, is_leaf=lambda s: s is None or isinstance(s, PartitionSpec))
    placed = [device_put(x, NamedSharding(mesh, PartitionSpec() if s is None else s)) for x, s in zip(leaves, specs)]
    return tree_unflatten(tree, placed)


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Each process's part of a pytree of arrays as the global arrays laid out over
    ``global_mesh`` as ``pspecs`` (a prefix tree of ``PartitionSpec``); with one process the
    local part is the whole array."""
    return _place("host_local_array_to_global_array", local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """The inverse of :func:`host_local_array_to_global_array`: this process's part of each
    global array (with one process, the whole array, laid out as ``pspecs``)."""
    return _place("global_array_to_host_local_array", global_inputs, global_mesh, pspecs)

"""Host-side helpers of JAX's top level: ``device_get``, ``copy_to_host_async`` and ``default_backend``."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import tree_util
from fcore.backend.runtime import platform
from fcore.interpreters.array import Array


def device_get(x: Any) -> Any:
    """``x`` with every fcore array leaf copied to a NumPy array (other leaves unchanged)."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def copy_to_host_async(x: Any) -> Any:
    """Start the host copy of every leaf of ``x`` that has a ``copy_to_host_async`` method
    (fcore arrays, and any other object offering one); ``x`` itself comes back."""
    for leaf in tree_util.tree_leaves(x):
        try:
            copy_fn = leaf.copy_to_host_async
        except AttributeError:
            pass
        else:
            copy_fn()
    return x


def default_backend() -> str:
    """The platform name of the backend fcore runs on (``'cpu'`` without a GPU plugin)."""
    return platform()

"""Host-side helpers of JAX's top level: ``device_get`` and ``default_backend``."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import tree_util
from fcore.backend.runtime import platform
from fcore.interpreters.array import Array


def device_get(x: Any) -> Any:
    """``x`` with every fcore array leaf copied to a NumPy array (other leaves unchanged)."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def default_backend() -> str:
    """The platform name of the backend fcore runs on (``'cpu'`` without a GPU plugin)."""
    return platform()

"""The samplers' compiled entry points, shaped for ``jit``'s fast path.

JAX jit-compiles each sampler with its shape and dtype static. fcore does the same with one
``jit`` per static configuration (``specialize``) and passes Python scalar parameters as
cached device arrays (``operand``), so that an eager call with positional device arrays only
is ``jit``'s cheapest call (an executable launch) rather than a re-specialization.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from fcore.api.jit import Jitted, jit
from fcore.config import x64_enabled
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes

__all__ = ["specialize", "operand"]

_specialized: dict[tuple[Callable[..., Any], tuple[Hashable, ...]], Jitted[..., Any]] = {}
_scalars: dict[tuple[type, float, float, bool], ArrayImpl] = {}
_lock = threading.Lock()
_MAX_SCALARS = 1024


def specialize(fun: Callable[..., Any], *static: Hashable) -> Callable[..., Array]:
    """``jit`` of ``lambda *args: fun(*args, *static)``, one per ``static`` (named as ``fun``
    in jaxprs, as JAX's jitted samplers are)."""
    key = (fun, static)
    compiled = _specialized.get(key)
    if compiled is None:

        def call(*args: Any) -> Any:
            return fun(*args, *static)

        call.__name__ = call.__qualname__ = fun.__name__
        with _lock:
            compiled = _specialized.setdefault(key, jit(call))
    return compiled


def operand(x: Any) -> Any:
    """A Python scalar as a (cached) weakly typed array, as ``jit`` would see it; anything
    else as it is."""
    if type(x) not in (bool, int, float):
        return x
    if x != x or (type(x) is int and not -(2**31) <= x < 2**31):
        return x  # NaN never equals a cache key; large ints keep jit's own overflow check
    key = (type(x), x, math.copysign(1.0, x), x64_enabled())
    cached = _scalars.get(key)
    if cached is None:
        value = np.asarray(x, dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x)))
        cached = ArrayImpl(value, type(x) is not bool)
        if len(_scalars) < _MAX_SCALARS:
            with _lock:
                cached = _scalars.setdefault(key, cached)
    return cached

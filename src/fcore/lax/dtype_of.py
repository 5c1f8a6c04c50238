"""``lax.dtype`` and ``lax.shape_as_value``: a value's canonical dtype, a shape as an array."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax.shapes import full

__all__ = ["dtype", "shape_as_value"]

_PYTHON_SCALARS = (bool, int, float, complex)


def _check_supported(x: object, dt: np.dtype[Any]) -> np.dtype[Any]:
    if not dtypes.is_supported(dt):
        raise TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    return dtypes.canonicalize_dtype(dt)


def dtype(x: Any) -> Any:
    """The dtype of a value, a scalar type or a dtype specifier, canonicalized for the 64-bit
    mode (``lax.dtype(1.0)`` is float32 without x64); an fcore array's own dtype as it is."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type) and (x in _PYTHON_SCALARS or issubclass(x, np.generic)):
        return dtypes.canonicalize_dtype(np.dtype(x))
    if type(x) in _PYTHON_SCALARS:
        return dtypes.canonicalize_dtype(np.dtype(type(x)))
    if isinstance(x, Array):
        return x.dtype
    if isinstance(x, (str, np.dtype)):
        return _check_supported(x, np.dtype(x))
    inner = getattr(x, "dtype", None)
    if isinstance(inner, dtypes.ExtendedDType):
        return inner
    if isinstance(inner, np.dtype):
        dt = inner
    else:
        try:
            dt = np.result_type(x)
        except TypeError as err:
            raise TypeError(f"Cannot determine dtype of {x}") from err
    return _check_supported(x, dt)


def shape_as_value(shape: Sequence[int]) -> Any:
    """A static shape as a 1-D integer array (int64 only where a dimension needs it); fcore's
    shapes are always static."""
    dims = tuple(int(d) for d in shape)
    dt = np.dtype(np.int64) if any(d > np.iinfo(np.int32).max for d in dims) else np.dtype(np.int32)
    if not dims:
        return full((0,), np.array(0, dtype=dt))
    return np.asarray(dims, dtype=dt)

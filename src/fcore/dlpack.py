"""``fcore.dlpack``, as ``jax.dlpack``: arrays from other libraries' buffers through the DLPack
protocol (``from_dlpack``, the same function as ``fcore.numpy.from_dlpack``) and the dtypes
the protocol carries (``is_supported_dtype``, and ``SUPPORTED_DTYPES``, the set it checks, as in ``jax._src.dlpack``)."""

from __future__ import annotations

import numpy as np

from fcore.ir import dtypes
from fcore.ir.dtypes import DTypeLike
from fcore.numpy.data_io import from_dlpack as from_dlpack

__all__ = ["SUPPORTED_DTYPES", "from_dlpack", "is_supported_dtype"]

#: The dtypes DLPack exchanges: the integers, the floats (bfloat16 included), the complex types
#: and bool.
SUPPORTED_DTYPES: frozenset[np.dtype[np.generic]] = frozenset(
    np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                          "float32", "float64", "complex64", "complex128", "bool")
) | {dtypes.bfloat16}


def is_supported_dtype(dtype: DTypeLike) -> bool:
    """Whether arrays of ``dtype`` can go through DLPack."""
    if dtype is None:  # NumPy would read None as float64
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES  # as JAX: any NumPy dtype, unsupported ones too

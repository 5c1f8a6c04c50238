"""``fcore.dtypes``: the names JAX users find in ``jax.dtypes``."""

from typing import Any

import numpy as np

from fcore.ir import dtypes as _ir_dtypes

from fcore.api._float0 import float0 as float0
from fcore.errors import TypePromotionError as TypePromotionError
from fcore.ir.dtypes import extended as extended, prng_key as prng_key
from fcore.numpy._dtypes import (
    bfloat16 as bfloat16,
    canonical_dtype as canonicalize_dtype,
    finfo as finfo,
    iinfo as iinfo,
    issubdtype as issubdtype,
    result_type as result_type,
)

__all__ = [
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "float0",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
]


def itemsize_bits(dtype: Any) -> int:
    """Bits per element of ``dtype`` (``jax.dtypes.itemsize_bits``): 4 for int4, 8 for bool
    (its storage), twice the component's for complex types.

    >>> import fcore
    >>> fcore.dtypes.itemsize_bits("int4"), fcore.dtypes.itemsize_bits(bool), fcore.dtypes.itemsize_bits("complex64")
    (4, 8, 64)
    """
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    dt = np.dtype(dtype)
    if dt == np.dtype(bool):
        return 8
    if _ir_dtypes.is_integer(dt):
        return int(iinfo(dt).bits)
    if _ir_dtypes.is_floating(dt):
        return int(finfo(dt).bits)
    if _ir_dtypes.is_complex(dt):
        return 2 * int(finfo(dt).bits)
    raise ValueError(f"unexpected input: {dtype=}")


def _dtype_of(x: Any) -> np.dtype[Any]:
    """JAX's ``dtypes.dtype``: the dtype of a value, a Python scalar or a dtype specifier."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if type(x) in (bool, int, float, complex):
        return np.dtype(type(x))
    inner = getattr(x, "dtype", None)
    if isinstance(inner, np.dtype):
        return inner
    if isinstance(x, (str, type, np.dtype)):
        return np.dtype(x)
    raise TypeError(f"Cannot determine dtype of {x}")


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (``bool``, ``int``, ``float``, ``complex``) of a value's dtype
    (``jax.dtypes.scalar_type_of``).

    >>> import numpy as np
    >>> import fcore
    >>> fcore.dtypes.scalar_type_of(np.ones(2, np.float16)), fcore.dtypes.scalar_type_of(fcore.numpy.int8(1))
    (<class 'float'>, <class 'int'>)
    """
    typ = _dtype_of(x)
    if typ == np.dtype(bool):
        return bool
    if _ir_dtypes.is_integer(typ):
        return int
    if _ir_dtypes.is_floating(typ):
        return float
    if _ir_dtypes.is_complex(typ):
        return complex
    raise TypeError(f"Invalid scalar value {x}")

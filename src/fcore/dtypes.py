"""``fcore.dtypes``: the names JAX users find in ``jax.dtypes``."""

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
    "prng_key",
    "result_type",
]

"""``mulhi``: the high half of an integer product (``jax.lax.mulhi``), lowered to ``chlo.mulhi``.

For N-bit integers the result is the upper N bits of the exact 2N-bit product (signed
integers: of the signed product). Integer-valued, so its derivative is zero.
"""

from __future__ import annotations

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.ir.params import NoParams
from fcore.lax._base import NpArray
from fcore.lax._primitive import Primitive
from fcore.lax.elementwise import BinaryFunction, _binary_function, _elementwise, _lower_nary  # shared machinery
from fcore.transforms.batching import defbroadcasting
from fcore.transforms.jvp import defjvp_zero

__all__ = ["mulhi", "mulhi_p"]


# -- mulhi[NoParams] --------------------------------------------------------------------------
def _mulhi_impl(x: NpArray, y: NpArray) -> NpArray:
    """Exact products as Python integers (object arrays), then their high ``bits``."""
    bits = x.dtype.itemsize * 8
    product = np.asarray(np.multiply(np.asarray(x, dtype=object), np.asarray(y, dtype=object)), dtype=object)
    high = np.asarray(np.right_shift(product, bits), dtype=object)
    return high.astype(x.dtype)


mulhi_p = Primitive("mulhi", params=NoParams)
_elementwise(mulhi_p, 2, "int", _mulhi_impl)
defjvp_zero(mulhi_p)
defbroadcasting(mulhi_p)
lowering_rules.register(mulhi_p)(_lower_nary("chlo.mulhi"))
mulhi: BinaryFunction = _binary_function(mulhi_p)
mulhi.__doc__ = """Elementwise multiply-high (``lax.mulhi``): the upper N bits of the 2N-bit product of
N-bit integers.

>>> import numpy as np
>>> import fcore
>>> fcore.lax.mulhi(np.int32(2**30), np.int32(12)), fcore.lax.mulhi(np.uint8(200), np.uint8(200))
(Array(3, dtype=int32), Array(156, dtype=uint8))
"""

"""``float0``: JAX's dtype of tangents and cotangents of integer and boolean values.

The transformations represent such tangents as symbolic zeros; only the front end
(``jvp``, ``vjp``, ``linearize``, ``grad(allow_int=True)``, ``vmap``) converts between them
and ``float0`` arrays, which are plain NumPy arrays as in JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``jax.dtypes.float0``: a zero-size dtype; its arrays carry only a shape.
float0 = np.dtype([("float0", "V")])


def is_float0(x: object) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype == float0


def float0_zeros(shape: tuple[int, ...]) -> np.ndarray[Any, np.dtype[np.void]]:
    return np.zeros(shape, float0)

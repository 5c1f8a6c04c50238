"""``fcore.typing``: the types to annotate programs that use fcore (``jax.typing``'s place).

``ArrayLike`` is what fcore functions accept as an array (fcore arrays, NumPy arrays and
scalars, Python scalars); ``DTypeLike`` what they accept as a dtype (``fnp.float32``, a NumPy
dtype or scalar type, a name such as ``"int32"``, or anything with a ``.dtype``); ``Shape`` a
static shape; ``PRNGKeyArray`` the type of ``fcore.random.key``'s typed keys. Annotate
parameters with ``ArrayLike`` and results with ``fcore.Array`` (docs/guide.md, "Static typing").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, Union

import numpy as np
from typing_extensions import TypeAlias

from fcore.lax._base import ArrayLike as ArrayLike
from fcore.numpy._dtypes import ScalarMeta as ScalarMeta
from fcore.random._keys import PRNGKeyArray as PRNGKeyArray

__all__ = ["ArrayLike", "DTypeLike", "DuckTypedArray", "PRNGKeyArray", "ScalarMeta", "Shape", "SupportsDType"]


class SupportsDType(Protocol):
    """Anything with a ``.dtype`` (an array, ``fnp.float32``, a ``ShapeDtypeStruct``)."""

    @property
    def dtype(self) -> np.dtype[Any]: ...


class DuckTypedArray(Protocol):
    """Anything with a ``.shape`` and a ``.dtype`` (what ``eval_shape`` and stages accept)."""

    @property
    def dtype(self) -> np.dtype[Any]: ...

    @property
    def shape(self) -> tuple[int, ...]: ...


#: A dtype as fcore functions accept it: ``fnp.float32``, ``np.int8``, ``np.dtype("int32")``,
#: ``"bfloat16"``, Python's ``int``/``float``/``bool``/``complex``, or anything with ``.dtype``.
DTypeLike: TypeAlias = Union[str, type[Any], np.dtype[Any], SupportsDType]

#: A static shape: a sequence of non-negative sizes (a bare int means a 1-d shape).
Shape: TypeAlias = Union[int, Sequence[int]]

"""``fcore.flatten_util.ravel_pytree`` as ``jax.flatten_util``: a pytree of arrays as one
flat vector (for optimizers and solvers written over vectors), and its inverse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fcore import tree_util
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.lax.elementwise import convert_element_type
from fcore.lax.shapes import concatenate, full, reshape
from fcore.lax.stacking import split
from fcore.numpy._dtypes import result_type


class _Unravel:
    """The inverse of one ``ravel_pytree``: a flat vector back to the pytree (leaf dtypes
    restored when they differed from the vector's)."""

    def __init__(self, treedef: tree_util.PyTreeDef, shapes: list[tuple[int, ...]],
                 from_dtypes: list[np.dtype[Any]] | None, to_dtype: np.dtype[Any] | None) -> None:
        self.treedef, self.shapes, self.from_dtypes, self.to_dtype = treedef, shapes, from_dtypes, to_dtype

    def __call__(self, flat: ArrayLike) -> Any:
        size = sum(int(np.prod(s)) for s in self.shapes)
        aval = get_aval(flat)
        if aval.shape != (size,):
            raise ValueError(f"The unravel function expected an array of shape {(size,)}, got shape {aval.shape}.")
        if self.to_dtype is not None and aval.dtype != self.to_dtype:
            raise TypeError(f"unravel function given array of dtype {aval.dtype}, but expected dtype {self.to_dtype}")
        if not self.shapes:
            return tree_util.tree_unflatten(self.treedef, [])
        chunks = split(flat, [int(np.prod(s)) for s in self.shapes]) if len(self.shapes) > 1 else [flat]
        leaves = [reshape(c, s) for c, s in zip(chunks, self.shapes)]
        if self.from_dtypes is not None:
            leaves = [convert_element_type(x, d) for x, d in zip(leaves, self.from_dtypes)]
        return tree_util.tree_unflatten(self.treedef, leaves)


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[ArrayLike], Any]]:
    """``(flat, unravel)``: the leaves raveled and concatenated into one vector of their
    promoted dtype (float32 and empty for a tree without leaves), and its inverse."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    if not leaves:
        return full((0,), 0, dtypes.float32), _Unravel(treedef, [], None, None)
    avals = [get_aval(x) for x in leaves]
    shapes = [a.shape for a in avals]
    from_dtypes = [a.dtype for a in avals]
    to_dtype = np.dtype(result_type(*leaves))
    flat = [reshape(x, (a.size,)) for x, a in zip(leaves, avals)]
    if all(d == to_dtype for d in from_dtypes):
        raveled = concatenate(flat, 0) if len(flat) > 1 else flat[0]
        return raveled, _Unravel(treedef, shapes, None, None)  # dtype-polymorphic, as in JAX
    raveled = concatenate([convert_element_type(x, to_dtype) for x in flat], 0)
    return raveled, _Unravel(treedef, shapes, from_dtypes, to_dtype)

"""Control flow under ``disable_jit()``: plain Python loops and branches, as JAX runs them, so
that ``print`` and breakpoints inside the bodies see concrete values each iteration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fcore import tree_util
from fcore.errors import ConcretizationError
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import to_numpy_arg
from fcore.lax.stacking import stack
from fcore.lax.slicing import index_in_dim

#: Returned when the loop cannot run in Python (a tracer reached the predicate).
NOT_CONCRETE = object()


def _as_array(x: Any) -> Any:
    """``lax.asarray``: Python scalars and NumPy values become fcore arrays; arrays stay."""
    if isinstance(x, Array):
        return x
    arr, weak = to_numpy_arg(x)
    return ArrayImpl(arr, weak)


def while_in_python(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """The loop run by Python, or ``NOT_CONCRETE`` when the predicate is traced (e.g. under
    ``vmap``): then the caller stages the primitive, as JAX falls back."""
    try:
        val = tree_util.tree_map(_as_array, init_val)
        while cond_fun(val):
            val = tree_util.tree_map(_as_array, body_fun(val))
        return val
    except ConcretizationError:
        return NOT_CONCRETE


def scan_in_python(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, length: int, reverse: bool
                   ) -> tuple[Any, Any]:
    """``scan`` as a Python loop over the slices of ``xs``, the ``y`` s stacked at the end."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because the output type is unknown.")
    leaves, tree = tree_util.tree_flatten(xs)
    order = range(length - 1, -1, -1) if reverse else range(length)
    carry, ys = init, []
    for i in order:
        carry, y = f(carry, tree.unflatten([index_in_dim(x, i, 0, keepdims=False) for x in leaves]))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, tree_util.tree_map(lambda *parts: stack(parts), *ys)

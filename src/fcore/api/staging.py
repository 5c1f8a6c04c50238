"""The public front end: pytree-aware wrappers over the flat core (Autodidax's split)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore import tree_util
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import to_numpy_arg
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr


@attrs.frozen(slots=True, init=False)
class ShapeDtypeStruct:
    """An abstract argument (shape and dtype, no data) for tracing."""

    shape: tuple[int, ...]
    dtype: dtypes.DType
    weak_type: bool

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> None:
        self.__attrs_init__(tuple(int(d) for d in shape), dtypes.to_dtype(dtype), weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def abstractify(x: object) -> ShapedArray:
    """The aval a traced function sees for argument ``x``."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    if isinstance(x, ArrayImpl):
        return x.aval
    if isinstance(x, ShapedArray):
        return x
    arr, weak = to_numpy_arg(x)
    return ShapedArray(arr.shape, arr.dtype, weak)


def fun_name(fun: Callable[..., Any]) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def normalize_argnums(argnums: int | Sequence[int], nargs: int | None = None) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if nargs is not None:
        nums = tuple(n % nargs if -nargs <= n < nargs else n for n in nums)
    return nums


def split_static(
    args: Sequence[Any], static_argnums: tuple[int, ...]
) -> tuple[list[Any], dict[int, Any]]:
    n = len(args)
    static = {i % n if -n <= i < n else i: None for i in static_argnums}
    for i in static:
        if i >= n:
            raise ValueError(f"static_argnums {static_argnums} refers to argument {i}, but only {n} were given")
    dyn = [a for i, a in enumerate(args) if i not in static]
    return dyn, {i: args[i] for i in static}


def merge_static(dyn: Sequence[Any], static: dict[int, Any]) -> list[Any]:
    out: list[Any] = []
    it = iter(dyn)
    for i in range(len(dyn) + len(static)):
        out.append(static[i] if i in static else next(it))
    return out


def make_jaxpr(
    fun: Callable[..., Any], static_argnums: int | Sequence[int] = ()
) -> Callable[..., ClosedJaxpr]:
    """``make_jaxpr(f)(*args)`` stages ``f`` into a ``ClosedJaxpr`` (omnistaging: every op is recorded)."""
    static_nums = normalize_argnums(static_argnums)

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> ClosedJaxpr:
        dyn, static = split_static(args, static_nums)
        flat, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
        in_avals = [abstractify(x) for x in flat]

        def flat_fun(*tracers: Any) -> list[Any]:
            dyn_args, kw = tree_util.tree_unflatten(in_tree, tracers)
            out = fun(*merge_static(dyn_args, static), **kw)
            return tree_util.tree_leaves(out)

        return trace_to_jaxpr(flat_fun, in_avals, f"make_jaxpr({fun_name(fun)})")

    return make

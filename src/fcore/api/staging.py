"""The public front end: pytree-aware wrappers over the flat core (Autodidax's split)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, Literal, TypeVar, overload

import attrs
import numpy as np

from fcore import tree_util
from fcore.api._float0 import float0
from fcore.api.refs import Ref, RefStaging, ref_positions
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import to_numpy_arg
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr

P = ParamSpec("P")


@attrs.frozen(slots=True, init=False, repr=False)
class ShapeDtypeStruct:
    """An abstract argument (shape and dtype, no data) for tracing.

    As in JAX the dtype is kept as given (``int64`` stays ``int64``); tracing
    canonicalizes it (``int32`` unless 64-bit mode is on).
    """

    shape: tuple[int, ...]
    dtype: dtypes.DType
    weak_type: bool

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> None:
        # float0 (a tangent of an integer value) only describes results of jit's stages.
        dt = float0 if isinstance(dtype, np.dtype) and dtype == float0 else dtypes.to_dtype(dtype)
        self.__attrs_init__(tuple(int(d) for d in shape), dt, bool(weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @classmethod
    def like(cls, x: object) -> ShapeDtypeStruct:
        """The shape, dtype and weak type a traced function would see for ``x`` (``jax.ShapeDtypeStruct.like``)."""
        aval = abstractify(x)
        return cls(aval.shape, aval.dtype, aval.weak_type)

    def update(self, shape: Sequence[int] | None = None, dtype: Any = None, weak_type: bool | None = None) -> ShapeDtypeStruct:
        """A copy with the given fields replaced (as ``jax.ShapeDtypeStruct.update``)."""
        return ShapeDtypeStruct(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        name = "float0" if self.dtype == float0 else self.dtype.name
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={name}{weak})"


def abstractify(x: object) -> ShapedArray:
    """The aval a traced function sees for argument ``x``."""
    if type(x) is ArrayImpl:  # the common case first: jit's dispatch calls this per argument
        return x.aval
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


@overload
def make_jaxpr(
    fun: Callable[P, Any], static_argnums: int | Sequence[int] = (), *, return_shape: Literal[False] = False
) -> Callable[P, ClosedJaxpr]: ...


@overload
def make_jaxpr(
    fun: Callable[P, Any], static_argnums: int | Sequence[int] = (), *, return_shape: Literal[True]
) -> Callable[P, tuple[ClosedJaxpr, Any]]: ...


def make_jaxpr(
    fun: Callable[..., Any], static_argnums: int | Sequence[int] = (), *, return_shape: bool = False
) -> Callable[..., ClosedJaxpr] | Callable[..., tuple[ClosedJaxpr, Any]]:
    """``make_jaxpr(f)(*args, **kwargs)`` stages ``f`` into a ``ClosedJaxpr`` (omnistaging:
    every op is recorded). Arguments may be pytrees of arrays, scalars and
    ``ShapeDtypeStruct`` s; ``static_argnums`` (negative ones count from the end) are passed
    to ``f`` as they are. With ``return_shape=True`` the result is ``(closed, shapes)``,
    ``shapes`` being the output pytree with a ``ShapeDtypeStruct`` per leaf (as in JAX).
    """
    static_nums = normalize_argnums(static_argnums)
    name = f"make_jaxpr({fun_name(fun)})"

    def trace(*args: Any, **kwargs: Any) -> tuple[ClosedJaxpr, tree_util.PyTreeDef]:
        dyn, static = split_static(args, static_nums)
        flat, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
        in_avals = [x._inner_aval if isinstance(x, Ref) else abstractify(x) for x in flat]
        out_trees: list[tree_util.PyTreeDef] = []
        refs = RefStaging(ref_positions(flat))  # refs in and out become extra inputs and outputs

        def flat_fun(*tracers: Any) -> list[Any]:
            with refs.staging(tracers) as leaves:
                dyn_args, kw = tree_util.tree_unflatten(in_tree, leaves)
                out_leaves, out_tree = tree_util.tree_flatten(fun(*merge_static(dyn_args, static), **kw))
                out_trees.append(out_tree)
                return out_leaves + refs.extra_outputs(tracers)

        return trace_to_jaxpr(flat_fun, in_avals, name), out_trees[0]

    if return_shape:

        def make_with_shape(*args: Any, **kwargs: Any) -> tuple[ClosedJaxpr, Any]:
            closed, out_tree = trace(*args, **kwargs)
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals[: out_tree.num_leaves]]
            return closed, tree_util.tree_unflatten(out_tree, shapes)

        return _named(make_with_shape, fun, name)

    def make(*args: Any, **kwargs: Any) -> ClosedJaxpr:
        return trace(*args, **kwargs)[0]

    return _named(make, fun, name)


_F = TypeVar("_F", bound=Callable[..., Any])


def _named(wrapper: _F, fun: Callable[..., Any], name: str) -> _F:
    """``functools.wraps`` with JAX's name for the wrapper (``make_jaxpr(f)``)."""
    functools.update_wrapper(wrapper, fun)
    wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper

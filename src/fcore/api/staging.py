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
from fcore.sharding import NamedSharding, PartitionSpec, Sharding, get_mesh

P = ParamSpec("P")


@attrs.frozen(slots=True, init=False, repr=False)
class ShapeDtypeStruct:
    """An abstract argument (shape and dtype, no data) for tracing.

    As in JAX the dtype is kept as given (``int64`` stays ``int64``); tracing
    canonicalizes it (``int32`` unless 64-bit mode is on). ``sharding`` (a ``Sharding``, or a
    ``PartitionSpec`` over the mesh ``set_mesh`` sets) is how ``jit(f).lower`` and ``export``
    take the argument to be laid out; it is no part of the traced type.
    """

    shape: tuple[int, ...]
    dtype: dtypes.DType
    weak_type: bool
    _sharding: Sharding | PartitionSpec | None

    def __init__(
        self, shape: Sequence[int], dtype: Any, weak_type: bool = False, *, sharding: Any = None
    ) -> None:
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        # float0 (a tangent of an integer value) only describes results of jit's stages.
        dt = float0 if isinstance(dtype, np.dtype) and dtype == float0 else dtypes.to_dtype(dtype)
        shape_t = tuple(int(d) for d in shape)
        if sharding is not None:
            _check_sharding(sharding, shape_t)
        self.__attrs_init__(shape_t, dt, bool(weak_type), sharding)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def sharding(self) -> Sharding | None:
        """The sharding given; a ``PartitionSpec`` as a ``NamedSharding`` over the current mesh."""
        spec = self._sharding
        if isinstance(spec, PartitionSpec):
            mesh = get_mesh()
            if mesh is None or mesh.empty:
                raise TypeError(
                    "When specifying PartitionSpec to `ShapeDtypeStruct`, the context mesh cannot be empty. "
                    "Please use `jax.set_mesh` to set the mesh context."
                )
            return NamedSharding(mesh, spec)
        return spec

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    @classmethod
    def like(cls, x: object) -> ShapeDtypeStruct:
        """The shape, dtype and weak type a traced function would see for ``x``, and the
        sharding of a committed array (``jax.ShapeDtypeStruct.like``)."""
        aval = abstractify(x)
        device = x._device if isinstance(x, ArrayImpl) else None
        placed = device is not None and device.placed
        sharding = (x.sharding if placed else None) if isinstance(x, ArrayImpl) else getattr(x, "sharding", None)
        return cls(aval.shape, aval.dtype, aval.weak_type, sharding=sharding if isinstance(sharding, Sharding) else None)

    def update(
        self, shape: Sequence[int] | None = None, dtype: Any = None, weak_type: bool | None = None, **kwargs: Any
    ) -> ShapeDtypeStruct:
        """A copy with the given fields replaced (as ``jax.ShapeDtypeStruct.update``; ``sharding=``
        too, ``None`` dropping it)."""
        unknown = set(kwargs) - {"sharding"}
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update() got unexpected keyword arguments {sorted(unknown)}")
        return ShapeDtypeStruct(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            sharding=kwargs.get("sharding", self._sharding),
        )

    def __repr__(self) -> str:
        sharding = self.sharding
        sh = f", sharding={sharding}" if sharding is not None else ""
        weak = ", weak_type=True" if self.weak_type else ""
        name = "float0" if self.dtype == float0 else self.dtype.name
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={name}{sh}{weak})"

    __str__ = __repr__


def _check_sharding(sharding: object, shape: tuple[int, ...]) -> None:
    """JAX's checks of a ``ShapeDtypeStruct``'s sharding: its kind, and a rank the spec fits."""
    if isinstance(sharding, PartitionSpec):
        what, spec = f"PartitionSpec {sharding}", sharding
    elif isinstance(sharding, Sharding):
        what, spec = f"Sharding {sharding}", getattr(sharding, "spec", PartitionSpec())
    else:
        raise ValueError(
            "sharding should be an instance of `jax.sharding.Sharding`, `jax.sharding.PartitionSpec` or "
            f"`jax.experimental.layout.Format`. Got {sharding} of type {type(sharding)}."
        )
    if len(spec) > len(shape):
        raise ValueError(
            f"{what} is only valid for values of rank at least {len(spec)}, but was applied to a value of rank "
            f"{len(shape)}."
        )


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

"""``debug.inspect_array_sharding`` and ``debug.visualize_array_sharding``: an array's sharding,
eagerly or as XLA chooses it inside ``jit``.

As JAX, ``inspect_sharding[callback]`` is a primitive with no results and a debug effect (so
it is kept). Eagerly it calls ``callback(x.sharding)``. Lowered into a program over several
devices it is jaxlib's ``InspectSharding`` custom call (``fcore.backend.inspect_sharding``):
XLA's partitioner calls back while the program compiles, with the layout it chose, which is
turned into a ``NamedSharding`` on the program's mesh (``P()`` inside ``shard_map``). In a
program on one device the callback runs while lowering.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import attrs

from fcore import tree_util
from fcore.api.sharding_viz import visualize_sharding
from fcore.backend import inspect_sharding as backend
from fcore.backend import runtime
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.ir.avals import ShapedArray
from fcore.ir.effects import Effects, debug_effect
from fcore.ir.params import ByIdentity
from fcore.lax._primitive import Primitive
from fcore.sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, named_sharding_from_xla
from fcore.sharding import program_mesh
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = ["inspect_array_sharding", "inspect_sharding_p", "visualize_array_sharding"]


class InspectCallback(ByIdentity):
    """The user's ``callback(sharding)``; printed as the function, as JAX prints it."""

    __slots__ = ("fun", "__weakref__")
    what = "sharding callback"

    def __init__(self, fun: Callable[[Sharding], object]) -> None:
        super().__init__(repr(fun))
        self.fun = fun


@attrs.frozen(kw_only=True)
class InspectShardingParams:
    """``inspect_sharding[callback]``: report the operand's sharding to ``callback``."""

    callback: InspectCallback


inspect_sharding_p = Primitive("inspect_sharding", multiple_results=True, params=InspectShardingParams)
inspect_sharding_p.impl_takes_arrays = True  # the impl reads the array's sharding


@inspect_sharding_p.def_abstract_eval
def _inspect_sharding_abstract_eval(x: ShapedArray, *, callback: InspectCallback) -> list[ShapedArray]:
    return []


@inspect_sharding_p.def_effects
def _inspect_sharding_effects(*, callback: InspectCallback) -> Effects:
    return frozenset({debug_effect})


@inspect_sharding_p.def_impl
def _inspect_sharding_impl(x: Any, *, callback: InspectCallback) -> list[Any]:
    callback.fun(x.sharding)  # as JAX, a NumPy value has none (AttributeError)
    return []


@jvp_rules.register(inspect_sharding_p)
def _inspect_sharding_jvp(primals: list[Any], tangents: list[Any], *, callback: InspectCallback) -> tuple[Any, Any]:
    return inspect_sharding_p.bind(*primals, callback=callback), []


@transpose_rules.register(inspect_sharding_p)
def _inspect_sharding_transpose(cts: Any, x: Any, *, callback: InspectCallback) -> list[Any]:
    return [None]


@batching_rules.register(inspect_sharding_p)
def _inspect_sharding_batching(
    axis_size: int, vals: list[Any], dims: list[Dim], *, callback: InspectCallback
) -> tuple[list[Any], list[Dim]]:
    inspect_sharding_p.bind(*vals, callback=callback)  # as JAX: the sharding of the whole batch
    return [], []


#: The functions the compiled programs' custom calls name, alive as long as the callback is.
_keepalive: weakref.WeakKeyDictionary[InspectCallback, list[Callable[..., None]]] = weakref.WeakKeyDictionary()


@lowering_rules.register(inspect_sharding_p)
def _inspect_sharding_lowering(ctx: LoweringRuleContext, x: str, *, callback: InspectCallback) -> list[str]:
    mesh = program_mesh()
    if ctx.module.mesh is None or mesh is None:
        # One device, no mesh: jax reports a replicated GSPMDSharding; fcore names the device.
        callback.fun(SingleDeviceSharding(runtime.default_device()))
        return []
    if mesh.size == 1:  # no partitioner runs: replicated, reported now (as JAX)
        callback.fun(NamedSharding(mesh, PartitionSpec()))
        return []
    shape = ctx.avals_in[0].shape

    def on_sharding(proto: backend.OpSharding | None) -> None:
        callback.fun(NamedSharding(mesh, PartitionSpec()) if proto is None else named_sharding_from_xla(mesh, proto, shape))

    text, keep = backend.custom_call(on_sharding, x, tensor_type(ctx.avals_in[0]))
    _keepalive.setdefault(callback, []).append(keep)
    ctx.emit(text)
    return []


def inspect_array_sharding(value: Any, *, callback: Callable[[Sharding], object]) -> None:
    """Call ``callback`` with the sharding of each array in the pytree ``value``
    (``jax.debug.inspect_array_sharding``): at once for concrete arrays; inside ``jit``, while
    the program compiles (so once per compilation, with the layout XLA chose)."""
    wrapped = InspectCallback(callback)
    for leaf in tree_util.tree_leaves(value):
        inspect_sharding_p.bind(leaf, callback=wrapped)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Draw ``arr``'s sharding (``jax.debug.visualize_array_sharding``; the keywords are
    ``visualize_sharding`` 's), inside ``jit`` as the program compiles."""

    def draw(sharding: Sharding) -> None:
        visualize_sharding(arr.shape, sharding, **kwargs)

    inspect_array_sharding(arr, callback=draw)

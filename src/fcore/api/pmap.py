"""``fcore.pmap``: map a function over the local devices, one slice of the mapped axis each.

Built on ``shard_map`` over a one-axis mesh of the first ``n`` local devices (``n`` the size
of the mapped axis): each device gets its slice (the mapped axis dropped), collectives over
``axis_name`` reach the other devices, and results are stacked along ``out_axes``. The whole
call is jitted, so it is traced once per argument types. Results are sharded arrays over the
mesh (a ``NamedSharding``; jax's ``PmapSharding`` is not modelled).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore import tree_util
from fcore.api.devices import local_devices
from fcore.api.jit import Jitted, jit
from fcore.api.shard_map import shard_map
from fcore.interpreters.eval import get_aval
from fcore.lax.shapes import expand_dims, squeeze
from fcore.sharding import Mesh, PartitionSpec

__all__ = ["pmap"]

#: The mesh axis of the devices pmap maps over (JAX 0.10 names it so in the results' shardings).
_AXIS = "_internal_pmap_axis_name"


def pmap(
    fun: Callable[..., Any] | None = None, axis_name: str | None = None, *, in_axes: Any = 0, out_axes: Any = 0,
    static_broadcasted_argnums: int | Sequence[int] = (), devices: Sequence[Any] | None = None,
    backend: str | None = None, axis_size: int | None = None, donate_argnums: int | Sequence[int] = (),
) -> Any:
    """Run ``fun`` on each local device on its slice of the ``in_axes`` of the arguments."""
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums, devices=devices)
    f = fun
    statics = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) else tuple(
        static_broadcasted_argnums)
    name = axis_name if axis_name is not None else _AXIS
    cache: dict[Any, Jitted[..., Any]] = {}

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        dyn = tuple(a for i, a in enumerate(args) if i not in statics)
        static_vals = tuple((i, args[i]) for i in statics if i < len(args))
        axes = in_axes
        if isinstance(axes, list):
            axes = tuple(axes)
        if isinstance(axes, tuple) and len(axes) == len(args) != len(dyn):
            axes = tuple(a for i, a in enumerate(axes) if i not in statics)
        flat_axes = tree_util.broadcast_prefix(axes, dyn, is_leaf=lambda x: x is None)
        leaves = tree_util.tree_leaves(dyn)
        sizes = {get_aval(x).shape[d] for x, d in zip(leaves, flat_axes) if d is not None}
        if not sizes:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        if len(sizes) != 1:
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}")
        n = sizes.pop()
        devs = list(devices) if devices is not None else local_devices()
        if n > len(devs):
            raise ValueError(
                f"compiling computation that requires {n} logical devices, but only {len(devs)} XLA devices are "
                f"available (num_replicas={n})"
            )
        key = (n, static_vals, tuple(d.id for d in devs[:n]))
        jitted = cache.get(key)
        if jitted is None:
            jitted = _build(f, name, n, devs[:n], axes, out_axes, statics, static_vals)
            cache[key] = jitted
        return jitted(*dyn)

    return mapped


def _out_spec(d: Any, name: str) -> PartitionSpec:
    if d is None:
        return PartitionSpec()
    if not isinstance(d, int) or d < 0:
        raise NotImplementedError(f"pmap out_axes must be None or non-negative integers, got {d!r}")
    return PartitionSpec(*([None] * d + [name]))


def _build(
    f: Callable[..., Any], name: str, n: int, devs: Sequence[Any], in_axes: Any, out_axes: Any,
    statics: tuple[int, ...], static_vals: tuple[tuple[int, Any], ...],
) -> Jitted[..., Any]:
    mesh = Mesh(np.asarray(devs, dtype=object), (name,))
    out_specs = tree_util.tree_map(lambda d: _out_spec(d, name), out_axes, is_leaf=lambda x: x is None)

    def call(*dyn: Any) -> Any:
        flat_axes = tree_util.broadcast_prefix(in_axes, dyn, is_leaf=lambda x: x is None)
        leaves, tree = tree_util.tree_flatten(dyn)
        axes = [None if d is None else d % get_aval(x).ndim for x, d in zip(leaves, flat_axes)]
        specs = tuple(PartitionSpec() if d is None else PartitionSpec(*([None] * d + [name])) for d in axes)

        def body(*blocks: Any) -> Any:
            xs = [b if d is None else squeeze(b, (d,)) for b, d in zip(blocks, axes)]
            merged = list(tree.unflatten(xs))
            for i, v in static_vals:
                merged.insert(i, v)
            out = f(*merged)
            o_axes = tree_util.broadcast_prefix(out_axes, out, is_leaf=lambda x: x is None)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            return out_tree.unflatten([o if d is None else expand_dims(o, (d,)) for o, d in zip(out_leaves, o_axes)])

        return shard_map(body, mesh=mesh, in_specs=specs, out_specs=out_specs, check_vma=False)(*leaves)

    return jit(call)

"""``lax.with_sharding_constraint``: ask XLA's partitioner to lay a value out as a sharding.

In a jitted program it lowers to Shardy's ``sdy.sharding_constraint`` (the program is then
compiled for the sharding's mesh); eagerly it is ``device_put(x, sharding)``, as in JAX.
"""

from __future__ import annotations

from typing import Any

import attrs

from fcore import tree_util
from fcore.api.placement import to_sharding
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir.avals import ShapedArray
from fcore.lax._primitive import Primitive
from fcore.sharding import NamedSharding, PartitionSpec, resolve_spec
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = ["reshard", "sharding_constraint_p", "with_sharding_constraint"]


@attrs.frozen(kw_only=True)
class ShardingConstraintParams:
    """``sharding_constraint[sharding]``: the layout asked for."""

    sharding: NamedSharding


sharding_constraint_p = Primitive("sharding_constraint", params=ShardingConstraintParams)
sharding_constraint_p.impl_takes_arrays = True


@sharding_constraint_p.def_abstract_eval
def _sc_abstract_eval(x: ShapedArray, *, sharding: NamedSharding) -> ShapedArray:
    sharding.check_shape(x.shape, "One of with_sharding_constraint arguments")
    return x


@sharding_constraint_p.def_impl
def _sc_impl(x: Any, *, sharding: NamedSharding) -> ArrayImpl:
    return to_sharding(x, sharding)


@jvp_rules.register(sharding_constraint_p)
def _sc_jvp(primals: list[Any], tangents: list[Any], *, sharding: NamedSharding) -> tuple[Any, Any]:
    return _bind(primals[0], sharding), _bind(tangents[0], sharding)


@transpose_rules.register(sharding_constraint_p)
def _sc_transpose(ct: Any, x: UndefinedPrimal, *, sharding: NamedSharding) -> list[Any]:
    return [_bind(ct, sharding)]


@batching_rules.register(sharding_constraint_p)
def _sc_batching(axis_size: int, vals: list[Any], dims: list[Dim], *, sharding: NamedSharding) -> tuple[Any, Dim]:
    (x,), (d,) = vals, dims
    assert d is not None
    spec = list(sharding.spec) + [None] * (x.ndim - 1 - len(sharding.spec))
    spec.insert(d, None)  # the batch axis is not split
    return _bind(x, NamedSharding(sharding.mesh, PartitionSpec(*spec))), d


@lowering_rules.register(sharding_constraint_p)
def _sc_lowering(ctx: LoweringRuleContext, x: str, *, sharding: NamedSharding) -> str:
    aval = ctx.avals_in[0]
    if ctx.module.axis_env:  # inside shard_map the value is per-device: nothing to constrain
        return x
    mesh = ctx.module.use_mesh(sharding.mesh.sdy_text(), sharding.mesh.size)
    dims = sharding.sdy(aval.ndim).dims
    return ctx.emit(f"sdy.sharding_constraint {x} <{mesh}, {dims}> : {tensor_type(aval)}")


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``jax.reshard``: each array leaf of ``xs`` laid out as ``out_shardings`` says (a prefix
    tree of shardings or ``PartitionSpec`` s of the set mesh). fcore's mesh axes are all
    ``Auto`` (docs/multi_device.md), where a reshard is a sharding constraint: in a jitted
    program XLA moves the data, eagerly it is ``device_put``."""
    return with_sharding_constraint(xs, out_shardings)


def _bind(x: Any, sharding: NamedSharding) -> Any:
    out: Array = sharding_constraint_p.bind(x, sharding=sharding)
    return out


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Constrain each array leaf of ``x`` to the matching sharding (a ``NamedSharding``, or a
    ``PartitionSpec`` under a ``with mesh:`` block); ``shardings`` is a prefix tree of ``x``."""
    leaves, tree = tree_util.tree_flatten(x)
    specs = tree_util.broadcast_prefix(
        shardings, x, is_leaf=lambda s: s is None or isinstance(s, (NamedSharding, PartitionSpec))
    )
    outs = [
        leaf if s is None else _bind(leaf, resolve_spec(s, "with_sharding_constraint"))
        for leaf, s in zip(leaves, specs)
    ]
    return tree.unflatten(outs)

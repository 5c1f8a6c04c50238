"""``lax.optimization_barrier``: the identity on a pytree of arrays that XLA may not move
computations across (``stablehlo.optimization_barrier``), e.g. to keep a rematerialized value
from being merged with the original. JAX's rules: jvp and transpose put their tangents and
cotangents through a barrier of their own; batching keeps the batch dims."""

from __future__ import annotations

from typing import Any

from fcore import tree_util
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.ir.avals import ShapedArray
from fcore.ir.params import NoParams
from fcore.lax._base import NpArray
from fcore.lax._primitive import Primitive
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = ["optimization_barrier", "optimization_barrier_p"]

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True, params=NoParams)


@optimization_barrier_p.def_abstract_eval
def _ob_abstract_eval(*operands: ShapedArray) -> list[ShapedArray]:
    return list(operands)


@optimization_barrier_p.def_impl
def _ob_impl(*operands: NpArray) -> list[NpArray]:
    return list(operands)  # eagerly there is nothing to reorder


@jvp_rules.register(optimization_barrier_p)
def _ob_jvp(primals: list[Any], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
    return optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents)


@transpose_rules.register(optimization_barrier_p)
def _ob_transpose(cts: list[Any], *operands: Any) -> list[Any]:
    out: list[Any] = optimization_barrier_p.bind(*cts)
    return out


@batching_rules.register(optimization_barrier_p)
def _ob_batching(axis_size: int, vals: list[Any], dims: list[Dim]) -> tuple[list[Any], list[Dim]]:
    return optimization_barrier_p.bind(*vals), list(dims)


@lowering_rules.register(optimization_barrier_p)
def _ob_lowering(ctx: LoweringRuleContext, *operands: str) -> list[str]:
    if not operands:
        return []
    types = ", ".join(tensor_type(a) for a in ctx.avals_in)
    name = ctx.emit(f"stablehlo.optimization_barrier {', '.join(operands)} : {types}", n_results=len(operands))
    return [name] if len(operands) == 1 else [f"{name}#{i}" for i in range(len(operands))]


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree of arrays) unchanged, behind a barrier the compiler may not move
    operations across: everything the barrier's outputs depend on is computed before anything
    that uses them."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))

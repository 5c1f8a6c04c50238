"""``approx_top_k[k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
aggregate_to_topk]``: ``lax.approx_max_k`` / ``approx_min_k`` (JAX's ``jax._src.lax.ann``).

On CPU JAX lowers the primitive to XLA's ``ApproxTopK`` custom call with ``is_fallback``
set, which XLA rewrites into an exact sort by a ``GT``/``LT`` comparator and a slice; fcore
emits the same call (eagerly too), so values, indices, tie and NaN
orders are XLA's, as JAX's are. One primitive block (docs/adding_a_primitive.md).
"""

from __future__ import annotations

import operator

import attrs
import numpy as np

from fcore.backend.approx_topk import reduction_output_size
from fcore.backend.lowering import LoweringRuleContext, element_type, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.lax._base import ArrayLike
from fcore.lax.linalg import _xla_impl
from fcore.lax._primitive import Primitive
from fcore.lax.sorting import _take_along
from fcore.transforms.ad_util import Tangent, Zero
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import jvp_rules

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]


# -- approx_top_k[...] ---------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class ApproxTopKParams:
    """``approx_top_k``'s parameters, as the user gave them (``reduction_dimension`` may be
    negative, as in JAX's jaxprs)."""

    k: int
    reduction_dimension: int
    recall_target: float
    is_max_k: bool
    reduction_input_size_override: int
    aggregate_to_topk: bool


approx_top_k_p = Primitive("approx_top_k", multiple_results=True, params=ApproxTopKParams)


@approx_top_k_p.def_abstract_eval
def _approx_top_k_abstract_eval(
    x: ShapedArray, *, k: int, reduction_dimension: int, recall_target: float, is_max_k: bool,
    reduction_input_size_override: int, aggregate_to_topk: bool,
) -> list[ShapedArray]:
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if not x.shape:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {x.shape}")
    dims = list(x.shape)
    size = dims[reduction_dimension]  # an IndexError out of range, as in JAX
    if size < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {size}, got {k}")
    if not dtypes.is_floating(x.dtype):
        raise ValueError("operand must be a floating type")
    dims[reduction_dimension] = k if aggregate_to_topk else reduction_output_size(
        size, len(dims), k, recall_target, aggregate_to_topk, reduction_input_size_override)
    return [ShapedArray(tuple(dims), x.dtype, x.weak_type), ShapedArray(tuple(dims), dtypes.int32)]


approx_top_k_p.def_impl(_xla_impl(approx_top_k_p))  # XLA runs the custom call eagerly too


@jvp_rules.register(approx_top_k_p, symbolic_zeros=True)
def _approx_top_k_jvp(
    primals: list[Array], tangents: list[Tangent], *, k: int, reduction_dimension: int, recall_target: float,
    is_max_k: bool, reduction_input_size_override: int, aggregate_to_topk: bool,
) -> tuple[list[Array], list[Tangent]]:
    (x,), (t,) = primals, tangents
    vals, idx = approx_top_k_p.bind(
        x, k=k, reduction_dimension=reduction_dimension, recall_target=recall_target, is_max_k=is_max_k,
        reduction_input_size_override=reduction_input_size_override, aggregate_to_topk=aggregate_to_topk)
    if isinstance(t, Zero):
        return [vals, idx], [Zero(get_aval(vals)), Zero(get_aval(idx))]
    axis = reduction_dimension % get_aval(x).ndim
    return [vals, idx], [_take_along(t, idx, axis), Zero(get_aval(idx))]


@batching_rules.register(approx_top_k_p)
def _approx_top_k_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, k: int, reduction_dimension: int, recall_target: float,
    is_max_k: bool, reduction_input_size_override: int, aggregate_to_topk: bool,
) -> tuple[list[Array], list[Dim]]:
    (x,), (bdim,) = vals, dims
    assert bdim is not None
    dim_map = [d for d in range(get_aval(x).ndim) if d != bdim]
    outs = approx_top_k_p.bind(
        x, k=k, reduction_dimension=dim_map[reduction_dimension], recall_target=recall_target, is_max_k=is_max_k,
        reduction_input_size_override=reduction_input_size_override, aggregate_to_topk=aggregate_to_topk)
    return outs, [bdim, bdim]


def _comparator(ctx: LoweringRuleContext, x: ShapedArray, is_max_k: bool) -> str:
    """The ``(a, b, i, j) -> a > b`` (or ``<``) function the custom call names."""
    et = element_type(x.dtype)
    direction = "gt" if is_max_k else "lt"
    sym = ctx.module.unique_name(f"top_k_{direction}_{et}_comparator")
    scalar = f"tensor<{et}>"
    ctx.module.functions.append(
        f"  func.func private @{sym}(%arg0: {scalar}, %arg1: {scalar}, %arg2: tensor<i32>, %arg3: tensor<i32>) "
        f"-> tensor<i1> {{\n"
        f"    %0 = stablehlo.compare {direction.upper()}, %arg0, %arg1 : ({scalar}, {scalar}) -> tensor<i1>\n"
        f"    stablehlo.return %0 : tensor<i1>\n  }}"
    )
    return sym


@lowering_rules.register(approx_top_k_p)
def _approx_top_k_lowering(
    ctx: LoweringRuleContext, x: str, *, k: int, reduction_dimension: int, recall_target: float, is_max_k: bool,
    reduction_input_size_override: int, aggregate_to_topk: bool,
) -> list[str]:
    (a,) = ctx.avals_in
    dim = reduction_dimension % a.ndim
    idx_aval = ShapedArray(a.shape, dtypes.int32)
    iota = ctx.emit(f"stablehlo.iota dim = {dim} : {tensor_type(idx_aval)}")
    init_val = ctx.constant(np.array(-np.inf if is_max_k else np.inf), a.dtype)
    init_arg = ctx.constant(-1, dtypes.int32)
    comparator = _comparator(ctx, a, is_max_k)
    config = (
        f"aggregate_to_topk = {str(aggregate_to_topk).lower()}, is_fallback = true, "
        f"recall_target = {float(np.float32(recall_target))!r} : f32, reduction_dim = {dim} : i64, "
        f"reduction_input_size_override = {reduction_input_size_override} : i64, top_k = {k} : i64"
    )
    ins = ", ".join(tensor_type(t) for t in (a, idx_aval, ShapedArray((), a.dtype), ShapedArray((), dtypes.int32)))
    outs = ", ".join(tensor_type(t) for t in ctx.avals_out)
    res = ctx.emit(
        f"stablehlo.custom_call @ApproxTopK({x}, {iota}, {init_val}, {init_arg}) {{backend_config = \"\", "
        f"called_computations = [@{comparator}], mhlo.backend_config = {{{config}}}}} : ({ins}) -> ({outs})",
        n_results=2,
    )
    return [f"{res}#0", f"{res}#1"]


def _approx_top_k(operand: ArrayLike, k: int, reduction_dimension: int, recall_target: float, is_max_k: bool,
                  reduction_input_size_override: int, aggregate_to_topk: bool) -> list[Array]:
    """The primitive's results as JAX returns them: a list ``[values, indices]``."""
    vals, idx = approx_top_k_p.bind(
        operand, k=operator.index(k), reduction_dimension=operator.index(reduction_dimension),
        recall_target=float(recall_target), is_max_k=is_max_k,
        reduction_input_size_override=operator.index(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk))
    return [vals, idx]


def approx_max_k(operand: ArrayLike, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> list[Array]:
    """``lax.approx_max_k``: the ``k`` largest values along ``reduction_dimension`` and their
    int32 indices (on CPU exact, as XLA's fallback is; with ``aggregate_to_topk=False``, XLA's
    number of sorted candidates, at least ``k``)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True, reduction_input_size_override,
                         aggregate_to_topk)


def approx_min_k(operand: ArrayLike, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> list[Array]:
    """``lax.approx_min_k``: ``approx_max_k`` for the ``k`` smallest values."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                         aggregate_to_topk)

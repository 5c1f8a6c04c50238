"""Slicing primitives: ``slice`` (static bounds), ``dynamic_slice`` and ``dynamic_update_slice``
(traced start indices, clamped into bounds as XLA does), with JAX's names and parameters.

Each primitive is one block (docs/adding_a_primitive.md); its user functions, including the
``*_in_dim`` helpers that act along one axis, close the block. ``split`` and ``unstack``,
built from slices, follow the blocks. Under ``vmap`` a dynamic slice with batched start
indices becomes one ``gather`` (an update, one ``scatter``), as in JAX.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.trace import Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType
from fcore.ir.params import NoParams
from fcore.lax._base import ArrayLike, NpArray, checked_impl, const, same_dtypes, shape_of
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, aval_of, bind, hlo_ints, index_tuple, literal, zeros
from fcore.lax.elementwise import add, convert_element_type, lt, select_n
from fcore.lax.gather_scatter import (
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter,
)
from fcore.lax.shapes import broadcast_in_dim_p, concatenate_p, expand_dims, pad_p, squeeze
from fcore.transforms.ad_util import UndefinedPrimal, is_undefined
from fcore.transforms.batching import Dim, batching_rules, bdim_at, moveaxis
from fcore.transforms.jvp import deflinear
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "slice_p", "dynamic_slice_p", "dynamic_update_slice_p",
    "slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim",
]

#: What the dynamic slices accept as start indices: one scalar per axis, or a 1-D array of them.
StartIndices: TypeAlias = Union[Sequence[ArrayLike], Array, NpArray]


# -- helpers shared by the blocks ------------------------------------------------------------
def _check_indices(name: str, x: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    if len(indices) != len(x.shape):
        raise TypeError(
            f"{name} takes one start index per axis of operand {x.str_short()}, got {len(indices)}."
        )
    if indices:
        dt = indices[0].dtype
        for i in indices:
            if i.dtype != dt or not dtypes.is_integer(i.dtype):
                raise TypeError(
                    f"index arguments to {name} must be integers of the same type, got: "
                    + ", ".join(dtypes.dtype_name(j.dtype) for j in indices)
                )
            if i.shape != ():
                raise TypeError(
                    f"start_indices arguments to {name} must be scalars, got "
                    + ", ".join(j.str_short() for j in indices)
                )


def _clamped_starts(shape: Shape, sizes: Shape, indices: Sequence[NpArray]) -> tuple[builtins.slice, ...]:
    """XLA clamps each start index into ``[0, dim - size]`` so the slice is always in bounds."""
    out = []
    for d, s, i in zip(shape, sizes, indices):
        start = builtins.min(builtins.max(int(i), 0), d - s)
        out.append(builtins.slice(start, start + s))
    return tuple(out)


def _index_dtype(i: object) -> DType | None:
    if isinstance(i, (Array, np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(i.dtype)
    return None


def _normalize_index(name: str, i: ArrayLike, d: int, allow_negative: bool) -> ArrayLike:
    """JAX's ``_dynamic_slice_indices`` for one index: wrap a negative index once (``i + d``).

    Static indices (Python ints, NumPy and concrete fcore values) are wrapped here and become
    strongly typed 0-d arrays, staged as literals; traced indices get ``select_n(i < 0, i, i + d)``.
    """
    if type(i) is int:
        if i < 0:
            if not allow_negative:
                raise ValueError(f"{name}: index {i} is out of bounds for dimension {d} if allow_negative_indices=False")
            i += d
        return np.array(i).astype(dtypes.default_int_dtype())
    dt = _index_dtype(i)
    if dt is None or not dtypes.is_signed_int(dt):
        return i  # unsigned indices are never negative; non-integers are rejected by the rule
    if isinstance(i, Tracer):
        if not allow_negative:
            return i
        if i.weak_type:
            i = convert_element_type(i, dt)
        return select_n(lt(i, const(i, 0)), i, add(i, const(i, d)))
    v = int(np.asarray(i))
    if v < 0:
        if not allow_negative:
            raise ValueError(f"{name}: index {v} is out of bounds for dimension {d} if allow_negative_indices=False")
        v += d
    return np.array(v).astype(dt)


def _start_indices(
    name: str, shape: Shape, start_indices: StartIndices, allow_negative: bool | Sequence[bool]
) -> list[ArrayLike]:
    items: Sequence[ArrayLike]
    if isinstance(start_indices, (Array, np.ndarray)):
        if len(start_indices.shape) != 1:
            raise ValueError(f"{name}: slice indices must be a 1D sequence, got shape {start_indices.shape}")
        if isinstance(start_indices, Tracer):
            items = [index_in_dim(start_indices, k, 0, keepdims=False) for k in range(start_indices.shape[0])]
        else:
            items = list(np.asarray(start_indices))
    else:
        items = start_indices
    if len(items) != len(shape):
        raise ValueError(
            f"{name}: length of slice indices must match number of operand dimensions ({len(items)} vs {shape})"
        )
    allow = [allow_negative] * len(shape) if isinstance(allow_negative, bool) else list(allow_negative)
    return [_normalize_index(name, i, d, a) for i, d, a in zip(items, shape, allow)]


def _zero_like_index(i: ArrayLike) -> ArrayLike:
    """A zero start index of ``i``'s type (JAX's ``_const(i, 0)``)."""
    dt = _index_dtype(i)
    return 0 if dt is None else np.zeros((), dt)


def _index_dtype_of(indices: Sequence[Array]) -> DType:
    return get_aval(indices[0]).dtype if indices else dtypes.canonicalize_dtype(np.dtype(np.int32))


def _stack_indices(axis_size: int, indices: Sequence[Array], dims: Sequence[Dim]) -> Array:
    """Per-example scalar start indices (batched or not) as one ``(axis_size, len(indices))`` array."""
    cols = [
        bind(broadcast_in_dim_p, i, shape=(axis_size, 1), broadcast_dimensions=() if d is None else (0,))
        for i, d in zip(indices, dims)
    ]
    return cols[0] if len(cols) == 1 else bind(concatenate_p, *cols, dimension=1)


# -- slice[start_indices, limit_indices, strides] -------------------------------------------
@attrs.frozen(kw_only=True)
class SliceParams:
    """``slice[start_indices, limit_indices, strides]``: static bounds per axis (``strides``
    ``None``: unit strides)."""

    start_indices: Shape
    limit_indices: Shape
    strides: Shape | None


slice_p = Primitive("slice", params=SliceParams)


@slice_p.def_abstract_eval
def _slice_abstract_eval(
    x: ShapedArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None
) -> ShapedArray:
    nd = len(x.shape)
    if len(start_indices) != nd or len(limit_indices) != nd or (strides is not None and len(strides) != nd):
        raise TypeError(
            f"slice start_indices {start_indices}, limit_indices {limit_indices} and strides {strides} "
            f"must each have one entry per axis of operand {x.str_short()}."
        )
    shape = []
    for i, (d, start, limit) in enumerate(zip(x.shape, start_indices, limit_indices)):
        if not 0 <= start <= limit <= d:
            raise TypeError(
                f"slice indices must satisfy 0 <= start <= limit <= size in every axis, got start_indices "
                f"{start_indices} and limit_indices {limit_indices} for operand {x.str_short()}."
            )
        if strides is None:
            shape.append(limit - start)
        else:
            stride = strides[i]
            if stride < 1:
                raise TypeError(f"slice strides must be positive, got {strides}.")
            shape.append((limit - start + stride - 1) // stride)
    return shaped_array(tuple(shape), x.dtype, x.weak_type)


@checked_impl(slice_p)
def _slice_impl(x: NpArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> NpArray:
    if strides is None:
        return x[tuple(builtins.slice(s, l) for s, l in zip(start_indices, limit_indices))]
    return x[tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


deflinear(slice_p)


@transpose_rules.register(slice_p)
def _slice_transpose(
    ct: Array, x: UndefinedPrimal, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None
) -> list[Array]:
    in_shape = x.aval.shape
    a = get_aval(ct)
    if strides is None or all(s == 1 for s in strides):
        config = tuple((s, d - lim, 0) for s, lim, d in zip(start_indices, limit_indices, in_shape))
    else:
        real_limits = [s + (0 if t == 0 else 1 + (t - 1) * st) for s, t, st in zip(start_indices, a.shape, strides)]
        config = tuple((s, d - lim, st - 1) for s, lim, d, st in zip(start_indices, real_limits, in_shape, strides))
    return [bind(pad_p, ct, literal(0, a.dtype, True), padding_config=config)]


@batching_rules.register(slice_p)
def _slice_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, start_indices: Shape, limit_indices: Shape,
    strides: Shape | None,
) -> tuple[Array, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    out = bind(
        slice_p,
        x,
        start_indices=start_indices[:b] + (0,) + start_indices[b:],
        limit_indices=limit_indices[:b] + (axis_size,) + limit_indices[b:],
        strides=None if strides is None else strides[:b] + (1,) + strides[b:],
    )
    return out, b


@lowering_rules.register(slice_p)
def _slice_lowering(
    ctx: LoweringRuleContext, x: str, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None
) -> str:
    a, out = ctx.avals_in[0], ctx.avals_out[0]
    if a.shape == out.shape:
        return x  # the whole operand (a rank-0 slice included)
    steps = strides if strides is not None else (1,) * len(start_indices)
    parts = ", ".join(
        f"{s}:{lim}" if st == 1 else f"{s}:{lim}:{st}" for s, lim, st in zip(start_indices, limit_indices, steps)
    )
    return ctx.op_typed("stablehlo.slice", [f"{x} [{parts}]"], [a], out)


def slice(
    operand: ArrayLike, start_indices: Sequence[int], limit_indices: Sequence[int], strides: Sequence[int] | None = None
) -> Array:
    """Static slice ``operand[start:limit:stride]`` in every axis (``lax.slice``)."""
    return bind(
        slice_p,
        operand,
        start_indices=index_tuple(start_indices),
        limit_indices=index_tuple(limit_indices),
        strides=None if strides is None else index_tuple(strides),
    )


def slice_in_dim(
    operand: ArrayLike, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
) -> Array:
    """``lax.slice`` along one axis; ``None`` and negative indices as in Python slicing (no clipping)."""
    shape = shape_of(operand)
    axis = operator.index(axis)
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: ArrayLike, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """``operand[..., index, ...]`` along ``axis`` with a static index (``IndexError`` when out of range)."""
    index, axis = operator.index(index), operator.index(axis)
    n = shape_of(operand)[axis]
    wrapped = index + n if index < 0 else index
    if not 0 <= wrapped < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


# -- dynamic_slice[slice_sizes] -------------------------------------------------------------
@attrs.frozen(kw_only=True)
class DynamicSliceParams:
    """``dynamic_slice[slice_sizes]``: the static size of the slice in every axis."""

    slice_sizes: Shape


dynamic_slice_p = Primitive("dynamic_slice", params=DynamicSliceParams)


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(x: ShapedArray, *indices: ShapedArray, slice_sizes: Shape) -> ShapedArray:
    _check_indices("dynamic_slice", x, indices)
    if len(slice_sizes) != len(x.shape):
        raise TypeError(f"dynamic_slice slice_sizes {slice_sizes} must have one entry per axis of {x.str_short()}.")
    for d, s in zip(x.shape, slice_sizes):
        if not 0 <= s <= d:
            raise TypeError(
                "dynamic_slice slice_sizes must be nonnegative and at most the operand shape, got "
                f"slice_sizes {slice_sizes} for operand {x.str_short()}."
            )
    return shaped_array(slice_sizes, x.dtype, x.weak_type)


@checked_impl(dynamic_slice_p)
def _dynamic_slice_impl(x: NpArray, *indices: NpArray, slice_sizes: Shape) -> NpArray:
    return x[_clamped_starts(x.shape, slice_sizes, indices)]


deflinear(dynamic_slice_p, [0])  # the start indices are integers: not differentiable


@transpose_rules.register(dynamic_slice_p)
def _dynamic_slice_transpose(
    ct: Array, x: Array | UndefinedPrimal, *indices: Array, slice_sizes: Shape
) -> list[Array | None]:
    if not is_undefined(x) or any(is_undefined(i) for i in indices):
        raise ValueError("dynamic_slice is linear only in its operand")
    out: list[Array | None] = [bind(dynamic_update_slice_p, zeros(aval_of(x)), ct, *indices)]
    return out + [None] * len(indices)


@batching_rules.register(dynamic_slice_p)
def _dynamic_slice_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, slice_sizes: Shape
) -> tuple[Array, Dim]:
    x, *idx = vals
    bx, *bidx = dims
    if all(d is None for d in bidx):
        assert bx is not None
        zero = literal(0, _index_dtype_of(idx))
        starts = idx[:bx] + [zero] + idx[bx:]
        return bind(dynamic_slice_p, x, *starts, slice_sizes=slice_sizes[:bx] + (axis_size,) + slice_sizes[bx:]), bx
    # Batched start indices: a gather of one clamped window per example (as JAX does).
    dt = get_aval(x).dtype
    if axis_size == 0:
        return bind(broadcast_in_dim_p, literal(0, dt), shape=(0,) + slice_sizes, broadcast_dimensions=()), 0
    index = _stack_indices(axis_size, idx, bidx)
    nd = len(slice_sizes)
    if bx is None:
        dn = GatherDimensionNumbers(
            offset_dims=tuple(range(1, nd + 1)), collapsed_slice_dims=(), start_index_map=tuple(range(nd))
        )
        return gather(x, index, dn, slice_sizes, mode=GatherScatterMode.CLIP), 0
    dn = GatherDimensionNumbers(
        offset_dims=tuple(range(1, nd + 1)), collapsed_slice_dims=(), start_index_map=tuple(range(1, nd + 1)),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,),
    )
    return gather(moveaxis(x, bx, 0), index, dn, (1,) + slice_sizes, mode=GatherScatterMode.CLIP), 0


@lowering_rules.register(dynamic_slice_p)
def _dynamic_slice_lowering(ctx: LoweringRuleContext, x: str, *indices: str, slice_sizes: Shape) -> str:
    if not indices:
        return x
    return ctx.op_typed(
        "stablehlo.dynamic_slice", [x, *indices], ctx.avals_in, ctx.avals_out[0], f", sizes = {hlo_ints(slice_sizes)}"
    )


def dynamic_slice(
    operand: ArrayLike,
    start_indices: StartIndices,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """Slice of static size at traced start indices; out-of-range starts are clamped like XLA.

    A negative index is first wrapped once by the axis size, as in JAX.
    """
    shape = shape_of(operand)
    idx = _start_indices("dynamic_slice", shape, start_indices, allow_negative_indices)
    return bind(dynamic_slice_p, operand, *idx, slice_sizes=index_tuple(slice_sizes))


def dynamic_slice_in_dim(
    operand: ArrayLike, start_index: ArrayLike, slice_size: int, axis: int = 0, *, allow_negative_indices: bool = True
) -> Array:
    """``dynamic_slice`` along one axis (the other axes are taken whole)."""
    shape = shape_of(operand)
    axis = operator.index(axis)
    starts: list[ArrayLike] = [_zero_like_index(start_index)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(
    operand: ArrayLike, index: ArrayLike, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True
) -> Array:
    """``operand[..., index, ...]`` along ``axis`` for a traced ``index`` (clamped)."""
    result = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


# -- dynamic_update_slice -------------------------------------------------------------------
dynamic_update_slice_p = Primitive("dynamic_update_slice", params=NoParams)


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(x: ShapedArray, update: ShapedArray, *indices: ShapedArray) -> ShapedArray:
    if len(update.shape) != len(x.shape):
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got update "
            f"{update.str_short()} for operand {x.str_short()}."
        )
    same_dtypes("dynamic_update_slice", (x, update))
    _check_indices("dynamic_update_slice", x, indices)
    for d, u in zip(x.shape, update.shape):
        if u > d:
            raise TypeError(
                "dynamic_update_slice update shape must be smaller than operand shape, got update "
                f"{update.str_short()} for operand {x.str_short()}."
            )
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in indices)
    return shaped_array(x.shape, x.dtype, weak)


@checked_impl(dynamic_update_slice_p)
def _dynamic_update_slice_impl(x: NpArray, update: NpArray, *indices: NpArray) -> NpArray:
    out = x.copy()
    out[_clamped_starts(x.shape, update.shape, indices)] = update
    return out


deflinear(dynamic_update_slice_p, [0, 1])


@transpose_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_transpose(
    ct: Array, x: Array | UndefinedPrimal, update: Array | UndefinedPrimal, *indices: Array
) -> list[Array | None]:
    if any(is_undefined(i) for i in indices):
        raise ValueError("dynamic_update_slice is not linear in its start indices")
    ua = aval_of(update)
    op_ct = bind(dynamic_update_slice_p, ct, zeros(ua), *indices) if is_undefined(x) else None
    up_ct = bind(dynamic_slice_p, ct, *indices, slice_sizes=ua.shape) if is_undefined(update) else None
    return [op_ct, up_ct] + [None] * len(indices)


@batching_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_batching(axis_size: int, vals: list[Array], dims: list[Dim]) -> tuple[Array, Dim]:
    x, u, *idx = vals
    bx, bu, *bidx = dims
    if all(d is None for d in bidx):
        if bx is not None and bx == bu:
            b = bx
        else:
            b = 0
            x, u = bdim_at(x, bx, axis_size, 0), bdim_at(u, bu, axis_size, 0)
        zero = literal(0, _index_dtype_of(idx))
        return bind(dynamic_update_slice_p, x, u, *idx[:b], zero, *idx[b:]), b
    # Batched start indices: a scatter of one clamped window per example (as JAX does).
    x, u = bdim_at(x, bx, axis_size, 0), bdim_at(u, bu, axis_size, 0)
    if axis_size == 0:
        return x, 0
    index = _stack_indices(axis_size, idx, bidx)
    nd = len(idx)
    dn = ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, nd + 1)), inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(1, nd + 1)), operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,),
    )
    return scatter(x, index, u, dn, indices_are_sorted=True, unique_indices=True, mode=GatherScatterMode.CLIP), 0


@lowering_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_lowering(ctx: LoweringRuleContext, x: str, update: str, *indices: str) -> str:
    if not indices:
        return update
    return ctx.op_typed("stablehlo.dynamic_update_slice", [x, update, *indices], ctx.avals_in, ctx.avals_out[0])


def dynamic_update_slice(
    operand: ArrayLike,
    update: ArrayLike,
    start_indices: StartIndices,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """``operand`` with the block at ``start_indices`` replaced by ``update`` (starts clamped like XLA)."""
    shape = shape_of(operand)
    idx = _start_indices("dynamic_update_slice", shape, start_indices, allow_negative_indices)
    return bind(dynamic_update_slice_p, operand, update, *idx)


def dynamic_update_slice_in_dim(
    operand: ArrayLike, update: ArrayLike, start_index: ArrayLike, axis: int, *, allow_negative_indices: bool = True
) -> Array:
    """``dynamic_update_slice`` at ``start_index`` along ``axis`` (0 along the others)."""
    nd = len(shape_of(operand))
    axis = operator.index(axis)
    starts: list[ArrayLike] = [_zero_like_index(start_index)] * nd
    starts[axis] = start_index
    allow = [False] * nd
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(
    operand: ArrayLike, update: ArrayLike, index: ArrayLike, axis: int, *, allow_negative_indices: bool = True
) -> Array:
    """Replace the size-1 slab at ``index`` along ``axis``; ``update`` may lack that axis."""
    axis = operator.index(axis)
    if len(shape_of(update)) + 1 == len(shape_of(operand)):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)

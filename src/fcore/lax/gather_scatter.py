"""``gather`` and the ``scatter`` family (``scatter``, ``scatter-add``, ``-mul``, ``-min``, ``-max``).

They follow XLA's general semantics, with JAX's parameters: dimension numbers are frozen
``ParamStruct`` values, out-of-bounds behaviour is JAX's ``GatherScatterMode``. That covers
NumPy-style indexing and ``x.at[idx].set/add/...``. The eager impls address every window
element with one NumPy advanced index. Each primitive is one block (docs/adding_a_primitive.md);
the scatter family shares one parameter schema, ``ScatterParams``, and the rule helpers above
the blocks.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable, Sequence
from typing import Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import ClosedJaxpr
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.parser import register_param_enum, register_param_struct
from fcore.lax._base import ArrayLike, NpArray, checked_impl, same_dtypes
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, aval_of, bind, hlo_ints, index_tuple, literal, prod, shift_dims, zeros
from fcore.lax.elementwise import add, div, eq, mul, neg, select_n, sub
from fcore.lax.elementwise import max as lax_max
from fcore.lax.elementwise import min as lax_min
from fcore.lax.shapes import broadcast_in_dim, broadcast_in_dim_p, concatenate, expand_dims, iota, reshape
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate, is_undefined
from fcore.transforms.batching import Dim, batching_rules, bdim_at, moveaxis
from fcore.transforms.jvp import deflinear, jvp_rules, sum_tangent_terms
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "GatherScatterMode", "GatherDimensionNumbers", "ScatterDimensionNumbers",
    "gather_p", "scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p", "scatter_min_p", "scatter_max_p",
    "gather", "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "index_take",
]

#: A gather's ``fill_value`` (``None`` unless the mode is ``FILL_OR_DROP``).
FillValue: TypeAlias = Union[bool, int, float, complex, None]


# -- parameter values: mode and dimension numbers --------------------------------------------
@register_param_enum
class GatherScatterMode(enum.Enum):
    """How gather and scatter treat out-of-bounds windows (``lax.GatherScatterMode``).

    ``CLIP`` clamps start indices so the window is in bounds; ``FILL_OR_DROP`` fills an
    out-of-bounds gathered window with ``fill_value`` and drops an out-of-bounds scattered one;
    ``PROMISE_IN_BOUNDS`` behaves like XLA's CPU backend (gathers clamp, scatters drop).
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


@register_param_struct
@attrs.frozen(slots=True)
class GatherDimensionNumbers(ParamStruct):
    """XLA's gather dimension numbers; the index vector is always the last axis of the indices."""

    offset_dims: Shape = attrs.field(converter=index_tuple)
    collapsed_slice_dims: Shape = attrs.field(converter=index_tuple)
    start_index_map: Shape = attrs.field(converter=index_tuple)
    operand_batching_dims: Shape = attrs.field(default=(), converter=index_tuple)
    start_indices_batching_dims: Shape = attrs.field(default=(), converter=index_tuple)


@register_param_struct
@attrs.frozen(slots=True)
class ScatterDimensionNumbers(ParamStruct):
    """XLA's scatter dimension numbers; the index vector is always the last axis of the indices."""

    update_window_dims: Shape = attrs.field(converter=index_tuple)
    inserted_window_dims: Shape = attrs.field(converter=index_tuple)
    scatter_dims_to_operand_dims: Shape = attrs.field(converter=index_tuple)
    operand_batching_dims: Shape = attrs.field(default=(), converter=index_tuple)
    scatter_indices_batching_dims: Shape = attrs.field(default=(), converter=index_tuple)


# -- helpers shared by the blocks: shape checks and the eager window addressing ------------------
def _sorted_unique_in_range(op: str, name: str, dims: Shape, rank: int) -> None:
    for i, d in enumerate(dims):
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {dims}.")
        if i and dims[i - 1] >= d:
            raise TypeError(f"{name} in {op} op must be sorted and must not repeat; got {dims}")


def _unique_in_range(op: str, name: str, dims: Shape, rank: int) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {dims}.")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint(op: str, name1: str, dims1: Shape, name2: str, dims2: Shape) -> None:
    if set(dims1) & set(dims2):
        raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; got {dims1} and {dims2}.")


def _check_index_dtype(op: str, indices: ShapedArray) -> None:
    if not dtypes.is_integer(indices.dtype):
        raise ValueError(f"{op}: indices must have an integer type, got {indices.str_short()}")
    if not indices.shape:
        raise TypeError(f"{op}: indices must have rank >= 1 (the last axis is the index vector), got {indices.str_short()}")


def _window_starts(
    batch_shape: Shape, indices: NpArray, nd: int, index_map: Shape, operand_bdims: Shape, indices_bdims: Shape
) -> NpArray:
    """Each window's full start index (one row per index vector), before clamping or masking."""
    nb = prod(batch_shape)
    starts = np.zeros((nb, nd), np.int64)
    starts[:, list(index_map)] = indices.reshape(nb, len(index_map))
    if operand_bdims:
        coords = np.indices(batch_shape).reshape(len(batch_shape), nb)
        for od, idim in zip(operand_bdims, indices_bdims):
            starts[:, od] = coords[idim]
    return starts


def _window_index(starts: NpArray, window: Shape) -> tuple[NpArray, ...]:
    """Advanced-indexing arrays of shape ``(windows, *window)`` addressing every window element."""
    nb, nd = starts.shape
    out = []
    for d in range(nd):
        shape = [1] * (nd + 1)
        shape[d + 1] = window[d]
        out.append(starts[:, d].reshape((nb,) + (1,) * nd) + np.arange(window[d]).reshape(shape))
    return tuple(out)


def _operand_dtype(x: ArrayLike) -> DType:
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return np.dtype(x.dtype)
    return dtypes.python_scalar_dtype(x)


def _default_fill_value(dt: DType) -> bool | int | float:
    if dtypes.is_inexact(dt):
        return float("nan")
    if dtypes.is_signed_int(dt):
        return int(np.iinfo(dt).min)
    if dtypes.is_unsigned_int(dt):
        return int(np.iinfo(dt).max)
    return True


# -- helpers shared by the blocks: how a scatter's windows read back as a gather ---------------
def _gather_dnums_of(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather that reads back the windows a scatter with ``dn`` writes."""
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )


def _scatter_window(dn: ScatterDimensionNumbers, operand_ndim: int, updates_shape: Shape) -> Shape:
    """The operand-shaped window a scatter writes per index vector (gather ``slice_sizes``)."""
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = iter(dn.update_window_dims)
    return tuple(1 if i in skip else updates_shape[next(window)] for i in range(operand_ndim))


def _readback_mode(mode: GatherScatterMode) -> GatherScatterMode:
    """The gather mode that reads exactly what a scatter of ``mode`` wrote (dropped windows as fill)."""
    return GatherScatterMode.CLIP if mode is GatherScatterMode.CLIP else GatherScatterMode.FILL_OR_DROP


def _scatter_winners(
    idx: Array, dn: ScatterDimensionNumbers, operand_shape: Shape, updates_shape: Shape, indices_are_sorted: bool,
    mode: GatherScatterMode,
) -> tuple[Array, Array]:
    """Where a scatter with repeated indices keeps the operand, and which updates win.

    JAX's scheme: tag each update with a positive id, scatter the ids (the same way the values
    are scattered) and read them back; an update won where it reads back its own id.
    Returns bool masks shaped like the operand and like the updates.
    """
    ids_shape = tuple(1 if d in dn.update_window_dims else s for d, s in enumerate(updates_shape))
    num_ids = prod(ids_shape)
    id_dt = np.dtype(np.uint32) if num_ids < 2**32 - 1 else np.dtype(np.uint64)
    ids = add(reshape(iota(id_dt, num_ids), ids_shape), literal(1, id_dt))
    update_ids = broadcast_in_dim(ids, updates_shape, tuple(range(len(updates_shape))))
    scattered_ids = scatter(
        broadcast_in_dim(literal(0, id_dt), operand_shape, ()), idx, update_ids, dn,
        indices_are_sorted=indices_are_sorted, mode=mode,
    )
    window = _scatter_window(dn, len(operand_shape), updates_shape)
    read_mode = _readback_mode(mode)
    gathered_ids = gather(
        scattered_ids, idx, _gather_dnums_of(dn), window, mode=read_mode,
        fill_value=0 if read_mode is GatherScatterMode.FILL_OR_DROP else None,
    )
    return eq(scattered_ids, literal(0, id_dt)), eq(update_ids, gathered_ids)


# -- helpers shared by the blocks: StableHLO text ------------------------------------------------
def _i64_array(xs: Sequence[int]) -> str:
    return "array<i64: " + ", ".join(str(int(x)) for x in xs) + ">" if xs else "array<i64>"


def _bool_attr(b: bool) -> str:
    return "true" if b else "false"


def _index_compare_type(dt: DType) -> str:
    return "UNSIGNED" if dtypes.is_unsigned_int(dt) else "SIGNED"


def _index_upper_bounds(ctx: LoweringRuleContext, idx: ShapedArray, bounds: Sequence[int]) -> str:
    """``bounds`` (one per index-vector entry) broadcast to the indices' shape, in their dtype."""
    info = np.iinfo(idx.dtype)
    values = np.clip(np.array(bounds, np.int64), builtins.max(int(info.min), 0), int(info.max)).astype(idx.dtype)
    vec = ctx.constant(values, idx.dtype, (len(bounds),))
    return ctx.broadcast(vec, ShapedArray((len(bounds),), idx.dtype), idx.shape, [idx.ndim - 1])


def _dnums_attr(kind: str, fields: Sequence[tuple[str, Shape]], index_vector_dim: int) -> str:
    body = ", ".join(f"{name} = {hlo_ints(v)}" for name, v in fields if v)
    sep = ", " if body else ""
    return f"#stablehlo.{kind}<{body}{sep}index_vector_dim = {index_vector_dim}>"


# -- gather[dimension_numbers, slice_sizes, unique_indices, indices_are_sorted, mode, fill_value]
@attrs.frozen(kw_only=True)
class GatherParams:
    """``gather[...]``: XLA's dimension numbers, the window size per operand axis, JAX's
    ordering hints, the out-of-bounds ``mode`` and its ``fill_value``."""

    dimension_numbers: GatherDimensionNumbers
    slice_sizes: Shape
    unique_indices: bool
    indices_are_sorted: bool
    mode: GatherScatterMode
    fill_value: FillValue


gather_p = Primitive("gather", params=GatherParams)


@gather_p.def_abstract_eval
def _gather_abstract_eval(
    operand: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: GatherScatterMode,
    fill_value: FillValue,
) -> ShapedArray:
    _check_index_dtype("gather", indices)
    dn = dimension_numbers
    rank = len(operand.shape)
    ivd = len(indices.shape) - 1
    out_rank = len(dn.offset_dims) + ivd
    _sorted_unique_in_range("gather", "offset_dims", dn.offset_dims, out_rank)
    if len(dn.start_index_map) != indices.shape[ivd]:
        raise TypeError(
            f"gather op has {len(dn.start_index_map)} elements in start_index_map but the index vector "
            f"(last) dimension of indices {indices.str_short()} has size {indices.shape[ivd]}."
        )
    _unique_in_range("gather", "start_index_map", dn.start_index_map, rank)
    _sorted_unique_in_range("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, rank)
    _sorted_unique_in_range("gather", "operand_batching_dims", dn.operand_batching_dims, rank)
    _disjoint("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, "operand_batching_dims", dn.operand_batching_dims)
    _disjoint("gather", "start_index_map", dn.start_index_map, "operand_batching_dims", dn.operand_batching_dims)
    _unique_in_range("gather", "start_indices_batching_dims", dn.start_indices_batching_dims, ivd)
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise TypeError(
            "gather op requires equal numbers of operand_batching_dims and start_indices_batching_dims, got "
            f"{dn.operand_batching_dims} and {dn.start_indices_batching_dims}."
        )
    if tuple(operand.shape[i] for i in dn.operand_batching_dims) != tuple(
        indices.shape[i] for i in dn.start_indices_batching_dims
    ):
        raise TypeError(
            "gather op requires operand batching dimensions and indices batching dimensions to have the same "
            f"shape, got operand {operand.str_short()} and indices {indices.str_short()}."
        )
    if len(slice_sizes) != rank:
        raise TypeError(f"gather op must have one slice size for every operand dimension; got {slice_sizes} for {operand.str_short()}")
    if rank != len(dn.offset_dims) + len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims):
        raise TypeError(
            "All components of the offset index in a gather op must either be an offset dimension or explicitly "
            f"collapsed/batching; got slice_sizes={slice_sizes}, {dn}."
        )
    if indices.size:
        for s, d in zip(slice_sizes, operand.shape):
            if not 0 <= s <= d:
                raise TypeError(f"gather: slice sizes {slice_sizes} out of range for operand {operand.str_short()}")
    for d in dn.collapsed_slice_dims:
        if slice_sizes[d] != 1:
            raise TypeError(f"gather op can only collapse slice dims with bound 1, got slice_sizes {slice_sizes}, {dn}")
    for d in dn.operand_batching_dims:
        if slice_sizes[d] > 1:
            raise TypeError(f"gather op can only have operand batching dims with bound 0/1, got slice_sizes {slice_sizes}")
    skip = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = iter([s for i, s in enumerate(slice_sizes) if i not in skip])
    batch = iter(indices.shape[:ivd])
    shape = tuple(next(window) if i in dn.offset_dims else next(batch) for i in range(out_rank))
    return shaped_array(shape, operand.dtype, operand.weak_type)


@checked_impl(gather_p)
def _gather_impl(
    operand: NpArray,
    indices: NpArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: GatherScatterMode,
    fill_value: FillValue,
) -> NpArray:
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT is not implemented")
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    starts = _window_starts(
        batch_shape, indices, operand.ndim, dn.start_index_map, dn.operand_batching_dims, dn.start_indices_batching_dims
    )
    upper = np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64)
    oob: NpArray | None = None
    if mode is GatherScatterMode.FILL_OR_DROP:
        # JAX masks on the indexed dimensions only, then gathers with clamping.
        cols = list(dn.start_index_map)
        oob = np.asarray(((starts[:, cols] < 0) | (starts[:, cols] > upper[cols])).any(axis=1))
    starts = np.clip(starts, 0, np.maximum(upper, 0))
    window = operand[_window_index(starts, slice_sizes)]
    if oob is not None and oob.any():
        window = window.copy()
        window[oob] = np.array(fill_value).astype(operand.dtype)
    skip = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = [s for i, s in enumerate(slice_sizes) if i not in skip]
    window = window.reshape(batch_shape + tuple(offsets))
    nbatch = len(batch_shape)
    perm, b = [], 0
    for i in range(nbatch + len(offsets)):
        if i in dn.offset_dims:
            perm.append(nbatch + dn.offset_dims.index(i))
        else:
            perm.append(b)
            b += 1
    return np.transpose(window, perm)


@jvp_rules.register(gather_p, symbolic_zeros=True)
def _gather_jvp(
    primals: list[Array], tangents: list[Tangent], *, dimension_numbers: GatherDimensionNumbers, slice_sizes: Shape,
    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: FillValue,
) -> tuple[Array, Tangent]:
    x, idx = primals
    t = tangents[0]
    params: dict[str, ParamValue] = dict(
        dimension_numbers=dimension_numbers, slice_sizes=slice_sizes, unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value,
    )
    out = bind(gather_p, x, idx, **params)
    if isinstance(t, Zero):
        return out, Zero(get_aval(out))
    if mode is GatherScatterMode.FILL_OR_DROP:
        params = {**params, "fill_value": 0}  # an out-of-bounds window is constant: its tangent is 0
    return out, bind(gather_p, t, idx, **params)


@transpose_rules.register(gather_p)
def _gather_transpose(
    ct: Array, x: Array | UndefinedPrimal, idx: Array | UndefinedPrimal, *, dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: FillValue,
) -> list[Array | None]:
    """A scatter-add of the cotangent windows into zeros. XLA's gather clamps out-of-bounds
    starts (``PROMISE_IN_BOUNDS`` included), so those transpose to a clamping scatter: the exact
    adjoint even when the promise is broken; filled windows (``FILL_OR_DROP``) are dropped."""
    if not isinstance(x, UndefinedPrimal) or isinstance(idx, UndefinedPrimal):
        raise ValueError("gather is linear only in its operand")
    dn = dimension_numbers
    if mode is GatherScatterMode.PROMISE_IN_BOUNDS:
        mode = GatherScatterMode.CLIP
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )
    out = scatter_add(
        zeros(x.aval), idx, ct, sdn, unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode
    )
    return [out, None]


@batching_rules.register(gather_p)
def _gather_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: FillValue,
) -> tuple[Array, Dim]:
    """JAX's ``_gather_batching_rule``: a batched operand becomes an offset (window) dimension,
    batched indices an extra batch dimension, and both batched an operand batching dimension."""
    x, idx = vals
    bx, bi = dims
    dn = dimension_numbers
    params: dict[str, ParamValue] = dict(
        unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value
    )
    if bi is None:
        assert bx is not None
        x = moveaxis(x, bx, 0)
        new = GatherDimensionNumbers(
            offset_dims=(0,) + shift_dims(dn.offset_dims),
            collapsed_slice_dims=shift_dims(dn.collapsed_slice_dims),
            start_index_map=shift_dims(dn.start_index_map),
            operand_batching_dims=shift_dims(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        return bind(gather_p, x, idx, dimension_numbers=new, slice_sizes=(axis_size,) + slice_sizes, **params), 0
    idx = moveaxis(idx, bi, 0)
    if bx is None:
        new = GatherDimensionNumbers(
            offset_dims=shift_dims(dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=shift_dims(dn.start_indices_batching_dims),
        )
        params.update(unique_indices=False, indices_are_sorted=False)
        return bind(gather_p, x, idx, dimension_numbers=new, slice_sizes=slice_sizes, **params), 0
    x = moveaxis(x, bx, 0)
    if axis_size == 0:  # a size-1 batching slice of a size-0 axis is not a valid gather
        xa, ia = get_aval(x), get_aval(idx)
        out = gather_p.abstract_eval(
            [shaped_array(xa.shape[1:], xa.dtype), shaped_array(ia.shape[1:], ia.dtype)],
            dict(dimension_numbers=dn, slice_sizes=slice_sizes, **params),
        )[0]
        return bind(broadcast_in_dim_p, literal(0, xa.dtype), shape=(0,) + out.shape, broadcast_dimensions=()), 0
    new = GatherDimensionNumbers(
        offset_dims=shift_dims(dn.offset_dims),
        collapsed_slice_dims=shift_dims(dn.collapsed_slice_dims),
        start_index_map=shift_dims(dn.start_index_map),
        operand_batching_dims=(0,) + shift_dims(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + shift_dims(dn.start_indices_batching_dims),
    )
    return bind(gather_p, x, idx, dimension_numbers=new, slice_sizes=(1,) + slice_sizes, **params), 0


@lowering_rules.register(gather_p)
def _gather_lowering(
    ctx: LoweringRuleContext, x: str, idx: str, *, dimension_numbers: GatherDimensionNumbers, slice_sizes: Shape,
    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: FillValue,
) -> str:
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT is not implemented")
    xa, ia = ctx.avals_in
    out = ctx.avals_out[0]
    dn = dimension_numbers
    dnums = _dnums_attr("gather", [
        ("offset_dims", dn.offset_dims), ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("operand_batching_dims", dn.operand_batching_dims),
        ("start_indices_batching_dims", dn.start_indices_batching_dims), ("start_index_map", dn.start_index_map),
    ], ia.ndim - 1)
    gathered = ctx.emit(
        f'"stablehlo.gather"({x}, {idx}) <{{dimension_numbers = {dnums}, '
        f"indices_are_sorted = {_bool_attr(indices_are_sorted)}, slice_sizes = {_i64_array(slice_sizes)}}}> : "
        f"({tensor_type(xa)}, {tensor_type(ia)}) -> {tensor_type(out)}"
    )
    k = ia.shape[-1]
    if mode is not GatherScatterMode.FILL_OR_DROP or k == 0 or out.size == 0:
        return gathered
    # FILL_OR_DROP: XLA clamps, so mask windows whose start is out of bounds in an indexed dimension.
    pred = ia.update(dtype=dtypes.bool_)
    cmp = f", {_index_compare_type(ia.dtype)}"
    upper = _index_upper_bounds(ctx, ia, [xa.shape[d] - slice_sizes[d] for d in dn.start_index_map])
    ok = ctx.op_typed("stablehlo.compare LE,", [idx, upper], [ia, ia], pred, cmp)
    if not dtypes.is_unsigned_int(ia.dtype):
        zero = ctx.constant(0, ia.dtype, ia.shape)
        ok = ctx.op("stablehlo.and", [ok, ctx.op_typed("stablehlo.compare GE,", [idx, zero], [ia, ia], pred, cmp)], pred)
    per_window = pred.update(shape=ia.shape[:-1])
    true = ctx.constant(True, dtypes.bool_)
    mask = ctx.emit(
        f"stablehlo.reduce({ok} init: {true}) applies stablehlo.and across dimensions = [{ia.ndim - 1}] : "
        f"({tensor_type(pred)}, tensor<i1>) -> {tensor_type(per_window)}"
    )
    batch_dims = [d for d in range(out.ndim) if d not in dn.offset_dims]
    mask = ctx.broadcast(mask, per_window, out.shape, batch_dims)
    fill = ctx.constant(fill_value, out.dtype, out.shape)
    return ctx.emit(f"stablehlo.select {mask}, {gathered}, {fill} : {tensor_type(out.update(dtype=dtypes.bool_))}, "
                    f"{tensor_type(out)}")


def gather(
    operand: ArrayLike,
    start_indices: ArrayLike,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: FillValue = None,
) -> Array:
    """XLA's gather (``lax.gather``): one window of ``slice_sizes`` per index vector.

    ``mode`` defaults to ``PROMISE_IN_BOUNDS`` (clamping); with ``"fill"`` an out-of-bounds
    window is ``fill_value`` (default NaN, the integer minimum/maximum, or True, as in JAX).
    """
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill_value(dtypes.canonicalize_dtype(_operand_dtype(operand)))
    else:
        fill_value = None
    return bind(
        gather_p,
        operand,
        start_indices,
        dimension_numbers=dimension_numbers,
        slice_sizes=index_tuple(slice_sizes),
        unique_indices=bool(unique_indices),
        indices_are_sorted=bool(indices_are_sorted),
        mode=parsed,
        fill_value=fill_value,
    )


# -- helpers shared by the scatter blocks -------------------------------------------------------
def _scatter_shape_rule(
    name: str, operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, dn: ScatterDimensionNumbers
) -> ShapedArray:
    _check_index_dtype(name, indices)
    same_dtypes(name, (operand, updates))
    rank, urank = len(operand.shape), len(updates.shape)
    ivd = len(indices.shape) - 1
    _sorted_unique_in_range(name, "update_window_dims", dn.update_window_dims, urank)
    _sorted_unique_in_range(name, "inserted_window_dims", dn.inserted_window_dims, rank)
    _sorted_unique_in_range(name, "operand_batching_dims", dn.operand_batching_dims, rank)
    _disjoint(name, "inserted_window_dims", dn.inserted_window_dims, "operand_batching_dims", dn.operand_batching_dims)
    if len(dn.update_window_dims) + len(dn.inserted_window_dims) + len(dn.operand_batching_dims) != rank:
        raise TypeError(
            f"{name} op has window of size {len(dn.update_window_dims)} plus inserted/batching dims, which must "
            f"add up to the operand rank {rank}; got {dn}."
        )
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[ivd]:
        raise TypeError(
            f"{name} op has {len(dn.scatter_dims_to_operand_dims)} elements in scatter_dims_to_operand_dims but the "
            f"index vector (last) dimension of indices {indices.str_short()} has size {indices.shape[ivd]}."
        )
    _unique_in_range(name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, rank)
    _disjoint(
        name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, "operand_batching_dims",
        dn.operand_batching_dims,
    )
    _unique_in_range(name, "scatter_indices_batching_dims", dn.scatter_indices_batching_dims, ivd)
    if len(dn.operand_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise TypeError(
            f"{name} op requires equal numbers of operand_batching_dims and scatter_indices_batching_dims, got {dn}."
        )
    if tuple(operand.shape[i] for i in dn.operand_batching_dims) != tuple(
        indices.shape[i] for i in dn.scatter_indices_batching_dims
    ):
        raise TypeError(
            f"{name} op requires operand batching dimensions and indices batching dimensions to have the same "
            f"shape, got operand {operand.str_short()} and indices {indices.str_short()}."
        )
    if urank != len(dn.update_window_dims) + ivd:
        raise TypeError(
            f"{name}: updates rank must be len(update_window_dims) + indices rank - 1, got updates "
            f"{updates.str_short()}, indices {indices.str_short()} and {dn}."
        )
    scatter_sizes = tuple(s for i, s in enumerate(updates.shape) if i not in dn.update_window_dims)
    if scatter_sizes != indices.shape[:ivd]:
        raise TypeError(
            f"{name}: the scatter dimensions of updates {updates.str_short()} must match the batch dimensions "
            f"of indices {indices.str_short()}."
        )
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [i for i in range(rank) if i not in skip]
    for od, ud in zip(window_dims, dn.update_window_dims):
        if updates.shape[ud] > operand.shape[od]:
            raise TypeError(
                f"{name}: update window {updates.str_short()} does not fit in operand {operand.str_short()} ({dn})."
            )
    return operand


def _scatter_abstract_eval(name: str, bool_error: str | None) -> Callable[..., ShapedArray]:
    """The abstract eval of scatter primitive ``name``; ``bool_error`` rejects a bool operand."""

    def rule(
        operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
        dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
        mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None, update_consts: tuple[ParamValue, ...],
    ) -> ShapedArray:
        if bool_error is not None and dtypes.is_bool(operand.dtype):
            raise TypeError(bool_error)
        return _scatter_shape_rule(name, operand, indices, updates, dimension_numbers)

    return rule


def _scatter_apply(
    operand: NpArray, indices: NpArray, updates: NpArray, dn: ScatterDimensionNumbers, mode: GatherScatterMode,
    combine: np.ufunc | None,
) -> NpArray:
    """The scatter, replacing (``combine=None``) or combining with ``combine.at`` (repeated
    windows combine in order)."""
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("scatter: mode ONE_HOT is not implemented")
    nd = operand.ndim
    batch_shape = indices.shape[:-1]
    starts = _window_starts(
        batch_shape, indices, nd, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
    )
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = [1] * nd
    for od, ud in zip([i for i in range(nd) if i not in skip], dn.update_window_dims):
        window[od] = updates.shape[ud]
    upper = np.array(operand.shape, np.int64) - np.array(window, np.int64)
    scatter_dims = [i for i in range(updates.ndim) if i not in dn.update_window_dims]
    upd = np.transpose(updates, scatter_dims + list(dn.update_window_dims)).reshape((len(starts), *window))
    if mode is GatherScatterMode.CLIP:
        starts = np.clip(starts, 0, upper)
    else:  # FILL_OR_DROP, and PROMISE_IN_BOUNDS as XLA implements it: drop out-of-bounds windows
        keep = ((starts >= 0) & (starts <= upper)).all(axis=1)
        if not keep.all():
            starts, upd = starts[keep], upd[keep]
    out = operand.copy()
    where = _window_index(starts, tuple(window))
    if combine is None:
        out[where] = upd
    else:
        combine.at(out, where, upd)
    return out


def _scatter_impl(combine: np.ufunc | None) -> Callable[..., NpArray]:
    """The eager impl of a scatter that replaces (``combine=None``) or combines with ``combine``."""

    def impl(
        operand: NpArray, indices: NpArray, updates: NpArray, *,
        dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
        mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None, update_consts: tuple[ParamValue, ...],
    ) -> NpArray:
        if combine is None:
            return _scatter_apply(operand, indices, updates, dimension_numbers, mode, None)
        with np.errstate(over="ignore", invalid="ignore"):
            return _scatter_apply(operand, indices, updates, dimension_numbers, mode, combine)

    return impl


def _scatter_batching(prim: Primitive) -> Callable[..., tuple[Array, Dim]]:
    """JAX's ``_scatter_batching_rule`` (the operand is always batched: it is written into)."""

    def rule(
        axis_size: int, vals: list[Array], dims: list[Dim], *, dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None,
        update_consts: tuple[ParamValue, ...],
    ) -> tuple[Array, Dim]:
        x, idx, u = vals
        bx, bi, bu = dims
        dn = dimension_numbers
        x = bdim_at(x, bx, axis_size, 0)
        u = bdim_at(u, bu, axis_size, 0)
        if bi is None:
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + shift_dims(dn.update_window_dims),
                inserted_window_dims=shift_dims(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=shift_dims(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=shift_dims(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
            )
        else:
            if axis_size == 0:
                return x, 0
            idx = moveaxis(idx, bi, 0)
            new = ScatterDimensionNumbers(
                update_window_dims=shift_dims(dn.update_window_dims),
                inserted_window_dims=shift_dims(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=shift_dims(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0,) + shift_dims(dn.operand_batching_dims),
                scatter_indices_batching_dims=(0,) + shift_dims(dn.scatter_indices_batching_dims),
            )
        out = bind(
            prim, x, idx, u, dimension_numbers=new, indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices, mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts,
        )
        return out, 0

    return rule


def _scatter_lowering(op: str | None) -> Callable[..., str]:
    """``stablehlo.scatter`` whose region replaces (``op=None``) or combines with ``op``."""

    def rule(
        ctx: LoweringRuleContext, x: str, idx: str, u: str, *, dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None,
        update_consts: tuple[ParamValue, ...],
    ) -> str:
        if mode is GatherScatterMode.ONE_HOT:
            raise NotImplementedError("scatter: mode ONE_HOT is not implemented")
        xa, ia, ua = ctx.avals_in
        out = ctx.avals_out[0]
        dn = dimension_numbers
        if mode is GatherScatterMode.CLIP and ia.size and ia.shape[-1]:
            # XLA drops out-of-bounds windows; CLIP clamps the start indices first (JAX's way).
            window = _scatter_window(dn, xa.ndim, ua.shape)
            upper = _index_upper_bounds(ctx, ia, [xa.shape[d] - window[d] for d in dn.scatter_dims_to_operand_dims])
            zero = ctx.constant(0, ia.dtype, ia.shape)
            idx = ctx.op("stablehlo.clamp", [zero, idx, upper], ia)
        dnums = _dnums_attr("scatter", [
            ("update_window_dims", dn.update_window_dims), ("inserted_window_dims", dn.inserted_window_dims),
            ("input_batching_dims", dn.operand_batching_dims),
            ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims),
        ], ia.ndim - 1)
        scalar = tensor_type(ShapedArray((), out.dtype))
        lhs, rhs = ctx.fn.fresh(), ctx.fn.fresh()
        if op is not None:
            res = ctx.fn.fresh()
            body = (f"      {res} = {op} {lhs}, {rhs} : {scalar}\n"
                    f"      stablehlo.return {res} : {scalar}\n")
        else:
            body = f"      stablehlo.return {rhs} : {scalar}\n"
        return ctx.emit(
            f'"stablehlo.scatter"({x}, {idx}, {u}) <{{indices_are_sorted = {_bool_attr(indices_are_sorted)}, '
            f"scatter_dimension_numbers = {dnums}, unique_indices = {_bool_attr(unique_indices)}}}> ({{\n"
            f"    ^bb0({lhs}: {scalar}, {rhs}: {scalar}):\n{body}"
            f"    }}) : ({tensor_type(xa)}, {tensor_type(ia)}, {tensor_type(ua)}) -> {tensor_type(out)}"
        )

    return rule


_COMBINERS: dict[str, Callable[[ArrayLike, ArrayLike], Array]] = {
    "add": add, "sub": sub, "mul": mul, "min": lax_min, "max": lax_max,
}
_combiner_jaxprs: dict[tuple[str, DType], ClosedJaxpr] = {}


def _combiner_jaxpr(op: str, dt: DType) -> ClosedJaxpr:
    """``{ lambda ; a b. let c = <op> a b in (c,) }`` on scalars of ``dt``: a scatter's
    combiner, as JAX records it in ``update_jaxpr``."""
    jaxpr = _combiner_jaxprs.get((op, dt))
    if jaxpr is None:
        fn = _COMBINERS[op]
        aval = shaped_array((), dt)
        jaxpr = trace_to_jaxpr(lambda a, b: [fn(a, b)], [aval, aval], f"scatter-{op} combiner")
        _combiner_jaxprs[(op, dt)] = jaxpr
    return jaxpr


def _scatter_combined(
    p: Primitive, op: str, operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
    mode: str | GatherScatterMode | None,
) -> Array:
    """Bind scatter primitive ``p`` whose windows combine with the operand by ``op``."""
    dt = dtypes.canonicalize_dtype(_operand_dtype(operand))
    return bind(
        p, operand, scatter_indices, updates, update_jaxpr=_combiner_jaxpr(op, dt), update_consts=(),
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
    )


def _scatter_extremal_jvp(prim: Primitive) -> Callable[..., tuple[Array, Tangent]]:
    """JAX's ``_scatter_extremal_jvp`` (scatter-min/max): where several values tie for the
    extremum of a window, the tangent is their average."""

    def rule(
        primals: list[Array], tangents: list[Tangent], *, dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None,
        update_consts: tuple[ParamValue, ...],
    ) -> tuple[Array, Tangent]:
        x, idx, u = primals
        tx, _, tu = tangents
        dn = dimension_numbers
        out = bind(
            prim, x, idx, u, dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices, mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts,
        )
        if type(tx) is Zero and type(tu) is Zero:
            return out, Zero(get_aval(out))
        tx, tu = instantiate(tx), instantiate(tu)
        xa, ua = get_aval(x), get_aval(u)
        gdn = _gather_dnums_of(dn)
        window = _scatter_window(dn, xa.ndim, ua.shape)

        def back(v: Array) -> Array:
            return gather(v, idx, gdn, window)

        initial, target = back(x), back(out)
        won = eq(u, target)
        kept = eq(initial, target)
        one = literal(1, ua.dtype)
        ones_u = broadcast_in_dim(one, ua.shape, ())
        zeros_u = zeros(ua)
        num_updates = back(scatter_add(zeros(xa), idx, select_n(won, zeros_u, ones_u), dn))
        num_refs = back(scatter_add(zeros(xa), idx, ones_u, dn))
        plus_one = add(num_updates, broadcast_in_dim(one, ua.shape, ()))
        updates_norm = select_n(kept, div(ones_u, num_updates), div(ones_u, plus_one))
        updates_coef = select_n(won, zeros_u, updates_norm)
        operand_norm = select_n(kept, zeros_u, div(ones_u, plus_one))
        operand_coef = div(sub(operand_norm, ones_u), num_refs)
        t_updates = add(mul(back(tx), operand_coef), mul(tu, updates_coef))
        t_out = scatter_add(tx, idx, t_updates, dn, indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)
        return out, t_out

    return rule


# -- scatter[dimension_numbers, indices_are_sorted, unique_indices, mode, update_jaxpr, update_consts]
@attrs.frozen(kw_only=True)
class ScatterParams:
    """The parameters of every scatter primitive: XLA's dimension numbers, JAX's ordering
    hints, the out-of-bounds ``mode``, and the combiner as JAX records it (``update_jaxpr``,
    ``None`` for a replacing scatter, with its ``update_consts``)."""

    dimension_numbers: ScatterDimensionNumbers
    indices_are_sorted: bool
    unique_indices: bool
    mode: GatherScatterMode
    update_jaxpr: ClosedJaxpr | None
    update_consts: tuple[ParamValue, ...]


scatter_p = Primitive("scatter", params=ScatterParams)
scatter_p.def_abstract_eval(_scatter_abstract_eval("scatter", None))
checked_impl(scatter_p)(_scatter_impl(None))


@jvp_rules.register(scatter_p, symbolic_zeros=True)
def _scatter_jvp(
    primals: list[Array], tangents: list[Tangent], *, dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None,
    update_consts: tuple[ParamValue, ...],
) -> tuple[Array, Tangent]:
    """JAX's ``_scatter_jvp``: with repeated indices, which update wins is unspecified, so primal
    and tangent are recomputed as scatter-adds of the winning values (both agree on the winner)."""
    x, idx, u = primals
    tx, _, tu = tangents
    params: dict[str, ParamValue] = dict(
        dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts,
    )
    if type(tx) is Zero and type(tu) is Zero:
        out = bind(scatter_p, x, idx, u, **params)
        return out, Zero(get_aval(out))
    tx, tu = instantiate(tx), instantiate(tu)
    if unique_indices:
        return bind(scatter_p, x, idx, u, **params), bind(scatter_p, tx, idx, tu, **params)
    xa, ua = get_aval(x), get_aval(u)
    keep_operand, keep_update = _scatter_winners(idx, dimension_numbers, xa.shape, ua.shape, indices_are_sorted, mode)
    x_zeros, u_zeros = zeros(xa), zeros(ua)

    def scatter_kept(op: Array, up: Array) -> Array:
        return scatter_add(
            select_n(keep_operand, x_zeros, op), idx, select_n(keep_update, u_zeros, up), dimension_numbers,
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
        )

    return scatter_kept(x, u), scatter_kept(tx, tu)


@transpose_rules.register(scatter_p)
def _scatter_transpose(
    ct: Array, x: Array | UndefinedPrimal, idx: Array | UndefinedPrimal, u: Array | UndefinedPrimal, *,
    dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
    mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None, update_consts: tuple[ParamValue, ...],
) -> list[Array | None]:
    """The operand keeps the cotangent outside the written windows; each update gets the
    cotangent of its window where it won (all of them with ``unique_indices``)."""
    if isinstance(idx, UndefinedPrimal):
        raise ValueError("scatter is not linear in its indices")
    dn = dimension_numbers
    ua = aval_of(u)
    op_ct = up_ct = None
    if is_undefined(x):
        op_ct = scatter(
            ct, idx, zeros(ua), dn, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode
        )
    if is_undefined(u):
        operand_shape = get_aval(ct).shape
        window = _scatter_window(dn, len(operand_shape), ua.shape)
        up_ct = gather(
            ct, idx, _gather_dnums_of(dn), window, unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted, mode=_readback_mode(mode), fill_value=0,
        )
        if not unique_indices:
            keep_update = _scatter_winners(idx, dn, operand_shape, ua.shape, indices_are_sorted, mode)[1]
            up_ct = select_n(keep_update, zeros(ua), up_ct)
    return [op_ct, None, up_ct]


batching_rules.register(scatter_p)(_scatter_batching(scatter_p))
lowering_rules.register(scatter_p)(_scatter_lowering(None))


def scatter(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter with replacement (``lax.scatter``); ``mode`` defaults to dropping out-of-bounds windows.

    With repeated indices the last update wins here (XLA leaves the order unspecified).
    """
    return bind(
        scatter_p, operand, scatter_indices, updates, update_jaxpr=None, update_consts=(),
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
    )


# -- scatter-add[ScatterParams] -----------------------------------------------------------------
scatter_add_p = Primitive("scatter-add", params=ScatterParams)
scatter_add_p.def_abstract_eval(
    _scatter_abstract_eval("scatter-add", "scatter-add does not accept dtype bool (add is not defined on bool).")
)
checked_impl(scatter_add_p)(_scatter_impl(np.add))
deflinear(scatter_add_p, [0, 2])


@transpose_rules.register(scatter_add_p)
def _scatter_add_transpose(
    ct: Array, x: Array | UndefinedPrimal, idx: Array | UndefinedPrimal, u: Array | UndefinedPrimal, *,
    dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
    mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None, update_consts: tuple[ParamValue, ...],
) -> list[Array | None]:
    if isinstance(idx, UndefinedPrimal):
        raise ValueError("scatter-add is not linear in its indices")
    dn = dimension_numbers
    up_ct = None
    if is_undefined(u):
        window = _scatter_window(dn, get_aval(ct).ndim, aval_of(u).shape)
        up_ct = gather(
            ct, idx, _gather_dnums_of(dn), window, unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted, mode=_readback_mode(mode), fill_value=0,
        )
    return [ct if is_undefined(x) else None, None, up_ct]


batching_rules.register(scatter_add_p)(_scatter_batching(scatter_add_p))
lowering_rules.register(scatter_add_p)(_scatter_lowering("stablehlo.add"))


def scatter_add(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that adds updates into ``operand`` (``lax.scatter_add``); repeated indices accumulate."""
    dt = dtypes.canonicalize_dtype(_operand_dtype(operand))
    combiner = _combiner_jaxpr("add", dt) if not dtypes.is_bool(dt) else None
    return bind(
        scatter_add_p, operand, scatter_indices, updates, update_jaxpr=combiner, update_consts=(),
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
    )


# -- scatter-sub[ScatterParams] -----------------------------------------------------------------
scatter_sub_p = Primitive("scatter-sub", params=ScatterParams)
scatter_sub_p.def_abstract_eval(
    _scatter_abstract_eval("scatter-sub", "scatter-sub does not accept dtype bool (sub is not defined on bool).")
)
checked_impl(scatter_sub_p)(_scatter_impl(np.subtract))
deflinear(scatter_sub_p, [0, 2])


@transpose_rules.register(scatter_sub_p)
def _scatter_sub_transpose(
    ct: Array, x: Array | UndefinedPrimal, idx: Array | UndefinedPrimal, u: Array | UndefinedPrimal, *,
    dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
    mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None, update_consts: tuple[ParamValue, ...],
) -> list[Array | None]:
    """As scatter-add's, with the updates' cotangent negated."""
    x_ct, _, up_ct = _scatter_add_transpose(
        ct, x, idx, u, dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices, mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts,
    )
    return [x_ct, None, None if up_ct is None else neg(up_ct)]


batching_rules.register(scatter_sub_p)(_scatter_batching(scatter_sub_p))
lowering_rules.register(scatter_sub_p)(_scatter_lowering("stablehlo.subtract"))


def scatter_sub(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that subtracts updates from ``operand`` (``lax.scatter_sub``); repeated indices accumulate."""
    return _scatter_combined(scatter_sub_p, "sub", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


# -- scatter-mul[ScatterParams] -----------------------------------------------------------------
scatter_mul_p = Primitive("scatter-mul", params=ScatterParams)
scatter_mul_p.def_abstract_eval(_scatter_abstract_eval("scatter-mul", "scatter-mul does not accept dtype bool."))
checked_impl(scatter_mul_p)(_scatter_impl(np.multiply))


@jvp_rules.register(scatter_mul_p, symbolic_zeros=True)
def _scatter_mul_jvp(
    primals: list[Array], tangents: list[Tangent], *, dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None,
    update_consts: tuple[ParamValue, ...],
) -> tuple[Array, Tangent]:
    """Linear in the operand; as JAX, the updates' tangent is defined only for unique indices
    (else which update multiplies into which window is ambiguous)."""
    x, idx, u = primals
    tx, _, tu = tangents
    params: dict[str, ParamValue] = dict(
        dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts,
    )
    out = bind(scatter_mul_p, x, idx, u, **params)
    terms: list[Array] = []
    if not isinstance(tx, Zero):
        terms.append(bind(scatter_mul_p, tx, idx, u, **params))
    if not isinstance(tu, Zero):
        if not unique_indices:
            raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
        terms.append(mul(x, scatter_add(zeros(get_aval(x)), idx, tu, dimension_numbers,
                                        indices_are_sorted=indices_are_sorted, unique_indices=True, mode=mode)))
    return out, sum_tangent_terms(out, terms, len(primals))


@transpose_rules.register(scatter_mul_p)
def _scatter_mul_transpose(
    ct: Array, x: Array | UndefinedPrimal, idx: Array | UndefinedPrimal, u: Array | UndefinedPrimal, *,
    dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
    mode: GatherScatterMode, update_jaxpr: ClosedJaxpr | None, update_consts: tuple[ParamValue, ...],
) -> list[Array | None]:
    """Linear in the operand (for fixed updates) and, with unique indices, in the updates."""
    if isinstance(idx, UndefinedPrimal):
        raise ValueError("scatter-mul is not linear in its indices")
    dn = dimension_numbers
    op_ct = None
    up_ct = None
    if isinstance(x, UndefinedPrimal):
        if isinstance(u, UndefinedPrimal):
            raise ValueError("scatter-mul is not linear in its operand and updates at once")
        op_ct = scatter_mul(ct, idx, u, dn, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                            mode=mode)
    elif isinstance(u, UndefinedPrimal):
        if not unique_indices:
            raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
        window = _scatter_window(dn, get_aval(ct).ndim, u.aval.shape)
        up_ct = gather(mul(ct, x), idx, _gather_dnums_of(dn), window, mode=mode, fill_value=0)
    return [op_ct, None, up_ct]


batching_rules.register(scatter_mul_p)(_scatter_batching(scatter_mul_p))
lowering_rules.register(scatter_mul_p)(_scatter_lowering("stablehlo.multiply"))


def scatter_mul(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that multiplies updates into ``operand`` (``lax.scatter_mul``)."""
    return _scatter_combined(scatter_mul_p, "mul", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


# -- scatter-min[ScatterParams] -----------------------------------------------------------------
scatter_min_p = Primitive("scatter-min", params=ScatterParams)
scatter_min_p.def_abstract_eval(_scatter_abstract_eval("scatter-min", None))
checked_impl(scatter_min_p)(_scatter_impl(np.minimum))
jvp_rules.register(scatter_min_p, symbolic_zeros=True)(_scatter_extremal_jvp(scatter_min_p))
batching_rules.register(scatter_min_p)(_scatter_batching(scatter_min_p))
lowering_rules.register(scatter_min_p)(_scatter_lowering("stablehlo.minimum"))


def scatter_min(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that keeps the minimum of operand and updates (``lax.scatter_min``)."""
    return _scatter_combined(scatter_min_p, "min", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


# -- scatter-max[ScatterParams] -----------------------------------------------------------------
scatter_max_p = Primitive("scatter-max", params=ScatterParams)
scatter_max_p.def_abstract_eval(_scatter_abstract_eval("scatter-max", None))
checked_impl(scatter_max_p)(_scatter_impl(np.maximum))
jvp_rules.register(scatter_max_p, symbolic_zeros=True)(_scatter_extremal_jvp(scatter_max_p))
batching_rules.register(scatter_max_p)(_scatter_batching(scatter_max_p))
lowering_rules.register(scatter_max_p)(_scatter_lowering("stablehlo.maximum"))


def scatter_max(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that keeps the maximum of operand and updates (``lax.scatter_max``)."""
    return _scatter_combined(scatter_max_p, "max", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


def index_take(src: ArrayLike, idxs: Sequence[ArrayLike], axes: Sequence[int]) -> Array:
    """``lax.index_take``: ``src`` at the points whose coordinates along ``axes`` are the
    1-D index arrays ``idxs`` (wrapped modulo those axes' sizes), the other axes kept whole;
    JAX's gather, built the same way."""
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    shape = get_aval(src).shape
    sizes = np.array([shape[ax] for ax in axes])
    indices = indices % expand_dims(sizes, tuple(range(indices.ndim - 1)))
    slice_sizes = list(shape)
    for ax in axes:
        slice_sizes[ax] = 1
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - indices.shape[1] + 1)), collapsed_slice_dims=tuple(axes),
        start_index_map=tuple(axes),
    )
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=tuple(slice_sizes))

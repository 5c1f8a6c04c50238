"""Collectives over named mesh axes: ``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute``, ``axis_index``.

They are meaningful inside ``fcore.shard_map`` (and ``fcore.pmap``), whose body is traced
with its mesh axes bound (``axis_env``); a collective over a name no enclosing map binds is
JAX's ``NameError``. Each lowers to the StableHLO collective over the replica groups its axes
cut the mesh into (``use_global_device_ids``: the groups hold positions in the mesh, which is
the program's device assignment). The tiled forms are the primitives; the untiled forms add
or drop an axis around them.

Transposes follow JAX's shard_map without replication checks (``check_vma=False``): ``psum``
transposes to ``psum``, and ``shard_map``'s transpose scales the cotangents of results that
are replicated over an axis and sums those of inputs replicated over an axis.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from fcore.backend.lowering import LoweringError, LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.ir.avals import ShapedArray
from fcore.lax._primitive import Primitive
from fcore.interpreters.stack import current_trace, set_current_trace
from fcore.interpreters.trace import Trace
from fcore.lax.elementwise import ge_p, select_n
from fcore.lax.reductions import reduce_max, reduce_min, reduce_sum
from fcore.lax.shapes import concatenate, expand_dims, full_like, reshape, squeeze
from fcore.lax.slicing import index_in_dim
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import BatchTrace, BatchTracer, Dim, batching_rules, moveaxis
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "all_gather", "all_to_all", "axis_env", "axis_index", "axis_size", "pmax", "pmean", "pmin", "ppermute",
    "psum", "psum_scatter",
]

AxisName = str | tuple[str, ...]

# -----------------------------------------------------------------------------------------
# The axis environment: names bound by the enclosing maps while their bodies are traced
# -----------------------------------------------------------------------------------------
class _Bound(threading.local):
    """The names bound while this thread traces a map's body (as jax's trace state, per thread)."""

    def __init__(self) -> None:
        self.env: list[dict[str, int]] = []
        #: ``vmap(..., axis_name=name)`` traces, innermost last per name: a collective over
        #: ``name`` reduces over that vmap's batch axis (in the batching rules, or directly for
        #: values not batched along it).
        self.vmap_traces: dict[str, list[BatchTrace]] = {}


_bound = _Bound()


@contextlib.contextmanager
def axis_env(sizes: dict[str, int]) -> Iterator[None]:
    """Bind the axis names ``sizes`` (name -> size) while tracing a map's body."""
    _bound.env.append(dict(sizes))
    try:
        yield
    finally:
        _bound.env.pop()


@contextlib.contextmanager
def vmap_axis(name: str, size: int, trace: BatchTrace) -> Iterator[None]:
    """Bind ``name`` to the batch axis of ``trace`` (a ``vmap`` with ``axis_name``)."""
    traces = _bound.vmap_traces.setdefault(name, [])
    traces.append(trace)
    try:
        with axis_env({name: size}):
            yield
    finally:
        traces.pop()
        if not traces:
            del _bound.vmap_traces[name]


def _vmap_trace(name: str) -> BatchTrace | None:
    traces = _bound.vmap_traces.get(name)
    return traces[-1] if traces else None


def manual_axes(axes: tuple[str, ...]) -> bool:
    """Whether every name in ``axes`` is bound by an enclosing ``shard_map`` or ``pmap`` (not by
    a ``vmap``): JAX's manual axes of the current mesh."""
    bound = {a for frame in _bound.env for a in frame}
    return all(a in bound and _vmap_trace(a) is None for a in axes)


def _processing(name: str) -> bool:
    """Whether a batching rule now runs for the vmap that binds ``name`` (rules run with the
    trace's parent current)."""
    trace = _vmap_trace(name)
    return trace is not None and current_trace() is trace.parent


def _batched_along(x: Any, trace: Trace) -> bool:
    while isinstance(x, BatchTracer):
        if x._trace is trace:
            return x.bdim is not None
        x = x.val
    return False


def _split_vmap_axes(axes: tuple[str, ...], x: Any) -> tuple[tuple[str, ...], int]:
    """For a value: (the axes that still need a collective, the product of the sizes of the
    vmap axes along which ``x`` is not batched (those are handled by the caller))."""
    keep: list[str] = []
    unbatched = 1
    for a in axes:
        trace = _vmap_trace(a)
        if trace is not None and not _batched_along(x, trace):
            unbatched *= trace.axis_size
        else:
            keep.append(a)
    return tuple(keep), unbatched


def _vmap_only(name: str, axes: tuple[str, ...]) -> bool:
    """Whether the collective ``name`` over ``axes`` runs over vmap axes only (the batching rule
    does it); over vmap and mesh axes together it is not implemented (neither in JAX)."""
    if not _bound.vmap_traces:
        return False
    vmapped = [_vmap_trace(a) is not None for a in axes]
    if any(vmapped) and not all(vmapped):
        raise NotImplementedError(f"{name} over a vmap axis and mesh axes together")
    if all(vmapped) and len(axes) > 1:
        raise NotImplementedError(f"{name} over several vmap axes at once")
    return all(vmapped)


def _batched_over(v: Any, axes: tuple[str, ...]) -> Any:
    """``v`` made batched along the vmap axes ``axes`` where it is not (the same value on every
    element): a select on each element's ``axis_index`` broadcasts it through the batching rules."""
    for a in axes:
        trace = _vmap_trace(a)
        if trace is not None and not _batched_along(v, trace):
            v = select_n(ge_p.bind(axis_index(a), np.int32(0)), v, v)
    return v


def _names(axis_name: AxisName) -> tuple[str, ...]:
    return (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)


def axis_size(axis_name: AxisName) -> int:
    """The number of devices along the named axes (``NameError`` where none is bound)."""
    bound: dict[str, int] = {}
    for frame in _bound.env:
        bound.update(frame)
    n = 1
    for a in _names(axis_name):
        if a not in bound:
            raise NameError(
                f"unbound axis name: {a}. The following axis names (e.g. defined by pmap) are available to "
                f"collective operations: {sorted(bound)}"
            )
        n *= bound[a]
    return n


def _groups(ctx: LoweringRuleContext, axes: tuple[str, ...]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Replica groups: per combination of the other mesh axes, the mesh positions along ``axes``."""
    if not ctx.module.axis_env:
        raise LoweringError(f"a collective over {axes} outside shard_map/pmap")
    names, sizes = ctx.module.axis_env[-1]
    missing = [a for a in axes if a not in names]
    if missing:
        raise NameError(f"unbound axis name: {missing[0]}")
    pos = np.arange(math.prod(sizes), dtype=np.int64).reshape(sizes)
    idx = [names.index(a) for a in axes]
    others = [i for i in range(len(names)) if i not in idx]
    return pos.transpose(others + idx).reshape(-1, math.prod(sizes[i] for i in idx))


def _dense_i64(a: np.ndarray[Any, Any]) -> str:
    body = "[" + ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in a) + "]"
    return f"dense<{body}> : tensor<{a.shape[0]}x{a.shape[1]}xi64>"


def _channel(ctx: LoweringRuleContext) -> str:
    return f"channel_handle = #stablehlo.channel_handle<handle = {ctx.module.next_channel()}, type = 1>"


_REDUCERS = {"add": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum"}


def _reduction_region(ctx: LoweringRuleContext, aval: ShapedArray, op: str) -> str:
    scalar = tensor_type(ShapedArray((), aval.dtype))
    tag = ctx.fn.fresh()[1:]
    a, b, r = f"%red{tag}_a", f"%red{tag}_b", f"%red{tag}_r"
    combine = _REDUCERS[op]
    if aval.dtype == np.dtype(bool):
        combine = {"add": "stablehlo.or", "max": "stablehlo.or", "min": "stablehlo.and"}[op]
    return (
        f"({{\n    ^bb0({a}: {scalar}, {b}: {scalar}):\n      {r} = {combine} {a}, {b} : {scalar}\n"
        f"      stablehlo.return {r} : {scalar}\n    }})"
    )


def _all_reduce(ctx: LoweringRuleContext, x: str, axes: tuple[str, ...], op: str) -> str:
    aval = ctx.avals_in[0]
    groups = _groups(ctx, axes)
    t = tensor_type(aval)
    return ctx.emit(
        f'"stablehlo.all_reduce"({x}) <{{{_channel(ctx)}, replica_groups = {_dense_i64(groups)}, '
        f"use_global_device_ids}}> {_reduction_region(ctx, aval, op)} : ({t}) -> {t}"
    )


def _outside_map(name: str) -> NameError:
    return NameError(f"{name} must be called inside shard_map or pmap: unbound axis name")


# -----------------------------------------------------------------------------------------
# psum, pmax, pmin
# -----------------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class ReduceParams:
    """``psum[axes]`` (and pmax, pmin): reduce over the devices along ``axes``."""

    axes: tuple[str, ...]


psum_p = Primitive("psum", params=ReduceParams)
pmax_p = Primitive("pmax", params=ReduceParams)
pmin_p = Primitive("pmin", params=ReduceParams)


def _reduce_abstract_eval(x: ShapedArray, *, axes: tuple[str, ...]) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _reduce_impl(x: Any, *, axes: tuple[str, ...]) -> Any:
    raise _outside_map("psum/pmax/pmin")


for _p in (psum_p, pmax_p, pmin_p):
    _p.def_abstract_eval(_reduce_abstract_eval)
    _p.def_impl(_reduce_impl)


@jvp_rules.register(psum_p)
def _psum_jvp(primals: list[Any], tangents: list[Any], *, axes: tuple[str, ...]) -> tuple[Any, Any]:
    return psum_p.bind(primals[0], axes=axes), psum_p.bind(tangents[0], axes=axes)


@transpose_rules.register(psum_p)
def _psum_transpose(ct: Any, x: UndefinedPrimal, *, axes: tuple[str, ...]) -> list[Any]:
    return [psum_p.bind(ct, axes=axes)]


_REDUCE_OVER_BATCH = {"psum": reduce_sum, "pmax": reduce_max, "pmin": reduce_min}


def _reduce_batching(p: Primitive[Any]) -> None:
    @batching_rules.register(p)
    def rule(axis_size: int, vals: list[Any], dims: list[Dim], *, axes: tuple[str, ...]) -> tuple[Any, Dim]:
        (x,), (d,) = vals, dims
        assert d is not None
        named = [a for a in axes if _processing(a)]
        if not named:  # a mesh axis: the same collective on every batch element
            return p.bind(x, axes=axes), d
        out = _REDUCE_OVER_BATCH[p.name](x, (d,))  # over the vmap axis itself
        rest = tuple(a for a in axes if a not in named)
        return (p.bind(out, axes=rest) if rest else out), None


for _p, _op in ((psum_p, "add"), (pmax_p, "max"), (pmin_p, "min")):
    _reduce_batching(_p)

    def _lower(ctx: LoweringRuleContext, x: str, *, axes: tuple[str, ...], _op: str = _op) -> str:
        return _all_reduce(ctx, x, axes, _op)

    lowering_rules.register(_p)(_lower)


def _reduce(p: Primitive[Any], x: Any, axis_name: AxisName) -> Any:
    from fcore import tree_util

    axes = _names(axis_name)
    axis_size(axes)

    def one(v: Any) -> Any:
        keep, unbatched = _split_vmap_axes(axes, v) if _bound.vmap_traces else (axes, 1)
        if unbatched > 1 and p is psum_p:  # the same value on every element of a vmap axis
            v = v * unbatched
        return p.bind(v, axes=keep) if keep else v

    return tree_util.tree_map(one, x)


def psum(x: Any, axis_name: AxisName) -> Any:
    """The sum of ``x`` over the devices (or ``vmap`` elements) along ``axis_name``, for each
    leaf of a pytree."""
    return _reduce(psum_p, x, axis_name)


def pmax(x: Any, axis_name: AxisName) -> Any:
    """The maximum of ``x`` over the devices (or ``vmap`` elements) along ``axis_name``."""
    return _reduce(pmax_p, x, axis_name)


def pmin(x: Any, axis_name: AxisName) -> Any:
    """The minimum of ``x`` over the devices (or ``vmap`` elements) along ``axis_name``."""
    return _reduce(pmin_p, x, axis_name)


def pmean(x: Any, axis_name: AxisName) -> Any:
    """The mean of ``x`` over the devices along ``axis_name``."""
    from fcore import tree_util

    n = axis_size(axis_name)
    return tree_util.tree_map(lambda v: v / n, psum(x, axis_name))  # true division, as jax


# -----------------------------------------------------------------------------------------
# all_gather (tiled) and psum_scatter (tiled): each other's transpose
# -----------------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class GatherScatterParams:
    """``all_gather[axes axis_size dimension]``: concatenate (or, for ``psum_scatter``, sum
    and split) along ``dimension`` over the ``axis_size`` devices along ``axes``."""

    axes: tuple[str, ...]
    axis_size: int
    dimension: int


all_gather_p = Primitive("all_gather", params=GatherScatterParams)
psum_scatter_p = Primitive("reduce_scatter", params=GatherScatterParams)


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x: ShapedArray, *, axes: tuple[str, ...], axis_size: int, dimension: int) -> ShapedArray:
    if not 0 <= dimension < x.ndim:
        raise TypeError(f"all_gather dimension {dimension} is out of range for operand {x.str_short()}")
    shape = list(x.shape)
    shape[dimension] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


@all_gather_p.def_impl
def _all_gather_impl(x: Any, *, axes: tuple[str, ...], axis_size: int, dimension: int) -> Any:
    raise _outside_map("all_gather")


@jvp_rules.register(all_gather_p)
def _all_gather_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    return all_gather_p.bind(primals[0], **params), all_gather_p.bind(tangents[0], **params)


@transpose_rules.register(all_gather_p)
def _all_gather_transpose(ct: Any, x: UndefinedPrimal, *, axes: tuple[str, ...], axis_size: int,
                          dimension: int) -> list[Any]:
    return [psum_scatter_p.bind(ct, axes=axes, axis_size=axis_size, dimension=dimension)]


@batching_rules.register(all_gather_p)
def _all_gather_batching(n: int, vals: list[Any], dims: list[Dim], *, axes: tuple[str, ...], axis_size: int,
                         dimension: int) -> tuple[Any, Dim]:
    d = dims[0]
    assert d is not None
    named = [a for a in axes if _processing(a)]
    if named:
        if len(named) != len(axes):
            raise NotImplementedError("all_gather over a vmap axis and mesh axes together")
        x = moveaxis(vals[0], d, dimension)  # the batch axis becomes the gathered blocks
        shape = list(x.shape)
        shape[dimension : dimension + 2] = [shape[dimension] * shape[dimension + 1]]
        return reshape(x, tuple(shape)), None
    return all_gather_p.bind(vals[0], axes=axes, axis_size=axis_size, dimension=dimension + (d <= dimension)), d


@lowering_rules.register(all_gather_p)
def _all_gather_lowering(ctx: LoweringRuleContext, x: str, *, axes: tuple[str, ...], axis_size: int,
                         dimension: int) -> str:
    groups = _groups(ctx, axes)
    return ctx.emit(
        f'"stablehlo.all_gather"({x}) <{{all_gather_dim = {dimension} : i64, {_channel(ctx)}, '
        f"replica_groups = {_dense_i64(groups)}, use_global_device_ids}}> : "
        f"({tensor_type(ctx.avals_in[0])}) -> {tensor_type(ctx.avals_out[0])}"
    )


@psum_scatter_p.def_abstract_eval
def _psum_scatter_abstract_eval(x: ShapedArray, *, axes: tuple[str, ...], axis_size: int,
                                dimension: int) -> ShapedArray:
    if not 0 <= dimension < x.ndim:
        raise TypeError(f"psum_scatter dimension {dimension} is out of range for operand {x.str_short()}")
    if x.shape[dimension] % axis_size:
        raise ValueError(
            f"psum_scatter: dimension {dimension} of size {x.shape[dimension]} is not divisible by the axis size "
            f"{axis_size}"
        )
    shape = list(x.shape)
    shape[dimension] //= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


@psum_scatter_p.def_impl
def _psum_scatter_impl(x: Any, *, axes: tuple[str, ...], axis_size: int, dimension: int) -> Any:
    raise _outside_map("psum_scatter")


@jvp_rules.register(psum_scatter_p)
def _psum_scatter_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    return psum_scatter_p.bind(primals[0], **params), psum_scatter_p.bind(tangents[0], **params)


@transpose_rules.register(psum_scatter_p)
def _psum_scatter_transpose(ct: Any, x: UndefinedPrimal, *, axes: tuple[str, ...], axis_size: int,
                            dimension: int) -> list[Any]:
    return [all_gather_p.bind(ct, axes=axes, axis_size=axis_size, dimension=dimension)]


@batching_rules.register(psum_scatter_p)
def _psum_scatter_batching(n: int, vals: list[Any], dims: list[Dim], *, axes: tuple[str, ...], axis_size: int,
                           dimension: int) -> tuple[Any, Dim]:
    d = dims[0]
    assert d is not None
    if any(_processing(a) for a in axes):  # over the vmap axis: element i keeps block i of the sum
        total = reduce_sum(vals[0], (d,))
        shape = list(total.shape)
        shape[dimension : dimension + 1] = [n, shape[dimension] // n]
        return reshape(total, tuple(shape)), dimension
    return psum_scatter_p.bind(vals[0], axes=axes, axis_size=axis_size, dimension=dimension + (d <= dimension)), d


@lowering_rules.register(psum_scatter_p)
def _psum_scatter_lowering(ctx: LoweringRuleContext, x: str, *, axes: tuple[str, ...], axis_size: int,
                           dimension: int) -> str:
    groups = _groups(ctx, axes)
    region = _reduction_region(ctx, ctx.avals_in[0], "add")
    return ctx.emit(
        f'"stablehlo.reduce_scatter"({x}) <{{{_channel(ctx)}, replica_groups = {_dense_i64(groups)}, '
        f"scatter_dimension = {dimension} : i64, use_global_device_ids}}> {region} : "
        f"({tensor_type(ctx.avals_in[0])}) -> {tensor_type(ctx.avals_out[0])}"
    )


def all_gather(x: Any, axis_name: AxisName, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every device's ``x`` along ``axis_name``, stacked on a new ``axis`` (or, ``tiled``,
    concatenated along ``axis``)."""
    from fcore import tree_util

    axes = _names(axis_name)
    n = axis_size(axes)

    def gather(v: Any, d: int) -> Any:
        if _bound.vmap_traces:
            keep, unbatched = _split_vmap_axes(axes, v)
            if unbatched > 1:  # the same value on every element of a vmap axis
                if keep:
                    raise NotImplementedError("all_gather over a vmap axis and mesh axes together")
                return concatenate([v] * unbatched, d)
        return all_gather_p.bind(v, axes=axes, axis_size=n, dimension=d)

    def one(v: Any) -> Any:
        ndim = np.ndim(v) if not isinstance(v, Array) else v.ndim
        if tiled:
            return gather(v, axis % max(ndim, 1))
        d = axis % (ndim + 1)
        return gather(expand_dims(v, (d,)), d)

    return tree_util.tree_map(one, x)


def psum_scatter(x: Any, axis_name: AxisName, *, scatter_dimension: int = 0, tiled: bool = False) -> Any:
    """``psum`` whose result is split along ``scatter_dimension``: each device keeps its block
    (``tiled``), or its row (the dimension, of the axis size, is dropped)."""
    from fcore import tree_util

    axes = _names(axis_name)
    n = axis_size(axes)

    def one(v: Any) -> Any:
        ndim = v.ndim if isinstance(v, Array) else np.ndim(v)
        d = scatter_dimension % ndim
        if not tiled and v.shape[d] != n:
            raise ValueError(f"psum_scatter: the scattered dimension must equal the axis size {n}, got {v.shape}")
        if _vmap_only("psum_scatter", axes):
            v = _batched_over(v, axes)
        out = psum_scatter_p.bind(v, axes=axes, axis_size=n, dimension=d)
        return out if tiled else squeeze(out, (d,))

    return tree_util.tree_map(one, x)


# -----------------------------------------------------------------------------------------
# all_to_all (tiled)
# -----------------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class AllToAllParams:
    """``all_to_all[axes axis_size split_axis concat_axis]``: split along ``split_axis`` into
    ``axis_size`` blocks, send block ``i`` to device ``i``, concatenate what arrives along
    ``concat_axis``."""

    axes: tuple[str, ...]
    axis_size: int
    split_axis: int
    concat_axis: int


all_to_all_p = Primitive("all_to_all", params=AllToAllParams)


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(x: ShapedArray, *, axes: tuple[str, ...], axis_size: int, split_axis: int,
                              concat_axis: int) -> ShapedArray:
    if x.shape[split_axis] % axis_size:
        raise ValueError(
            f"all_to_all: split_axis {split_axis} of size {x.shape[split_axis]} is not divisible by the axis size "
            f"{axis_size}"
        )
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


@all_to_all_p.def_impl
def _all_to_all_impl(x: Any, **params: Any) -> Any:
    raise _outside_map("all_to_all")


@jvp_rules.register(all_to_all_p)
def _all_to_all_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    return all_to_all_p.bind(primals[0], **params), all_to_all_p.bind(tangents[0], **params)


@transpose_rules.register(all_to_all_p)
def _all_to_all_transpose(ct: Any, x: UndefinedPrimal, *, axes: tuple[str, ...], axis_size: int, split_axis: int,
                          concat_axis: int) -> list[Any]:
    return [all_to_all_p.bind(ct, axes=axes, axis_size=axis_size, split_axis=concat_axis, concat_axis=split_axis)]


@batching_rules.register(all_to_all_p)
def _all_to_all_batching(n: int, vals: list[Any], dims: list[Dim], *, axes: tuple[str, ...], axis_size: int,
                         split_axis: int, concat_axis: int) -> tuple[Any, Dim]:
    d = dims[0]
    assert d is not None
    if any(_processing(a) for a in axes):  # over the vmap axis: element j gets block j of every element
        x = moveaxis(vals[0], d, 0)  # (source i, *shape)
        shape = list(x.shape)
        shape[1 + split_axis : 2 + split_axis] = [n, shape[1 + split_axis] // n]
        x = moveaxis(reshape(x, tuple(shape)), 1 + split_axis, 0)  # (destination j, source i, *blocks)
        x = moveaxis(x, 1, 1 + concat_axis)  # the sources just before the concatenated axis
        shape = list(x.shape)
        shape[1 + concat_axis : 3 + concat_axis] = [shape[1 + concat_axis] * shape[2 + concat_axis]]
        return reshape(x, tuple(shape)), 0
    return all_to_all_p.bind(vals[0], axes=axes, axis_size=axis_size, split_axis=split_axis + (d <= split_axis),
                             concat_axis=concat_axis + (d <= concat_axis)), d


@lowering_rules.register(all_to_all_p)
def _all_to_all_lowering(ctx: LoweringRuleContext, x: str, *, axes: tuple[str, ...], axis_size: int, split_axis: int,
                         concat_axis: int) -> str:
    groups = _groups(ctx, axes)
    return ctx.emit(
        f'"stablehlo.all_to_all"({x}) <{{{_channel(ctx)}, concat_dimension = {concat_axis} : i64, '
        f"replica_groups = {_dense_i64(groups)}, split_count = {axis_size} : i64, "
        f"split_dimension = {split_axis} : i64}}> : ({tensor_type(ctx.avals_in[0])}) -> {tensor_type(ctx.avals_out[0])}"
    )


def all_to_all(x: Any, axis_name: AxisName, split_axis: int, concat_axis: int, *, tiled: bool = False) -> Any:
    """Exchange blocks between the devices along ``axis_name`` (see ``AllToAllParams``). Untiled,
    ``split_axis`` must have the axis size and is replaced by a new ``concat_axis`` of that size."""
    from fcore import tree_util

    axes = _names(axis_name)
    n = axis_size(axes)

    def one(v: Any) -> Any:
        ndim = v.ndim if isinstance(v, Array) else np.ndim(v)
        s, c = split_axis % ndim, concat_axis % ndim
        if _vmap_only("all_to_all", axes):
            v = _batched_over(v, axes)
        if tiled:
            return all_to_all_p.bind(v, axes=axes, axis_size=n, split_axis=s, concat_axis=c)
        if v.shape[s] != n:
            raise ValueError(f"all_to_all: the split axis must equal the axis size {n}, got {v.shape}")
        # New unit axis at c (in the result's numbering, where s is gone): gather into it.
        c_in = c if c < s else c + 1
        w = expand_dims(v, (c_in,))
        s_in = s + (c_in <= s)
        out = all_to_all_p.bind(w, axes=axes, axis_size=n, split_axis=s_in, concat_axis=c_in)
        return squeeze(out, (s_in,))

    return tree_util.tree_map(one, x)


# -----------------------------------------------------------------------------------------
# ppermute
# -----------------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class PpermuteParams:
    """``ppermute[axes perm]``: device ``src`` sends its value to ``dst`` for each pair (others get zeros)."""

    axes: tuple[str, ...]
    perm: tuple[tuple[int, int], ...]


ppermute_p = Primitive("ppermute", params=PpermuteParams)


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x: ShapedArray, *, axes: tuple[str, ...], perm: tuple[tuple[int, int], ...]) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, x.weak_type)


@ppermute_p.def_impl
def _ppermute_impl(x: Any, **params: Any) -> Any:
    raise _outside_map("ppermute")


@jvp_rules.register(ppermute_p)
def _ppermute_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    return ppermute_p.bind(primals[0], **params), ppermute_p.bind(tangents[0], **params)


@transpose_rules.register(ppermute_p)
def _ppermute_transpose(ct: Any, x: UndefinedPrimal, *, axes: tuple[str, ...],
                        perm: tuple[tuple[int, int], ...]) -> list[Any]:
    return [ppermute_p.bind(ct, axes=axes, perm=tuple((d, s) for s, d in perm))]


@batching_rules.register(ppermute_p)
def _ppermute_batching(n: int, vals: list[Any], dims: list[Dim], *, axes: tuple[str, ...],
                       perm: tuple[tuple[int, int], ...]) -> tuple[Any, Dim]:
    d = dims[0]
    assert d is not None
    if any(_processing(a) for a in axes):  # over the vmap axis: element dst gets element src, others zeros
        source = {dst: src for src, dst in perm}
        x = vals[0]
        zeros = full_like(index_in_dim(x, 0, d), 0)
        return concatenate([index_in_dim(x, source[j], d) if j in source else zeros for j in range(n)], d), d
    return ppermute_p.bind(vals[0], axes=axes, perm=perm), d


@lowering_rules.register(ppermute_p)
def _ppermute_lowering(ctx: LoweringRuleContext, x: str, *, axes: tuple[str, ...],
                       perm: tuple[tuple[int, int], ...]) -> str:
    groups = _groups(ctx, axes)
    pairs = np.asarray([[g[s], g[d]] for g in groups for s, d in perm], dtype=np.int64).reshape(-1, 2)
    t = tensor_type(ctx.avals_in[0])
    return ctx.emit(
        f'"stablehlo.collective_permute"({x}) <{{{_channel(ctx)}, source_target_pairs = {_dense_i64(pairs)}}}> : '
        f"({t}) -> {t}"
    )


def ppermute(x: Any, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each device's ``x`` along ``axis_name`` as the (source, destination) pairs say."""
    from fcore import tree_util

    axes = _names(axis_name)
    n = axis_size(axes)
    pairs = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(not 0 <= i < n for i in srcs + dsts):
        raise ValueError(f"ppermute permutation indices must be in [0, {n}), got {perm}.")
    vmap_only = _vmap_only("ppermute", axes)
    return tree_util.tree_map(
        lambda v: ppermute_p.bind(_batched_over(v, axes) if vmap_only else v, axes=axes, perm=pairs), x
    )


# -----------------------------------------------------------------------------------------
# axis_index
# -----------------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class AxisIndexParams:
    """``axis_index[axes]``: this device's (row-major) index along ``axes``."""

    axes: tuple[str, ...]


axis_index_p = Primitive("axis_index", params=AxisIndexParams)


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axes: tuple[str, ...]) -> ShapedArray:
    return ShapedArray((), np.dtype(np.int32))


@axis_index_p.def_impl
def _axis_index_impl(*, axes: tuple[str, ...]) -> Any:
    raise _outside_map("axis_index")


@lowering_rules.register(axis_index_p)
def _axis_index_lowering(ctx: LoweringRuleContext, *, axes: tuple[str, ...]) -> str:
    if not ctx.module.axis_env:
        raise LoweringError(f"axis_index over {axes} outside shard_map/pmap")
    names, sizes = ctx.module.axis_env[-1]
    u32 = "tensor<ui32>"
    pid = ctx.emit(f"stablehlo.partition_id : {u32}")
    total: str | None = None
    for a in axes:
        i = names.index(a)
        stride = math.prod(sizes[i + 1:])
        c_stride = ctx.emit(f"stablehlo.constant dense<{stride}> : {u32}")
        c_size = ctx.emit(f"stablehlo.constant dense<{sizes[i]}> : {u32}")
        q = ctx.emit(f"stablehlo.divide {pid}, {c_stride} : {u32}")
        coord = ctx.emit(f"stablehlo.remainder {q}, {c_size} : {u32}")
        if total is None:
            total = coord
        else:
            c_n = ctx.emit(f"stablehlo.constant dense<{sizes[i]}> : {u32}")
            scaled = ctx.emit(f"stablehlo.multiply {total}, {c_n} : {u32}")
            total = ctx.emit(f"stablehlo.add {scaled}, {coord} : {u32}")
    assert total is not None
    return ctx.emit(f"stablehlo.convert {total} : ({u32}) -> tensor<i32>")


def axis_index(axis_name: AxisName) -> Array:
    """This device's index along ``axis_name`` (an int32 scalar)."""
    axes = _names(axis_name)
    axis_size(axes)
    traces = [_vmap_trace(a) for a in axes]
    if any(t is not None for t in traces):
        if len(axes) != 1:
            raise NotImplementedError("axis_index over a vmap axis together with other axes")
        trace = traces[0]
        assert trace is not None
        with set_current_trace(trace.parent):
            return BatchTracer(trace, np.arange(trace.axis_size, dtype=np.int32), 0)
    out: Array = axis_index_p.bind(axes=axes)
    return out

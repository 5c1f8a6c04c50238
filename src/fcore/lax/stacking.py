"""The primitives JAX 0.10 binds for stacking, splitting and tiling: ``stack``, ``unstack``,
``split`` and ``tile``. Each is linear; its jvp applies it to the tangents, its transpose is its
counterpart (``stack`` <-> ``unstack``, ``split`` -> ``concatenate``, ``tile`` -> a sum over
the copies), and it lowers to StableHLO slices, reshapes and concatenations, as JAX's do.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.lax._base import ArrayLike, NpArray, checked_impl, same_dtypes, shape_of
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, aval_of, bind, hlo_ints, index_tuple
from fcore.lax.reductions import reduce_sum
from fcore.lax.shapes import concatenate, reshape
from fcore.transforms.ad_util import UndefinedPrimal, is_undefined
from fcore.transforms.batching import Dim, batching_rules, bdim_at
from fcore.transforms.jvp import deflinear
from fcore.transforms.transpose import transpose_rules

__all__ = ["split", "split_p", "stack", "stack_p", "tile", "tile_p", "unstack", "unstack_p"]


def _slice_text(ctx: LoweringRuleContext, x: str, a: ShapedArray, axis: int, start: int, stop: int) -> tuple[str, ShapedArray]:
    """``x[..., start:stop, ...]`` along ``axis``, and its type."""
    ranges = ", ".join(f"{start}:{stop}" if i == axis else f"0:{s}" for i, s in enumerate(a.shape))
    typ = a.update(shape=a.shape[:axis] + (stop - start,) + a.shape[axis + 1:], weak_type=False)
    return ctx.op_typed("stablehlo.slice", [f"{x} [{ranges}]"], [a], typ), typ


def _reshape_text(ctx: LoweringRuleContext, x: str, a: ShapedArray, out: ShapedArray) -> str:
    return x if a.shape == out.shape else ctx.op_typed("stablehlo.reshape", [x], [a], out)


# -- stack[axis] ----------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class StackParams:
    """``stack[axis]``: where the new axis (of length the number of operands) goes."""

    axis: int


stack_p = Primitive("stack", params=StackParams)


@stack_p.def_abstract_eval
def _stack_abstract_eval(*xs: ShapedArray, axis: int) -> ShapedArray:
    if not xs:
        raise ValueError("stack expects at least one operand, got 0.")
    if len({x.ndim for x in xs}) != 1:
        raise ValueError("Cannot stack arrays with different numbers of dimensions: got "
                         + ", ".join(str(x.shape) for x in xs) + ".")
    if len({x.shape for x in xs}) != 1:
        raise ValueError("All input arrays must have the same shape. Got " + ", ".join(str(x.shape) for x in xs) + ".")
    if not 0 <= axis <= xs[0].ndim:
        raise ValueError(f"stack: axis {axis} is out of bounds for operands of rank {xs[0].ndim}")
    dt = same_dtypes("stack", xs)
    shape = xs[0].shape
    return shaped_array(shape[:axis] + (len(xs),) + shape[axis:], dt, all(x.weak_type for x in xs))


@checked_impl(stack_p)
def _stack_impl(*xs: NpArray, axis: int) -> NpArray:
    return np.stack(xs, axis=axis)


deflinear(stack_p)


@transpose_rules.register(stack_p)
def _stack_transpose(ct: Array, *xs: Array | UndefinedPrimal, axis: int) -> list[Array | None]:
    pieces = unstack(ct, axis)
    return [piece if is_undefined(x) else None for x, piece in zip(xs, pieces)]


@batching_rules.register(stack_p)
def _stack_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, axis: int) -> tuple[Array, Dim]:
    d = dims[0]
    if d is not None and all(e == d for e in dims):
        return (bind(stack_p, *vals, axis=axis), d + 1) if axis <= d else (bind(stack_p, *vals, axis=axis + 1), d)
    xs = [bdim_at(x, e, axis_size, 0) for x, e in zip(vals, dims)]
    return bind(stack_p, *xs, axis=axis + 1), 0


@lowering_rules.register(stack_p)
def _stack_lowering(ctx: LoweringRuleContext, *xs: str, axis: int) -> str:
    a = ctx.avals_in[0]
    unit = a.update(shape=a.shape[:axis] + (1,) + a.shape[axis:], weak_type=False)
    pieces = [_reshape_text(ctx, x, aval, unit) for x, aval in zip(xs, ctx.avals_in)]
    if len(pieces) == 1:
        return pieces[0]
    return ctx.op_typed("stablehlo.concatenate", pieces, [unit] * len(pieces), ctx.avals_out[0], f", dim = {axis}")


def stack(operands: Sequence[ArrayLike], axis: int = 0) -> Array:
    """The operands (same shape and dtype) joined along a new ``axis`` (``lax.stack``)."""
    if not operands:
        raise ValueError("stack expects at least one operand, got 0.")
    nd = len(shape_of(operands[0]))
    ax = operator.index(axis)
    if not -(nd + 1) <= ax <= nd:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd + 1}")
    return bind(stack_p, *operands, axis=ax % (nd + 1))


# -- unstack[axis] --------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class UnstackParams:
    """``unstack[axis]``: the axis whose slices are the results."""

    axis: int


unstack_p = Primitive("unstack", multiple_results=True, params=UnstackParams)


@unstack_p.def_abstract_eval
def _unstack_abstract_eval(x: ShapedArray, *, axis: int) -> list[ShapedArray]:
    if x.ndim == 0:
        raise ValueError(
            f"unstack requires arrays with rank > 0, however a scalar array of shape {x.shape} was passed.")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"unstack: axis {axis} is out of bounds for an operand of rank {x.ndim}")
    out = x.update(shape=x.shape[:axis] + x.shape[axis + 1:])
    return [out] * x.shape[axis]


@checked_impl(unstack_p)
def _unstack_impl(x: NpArray, *, axis: int) -> list[NpArray]:
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


deflinear(unstack_p)


@transpose_rules.register(unstack_p)
def _unstack_transpose(cts: list[Array], x: UndefinedPrimal, *, axis: int) -> list[Array]:
    return [stack(cts, axis)]


@batching_rules.register(unstack_p)
def _unstack_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, axis: int) -> tuple[list[Array], list[Dim]]:
    (x,), (d,) = vals, dims
    assert d is not None
    inner, out_dim = (axis, d - 1) if axis < d else (axis + 1, d)
    outs: list[Array] = unstack_p.bind(x, axis=inner)
    return outs, [out_dim] * len(outs)


@lowering_rules.register(unstack_p)
def _unstack_lowering(ctx: LoweringRuleContext, x: str, *, axis: int) -> list[str]:
    a = ctx.avals_in[0]
    outs = []
    for i, out in enumerate(ctx.avals_out):
        piece, typ = _slice_text(ctx, x, a, axis, i, i + 1)
        outs.append(_reshape_text(ctx, piece, typ, out.strip_weak_type()))
    return outs


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis`` (``lax.unstack``)."""
    nd = len(shape_of(x))
    ax = operator.index(axis)
    if not -nd <= ax < nd:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd}")
    outs: list[Array] = unstack_p.bind(x, axis=ax % nd)
    return tuple(outs)


# -- split[sizes, axis] ---------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class SplitParams:
    """``split[sizes, axis]``: consecutive pieces of the given sizes along ``axis``."""

    sizes: Shape
    axis: int


split_p = Primitive("split", multiple_results=True, params=SplitParams)


@split_p.def_abstract_eval
def _split_abstract_eval(x: ShapedArray, *, sizes: Shape, axis: int) -> list[ShapedArray]:
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an operand of rank {x.ndim}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(sizes):
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand shape "
                         f"{list(x.shape)}")
    return [x.update(shape=x.shape[:axis] + (s,) + x.shape[axis + 1:]) for s in sizes]


@checked_impl(split_p)
def _split_impl(x: NpArray, *, sizes: Shape, axis: int) -> list[NpArray]:
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


deflinear(split_p)


@transpose_rules.register(split_p)
def _split_transpose(cts: list[Array], x: UndefinedPrimal, *, sizes: Shape, axis: int) -> list[Array]:
    return [concatenate(cts, axis)]


@batching_rules.register(split_p)
def _split_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, sizes: Shape, axis: int,
) -> tuple[list[Array], list[Dim]]:
    (x,), (d,) = vals, dims
    assert d is not None
    outs: list[Array] = split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= d else axis)
    return outs, [d] * len(outs)


@lowering_rules.register(split_p)
def _split_lowering(ctx: LoweringRuleContext, x: str, *, sizes: Shape, axis: int) -> list[str]:
    a = ctx.avals_in[0]
    outs, start = [], 0
    for s in sizes:
        outs.append(_slice_text(ctx, x, a, axis, start, start + s)[0])
        start += s
    return outs


def split(operand: ArrayLike, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """``operand`` cut along ``axis`` into pieces of the given ``sizes`` (``lax.split``)."""
    nd = len(shape_of(operand))
    ax = operator.index(axis)
    if not -nd <= ax < nd:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd}")
    outs: list[Array] = split_p.bind(operand, sizes=index_tuple(sizes), axis=ax % nd)
    return outs


# -- tile[reps] -----------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class TileParams:
    """``tile[reps]``: how many copies of the operand along each axis."""

    reps: Shape


tile_p = Primitive("tile", params=TileParams)


@tile_p.def_abstract_eval
def _tile_abstract_eval(x: ShapedArray, *, reps: Shape) -> ShapedArray:
    if x.ndim != len(reps):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and x.ndim={x.ndim}.")
    return x.update(shape=tuple(r * n for r, n in zip(reps, x.shape)))


@checked_impl(tile_p)
def _tile_impl(x: NpArray, *, reps: Shape) -> NpArray:
    return np.tile(x, reps)


deflinear(tile_p)


@transpose_rules.register(tile_p)
def _tile_transpose(ct: Array, x: Array | UndefinedPrimal, *, reps: Shape) -> list[Array | None]:
    if not is_undefined(x):
        return [None]
    shape = aval_of(x).shape
    copies = reshape(ct, tuple(k for pair in zip(reps, shape) for k in pair))
    return [reduce_sum(copies, tuple(2 * i for i in range(len(shape))))]


@batching_rules.register(tile_p)
def _tile_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, reps: Shape) -> tuple[Array, Dim]:
    (x,), (d,) = vals, dims
    assert d is not None
    return bind(tile_p, x, reps=reps[:d] + (1,) + reps[d:]), d


@lowering_rules.register(tile_p)
def _tile_lowering(ctx: LoweringRuleContext, x: str, *, reps: Shape) -> str:
    a, out = ctx.avals_in[0].strip_weak_type(), ctx.avals_out[0].strip_weak_type()
    expanded = a.update(shape=tuple(k for n in a.shape for k in (1, n)))
    broadcast = a.update(shape=tuple(k for pair in zip(reps, a.shape) for k in pair))
    y = _reshape_text(ctx, x, a, expanded)
    dims = hlo_ints(tuple(range(2 * a.ndim)))
    y = ctx.op_typed("stablehlo.broadcast_in_dim", [y], [expanded], broadcast, f", dims = {dims}")
    return _reshape_text(ctx, y, broadcast, out)


def tile(operand: ArrayLike, reps: Sequence[int]) -> Array:
    """``operand`` repeated ``reps[i]`` times along each axis (``lax.tile``)."""
    return bind(tile_p, operand, reps=index_tuple(reps))

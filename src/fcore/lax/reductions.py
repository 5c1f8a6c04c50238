"""Reductions and cumulative reductions, with JAX's primitives and parameters.

``reduce_*[axes]`` reduce over a set of distinct, non-negative axes; ``argmax/argmin[axes,
index_dtype]`` over exactly one; ``cum*[axis, reverse]`` scan along one axis. As in
``jax.lax``, axes are not normalized here (negative axes are an error): the NumPy layer
normalizes. Results keep the operand's dtype, so integer sums wrap like XLA's.

Each primitive is one block (docs/adding_a_primitive.md); the rules a family shares (one
abstract eval per family, the batching of reductions, the StableHLO reducers, the parallel
prefix scan behind the cumulative jvps) are helpers above the blocks. ``reduce`` and
``associative_scan`` follow the blocks.

XLA's ``max``/``min`` order ``-0.0`` below ``+0.0``; NumPy's ``maximum`` returns either
zero depending on argument order, so the float impls fix up the sign of zero results
(a check that costs one pass over the output when no zero is present).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore import tree_util
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType, DTypeLike
from fcore.lax._base import ArrayLike, NpArray, checked_impl, dtype_of, weak_scalar
from fcore.lax._primitive import Primitive
from fcore.lax._region import BOOL, RegionBody
from fcore.lax.general_reduce import bind_reduce
from fcore.lax.elementwise import (
    abs as lax_abs, add, and_, convert_element_type, div, eq, exp, log1p, mul, ne, neg, or_, select_n, sub, xor,
)
from fcore.lax.elementwise import max as lax_max
from fcore.lax.elementwise import min as lax_min
from fcore.lax.shapes import broadcast_in_dim, concatenate, pad, reshape, rev
from fcore.lax.slicing import slice_in_dim
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import deflinear, defjvp_with_output, defjvp_zero, jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p", "reduce_and_p", "reduce_or_p",
    "reduce_xor_p", "argmax_p", "argmin_p", "cumsum_p", "cumprod_p", "cummax_p", "cummin_p",
    "cumlogsumexp_p", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
    "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
    "cumlogsumexp", "reduce", "associative_scan",
]

Axes = tuple[int, ...]
#: A (value, tangent) pair, or the leaves of a pytree, scanned together by ``_associative_scan``.
Pair = list[Array]
#: Writes the combination of two scalars into a region (``max`` of two complex numbers, ...).
Combiner = Callable[[RegionBody, str, str, ShapedArray], str]

_NUMBER = "int, float, complex"


# -- helpers shared by the blocks: dtype checks and shapes -------------------------------------
def _is_number(dt: DType) -> bool:
    return dtypes.is_integer(dt) or dtypes.is_inexact(dt)


def _is_any(dt: DType) -> bool:
    return True


def _is_logical(dt: DType) -> bool:
    return dtypes.is_integer(dt) or dtypes.is_bool(dt)


def _reduced_shape(name: str, x: ShapedArray, axes: Axes) -> tuple[int, ...]:
    shape = x.shape
    nd = len(shape)
    for a in axes:
        if not 0 <= a < nd:
            raise ValueError(f"{name}: reduction axes {axes} contains out-of-bounds indices for {x.str_short()}.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {axes}")
    if not axes:
        return shape
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _kept_dims(ndim: int, axes: Axes) -> Axes:
    return tuple(i for i in range(ndim) if i not in axes)


def _shift_axes(axes: Axes, bdim: int) -> Axes:
    """Operand axes of the batched value: the logical axes at or after ``bdim`` move up one."""
    return tuple(a + 1 if a >= bdim else a for a in axes)


def _scalar_like(x: Array, value: float) -> Array:
    return weak_scalar(value, get_aval(x).dtype)


# -- helpers shared by the blocks: eager impls -------------------------------------------------
def _fix_zero_sign(out: NpArray, x: NpArray, axes: Axes, positive_wins: bool) -> NpArray:
    """Give zero results XLA's sign: max prefers ``+0.0`` over ``-0.0``, min the reverse."""
    zero = out == 0
    if not zero.any():
        return out
    # A +0.0 (for max) or -0.0 (for min) anywhere in the reduced slice decides the sign.
    hit = (x == 0) & (np.signbit(x) != positive_wins)
    found = np.any(hit, axis=axes)
    signed = np.where(found == positive_wins, np.zeros((), out.dtype), -np.zeros((), out.dtype))
    return np.where(zero, signed, out)


def _identity_max(dt: DType) -> NpArray:
    """The identity of ``max`` (so empty reductions are defined, as in XLA)."""
    if dtypes.is_inexact(dt):
        return np.array(-np.inf, dt)
    if dtypes.is_bool(dt):
        return np.array(False)
    return np.array(np.iinfo(dt).min, dt)


def _identity_min(dt: DType) -> NpArray:
    """The identity of ``min``."""
    if dtypes.is_inexact(dt):
        return np.array(np.inf, dt)
    if dtypes.is_bool(dt):
        return np.array(True)
    return np.array(np.iinfo(dt).max, dt)


def _sum_impl(x: NpArray, axes: Axes) -> NpArray:
    return np.asarray(np.sum(x, axis=axes, dtype=x.dtype))


def _prod_impl(x: NpArray, axes: Axes) -> NpArray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(np.prod(x, axis=axes, dtype=x.dtype))


def _max_impl(x: NpArray, axes: Axes) -> NpArray:
    with np.errstate(invalid="ignore"):
        out = np.asarray(np.maximum.reduce(x, axis=axes, initial=_identity_max(x.dtype)))
    return _fix_zero_sign(out, x, axes, True) if dtypes.is_floating(x.dtype) else out


def _min_impl(x: NpArray, axes: Axes) -> NpArray:
    with np.errstate(invalid="ignore"):
        out = np.asarray(np.minimum.reduce(x, axis=axes, initial=_identity_min(x.dtype)))
    return _fix_zero_sign(out, x, axes, False) if dtypes.is_floating(x.dtype) else out


def _bitwise(ufunc: np.ufunc, identity: int) -> Callable[[NpArray, Axes], NpArray]:
    def impl(x: NpArray, axes: Axes) -> NpArray:
        init = np.array(identity).astype(x.dtype)
        return np.asarray(ufunc.reduce(x, axis=axes, initial=init, dtype=x.dtype))

    return impl


def _fix_cum_zero_sign(out: NpArray, x: NpArray, axis: int, positive_wins: bool) -> NpArray:
    zero = out == 0
    if not zero.any():
        return out
    hit = (x == 0) & (np.signbit(x) != positive_wins)
    found = np.logical_or.accumulate(hit, axis=axis)
    signed = np.where(found == positive_wins, np.zeros((), out.dtype), -np.zeros((), out.dtype))
    return np.where(zero, signed, out)


def _cumsum_impl(x: NpArray, axis: int) -> NpArray:
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod_impl(x: NpArray, axis: int) -> NpArray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.cumprod(x, axis=axis, dtype=x.dtype)


def _cummax_impl(x: NpArray, axis: int) -> NpArray:
    with np.errstate(invalid="ignore"):
        out = np.maximum.accumulate(x, axis=axis)
    return _fix_cum_zero_sign(out, x, axis, True) if dtypes.is_floating(x.dtype) else out


def _cummin_impl(x: NpArray, axis: int) -> NpArray:
    with np.errstate(invalid="ignore"):
        out = np.minimum.accumulate(x, axis=axis)
    return _fix_cum_zero_sign(out, x, axis, False) if dtypes.is_floating(x.dtype) else out


def _cumlogsumexp_impl(x: NpArray, axis: int) -> NpArray:
    wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    return np.logaddexp.accumulate(wide, axis=axis).astype(x.dtype, copy=False)


# -- helpers shared by the blocks: the rules of each family ------------------------------------
def _reduction_abstract_eval(
    name: str, accepts: Callable[[DType], bool], kinds: str, keeps_weak_type: bool = True
) -> Callable[..., ShapedArray]:
    """The type rule of ``reduce_*``. JAX's logical reductions drop the weak type; the others keep it."""

    def rule(x: ShapedArray, *, axes: Axes) -> ShapedArray:
        if not accepts(x.dtype):
            raise TypeError(
                f"{name} does not accept dtype {dtypes.dtype_name(x.dtype)}. Accepted dtype kinds: {kinds}."
            )
        shape = _reduced_shape(name, x, axes)
        weak = x.weak_type and keeps_weak_type
        return x if shape is x.shape and weak == x.weak_type else shaped_array(shape, x.dtype, weak)

    return rule


def _reduction_impl(impl: Callable[[NpArray, Axes], NpArray]) -> Callable[..., NpArray]:
    def rule(x: NpArray, *, axes: Axes) -> NpArray:
        return impl(x, axes) if axes else x

    return rule


def _reduction_batching(prim: Primitive) -> Callable[..., tuple[Array, Dim]]:
    """Reduce over the shifted axes; the batch axis keeps its place among the kept axes."""

    def rule(axis_size: int, vals: list[Array], dims: list[Dim], *, axes: Axes) -> tuple[Array, Dim]:
        (x,), (bdim,) = vals, dims
        assert bdim is not None
        new_axes = _shift_axes(axes, bdim)
        out_dim = _kept_dims(get_aval(x).ndim, new_axes).index(bdim)
        out: Array = prim.bind(x, axes=new_axes)
        return out, out_dim

    return rule


def _reduce_lowering(op: str, identity: Callable[[DType], object], combine: Combiner | None = None) -> Callable[..., str]:
    """``stablehlo.reduce`` with the identity as init; the short form for one-op reducers."""

    def rule(ctx: LoweringRuleContext, x: str, *, axes: Axes) -> str:
        (a,), out = ctx.avals_in, ctx.avals_out[0]
        if not axes:
            return x
        elem = ShapedArray((), a.dtype)
        init = ctx.constant(identity(a.dtype), a.dtype)
        dims = f"across dimensions = [{', '.join(map(str, axes))}]"
        sig = f"({tensor_type(a)}, {tensor_type(elem)}) -> {tensor_type(out)}"
        if combine is None or not dtypes.is_complex(a.dtype):
            return ctx.emit(f"stablehlo.reduce({x} init: {init}) applies {op} {dims} : {sig}")
        body = RegionBody(ctx)
        lhs, rhs = body.name(), body.name()
        result = combine(body, lhs, rhs, elem)
        t = tensor_type(elem)
        region = body.ret([result], [elem])
        return ctx.emit(f"stablehlo.reduce({x} init: {init}) {dims} : {sig}\n"
                        f"     reducer({lhs}: {t}, {rhs}: {t}) {{\n{region}\n    }}")

    return rule


def _zero(dt: DType) -> bool | int:
    return False if dtypes.is_bool(dt) else 0


def _one(dt: DType) -> bool | int:
    return True if dtypes.is_bool(dt) else 1


def _all_ones(dt: DType) -> bool | int:
    return True if dtypes.is_bool(dt) else -1 if dtypes.is_signed_int(dt) else int(np.iinfo(dt).max)


def _max_identity(dt: DType) -> complex | NpArray:
    if dtypes.is_complex(dt):
        return complex(-np.inf, 0)
    return _identity_max(dt)


def _min_identity(dt: DType) -> complex | NpArray:
    if dtypes.is_complex(dt):
        return complex(np.inf, 0)
    return _identity_min(dt)


def _float_neg_inf(dt: DType) -> float:
    return -np.inf


def _simple(op: str) -> Combiner:
    return lambda body, a, b, aval: body.op(op, [a, b], aval)


def _chooser(direction: str, op: str) -> Combiner:
    """``max``/``min`` of two scalars; complex numbers compare lexicographically, as in JAX."""

    def combine(body: RegionBody, a: str, b: str, aval: ShapedArray) -> str:
        if not dtypes.is_complex(aval.dtype):
            return body.op(op, [a, b], aval)
        ra, part = body.part("stablehlo.real", a, aval)
        rb, _ = body.part("stablehlo.real", b, aval)
        real_eq = body.compare("EQ", ra, rb, part)
        real_pick = body.compare(direction, ra, rb, part)
        ia, _ = body.part("stablehlo.imag", a, aval)
        ib, _ = body.part("stablehlo.imag", b, aval)
        imag_pick = body.compare(direction, ia, ib, part)
        pick = body.select(real_eq, imag_pick, real_pick, BOOL)
        return body.select(pick, a, b, aval)

    return combine


def _logaddexp_combiner(body: RegionBody, a: str, b: str, aval: ShapedArray) -> str:
    amax = body.op("stablehlo.maximum", [a, b], aval)
    delta = body.op("stablehlo.subtract", [a, b], aval)
    isnan = body.compare("NE", delta, delta, aval)
    total = body.op("stablehlo.add", [a, b], aval)
    neg_abs = body.op("stablehlo.negate", [body.op("stablehlo.abs", [delta], aval)], aval)
    soft = body.op("stablehlo.add", [amax, body.op("stablehlo.log_plus_one", [body.op("stablehlo.exponential", [neg_abs], aval)], aval)], aval)
    return body.select(isnan, total, soft, aval)


def _reduce_chooser_jvp(g: Array, ans: Array, operand: Array, *, axes: Axes) -> Array:
    """The tangent of ``reduce_max``/``reduce_min`` at the location(s) of the extremum,
    averaged over ties (as JAX)."""
    a = get_aval(operand)
    at_ans = broadcast_in_dim(ans, a.shape, _kept_dims(a.ndim, axes))
    location = convert_element_type(eq(operand, at_ans), get_aval(g).dtype)
    counts = reduce_sum(location, axes)
    return div(reduce_sum(mul(g, location), axes), counts)


def _arg_reduction_abstract_eval(name: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axes: Axes, index_dtype: DType) -> ShapedArray:
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(x.dtype)}: it needs an ordered dtype.")
        if not dtypes.is_integer(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer type, but got {index_dtype}")
        if len(axes) != 1:
            raise ValueError(f"{name} reduces exactly one axis, got axes {axes}")
        (axis,) = axes
        shape = x.shape
        if not 0 <= axis < len(shape):
            raise ValueError(f"{name}: invalid axis {axis} for operand {x.str_short()}")
        if shape[axis] == 0:
            raise ValueError(f"{name} requires a non-empty reduced dimension: operand {x.str_short()}, axis={axis}")
        return shaped_array(shape[:axis] + shape[axis + 1:], index_dtype, False)

    return rule


def _arg_reduction_impl(np_fn: Callable[..., NpArray]) -> Callable[..., NpArray]:
    def rule(x: NpArray, *, axes: Axes, index_dtype: DType) -> NpArray:
        if x.dtype.itemsize < 4 and dtypes.is_floating(x.dtype):
            x = x.astype(np.float32)  # exact; NumPy's arg-reductions for ml_dtypes are not NaN-aware
        # NumPy, like JAX, returns the first NaN (NaN is "largest" and "smallest"), else the first extremum.
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)

    return rule


def _arg_reduction_batching(prim: Primitive) -> Callable[..., tuple[Array, Dim]]:
    """As ``_reduction_batching``, keeping ``index_dtype``."""

    def rule(
        axis_size: int, vals: list[Array], dims: list[Dim], *, axes: Axes, index_dtype: DType
    ) -> tuple[Array, Dim]:
        (x,), (bdim,) = vals, dims
        assert bdim is not None
        new_axes = _shift_axes(axes, bdim)
        out_dim = _kept_dims(get_aval(x).ndim, new_axes).index(bdim)
        out: Array = prim.bind(x, axes=new_axes, index_dtype=index_dtype)
        return out, out_dim

    return rule


def _arg_reduction_lowering(direction: str, identity: Callable[[DType], NpArray]) -> Callable[..., str]:
    """A two-operand reduce of (value, iota index), as JAX: a NaN wins over any number (so the
    first NaN is found), and among equal values the smaller index wins."""

    def rule(ctx: LoweringRuleContext, x: str, *, axes: Axes, index_dtype: DType) -> str:
        (a,), out = ctx.avals_in, ctx.avals_out[0]
        (axis,) = axes
        idx_aval = a.update(dtype=index_dtype, weak_type=False)
        iota = ctx.emit(f"stablehlo.iota dim = {axis} : {tensor_type(idx_aval)}")
        init_x = ctx.constant(identity(a.dtype), a.dtype)
        init_i = ctx.constant(0, index_dtype)
        ve, ie = ShapedArray((), a.dtype), ShapedArray((), index_dtype)
        body = RegionBody(ctx)
        op_v, op_i, acc_v, acc_i = body.name(), body.name(), body.name(), body.name()
        pick_val = body.compare(direction, op_v, acc_v, ve)
        if dtypes.is_inexact(a.dtype):
            pick_val = body.op("stablehlo.or", [pick_val, body.compare("NE", op_v, op_v, ve)], BOOL)
        same = body.compare("EQ", op_v, acc_v, ve)
        first = body.op("stablehlo.and", [same, body.compare("LT", op_i, acc_i, ie)], BOOL)
        pick_idx = body.op("stablehlo.or", [pick_val, first], BOOL)
        val = body.select(pick_val, op_v, acc_v, ve)
        idx = body.select(pick_idx, op_i, acc_i, ie)
        region = body.ret([val, idx], [ve, ie])
        tv, ti = tensor_type(ve), tensor_type(ie)
        red_out = out.update(dtype=a.dtype)
        result = ctx.emit(
            f"stablehlo.reduce({x} init: {init_x}), ({iota} init: {init_i}) across dimensions = [{axis}] : "
            f"({tensor_type(a)}, {tensor_type(idx_aval)}, {tv}, {ti}) -> ({tensor_type(red_out)}, {tensor_type(out)})\n"
            f"     reducer({op_v}: {tv}, {acc_v}: {tv}) ({op_i}: {ti}, {acc_i}: {ti}) {{\n{region}\n    }}",
            n_results=2,
        )
        return f"{result}#1"

    return rule


def _cumulative_abstract_eval(name: str, accepts: Callable[[DType], bool], kinds: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if not accepts(x.dtype):
            raise TypeError(
                f"{name} does not accept dtype {dtypes.dtype_name(x.dtype)}. Accepted dtype kinds: {kinds}."
            )
        if not 0 <= axis < len(x.shape):
            raise ValueError(f"{name}: axis {axis} is out of bounds for operand {x.str_short()}")
        return x

    return rule


def _cumulative_impl(impl: Callable[[NpArray, int], NpArray]) -> Callable[..., NpArray]:
    def rule(x: NpArray, *, axis: int, reverse: bool) -> NpArray:
        if reverse:
            return np.flip(impl(np.flip(x, axis), axis), axis)
        return impl(x, axis)

    return rule


def _cumulative_batching(prim: Primitive) -> Callable[..., tuple[Array, Dim]]:
    def rule(axis_size: int, vals: list[Array], dims: list[Dim], *, axis: int, reverse: bool) -> tuple[Array, Dim]:
        (x,), (bdim,) = vals, dims
        assert bdim is not None
        out: Array = prim.bind(x, axis=axis + 1 if axis >= bdim else axis, reverse=reverse)
        return out, bdim

    return rule


def _cumulative_lowering(identity: Callable[[DType], object], combine: Combiner) -> Callable[..., str]:
    """A ``reduce_window`` whose window spans the whole axis, padded on one side (as JAX)."""

    def rule(ctx: LoweringRuleContext, x: str, *, axis: int, reverse: bool) -> str:
        (a,) = ctx.avals_in
        n = a.shape[axis]
        if n == 0:
            return x
        elem = ShapedArray((), a.dtype)
        init = ctx.constant(identity(a.dtype), a.dtype)
        pads = [[0, 0] for _ in a.shape]
        pads[axis] = [0, n - 1] if reverse else [n - 1, 0]
        window = [1] * a.ndim
        window[axis] = n
        body = RegionBody(ctx)
        lhs, rhs = body.name(), body.name()
        region = body.ret([combine(body, lhs, rhs, elem)], [elem])
        t = tensor_type(elem)
        attributes = (
            f"padding = dense<{pads}> : tensor<{a.ndim}x2xi64>, "
            f"window_dimensions = array<i64: {', '.join(map(str, window))}>, "
            f"window_strides = array<i64: {', '.join(['1'] * a.ndim)}>"
        )
        return ctx.emit(
            f'"stablehlo.reduce_window"({x}, {init}) <{{{attributes}}}> ({{\n'
            f"    ^bb0({lhs}: {t}, {rhs}: {t}):\n{region}\n"
            f"    }}) : ({tensor_type(a)}, {t}) -> {tensor_type(a)}"
        )

    return rule


# Cumulative reductions other than cumsum: as JAX, the jvp of a parallel prefix scan
# (Blelloch) whose combine is the binary op's jvp on (value, tangent) pairs.
def _interleave(a: Array, b: Array, axis: int) -> Array:
    """``[a0, b0, a1, b1, ...]`` along ``axis`` (``a`` has as many or one more elements)."""
    aa, ba = get_aval(a), get_aval(b)
    sa, sb = aa.shape[axis], ba.shape[axis]
    a_pad = [(0, 0, 0)] * aa.ndim
    b_pad = [(0, 0, 0)] * ba.ndim
    a_pad[axis] = (0, 1 if sa == sb else 0, 1)
    b_pad[axis] = (1, 0 if sa == sb else 1, 1)
    op = or_ if dtypes.is_bool(aa.dtype) else add
    return op(pad(a, _scalar_like(a, 0), a_pad), pad(b, _scalar_like(b, 0), b_pad))


def _associative_scan(combine: Callable[[Pair, Pair], Pair], elems: Pair, axis: int, reverse: bool) -> Pair:
    """``lax.associative_scan`` (JAX's algorithm, so ties and rounding follow JAX)."""
    if reverse:
        elems = [rev(e, (axis,)) for e in elems]

    def scan(elems: Pair) -> Pair:
        n = get_aval(elems[0]).shape[axis]
        if n < 2:
            return elems
        reduced = combine(
            [slice_in_dim(e, 0, n - 1, 2, axis) for e in elems], [slice_in_dim(e, 1, n, 2, axis) for e in elems]
        )
        odd = scan(reduced)
        evens = [slice_in_dim(e, 2, n, 2, axis) for e in elems]
        if n % 2 == 0:
            even = combine([slice_in_dim(e, 0, get_aval(e).shape[axis] - 1, 1, axis) for e in odd], evens)
        else:
            even = combine(odd, evens)
        even = [concatenate([slice_in_dim(e, 0, 1, 1, axis), r], axis) for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(elems)
    if reverse:
        out = [rev(e, (axis,)) for e in out]
    return out


def _balanced_eq(x: Array, z: Array, y: Array) -> Array:
    """1 where ``x`` is the result ``z``, 1/2 where ``y`` is too (JAX's tie split)."""
    dt = get_aval(z).dtype
    return div(convert_element_type(eq(x, z), dt), add(_scalar_like(z, 1), convert_element_type(eq(y, z), dt)))


def _mul_pair(a: Pair, b: Pair) -> Pair:
    (x, tx), (y, ty) = a, b
    return [mul(x, y), add(mul(tx, y), mul(x, ty))]


def _chooser_pair(op: Callable[[ArrayLike, ArrayLike], Array]) -> Callable[[Pair, Pair], Pair]:
    def combine(a: Pair, b: Pair) -> Pair:
        (x, tx), (y, ty) = a, b
        z = op(x, y)
        return [z, add(mul(tx, _balanced_eq(x, z, y)), mul(ty, _balanced_eq(y, z, x)))]

    return combine


def _logaddexp(x: Array, y: Array) -> Array:
    """``log(exp(x) + exp(y))`` as ``jax.lax`` computes it (NaN/equal-infinity safe)."""
    amax = lax_max(x, y)
    delta = sub(x, y)
    return select_n(ne(delta, delta), add(amax, log1p(exp(neg(lax_abs(delta))))), add(x, y))


def _replace_inf(x: Array) -> Array:
    zeros = broadcast_in_dim(_scalar_like(x, 0), get_aval(x).shape, ())
    return select_n(eq(x, _scalar_like(x, float("inf"))), x, zeros)


def _logaddexp_pair(a: Pair, b: Pair) -> Pair:
    (x, tx), (y, ty) = a, b
    z = _logaddexp(x, y)
    rz = _replace_inf(z)
    return [z, add(mul(tx, exp(sub(_replace_inf(x), rz))), mul(ty, exp(sub(_replace_inf(y), rz))))]


def _cumulative_jvp(prim: Primitive, combine: Callable[[Pair, Pair], Pair]) -> Callable[..., tuple[Array, Tangent]]:
    def rule(primals: list[Array], tangents: list[Tangent], *, axis: int, reverse: bool) -> tuple[Array, Tangent]:
        (x,), (t,) = primals, tangents
        out: Array = prim.bind(x, axis=axis, reverse=reverse)
        if type(t) is Zero:
            return out, Zero(get_aval(out))
        _, t_out = _associative_scan(combine, [x, instantiate(t)], axis, reverse)
        return out, t_out

    return rule


# -- reduce_sum[axes] -----------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class ReduceParams:
    """``reduce_*[axes]``: the distinct, non-negative axes reduced over (shared by the family)."""

    axes: Axes


reduce_sum_p = Primitive("reduce_sum", params=ReduceParams)
reduce_sum_p.def_abstract_eval(_reduction_abstract_eval("reduce_sum", _is_number, _NUMBER))
checked_impl(reduce_sum_p)(_reduction_impl(_sum_impl))
deflinear(reduce_sum_p)


@transpose_rules.register(reduce_sum_p)
def _reduce_sum_transpose(ct: Array, operand: UndefinedPrimal, *, axes: Axes) -> list[Array]:
    a = operand.aval
    return [broadcast_in_dim(ct, a.shape, _kept_dims(a.ndim, axes))]


batching_rules.register(reduce_sum_p)(_reduction_batching(reduce_sum_p))
lowering_rules.register(reduce_sum_p)(_reduce_lowering("stablehlo.add", _zero))


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Sum over ``axes`` in the operand's dtype (integers wrap, as in XLA)."""
    result: Array = reduce_sum_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- reduce_prod[axes] ----------------------------------------------------------------------
reduce_prod_p = Primitive("reduce_prod", params=ReduceParams)
reduce_prod_p.def_abstract_eval(_reduction_abstract_eval("reduce_prod", _is_number, _NUMBER))
checked_impl(reduce_prod_p)(_reduction_impl(_prod_impl))


@jvp_rules.register(reduce_prod_p, symbolic_zeros=True)
def _reduce_prod_jvp(primals: list[Array], tangents: list[Tangent], *, axes: Axes) -> tuple[Array, Tangent]:
    """JAX's rule: move the reduced axes to the front, flatten them, and multiply halves
    pairwise in a balanced tree carrying (value, tangent) pairs with ``mul``'s jvp.

    Exact where the operand has zeros (no division by the operand): the tangent of a
    product with one zero factor is the tangent of that factor times the others.
    """
    (x,), (t,) = primals, tangents
    out: Array = reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero:
        return out, Zero(get_aval(out))
    t = instantiate(t)
    a = get_aval(x)
    kept = _kept_dims(a.ndim, axes)
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    rest = tuple(a.shape[i] for i in kept)
    if n == 0:
        zero: Array = instantiate(Zero(get_aval(out).strip_weak_type()))
        return out, zero
    perm = tuple(axes) + kept
    xs, ts = reshape(x, (n,) + rest, perm), reshape(t, (n,) + rest, perm)
    while n > 1:
        n1 = (n + 1) // 2
        x1, x2 = slice_in_dim(xs, 0, n1), slice_in_dim(xs, n1, n)
        t1, t2 = slice_in_dim(ts, 0, n1), slice_in_dim(ts, n1, n)
        if n - n1 != n1:  # odd: pad the second half with the identity (its tangent with 0)
            config = [(0, 0, 0)] * (len(rest) + 1)
            config[0] = (0, 1, 0)
            x2, t2 = pad(x2, _scalar_like(x2, 1), config), pad(t2, _scalar_like(t2, 0), config)
        xs, ts = mul(x1, x2), add(mul(t1, x2), mul(x1, t2))
        n = n1
    return out, reshape(ts, rest)


batching_rules.register(reduce_prod_p)(_reduction_batching(reduce_prod_p))
lowering_rules.register(reduce_prod_p)(_reduce_lowering("stablehlo.multiply", _one))


def reduce_prod(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Product over ``axes`` in the operand's dtype."""
    result: Array = reduce_prod_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- reduce_max[axes] -----------------------------------------------------------------------
reduce_max_p = Primitive("reduce_max", params=ReduceParams)
reduce_max_p.def_abstract_eval(_reduction_abstract_eval("reduce_max", _is_any, "bool, int, float, complex"))
checked_impl(reduce_max_p)(_reduction_impl(_max_impl))
defjvp_with_output(reduce_max_p, _reduce_chooser_jvp)
batching_rules.register(reduce_max_p)(_reduction_batching(reduce_max_p))
lowering_rules.register(reduce_max_p)(
    _reduce_lowering("stablehlo.maximum", _max_identity, _chooser("GT", "stablehlo.maximum"))
)


def reduce_max(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Maximum over ``axes``; NaN propagates, complex numbers compare lexicographically."""
    result: Array = reduce_max_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- reduce_min[axes] -----------------------------------------------------------------------
reduce_min_p = Primitive("reduce_min", params=ReduceParams)
reduce_min_p.def_abstract_eval(_reduction_abstract_eval("reduce_min", _is_any, "bool, int, float, complex"))
checked_impl(reduce_min_p)(_reduction_impl(_min_impl))
defjvp_with_output(reduce_min_p, _reduce_chooser_jvp)
batching_rules.register(reduce_min_p)(_reduction_batching(reduce_min_p))
lowering_rules.register(reduce_min_p)(
    _reduce_lowering("stablehlo.minimum", _min_identity, _chooser("LT", "stablehlo.minimum"))
)


def reduce_min(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Minimum over ``axes``; NaN propagates, complex numbers compare lexicographically."""
    result: Array = reduce_min_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- reduce_and[axes] -----------------------------------------------------------------------
reduce_and_p = Primitive("reduce_and", params=ReduceParams)
reduce_and_p.def_abstract_eval(_reduction_abstract_eval("reduce_and", _is_logical, "bool, int", False))
checked_impl(reduce_and_p)(_reduction_impl(_bitwise(np.bitwise_and, -1)))
defjvp_zero(reduce_and_p)
batching_rules.register(reduce_and_p)(_reduction_batching(reduce_and_p))
lowering_rules.register(reduce_and_p)(_reduce_lowering("stablehlo.and", _all_ones))


def reduce_and(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) AND over ``axes``."""
    result: Array = reduce_and_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- reduce_or[axes] ------------------------------------------------------------------------
reduce_or_p = Primitive("reduce_or", params=ReduceParams)
reduce_or_p.def_abstract_eval(_reduction_abstract_eval("reduce_or", _is_logical, "bool, int", False))
checked_impl(reduce_or_p)(_reduction_impl(_bitwise(np.bitwise_or, 0)))
defjvp_zero(reduce_or_p)
batching_rules.register(reduce_or_p)(_reduction_batching(reduce_or_p))
lowering_rules.register(reduce_or_p)(_reduce_lowering("stablehlo.or", _zero))


def reduce_or(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) OR over ``axes``."""
    result: Array = reduce_or_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- reduce_xor[axes] -----------------------------------------------------------------------
reduce_xor_p = Primitive("reduce_xor", params=ReduceParams)
reduce_xor_p.def_abstract_eval(_reduction_abstract_eval("reduce_xor", _is_logical, "bool, int", False))
checked_impl(reduce_xor_p)(_reduction_impl(_bitwise(np.bitwise_xor, 0)))
defjvp_zero(reduce_xor_p)
batching_rules.register(reduce_xor_p)(_reduction_batching(reduce_xor_p))
lowering_rules.register(reduce_xor_p)(_reduce_lowering("stablehlo.xor", _zero))


def reduce_xor(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) XOR over ``axes``."""
    result: Array = reduce_xor_p.bind(operand, axes=tuple(operator.index(a) for a in axes))
    return result


# -- argmax[axes, index_dtype] --------------------------------------------------------------
@attrs.frozen(kw_only=True)
class ArgReduceParams:
    """``argmax/argmin[axes, index_dtype]``: the one axis reduced, and the dtype of the index."""

    axes: Axes
    index_dtype: DType


argmax_p = Primitive("argmax", params=ArgReduceParams)
argmax_p.def_abstract_eval(_arg_reduction_abstract_eval("argmax"))
checked_impl(argmax_p)(_arg_reduction_impl(np.argmax))
defjvp_zero(argmax_p)
batching_rules.register(argmax_p)(_arg_reduction_batching(argmax_p))
lowering_rules.register(argmax_p)(_arg_reduction_lowering("GT", _identity_max))


def argmax(operand: ArrayLike, axis: int, index_dtype: DTypeLike) -> Array:
    """Index of the first maximum along ``axis`` (the first NaN, if any), as ``index_dtype``."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(index_dtype))
    result: Array = argmax_p.bind(operand, axes=(operator.index(axis),), index_dtype=dt)
    return result


# -- argmin[axes, index_dtype] --------------------------------------------------------------
argmin_p = Primitive("argmin", params=ArgReduceParams)
argmin_p.def_abstract_eval(_arg_reduction_abstract_eval("argmin"))
checked_impl(argmin_p)(_arg_reduction_impl(np.argmin))
defjvp_zero(argmin_p)
batching_rules.register(argmin_p)(_arg_reduction_batching(argmin_p))
lowering_rules.register(argmin_p)(_arg_reduction_lowering("LT", _identity_min))


def argmin(operand: ArrayLike, axis: int, index_dtype: DTypeLike) -> Array:
    """Index of the first minimum along ``axis`` (the first NaN, if any), as ``index_dtype``."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(index_dtype))
    result: Array = argmin_p.bind(operand, axes=(operator.index(axis),), index_dtype=dt)
    return result


# -- cumsum[axis, reverse] ------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class CumulativeParams:
    """``cum*[axis, reverse]``: the axis scanned along, from its end when ``reverse``."""

    axis: int
    reverse: bool


cumsum_p = Primitive("cumsum", params=CumulativeParams)
cumsum_p.def_abstract_eval(_cumulative_abstract_eval("cumsum", _is_number, _NUMBER))
checked_impl(cumsum_p)(_cumulative_impl(_cumsum_impl))
deflinear(cumsum_p)


@transpose_rules.register(cumsum_p)
def _cumsum_transpose(ct: Array, operand: UndefinedPrimal, *, axis: int, reverse: bool) -> list[Array]:
    return [cumsum(ct, axis, not reverse)]


batching_rules.register(cumsum_p)(_cumulative_batching(cumsum_p))
lowering_rules.register(cumsum_p)(_cumulative_lowering(_zero, _simple("stablehlo.add")))


def cumsum(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running sum along ``axis`` (from the end when ``reverse``)."""
    result: Array = cumsum_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


# -- cumprod[axis, reverse] -----------------------------------------------------------------
cumprod_p = Primitive("cumprod", params=CumulativeParams)
cumprod_p.def_abstract_eval(_cumulative_abstract_eval("cumprod", _is_number, _NUMBER))
checked_impl(cumprod_p)(_cumulative_impl(_cumprod_impl))
jvp_rules.register(cumprod_p, symbolic_zeros=True)(_cumulative_jvp(cumprod_p, _mul_pair))
batching_rules.register(cumprod_p)(_cumulative_batching(cumprod_p))
lowering_rules.register(cumprod_p)(_cumulative_lowering(_one, _simple("stablehlo.multiply")))


def cumprod(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running product along ``axis`` (from the end when ``reverse``)."""
    result: Array = cumprod_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


# -- cummax[axis, reverse] ------------------------------------------------------------------
cummax_p = Primitive("cummax", params=CumulativeParams)
cummax_p.def_abstract_eval(_cumulative_abstract_eval("cummax", _is_number, _NUMBER))
checked_impl(cummax_p)(_cumulative_impl(_cummax_impl))
jvp_rules.register(cummax_p, symbolic_zeros=True)(_cumulative_jvp(cummax_p, _chooser_pair(lax_max)))
batching_rules.register(cummax_p)(_cumulative_batching(cummax_p))
lowering_rules.register(cummax_p)(_cumulative_lowering(_max_identity, _chooser("GT", "stablehlo.maximum")))


def cummax(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running maximum along ``axis`` (from the end when ``reverse``); NaN propagates."""
    result: Array = cummax_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


# -- cummin[axis, reverse] ------------------------------------------------------------------
cummin_p = Primitive("cummin", params=CumulativeParams)
cummin_p.def_abstract_eval(_cumulative_abstract_eval("cummin", _is_number, _NUMBER))
checked_impl(cummin_p)(_cumulative_impl(_cummin_impl))
jvp_rules.register(cummin_p, symbolic_zeros=True)(_cumulative_jvp(cummin_p, _chooser_pair(lax_min)))
batching_rules.register(cummin_p)(_cumulative_batching(cummin_p))
lowering_rules.register(cummin_p)(_cumulative_lowering(_min_identity, _chooser("LT", "stablehlo.minimum")))


def cummin(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running minimum along ``axis`` (from the end when ``reverse``); NaN propagates."""
    result: Array = cummin_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


# -- cumlogsumexp[axis, reverse] ------------------------------------------------------------
cumlogsumexp_p = Primitive("cumlogsumexp", params=CumulativeParams)
cumlogsumexp_p.def_abstract_eval(_cumulative_abstract_eval("cumlogsumexp", dtypes.is_floating, "float"))
checked_impl(cumlogsumexp_p)(_cumulative_impl(_cumlogsumexp_impl))
jvp_rules.register(cumlogsumexp_p, symbolic_zeros=True)(_cumulative_jvp(cumlogsumexp_p, _logaddexp_pair))
batching_rules.register(cumlogsumexp_p)(_cumulative_batching(cumlogsumexp_p))
lowering_rules.register(cumlogsumexp_p)(_cumulative_lowering(_float_neg_inf, _logaddexp_combiner))


def cumlogsumexp(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running ``log(sum(exp(x)))`` along ``axis`` (floating dtypes)."""
    result: Array = cumlogsumexp_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


# -- conveniences built from the primitives above: reduce (monoids) and associative_scan --------
_MONOID_REDUCERS: dict[object, Callable[[ArrayLike, Sequence[int]], Array]] = {
    add: reduce_sum, mul: reduce_prod, lax_max: reduce_max, lax_min: reduce_min,
    and_: reduce_and, or_: reduce_or, xor: reduce_xor,
}


def _is_weak(x: object) -> bool:
    return get_aval(x).weak_type if isinstance(x, Array) else type(x) in (int, float, complex)


def reduce(
    operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Sequence[int]
) -> Array:
    """``lax.reduce``: for the monoids JAX recognises (``lax.add``, ``mul``, ``max``, ``min`` and
    the bitwise/logical ``and``/``or``/``xor``) one ``reduce_*``, then the initial value
    combined in (a no-op when it is the identity); any other computation, or several
    operands, one general ``reduce`` equation (``fcore.lax.general_reduce``)."""
    flat, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    reducer = _MONOID_REDUCERS.get(computation)
    if reducer is None or len(flat) != 1:
        return tree.unflatten(bind_reduce(flat, inits, computation, init_tree, dimensions))  # type: ignore[no-any-return]
    (x,), (init,) = flat, inits
    out = computation(init, reducer(x, tuple(dimensions)))
    # As JAX's monoid path: one array back (whatever the tree), weak only if both inputs are.
    weak = _is_weak(x) and _is_weak(init)
    return convert_element_type(out, get_aval(out).dtype, weak)


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """``lax.associative_scan``: all prefix combinations of ``elems`` (a pytree of arrays with
    a common length along ``axis``) under the associative ``fn``, in O(log n) parallel steps."""
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan requires at least one array")
    leaves = [x if isinstance(x, Array) else convert_element_type(x, dtype_of(x)) for x in leaves]
    shapes = [get_aval(x).shape for x in leaves]
    ndim = len(shapes[0])
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for arrays of rank {ndim}")
    ax %= ndim
    if len({s[ax] for s in shapes}) != 1:
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: {shapes})")

    def combine(a: Pair, b: Pair) -> Pair:
        out_leaves, out_tree = tree_util.tree_flatten(fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems ({tree}), got {out_tree}")
        return list(out_leaves)

    return tree_util.tree_unflatten(tree, _associative_scan(combine, list(leaves), ax, bool(reverse)))

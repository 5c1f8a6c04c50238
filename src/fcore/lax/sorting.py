"""Sorting: ``sort[dimension, is_stable, num_keys]``, JAX's variadic sort primitive.

``sort`` reorders several same-shaped operands along ``dimension`` by the lexicographic order
of the first ``num_keys`` of them (the others follow the permutation). The order is JAX's:
``-0.0`` and ``0.0`` are equal, every NaN is larger than every number (so NaNs go last),
complex numbers compare by real part, then imaginary part, and ``False < True``. The eager
impl and the XLA comparator implement that same order, and both sort stably.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.transforms.batching import batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType
from fcore.lax._primitive import Primitive
from fcore.lax._base import ArrayLike, checked_impl

NpArray = np.ndarray[Any, Any]

__all__ = ["sort_p", "top_k_p", "sort", "sort_key_val", "top_k"]

sort_p = Primitive("sort", multiple_results=True, param_names=("dimension", "is_stable", "num_keys"))


@sort_p.def_abstract_eval
def _sort_abstract_eval(*operands: ShapedArray, dimension: int, is_stable: bool, num_keys: int) -> list[ShapedArray]:
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    for a in operands[1:]:
        if a.shape != shape:
            raise TypeError(
                "sort requires all operands to have the same shape, got "
                + ", ".join(b.str_short() for b in operands)
            )
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of operands ({len(operands)})")
    return list(operands)


def _sort_key(x: NpArray) -> list[NpArray]:
    """NumPy keys (least significant last) that order ``x`` as the XLA comparator does."""
    if dtypes.is_complex(x.dtype):
        return [*_sort_key(np.real(x)), *_sort_key(np.imag(x))]
    if dtypes.is_floating(x.dtype):
        wide = x.astype(np.float64)
        wide = np.where(wide == 0, 0.0, wide)  # -0.0 == 0.0
        return [np.isnan(wide), np.where(np.isnan(wide), 0.0, wide)]
    return [x]


@checked_impl(sort_p)
def _sort_impl(*operands: NpArray, dimension: int, is_stable: bool, num_keys: int) -> list[NpArray]:
    keys: list[NpArray] = []
    for k in operands[:num_keys]:
        keys.extend(_sort_key(np.moveaxis(k, dimension, -1)))
    # np.lexsort sorts by its last key first, and is stable.
    perm = np.lexsort(keys[::-1], axis=-1) if keys[0].size else np.zeros(keys[0].shape, np.intp)
    perm = np.moveaxis(perm, -1, dimension)
    return [np.take_along_axis(x, perm, axis=dimension) for x in operands]


def sort(operand: ArrayLike | Sequence[ArrayLike], dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Any:
    """``lax.sort``: one operand gives one sorted array; a sequence gives a tuple, ordered by
    the first ``num_keys`` operands."""
    if isinstance(operand, (list, tuple)):
        ops = list(operand)
        if not ops:
            raise TypeError("sort requires at least one operand")
        dim = _normalize_dimension(dimension, _ndim(ops[0]))
        return tuple(sort_p.bind(*ops, dimension=dim, is_stable=bool(is_stable), num_keys=operator.index(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must be 1 for a single operand.")
    single = cast(ArrayLike, operand)  # a sequence operand is a list or tuple, handled above
    dim = _normalize_dimension(dimension, _ndim(single))
    (out,) = sort_p.bind(single, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return out


def sort_key_val(keys: ArrayLike, values: ArrayLike, dimension: int = -1, is_stable: bool = True) -> tuple[Array, Array]:
    """``lax.sort_key_val``: ``values`` reordered along with the sorted ``keys``."""
    dim = _normalize_dimension(dimension, _ndim(keys))
    k, v = sort_p.bind(keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v


def _ndim(x: ArrayLike) -> int:
    return len(x.shape) if isinstance(x, (Array, np.ndarray, np.generic)) else 0


def _normalize_dimension(dimension: int, ndim: int) -> int:
    d = operator.index(dimension)
    if not -ndim <= d < ndim:
        raise ValueError(f"sort: dimension {d} is out of bounds for an operand of rank {ndim}")
    return d % ndim


# ======================================================================================
# Transformation rules (used by the tracing front end and the jaxpr passes alike).
# ======================================================================================
from fcore.interpreters.eval import get_aval  # noqa: E402
from fcore.lax.structural import (  # noqa: E402
    GatherDimensionNumbers, broadcast_in_dim, broadcasted_iota, concatenate, gather,
)
from fcore.transforms.ad_util import Zero  # noqa: E402
from fcore.transforms.batching import Dim, moveaxis  # noqa: E402


def _index_dtype(n: int) -> DType:
    return dtypes.int32 if n < np.iinfo(np.int32).max else dtypes.int64


def take_along(x: Any, perm: Any, dimension: int) -> Any:
    """``x`` indexed along ``dimension`` by the index array ``perm`` (``x``'s shape except,
    maybe, along ``dimension``): one gather with an index per element, as ``x[idx]`` with
    broadcast iotas does in JAX."""
    shape = get_aval(perm).shape
    nd = len(shape)
    idt = get_aval(perm).dtype
    cols = [
        broadcast_in_dim(perm if d == dimension else broadcasted_iota(idt, shape, d), (*shape, 1), tuple(range(nd)))
        for d in range(nd)
    ]
    idx = cols[0] if nd == 1 else concatenate(cols, nd)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(nd)), start_index_map=tuple(range(nd)))
    return gather(x, idx, dnums, (1,) * nd, indices_are_sorted=False, unique_indices=True, mode="promise_in_bounds")


def _sort_jvp(primals: list[Any], tangents: list[Any], *, dimension: int, is_stable: bool, num_keys: int) -> tuple[Any, Any]:
    """JAX's rule: sort an iota along, then gather each tangent with the permutation."""
    shape = get_aval(primals[0]).shape
    iota = broadcasted_iota(_index_dtype(shape[dimension]), shape, dimension)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    touts = [t if type(t) is Zero else take_along(t, perm, dimension) for t in tangents]
    return outs, touts


jvp_rules.register(sort_p, symbolic_zeros=True)(_sort_jvp)


def _sort_batching(axis_size: int, vals: list[Any], dims: list[Dim], *, dimension: int, is_stable: bool,
                   num_keys: int) -> tuple[Any, Any]:
    """Unbatched operands are broadcast to the batched ones' shape (sort needs equal shapes)."""
    proto, bdim = next((v, d) for v, d in zip(vals, dims) if d is not None)
    shape = get_aval(proto).shape
    args = []
    for v, d in zip(vals, dims):
        if d is None:
            kept = tuple(i for i in range(len(shape)) if i != bdim)
            args.append(broadcast_in_dim(v, shape, kept))
        else:
            args.append(moveaxis(v, d, bdim))
    new_dim = dimension + (1 if bdim <= dimension else 0)
    outs = sort_p.bind(*args, dimension=new_dim, is_stable=is_stable, num_keys=num_keys)
    return outs, [bdim] * len(outs)


batching_rules.register(sort_p)(_sort_batching)


# -- lowering (StableHLO text) ---------------------------------------------------------------
from fcore.backend.lowering import LoweringRuleContext, tensor_type  # noqa: E402
from fcore.lax.reductions import _Body  # noqa: E402

_BOOL = ShapedArray((), dtypes.bool_)


def _compare_type(dt: DType) -> str:
    if dtypes.is_inexact(dt):
        return "FLOAT"
    return "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"


def _less_and_equal(body: _Body, x: str, y: str, aval: ShapedArray) -> tuple[str, str]:
    """``(x < y, x == y)`` in JAX's sort order (NaNs equal and last, ``-0.0 == 0.0``)."""
    if dtypes.is_complex(aval.dtype):
        xr, part = body.part("stablehlo.real", x, aval)
        yr, _ = body.part("stablehlo.real", y, aval)
        xi, _ = body.part("stablehlo.imag", x, aval)
        yi, _ = body.part("stablehlo.imag", y, aval)
        lt_r, eq_r = _less_and_equal(body, xr, yr, part)
        lt_i, eq_i = _less_and_equal(body, xi, yi, part)
        lt = body.op("stablehlo.or", [lt_r, body.op("stablehlo.and", [eq_r, lt_i], _BOOL)], _BOOL)
        return lt, body.op("stablehlo.and", [eq_r, eq_i], _BOOL)
    ct = _compare_type(aval.dtype)
    t = tensor_type(aval)

    def cmp(direction: str, a: str, b: str) -> str:
        return body.emit(f"stablehlo.compare {direction}, {a}, {b}, {ct} : ({t}, {t}) -> tensor<i1>")

    if not dtypes.is_floating(aval.dtype):
        return cmp("LT", x, y), cmp("EQ", x, y)
    x_nan, y_nan = cmp("NE", x, x), cmp("NE", y, y)
    x_num = body.op("stablehlo.not", [x_nan], _BOOL)
    lt = body.op("stablehlo.or", [cmp("LT", x, y), body.op("stablehlo.and", [x_num, y_nan], _BOOL)], _BOOL)
    eq = body.op("stablehlo.or", [cmp("EQ", x, y), body.op("stablehlo.and", [x_nan, y_nan], _BOOL)], _BOOL)
    return lt, eq


def _sort_lowering(ctx: LoweringRuleContext, *operands: str, dimension: int, is_stable: bool, num_keys: int) -> list[str]:
    avals = ctx.avals_in
    body = _Body(ctx)
    args: list[tuple[str, str, ShapedArray]] = []
    for a in avals:
        elem = ShapedArray((), a.dtype)
        args.append((body.name(), body.name(), elem))
    # Lexicographic: lt_0 or (eq_0 and (lt_1 or (eq_1 and ...))), built from the last key.
    result: str | None = None
    for x, y, elem in reversed(args[:num_keys]):
        lt, eq = _less_and_equal(body, x, y, elem)
        result = lt if result is None else body.op(
            "stablehlo.or", [lt, body.op("stablehlo.and", [eq, result], _BOOL)], _BOOL
        )
    assert result is not None
    region = body.ret([result], [_BOOL])
    block_args = ", ".join(f"{x}: {tensor_type(e)}, {y}: {tensor_type(e)}" for x, y, e in args)
    types_in = ", ".join(tensor_type(a) for a in avals)
    stable = "true" if is_stable else "false"
    name = ctx.emit(
        f'"stablehlo.sort"({", ".join(operands)}) <{{dimension = {dimension} : i64, is_stable = {stable}}}> ({{\n'
        f"    ^bb0({block_args}):\n{region}\n"
        f"    }}) : ({types_in}) -> ({types_in})",
        n_results=len(avals),
    )
    return [name] if len(avals) == 1 else [f"{name}#{i}" for i in range(len(avals))]


lowering_rules.register(sort_p)(_sort_lowering)


# -- top_k[k, axis] ---------------------------------------------------------------------------
top_k_p = Primitive("top_k", multiple_results=True, param_names=("k", "axis"))


@top_k_p.def_abstract_eval
def _top_k_abstract_eval(x: ShapedArray, *, k: int, axis: int) -> list[ShapedArray]:
    if dtypes.is_complex(x.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if not x.shape:
        raise TypeError("top_k operand must have >= 1 dimension, got a scalar")
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"top_k: axis {axis} is out of bounds for operand {x.str_short()}")
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(
            f"k argument to top_k must be nonnegative and at most the size of axis {axis} ({x.shape[axis]}), got {k}"
        )
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, dtypes.int32)]


def _total_order_key(x: NpArray) -> NpArray:
    """Integers ordered as XLA's TopK orders ``x``: IEEE total order for floats
    (``-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN``)."""
    if dtypes.is_bool(x.dtype):
        return x.astype(np.uint8)
    if not dtypes.is_floating(x.dtype):
        return x
    bits: NpArray = x.view(np.dtype(f"int{8 * x.dtype.itemsize}"))
    flip: NpArray = (bits >> (8 * x.dtype.itemsize - 1)) & np.iinfo(bits.dtype).max
    return bits ^ flip


@checked_impl(top_k_p)
def _top_k_impl(x: NpArray, *, k: int, axis: int) -> list[NpArray]:
    key = np.moveaxis(_total_order_key(x), axis, -1)
    order = np.argsort(~key, axis=-1, kind="stable")[..., :k]  # ~key reverses the order
    idx = np.moveaxis(order, -1, axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]


def top_k(operand: ArrayLike, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """``lax.top_k``: the ``k`` largest entries along ``axis`` and their int32 indices, largest
    first (IEEE total order: NaN first, ``0.0`` before ``-0.0``); ties keep the lower index first."""
    ax = _normalize_dimension(axis, _ndim(operand))
    vals, idx = top_k_p.bind(operand, k=operator.index(k), axis=ax)
    return vals, idx


def _top_k_jvp(primals: list[Any], tangents: list[Any], *, k: int, axis: int) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    vals, idx = top_k_p.bind(x, k=k, axis=axis)
    if type(t) is Zero:
        return [vals, idx], [Zero(get_aval(vals)), Zero(get_aval(idx))]
    return [vals, idx], [take_along(t, idx, axis), Zero(get_aval(idx))]


jvp_rules.register(top_k_p, symbolic_zeros=True)(_top_k_jvp)


def _top_k_batching(axis_size: int, vals: list[Any], dims: list[Dim], *, k: int, axis: int) -> tuple[Any, Any]:
    (x,), (bdim,) = vals, dims
    assert bdim is not None
    outs = top_k_p.bind(x, k=k, axis=axis + (1 if bdim <= axis else 0))
    return outs, [bdim, bdim]


batching_rules.register(top_k_p)(_top_k_batching)


def _top_k_lowering(ctx: LoweringRuleContext, x: str, *, k: int, axis: int) -> list[str]:
    """``chlo.top_k`` works on the last axis: transpose ``axis`` there and back, as JAX."""
    (a,) = ctx.avals_in
    vals_aval, idx_aval = ctx.avals_out
    last = a.ndim - 1
    perm = list(range(a.ndim))
    perm[axis], perm[last] = perm[last], perm[axis]

    def swap(aval: ShapedArray) -> ShapedArray:
        return aval.update(shape=tuple(aval.shape[p] for p in perm))

    def transpose(v: str, aval: ShapedArray) -> str:
        attrs = f", dims = [{', '.join(map(str, perm))}]"
        return ctx.op_typed("stablehlo.transpose", [v], [aval], swap(aval), attrs)

    operand = x if axis == last else transpose(x, a)
    in_aval = a if axis == last else swap(a)
    out_v = vals_aval if axis == last else swap(vals_aval)
    out_i = idx_aval if axis == last else swap(idx_aval)
    name = ctx.emit(
        f"chlo.top_k({operand}, k = {k}) : {tensor_type(in_aval)} -> ({tensor_type(out_v)}, {tensor_type(out_i)})",
        n_results=2,
    )
    if axis == last:
        return [f"{name}#0", f"{name}#1"]
    return [transpose(f"{name}#0", out_v), transpose(f"{name}#1", out_i)]


lowering_rules.register(top_k_p)(_top_k_lowering)

"""Reductions and cumulative reductions, with JAX's primitives and parameters.

``reduce_*[axes]`` reduce over a set of distinct, non-negative axes; ``argmax/argmin[axes,
index_dtype]`` over exactly one; ``cum*[axis, reverse]`` scan along one axis. As in
``jax.lax``, axes are not normalized here (negative axes are an error): the NumPy layer
normalizes. Results keep the operand's dtype, so integer sums wrap like XLA's.

XLA's ``max``/``min`` order ``-0.0`` below ``+0.0``; NumPy's ``maximum`` returns either
zero depending on argument order, so the float impls fix up the sign of zero results
(a check that costs one pass over the output when no zero is present).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.transforms.batching import batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax._base import ArrayLike, checked_impl

NpArray = np.ndarray[Any, Any]
Axes = tuple[int, ...]

__all__ = [
    "reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p", "reduce_and_p", "reduce_or_p",
    "reduce_xor_p", "argmax_p", "argmin_p", "cumsum_p", "cumprod_p", "cummax_p", "cummin_p",
    "cumlogsumexp_p", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
    "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
    "cumlogsumexp", "reduce", "associative_scan",
]

_NUMBER = "int, float, complex"


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


def _reduction(
    name: str,
    accepts: Callable[[DType], bool],
    kinds: str,
    impl: Callable[[NpArray, Axes], NpArray],
    keeps_weak_type: bool = True,
) -> Primitive:
    """A ``reduce_*[axes]`` primitive. JAX's logical reductions drop the weak type; the others keep it."""
    p = Primitive(name, param_names=("axes",))

    @p.def_abstract_eval
    def _abstract_eval(x: ShapedArray, *, axes: Axes) -> ShapedArray:
        if not accepts(x.dtype):
            raise TypeError(
                f"{name} does not accept dtype {dtypes.dtype_name(x.dtype)}. Accepted dtype kinds: {kinds}."
            )
        shape = _reduced_shape(name, x, axes)
        weak = x.weak_type and keeps_weak_type
        return x if shape is x.shape and weak == x.weak_type else shaped_array(shape, x.dtype, weak)

    @checked_impl(p)
    def _impl(x: NpArray, *, axes: Axes) -> NpArray:
        return impl(x, axes) if axes else x

    return p


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


reduce_sum_p = _reduction("reduce_sum", _is_number, _NUMBER, _sum_impl)
reduce_prod_p = _reduction("reduce_prod", _is_number, _NUMBER, _prod_impl)
reduce_max_p = _reduction("reduce_max", _is_any, "bool, int, float, complex", _max_impl)
reduce_min_p = _reduction("reduce_min", _is_any, "bool, int, float, complex", _min_impl)
reduce_and_p = _reduction("reduce_and", _is_logical, "bool, int", _bitwise(np.bitwise_and, -1), False)
reduce_or_p = _reduction("reduce_or", _is_logical, "bool, int", _bitwise(np.bitwise_or, 0), False)
reduce_xor_p = _reduction("reduce_xor", _is_logical, "bool, int", _bitwise(np.bitwise_xor, 0), False)


def _axes(axes: Sequence[int]) -> Axes:
    return tuple(operator.index(a) for a in axes)


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Sum over ``axes`` in the operand's dtype (integers wrap, as in XLA)."""
    result: Array = reduce_sum_p.bind(operand, axes=_axes(axes))
    return result


def reduce_prod(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Product over ``axes`` in the operand's dtype."""
    result: Array = reduce_prod_p.bind(operand, axes=_axes(axes))
    return result


def reduce_max(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Maximum over ``axes``; NaN propagates, complex numbers compare lexicographically."""
    result: Array = reduce_max_p.bind(operand, axes=_axes(axes))
    return result


def reduce_min(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Minimum over ``axes``; NaN propagates, complex numbers compare lexicographically."""
    result: Array = reduce_min_p.bind(operand, axes=_axes(axes))
    return result


def reduce_and(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) AND over ``axes``."""
    result: Array = reduce_and_p.bind(operand, axes=_axes(axes))
    return result


def reduce_or(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) OR over ``axes``."""
    result: Array = reduce_or_p.bind(operand, axes=_axes(axes))
    return result


def reduce_xor(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise (for bool: logical) XOR over ``axes``."""
    result: Array = reduce_xor_p.bind(operand, axes=_axes(axes))
    return result


# -- argmax / argmin[axes, index_dtype] -----------------------------------------------------
def _arg_reduction(name: str, np_fn: Callable[..., Any]) -> Primitive:
    p = Primitive(name, param_names=("axes", "index_dtype"))

    @p.def_abstract_eval
    def _abstract_eval(x: ShapedArray, *, axes: Axes, index_dtype: DType) -> ShapedArray:
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

    @checked_impl(p)
    def _impl(x: NpArray, *, axes: Axes, index_dtype: DType) -> NpArray:
        if x.dtype.itemsize < 4 and dtypes.is_floating(x.dtype):
            x = x.astype(np.float32)  # exact; NumPy's arg-reductions for ml_dtypes are not NaN-aware
        # NumPy, like JAX, returns the first NaN (NaN is "largest" and "smallest"), else the first extremum.
        return np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)

    return p


argmax_p = _arg_reduction("argmax", np.argmax)
argmin_p = _arg_reduction("argmin", np.argmin)


def argmax(operand: ArrayLike, axis: int, index_dtype: Any) -> Array:
    """Index of the first maximum along ``axis`` (the first NaN, if any), as ``index_dtype``."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(index_dtype))
    result: Array = argmax_p.bind(operand, axes=(operator.index(axis),), index_dtype=dt)
    return result


def argmin(operand: ArrayLike, axis: int, index_dtype: Any) -> Array:
    """Index of the first minimum along ``axis`` (the first NaN, if any), as ``index_dtype``."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(index_dtype))
    result: Array = argmin_p.bind(operand, axes=(operator.index(axis),), index_dtype=dt)
    return result


# -- cumulative reductions[axis, reverse] ---------------------------------------------------
def _cumulative(
    name: str, accepts: Callable[[DType], bool], kinds: str, impl: Callable[[NpArray, int], NpArray]
) -> Primitive:
    p = Primitive(name, param_names=("axis", "reverse"))

    @p.def_abstract_eval
    def _abstract_eval(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if not accepts(x.dtype):
            raise TypeError(
                f"{name} does not accept dtype {dtypes.dtype_name(x.dtype)}. Accepted dtype kinds: {kinds}."
            )
        if not 0 <= axis < len(x.shape):
            raise ValueError(f"{name}: axis {axis} is out of bounds for operand {x.str_short()}")
        return x

    @checked_impl(p)
    def _impl(x: NpArray, *, axis: int, reverse: bool) -> NpArray:
        if reverse:
            return np.flip(impl(np.flip(x, axis), axis), axis)
        return impl(x, axis)

    return p


def _cumsum_impl(x: NpArray, axis: int) -> NpArray:
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod_impl(x: NpArray, axis: int) -> NpArray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.cumprod(x, axis=axis, dtype=x.dtype)


def _fix_cum_zero_sign(out: NpArray, x: NpArray, axis: int, positive_wins: bool) -> NpArray:
    zero = out == 0
    if not zero.any():
        return out
    hit = (x == 0) & (np.signbit(x) != positive_wins)
    found = np.logical_or.accumulate(hit, axis=axis)
    signed = np.where(found == positive_wins, np.zeros((), out.dtype), -np.zeros((), out.dtype))
    return np.where(zero, signed, out)


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


cumsum_p = _cumulative("cumsum", _is_number, _NUMBER, _cumsum_impl)
cumprod_p = _cumulative("cumprod", _is_number, _NUMBER, _cumprod_impl)
cummax_p = _cumulative("cummax", _is_number, _NUMBER, _cummax_impl)
cummin_p = _cumulative("cummin", _is_number, _NUMBER, _cummin_impl)
cumlogsumexp_p = _cumulative("cumlogsumexp", dtypes.is_floating, "float", _cumlogsumexp_impl)


def cumsum(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running sum along ``axis`` (from the end when ``reverse``)."""
    result: Array = cumsum_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


def cumprod(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running product along ``axis`` (from the end when ``reverse``)."""
    result: Array = cumprod_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


def cummax(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running maximum along ``axis`` (from the end when ``reverse``); NaN propagates."""
    result: Array = cummax_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


def cummin(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running minimum along ``axis`` (from the end when ``reverse``); NaN propagates."""
    result: Array = cummin_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


def cumlogsumexp(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running ``log(sum(exp(x)))`` along ``axis`` (floating dtypes)."""
    result: Array = cumlogsumexp_p.bind(operand, axis=operator.index(axis), reverse=bool(reverse))
    return result


# ======================================================================================
# Transformation rules. Each is written once and used by both the tracing front end
# and the jaxpr passes (fcore.transforms).
# ======================================================================================
from fcore.interpreters.eval import get_aval  # noqa: E402
from fcore.lax._base import weak_scalar  # noqa: E402
from fcore.lax.elementwise import (  # noqa: E402
    abs as _abs, add as _add, convert_element_type as _convert, div as _div, eq as _eq, exp as _exp,
    log1p as _log1p, max as _max, min as _min, mul as _mul, ne as _ne, neg as _neg, or_ as _or,
    select_n as _select_n, sub as _sub,
)
from fcore.lax.structural import (  # noqa: E402
    broadcast_in_dim as _broadcast_in_dim, concatenate as _concatenate, pad as _pad, reshape as _reshape,
    rev as _rev, slice_in_dim as _slice_in_dim,
)
from fcore.transforms.ad_util import UndefinedPrimal, Zero, instantiate, is_undefined  # noqa: E402
from fcore.transforms.batching import Dim  # noqa: E402
from fcore.transforms.jvp import deflinear, defjvp_with_output, defjvp_zero  # noqa: E402


def _aval(x: Any) -> ShapedArray:
    return x.aval if isinstance(x, UndefinedPrimal) else get_aval(x)


def _kept_dims(ndim: int, axes: Axes) -> Axes:
    return tuple(i for i in range(ndim) if i not in axes)


def _scalar_like(x: Any, value: float) -> Array:
    return weak_scalar(value, _aval(x).dtype)


# -- jvp rules -----------------------------------------------------------------------------
deflinear(reduce_sum_p)
deflinear(cumsum_p)
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p, argmax_p, argmin_p):
    defjvp_zero(_p)


def _reduce_chooser_jvp(g: Any, ans: Any, operand: Any, *, axes: Axes) -> Any:
    """The tangent at the location(s) of the extremum, averaged over ties (as JAX)."""
    a = _aval(operand)
    at_ans = _broadcast_in_dim(ans, a.shape, _kept_dims(a.ndim, axes))
    location = _convert(_eq(operand, at_ans), _aval(g).dtype)
    counts = reduce_sum(location, axes)
    return _div(reduce_sum(_mul(g, location), axes), counts)


defjvp_with_output(reduce_max_p, _reduce_chooser_jvp)
defjvp_with_output(reduce_min_p, _reduce_chooser_jvp)


def _reduce_prod_jvp(primals: list[Any], tangents: list[Any], *, axes: Axes) -> tuple[Any, Any]:
    """JAX's rule: move the reduced axes to the front, flatten them, and multiply halves
    pairwise in a balanced tree carrying (value, tangent) pairs with ``mul``'s jvp.

    Exact where the operand has zeros (no division by the operand): the tangent of a
    product with one zero factor is the tangent of that factor times the others.
    """
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero:
        return out, Zero(get_aval(out))
    t = instantiate(t)
    a = _aval(x)
    kept = _kept_dims(a.ndim, axes)
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    rest = tuple(a.shape[i] for i in kept)
    if n == 0:
        return out, instantiate(Zero(get_aval(out).strip_weak_type()))
    perm = tuple(axes) + kept
    xs, ts = _reshape(x, (n,) + rest, perm), _reshape(t, (n,) + rest, perm)
    while n > 1:
        n1 = (n + 1) // 2
        x1, x2 = _slice_in_dim(xs, 0, n1), _slice_in_dim(xs, n1, n)
        t1, t2 = _slice_in_dim(ts, 0, n1), _slice_in_dim(ts, n1, n)
        if n - n1 != n1:  # odd: pad the second half with the identity (its tangent with 0)
            config = [(0, 0, 0)] * (len(rest) + 1)
            config[0] = (0, 1, 0)
            x2, t2 = _pad(x2, _scalar_like(x2, 1), config), _pad(t2, _scalar_like(t2, 0), config)
        xs, ts = _mul(x1, x2), _add(_mul(t1, x2), _mul(x1, t2))
        n = n1
    return out, _reshape(ts, rest)


jvp_rules.register(reduce_prod_p, symbolic_zeros=True)(_reduce_prod_jvp)


# Cumulative reductions other than cumsum: as JAX, the jvp of a parallel prefix scan
# (Blelloch) whose combine is the binary op's jvp on (value, tangent) pairs.
Pair = list[Any]


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """``[a0, b0, a1, b1, ...]`` along ``axis`` (``a`` has as many or one more elements)."""
    sa, sb = _aval(a).shape[axis], _aval(b).shape[axis]
    a_pad = [(0, 0, 0)] * _aval(a).ndim
    b_pad = [(0, 0, 0)] * _aval(b).ndim
    a_pad[axis] = (0, 1 if sa == sb else 0, 1)
    b_pad[axis] = (1, 0 if sa == sb else 1, 1)
    op = _or if dtypes.is_bool(_aval(a).dtype) else _add
    return op(_pad(a, _scalar_like(a, 0), a_pad), _pad(b, _scalar_like(b, 0), b_pad))


def _associative_scan(combine: Callable[[Pair, Pair], Pair], elems: Pair, axis: int, reverse: bool) -> Pair:
    """``lax.associative_scan`` (JAX's algorithm, so ties and rounding follow JAX)."""
    if reverse:
        elems = [_rev(e, (axis,)) for e in elems]

    def scan(elems: Pair) -> Pair:
        n = _aval(elems[0]).shape[axis]
        if n < 2:
            return elems
        reduced = combine(
            [_slice_in_dim(e, 0, n - 1, 2, axis) for e in elems], [_slice_in_dim(e, 1, n, 2, axis) for e in elems]
        )
        odd = scan(reduced)
        evens = [_slice_in_dim(e, 2, n, 2, axis) for e in elems]
        if n % 2 == 0:
            even = combine([_slice_in_dim(e, 0, _aval(e).shape[axis] - 1, 1, axis) for e in odd], evens)
        else:
            even = combine(odd, evens)
        even = [_concatenate([_slice_in_dim(e, 0, 1, 1, axis), r], axis) for e, r in zip(elems, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(elems)
    if reverse:
        out = [_rev(e, (axis,)) for e in out]
    return out


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where ``x`` is the result ``z``, 1/2 where ``y`` is too (JAX's tie split)."""
    dt = _aval(z).dtype
    return _div(_convert(_eq(x, z), dt), _add(_scalar_like(z, 1), _convert(_eq(y, z), dt)))


def _mul_pair(a: Pair, b: Pair) -> Pair:
    (x, tx), (y, ty) = a, b
    return [_mul(x, y), _add(_mul(tx, y), _mul(x, ty))]


def _chooser_pair(op: Callable[[Any, Any], Any]) -> Callable[[Pair, Pair], Pair]:
    def combine(a: Pair, b: Pair) -> Pair:
        (x, tx), (y, ty) = a, b
        z = op(x, y)
        return [z, _add(_mul(tx, _balanced_eq(x, z, y)), _mul(ty, _balanced_eq(y, z, x)))]

    return combine


def _logaddexp(x: Any, y: Any) -> Any:
    """``log(exp(x) + exp(y))`` as ``jax.lax`` computes it (NaN/equal-infinity safe)."""
    amax = _max(x, y)
    delta = _sub(x, y)
    return _select_n(_ne(delta, delta), _add(amax, _log1p(_exp(_neg(_abs(delta))))), _add(x, y))


def _replace_inf(x: Any) -> Any:
    a = _aval(x)
    zeros = _broadcast_in_dim(_scalar_like(x, 0), a.shape, ())
    return _select_n(_eq(x, _scalar_like(x, float("inf"))), x, zeros)


def _logaddexp_pair(a: Pair, b: Pair) -> Pair:
    (x, tx), (y, ty) = a, b
    z = _logaddexp(x, y)
    rz = _replace_inf(z)
    return [z, _add(_mul(tx, _exp(_sub(_replace_inf(x), rz))), _mul(ty, _exp(_sub(_replace_inf(y), rz))))]


def _cumulative_jvp(prim: Primitive, combine: Callable[[Pair, Pair], Pair]) -> None:
    def rule(primals: list[Any], tangents: list[Any], *, axis: int, reverse: bool) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        if type(t) is Zero:
            return out, Zero(get_aval(out))
        _, t_out = _associative_scan(combine, [x, instantiate(t)], axis, reverse)
        return out, t_out

    jvp_rules.register(prim, symbolic_zeros=True)(rule)


_cumulative_jvp(cumprod_p, _mul_pair)
_cumulative_jvp(cummax_p, _chooser_pair(_max))
_cumulative_jvp(cummin_p, _chooser_pair(_min))
_cumulative_jvp(cumlogsumexp_p, _logaddexp_pair)


# -- transpose rules -----------------------------------------------------------------------
def _reduce_sum_transpose(ct: Any, operand: Any, *, axes: Axes) -> list[Any]:
    assert is_undefined(operand)
    a = _aval(operand)
    return [_broadcast_in_dim(ct, a.shape, _kept_dims(a.ndim, axes))]


def _cumsum_transpose(ct: Any, operand: Any, *, axis: int, reverse: bool) -> list[Any]:
    assert is_undefined(operand)
    return [cumsum(ct, axis, not reverse)]


transpose_rules.register(reduce_sum_p)(_reduce_sum_transpose)
transpose_rules.register(cumsum_p)(_cumsum_transpose)


# -- batching rules ------------------------------------------------------------------------
def _shift_axes(axes: Axes, bdim: int) -> Axes:
    """Operand axes of the batched value: the logical axes at or after ``bdim`` move up one."""
    return tuple(a + 1 if a >= bdim else a for a in axes)


def _defreducer(prim: Primitive) -> None:
    """Reduce over the shifted axes; the batch axis keeps its place among the kept axes."""

    def rule(axis_size: int, vals: list[Any], dims: list[Dim], *, axes: Axes, **params: ParamValue) -> tuple[Any, Any]:
        (x,), (bdim,) = vals, dims
        assert bdim is not None
        new_axes = _shift_axes(axes, bdim)
        out_dim = _kept_dims(_aval(x).ndim, new_axes).index(bdim)
        return prim.bind(x, axes=new_axes, **params), out_dim

    batching_rules.register(prim)(rule)


def _defcumulative_batching(prim: Primitive) -> None:
    def rule(axis_size: int, vals: list[Any], dims: list[Dim], *, axis: int, reverse: bool) -> tuple[Any, Any]:
        (x,), (bdim,) = vals, dims
        assert bdim is not None
        return prim.bind(x, axis=axis + 1 if axis >= bdim else axis, reverse=reverse), bdim

    batching_rules.register(prim)(rule)


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p, reduce_xor_p,
           argmax_p, argmin_p):
    _defreducer(_p)
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    _defcumulative_batching(_p)


# -- reduce (monoids) and associative_scan ------------------------------------------------------
def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Sequence[int]) -> Any:
    """``lax.reduce`` for the monoids JAX recognises (``lax.add``, ``mul``, ``max``, ``min`` and
    the bitwise/logical ``and``/``or``/``xor``): one ``reduce_*``, then the initial value
    combined in (a no-op when it is the identity). Other computations are not supported."""
    from fcore import tree_util
    from fcore.lax import elementwise as ew

    flat, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    reducers: dict[Any, Callable[[ArrayLike, Sequence[int]], Array]] = {
        ew.add: reduce_sum, ew.mul: reduce_prod, ew.max: reduce_max, ew.min: reduce_min,
        ew.and_: reduce_and, ew.or_: reduce_or, ew.xor: reduce_xor,
    }
    reducer = reducers.get(computation)
    if reducer is None or len(flat) != 1:
        raise NotImplementedError(
            "fcore.lax.reduce supports one operand reduced with lax.add, mul, max, min, bitwise_and, bitwise_or or "
            "bitwise_xor; use those (or fcore.numpy's reductions) for other computations"
        )
    (x,), (init,) = flat, inits
    out = computation(init, reducer(x, tuple(dimensions)))
    # As JAX's monoid path: one array back (whatever the tree), weak only if both inputs are.
    weak = _is_weak(x) and _is_weak(init)
    return ew.convert_element_type(out, get_aval(out).dtype, weak)


def _is_weak(x: Any) -> bool:
    return get_aval(x).weak_type if isinstance(x, Array) else type(x) in (int, float, complex)


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """``lax.associative_scan``: all prefix combinations of ``elems`` (a pytree of arrays with
    a common length along ``axis``) under the associative ``fn``, in O(log n) parallel steps."""
    from fcore import tree_util
    from fcore.lax._base import dtype_of
    from fcore.lax.elementwise import convert_element_type

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


# -- lowering rules (StableHLO text) -------------------------------------------------------
from fcore.backend.lowering import LoweringRuleContext, tensor_type  # noqa: E402


class _Body:
    """The text of a one-block region (a reducer): its values are named ``%r<N>_<i>``, with
    ``N`` a fresh number of the enclosing function, so they never clash with outer names."""

    def __init__(self, ctx: LoweringRuleContext) -> None:
        self.prefix = "%r" + ctx.fn.fresh()[1:] + "_"
        self.count = 0
        self.lines: list[str] = []

    def name(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count - 1}"

    def emit(self, rhs: str) -> str:
        out = self.name()
        self.lines.append(f"      {out} = {rhs}")
        return out

    def op(self, op: str, operands: Sequence[str], aval: ShapedArray) -> str:
        return self.emit(f"{op} {', '.join(operands)} : {tensor_type(aval)}")

    def compare(self, direction: str, x: str, y: str, aval: ShapedArray) -> str:
        t = tensor_type(aval)
        return self.emit(
            f"stablehlo.compare {direction}, {x}, {y}, {_compare_type(aval.dtype)} : ({t}, {t}) -> tensor<i1>"
        )

    def select(self, pred: str, on_true: str, on_false: str, aval: ShapedArray) -> str:
        return self.emit(f"stablehlo.select {pred}, {on_true}, {on_false} : tensor<i1>, {tensor_type(aval)}")

    def part(self, op: str, x: str, aval: ShapedArray) -> tuple[str, ShapedArray]:
        real = aval.update(dtype=dtypes.float64 if aval.dtype == dtypes.complex128 else dtypes.float32)
        return self.emit(f"{op} {x} : ({tensor_type(aval)}) -> {tensor_type(real)}"), real

    def ret(self, values: Sequence[str], avals: Sequence[ShapedArray]) -> str:
        types = ", ".join(tensor_type(a) for a in avals)
        return "\n".join([*self.lines, f"      stablehlo.return {', '.join(values)} : {types}"])


_BOOL = ShapedArray((), dtypes.bool_)


def _compare_type(dt: DType) -> str:
    if dtypes.is_inexact(dt):
        return "FLOAT"
    return "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"


_Combiner = Callable[[_Body, str, str, ShapedArray], str]


def _simple(op: str) -> _Combiner:
    return lambda body, a, b, aval: body.op(op, [a, b], aval)


def _chooser(direction: str, op: str) -> _Combiner:
    """``max``/``min`` of two scalars; complex numbers compare lexicographically, as in JAX."""

    def combine(body: _Body, a: str, b: str, aval: ShapedArray) -> str:
        if not dtypes.is_complex(aval.dtype):
            return body.op(op, [a, b], aval)
        ra, part = body.part("stablehlo.real", a, aval)
        rb, _ = body.part("stablehlo.real", b, aval)
        real_eq = body.compare("EQ", ra, rb, part)
        real_pick = body.compare(direction, ra, rb, part)
        ia, _ = body.part("stablehlo.imag", a, aval)
        ib, _ = body.part("stablehlo.imag", b, aval)
        imag_pick = body.compare(direction, ia, ib, part)
        pick = body.select(real_eq, imag_pick, real_pick, _BOOL)
        return body.select(pick, a, b, aval)

    return combine


def _logaddexp_combiner(body: _Body, a: str, b: str, aval: ShapedArray) -> str:
    amax = body.op("stablehlo.maximum", [a, b], aval)
    delta = body.op("stablehlo.subtract", [a, b], aval)
    isnan = body.compare("NE", delta, delta, aval)
    total = body.op("stablehlo.add", [a, b], aval)
    neg = body.op("stablehlo.negate", [body.op("stablehlo.abs", [delta], aval)], aval)
    soft = body.op("stablehlo.add", [amax, body.op("stablehlo.log_plus_one", [body.op("stablehlo.exponential", [neg], aval)], aval)], aval)
    return body.select(isnan, total, soft, aval)


_SINGLE_OPS = {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
               "stablehlo.and", "stablehlo.or", "stablehlo.xor"}


def _scalar_aval(dt: DType) -> ShapedArray:
    return ShapedArray((), dt)


def _reduce_lowering(op: str, identity: Callable[[DType], Any], combine: _Combiner | None = None) -> Callable[..., str]:
    """``stablehlo.reduce`` with the identity as init; the short form for one-op reducers."""

    def rule(ctx: LoweringRuleContext, x: str, *, axes: Axes) -> str:
        (a,), out = ctx.avals_in, ctx.avals_out[0]
        if not axes:
            return x
        elem = _scalar_aval(a.dtype)
        init = ctx.constant(identity(a.dtype), a.dtype)
        dims = f"across dimensions = [{', '.join(map(str, axes))}]"
        sig = f"({tensor_type(a)}, {tensor_type(elem)}) -> {tensor_type(out)}"
        if combine is None or not dtypes.is_complex(a.dtype):
            return ctx.emit(f"stablehlo.reduce({x} init: {init}) applies {op} {dims} : {sig}")
        body = _Body(ctx)
        lhs, rhs = body.name(), body.name()
        result = combine(body, lhs, rhs, elem)
        t = tensor_type(elem)
        region = body.ret([result], [elem])
        return ctx.emit(f"stablehlo.reduce({x} init: {init}) {dims} : {sig}\n"
                        f"     reducer({lhs}: {t}, {rhs}: {t}) {{\n{region}\n    }}")

    return rule


def _zero(dt: DType) -> Any:
    return False if dtypes.is_bool(dt) else 0


def _one(dt: DType) -> Any:
    return True if dtypes.is_bool(dt) else 1


def _all_ones(dt: DType) -> Any:
    return True if dtypes.is_bool(dt) else -1 if dtypes.is_signed_int(dt) else np.iinfo(dt).max


def _max_identity(dt: DType) -> Any:
    if dtypes.is_complex(dt):
        return complex(-np.inf, 0)
    return _identity_max(dt)


def _min_identity(dt: DType) -> Any:
    if dtypes.is_complex(dt):
        return complex(np.inf, 0)
    return _identity_min(dt)


lowering_rules.register(reduce_sum_p)(_reduce_lowering("stablehlo.add", _zero))
lowering_rules.register(reduce_prod_p)(_reduce_lowering("stablehlo.multiply", _one))
lowering_rules.register(reduce_max_p)(_reduce_lowering("stablehlo.maximum", _max_identity, _chooser("GT", "stablehlo.maximum")))
lowering_rules.register(reduce_min_p)(_reduce_lowering("stablehlo.minimum", _min_identity, _chooser("LT", "stablehlo.minimum")))
lowering_rules.register(reduce_and_p)(_reduce_lowering("stablehlo.and", _all_ones))
lowering_rules.register(reduce_or_p)(_reduce_lowering("stablehlo.or", _zero))
lowering_rules.register(reduce_xor_p)(_reduce_lowering("stablehlo.xor", _zero))


def _argminmax_lowering(direction: str, identity: Callable[[DType], Any]) -> Callable[..., str]:
    """A two-operand reduce of (value, iota index), as JAX: a NaN wins over any number (so the
    first NaN is found), and among equal values the smaller index wins."""

    def rule(ctx: LoweringRuleContext, x: str, *, axes: Axes, index_dtype: DType) -> str:
        (a,), out = ctx.avals_in, ctx.avals_out[0]
        (axis,) = axes
        idx_aval = a.update(dtype=index_dtype, weak_type=False)
        iota = ctx.emit(f"stablehlo.iota dim = {axis} : {tensor_type(idx_aval)}")
        init_x = ctx.constant(identity(a.dtype), a.dtype)
        init_i = ctx.constant(0, index_dtype)
        ve, ie = _scalar_aval(a.dtype), _scalar_aval(index_dtype)
        body = _Body(ctx)
        op_v, op_i, acc_v, acc_i = body.name(), body.name(), body.name(), body.name()
        pick_val = body.compare(direction, op_v, acc_v, ve)
        if dtypes.is_inexact(a.dtype):
            pick_val = body.op("stablehlo.or", [pick_val, body.compare("NE", op_v, op_v, ve)], _BOOL)
        same = body.compare("EQ", op_v, acc_v, ve)
        first = body.op("stablehlo.and", [same, body.compare("LT", op_i, acc_i, ie)], _BOOL)
        pick_idx = body.op("stablehlo.or", [pick_val, first], _BOOL)
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


lowering_rules.register(argmax_p)(_argminmax_lowering("GT", _identity_max))
lowering_rules.register(argmin_p)(_argminmax_lowering("LT", _identity_min))


def _cumulative_lowering(identity: Callable[[DType], Any], combine: _Combiner) -> Callable[..., str]:
    """A ``reduce_window`` whose window spans the whole axis, padded on one side (as JAX)."""

    def rule(ctx: LoweringRuleContext, x: str, *, axis: int, reverse: bool) -> str:
        (a,) = ctx.avals_in
        n = a.shape[axis]
        if n == 0:
            return x
        elem = _scalar_aval(a.dtype)
        init = ctx.constant(identity(a.dtype), a.dtype)
        pads = [[0, 0] for _ in a.shape]
        pads[axis] = [0, n - 1] if reverse else [n - 1, 0]
        window = [1] * a.ndim
        window[axis] = n
        body = _Body(ctx)
        lhs, rhs = body.name(), body.name()
        region = body.ret([combine(body, lhs, rhs, elem)], [elem])
        t = tensor_type(elem)
        attrs = (
            f"padding = dense<{pads}> : tensor<{a.ndim}x2xi64>, "
            f"window_dimensions = array<i64: {', '.join(map(str, window))}>, "
            f"window_strides = array<i64: {', '.join(['1'] * a.ndim)}>"
        )
        return ctx.emit(
            f'"stablehlo.reduce_window"({x}, {init}) <{{{attrs}}}> ({{\n'
            f"    ^bb0({lhs}: {t}, {rhs}: {t}):\n{region}\n"
            f"    }}) : ({tensor_type(a)}, {t}) -> {tensor_type(a)}"
        )

    return rule


def _float_neg_inf(dt: DType) -> Any:
    return -np.inf


lowering_rules.register(cumsum_p)(_cumulative_lowering(_zero, _simple("stablehlo.add")))
lowering_rules.register(cumprod_p)(_cumulative_lowering(_one, _simple("stablehlo.multiply")))
lowering_rules.register(cummax_p)(_cumulative_lowering(_max_identity, _chooser("GT", "stablehlo.maximum")))
lowering_rules.register(cummin_p)(_cumulative_lowering(_min_identity, _chooser("LT", "stablehlo.minimum")))
lowering_rules.register(cumlogsumexp_p)(_cumulative_lowering(_float_neg_inf, _logaddexp_combiner))

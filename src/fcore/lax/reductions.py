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
from typing import Any, TypeVar

import numpy as np

from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.lax._base import ArrayLike

NpArray = np.ndarray[Any, Any]
_F = TypeVar("_F", bound=Callable[..., Any])


def _checked_impl(p: Primitive) -> Callable[[_F], _F]:
    """Register ``f`` as ``p``'s eager impl, preceded by ``p``'s abstract evaluation.

    Eager evaluation calls impls directly; running the (cheap) shape rule first gives eager
    code the same errors as staged code, instead of NumPy's (or no error where NumPy is lax).
    """

    def register(f: _F) -> _F:
        rule = p.abstract_eval_rule
        assert rule is not None, f"define the abstract eval of {p.name} before its impl"

        def impl(*args: NpArray, **params: ParamValue) -> Any:
            rule(*[shaped_array(a.shape, a.dtype) for a in args], **params)
            return f(*args, **params)

        p.def_impl(impl)
        return f

    return register


Axes = tuple[int, ...]

__all__ = [
    "reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p", "reduce_and_p", "reduce_or_p",
    "reduce_xor_p", "argmax_p", "argmin_p", "cumsum_p", "cumprod_p", "cummax_p", "cummin_p",
    "cumlogsumexp_p", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
    "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
    "cumlogsumexp",
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

    @_checked_impl(p)
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

    @_checked_impl(p)
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

    @_checked_impl(p)
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

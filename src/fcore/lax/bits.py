"""Bit-level primitives: ``bitcast_convert_type`` (reinterpret the bits of each element as
another dtype), ``clz`` (count leading zeros) and ``population_count`` (count set bits),
with ``jax.lax``'s names, shape rules and errors. ``fcore.random`` builds floats from random
bits with ``bitcast_convert_type``, as JAX's samplers do.
"""

from __future__ import annotations

import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType, DTypeLike
from fcore.lax._base import ArrayLike, NpArray, checked_impl
from fcore.lax._primitive import Primitive
from fcore.lax.elementwise import _define, _lower_unary  # the elementwise machinery, shared
from fcore.transforms.batching import Dim, batching_rules, defvectorized, moveaxis
from fcore.transforms.jvp import defjvp_zero

__all__ = ["bitcast_convert_type", "clz", "population_count", "bitcast_convert_type_p", "clz_p", "population_count_p"]


# -- bitcast_convert_type -------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class BitcastParams:
    """``bitcast_convert_type[new_dtype]``."""

    new_dtype: DType


bitcast_convert_type_p = Primitive("bitcast_convert_type", params=BitcastParams)


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(x: ShapedArray, *, new_dtype: DType) -> ShapedArray:
    old = x.dtype
    if (dtypes.is_bool(old) or dtypes.is_complex(old) or dtypes.is_bool(new_dtype)
            or dtypes.is_complex(new_dtype)) and old != new_dtype:
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the operand and "
            f"destination types match. Got operand dtype={old}, new_dtype={new_dtype}. "
            "Consider using the arr.view() method instead."
        )
    old_bits, new_bits = old.itemsize * 8, new_dtype.itemsize * 8
    if old_bits == new_bits:
        return ShapedArray(x.shape, new_dtype)
    if old_bits > new_bits:
        return ShapedArray((*x.shape, old_bits // new_bits), new_dtype)
    last = x.shape[-1] if x.shape else 1
    if last * old_bits != new_bits:
        raise ValueError(
            f"Attempting to convert array of shape {x.shape} from {old} of size {old_bits} bits to "
            f"{new_dtype} of size {new_bits}, bits but {last} * {old_bits} != {new_bits}"
        )
    return ShapedArray(x.shape[:-1], new_dtype)


@checked_impl(bitcast_convert_type_p)
def _bitcast_impl(x: NpArray, *, new_dtype: DType) -> NpArray:
    old_bits, new_bits = x.dtype.itemsize * 8, new_dtype.itemsize * 8
    contiguous = np.ascontiguousarray(x)
    if old_bits > new_bits:  # each element becomes a trailing row of narrower ones
        return contiguous.reshape((*x.shape, 1)).view(new_dtype)
    out = contiguous.view(new_dtype)
    return out.reshape(x.shape[:-1]) if old_bits < new_bits else out


defjvp_zero(bitcast_convert_type_p)


@batching_rules.register(bitcast_convert_type_p)
def _bitcast_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, new_dtype: DType) -> tuple[Array, Dim]:
    (x,), (d,) = vals, dims
    assert d is not None
    if x.dtype.itemsize != new_dtype.itemsize and d == x.ndim - 1:  # the last axis changes: move the batch off it
        x = moveaxis(x, d, 0)
        d = 0
    return bitcast_convert_type(x, new_dtype), d


@lowering_rules.register(bitcast_convert_type_p)
def _bitcast_lowering(ctx: LoweringRuleContext, x: str, *, new_dtype: DType) -> str:
    return ctx.op_typed("stablehlo.bitcast_convert", [x], ctx.avals_in, ctx.avals_out[0])


def bitcast_convert_type(operand: ArrayLike, new_dtype: DTypeLike) -> Array:
    """The bits of each element of ``operand`` read as ``new_dtype`` (``lax.bitcast_convert_type``):
    same shape for dtypes of one width; a narrower dtype adds a trailing axis, a wider one
    consumes the trailing axis."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(new_dtype))
    out: Array = bitcast_convert_type_p.bind(operand, new_dtype=dt)
    return out


# -- clz, population_count ------------------------------------------------------------------
def _clz_np(x: NpArray) -> NpArray:
    bits = x.dtype.itemsize * 8
    unsigned = x.view(np.dtype(f"uint{bits}"))
    count = np.full(x.shape, bits, dtype=np.int64)
    value = unsigned.astype(np.uint64)
    for shift in range(bits - 1, -1, -1):  # the highest set bit decides
        hit = (value >> np.uint64(shift)) & np.uint64(1) == 1
        count = np.where(hit & (count == bits), bits - 1 - shift, count)
    return count.astype(x.dtype)


def _popcount_np(x: NpArray) -> NpArray:
    bits = x.dtype.itemsize * 8
    value = x.view(np.dtype(f"uint{bits}")).astype(np.uint64)
    count = np.zeros(x.shape, dtype=np.int64)
    for shift in range(bits):
        count += ((value >> np.uint64(shift)) & np.uint64(1)).astype(np.int64)
    return count.astype(x.dtype)


clz_p = _define("clz", 1, "int", _clz_np)
defjvp_zero(clz_p)
defvectorized(clz_p)
lowering_rules.register(clz_p)(_lower_unary("stablehlo.count_leading_zeros"))


def clz(x: ArrayLike) -> Array:
    """The number of leading zero bits of each (integer) element."""
    out: Array = clz_p.bind(x)
    return out


population_count_p = _define("population_count", 1, "int", _popcount_np)
defjvp_zero(population_count_p)
defvectorized(population_count_p)
lowering_rules.register(population_count_p)(_lower_unary("stablehlo.popcnt"))


def population_count(x: ArrayLike) -> Array:
    """The number of set bits of each (integer) element."""
    out: Array = population_count_p.bind(x)
    return out

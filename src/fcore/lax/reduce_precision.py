"""``lax.reduce_precision``: round floats to a narrower format (``exponent_bits``,
``mantissa_bits``) and back, as XLA's ``ReducePrecision``: mantissa rounded to nearest even,
exponents out of range flushed to signed zero or infinity, NaNs kept. The eager impl does
XLA's bit arithmetic in NumPy; jitted code lowers to ``stablehlo.reduce_precision``."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import attrs
import ml_dtypes
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.lax._base import ArrayLike, NpArray, checked_impl
from fcore.lax._primitive import Primitive
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import defvectorized
from fcore.transforms.jvp import deflinear
from fcore.transforms.transpose import transpose_rules

__all__ = ["reduce_precision", "reduce_precision_p"]

#: ml_dtypes' finfo knows every float dtype (bfloat16 and the float8s too); it is untyped.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


@attrs.frozen(kw_only=True)
class ReducePrecisionParams:
    """``reduce_precision[exponent_bits, mantissa_bits]``: the narrower format's field widths."""

    exponent_bits: int
    mantissa_bits: int


reduce_precision_p = Primitive("reduce_precision", params=ReducePrecisionParams)


@reduce_precision_p.def_abstract_eval
def _rp_abstract_eval(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int) -> ShapedArray:
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    if not dtypes.is_floating(x.dtype):
        raise TypeError(
            f"reduce_precision does not accept dtype {dtypes.dtype_name(x.dtype)}. "
            "Accepted dtypes are subtypes of floating."
        )
    return x


@checked_impl(reduce_precision_p)
def _rp_impl(x: NpArray, *, exponent_bits: int, mantissa_bits: int) -> NpArray:
    info = _finfo(x.dtype)
    nbits = x.dtype.itemsize * 8
    uint = np.dtype(f"uint{nbits}").type
    src_m, src_e = int(info.nmant), int(info.nexp)
    bits = np.array(x, copy=True).view(uint)  # contiguous, any rank (0-d included)
    if mantissa_bits < src_m:
        shift = src_m - mantissa_bits
        last_bit = (bits >> uint(shift)) & uint(1)
        bits = (bits + last_bit + uint((1 << (shift - 1)) - 1)) & ~uint((1 << shift) - 1)
    if exponent_bits < src_e:
        sign = bits & uint(1 << (nbits - 1))
        exp_mask = uint(((1 << src_e) - 1) << src_m)
        bias, reduced_bias = (1 << (src_e - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = bits & exp_mask
        overflow = exponent > uint((bias + reduced_bias) << src_m)
        underflow = exponent <= uint((bias - reduced_bias) << src_m)
        bits = np.where(overflow, sign | exp_mask, np.where(underflow, sign, bits)).astype(uint)
    out: NpArray = np.where(np.isnan(x), x, bits.view(x.dtype)).astype(x.dtype)
    return out


deflinear(reduce_precision_p)
defvectorized(reduce_precision_p)


@transpose_rules.register(reduce_precision_p)
def _rp_transpose(ct: Any, x: UndefinedPrimal, *, exponent_bits: int, mantissa_bits: int) -> list[Any]:
    return [reduce_precision_p.bind(ct, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)]


@lowering_rules.register(reduce_precision_p)
def _rp_lowering(ctx: LoweringRuleContext, x: str, *, exponent_bits: int, mantissa_bits: int) -> str:
    return ctx.emit(
        f"stablehlo.reduce_precision {x}, format = e{exponent_bits}m{mantissa_bits} : {tensor_type(ctx.avals_out[0])}"
    )


def reduce_precision(operand: float | ArrayLike, exponent_bits: int, mantissa_bits: int) -> Array:
    """``operand`` rounded to a float format with ``exponent_bits`` exponent and
    ``mantissa_bits`` mantissa bits, in its own dtype (XLA's ``ReducePrecision``)."""
    out: Array = reduce_precision_p.bind(
        operand, exponent_bits=operator.index(exponent_bits), mantissa_bits=operator.index(mantissa_bits)
    )
    return out

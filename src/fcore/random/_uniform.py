"""Uniform samplers: ``uniform`` (floats from random mantissa bits), ``randint`` (integers by
a double-width modulus), ``bernoulli`` and ``rademacher``, with JAX's algorithms, so that the
same key gives the same numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
from fcore import numpy as fnp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax.bits import bitcast_convert_type
from fcore.numpy._dtypes import finfo, iinfo
from fcore.random._checks import Shape, canonicalize_shape, check_shape, shape_of, user_dtype
from fcore.random._compiled import operand, specialize
from fcore.random._key_ops import KeyArrayLike
from fcore.random._keys import check_prng_key
from fcore.random._threefry import threefry_random_bits, threefry_split
from fcore.sharding import apply_out_sharding

__all__ = ["uniform", "randint", "bernoulli", "rademacher", "uniform_floats"]

_UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def uniform_floats(key: Array, shape: Shape, dtype: DType, minval: Any, maxval: Any) -> Array:
    """Floats in ``[minval, maxval)``: random mantissa bits under the exponent of 1.0 give a
    float in ``[1, 2)``; minus 1, scaled and shifted (JAX's ``_uniform``)."""
    if not dtypes.is_floating(dtype):
        raise TypeError("uniform only accepts floating point dtypes.")
    lo = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    hi = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    info = finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint = _UINT[nbits]
    random = lax.convert_element_type(threefry_random_bits(key, rng_bits, shape), uint)
    mantissa = lax.shift_right_logical(random, fnp.asarray(rng_bits - nmant, uint))
    one_bits = fnp.asarray(np.array(1.0, dtype).view(uint))
    floats = bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype) - fnp.asarray(1.0, dtype)
    return fnp.maximum(lo, lax.reshape(floats * (hi - lo) + lo, shape))


def _uniform(key: Array, minval: Any, maxval: Any, shape: Shape, dtype: DType) -> Array:
    return uniform_floats(key, shape, dtype, minval, maxval)



def uniform(
    key: KeyArrayLike, shape: Any = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0, *,
    out_sharding: Any = None,
) -> Array:
    """Floats uniformly distributed in ``[minval, maxval)`` (default dtype: the default float)."""
    data, _ = check_prng_key("uniform", key)
    dt = user_dtype(dtype, float)
    if not dtypes.is_floating(dt):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dt}")
    out: Array = specialize(_uniform, canonicalize_shape(shape), dt)(data, operand(minval), operand(maxval))
    result: Array = apply_out_sharding(out, out_sharding)
    return result


def _convert_and_clip_integer(val: Array, dtype: DType) -> Array:
    """``val`` converted to the integer ``dtype``, clipped to its range instead of wrapping."""
    lo = max(int(iinfo(dtype).min), int(iinfo(val.dtype).min))
    hi = min(int(iinfo(dtype).max), int(iinfo(val.dtype).max))
    return fnp.clip(val, fnp.asarray(lo, val.dtype), fnp.asarray(hi, val.dtype)).astype(dtype)


def _randint(key: Array, minval: Any, maxval: Any, shape: Shape, dtype: DType) -> Array:
    """``minval + (hi * 2**nbits + lo) % span`` from two independent words of ``nbits``
    (JAX's ``_randint``: a modulus of double width keeps the bias small)."""
    check_shape("randint", shape, shape_of(minval), shape_of(maxval))
    lo_arr, hi_arr = fnp.asarray(minval), fnp.asarray(maxval)
    if not dtypes.is_integer(lo_arr.dtype):
        lo_arr = lo_arr.astype(int)
    if not dtypes.is_integer(hi_arr.dtype):
        hi_arr = hi_arr.astype(int)
    # maxval above dtype's range (randint(key, s, 0, 256, uint8)) makes the span one larger.
    hi_out_of_range = fnp.greater(hi_arr, _convert_and_clip_integer(fnp.asarray(iinfo(dtype).max, dtype), hi_arr.dtype))
    lo_c = lax.broadcast_to_rank(_convert_and_clip_integer(lo_arr, dtype), len(shape))
    hi_c = lax.broadcast_to_rank(_convert_and_clip_integer(hi_arr, dtype), len(shape))
    nbits = iinfo(dtype).bits
    unsigned = _UINT[nbits]
    keys = threefry_split(key, (2,))
    higher = threefry_random_bits(keys[0], nbits, shape)
    lower = threefry_random_bits(keys[1], nbits, shape)
    span = lax.convert_element_type(hi_c - lo_c, unsigned)
    span = fnp.where(hi_c <= lo_c, fnp.asarray(1, unsigned), span)  # minval is returned when maxval <= minval
    span = fnp.where(hi_out_of_range & (hi_c > lo_c), span + fnp.asarray(1, unsigned), span)
    multiplier = fnp.remainder(fnp.asarray(2 ** (nbits // 2), unsigned), span)
    multiplier = fnp.remainder(multiplier * multiplier, span)
    offset = fnp.remainder(higher, span) * multiplier + fnp.remainder(lower, span)
    offset = fnp.remainder(offset, span)
    return lo_c + lax.convert_element_type(offset, dtype)



def randint(
    key: KeyArrayLike, shape: Any, minval: Any, maxval: Any, dtype: Any = None, *, out_sharding: Any = None,
) -> Array:
    """Integers uniformly distributed in ``[minval, maxval)`` (default dtype: the default int)."""
    data, _ = check_prng_key("randint", key)
    dt = user_dtype(dtype, int)
    shp = canonicalize_shape(shape)
    if not dtypes.is_integer(dt):
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    info = iinfo(dt)
    sampling = dt
    if info.bits < 32:  # sample 8- and 16-bit integers at 32 bits, against the modulus bias
        sampling = dtypes.int32
        minval = fnp.asarray(minval).astype(np.int32).clip(int(info.min), int(info.max))
        maxval = fnp.asarray(maxval).astype(np.int32).clip(int(info.min), int(info.max) + 1)
    out = specialize(_randint, shp, sampling)(data, operand(minval), operand(maxval)).astype(dt)
    result: Array = apply_out_sharding(out, out_sharding)
    return result


def _bernoulli(key: Array, p: Array, shape: Shape | None, mode: str) -> Array:
    if shape is None:
        shape = tuple(p.shape)
    else:
        check_shape("bernoulli", shape, tuple(p.shape))
    dtype = p.dtype
    if mode == "high":
        u = uniform_floats(key, (2, *shape), dtype, 0.0, 1.0)
        u1, u2 = u[0], u[1] * (2.0 ** -finfo(dtype).nmant)  # resolution of one sample
        return u2 < p - u1
    return uniform_floats(key, shape, dtype, 0.0, 1.0) < p



def bernoulli(key: KeyArrayLike, p: Any = 0.5, shape: Any = None, mode: str = "low") -> Array:
    """Booleans that are True with probability ``p`` (``mode='high'`` draws twice the bits,
    for probabilities below float32's resolution)."""
    shp = None if shape is None else canonicalize_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_prng_key("bernoulli", key)
    p_arr = fnp.asarray(p)
    if not dtypes.is_floating(p_arr.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p_arr.dtype}.")
    return specialize(_bernoulli, shp, mode)(data, operand(p_arr))


def _rademacher(key: Array, shape: Shape, dtype: DType) -> Array:
    """JAX's: Bernoulli(1/2) draws at the default float precision, as ``2 * b - 1``."""
    signs = _bernoulli(key, fnp.asarray(0.5, user_dtype(None, float)), shape, "low").astype(dtype)
    return (2 * signs - 1).astype(dtype)



def rademacher(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """-1 or +1 with equal probability (default dtype: the default int)."""
    data, _ = check_prng_key("rademacher", key)
    return specialize(_rademacher, canonicalize_shape(shape), user_dtype(dtype, int))(data)


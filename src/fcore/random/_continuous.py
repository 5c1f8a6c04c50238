"""Continuous samplers that transform uniform or normal draws: ``normal``,
``truncated_normal``, ``exponential``, ``laplace``, ``logistic``, ``cauchy``, ``gumbel``,
``maxwell``, ``double_sided_maxwell``, ``weibull_min``, ``pareto``, ``rayleigh``, ``wald``,
``triangular``, ``lognormal`` — each JAX's formula, so that a key gives JAX's numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore import lax
from fcore import numpy as fnp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.numpy._dtypes import finfo
from fcore.numpy.linalg import norm
from fcore.random._checks import (
    Shape, canonicalize_shape, check_broadcast_shapes, check_safe_to_cast, check_shape, float_dtype, shape_of,
    user_dtype,
)
from fcore.random._compiled import operand, specialize
from fcore.random._key_ops import KeyArrayLike
from fcore.random._keys import check_prng_key
from fcore.random._threefry import threefry_random_bits, threefry_split
from fcore.random._uniform import _rademacher, uniform_floats
from fcore.sharding import apply_out_sharding

__all__ = ["normal", "normal_floats", "truncated_normal", "exponential", "exponential_floats", "laplace", "logistic",
           "cauchy", "gumbel", "gumbel_floats", "maxwell", "double_sided_maxwell", "weibull_min", "pareto", "rayleigh",
           "wald", "triangular", "lognormal"]


def _real_dtype(dtype: DType) -> DType:
    return np.array(0, dtype).real.dtype


# -- normal ---------------------------------------------------------------------------------
def _normal_real(key: Array, shape: Shape, dtype: DType) -> Array:
    """``sqrt(2) * erfinv(u)`` for ``u`` uniform in the open interval ``(-1, 1)``."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_floats(key, shape, dtype, lo, np.array(1.0, dtype))
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def normal_floats(key: Array, shape: Shape, dtype: DType) -> Array:
    """Standard normal samples; complex ones have independent parts of variance 1/2 each."""
    if dtypes.is_complex(dtype):
        sqrt2 = np.array(np.sqrt(2), dtype)
        keys = threefry_split(key, (2,))
        real = _real_dtype(dtype)
        re = _normal_real(keys[0], shape, real).astype(dtype)
        im = _normal_real(keys[1], shape, real).astype(dtype)
        return (re + 1j * im) / sqrt2
    return _normal_real(key, shape, dtype)


def _normal(key: Array, shape: Shape, dtype: DType) -> Array:
    return normal_floats(key, shape, dtype)



def normal(key: KeyArrayLike, shape: Any = (), dtype: Any = None, *, out_sharding: Any = None) -> Array:
    """Standard normal samples (default dtype: the default float; complex dtypes allowed)."""
    data, _ = check_prng_key("normal", key)
    shp = canonicalize_shape(shape)
    dt = user_dtype(dtype, float)
    if not dtypes.is_inexact(dt):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dt}")
    out: Array = apply_out_sharding(specialize(_normal, shp, dt)(data), out_sharding)
    return out


def _truncated_normal(key: Array, lower: Any, upper: Any, shape: Shape | None, dtype: DType) -> Array:
    """The inverse cdf of a uniform draw between ``erf(lower/√2)`` and ``erf(upper/√2)``,
    clipped into the open interval ``(lower, upper)``."""
    if shape is None:
        shape = tuple(np.broadcast_shapes(shape_of(lower), shape_of(upper)))
    else:
        check_shape("truncated_normal", shape, shape_of(lower), shape_of(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lo = lax.convert_element_type(lower, dtype)
    hi = lax.convert_element_type(upper, dtype)
    a = lax.erf(lo / sqrt2)
    b = lax.erf(hi / sqrt2)
    u = uniform_floats(key, shape, dtype, a, b)
    out = sqrt2 * lax.erf_inv(u)
    return fnp.clip(out, lax.nextafter(lax.stop_gradient(lo), np.array(np.inf, dtype)),
                    lax.nextafter(lax.stop_gradient(hi), np.array(-np.inf, dtype)))



def truncated_normal(key: KeyArrayLike, lower: Any, upper: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Standard normal samples conditioned on ``lower < x < upper``."""
    shp = None if shape is None else canonicalize_shape(shape)
    data, _ = check_prng_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    return specialize(_truncated_normal, shp, dt)(data, operand(lower), operand(upper))


# -- transforms of one uniform draw ---------------------------------------------------------
def exponential_floats(key: Array, shape: Shape, dtype: DType) -> Array:
    u = uniform_floats(key, shape, dtype, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def _exponential(key: Array, shape: Shape, dtype: DType) -> Array:
    return exponential_floats(key, shape, dtype)



def exponential(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the unit exponential distribution, ``-log1p(-u)``."""
    data, _ = check_prng_key("exponential", key)
    return specialize(_exponential, canonicalize_shape(shape), float_dtype("exponential", dtype))(data)


def _laplace(key: Array, shape: Shape, dtype: DType) -> Array:
    u = uniform_floats(key, shape, dtype, -1.0 + finfo(dtype).epsneg, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))



def laplace(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the standard Laplace distribution."""
    data, _ = check_prng_key("laplace", key)
    return specialize(_laplace, canonicalize_shape(shape), float_dtype("laplace", dtype))(data)


def _logistic(key: Array, shape: Shape, dtype: DType) -> Array:
    x = uniform_floats(key, shape, dtype, finfo(dtype).tiny, 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))



def logistic(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the standard logistic distribution, ``log(u) - log1p(-u)``."""
    data, _ = check_prng_key("logistic", key)
    return specialize(_logistic, canonicalize_shape(shape), float_dtype("logistic", dtype))(data)


def _cauchy(key: Array, shape: Shape, dtype: DType) -> Array:
    u = uniform_floats(key, shape, dtype, finfo(dtype).eps, 1.0)
    return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))



def cauchy(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the standard Cauchy distribution, ``tan(pi * (u - 1/2))``."""
    data, _ = check_prng_key("cauchy", key)
    return specialize(_cauchy, canonicalize_shape(shape), float_dtype("cauchy", dtype))(data)


# -- gumbel ---------------------------------------------------------------------------------
def _bits_to_unit_float(pair: Array) -> Array:
    """Two ``uint32`` words (axis 0) as a float32 in ``[0, 1)`` with all the precision a
    float32 holds near 0: the leading one bit sets the exponent (JAX's ``_safe_int_to_float``)."""
    info = finfo(dtypes.float32)
    hi, lo = pair[0], pair[1]
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    u32 = dtypes.uint32
    top = fnp.where(hiclz == 32, lax.shift_left(lo, loclz), lax.shift_right_logical(lo, info.bits - hiclz))
    mantissa = lax.bitwise_or(lax.shift_left(hi, hiclz), top)
    mantissa = lax.shift_right_logical(mantissa, np.array(info.bits - info.nmant - 1, u32))
    mantissa = lax.bitwise_and(mantissa, np.array((1 << info.nmant) - 1, u32))
    exp = lax.shift_left(-info.minexp - fnp.where(hiclz == 32, 32 + loclz, hiclz), np.array(info.nmant, u32))
    exp = lax.bitwise_and(exp, np.array((1 << (info.bits - 2)) - (1 << (info.nmant - 1)), u32))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), dtypes.float32)


def gumbel_floats(key: Array, shape: Shape, dtype: DType, mode: str) -> Array:
    """``-log(-log(u))``; ``mode='high'`` resolves the upper tail with a second draw and
    ``'highest'`` (float32) builds ``u`` from 64 bits."""
    info = finfo(dtype)
    if dtype == dtypes.float32 and mode == "highest":
        u32 = dtypes.uint32
        bits = threefry_random_bits(key, info.bits, (2, *shape))
        neg = lax.bitwise_not(bits)
        lo_bits = neg[1]
        all_ones = lo_bits == np.array((1 << info.bits) - 1, u32)
        carry = fnp.stack([all_ones, fnp.ones_like(lo_bits, dtype=bool)]).astype(u32)
        neg = neg + carry
        flip = bits[0] < np.array(1 << (info.bits - 1), u32)
        x = _bits_to_unit_float(fnp.where(flip, bits, neg))
        return fnp.where(flip, -fnp.log(-fnp.log1p(-x)), -fnp.log(-fnp.log(x)))
    if mode in ("high", "highest"):
        u = uniform_floats(key, (2, *shape), dtype, 0.0, 1.0)
        high, low = u[0], u[1]
        x = fnp.where(high >= 0.5, high, high + 2 ** (-info.nmant) * low + info.tiny)
        return -fnp.log(-fnp.log1p(-x))
    return -fnp.log(-fnp.log(uniform_floats(key, shape, dtype, info.tiny, 1.0)))


def _gumbel(key: Array, shape: Shape, dtype: DType, mode: str) -> Array:
    return gumbel_floats(key, shape, dtype, mode)



def gumbel_mode(mode: str | None) -> str:
    resolved = "low" if mode is None else mode
    if resolved not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return resolved


def gumbel(key: KeyArrayLike, shape: Any = (), dtype: Any = None, mode: str | None = None) -> Array:
    """Samples of the standard Gumbel distribution (``mode``: ``'low'`` (default), ``'high'``
    or ``'highest'``, for more precision in the tails)."""
    data, _ = check_prng_key("gumbel", key)
    dt = float_dtype("gumbel", dtype)
    return specialize(_gumbel, canonicalize_shape(shape), dt, gumbel_mode(mode))(data)


# -- built on normal draws ------------------------------------------------------------------
def _maxwell(key: Array, shape: Shape, dtype: DType) -> Array:
    return norm(normal_floats(key, (*shape, 3), dtype), axis=-1)



def maxwell(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the one-sided Maxwell distribution: norms of standard normal 3-vectors."""
    data, _ = check_prng_key("maxwell", key)
    return specialize(_maxwell, canonicalize_shape(shape), float_dtype("maxwell", dtype))(data)


def _double_sided_maxwell(key: Array, loc: Any, scale: Any, shape: Shape, dtype: DType) -> Array:
    params = tuple(np.broadcast_shapes(shape_of(loc), shape_of(scale)))
    full = (shape or params) + params
    keys = threefry_split(key, (2,))
    rvs = _maxwell(keys[0], full, dtype)
    signs = _rademacher(keys[1], full, dtype)
    result: Array = signs * rvs * scale + loc
    return result



def double_sided_maxwell(key: KeyArrayLike, loc: Any, scale: Any, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the double-sided Maxwell distribution with location ``loc`` and ``scale``."""
    data, _ = check_prng_key("double_sided_maxwell", key)
    dt = float_dtype("double_sided_maxwell", dtype)
    return specialize(_double_sided_maxwell, canonicalize_shape(shape), dt)(data, operand(loc), operand(scale))


def _lognormal(key: Array, sigma: Any, shape: Shape, dtype: DType) -> Array:
    return lax.exp(normal_floats(key, shape, dtype) * lax.convert_element_type(sigma, dtype))



def lognormal(key: KeyArrayLike, sigma: Any = np.float32(1), shape: Any = None, dtype: Any = None) -> Array:
    """Samples of ``exp(sigma * n)`` for standard normal ``n``."""
    data, _ = check_prng_key("lognormal", key)
    dt = user_dtype(dtype, float)
    if not dtypes.is_inexact(dt):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, got {dt}")
    shp = check_broadcast_shapes("lognormal", shape, sigma)
    check_safe_to_cast("lognormal", dt, sigma)
    return specialize(_lognormal, shp, dt)(data, operand(sigma))


def _wald(key: Array, mean: Any, shape: Shape, dtype: DType) -> Array:
    keys = threefry_split(key, (2,))
    mu = fnp.broadcast_to(fnp.asarray(mean).astype(dtype), shape)
    v = normal_floats(keys[0], shape, dtype)
    z = uniform_floats(keys[1], shape, dtype, 0.0, 1.0)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mu, 2)
    sqrt_term = lax.sqrt(4 * mu * y + mean_sq * y_sq)
    x = mu + mean_sq * y / 2 - mu / 2 * sqrt_term
    return lax.select(lax.le(z, mu / (mu + x)), x, mean_sq / x)



def wald(key: KeyArrayLike, mean: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the Wald (inverse Gaussian) distribution with ``mean``."""
    data, _ = check_prng_key("wald", key)
    dt = float_dtype("wald", dtype)
    shp = check_broadcast_shapes("wald", shape, mean)
    check_safe_to_cast("wald", dt, mean)
    return specialize(_wald, shp, dt)(data, operand(mean))


# -- transforms of uniform draws with parameters --------------------------------------------
def _weibull_min(key: Array, scale: Any, concentration: Any, shape: Shape, dtype: DType) -> Array:
    u = uniform_floats(key, shape, dtype, 0, 1)
    result: Array = fnp.power(-fnp.log1p(-u), 1.0 / concentration) * scale
    return result



def weibull_min(key: KeyArrayLike, scale: Any, concentration: Any, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the Weibull distribution ``scale * (-log1p(-u)) ** (1 / concentration)``."""
    data, _ = check_prng_key("weibull_min", key)
    dt = float_dtype("weibull_min", dtype)
    return specialize(_weibull_min, canonicalize_shape(shape), dt)(data, operand(scale), operand(concentration))


def _pareto(key: Array, b: Any, shape: Shape, dtype: DType) -> Array:
    e = exponential_floats(key, shape, dtype)
    return lax.exp(e / lax.convert_element_type(b, dtype))



def pareto(key: KeyArrayLike, b: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the Pareto distribution with shape parameter ``b``: ``exp(e / b)``."""
    data, _ = check_prng_key("pareto", key)
    dt = float_dtype("pareto", dtype)
    shp = check_broadcast_shapes("pareto", shape, b)
    check_safe_to_cast("pareto", dt, b)
    return specialize(_pareto, shp, dt)(data, operand(b))


def _rayleigh(key: Array, scale: Any, shape: Shape, dtype: DType) -> Array:
    u = uniform_floats(key, shape, dtype, 0.0, 1.0)
    s = fnp.broadcast_to(fnp.asarray(scale).astype(dtype), shape)
    return lax.mul(s, lax.sqrt(lax.mul(lax.log(u), fnp.asarray(-2, dtype))))



def rayleigh(key: KeyArrayLike, scale: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the Rayleigh distribution, ``scale * sqrt(-2 log u)``."""
    data, _ = check_prng_key("rayleigh", key)
    dt = float_dtype("rayleigh", dtype)
    shp = check_broadcast_shapes("rayleigh", shape, scale)
    check_safe_to_cast("rayleigh", dt, scale)
    return specialize(_rayleigh, shp, dt)(data, operand(scale))


def _triangular(key: Array, left: Any, mode: Any, right: Any, shape: Shape, dtype: DType) -> Array:
    lo = fnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    hi = fnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    peak = fnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (peak - lo) / (hi - lo)
    u = uniform_floats(key, shape, dtype, 0.0, 1.0)
    out1 = lo + lax.sqrt(u * (hi - lo) * (peak - lo))
    out2 = hi - lax.sqrt((1 - u) * (hi - lo) * (hi - peak))
    return lax.select(u < fc, out1, out2)



def triangular(key: KeyArrayLike, left: Any, mode: Any, right: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the triangular distribution on ``[left, right]`` with peak at ``mode``."""
    data, _ = check_prng_key("triangular", key)
    dt = float_dtype("triangular", dtype)
    shp = check_broadcast_shapes("triangular", shape, left, mode, right)
    check_safe_to_cast("triangular", dt, left, mode, right)
    return specialize(_triangular, shp, dt)(data, operand(left), operand(mode), operand(right))

"""``fcore.nn.initializers``: ``jax.nn.initializers``' parameter initializers.

An initializer is a function ``init(key, shape, dtype=None) -> Array``; the factories
(``normal(stddev)``, ``variance_scaling(scale, mode, distribution)``, ``glorot_uniform()``,
...) build them. Each draws from ``fcore.random`` exactly as JAX's does, so the same key
initializes the same parameters as JAX.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from fcore import numpy as fnp
from fcore import random
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.random._checks import canonicalize_shape
from fcore.random._key_ops import KeyArrayLike

__all__ = [
    "Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal", "variance_scaling",
    "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "lecun_uniform", "lecun_normal",
    "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal",
]

Axes = int | Sequence[int]


@runtime_checkable
class Initializer(Protocol):
    """What every initializer is: ``init(key, shape, dtype=None) -> Array``."""

    def __call__(self, key: KeyArrayLike, shape: Sequence[int], dtype: Any = None, out_sharding: None = None) -> Array:
        ...


def _dtype(dtype: Any) -> Any:
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key: KeyArrayLike, shape: Sequence[int], dtype: Any = None, out_sharding: None = None) -> Array:
    """An initializer that returns zeros (the key is not used)."""
    return fnp.zeros(shape, _dtype(dtype))


def ones(key: KeyArrayLike, shape: Sequence[int], dtype: Any = None, out_sharding: None = None) -> Array:
    """An initializer that returns ones (the key is not used)."""
    return fnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer that fills the array with ``value``."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        return fnp.full(shape, value, dtype=_dtype(dtype))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        dt = _dtype(dtype)
        return random.uniform(key, shape, dt) * fnp.array(scale, dt)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a centered normal distribution of standard deviation ``stddev``."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        dt = _dtype(dtype)
        return random.normal(key, shape, dt) * fnp.array(stddev, dt)

    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0) -> Initializer:
    """An initializer drawing from a normal truncated to ``[lower, upper]``, scaled by ``stddev``
    (the standard deviation of the underlying normal, not of the truncated one)."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dt) * fnp.array(stddev, dt)

    return init


def _compute_fans(shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """``(fan_in, fan_out)`` of a weight tensor: the sizes of its input and output axes, each
    times the receptive field (the product of the other, non-batch axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with default "
            "in_axis. Must be at least 2D or specify in_axis explicitly."
        )

    def size(axes: Axes) -> int:
        return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_and_complex(dtype: Any) -> tuple[Any, Any]:
    real = np.array(0, dtype).real.dtype
    return real, dtypes.canonicalize_dtype(np.dtype(np.complex128 if real == np.float64 else np.complex64))


def _complex_uniform(key: KeyArrayLike, shape: Sequence[int], dtype: Any) -> Array:
    """Uniform in the unit disk: ``sqrt(2u) * exp(i theta)`` (variance 1)."""
    key_r, key_theta = random.split(key)
    real, cplx = _real_and_complex(dtype)
    r = fnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(cplx)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(cplx)
    return r * fnp.exp(1j * theta)


def _complex_truncated_normal(key: KeyArrayLike, upper: Any, shape: Sequence[int], dtype: Any) -> Array:
    """A complex normal truncated to modulus ``upper`` (Rayleigh modulus, uniform phase)."""
    key_r, key_theta = random.split(key)
    real, cplx = _real_and_complex(dtype)
    t = (1 - fnp.exp(fnp.array(-(upper**2), cplx))) * random.uniform(key_r, shape, real).astype(cplx)
    r = fnp.sqrt(-fnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(cplx)
    return r * fnp.exp(1j * theta)


Mode = Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]


def variance_scaling(scale: Any, mode: Mode, distribution: Distribution, in_axis: Axes = -2, out_axis: Axes = -1,
                     batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """An initializer whose samples have variance ``scale / n``, where ``n`` is the fan-in,
    fan-out, their average or their geometric mean (``mode``), drawn from a truncated normal,
    a normal or a uniform distribution (``distribution``)."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        shp = canonicalize_shape(shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shp, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = fnp.array(scale / denominator, dtype=dt)
        floating = dtypes.is_floating(fnp.dtype(dt))
        if distribution == "truncated_normal":
            if floating:  # 0.87962566103423978: the stddev of a unit normal truncated to (-2, 2)
                stddev = fnp.sqrt(variance) / fnp.array(0.87962566103423978, dt)
                return random.truncated_normal(key, -2, 2, shp, dt) * stddev
            stddev = fnp.sqrt(variance) / fnp.array(0.95311164380491208, dt)
            return _complex_truncated_normal(key, 2, shp, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shp, dt) * fnp.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return random.uniform(key, shp, dt, -1) * fnp.sqrt(3 * variance)
            return _complex_uniform(key, shp, dt) * fnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def glorot_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """Glorot (Xavier) uniform: ``variance_scaling(1.0, "fan_avg", "uniform")``."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis,
                            dtype=dtype)


def glorot_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """Glorot (Xavier) normal: ``variance_scaling(1.0, "fan_avg", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """LeCun uniform: ``variance_scaling(1.0, "fan_in", "uniform")``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis,
                            dtype=dtype)


def lecun_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """LeCun normal: ``variance_scaling(1.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """He (Kaiming) uniform: ``variance_scaling(2.0, "fan_in", "uniform")``."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis, batch_axis=batch_axis,
                            dtype=dtype)


def he_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """He (Kaiming) normal: ``variance_scaling(2.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (semi-)orthogonal matrices: the array reshaped to
    ``(size // shape[column_axis], shape[column_axis])`` has orthonormal rows or columns."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        if out_sharding is not None:
            raise NotImplementedError
        dt = _dtype(dtype)
        shp = canonicalize_shape(shape)
        if len(shp) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shp):
            return fnp.zeros(shp, dtype=dt)
        n_rows, n_cols = math.prod(shp) // shp[column_axis], shp[column_axis]
        q = random.orthogonal(key, n_rows, (), dt, n_cols)
        q = fnp.reshape(q, tuple(np.delete(np.array(shp), column_axis).tolist()) + (shp[column_axis],))
        q = fnp.moveaxis(q, -1, column_axis)
        return fnp.array(scale, dt) * q

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer for 3-, 4- and 5-D convolution kernels: an orthogonal matrix at the
    center of the spatial window, zeros elsewhere (Xiao et al. 2018)."""

    def init(key: KeyArrayLike, shape: Sequence[int], dtype: Any = dtype, out_sharding: None = None) -> Array:
        if out_sharding is not None:
            raise NotImplementedError
        dt = _dtype(dtype)
        shp = canonicalize_shape(shape)
        if len(shp) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shp[-1] < shp[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shp[-2:])
        w = fnp.zeros(shp, dtype=dt)
        center = tuple((k - 1) // 2 for k in shp[:-2])
        result: Array = w.at[(*center, ...)].set(ortho_matrix)
        return result

    return init

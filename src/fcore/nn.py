"""``fcore.nn``: common activation functions and softmax (``jax.nn``'s formulas and dtypes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax import ArrayLike
from fcore.numpy._promotion import asarray, convert, normalize_axes, operand, to_inexact

__all__ = [
    "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu", "elu", "selu",
    "leaky_relu", "celu", "hard_tanh", "soft_sign", "tanh", "softmax", "log_softmax", "logsumexp",
    "one_hot", "standardize",
]

Axis = int | Sequence[int] | None


def _inexact(x: ArrayLike, name: str) -> Array:
    dt, weak = operand(x, name)
    return convert(x, to_inexact(dt), weak)


def relu(x: ArrayLike) -> Array:
    """``max(x, 0)``."""
    return fnp.maximum(x, 0)


def relu6(x: ArrayLike) -> Array:
    """``min(max(x, 0), 6)``."""
    return fnp.minimum(fnp.maximum(x, 0), 6.0)


def sigmoid(x: ArrayLike) -> Array:
    """``1 / (1 + exp(-x))`` (``lax.logistic``)."""
    return lax.logistic(asarray(x, "sigmoid"))


def softplus(x: ArrayLike) -> Array:
    """``log(1 + exp(x))``, computed stably as ``logaddexp(x, 0)``."""
    return fnp.logaddexp(x, 0)


def log_sigmoid(x: ArrayLike) -> Array:
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return fnp.negative(softplus(fnp.negative(asarray(x, "log_sigmoid"))))


def silu(x: ArrayLike) -> Array:
    """``x * sigmoid(x)``."""
    a = asarray(x, "silu")
    return fnp.multiply(a, sigmoid(a))


swish = silu


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """Gaussian error linear unit: the tanh approximation, or the exact form via ``erf``."""
    a = _inexact(x, "gelu")
    if approximate:
        sqrt_2_over_pi = np.asarray(np.sqrt(2 / np.pi)).astype(a.dtype)
        inner = fnp.multiply(sqrt_2_over_pi, fnp.add(a, fnp.multiply(0.044715, fnp.power(a, 3))))
        cdf = fnp.multiply(0.5, fnp.add(1.0, fnp.tanh(inner)))
        return fnp.multiply(a, cdf)
    sqrt_half = np.asarray(np.sqrt(0.5)).astype(a.dtype)
    # erfc(-z) = 1 + erf(z)
    erfc = fnp.add(1.0, lax.erf(fnp.multiply(a, sqrt_half)))
    return convert(fnp.multiply(fnp.multiply(0.5, a), erfc), a.dtype, False)


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    a = asarray(x, "elu")
    safe = fnp.where(fnp.greater(a, 0), 0.0, a)
    return fnp.where(fnp.greater(a, 0), a, fnp.multiply(alpha, fnp.expm1(safe)))


def selu(x: ArrayLike) -> Array:
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return fnp.multiply(scale, elu(x, alpha))


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    return fnp.add(fnp.maximum(x, 0.0), fnp.multiply(alpha, fnp.expm1(fnp.true_divide(fnp.minimum(x, 0.0), alpha))))


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Array:
    a = asarray(x, "leaky_relu")
    return fnp.where(fnp.greater_equal(a, 0), a, fnp.multiply(negative_slope, a))


def hard_tanh(x: ArrayLike) -> Array:
    a = asarray(x, "hard_tanh")
    return fnp.where(fnp.greater(a, 1), 1, fnp.where(fnp.less(a, -1), -1, a))


def soft_sign(x: ArrayLike) -> Array:
    a = asarray(x, "soft_sign")
    return fnp.true_divide(a, fnp.add(fnp.abs(a), 1))


def tanh(x: ArrayLike) -> Array:
    return fnp.tanh(x)


def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    a = asarray(x, "softmax")
    x_max = fnp.max(a, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = a if where is None else fnp.where(where, a, -np.inf)
    unnormalized = fnp.exp(fnp.subtract(x_safe, x_max))
    result = fnp.true_divide(unnormalized, fnp.sum(unnormalized, axis, where=where, keepdims=True))
    if where is not None:
        result = fnp.where(where, result, 0)
    return result


def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """``x - logsumexp(x)`` along ``axis``, computed stably."""
    a = asarray(x, "log_softmax")
    x_max = fnp.max(a, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = a if where is None else fnp.where(where, a, -np.inf)
    shifted = fnp.subtract(x_safe, lax.stop_gradient(x_max))
    shifted_lse = fnp.log(fnp.sum(fnp.exp(shifted), axis, where=where, keepdims=True))
    result = fnp.subtract(shifted, shifted_lse)
    if where is not None:
        return fnp.where(where, result, -np.inf)
    return result


def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """``log(sum(b * exp(a)))`` along ``axis``, stable for large inputs (``jax.nn.logsumexp``)."""
    if where is not None:
        a = fnp.where(where, a, 0)
    if b is not None:
        dt, weak = dtypes.result_type(operand(a, "logsumexp"), operand(b, "logsumexp"))
        dt = to_inexact(dt)
        a_arr, b_arr = convert(a, dt, weak), convert(b, dt, weak)
        a_arr = fnp.where(fnp.not_equal(b_arr, 0), a_arr, -np.inf)
    else:
        a_arr = _inexact(a, "logsumexp")
        b_arr = a_arr
    dims = normalize_axes(axis, a_arr.ndim)
    amax = fnp.max(fnp.real(a_arr), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    zero = fnp.zeros_like(amax)
    amax = lax.stop_gradient(lax.select_n(fnp.isfinite(amax), zero, amax))
    amax_with_dims = amax if keepdims or not dims else lax.expand_dims(amax, dims)
    amax_b = convert(amax_with_dims, a_arr.dtype, amax_with_dims.weak_type)
    exp_a = lax.exp(fnp.subtract(a_arr, amax_b))
    if b is not None:
        exp_a = fnp.multiply(exp_a, b_arr)
    sumexp = fnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not dtypes.is_complex(a_arr.dtype):
        sumexp = fnp.abs(sumexp)
    out = lax.add(lax.log(sumexp), convert(amax, sumexp.dtype, amax.weak_type))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        out = fnp.where(fnp.less(sign, 0), fnp.asarray(np.nan, dtype=out.dtype), out)
    return out


def one_hot(x: ArrayLike, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Array:
    """``x[..., None] == arange(num_classes)`` as ``dtype`` (default float)."""
    a = asarray(x, "one_hot")
    dt = fnp.float32 if dtype is None else dtype
    ax = axis % (a.ndim + 1)
    lhs = lax.expand_dims(a, (ax,))
    shape = list(a.shape)
    shape.insert(ax, num_classes)
    rhs = lax.broadcasted_iota(a.dtype if dtypes.is_integer(a.dtype) else dtypes.int32, tuple(shape), ax)
    eq = fnp.equal(fnp.broadcast_to(lhs, tuple(shape)), rhs)
    return fnp.asarray(eq, dtype=dt if dtype is not None else fnp.dtype(float))


def standardize(x: ArrayLike, axis: Axis = -1, mean: ArrayLike | None = None, variance: ArrayLike | None = None, epsilon: ArrayLike = 1e-5) -> Array:
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis``."""
    a = asarray(x, "standardize")
    m = fnp.mean(a, axis, keepdims=True) if mean is None else mean
    v = (
        fnp.subtract(fnp.mean(fnp.square(a), axis, keepdims=True), fnp.square(m))
        if variance is None
        else variance
    )
    return fnp.multiply(fnp.subtract(a, m), lax.rsqrt(fnp.add(v, epsilon)))

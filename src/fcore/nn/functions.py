"""Activation functions and softmax of ``fcore.nn`` (``jax.nn``'s formulas and dtypes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.custom import custom_jvp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert, normalize_axes, operand, to_inexact

__all__ = [
    "relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu", "elu", "selu",
    "leaky_relu", "celu", "hard_tanh", "soft_sign", "tanh", "softmax", "log_softmax", "logsumexp",
    "one_hot", "standardize", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "identity", "log1mexp",
    "logmeanexp", "mish", "sparse_plus", "sparse_sigmoid", "squareplus", "dot_product_attention",
]

Axis = int | Sequence[int] | None


def _inexact(x: ArrayLike, name: str) -> Array:
    dt, weak = operand(x, name)
    return convert(x, to_inexact(dt), weak)


@custom_jvp
def relu(x: ArrayLike) -> Array:
    """``max(x, 0)``; its derivative at 0 is 0, as in JAX (a custom jvp)."""
    return fnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(fnp.greater(x, 0), g, fnp.zeros_like(g)))


@custom_jvp
def relu6(x: ArrayLike) -> Array:
    """``min(max(x, 0), 6)``; its derivative is 0 at both kinks, as in JAX."""
    return fnp.minimum(fnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select(fnp.logical_and(fnp.greater(x, 0), fnp.less(x, 6)), g, fnp.zeros_like(g)))


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


def standardize(x: ArrayLike, axis: Axis = -1, mean: ArrayLike | None = None, variance: ArrayLike | None = None,
                epsilon: ArrayLike = 1e-5, where: ArrayLike | None = None, *, algorithm: str = "fast") -> Array:
    """``(x - mean) * rsqrt(variance + epsilon)`` along ``axis``; the ``"fast"`` variance
    ``mean(x**2) - mean**2`` is clipped at 0, the ``"stable"`` one is ``mean((x - mean)**2)``."""
    a = asarray(x, "standardize")
    m = fnp.mean(a, axis, keepdims=True, where=where) if mean is None else mean
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(fnp.subtract(a, m)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            v = fnp.subtract(fnp.mean(fnp.square(a), axis, keepdims=True, where=where), fnp.square(m))
            variance = fnp.clip(v, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return fnp.multiply(fnp.subtract(a, m), lax.rsqrt(fnp.add(variance, epsilon)))


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """Gated linear unit: the first half of ``x`` along ``axis`` times ``sigmoid`` of the second."""
    a = asarray(x, "glu")
    if a.shape[axis] % 2:
        raise AssertionError("axis size must be divisible by 2")
    x1, x2 = fnp.split(a, 2, axis)
    return fnp.multiply(x1, sigmoid(x2))


def hard_sigmoid(x: ArrayLike) -> Array:
    """``relu6(x + 3) / 6``."""
    return fnp.true_divide(relu6(fnp.add(x, 3.0)), 6.0)


def hard_silu(x: ArrayLike) -> Array:
    """``x * hard_sigmoid(x)``."""
    a = asarray(x, "hard_silu")
    return fnp.multiply(a, hard_sigmoid(a))


hard_swish = hard_silu


def identity(x: ArrayLike) -> Array:
    """``x`` itself (as an array)."""
    return asarray(x, "identity")


@custom_jvp
def log1mexp(x: ArrayLike) -> Array:
    """``log(1 - exp(-x))``, accurate for small and large ``x``."""
    a = asarray(x, "log1mexp")
    c = np.log(2.0)
    return fnp.where(fnp.less(a, c), fnp.log(fnp.negative(fnp.expm1(fnp.negative(a)))), fnp.log1p(fnp.negative(fnp.exp(fnp.negative(a)))))


log1mexp.defjvps(lambda g, ans, x: fnp.true_divide(g, fnp.expm1(x)))


def logmeanexp(x: ArrayLike, axis: Axis = None, where: ArrayLike | None = None, keepdims: bool = False) -> Array:
    """``log(mean(exp(x)))`` along ``axis``, computed stably."""
    a = asarray(x, "logmeanexp")
    lse: Array = logsumexp(a, axis=axis, where=where, keepdims=keepdims)
    if where is None:
        count = fnp.sum(fnp.ones_like(a, dtype=lse.dtype), axis=axis, keepdims=keepdims)
    else:
        count = fnp.sum(fnp.broadcast_to(where, a.shape), axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return fnp.subtract(lse, fnp.log(count))


def mish(x: ArrayLike) -> Array:
    """``x * tanh(softplus(x))``."""
    a = asarray(x, "mish")
    return fnp.multiply(a, fnp.tanh(softplus(a)))


def sparse_plus(x: ArrayLike) -> Array:
    """0 below -1, ``x`` above 1, ``(x + 1)**2 / 4`` in between."""
    a = asarray(x, "sparse_plus")
    middle = fnp.true_divide(fnp.power(fnp.add(a, 1.0), 2), 4)
    return fnp.where(fnp.less_equal(a, -1.0), 0.0, fnp.where(fnp.greater_equal(a, 1.0), a, middle))


def sparse_sigmoid(x: ArrayLike) -> Array:
    """``clip(x + 1, 0, 2) / 2``."""
    return fnp.multiply(0.5, fnp.clip(fnp.add(x, 1.0), 0.0, 2.0))


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Array:
    """``(x + sqrt(x**2 + b)) / 2``."""
    a, bb = asarray(x, "squareplus"), asarray(b, "squareplus", 1)
    return fnp.true_divide(fnp.add(a, fnp.sqrt(fnp.add(fnp.square(a), bb))), 2)


def _ensure_4d(t: ArrayLike) -> Array:
    a = fnp.asarray(t)
    return lax.expand_dims(a, tuple(range(4 - a.ndim))) if a.ndim < 4 else a


def _check(t: Array | None, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(s != -1 and d != s for d, s in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {tuple(shape)}: but got {t.shape}")


def dot_product_attention(
    query: ArrayLike, key: ArrayLike, value: ArrayLike, bias: ArrayLike | None = None, mask: ArrayLike | None = None, *,
    scale: float | None = None, is_causal: bool = False, query_seq_lengths: ArrayLike | None = None,
    key_value_seq_lengths: ArrayLike | None = None, local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None, return_residual: bool = False,
) -> Any:
    """Scaled dot-product attention over ``[batch, seq, heads, head_dim]`` arrays (JAX's XLA
    implementation: logits in at least float32, masks, softmax in float32, grouped heads)."""
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    output_shape = fnp.asarray(query).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    b_arr = _ensure_4d(bias) if bias is not None else None
    m_arr = _ensure_4d(mask) if mask is not None else None
    q_len = fnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_len = fnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    window = (local_window_size, local_window_size) if isinstance(local_window_size, int) else local_window_size
    B, S, K, H = k.shape
    _check(v, [B, S, K, H], k.dtype, "value")
    _check(q, [B, -1, -1, H], k.dtype, "query")
    _check(m_arr, [-1] * 4, np.dtype(bool), "mask")
    _check(b_arr, [-1] * 4, None, "bias")
    _check(q_len, [B], np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [B], np.dtype("int32"), "key_value_seq_lengths")
    N, T = q.shape[2], q.shape[1]
    if N % K:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but got {N} vs {K}")
    G = N // K
    scale_val = (1.0 / np.sqrt(H)) if scale is None else scale

    def grouped(t: Array | None) -> Array | None:  # [B, N, T, S] -> [B, K|1, G, T, S]
        if t is None:
            return None
        tb, tn, tt, ts = t.shape
        if tn == 1:
            return fnp.broadcast_to(lax.expand_dims(t, (2,)), (tb, 1, G, tt, ts))
        return fnp.reshape(t, (tb, K, G, tt, ts))

    q5 = fnp.reshape(q, (B, T, K, G, H))
    logits_dtype = fnp.promote_types(q.dtype, np.float32)
    logits = fnp.einsum("BTKGH,BSKH->BKGTS", q5, k, preferred_element_type=logits_dtype)
    logits = fnp.multiply(logits, fnp.asarray(scale_val, dtype=logits.dtype))
    gb = grouped(b_arr)
    if gb is not None:
        logits = fnp.asarray(fnp.add(logits, gb), dtype=logits.dtype)
    gm = grouped(m_arr)
    if gm is not None or is_causal or q_len is not None or kv_len is not None or window is not None:
        keep = fnp.ones_like(logits, dtype=bool)
        if gm is not None:
            keep = fnp.logical_and(keep, gm)
        if is_causal:
            keep = fnp.logical_and(keep, fnp.tril(fnp.ones((T, S), dtype=bool)))
        if window is not None:
            qpos, kpos = fnp.arange(T)[:, None], fnp.arange(S)[None, :]
            keep = fnp.logical_and(keep, fnp.logical_and(fnp.greater_equal(qpos, kpos - window[1]),
                                                         fnp.less_equal(qpos, kpos + window[0])))
        if q_len is not None or kv_len is not None:
            pad: Any = True
            if q_len is not None:
                pad = fnp.less(fnp.arange(T)[None, :, None], q_len[:, None, None])
            if kv_len is not None:
                pad = fnp.logical_and(pad, fnp.less(fnp.arange(S)[None, None, :], kv_len[:, None, None]))
            keep = fnp.logical_and(keep, lax.expand_dims(pad, (1, 2)))
        big = min(float(fnp.finfo(logits.dtype).max), float(np.finfo(np.float32).max))
        logits = fnp.where(keep, logits, fnp.asarray(-0.7 * big, dtype=logits.dtype))
    logits32 = fnp.asarray(logits, dtype=np.float32)
    probs = fnp.asarray(softmax(logits32, axis=-1), dtype=k.dtype)
    encoded = fnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if q_len is not None:
        valid = fnp.less(fnp.arange(T)[None, :], q_len[:, None])
        encoded = fnp.multiply(encoded, fnp.asarray(valid[:, :, None, None, None], dtype=encoded.dtype))
    out = fnp.reshape(encoded, output_shape)
    if not return_residual:
        return out
    lse = fnp.asarray(logsumexp(logits32, axis=-1), dtype=k.dtype)  # [B, K, G, T]
    lse = lax.stop_gradient(fnp.reshape(fnp.moveaxis(lse, 3, 1), (B, T, N)))
    return out, fnp.reshape(lse, output_shape[:-1])

"""Discrete samplers: ``poisson``, ``binomial``, ``multinomial``, ``geometric``,
``categorical``, ``choice`` and ``permutation``, with JAX's algorithms (Knuth's method and
transformed rejection for Poisson, inversion and BTRS for binomial, the Gumbel-max trick
for categories, repeated sorts by random keys for permutations)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore import numpy as fnp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.numpy._dtypes import finfo, iinfo
from fcore.numpy._promotion import to_inexact
from fcore.random._checks import (
    Shape, canonicalize_shape, check_broadcast_shapes, check_shape, float_dtype, normalize_axis, shape_of, user_dtype,
)
from fcore.random._continuous import gumbel, gumbel_floats, gumbel_mode
from fcore.random._compiled import operand, specialize
from fcore.random._key_ops import KeyArrayLike, split
from fcore.random._keys import check_prng_key
from fcore.random._threefry import threefry_random_bits, threefry_split
from fcore.random._uniform import randint, uniform, uniform_floats

__all__ = ["poisson", "binomial", "multinomial", "geometric", "categorical", "choice", "permutation"]


def _isnan(x: Array) -> Array:
    return lax.ne(x, x)


def _inexact(x: Any) -> Array:
    arr = fnp.asarray(x)
    return arr if dtypes.is_inexact(arr.dtype) else arr.astype(to_inexact(arr.dtype))


# -- poisson --------------------------------------------------------------------------------
def _poisson_knuth(key: Array, lam: Array, shape: Shape, dtype: DType, max_iters: Any) -> Array:
    """Count uniforms until their product falls below ``exp(-lam)`` (small ``lam``)."""
    State = tuple[Array, Array, Array, Array]

    def body(carry: State) -> State:
        i, k, rng, log_prod = carry
        keys = threefry_split(rng, (2,))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform_floats(keys[1], shape, dtypes.float32, 0.0, 1.0)
        return i + 1, k, keys[0], log_prod + fnp.log(u)

    def cond(carry: State) -> Array:
        i, log_prod = carry[0], carry[3]
        result: Array = fnp.any(log_prod > -lam) & (i < max_iters)
        return result

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, dtypes.float32, shape)
    k = lax.while_loop(cond, body, (fnp.asarray(0), k_init, key, log_rate_init))[1]
    result: Array = (k - 1).astype(dtype)
    return result


def _poisson_rejection(key: Array, lam: Array, shape: Shape, dtype: DType, max_iters: Any) -> Array:
    """Hörmann's transformed rejection with squeeze (large ``lam``)."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    State = tuple[Array, Array, Array, Array]

    def body(carry: State) -> State:
        i, k_out, accepted, rng = carry
        keys = threefry_split(rng, (3,))
        u = uniform_floats(keys[1], shape, lam.dtype, 0.0, 1.0) - 0.5
        v = uniform_floats(keys[2], shape, lam.dtype, 0.0, 1.0)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | (u_shifted < 0.013) & (v > u_shifted)
        accept2 = s <= t
        accept = accept1 | ~reject & accept2
        return i + 1, lax.select(accept, k, k_out), accepted | accept, keys[0]

    def cond(carry: State) -> Array:
        i, _, accepted, _ = carry
        result: Array = fnp.any(~accepted) & (i < max_iters)
        return result

    k_init = lax.full_like(lam, -1, lam.dtype, shape)
    accepted = lax.full_like(lam, False, dtypes.bool_, shape)
    k = lax.while_loop(cond, body, (fnp.asarray(0), k_init, accepted, key))[1]
    result: Array = k.astype(dtype)
    return result


def _poisson(key: Array, lam: Array, shape: Shape, dtype: DType) -> Array:
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 100000.0), lam)
    max_iters = dtype.type(iinfo(dtype).max)
    result = lax.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, fnp.zeros_like(result), result)



def poisson(key: KeyArrayLike, lam: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the Poisson distribution with rate ``lam`` (default dtype: the default int)."""
    data, _ = check_prng_key("poisson", key)
    dt = user_dtype(dtype, int)
    shp = shape_of(lam) if shape is None else canonicalize_shape(shape)
    rate = lax.convert_element_type(fnp.broadcast_to(lam, shp), dtypes.float32)
    return specialize(_poisson, shp, dt)(data, operand(rate))


# -- binomial, multinomial ------------------------------------------------------------------
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.010411265261972,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_approx_tail(k: Array) -> Array:
    tail = fnp.asarray(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(np.array(0.0, k.dtype), k, np.array(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(use_table, tail[fnp.asarray(fnp.floor(k), dtype=dtypes.int32)], approx)


def _binomial_inversion(key: Array, count: Array, prob: Array, shape: Shape, dtype: DType, max_iters: Any) -> Array:
    log1minusprob = fnp.log1p(-prob)
    State = tuple[Array, Array, Array, Array]

    def body(carry: State) -> State:
        i, num_geom, geom_sum, rng = carry
        keys = threefry_split(rng, (2,))
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform_floats(keys[0], shape, prob.dtype, 0.0, 1.0)
        geom = fnp.ceil(fnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, keys[1]

    def cond(carry: State) -> Array:
        i, geom_sum = carry[0], carry[2]
        result: Array = fnp.any(geom_sum <= count) & (i < max_iters)
        return result

    init = (fnp.asarray(0), lax.full_like(prob, 0, prob.dtype, shape), lax.full_like(prob, 0, prob.dtype, shape), key)
    k = lax.while_loop(cond, body, init)[1]
    result: Array = (k - 1).astype(dtype)
    return result


def _btrs(key: Array, count: Array, prob: Array, shape: Shape, dtype: DType, max_iters: Any) -> Array:
    """Hörmann's BTRS (transformed rejection with squeeze) for large ``count * prob``."""
    stddev = fnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * prob)
    State = tuple[Array, Array, Array, Array]

    def body(carry: State) -> State:
        i, k_out, accepted, rng = carry
        keys = threefry_split(rng, (3,))
        u = uniform_floats(keys[1], shape, prob.dtype, 0.0, 1.0)
        v = uniform_floats(keys[2], shape, prob.dtype, 0.0, 1.0)
        u = u - 0.5
        us = 0.5 - fnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = fnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = fnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * fnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * fnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | ~reject & accept2
        return i + 1, lax.select(accept, k, k_out), accepted | accept, keys[0]

    def cond(carry: State) -> Array:
        i, accepted = carry[0], carry[2]
        result: Array = fnp.any(~accepted) & (i < max_iters)
        return result

    init = (fnp.asarray(0), lax.full_like(prob, -1, prob.dtype, shape), fnp.full(shape, False, bool), key)
    result: Array = lax.while_loop(cond, body, init)[1].astype(dtype)
    return result


def _binomial(key: Array, count: Any, prob: Any, shape: Shape | None, dtype: DType) -> Array:
    if shape is None:
        shape = tuple(np.broadcast_shapes(shape_of(count), shape_of(prob)))
    else:
        check_shape("binomial", shape, shape_of(count), shape_of(prob))
    p = _inexact(prob)
    n = fnp.broadcast_to(lax.convert_element_type(count, p.dtype), shape)
    p = fnp.broadcast_to(p, shape)
    p_lt_half = p < 0.5
    q = lax.select(p_lt_half, p, 1.0 - p)
    count_nan_or_neg = _isnan(n) | (n < 0.0)
    count_inf = fnp.isinf(n)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (n * q <= 10.0)
    n = fnp.floor(n)
    count_inv = lax.select(use_inversion, n, lax.full_like(n, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(n, 1e4), n)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(finfo(dtype).max)
    samples = lax.select(use_inversion, _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, fnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, fnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples, n.astype(dtype) - samples)



def binomial(key: KeyArrayLike, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the binomial distribution: successes in ``n`` trials of probability ``p``
    (a float dtype, as in JAX)."""
    data, _ = check_prng_key("binomial", key)
    dt = float_dtype("binomial", dtype)
    return specialize(_binomial, None if shape is None else canonicalize_shape(shape), dt)(data, operand(n), operand(p))


def multinomial(key: KeyArrayLike, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Array:
    """Counts of ``n`` draws among categories of probabilities ``p`` (last axis): one
    binomial per category on the draws left, scanned over the categories."""
    check_prng_key("multinomial", key)
    n_arr, p_arr = _inexact(n), _inexact(p)
    dt = fnp.result_type(n_arr, p_arr)
    n_arr, p_arr = n_arr.astype(dt), p_arr.astype(dt)
    shp = tuple(p_arr.shape) if shape is None else canonicalize_shape(shape)
    n_arr = fnp.broadcast_to(n_arr, shp[:-1])
    p_arr = fnp.broadcast_to(p_arr, shp)

    def step(remainder: Array, ratio_key: tuple[Array, Any]) -> tuple[Array, Array]:
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p_first = fnp.moveaxis(p_arr, -1, 0)
    remaining = lax.cumsum(p_first, 0, reverse=True)
    ratios = p_first / fnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])
    _, counts = lax.scan(step, n_arr, (ratios, keys), unroll=unroll)
    return fnp.moveaxis(counts, 0, -1).astype(user_dtype(dtype, float))


# -- geometric ------------------------------------------------------------------------------
def _geometric(key: Array, p: Any, shape: Shape, dtype: DType) -> Array:
    prob = _inexact(p)
    u = uniform_floats(key, shape, prob.dtype, 0.0, 1.0)
    u = fnp.where(u == 0, 1, u)
    log_one_minus_p = fnp.broadcast_to(lax.log1p(-prob), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)



def geometric(key: KeyArrayLike, p: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the geometric distribution: trials up to the first success of probability ``p``."""
    data, _ = check_prng_key("geometric", key)
    dt = user_dtype(dtype, int)
    if not dtypes.is_integer(dt):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    shp = check_broadcast_shapes("geometric", shape, p)
    return specialize(_geometric, shp, dt)(data, operand(p))


# -- categorical ----------------------------------------------------------------------------
def _categorical(key: Array, logits: Array, shape: Shape, batch_shape: Shape, axis: int, replace: bool,
                 mode: str) -> Array:
    prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= logits.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits.ndim, logits.shape[axis])
        noise = gumbel_floats(key, (*prefix, *logits_shape), logits.dtype, mode)
        return fnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
    perturbed = logits + gumbel_floats(key, tuple(logits.shape), logits.dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of categories ({logits.shape[axis]})."
        )
    _, indices = lax.top_k(fnp.moveaxis(perturbed, axis, -1), k)
    return lax.reshape(indices, shape, (indices.ndim - 1, *range(indices.ndim - 1)))



def categorical(key: KeyArrayLike, logits: Any, axis: int = -1, shape: Any = None, replace: bool = True,
                mode: str | None = None) -> Array:
    """Category indices drawn with probabilities ``softmax(logits)`` along ``axis`` (the
    Gumbel-max trick; ``replace=False`` draws distinct categories by the Gumbel top-k)."""
    data, _ = check_prng_key("categorical", key)
    logits_arr = fnp.asarray(logits)
    ax = operator.index(axis)
    batch_shape = tuple(np.delete(np.array(logits_arr.shape, dtype=int), axis).tolist())
    if shape is None:
        shp = batch_shape
    else:
        shp = canonicalize_shape(shape)
        check_shape("categorical", shp, batch_shape)
    return specialize(_categorical, shp, batch_shape, ax, bool(replace), gumbel_mode(mode))(data, operand(logits_arr))


# -- permutations and choices ---------------------------------------------------------------
def _shuffle(key: Array, x: Array, axis: int) -> Array:
    """Sort by random 32-bit keys, in enough rounds that all elements got distinct keys in
    some round with high probability (JAX's ``_shuffle``)."""
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        keys = threefry_split(key, (2,))
        key = keys[0]
        sort_keys = threefry_random_bits(keys[1], 32, tuple(x.shape))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x



def permutation(key: KeyArrayLike, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of ``range(x)`` (an int), or of ``x`` along ``axis``
    (``independent=True`` shuffles each slice along ``axis`` independently)."""
    data, _ = check_prng_key("permutation", key)
    arr = fnp.asarray(x)
    ax = normalize_axis(axis, arr.ndim or 1)
    if not arr.ndim:
        if not dtypes.is_integer(arr.dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return specialize(_shuffle, ax)(data, fnp.arange(operator.index(x)))
    if independent or arr.ndim == 1:
        return specialize(_shuffle, ax)(data, operand(arr))
    ind = specialize(_shuffle, 0)(data, fnp.arange(arr.shape[ax]))
    return fnp.take(arr, ind, axis=ax)


def choice(key: KeyArrayLike, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None, axis: int = 0,
           mode: str | None = None) -> Array:
    """Samples of ``a`` (an array, or ``range(a)`` for an int) along ``axis``: with or
    without replacement, uniformly or with probabilities ``p``."""
    data, raw = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    arr = fnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = operator.index(a)
    else:
        axis = normalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(tuple(shape), dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(data, tuple(shape), 0, n_inputs)
            result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(data, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = _inexact(p)
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {tuple(p_arr.shape)} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = fnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(data, tuple(shape), dtype=p_cuml.dtype))
            ind = fnp.searchsorted(p_cuml, r).astype(int)
        else:  # the Gumbel top-k trick
            g = gumbel(data, (n_inputs,), dtype=p_arr.dtype, mode=mode) + fnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
    return result.reshape(tuple(shape) if arr.ndim == 0 else (*arr.shape[:axis], *shape, *arr.shape[axis + 1:]))

"""Gamma-based samplers: the ``random_gamma`` primitive (Marsaglia and Tsang's rejection
sampler, one key per element) with JAX's implicit reparameterisation gradient, and
``gamma``, ``loggamma``, ``beta``, ``dirichlet``, ``t``, ``chisquare``, ``f``,
``generalized_normal`` and ``ball`` built on it.

``random_gamma`` is a primitive, as in JAX, so that differentiating a sample with respect
to its shape parameter uses ``d sample / d a`` at a fixed quantile (``random_gamma_grad``)
rather than differentiating through the rejection loop. It lowers to its algorithm, traced,
and runs eagerly through the same compiled algorithm.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from fcore import lax
from fcore import numpy as fnp
from fcore.api.vectorize import vmap
from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType
from fcore.lax._base import NpArray, checked_impl
from fcore.lax._primitive import Primitive
from fcore.lax.call import hoist_consts, jit_p
from fcore.lax.igamma import random_gamma_grad
from fcore.numpy._dtypes import finfo
from fcore.random._checks import (
    Shape, canonicalize_shape, check_broadcast_shapes, check_safe_to_cast, check_shape, float_dtype, shape_of,
)
from fcore.random._continuous import exponential_floats, normal_floats
from fcore.random._compiled import operand, specialize
from fcore.random._key_ops import KeyArrayLike
from fcore.random._keys import check_prng_key
from fcore.random._threefry import threefry_split
from fcore.random._uniform import _rademacher, uniform_floats
from fcore.transforms.ad_util import Tangent, Zero
from fcore.transforms.batching import Dim, batching_rules, bdim_at
from fcore.transforms.jvp import jvp_rules

__all__ = ["random_gamma_p", "gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f", "generalized_normal",
           "ball"]


def _c(x: Array, value: float) -> NpArray:
    return np.array(value, x.dtype)


def _gamma_one(key: Array, alpha: Array, log_space: bool) -> Array:
    """One sample of ``Gamma(alpha, 1)`` (or its log) by Marsaglia and Tsang's method; for
    ``alpha < 1`` a sample of ``Gamma(alpha + 1)`` is boosted by ``u ** (1 / alpha)``."""
    zero, one, two, minus_one = _c(alpha, 0), _c(alpha, 1), _c(alpha, 2), _c(alpha, -1)
    one_over_two, one_over_three, squeeze_const = _c(alpha, 0.5), _c(alpha, 1.0 / 3.0), _c(alpha, 0.0331)
    dtype = alpha.dtype
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(state: tuple[Array, Array, Array, Array]) -> Array:
        _, x_sq, v, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(squeeze_const, lax.mul(x_sq, x_sq))))
        bound = lax.add(lax.mul(x_sq, one_over_two), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))
        accept = lax.ge(lax.log(u), bound)
        return lax.bitwise_and(squeeze, accept)

    def body_fn(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        def next_kxv(kxv: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
            keys = threefry_split(kxv[0], (2,))
            x = normal_floats(keys[1], (), dtype)
            return keys[0], x, lax.add(one, lax.mul(x, c))

        keys = threefry_split(state[0], (3,))
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv, (keys[1], zero, minus_one))
        u = uniform_floats(keys[2], (), dtype, 0.0, 1.0)
        return keys[0], lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    keys = threefry_split(key, (2,))
    _, _, v, _ = lax.while_loop(cond_fn, body_fn, (keys[0], zero, one, two))
    subkey = keys[1]
    if log_space:
        log_samples = lax.neg(exponential_floats(subkey, (), dtype))
        log_boost = lax.select(boost_mask | (log_samples == 0), zero, lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = 1 - uniform_floats(subkey, (), dtype, 0.0, 1.0)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_impl(key: Array, a: Array, log_space: bool) -> Array:
    """Each of ``a``'s elements gets a key of its own, split from the key over it."""
    key_ndim = key.ndim - 1
    split_count = math.prod(a.shape[key_ndim:])
    keys = fnp.reshape(key, (-1, 2))
    keys = vmap(lambda k: threefry_split(k, (split_count,)))(keys)
    samples = vmap(lambda k, x: _gamma_one(k, x, log_space))(fnp.reshape(keys, (-1, 2)), fnp.ravel(a))
    return fnp.reshape(samples, a.shape)


def _gamma_grad(sample: Array, a: Array, log_space: bool) -> Array:
    """``d sample / d a`` at the sample's fixed quantile (for log samples, of ``log sample``)."""
    samples = fnp.reshape(sample, (-1,))
    alphas = fnp.reshape(a, (-1,))
    if log_space:
        samples = lax.exp(samples)
        tiny = fnp.full_like(samples, finfo(samples.dtype).tiny)
        samples = lax.select(lax.eq(samples, fnp.zeros_like(samples)), tiny, samples)
        grads = random_gamma_grad(alphas, samples) / samples
    else:
        grads = random_gamma_grad(alphas, samples)
    return fnp.reshape(grads, a.shape)


# -- random_gamma ---------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class RandomGammaParams:
    """``random_gamma[log_space]``: samples of ``Gamma(a, 1)``, or their logs."""

    log_space: bool


random_gamma_p = Primitive("random_gamma", params=RandomGammaParams)


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(key: ShapedArray, a: ShapedArray, *, log_space: bool) -> ShapedArray:
    if key.dtype != dtypes.uint32 or key.shape[-1:] != (2,):
        raise TypeError(f"random_gamma: key data must be uint32[..., 2], got {key.str_short()}")
    if a.shape[: key.ndim - 1] != key.shape[:-1]:
        raise TypeError(f"random_gamma: the keys' shape {key.shape[:-1]} must prefix the shape of a, {a.shape}")
    if not dtypes.is_floating(a.dtype):
        raise TypeError(f"random_gamma: a must be a float array, got {a.str_short()}")
    return a



@checked_impl(random_gamma_p)
def _random_gamma_impl(key: NpArray, a: NpArray, *, log_space: bool) -> NpArray:
    return np.asarray(specialize(_gamma_impl, log_space)(key, a))


@jvp_rules.register(random_gamma_p, symbolic_zeros=True)
def _random_gamma_jvp(primals: list[Array], tangents: list[Tangent], *, log_space: bool) -> tuple[Array, Tangent]:
    key, a = primals
    out: Array = random_gamma_p.bind(key, a, log_space=log_space)
    ta = tangents[1]
    if type(ta) is Zero:
        return out, Zero(get_aval(out))
    return out, ta * _gamma_grad(out, a, log_space)


@batching_rules.register(random_gamma_p)
def _random_gamma_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, log_space: bool) -> tuple[Array, Dim]:
    key, a = (bdim_at(v, d, axis_size, 0) for v, d in zip(vals, dims))
    return random_gamma_p.bind(key, a, log_space=log_space), 0


@lowering_rules.register(random_gamma_p)
def _random_gamma_lowering(ctx: LoweringRuleContext, key: str, a: str, *, log_space: bool) -> str:
    """The sampler traced for the operand types and called as a private function."""
    closed = trace_to_jaxpr(lambda k, x: [_gamma_impl(k, x, log_space)], ctx.avals_in, "random_gamma")
    hoisted, consts = hoist_consts(closed)
    const_avals = [get_aval(c) for c in consts]
    operands = [ctx.constant(np.asarray(c), av.dtype, av.shape) for c, av in zip(consts, const_avals)]
    call_ctx = LoweringRuleContext(ctx.module, ctx.fn, [*const_avals, *ctx.avals_in], ctx.avals_out)
    outs = lowering_rules[jit_p](call_ctx, *operands, key, a, jaxpr=hoisted, name="random_gamma")
    return outs[0] if isinstance(outs, list) else outs


def _gamma(key: Array, a: Any, shape: Shape | None, dtype: DType, log_space: bool = False) -> Array:
    if shape is None:
        shape = shape_of(a)
    else:
        check_shape("gamma", shape, shape_of(a))
    alpha = lax.convert_element_type(a, dtype)
    if tuple(alpha.shape) != shape:
        alpha = fnp.broadcast_to(alpha, shape)
    out: Array = random_gamma_p.bind(key, alpha, log_space=log_space)
    return out



def gamma(key: KeyArrayLike, a: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of ``Gamma(a, 1)``; differentiable in ``a`` (implicit reparameterisation)."""
    data, _ = check_prng_key("gamma", key)
    dt = float_dtype("gamma", dtype)
    shp = None if shape is None else canonicalize_shape(shape)
    return specialize(_gamma, shp, dt, False)(data, operand(a))


def loggamma(key: KeyArrayLike, a: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Logs of samples of ``Gamma(a, 1)``, accurate for small ``a`` where the samples underflow."""
    data, _ = check_prng_key("loggamma", key)
    dt = float_dtype("gamma", dtype)
    shp = None if shape is None else canonicalize_shape(shape)
    return specialize(_gamma, shp, dt, True)(data, operand(a))


# -- samplers built on gamma ----------------------------------------------------------------
def _beta(key: Array, a: Any, b: Any, shape: Shape, dtype: DType) -> Array:
    """``Ga / (Ga + Gb)`` from log-gamma samples, scaled by their maximum against underflow."""
    check_shape("beta", shape, shape_of(a), shape_of(b))
    keys = threefry_split(key, (2,))
    a_full = fnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b_full = fnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    log_a = _gamma(keys[0], a_full, shape, dtype, log_space=True)
    log_b = _gamma(keys[1], b_full, shape, dtype, log_space=True)
    log_max = lax.max(log_a, log_b)
    scaled_a = fnp.exp(log_a - log_max)
    scaled_b = fnp.exp(log_b - log_max)
    return scaled_a / (scaled_a + scaled_b)



def beta(key: KeyArrayLike, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of ``Beta(a, b)``; differentiable in ``a`` and ``b``."""
    data, _ = check_prng_key("beta", key)
    dt = float_dtype("beta", dtype)
    check_safe_to_cast("beta", dt, a, b)
    shp = check_broadcast_shapes("beta", shape, a, b)
    return specialize(_beta, shp, dt)(data, operand(a), operand(b))


def _dirichlet(key: Array, alpha: Any, shape: Shape | None, dtype: DType) -> Array:
    # A lazy import breaks the cycle fcore.nn.initializers -> fcore.random -> fcore.nn.
    from fcore.nn.functions import softmax

    alpha_shape = shape_of(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        check_shape("dirichlet", shape, alpha_shape[:-1])
    a = lax.convert_element_type(alpha, dtype)
    log_samples = _gamma(key, a, (*shape, alpha_shape[-1]), dtype, log_space=True)
    return softmax(log_samples, -1)



def dirichlet(key: KeyArrayLike, alpha: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of ``Dirichlet(alpha)`` (the last axis of ``alpha`` indexes categories)."""
    data, _ = check_prng_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    return specialize(_dirichlet, None if shape is None else canonicalize_shape(shape), dt)(data, operand(alpha))


def _t(key: Array, df: Any, shape: Shape, dtype: DType) -> Array:
    check_shape("t", shape, shape_of(df))
    nu = lax.convert_element_type(df, dtype)
    keys = threefry_split(key, (2,))
    n = normal_floats(keys[0], shape, dtype)
    half_df = lax.div(nu, np.array(2, dtype))
    g = _gamma(keys[1], half_df, shape, dtype)
    return n * fnp.sqrt(half_df / g)



def t(key: KeyArrayLike, df: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of Student's t distribution with ``df`` degrees of freedom."""
    data, _ = check_prng_key("t", key)
    dt = float_dtype("t", dtype)
    shp = check_broadcast_shapes("t", shape, df)
    check_safe_to_cast("t", dt, df)
    return specialize(_t, shp, dt)(data, operand(df))


def _chisquare(key: Array, df: Any, shape: Shape, dtype: DType) -> Array:
    nu = lax.convert_element_type(df, dtype)
    two = np.array(2, dtype)
    log_g = _gamma(key, lax.div(nu, two), shape, dtype, log_space=True)
    return lax.mul(fnp.exp(log_g), two)



def chisquare(key: KeyArrayLike, df: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the chi-square distribution with ``df`` degrees of freedom."""
    data, _ = check_prng_key("chisquare", key)
    dt = float_dtype("chisquare", dtype)
    shp = check_broadcast_shapes("chisquare", shape, df)
    check_safe_to_cast("chisquare", dt, df)
    return specialize(_chisquare, shp, dt)(data, operand(df))


def _f(key: Array, dfnum: Any, dfden: Any, shape: Shape, dtype: DType) -> Array:
    den_df = lax.convert_element_type(dfden, dtype)
    num_df = lax.convert_element_type(dfnum, dtype)
    keys = threefry_split(key, (2,))
    chi2_num = _chisquare(keys[1], num_df, shape, dtype)
    chi2_den = _chisquare(keys[0], den_df, shape, dtype)
    return lax.div(lax.div(chi2_num, num_df), lax.div(chi2_den, den_df))



def f(key: KeyArrayLike, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Samples of the F distribution with ``dfnum`` and ``dfden`` degrees of freedom."""
    data, _ = check_prng_key("f", key)
    dt = float_dtype("f", dtype)
    shp = check_broadcast_shapes("f", shape, dfnum, dfden)
    check_safe_to_cast("f", dt, dfnum, dfden)
    return specialize(_f, shp, dt)(data, operand(dfnum), operand(dfden))


def _generalized_normal(key: Array, p: Any, shape: Shape, dtype: DType) -> Array:
    keys = threefry_split(key, (2,))
    g = _gamma(keys[0], 1 / p, shape, dtype)
    r = _rademacher(keys[1], shape, dtype)
    result: Array = r * g ** (1 / p)
    return result



def generalized_normal(key: KeyArrayLike, p: float, shape: Any = (), dtype: Any = None) -> Array:
    """Samples of the generalized normal distribution with density ``∝ exp(-|x|**p)``."""
    shp = canonicalize_shape(shape)
    data, _ = check_prng_key("generalized_normal", key)
    return specialize(_generalized_normal, shp, float_dtype("generalized_normal", dtype))(data, operand(p))


def _ball(key: Array, p: Any, d: int, shape: Shape, dtype: DType) -> Array:
    keys = threefry_split(key, (2,))
    g = _generalized_normal(keys[0], p, (*shape, d), dtype)
    e = exponential_floats(keys[1], shape, dtype)
    result: Array = g / (((fnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
    return result



def ball(key: KeyArrayLike, d: int, p: float = 2, shape: Any = (), dtype: Any = None) -> Array:
    """Points uniformly distributed in the unit ``p``-norm ball of dimension ``d``."""
    shp = canonicalize_shape(shape)
    data, _ = check_prng_key("ball", key)
    dim = int(d)
    return specialize(_ball, dim, shp, float_dtype("ball", dtype))(data, operand(p))

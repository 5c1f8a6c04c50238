"""fcore.random's samplers against jax.random: the same key gives the same numbers (exactly;
the two factorization-based samplers to float rounding), dtypes and shapes, eagerly, under
jit and under vmap, with and without x64."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.random as fr

Sampler = Callable[[Any, Any], Any]

F32 = np.float32
P3 = np.array([0.2, 0.3, 0.5], F32)
P4 = np.array([0.1, 0.2, 0.3, 0.4], F32)
LOGITS = np.array([[0.1, 2.0, -1.0], [0.0, 0.0, 0.0]], F32)
X = np.arange(12.0, dtype=F32).reshape(3, 4)
ALPHAS = np.array([0.1, 0.9, 1.0, 3.0, 10.0], F32)

#: name -> sampler(random_module, key): run with fcore.random and with jax.random.
CASES: dict[str, Sampler] = {
    "bits": lambda r, k: r.bits(k, (3, 4)),
    "bits_uint8": lambda r, k: r.bits(k, (5,), np.uint8),
    "bits_uint16": lambda r, k: r.bits(k, (5,), np.uint16),
    "uniform": lambda r, k: r.uniform(k, (3, 4)),
    "uniform_bounds": lambda r, k: r.uniform(k, (7,), minval=-2.0, maxval=3.0),
    "uniform_array_bounds": lambda r, k: r.uniform(k, (2, 3), minval=np.zeros(3, F32),
                                                   maxval=np.arange(1.0, 4.0, dtype=F32)),
    "uniform_float16": lambda r, k: r.uniform(k, (5,), np.float16),
    "uniform_bfloat16": lambda r, k: r.uniform(k, (5,), jnp.bfloat16),
    "uniform_scalar": lambda r, k: r.uniform(k),
    "uniform_empty": lambda r, k: r.uniform(k, (0, 3)),
    "normal": lambda r, k: r.normal(k, (3, 4)),
    "normal_float16": lambda r, k: r.normal(k, (5,), np.float16),
    "normal_complex64": lambda r, k: r.normal(k, (5,), np.complex64),
    "truncated_normal": lambda r, k: r.truncated_normal(k, -1.0, 2.0, (6,)),
    "truncated_normal_broadcast": lambda r, k: r.truncated_normal(k, np.array([-3.0, 0.0], F32), 1.0),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (8,)),
    "bernoulli_array_p": lambda r, k: r.bernoulli(k, P3),
    "bernoulli_high": lambda r, k: r.bernoulli(k, 0.3, (8,), mode="high"),
    "rademacher": lambda r, k: r.rademacher(k, (8,)),
    "randint": lambda r, k: r.randint(k, (3, 4), 0, 10),
    "randint_int8": lambda r, k: r.randint(k, (6,), -3, 300, np.int8),
    "randint_uint8_full": lambda r, k: r.randint(k, (6,), 0, 256, np.uint8),
    "randint_uint32": lambda r, k: r.randint(k, (6,), 0, np.uint32(2**32 - 1), np.uint32),
    "randint_wide": lambda r, k: r.randint(k, (6,), -(2**31), 2**31 - 1),
    "randint_empty_range": lambda r, k: r.randint(k, (6,), 5, 2),
    "randint_array_bounds": lambda r, k: r.randint(k, (2, 3), np.array([0, 10, 20]), np.array([[5], [100]])),
    "exponential": lambda r, k: r.exponential(k, (6,)),
    "laplace": lambda r, k: r.laplace(k, (6,)),
    "logistic": lambda r, k: r.logistic(k, (6,)),
    "cauchy": lambda r, k: r.cauchy(k, (6,)),
    "gumbel": lambda r, k: r.gumbel(k, (6,)),
    "gumbel_high": lambda r, k: r.gumbel(k, (6,), mode="high"),
    "gumbel_highest": lambda r, k: r.gumbel(k, (6,), mode="highest"),
    "maxwell": lambda r, k: r.maxwell(k, (6,)),
    "double_sided_maxwell": lambda r, k: r.double_sided_maxwell(k, 1.0, 2.0, (6,)),
    "weibull_min": lambda r, k: r.weibull_min(k, 2.0, 1.5, (6,)),
    "pareto": lambda r, k: r.pareto(k, 3.0, (6,)),
    "rayleigh": lambda r, k: r.rayleigh(k, 3.0, (6,)),
    "wald": lambda r, k: r.wald(k, 3.0, (6,)),
    "triangular": lambda r, k: r.triangular(k, 0.0, 1.0, 3.0, (6,)),
    "lognormal": lambda r, k: r.lognormal(k, 0.5, (6,)),
    "geometric": lambda r, k: r.geometric(k, 0.3, (6,)),
    "gamma": lambda r, k: r.gamma(k, 0.7, (6,)),
    "gamma_alphas": lambda r, k: r.gamma(k, ALPHAS),
    "gamma_broadcast": lambda r, k: r.gamma(k, ALPHAS, (2, 5)),
    "loggamma": lambda r, k: r.loggamma(k, 0.3, (6,)),
    "beta": lambda r, k: r.beta(k, 2.0, 3.0, (6,)),
    "beta_small": lambda r, k: r.beta(k, 0.1, 0.2, (6,)),
    "dirichlet": lambda r, k: r.dirichlet(k, np.array([1.0, 2.0, 3.0], F32), (4,)),
    "t": lambda r, k: r.t(k, 3.0, (6,)),
    "chisquare": lambda r, k: r.chisquare(k, 3.0, (6,)),
    "f": lambda r, k: r.f(k, 3.0, 4.0, (6,)),
    "generalized_normal": lambda r, k: r.generalized_normal(k, 1.5, (6,)),
    "ball": lambda r, k: r.ball(k, 3, 2, (4,)),
    "poisson": lambda r, k: r.poisson(k, 3.0, (6,)),
    "poisson_rates": lambda r, k: r.poisson(k, np.array([0.0, 0.5, 5.0, 20.0, 100.0], F32)),
    "binomial": lambda r, k: r.binomial(k, 10.0, 0.3, (6,)),
    "binomial_large": lambda r, k: r.binomial(k, 100.0, np.array([0.3, 0.7], F32), (3, 2)),
    "multinomial": lambda r, k: r.multinomial(k, 10.0, P3),
    "categorical": lambda r, k: r.categorical(k, LOGITS),
    "categorical_shape": lambda r, k: r.categorical(k, LOGITS, shape=(5, 2)),
    "categorical_axis0": lambda r, k: r.categorical(k, LOGITS, axis=0),
    "categorical_without_replacement": lambda r, k: r.categorical(k, LOGITS, shape=(2, 2), replace=False),
    "choice": lambda r, k: r.choice(k, 10, (4,)),
    "choice_without_replacement": lambda r, k: r.choice(k, 10, (4,), replace=False),
    "choice_p": lambda r, k: r.choice(k, 4, (6,), p=P4),
    "choice_p_without_replacement": lambda r, k: r.choice(k, 4, (3,), p=P4, replace=False),
    "choice_array_axis": lambda r, k: r.choice(k, X, (2,), axis=1),
    "permutation_int": lambda r, k: r.permutation(k, 10),
    "permutation_array": lambda r, k: r.permutation(k, X, axis=1),
    "permutation_independent": lambda r, k: r.permutation(k, X, axis=1, independent=True),
}

#: Samplers that factorize (Cholesky, QR, SVD, eigh): the same LAPACK kernels as JAX, so the same bits.
ROUNDED: dict[str, Sampler] = {
    "multivariate_normal_svd": lambda r, k: r.multivariate_normal(
        k, np.zeros(3, F32), np.eye(3, dtype=F32) + 0.5, method="svd"),
    "multivariate_normal_eigh": lambda r, k: r.multivariate_normal(
        k, np.zeros(3, F32), np.eye(3, dtype=F32) + 0.5, method="eigh"),
    "multivariate_normal": lambda r, k: r.multivariate_normal(k, np.zeros(3, F32), np.eye(3, dtype=F32) + 0.5),
    "multivariate_normal_batch": lambda r, k: r.multivariate_normal(
        k, np.arange(6.0, dtype=F32).reshape(2, 3), np.eye(3, dtype=F32), (4, 2)),
    "orthogonal": lambda r, k: r.orthogonal(k, 4),
    "orthogonal_rect": lambda r, k: r.orthogonal(k, 3, (2,), m=5),
}

SEEDS = (0, 42)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax's x64 truncation warnings
        yield


def assert_same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_sampler_matches_jax(name: str, seed: int) -> None:
    sample = CASES[name]
    assert_same(sample(fr, fr.PRNGKey(seed)), sample(jax.random, jax.random.PRNGKey(seed)))


@pytest.mark.parametrize("name", sorted(ROUNDED))
def test_factorization_samplers_match_jax(name: str) -> None:
    sample = ROUNDED[name]
    assert_same(sample(fr, fr.PRNGKey(1)), sample(jax.random, jax.random.PRNGKey(1)))


@pytest.mark.parametrize("name", ["uniform", "normal", "gamma_alphas", "randint_int8", "choice_p", "poisson_rates",
                                  "permutation_array", "binomial_large", "beta", "categorical_shape"])
def test_typed_keys_give_the_same_numbers(name: str) -> None:
    sample = CASES[name]
    assert_same(sample(fr, fr.key(7)), sample(jax.random, jax.random.key(7)))
    assert_same(sample(fr, fr.key(7)), sample(fr, fr.PRNGKey(7)))


X64_CASES = ["bits", "uniform", "uniform_bounds", "normal", "normal_complex64", "randint", "randint_wide", "gamma",
             "poisson", "categorical", "bernoulli", "exponential", "truncated_normal", "rademacher", "choice_p",
             "geometric", "beta", "t"]


@pytest.mark.parametrize("name", X64_CASES)
def test_sampler_matches_jax_with_x64(name: str) -> None:
    sample = CASES[name]
    with fcore.enable_x64(True), jax.enable_x64(True):
        assert_same(sample(fr, fr.PRNGKey(3)), sample(jax.random, jax.random.PRNGKey(3)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, jnp.bfloat16])
def test_explicit_dtypes_with_x64(dtype: Any) -> None:
    with fcore.enable_x64(True), jax.enable_x64(True):
        k, jk = fr.PRNGKey(11), jax.random.PRNGKey(11)
        for f in ("uniform", "normal", "exponential", "gumbel", "cauchy"):
            assert_same(getattr(fr, f)(k, (9,), dtype), getattr(jax.random, f)(jk, (9,), dtype))
        for d in (np.uint8, np.uint16, np.uint32, np.uint64):
            assert_same(fr.bits(k, (9,), d), jax.random.bits(jk, (9,), d))


@pytest.mark.parametrize("name", ["uniform_array_bounds", "normal", "gamma_broadcast", "randint_array_bounds",
                                  "choice_without_replacement", "categorical", "dirichlet", "multinomial",
                                  "binomial_large", "poisson_rates", "permutation_independent", "gumbel_highest"])
def test_sampler_under_jit(name: str) -> None:
    sample = CASES[name]
    k = fr.PRNGKey(5)
    eager = sample(fr, k)
    assert_same(fcore.jit(lambda key: sample(fr, key))(k), eager)
    assert_same(eager, jax.jit(lambda key: sample(jax.random, key))(jax.random.PRNGKey(5)))


@pytest.mark.parametrize("name", ["uniform_bounds", "normal", "gamma_alphas", "randint_int8", "bernoulli_array_p",
                                  "choice_p", "permutation_array", "loggamma", "poisson", "categorical_shape",
                                  "truncated_normal", "beta", "orthogonal"])
def test_vmap_over_keys_equals_a_loop(name: str) -> None:
    sample = (CASES | ROUNDED)[name]
    keys = fr.split(fr.PRNGKey(9), 3)
    batched = np.asarray(fcore.vmap(lambda key: sample(fr, key))(keys))
    looped = np.stack([np.asarray(sample(fr, keys[i])) for i in range(3)])
    assert batched.dtype == looped.dtype
    if name in ROUNDED:
        np.testing.assert_allclose(batched, looped, rtol=2e-5, atol=2e-6)
        return
    np.testing.assert_array_equal(batched, looped)
    jax_batched = jax.vmap(lambda key: sample(jax.random, key))(jax.random.split(jax.random.PRNGKey(9), 3))
    assert_same(batched, jax_batched)


@pytest.mark.parametrize("name", ["uniform_bounds", "normal", "gamma", "randint"])
def test_vmap_over_typed_keys(name: str) -> None:
    sample = CASES[name]
    keys, jkeys = fr.split(fr.key(2), 4), jax.random.split(jax.random.key(2), 4)
    assert_same(fcore.vmap(lambda key: sample(fr, key))(keys), jax.vmap(lambda key: sample(jax.random, key))(jkeys))


def test_vmap_over_parameters() -> None:
    k, jk = fr.PRNGKey(4), jax.random.PRNGKey(4)
    assert_same(fcore.vmap(lambda a: fr.gamma(k, a, (3,)))(ALPHAS),
                jax.vmap(lambda a: jax.random.gamma(jk, a, (3,)))(ALPHAS))
    lo = np.array([-1.0, 0.0, 5.0], F32)
    assert_same(fcore.vmap(lambda m: fr.uniform(k, (2,), minval=m, maxval=m + 1))(lo),
                jax.vmap(lambda m: jax.random.uniform(jk, (2,), minval=m, maxval=m + 1))(lo))
    assert_same(fcore.vmap(lambda p: fr.bernoulli(k, p, (4,)))(P3),
                jax.vmap(lambda p: jax.random.bernoulli(jk, p, (4,)))(P3))


def test_batched_keys_with_in_axes_1() -> None:
    data = np.asarray(fr.split(fr.PRNGKey(3), 4)).T  # keys along axis 1
    out = fcore.vmap(lambda key: fr.normal(key, (2,)), in_axes=1)(data)
    assert_same(out, jax.vmap(lambda key: jax.random.normal(key, (2,)), in_axes=1)(data))

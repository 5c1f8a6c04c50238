"""fcore.random under transformations: gradients of reparameterised samples and of gamma,
beta and dirichlet (implicit reparameterisation, as JAX), key splitting inside scan and
fori_loop, typed keys through jit/vmap/scan, and what the staged programs contain."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
import fcore.random as fr
from fcore import lax


def assert_same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


def assert_close(got: Any, want: Any, rtol: float = 1e-5) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)


K, JK = fr.PRNGKey(3), jax.random.PRNGKey(3)


def test_grad_of_a_reparameterised_normal() -> None:
    def f(mu: Any, sigma: Any) -> Any:
        return fnp.sum(fnp.tanh(mu + sigma * fr.normal(K, (5,))))

    def jf(mu: Any, sigma: Any) -> Any:
        return jnp.sum(jnp.tanh(mu + sigma * jax.random.normal(JK, (5,))))

    got = fcore.grad(f, argnums=(0, 1))(0.5, 2.0)
    want = jax.grad(jf, argnums=(0, 1))(0.5, 2.0)
    for g, w in zip(got, want):
        assert_close(g, w)
    assert_close(fcore.jit(fcore.grad(f))(0.5, 2.0), jax.jit(jax.grad(jf))(0.5, 2.0))


@pytest.mark.parametrize("alpha", [0.2, 1.0, 1.5, 7.0])
def test_grad_of_gamma_is_the_implicit_reparameterisation(alpha: float) -> None:
    got = fcore.grad(lambda a: fnp.sum(fr.gamma(K, a, (4,))))(alpha)
    want = jax.grad(lambda a: jnp.sum(jax.random.gamma(JK, a, (4,))))(alpha)
    assert_close(got, want, rtol=1e-4)


def test_grad_of_gamma_matches_the_cdf_identity() -> None:
    """d sample / d a = -(dP/da) / (dP/dx) at the sample, the implicit function theorem."""
    alphas = np.array([0.3, 1.0, 2.5, 9.0], np.float32)
    samples = np.asarray(fr.gamma(K, alphas), np.float64)
    grads = np.asarray(fcore.grad(lambda a: fnp.sum(fr.gamma(K, a)))(alphas))  # each sample depends on its alpha
    h = 1e-5
    with jax.enable_x64(True):
        a, x = alphas.astype(np.float64), samples
        dp_da = (jax.scipy.special.gammainc(a + h, x) - jax.scipy.special.gammainc(a - h, x)) / (2 * h)
        dp_dx = np.exp((a - 1) * np.log(x) - x - np.asarray(jax.scipy.special.gammaln(a)))
        np.testing.assert_allclose(grads, -np.asarray(dp_da) / dp_dx, rtol=2e-3)


def test_grad_of_loggamma_beta_dirichlet_match_jax() -> None:
    assert_close(fcore.grad(lambda a: fnp.sum(fr.loggamma(K, a, (4,))))(0.2),
                 jax.grad(lambda a: jnp.sum(jax.random.loggamma(JK, a, (4,))))(0.2), rtol=1e-4)
    got = fcore.grad(lambda a, b: fnp.sum(fr.beta(K, a, b, (4,))), argnums=(0, 1))(1.5, 2.0)
    want = jax.grad(lambda a, b: jnp.sum(jax.random.beta(JK, a, b, (4,))), argnums=(0, 1))(1.5, 2.0)
    for g, w in zip(got, want):
        assert_close(g, w, rtol=1e-4)
    alpha = np.array([1.0, 2.0, 3.0], np.float32)
    weights = np.array([1.0, -2.0, 0.5], np.float32)
    assert_close(fcore.grad(lambda a: fnp.sum(fr.dirichlet(K, a) * weights))(alpha),
                 jax.grad(lambda a: jnp.sum(jax.random.dirichlet(JK, a) * weights))(alpha), rtol=1e-4)


def test_grad_through_t_and_chisquare_parameters() -> None:
    assert_close(fcore.grad(lambda d: fnp.sum(fr.chisquare(K, d, (3,))))(3.0),
                 jax.grad(lambda d: jnp.sum(jax.random.chisquare(JK, d, (3,))))(3.0), rtol=1e-4)
    assert_close(fcore.grad(lambda d: fnp.sum(fr.t(K, d, (3,))))(4.0),
                 jax.grad(lambda d: jnp.sum(jax.random.t(JK, d, (3,))))(4.0), rtol=1e-4)


def test_grad_of_gamma_under_jit_and_vmap() -> None:
    alphas = np.array([0.5, 2.0, 4.0], np.float32)
    f = fcore.jit(fcore.vmap(fcore.grad(lambda a: fnp.sum(fr.gamma(K, a, (2,))))))
    jf = jax.jit(jax.vmap(jax.grad(lambda a: jnp.sum(jax.random.gamma(JK, a, (2,))))))
    assert_close(f(alphas), jf(alphas), rtol=1e-4)


def test_jvp_of_gamma_and_the_key_has_no_tangent() -> None:
    out, tangent = fcore.jvp(lambda a: fr.gamma(K, a, (3,)), (2.0,), (1.0,))
    jout, jtangent = jax.jvp(lambda a: jax.random.gamma(JK, a, (3,)), (2.0,), (1.0,))
    assert_same(out, jout)
    assert_close(tangent, jtangent, rtol=1e-4)


def _scan_body(random: Any, split_one: bool = True) -> Any:
    def body(carry: Any, x: Any) -> Any:
        key, total = carry
        key, sub = random.split(key)
        return (key, total + random.uniform(sub) * x), random.normal(sub, (2,))

    return body


def test_scan_splitting_keys_matches_jax() -> None:
    xs = np.arange(1.0, 6.0, dtype=np.float32)
    (k, total), ys = lax.scan(_scan_body(fr), (K, np.float32(0)), xs)
    (jk, jtotal), jys = jax.lax.scan(_scan_body(jax.random), (JK, np.float32(0)), xs)
    assert_same(k, jk)
    assert_same(ys, jys)
    assert_close(total, jtotal)  # the body's own ``total + u * x`` may round differently (XLA fuses it)
    jitted = fcore.jit(lambda c, v: lax.scan(_scan_body(fr), c, v))((K, np.float32(0)), xs)
    assert_same(jitted[1], ys)
    jax_jitted = jax.jit(lambda c, v: jax.lax.scan(_scan_body(jax.random), c, v))((JK, np.float32(0)), xs)
    assert_same(jitted[0][1], jax_jitted[0][1])


def test_scan_over_typed_keys_matches_jax() -> None:
    keys, jkeys = fr.split(fr.key(4), 5), jax.random.split(jax.random.key(4), 5)
    _, ys = lax.scan(lambda c, k: (c, fr.normal(k, (3,))), 0.0, keys)
    _, jys = jax.lax.scan(lambda c, k: (c, jax.random.normal(k, (3,))), 0.0, jkeys)
    assert_same(ys, jys)
    final, _ = lax.scan(lambda k, _: (fr.split(k)[0], None), fr.key(4), None, length=3)
    jfinal, _ = jax.lax.scan(lambda k, _: (jax.random.split(k)[0], None), jax.random.key(4), None, length=3)
    assert isinstance(final, fr.PRNGKeyArray)
    assert_same(fr.key_data(final), jax.random.key_data(jfinal))


def test_fori_loop_with_fold_in_and_split_matches_jax() -> None:
    def body(random: Any) -> Any:
        def step(i: Any, carry: Any) -> Any:
            key, acc = carry
            key, sub = random.split(key)
            return key, acc + random.normal(random.fold_in(sub, i), (3,))

        return step

    got = lax.fori_loop(0, 6, body(fr), (K, np.zeros(3, np.float32)))
    want = jax.lax.fori_loop(0, 6, body(jax.random), (JK, np.zeros(3, np.float32)))
    assert_same(got[0], want[0])
    assert_close(got[1], want[1])  # ``acc + normal`` may fuse into one rounding in XLA
    jitted = fcore.jit(lambda c: lax.fori_loop(0, 6, body(fr), c))((K, np.zeros(3, np.float32)))
    jax_jitted = jax.jit(lambda c: jax.lax.fori_loop(0, 6, body(jax.random), c))((JK, np.zeros(3, np.float32)))
    assert_same(jitted[1], jax_jitted[1])


def test_while_loop_rejection_sampling_in_the_user_program() -> None:
    def draw(random: Any, key: Any) -> Any:
        def cond(c: Any) -> Any:
            return c[1] < 0.9

        def body(c: Any) -> Any:
            k, _ = c
            k, sub = random.split(k)
            return k, random.uniform(sub)

        loop = jax.lax.while_loop if random is jax.random else lax.while_loop
        return loop(cond, body, (key, 0.0))

    got, want = draw(fr, K), draw(jax.random, JK)
    assert_same(got[1], want[1])


def test_typed_keys_through_jit() -> None:
    f = fcore.jit(lambda k: fr.split(k, 3))
    keys = f(fr.key(6))
    assert isinstance(keys, fr.PRNGKeyArray) and keys.shape == (3,)
    assert_same(fr.key_data(keys), jax.random.key_data(jax.random.split(jax.random.key(6), 3)))
    g = fcore.jit(lambda k, x: x + fr.normal(k, x.shape))
    jg = jax.jit(lambda k, x: x + jax.random.normal(k, x.shape))
    assert_same(g(fr.key(6), np.ones(3, np.float32)), jg(jax.random.key(6), np.ones(3, np.float32)))


def test_jaxpr_shows_threefry_and_key_data() -> None:
    text = str(fcore.make_jaxpr(lambda k: fr.uniform(k, (3,)))(fr.key(0)))
    assert text.startswith("{ lambda ; a:u32[2]. let")  # a typed key is its uint32 data
    assert "jit[" in text and "name=_uniform" in text
    assert "threefry2x32" in text and "iota_2x32_shape[shape=(3,)]" in text
    assert "bitcast_convert_type[new_dtype=float32]" in text
    split = fcore.make_jaxpr(lambda k: fr.split(k))(fr.PRNGKey(0))
    assert [e.primitive.name for e in split.jaxpr.eqns] == ["jit"]
    assert fcore.core.typecheck(split) is not None


def test_gamma_is_a_primitive_in_the_jaxpr() -> None:
    closed = fcore.make_jaxpr(lambda a: fr.gamma(K, a))(1.0)
    inner = closed.jaxpr.eqns[0].params["jaxpr"]
    assert isinstance(inner, fcore.core.ClosedJaxpr)
    assert "random_gamma[log_space=False]" in str(inner)
    assert fr.random_gamma_p.name == "random_gamma"


def test_parsed_jaxpr_of_a_sampler_round_trips() -> None:
    closed = fcore.make_jaxpr(lambda k: fr.normal(k, (4,)))(K)
    assert fcore.core.parse_jaxpr(str(closed.jaxpr)) == closed.jaxpr


def test_stop_gradient_of_keys_and_integer_outputs_have_no_tangent() -> None:
    grads = fcore.grad(lambda x: fnp.sum(x * fr.randint(K, (3,), 0, 5).astype(np.float32)))(1.0)
    jgrads = jax.grad(lambda x: jnp.sum(x * jax.random.randint(JK, (3,), 0, 5).astype(np.float32)))(1.0)
    assert_same(grads, jgrads)


def test_seeds_under_vmap_and_jit() -> None:
    seeds = np.arange(4)
    assert_same(fcore.vmap(fr.PRNGKey)(seeds), jax.vmap(jax.random.PRNGKey)(seeds))
    keys = fcore.vmap(fr.key)(seeds)
    assert isinstance(keys, fr.PRNGKeyArray) and keys.shape == (4,)
    assert_same(fr.key_data(keys), jax.random.key_data(jax.vmap(jax.random.key)(seeds)))
    assert_same(fcore.jit(fr.PRNGKey)(7), jax.random.PRNGKey(7))
    assert_same(fcore.jit(lambda s: fr.normal(fr.key(s), (2,)))(7),
                jax.jit(lambda s: jax.random.normal(jax.random.key(s), (2,)))(7))


def test_nested_vmap_and_batched_fold_in() -> None:
    keys = fr.split(fr.PRNGKey(0), (2, 3))
    jkeys = jax.random.split(jax.random.PRNGKey(0), (2, 3))
    assert_same(fcore.vmap(fcore.vmap(lambda k: fr.uniform(k, (2,))))(keys),
                jax.vmap(jax.vmap(lambda k: jax.random.uniform(k, (2,))))(jkeys))
    typed, jtyped = fr.split(fr.key(0), 3), jax.random.split(jax.random.key(0), 3)
    folded = fcore.vmap(fr.fold_in)(typed, np.arange(3))
    assert_same(fr.key_data(folded), jax.random.key_data(jax.vmap(jax.random.fold_in)(jtyped, np.arange(3))))


def test_grad_with_a_key_among_the_arguments() -> None:
    params = {"w": np.ones(3, np.float32)}
    got = fcore.grad(lambda p, k: (p["w"] * fr.normal(k, (3,))).sum())(params, fr.key(1))
    want = jax.grad(lambda p, k: (p["w"] * jax.random.normal(k, (3,))).sum())(params, jax.random.key(1))
    assert_same(got["w"], want["w"])

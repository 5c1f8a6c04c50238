"""The PRNG's primitives: threefry2x32 and iota_2x32_shape (eager NumPy impl, StableHLO
lowering, batching, shape and dtype errors) against JAX's threefry2x32_p; the bit-level
primitives bitcast_convert_type, clz and population_count; random_gamma_grad."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from jax._src.random.threefry2x32 import threefry2x32_p as jax_threefry2x32_p

import fcore
from fcore import lax
from fcore.lax.prng import iota_2x32_shape, iota_2x32_shape_p, threefry2x32, threefry2x32_p
from fcore.lax import random_gamma_grad

U32 = np.uint32
words = hnp.arrays(U32, st.integers(1, 9), elements=st.integers(0, 2**32 - 1))


def assert_same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


def jax_threefry(*args: Any) -> list[Any]:
    bind: Any = jax_threefry2x32_p.bind
    return [np.asarray(o) for o in bind(*(jnp.asarray(a, jnp.uint32) for a in args))]


@given(words, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_threefry2x32_eager_matches_jax(counts: Any, k1: int, k2: int) -> None:
    x1, x2 = counts, counts[::-1].copy()
    got = threefry2x32(U32(k1), U32(k2), x1, x2)
    want = jax_threefry(U32(k1), U32(k2), x1, x2)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_threefry2x32_lowering_matches_eager_and_jax() -> None:
    rng = np.random.default_rng(0)
    k1, k2 = rng.integers(0, 2**32, 2, dtype=U32)
    x1, x2 = rng.integers(0, 2**32, (2, 3, 5), dtype=U32)
    compiled = fcore.jit(threefry2x32)(k1, k2, x1, x2)
    eager = threefry2x32(k1, k2, x1, x2)
    for c, e, w in zip(compiled, eager, jax_threefry(k1, k2, x1, x2)):
        assert_same(c, e)
        assert_same(c, w)
    text = fcore.jit(threefry2x32).lower(k1, k2, x1, x2).as_text()
    assert "stablehlo.shift_left" in text and "stablehlo.xor" in text and "custom_call" not in text


KNOWN_ANSWERS = [  # Random123's known-answer vectors for Threefry-2x32, 20 rounds: key, counter, output
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key,counter,want", KNOWN_ANSWERS)
def test_threefry2x32_known_answers(key: tuple[int, int], counter: tuple[int, int], want: tuple[int, int]) -> None:
    args = (U32(key[0]), U32(key[1]), np.array([counter[0]], U32), np.array([counter[1]], U32))
    for got in (threefry2x32(*args), fcore.jit(threefry2x32)(*args)):
        assert (int(got[0][0]), int(got[1][0])) == want


def test_threefry2x32_batching_is_elementwise() -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**32, (4, 2), dtype=U32)
    counts = rng.integers(0, 2**32, (4, 3), dtype=U32)
    out = fcore.vmap(lambda k, c: threefry2x32(k[0], k[1], c, c))(keys, counts)
    for i in range(4):
        row = threefry2x32(keys[i, 0], keys[i, 1], counts[i], counts[i])
        assert_same(out[0][i], row[0])
        assert_same(out[1][i], row[1])
    shared = fcore.vmap(lambda c: threefry2x32(keys[0, 0], keys[0, 1], c, c), in_axes=1)(counts)
    assert shared[0].shape == (3, 4)
    assert_same(shared[0], np.asarray(threefry2x32(keys[0, 0], keys[0, 1], counts, counts)[0]).T)
    scalar_batch = fcore.vmap(lambda k: threefry2x32(k, k, counts[0], counts[0]))(keys[:, 0])
    assert_same(scalar_batch[1][2], threefry2x32(keys[2, 0], keys[2, 0], counts[0], counts[0])[1])


def test_threefry2x32_type_errors() -> None:
    x = np.zeros(3, U32)
    with pytest.raises(TypeError, match="must have uint32 type"):
        threefry2x32(x, x, x, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="incompatible shapes"):
        threefry2x32(x, x, x, np.zeros(4, U32))
    with pytest.raises(TypeError, match="must have uint32 type"):
        fcore.make_jaxpr(threefry2x32)(x, x, x, np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="takes 4 operands"):
        threefry2x32_p.bind(x, x)


def test_threefry2x32_has_zero_tangents() -> None:
    x = np.arange(3, dtype=U32)
    out, tangents = fcore.jvp(lambda c: threefry2x32(U32(1), U32(2), c, c), (x,), (np.zeros(3, fcore.float0),))
    assert all(np.asarray(t).dtype == fcore.float0 for t in tangents)


@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (3, 1, 4), (0, 2)])
def test_iota_2x32_shape(shape: tuple[int, ...]) -> None:
    hi, lo = iota_2x32_shape(shape)
    assert_same(lo, np.arange(int(np.prod(shape)), dtype=U32).reshape(shape))
    assert_same(hi, np.zeros(shape, U32))
    jhi, jlo = fcore.jit(lambda: iota_2x32_shape(shape))()
    assert_same(jlo, lo)
    assert_same(jhi, hi)


def test_iota_2x32_shape_counts_in_64_bits() -> None:
    """Counts are 64-bit in the program whatever the x64 mode (2**32 elements would need 32 GiB
    to check the high words by value)."""
    text = fcore.jit(lambda: iota_2x32_shape((3, 4))).lower().as_text()
    assert "ui64" in text and "stablehlo.shift_right_logical" in text


def test_iota_2x32_shape_errors() -> None:
    with pytest.raises(TypeError, match="non-negative"):
        iota_2x32_shape_p.bind(shape=(-1,))


# -- bitcast_convert_type, clz, population_count ------------------------------------------
CASTS = [(np.float32, np.uint32), (np.uint32, np.float32), (np.float32, np.int32), (np.float64, np.uint64),
         (np.float32, np.uint16), (np.float32, np.uint8), (np.float16, np.int16), (np.int8, np.uint8),
         (np.float64, np.float32)]


@pytest.mark.parametrize("src,dst", CASTS, ids=[f"{s.__name__}-{d.__name__}" for s, d in CASTS])
def test_bitcast_convert_type_matches_jax(src: Any, dst: Any) -> None:
    with fcore.enable_x64(True), jax.enable_x64(True):
        x = (np.arange(-3, 5) * 1.37).astype(src).reshape(2, 4)
        if np.dtype(src).itemsize < np.dtype(dst).itemsize:
            x = x.reshape(2, 4, 1)[..., :1].repeat(np.dtype(dst).itemsize // np.dtype(src).itemsize, -1)
        want = jax.lax.bitcast_convert_type(x, dst)
        assert_same(lax.bitcast_convert_type(x, dst), want)
        assert_same(fcore.jit(lambda v: lax.bitcast_convert_type(v, dst))(x), want)
        assert_same(fcore.vmap(lambda v: lax.bitcast_convert_type(v, dst))(x),
                    jax.vmap(lambda v: jax.lax.bitcast_convert_type(v, dst))(x))


def test_bitcast_convert_type_errors() -> None:
    with pytest.raises(TypeError, match="does not support bool or complex"):
        lax.bitcast_convert_type(np.ones(2, bool), np.uint8)
    with pytest.raises(ValueError, match="Attempting to convert"):
        lax.bitcast_convert_type(np.ones(3, np.uint8), np.uint32)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_clz_and_population_count_match_jax(dtype: Any) -> None:
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 3, 100, info.max, info.min, info.max // 3], dtype)
    for ours, theirs in ((lax.clz, jax.lax.clz), (lax.population_count, jax.lax.population_count)):
        want = theirs(x)
        assert_same(ours(x), want)
        assert_same(fcore.jit(ours)(x), want)


def test_bit_primitives_are_exported() -> None:
    assert lax.bitcast_convert_type_p.name == "bitcast_convert_type"
    assert lax.clz_p.name == "clz" and lax.population_count_p.name == "population_count"


# -- random_gamma_grad ----------------------------------------------------------------------
def test_random_gamma_grad_matches_jax() -> None:
    from jax._src.lax.special import random_gamma_grad as jax_random_gamma_grad

    a = np.array([0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 0.3, 3.0], np.float32)
    x = np.array([0.05, 0.3, 1.0, 4.0, 2.0, 25.0, 1e-6, 12.0], np.float32)
    want = np.asarray(jax_random_gamma_grad(a, x))
    np.testing.assert_allclose(np.asarray(random_gamma_grad(a, x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(fcore.jit(random_gamma_grad)(a, x)), want, rtol=1e-5)
    with np.errstate(invalid="ignore"):
        a, x = np.array([-1.0, 1.0, np.nan, 2.0], np.float32), np.array([1.0, -1.0, 1.0, 0.0], np.float32)
        edge = random_gamma_grad(a, x)
    assert np.isnan(np.asarray(edge)[:3]).all() and float(np.asarray(edge)[3]) == 0.0


def test_random_gamma_primitive_eagerly_and_batched() -> None:
    import fcore.random as fr

    key = np.asarray(fr.PRNGKey(2))
    alphas = np.array([0.5, 1.0, 4.0], np.float32)
    eager = fr.random_gamma_p.bind(key, alphas, log_space=False)
    assert_same(eager, fr.gamma(key, alphas))
    keys = np.asarray(fr.split(fr.PRNGKey(2), 3))
    batched = fcore.vmap(lambda k, a: fr.random_gamma_p.bind(k, a, log_space=True))(keys, alphas.reshape(3, 1))
    for i in range(3):
        assert_same(batched[i], fr.random_gamma_p.bind(keys[i], alphas[i:i + 1], log_space=True))
    with pytest.raises(TypeError, match="must prefix the shape of a"):
        fr.random_gamma_p.bind(keys, alphas[:2], log_space=False)

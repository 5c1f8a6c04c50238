"""The newer lax names against jax.lax: reduce_precision (eager NumPy impl and jitted
StableHLO, bit for bit on random bit patterns; its linear rules), optimization_barrier
(identity with JAX's jvp/transpose/batching rules, lowered to stablehlo.optimization_barrier),
broadcast_shapes and empty."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import lax

jlax_empty: Any = jax.lax.empty  # untyped in jax
jlax_rbg: Any = jax.lax.rng_bit_generator


def _bits(dtype: Any, n: int = 512) -> np.ndarray[Any, Any]:
    nbits = np.dtype(dtype).itemsize * 8
    raw = np.random.RandomState(nbits).randint(0, 2**16, size=(n, nbits // 16)).astype(np.uint64)
    words = np.zeros(n, np.uint64)
    for k in range(nbits // 16):
        words = (words << np.uint64(16)) | raw[:, k]
    return words.astype(f"uint{nbits}").view(dtype)


def _same_bits(ours: Any, theirs: Any) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype and o.shape == t.shape
    with np.errstate(invalid="ignore"):  # casting signalling NaNs
        nan = np.isnan(t.astype(np.float64))
        np.testing.assert_array_equal(np.isnan(o.astype(np.float64)), nan)  # NaN payloads may differ
    np.testing.assert_array_equal(o.view(f"uint{o.dtype.itemsize * 8}")[~nan], t.view(f"uint{t.dtype.itemsize * 8}")[~nan])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_reduce_precision_matches_jax_bit_for_bit(dtype: Any) -> None:
    x = _bits(dtype)
    for e, m in ((5, 10), (8, 7), (4, 3), (5, 2), (2, 0)):
        theirs = jax.lax.reduce_precision(x, e, m)
        _same_bits(lax.reduce_precision(x, e, m), theirs)  # eager: the NumPy impl
        _same_bits(fcore.jit(lambda v: lax.reduce_precision(v, e, m))(x), theirs)  # stablehlo


def test_reduce_precision_rules_and_errors_match_jax() -> None:
    x = np.linspace(-3, 3, 8, dtype=np.float32)
    w = np.arange(8, dtype=np.float32)

    def f(lax_: Any) -> Any:
        return lambda v: (lax_.reduce_precision(v * w, 5, 2) ** 2).sum()

    np.testing.assert_array_equal(fcore.jit(fcore.grad(f(lax)))(x), jax.jit(jax.grad(f(jax.lax)))(x))
    np.testing.assert_array_equal(
        fcore.vmap(lambda v: lax.reduce_precision(v, 4, 3))(x.reshape(2, 4)), jax.lax.reduce_precision(x.reshape(2, 4), 4, 3)
    )
    _same_bits(lax.reduce_precision(np.float32(1.1), 5, 2), jax.lax.reduce_precision(np.float32(1.1), 5, 2))  # 0-d
    _same_bits(lax.reduce_precision(x.reshape(2, 4).T, 4, 3), jax.lax.reduce_precision(x.reshape(2, 4).T, 4, 3))
    for args in ((np.arange(3), 5, 2), (x, 0, 2), (x, 5, -1)):
        with pytest.raises((TypeError, ValueError)) as theirs:
            jax.lax.reduce_precision(*args)
        with pytest.raises(theirs.type) as ours:
            lax.reduce_precision(*args)
        assert str(ours.value) == str(theirs.value)


def test_optimization_barrier_is_an_identity_with_jax_rules() -> None:
    x = np.linspace(0, 1, 4, dtype=np.float32)

    def f(lax_: Any, np_: Any) -> Any:
        def g(v: Any) -> Any:
            a, (b,) = lax_.optimization_barrier((np_.sin(v), [v * 2]))
            return (a * b + np_.sin(v)).sum()

        return g

    closed = fcore.make_jaxpr(lambda v: lax.optimization_barrier((v, v)))(x)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["optimization_barrier"]
    lowered = fcore.jit(lambda v: lax.optimization_barrier([v, v])).lower(x)
    assert "stablehlo.optimization_barrier" in lowered.as_text()
    np.testing.assert_allclose(fcore.jit(f(lax, fnp))(x), jax.jit(f(jax.lax, jnp))(x), rtol=1e-6)
    np.testing.assert_allclose(fcore.jit(fcore.grad(f(lax, fnp)))(x), jax.jit(jax.grad(f(jax.lax, jnp)))(x), rtol=1e-6)
    ours = str(fcore.make_jaxpr(fcore.grad(f(lax, fnp)))(x)).count("optimization_barrier")
    assert ours == str(jax.make_jaxpr(jax.grad(f(jax.lax, jnp)))(x)).count("optimization_barrier") == 2
    np.testing.assert_allclose(fcore.vmap(f(lax, fnp))(x.reshape(2, 2)), jax.vmap(f(jax.lax, jnp))(x.reshape(2, 2)), rtol=1e-6)
    assert lax.optimization_barrier(()) == ()


def test_broadcast_shapes_and_empty_match_jax() -> None:
    for shapes in [((3,),), ((2, 1), (3,)), ((1,), (4,)), ((3, 1), (1, 4), (5, 1, 1)), ((),)]:
        assert lax.broadcast_shapes(*shapes) == jax.lax.broadcast_shapes(*shapes)
    # jax caches broadcast_shapes by its arguments, and (2.0,) == (2,): after any jax call of
    # broadcast_shapes((2,)) in this process, jax returns (2,) for (2.0,). Its uncached answer:
    float_shape: Any = (2.0,)
    with pytest.raises(TypeError, match=r"Shapes must be 1D sequences of concrete values of integer type, got \(2\.0,\)\."):
        lax.broadcast_shapes(float_shape)
    bads: list[Any] = [((2,), (3,)), ((-1,),)]
    for bad in bads:
        with pytest.raises((TypeError, ValueError)) as theirs:
            jax.lax.broadcast_shapes(*bad)
        with pytest.raises(theirs.type) as ours:
            lax.broadcast_shapes(*bad)
        assert str(ours.value) == str(theirs.value)
    e = lax.empty((2, 3), fnp.int8)
    assert (e.shape, e.dtype) == ((2, 3), np.dtype(np.int8))
    assert fcore.jit(lambda: lax.empty(4, "float32"))().shape == jlax_empty(4, "float32").shape


def test_rng_bit_generator_matches_jax() -> None:
    key = np.array([1, 2, 3, 4], np.uint32)
    for alg in (0, 1, 2):
        for dt in (np.uint32, np.uint8):
            theirs = jlax_rbg(key, (3, 5), dt, jax.lax.RandomAlgorithm(alg))
            eager = lax.rng_bit_generator(key, (3, 5), dt, lax.RandomAlgorithm(alg))
            jitted = fcore.jit(lambda k: lax.rng_bit_generator(k, (3, 5), dt, lax.RandomAlgorithm(alg)))(key)
            for ours in (eager, jitted):
                for o, t in zip(ours, theirs, strict=True):
                    assert o.dtype == t.dtype
                    np.testing.assert_array_equal(o, t)
    with fcore.enable_x64(), jax.enable_x64(True):
        k64 = np.array([7, 9], np.uint64)
        for o, t in zip(lax.rng_bit_generator(k64, (4,), np.uint64), jlax_rbg(k64, (4,), np.uint64)):
            assert o.dtype == t.dtype
            np.testing.assert_array_equal(o, t)
    with pytest.raises(TypeError, match="unsupported dtype"):
        lax.rng_bit_generator(key, (2,), np.int32)
    with pytest.raises(TypeError, match="key must be uint32"):
        lax.rng_bit_generator(key[:3], (2,))

"""Keys: seeds, split, fold_in, typed keys (key dtype, key_data, wrap_key_data, structural
operations, no arithmetic) and the errors for things that are not keys, against jax.random."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fcore
import fcore.numpy as fnp
import fcore.random as fr


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def assert_same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


SEEDS: list[Any] = [0, 1, 42, -1, 2**31, 2**31 - 1, 2**40 + 5, -(2**40), np.int8(-3), np.uint8(200), np.int32(-7),
                    np.uint32(2**32 - 1), True]


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("seed", SEEDS, ids=repr)
def test_prng_key_matches_jax(seed: Any, x64: bool) -> None:
    with fcore.enable_x64(x64), jax.enable_x64(x64):
        assert_same(fr.PRNGKey(seed), jax.random.PRNGKey(seed))
        assert_same(fr.key_data(fr.key(seed)), jax.random.key_data(jax.random.key(seed)))


def test_64_bit_seeds_with_x64() -> None:
    with fcore.enable_x64(True), jax.enable_x64(True):
        for seed in (np.int64(-1), np.uint64(2**64 - 1), np.int64(2**40 + 5)):
            assert_same(fr.PRNGKey(seed), jax.random.PRNGKey(seed))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
@settings(max_examples=25, deadline=None)
def test_any_int64_seed_matches_jax(seed: int) -> None:
    assert_same(fr.PRNGKey(seed), jax.random.PRNGKey(seed))


@pytest.mark.parametrize("num", [2, 3, 5, 9, 100, (2, 3), (4, 1, 2), (0,), ()], ids=repr)
def test_split_matches_jax(num: Any) -> None:
    for seed in (0, 12345):
        k, jk = fr.PRNGKey(seed), jax.random.PRNGKey(seed)
        assert_same(fr.split(k, num), jax.random.split(jk, num))
        assert_same(fcore.jit(lambda key: fr.split(key, num))(k), fr.split(k, num))  # host path == compiled path


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=0, max_value=2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_fold_in_matches_jax(seed: int, data: int) -> None:
    k = fr.PRNGKey(seed)
    assert_same(fr.fold_in(k, data), jax.random.fold_in(jax.random.PRNGKey(seed), data))
    assert_same(fcore.jit(fr.fold_in)(k, np.uint32(data)), fr.fold_in(k, data))


def test_fold_in_data_conversion_as_jax() -> None:
    k, jk = fr.PRNGKey(0), jax.random.PRNGKey(0)
    for data in (3.7, np.int32(-5), np.uint32(9), True):
        assert_same(fr.fold_in(k, data), jax.random.fold_in(jk, data))
    for bad in (-1, 2**32):
        with pytest.raises(OverflowError):
            jax.random.fold_in(jk, bad)
        with pytest.raises(OverflowError):
            fr.fold_in(k, bad)
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        fr.fold_in(k, np.arange(2))


def test_key_chains_match_jax() -> None:
    """A training loop's key handling: split, then fold in the step, ten times."""
    k, jk = fr.key(0), jax.random.key(0)
    for step in range(10):
        k, sub = fr.split(k)
        jk, jsub = jax.random.split(jk)
        sub, jsub = fr.fold_in(sub, step), jax.random.fold_in(jsub, step)
        assert_same(fr.key_data(sub), jax.random.key_data(jsub))
        assert_same(fr.uniform(sub, (2,)), jax.random.uniform(jsub, (2,)))


# -- typed keys ---------------------------------------------------------------------------
def test_typed_key_type() -> None:
    k = fr.key(0)
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert str(k.dtype) == "key<fry>" and k.dtype == fr.key_dtype() == fr.key_dtype("threefry2x32")
    assert hash(k.dtype) == hash(fr.key_dtype())
    assert k.itemsize == 8
    assert fnp.issubdtype(k.dtype, fcore.dtypes.prng_key) and fcore.dtypes.issubdtype(k.dtype, fcore.dtypes.extended)
    assert not fnp.issubdtype(k.dtype, fnp.integer) and not fnp.issubdtype(np.uint32, fcore.dtypes.prng_key)
    assert fr.key_impl(k) == "threefry2x32" == fr.key_impl(fr.PRNGKey(0))
    assert repr(k) == repr(jax.random.key(0))
    data = fr.key_data(k)
    assert data.dtype == np.uint32 and data.shape == (2,)


def test_key_data_and_wrap_key_data_round_trip() -> None:
    keys = fr.split(fr.key(3), (2, 3))
    assert keys.shape == (2, 3)
    data = fr.key_data(keys)
    assert_same(data, jax.random.key_data(jax.random.split(jax.random.key(3), (2, 3))))
    again = fr.wrap_key_data(data)
    assert again.shape == (2, 3) and bool(fnp.all(again == keys))
    assert fr.wrap_key_data(data, impl="threefry2x32").dtype == keys.dtype
    assert fr.wrap_key_data(data, dtype=fr.key_dtype()).dtype == keys.dtype
    assert_same(fr.key_data(fr.PRNGKey(5)), fr.PRNGKey(5))  # raw keys are their own data


def test_typed_and_raw_keys_derive_alike() -> None:
    tk, rk = fr.key(8), fr.PRNGKey(8)
    assert isinstance(fr.split(tk), fr.PRNGKeyArray) and not isinstance(fr.split(rk), fr.PRNGKeyArray)
    assert_same(fr.key_data(fr.split(tk, 4)), fr.split(rk, 4))
    assert_same(fr.key_data(fr.fold_in(tk, 3)), fr.fold_in(rk, 3))
    assert_same(fr.normal(tk, (3,)), fr.normal(rk, (3,)))


def test_structural_operations_on_typed_keys() -> None:
    keys = fr.split(fr.key(1), 6)
    jkeys = jax.random.split(jax.random.key(1), 6)
    data, jdata = fr.key_data, jax.random.key_data
    assert len(keys) == 6
    assert_same(data(keys[2]), jdata(jkeys[2]))
    assert_same(data(keys[1:4]), jdata(jkeys[1:4]))
    assert_same(data(keys[np.array([5, 0])]), jdata(jkeys[np.array([5, 0])]))
    first, *_ = keys
    assert_same(data(first), jdata(jkeys[0]))
    grid, jgrid = keys.reshape(2, 3), jkeys.reshape(2, 3)
    assert grid.shape == (2, 3)
    assert_same(data(grid[..., 1]), jdata(jgrid[..., 1]))
    assert_same(data(grid.T), jdata(jgrid.T))
    assert_same(data(grid.transpose(1, 0)), jdata(jgrid.transpose(1, 0)))
    assert_same(data(grid.swapaxes(0, 1)), jdata(jgrid.swapaxes(0, 1)))
    assert_same(data(grid.ravel()), jdata(jgrid.ravel()))
    assert_same(data(grid.flatten()), jdata(jgrid.flatten()))
    assert_same(data(grid.reshape((3, 2))), jdata(jgrid.reshape((3, 2))))
    assert_same(data(keys.reshape(1, 6).squeeze(0)), jdata(jkeys.reshape(1, 6).squeeze(0)))
    assert_same(data(keys.take(np.array([1, 1]))), jdata(jkeys.take(np.array([1, 1]))))
    assert_same(keys == keys, jkeys == jkeys)
    assert_same(keys[0] != keys[1], jkeys[0] != jkeys[1])
    assert_same(data(keys.copy()), jdata(jkeys))
    with pytest.raises(TypeError, match="0-d key array"):
        iter(fr.key(0))
    with pytest.raises(TypeError, match="unsized"):
        len(fr.key(0))


ARITHMETIC: list[tuple[str, Callable[[Any], object]]] = [
    ("add", lambda k: k + 1), ("radd", lambda k: 1 + k), ("mul", lambda k: k * k), ("sub", lambda k: k - k),
    ("div", lambda k: k / 2), ("floordiv", lambda k: k // 2), ("mod", lambda k: k % 2), ("pow", lambda k: k**2),
    ("matmul", lambda k: k @ k), ("and", lambda k: k & 1), ("or", lambda k: k | 1), ("xor", lambda k: k ^ 1),
    ("lshift", lambda k: k << 1), ("rshift", lambda k: k >> 1), ("lt", lambda k: k < k), ("ge", lambda k: k >= k),
    ("neg", lambda k: -k), ("pos", lambda k: +k), ("abs", lambda k: abs(k)), ("invert", lambda k: ~k),
    ("bool", lambda k: bool(k)), ("numpy", lambda k: np.asarray(k)), ("sin", lambda k: fnp.sin(k)),
]


@pytest.mark.parametrize("name,op", ARITHMETIC, ids=[n for n, _ in ARITHMETIC])
def test_arithmetic_on_typed_keys_raises_type_error(name: str, op: Callable[[Any], object]) -> None:
    if name not in ("matmul", "pos"):  # jax: an AssertionError for ``k @ k``, and ``+k`` is ``k``
        with pytest.raises(TypeError):
            op(jax.random.key(0))
    with pytest.raises(TypeError):
        op(fr.key(0))
    with pytest.raises(TypeError):
        op(fr.split(fr.key(0), 2))


def test_arithmetic_error_names_the_key_dtype() -> None:
    key: Any = fr.key(0)  # deliberately wrong operations go through Any
    with pytest.raises(TypeError, match=r"add does not accept dtypes key<fry>, int32"):
        key + 1
    with pytest.raises(TypeError, match=r"neg does not accept dtype key<fry>"):
        -key


# -- what is not a key ---------------------------------------------------------------------
BAD_KEYS: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("float data", lambda: np.zeros(2, np.float32), TypeError, "key_data.dtype = uint32"),
    ("int32 data", lambda: np.zeros(2, np.int32), TypeError, "key_data.dtype = uint32"),
    ("wrong trailing size", lambda: np.zeros(3, np.uint32), TypeError, r"end with \(2,\)"),
    ("scalar data", lambda: np.uint32(5), TypeError, "ndim >= 1"),
    ("python int", lambda: 5, TypeError, "ndim, shape, and dtype"),
    ("list", lambda: [0, 1], TypeError, "unexpected PRNG key type"),
]


@pytest.mark.parametrize("what,make,exc,match", BAD_KEYS, ids=[b[0] for b in BAD_KEYS])
def test_invalid_keys_raise_as_in_jax(what: str, make: Callable[[], object], exc: type[Exception], match: str) -> None:
    for fn in (lambda k: fr.uniform(k), lambda k: fr.split(k), lambda k: fr.fold_in(k, 1), lambda k: fr.key_data(k)):
        with pytest.raises(exc, match=match):
            fn(make())
    with pytest.raises(exc):
        jax.random.uniform(make())  # type: ignore[arg-type]


def test_batches_of_keys_are_rejected_where_one_key_is_expected() -> None:
    raw = fr.split(fr.PRNGKey(0), 4)
    with pytest.raises(ValueError, match=r"uniform accepts a single key, but was given a key array of shape \(4, 2\)"):
        fr.uniform(raw)
    with pytest.raises(ValueError, match=r"split accepts a single key.*\(3,\)"):
        fr.split(fr.split(fr.key(0), 3))
    with pytest.raises(ValueError):
        jax.random.uniform(jax.random.split(jax.random.PRNGKey(0), 4))
    assert fr.key_data(raw).shape == (4, 2)  # key_data and key_impl take arrays of keys


def test_wrap_key_data_checks_the_data() -> None:
    with pytest.raises(TypeError, match="uint32"):
        fr.wrap_key_data(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"end with \(2,\)"):
        fr.wrap_key_data(np.zeros((4, 3), np.uint32))
    with pytest.raises(ValueError, match="Cannot specify both"):
        fr.wrap_key_data(np.zeros(2, np.uint32), impl="threefry2x32", dtype=fr.key_dtype())


def test_seed_errors_as_in_jax() -> None:
    with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed, but was given a PRNG key"):
        fr.PRNGKey(fr.key(0))
    with pytest.raises(TypeError, match=r"key accepts a scalar seed, but was given an array of shape \(2,\)"):
        fr.key(np.arange(2))
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        fr.PRNGKey(1.5)
    with pytest.raises(OverflowError):
        fr.PRNGKey(2**64)
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        fr.key(0, impl="philox")
    with pytest.raises(ValueError, match="Cannot specify both"):
        fr.key(0, impl="threefry2x32", dtype="threefry2x32")


def test_shape_and_dtype_arguments_checked() -> None:
    k = fr.PRNGKey(0)
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype"):
        fr.uniform(k, (2,), jnp.int32)
    with pytest.raises(ValueError, match="must be a float or complex dtype"):
        fr.normal(k, (2,), np.int32)
    with pytest.raises(ValueError, match="unsigned int dtype"):
        fr.bits(k, (2,), np.int32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        fr.randint(k, (2,), 0, 3, np.float32)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of integer type"):
        fr.normal(k, (2.0,))
    with pytest.raises(ValueError, match="non-negative"):
        fr.normal(k, (-1,))
    assert fr.normal(k, 3).shape == (3,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2,\), \(3,\)\]"):
        fr.gamma(k, np.ones(3, np.float32), (2,))
    with pytest.raises(ValueError, match=r"broadcast-compatible with shape argument.*\(2, 3\).*\(2, 1\)"):
        fr.gamma(k, np.ones(3, np.float32), (2, 1))
    with pytest.raises(ValueError, match="expected 'high' or 'low'"):
        fr.bernoulli(k, 0.5, mode="mid")
    with pytest.raises(TypeError, match="floating dtype"):
        fr.bernoulli(k, 1)
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        fr.choice(k, 3, (5,), replace=False)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        fr.choice(k, 3, (2,), p=np.ones(4, np.float32) / 4)
    with pytest.raises(ValueError, match="Number of samples without replacement"):
        fr.categorical(k, np.zeros(3, np.float32), shape=(4,), replace=False)
    with pytest.raises(ValueError, match="method must be one of"):
        fr.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match="mean.ndim >= 1"):
        fr.multivariate_normal(k, 0.0, np.eye(2))
    with pytest.raises(ValueError, match="dirichlet requires alpha.ndim >= 1"):
        fr.dirichlet(k, 1.0)
    with pytest.raises(ValueError, match="valid mode for gumbel"):
        fr.gumbel(k, mode="max")


def test_default_dtypes_follow_x64() -> None:
    k = fr.PRNGKey(0)
    assert fr.uniform(k).dtype == np.float32 and fr.randint(k, (), 0, 2).dtype == np.int32
    assert fr.bits(k).dtype == np.uint32 and fr.poisson(k, 2.0).dtype == np.int32
    with fcore.enable_x64(True):
        assert fr.uniform(k).dtype == np.float64 and fr.randint(k, (), 0, 2).dtype == np.int64
        assert fr.bits(k).dtype == np.uint64

"""fcore.nn.initializers against jax.nn.initializers: the same key initializes the same
parameters (shapes, dtypes, numbers), and the factories check their arguments as JAX's do."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.nn
import fcore.random as fr
from fcore.nn import initializers as fi

ji = jax.nn.initializers


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def assert_same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


#: name -> (initializer given its module, shape); the same factory call on both sides.
EXACT: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "zeros": (lambda m: m.zeros, (3, 4)),
    "ones": (lambda m: m.ones, (3, 4)),
    "constant": (lambda m: m.constant(0.5), (2, 3)),
    "constant_int": (lambda m: m.constant(7, np.int32), (2,)),
    "uniform": (lambda m: m.uniform(), (3, 4)),
    "uniform_scale": (lambda m: m.uniform(2.5), (5,)),
    "normal": (lambda m: m.normal(), (3, 4)),
    "normal_stddev": (lambda m: m.normal(0.3), (4, 2)),
    "truncated_normal": (lambda m: m.truncated_normal(0.5, lower=-1.0, upper=1.5), (4, 3)),
    "glorot_uniform": (lambda m: m.glorot_uniform(), (6, 5)),
    "glorot_normal": (lambda m: m.glorot_normal(), (6, 5)),
    "xavier_uniform": (lambda m: m.xavier_uniform(), (3, 3, 4, 5)),
    "lecun_uniform": (lambda m: m.lecun_uniform(), (6, 5)),
    "lecun_normal": (lambda m: m.lecun_normal(), (6, 5)),
    "he_uniform": (lambda m: m.he_uniform(), (3, 3, 4, 8)),
    "he_normal": (lambda m: m.he_normal(), (6, 5)),
    "kaiming_normal": (lambda m: m.kaiming_normal(), (6, 5)),
    "variance_scaling_fan_out_normal": (lambda m: m.variance_scaling(2.0, "fan_out", "normal"), (6, 5)),
    "variance_scaling_fan_geo_avg": (lambda m: m.variance_scaling(1.0, "fan_geo_avg", "uniform"), (6, 5)),
    "variance_scaling_axes": (
        lambda m: m.variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=(0, 1), out_axis=-1, batch_axis=2),
        (2, 3, 4, 5)),
    "variance_scaling_float16": (lambda m: m.variance_scaling(1.0, "fan_avg", "uniform", dtype=np.float16), (4, 4)),
}

#: Complex variance scaling and orthogonal matrices: exp of complex numbers and QR round differently.
ROUNDED: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "variance_scaling_complex_uniform": (lambda m: m.variance_scaling(1.0, "fan_in", "uniform", dtype=np.complex64),
                                         (4, 3)),
    "variance_scaling_complex_truncated": (
        lambda m: m.variance_scaling(1.0, "fan_in", "truncated_normal", dtype=np.complex64), (4, 3)),
    "orthogonal": (lambda m: m.orthogonal(), (5, 5)),
    "orthogonal_wide": (lambda m: m.orthogonal(scale=2.0), (3, 6)),
    "orthogonal_tall_3d": (lambda m: m.orthogonal(column_axis=0), (4, 2, 3)),
    "delta_orthogonal": (lambda m: m.delta_orthogonal(), (3, 3, 4, 4)),
    "delta_orthogonal_3d": (lambda m: m.delta_orthogonal(), (3, 2, 5)),
    "delta_orthogonal_5d": (lambda m: m.delta_orthogonal(), (3, 3, 3, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_initializer_matches_jax(name: str) -> None:
    make, shape = EXACT[name]
    for seed in (0, 7):
        got = make(fi)(fr.PRNGKey(seed), shape)
        want = make(ji)(jax.random.PRNGKey(seed), shape)
        assert_same(got, want)


@pytest.mark.parametrize("name", sorted(ROUNDED))
def test_initializer_matches_jax_to_rounding(name: str) -> None:
    make, shape = ROUNDED[name]
    got = np.asarray(make(fi)(fr.PRNGKey(3), shape))
    want = np.asarray(make(ji)(jax.random.PRNGKey(3), shape))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_initializers_take_typed_keys_and_dtypes() -> None:
    for dtype in (np.float32, np.float16, jnp.bfloat16):
        assert_same(fi.he_normal()(fr.key(2), (4, 3), dtype), ji.he_normal()(jax.random.key(2), (4, 3), dtype))
    with fcore.enable_x64(True), jax.enable_x64(True):
        assert_same(fi.glorot_uniform()(fr.key(2), (4, 3)), ji.glorot_uniform()(jax.random.key(2), (4, 3)))
        assert_same(fi.orthogonal()(fr.key(2), (3, 3), np.float64).dtype, np.dtype(np.float64))


def test_initializers_under_jit_and_vmap() -> None:
    init = fi.lecun_normal()
    keys = fr.split(fr.PRNGKey(0), 3)
    batched = fcore.vmap(lambda k: init(k, (4, 2)))(keys)
    jbatched = jax.vmap(lambda k: ji.lecun_normal()(k, (4, 2)))(jax.random.split(jax.random.PRNGKey(0), 3))
    assert_same(batched, jbatched)
    assert_same(fcore.jit(lambda k: init(k, (4, 2)))(keys[0]), batched[0])


def test_orthogonal_is_orthogonal() -> None:
    q = np.asarray(fi.orthogonal()(fr.PRNGKey(1), (6, 4)), np.float64)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    w = np.asarray(fi.delta_orthogonal()(fr.PRNGKey(1), (3, 3, 4, 4)), np.float64)
    np.testing.assert_allclose(w[1, 1].T @ w[1, 1], np.eye(4), atol=1e-5)
    assert np.count_nonzero(w) == np.count_nonzero(w[1, 1])


def test_initializer_protocol_and_names() -> None:
    assert isinstance(fi.glorot_normal(), fi.Initializer)
    assert isinstance(fi.zeros, fi.Initializer)
    public = {n for n in dir(ji) if not n.startswith("_")}
    assert public <= set(dir(fi)), public - set(dir(fi))
    assert fcore.nn.initializers is fi
    assert fcore.nn.relu is not None and fcore.nn.softmax is not None  # fcore.nn's functions are still there


def test_initializer_errors_as_in_jax() -> None:
    k = fr.PRNGKey(0)
    cases: list[tuple[Callable[[Any], Any], tuple[int, ...], type[Exception]]] = [
        (lambda m: m.glorot_uniform(), (5,), ValueError),
        (lambda m: m.variance_scaling(1.0, "fan_max", "normal"), (3, 3), ValueError),
        (lambda m: m.variance_scaling(1.0, "fan_in", "cauchy"), (3, 3), ValueError),
        (lambda m: m.orthogonal(), (4,), ValueError),
        (lambda m: m.delta_orthogonal(), (3, 3), ValueError),
        (lambda m: m.delta_orthogonal(), (3, 3, 5, 4), ValueError),
    ]
    for make, shape, exc in cases:
        with pytest.raises(exc):
            make(ji)(jax.random.PRNGKey(0), shape)
        with pytest.raises(exc):
            make(fi)(k, shape)
    assert_same(fi.orthogonal()(k, (0, 3)), ji.orthogonal()(jax.random.PRNGKey(0), (0, 3)))

"""Sorting and searching (``fnp.sort``/``argsort``/``lexsort``/``partition``/``searchsorted``,
``lax.sort``/``sort_key_val``/``top_k``) against JAX: values and dtypes over the corpus dtypes,
NaN and signed-zero order, and the primitives under jit, grad and vmap."""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.lax as jlax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore import lax
from test_numpy_common import DTYPES, DTYPES_C, check, check_raises, modes, sample

SPECIAL = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, -np.nan, 1.0, np.inf, 0.0], np.float32)


@pytest.mark.parametrize("dtype", DTYPES_C, ids=str)
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sort_argsort(name: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (3, 5), seed=3)
    f, g = getattr(fnp, name), getattr(jnp, name)
    with modes():
        for kw in ({}, {"axis": 0}, {"axis": None}, {"descending": True}, {"stable": False}, {"axis": 0, "descending": True}):
            check(lambda v, k=kw: f(v, **k), lambda v, k=kw: g(v, **k), x)


def test_sort_order_of_nans_and_zeros() -> None:
    with modes():
        for name in ("sort", "argsort"):
            check(getattr(fnp, name), getattr(jnp, name), SPECIAL)
            check(lambda v, n=name: fcore.jit(getattr(fnp, n))(v), getattr(jnp, name), SPECIAL, staged=False)
        z = np.array([1 + 1j, np.nan, 1 - 1j, 0, -1j], np.complex64)
        check(fnp.sort, jnp.sort, z)
        check(lambda v: fcore.jit(fnp.sort)(v), jnp.sort, z, staged=False)


def test_sort_x64_and_scalars() -> None:
    with modes(x64=True):
        check(fnp.argsort, jnp.argsort, sample(np.dtype(np.float64), (6,)))
        check(fnp.lexsort, jnp.lexsort, [np.array([1, 0, 1]), np.array([2, 2, 1])])
    with modes():
        check_raises(fnp.sort, jnp.sort, 3.0)
        check(lambda v: fnp.sort(v, axis=None), lambda v: jnp.sort(v, axis=None), 3.0)
        check_raises(lambda v: fnp.sort(v, order="x"), lambda v: cast(Any, jnp).sort(v, order="x"), np.ones(3))


def test_lexsort() -> None:
    keys = np.array([[1, 2, 1, 3, 1], [0, 0, 1, 1, 0]])
    with modes():
        check(fnp.lexsort, jnp.lexsort, keys)
        check(lambda a, b: fnp.lexsort((a, b)), lambda a, b: jnp.lexsort((a, b)), keys[0], keys[1].astype(np.float32))
        check(lambda k: fnp.lexsort(k, axis=0), lambda k: jnp.lexsort(k, axis=0), keys[:, None, :].repeat(2, 1))
        check(fnp.lexsort, jnp.lexsort, [np.int32(1)])
        check_raises(fnp.lexsort, jnp.lexsort, [np.ones(2), np.ones(3)])


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != np.bool_], ids=str)
def test_partition(dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (3, 6), seed=5)
    with modes():
        for kth in (0, 2, 5, -1):
            check(lambda v, k=kth: fnp.partition(v, k), lambda v, k=kth: jnp.partition(v, k), x)
            check(lambda v, k=kth: fnp.argpartition(v, k), lambda v, k=kth: jnp.argpartition(v, k), x)
        check(lambda v: fnp.partition(v, 1, axis=0), lambda v: jnp.partition(v, 1, axis=0), x)
        check(fnp.sort_complex, jnp.sort_complex, x)
    with modes():
        check_raises(lambda v: fnp.partition(v, 0), lambda v: jnp.partition(v, 0), np.array([True, False]))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side: str) -> None:
    a = np.array([0.0, 1.0, 1.0, 2.0, 5.0, np.nan], np.float32)
    with modes():
        for v in (np.array([-1.0, 0.0, 1.0, 1.5, 5.0, 6.0, np.nan]), 1.0, 3, np.array([[1, 2], [3, 4]])):
            check(lambda a, v: fnp.searchsorted(a, v, side=side), lambda a, v: jnp.searchsorted(a, v, side=side), a, v)
        check(fnp.searchsorted, jnp.searchsorted, np.arange(10), np.array([3, -1, 11]))
        check(lambda a, v, s: fnp.searchsorted(a, v, sorter=s), lambda a, v, s: jnp.searchsorted(a, v, sorter=s),
              np.array([3, 1, 2]), np.array([2]), np.array([1, 2, 0]))
        check(fnp.searchsorted, jnp.searchsorted, np.zeros(0, np.float32), np.array([1.0], np.float32))
        check_raises(fnp.searchsorted, jnp.searchsorted, np.zeros((2, 2)), np.array([1.0]))
        sorted_ = np.sort(sample(np.dtype(np.float32), (3, 5)))
        check(fcore.vmap(fnp.searchsorted), jax.vmap(jnp.searchsorted), sorted_, sample(np.dtype(np.float32), (3, 2)),
              staged=False)


@pytest.mark.parametrize("dtype", [d for d in DTYPES], ids=str)
def test_lax_sort_and_top_k(dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (4, 5), seed=7)
    with modes():
        check(lambda v: lax.sort(v, dimension=0), lambda v: jlax.sort(v, dimension=0), x)
        check(lambda v: lax.sort_key_val(v, np.arange(20.0, dtype=np.float32).reshape(4, 5)),
              lambda v: jlax.sort_key_val(v, np.arange(20.0, dtype=np.float32).reshape(4, 5)), x)
        check(lambda v: lax.sort((v, -v if dtype.kind == "f" else v), num_keys=2),
              lambda v: jlax.sort((v, -v if dtype.kind == "f" else v), num_keys=2), x)
        for axis in (-1, 0):
            check(lambda v, a=axis: lax.top_k(v, 3, axis=a), lambda v, a=axis: jlax.top_k(v, 3, axis=a), x)
            check(lambda v, a=axis: fcore.jit(lambda u: lax.top_k(u, 3, axis=a))(v),
                  lambda v, a=axis: jlax.top_k(v, 3, axis=a), x, staged=False)


def test_top_k_total_order_and_errors() -> None:
    with modes():
        check(lambda v: lax.top_k(v, 5), lambda v: jlax.top_k(v, 5), SPECIAL)
        check(lambda v: fcore.jit(lambda u: lax.top_k(u, 5))(v), lambda v: jlax.top_k(v, 5), SPECIAL, staged=False)
        check_raises(lambda v: lax.top_k(v, 1), lambda v: jlax.top_k(v, 1), np.ones(2, np.complex64))
        check_raises(lambda v: lax.top_k(v, 4), lambda v: jlax.top_k(v, 4), np.ones(3))


def test_sort_transformations() -> None:
    x = sample(np.dtype(np.float32), (4, 5), seed=9)
    w = np.arange(20.0, dtype=np.float32).reshape(4, 5)

    def loss(lib: Any, lx: Any) -> Any:
        return lambda v: ((lx.sort(v, dimension=0) * w).sum() + (lx.top_k(v, 2)[0] ** 2).sum())

    with modes():
        check(fcore.grad(loss(fnp, lax)), jax.grad(loss(jnp, jlax)), x, staged=False)
        check(fcore.jit(fcore.grad(loss(fnp, lax))), jax.grad(loss(jnp, jlax)), x, staged=False)
        check(fcore.vmap(lambda v: lax.sort_key_val(v, np.arange(5))),
              jax.vmap(lambda v: jlax.sort_key_val(v, np.arange(5))), x, staged=False)
        check(fcore.vmap(lambda v: lax.top_k(v, 2), in_axes=1), jax.vmap(lambda v: jlax.top_k(v, 2), in_axes=1), x,
              staged=False)
        check(fcore.vmap(fnp.argsort, in_axes=1), jax.vmap(jnp.argsort, in_axes=1), x, staged=False)
        t = np.ones_like(x)
        check(lambda v: fcore.jvp(lambda u: fnp.sort(u, axis=0), (v,), (t,)),
              lambda v: jax.jvp(lambda u: jnp.sort(u, axis=0), (v,), (t,)), x, staged=False)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -0.0, 0.0, 1.0, 1.5, np.inf, np.nan]), min_size=1, max_size=12))
def test_sort_is_a_stable_permutation(values: list[float]) -> None:
    """argsort gives a permutation that sorts (NaNs last), and ties keep their input order."""
    x = np.array(values, np.float32)
    perm = np.asarray(fnp.argsort(x))
    assert sorted(perm.tolist()) == list(range(len(values)))
    s = x[perm]
    key = [(np.isnan(v), 0.0 if np.isnan(v) else float(v)) for v in s]
    assert key == sorted(key)
    for i in range(len(s) - 1):
        if key[i] == key[i + 1]:
            assert perm[i] < perm[i + 1]
    np.testing.assert_array_equal(np.asarray(fnp.sort(x)), s)

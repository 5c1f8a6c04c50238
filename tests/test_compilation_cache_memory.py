"""The in-memory executable caches are bounded: jitting many fresh functions keeps at most
``maxsize`` executables, least recently used evicted first, and evicted programs recompile."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.backend.lru import LruCache
from fcore.lax import call


@pytest.fixture
def small_caches() -> Iterator[int]:
    bound = 8
    saved = call._compiled.maxsize, call._launches.maxsize
    call._compiled.maxsize = call._launches.maxsize = bound
    fcore.clear_caches()
    try:
        yield bound
    finally:
        call._compiled.maxsize, call._launches.maxsize = saved
        fcore.clear_caches()


def test_fresh_lambdas_do_not_grow_the_caches(small_caches: int) -> None:
    x = fnp.ones(3)
    for i in range(60):
        y = fcore.jit(lambda v, i=i: v * 2.0 + float(i))(x)  # a fresh program each time
        np.testing.assert_allclose(y, 2.0 + i)
        assert len(call._compiled) <= small_caches and len(call._launches) <= small_caches
    # The first program was evicted long ago: it compiles again and still gives its value.
    np.testing.assert_allclose(fcore.jit(lambda v: v * 2.0 + 0.0)(x), 2.0)


def test_lru_order() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.setdefault("a", 1)
    cache.setdefault("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.setdefault("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert cache.setdefault("a", 10) == 1  # an existing entry wins, as dict.setdefault
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0

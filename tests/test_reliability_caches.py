"""Issue 23, class 9: jitting many fresh functions does not keep an executable per function
alive (the structure-keyed executable caches are bounded LRUs; each function's own cache goes
with the function), and ``clear_caches`` releases every executable."""

from __future__ import annotations

import gc

import numpy as np

import fcore
from fcore.backend import runtime
from fcore.lax import call


def _live_executables() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is runtime.Executable)


def test_fresh_lambdas_do_not_accumulate_executables() -> None:
    x = np.ones(4, np.float32)
    fcore.clear_caches()
    held = _live_executables()  # by objects of other tests (an AOT ``Compiled`` keeps its own)
    n = call.SHARED_EXECUTABLES + 40
    for i in range(n):
        c = float(i)
        out = fcore.jit(lambda v: v * c + 1.0)(x)  # a distinct program each time (its literal)
        np.testing.assert_allclose(np.asarray(out), x * c + 1.0)
    assert len(call._compiled) <= call.SHARED_EXECUTABLES
    assert len(call._launches) <= call.SHARED_EXECUTABLES
    assert _live_executables() <= held + call.SHARED_EXECUTABLES + 8
    fcore.clear_caches()
    assert len(call._compiled) == 0
    assert _live_executables() <= held


def test_a_live_function_keeps_its_executable_through_lru_eviction() -> None:
    x = np.ones(4, np.float32)
    keep = fcore.jit(lambda v: v * 3.0 - 1.0)
    np.testing.assert_allclose(np.asarray(keep(x)), x * 3.0 - 1.0)
    for i in range(call.SHARED_EXECUTABLES + 5):
        c = float(i)
        fcore.jit(lambda v: v + c)(x)
    np.testing.assert_allclose(np.asarray(keep(x)), x * 3.0 - 1.0)
    spec = next(iter(keep._cache.values()))
    assert spec.launch is not None  # still compiled: evicted from the LRU only

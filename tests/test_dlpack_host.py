"""``fcore.dlpack`` and ``fcore.copy_to_host_async`` against ``jax.dlpack`` and
``jax.copy_to_host_async``."""

from __future__ import annotations

from typing import Any

import jax
import jax.dlpack
import ml_dtypes
import numpy as np
import pytest

import fcore
import fcore.dlpack
from test_numpy_common import assert_same

DTYPES: list[Any] = [np.int8, np.uint64, np.float16, np.float32, np.complex128, np.bool_, ml_dtypes.bfloat16, "int32", "bfloat16",
                     "float64", ml_dtypes.float8_e4m3fn, ml_dtypes.int4, np.dtype("V2"), np.object_, np.str_]


def test_names() -> None:
    public = {n for n in dir(jax.dlpack) if not n.startswith("_")}
    assert public <= set(dir(fcore.dlpack))
    assert fcore.dlpack.from_dlpack is fcore.numpy.from_dlpack


def test_is_supported_dtype() -> None:
    for dt in DTYPES:
        assert fcore.dlpack.is_supported_dtype(dt) == jax.dlpack.is_supported_dtype(dt), dt
    for mod in (jax.dlpack, fcore.dlpack):
        with pytest.raises(TypeError, match="Expected a string or dtype-like object"):
            mod.is_supported_dtype(None)


def test_from_dlpack() -> None:
    for x in (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False]), jax.numpy.arange(3)):
        assert_same(fcore.dlpack.from_dlpack(x), jax.dlpack.from_dlpack(x))
    assert_same(fcore.dlpack.from_dlpack(fcore.numpy.arange(4.0)), jax.numpy.arange(4.0))


class _Copies:
    def __init__(self) -> None:
        self.calls = 0

    def copy_to_host_async(self) -> None:
        self.calls += 1


def test_copy_to_host_async() -> None:
    mine, theirs = _Copies(), _Copies()
    tree = {"a": fcore.numpy.arange(3), "b": [1, "s", mine]}
    assert fcore.copy_to_host_async(tree) is tree
    jtree = {"a": jax.numpy.arange(3), "b": [1, "s", theirs]}
    jax_copy: Any = jax.copy_to_host_async  # untyped in jax
    assert jax_copy(jtree) is jtree
    assert mine.calls == theirs.calls == 1
    assert_same(fcore.copy_to_host_async(fcore.numpy.ones(2)), jax.numpy.ones(2))

"""``fcore.stages``, ``fcore.version``, ``fcore.extend.backend`` and ``fcore.Shard`` against
their jax counterparts: the same names, and objects that behave and print the same."""

from __future__ import annotations

import jax
import jax.extend.backend
import jax.numpy as jnp
import jax.stages
import jax.version
import pytest

import fcore
import fcore.extend.backend
import fcore.numpy as fnp
import fcore.stages
import fcore.version
from fcore.backend.runtime import SUPPORTED_JAXLIB


def _public(module: object) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_")}


def test_stages_has_jax_names_and_jit_is_wrapped() -> None:
    assert {"ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"} <= _public(jax.stages)
    assert _public(jax.stages) - {"annotations"} <= _public(fcore.stages)
    assert fcore.stages.CompilerOptions == jax.stages.CompilerOptions
    jitted = fcore.jit(lambda x: x * 2)
    assert isinstance(jitted, fcore.stages.Wrapped)
    assert not isinstance(lambda x: x, fcore.stages.Wrapped)
    assert isinstance(jax.jit(lambda x: x), jax.stages.Wrapped) and not isinstance(lambda x: x, jax.stages.Wrapped)
    traced = jitted.trace(1.0)
    lowered = traced.lower()
    assert isinstance(traced, fcore.stages.Traced) and isinstance(lowered, fcore.stages.Lowered)
    assert isinstance(lowered.compile(), fcore.stages.Compiled)
    (info,), kwargs = traced.args_info
    assert isinstance(info, fcore.stages.ArgInfo) and kwargs == {}
    (jinfo,), _ = jax.jit(lambda x: x * 2).trace(1.0).args_info
    assert repr(info) == repr(jinfo)


def test_version_matches_jax_version_layout() -> None:
    assert fcore.version.__version__ == fcore.__version__
    assert fcore.__version_info__ == fcore.version.__version_info__ == (0, 1, 0)
    for name in ("__version__", "__version_info__", "_version", "_minimum_jaxlib_version",
                 "_minimum_jaxlib_version_info", "_version_as_tuple"):
        assert hasattr(jax.version, name) and hasattr(fcore.version, name), name
    dev = "0.4.16.dev20230906"
    assert fcore.version._version_as_tuple(dev) == jax.version._version_as_tuple(dev)  # type: ignore[no-untyped-call]
    assert fcore.version._minimum_jaxlib_version_info == SUPPORTED_JAXLIB[0]


def test_extend_backend() -> None:
    assert fcore.extend.backend.__name__ == "fcore.extend.backend"
    ours, theirs = fcore.extend.backend, jax.extend.backend
    for name in ours.__all__:
        assert hasattr(theirs, name), name
    client = ours.get_backend()
    assert ours.get_backend("cpu") is client and ours.get_backend(client) is client
    assert list(ours.backends()) == list(theirs.backends()) == [client.platform]
    assert str(ours.get_default_device()) == str(theirs.get_default_device())
    assert ours.get_default_device() == fcore.devices()[0]
    assert ours.backend_xla_version() == theirs.backend_xla_version()
    for bad in ("gpu", "nosuch"):
        with pytest.raises(RuntimeError) as want:
            theirs.get_backend(bad)
        with pytest.raises(RuntimeError) as got:
            ours.get_backend(bad)
        assert str(got.value) == str(want.value)


def test_clear_backends_drops_compiled_code_and_keeps_arrays() -> None:
    x = fnp.arange(3.0)
    f = fcore.jit(lambda v: v + 1)
    f(x)
    fcore.extend.backend.clear_backends()
    fcore.extend.backend.clear_in_memory_compilation_cache()
    assert f(x).tolist() == [1.0, 2.0, 3.0]


def test_shard_is_what_addressable_shards_holds() -> None:
    (ours,) = fcore.device_put(fnp.arange(3.0)).addressable_shards
    (theirs,) = jnp.arange(3.0).addressable_shards
    assert type(ours) is fcore.Shard and type(theirs) is jax.Shard
    assert repr(ours) == repr(theirs)
    assert ours.index == theirs.index and ours.replica_id == theirs.replica_id

"""fcore.experimental's mesh_utils, multihost_utils (one process, as JAX behaves there) and
the deprecated shard_map / pjit spellings, against jax."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import numpy as np
import pytest
from jax.experimental import mesh_utils as _jmesh_utils
from jax.experimental import multihost_utils as _jmultihost

import fcore
from fcore.experimental import mesh_utils, multihost_utils
from multidevice import run_script

jmesh_utils: Any = _jmesh_utils
jmultihost: Any = _jmultihost


def _same_tree(ours: Any, theirs: Any) -> None:
    o_leaves = fcore.tree_util.tree_leaves(ours)
    t_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        assert type(o) is type(t) and o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_array_equal(o, t)


def test_multihost_utils_single_process_match_jax() -> None:
    tree = {"a": np.arange(6.0, dtype=np.float32).reshape(2, 3), "b": np.int32(3), "c": fcore.numpy.ones(2)}
    jtree = {**tree, "c": jax.numpy.ones(2)}
    for tiled in (False, True):
        _same_tree(multihost_utils.process_allgather(tree, tiled=tiled), jmultihost.process_allgather(jtree, tiled=tiled))
    _same_tree(multihost_utils.broadcast_one_to_all(tree), jmultihost.broadcast_one_to_all(jtree))
    multihost_utils.sync_global_devices("step")
    multihost_utils.assert_equal(tree)
    # reachable as an attribute (JAX's multi-process tutorial spells it so), loaded on first use
    assert fcore.experimental.multihost_utils is multihost_utils
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        fcore.experimental.nope  # noqa: B018


def test_create_device_mesh_matches_jax_and_checks_sizes() -> None:
    mesh = mesh_utils.create_device_mesh((1, 1))
    assert mesh.shape == jmesh_utils.create_device_mesh((1, 1)).shape == (1, 1)
    assert mesh[0, 0] == fcore.devices()[0]
    bads: list[Any] = [(2,), ("a",)]
    for bad in bads:
        with pytest.raises(ValueError) as theirs:
            jmesh_utils.create_device_mesh(bad)
        with pytest.raises(ValueError) as ours:
            mesh_utils.create_device_mesh(bad)
        assert str(ours.value) == str(theirs.value)


def test_deprecated_spellings_warn() -> None:
    from fcore.experimental import pjit as pjit_module
    from fcore.experimental import shard_map as shard_map_module

    with pytest.warns(DeprecationWarning, match="deprecated"):
        pjit = pjit_module.pjit
    with pytest.warns(DeprecationWarning, match="deprecated"):
        _ = shard_map_module.shard_map
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(pjit(lambda x: x * 2)(3.0)) == 6.0
    with pytest.raises(AttributeError):
        _ = getattr(pjit_module, "nothing")


def test_meshes_and_legacy_shard_map_on_four_devices() -> None:
    out = run_script(
        """
        import warnings
        import jax
        from jax.experimental import mesh_utils as jmu
        from fcore.experimental import mesh_utils, multihost_utils
        warnings.simplefilter("ignore", DeprecationWarning)
        from fcore.experimental.shard_map import shard_map
        from fcore.experimental.pjit import pjit
        ours = mesh_utils.create_device_mesh((2, 2))
        theirs = jmu.create_device_mesh((2, 2))
        print([d.id for d in ours.ravel()] == [d.id for d in theirs.ravel()])
        hybrid = mesh_utils.create_hybrid_device_mesh((2, 2), (1, 1), process_is_granule=True)
        print([d.id for d in hybrid.ravel()] == [d.id for d in jmu.create_hybrid_device_mesh((2, 2), (1, 1), process_is_granule=True).ravel()])
        mesh = Mesh(ours, ("x", "y"))
        f = shard_map(lambda a: lax.psum(a, "x"), mesh, in_specs=P("x", "y"), out_specs=P(None, "y"))
        x = fnp.arange(16.0).reshape(4, 4)
        print(np.allclose(f(x), np.asarray(x).reshape(2, 2, 4).sum(0)))
        g = pjit(lambda a: a + 1, in_shardings=NamedSharding(mesh, P("x")), out_shardings=NamedSharding(mesh, P("y")))
        y = g(x)
        print(np.allclose(y, np.asarray(x) + 1), y.sharding.spec == P("y"))
        print(multihost_utils.process_allgather(y, tiled=True).shape)
        """
    )
    assert out.split() == ["True", "True", "True", "True", "True", "(4,", "4)"]


def test_host_local_and_global_arrays_single_process() -> None:
    mesh = fcore.make_mesh((1,), ("x",))
    jmesh = jax.make_mesh((1,), ("x",))
    tree = {"a": np.arange(4.0, dtype=np.float32), "b": np.ones((2, 2), np.float32)}
    specs = {"a": fcore.P("x"), "b": fcore.P()}
    jax_p: Any = jax.P  # untyped in jax
    jspecs = {"a": jax_p("x"), "b": jax_p()}
    ours = multihost_utils.host_local_array_to_global_array(tree, mesh, specs)
    theirs = jmultihost.host_local_array_to_global_array(tree, jmesh, jspecs)
    for key in tree:
        np.testing.assert_array_equal(ours[key], theirs[key])
        assert str(ours[key].sharding.spec) == str(theirs[key].sharding.spec)
    back = multihost_utils.global_array_to_host_local_array(ours, mesh, fcore.P("x"))
    np.testing.assert_array_equal(back["a"], tree["a"])

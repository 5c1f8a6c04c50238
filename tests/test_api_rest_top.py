"""Top-level names of jax that fcore now has: the sharding re-exports, the process queries
(and their warning ``host_*`` aliases), live_arrays and make_array_from_single_device_arrays."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import sharding
from multidevice import run_script


def test_sharding_names_and_process_queries_match_jax() -> None:
    assert fcore.P is sharding.PartitionSpec and fcore.NamedSharding is sharding.NamedSharding
    assert isinstance(fcore.devices()[0], fcore.Device)
    assert fcore.process_indices() == jax.process_indices() == [0]
    am, jam = sharding.AbstractMesh((4, 2), ("a", "b")), jax.sharding.AbstractMesh((4, 2), ("a", "b"))
    assert repr(am) == repr(jam) and repr(am.axis_types) == repr(jam.axis_types)
    assert (am.shape, am.axis_sizes, am.size, am.empty, am.shape_tuple) == \
        (dict(jam.shape), jam.axis_sizes, jam.size, jam.empty, jam.shape_tuple)
    assert am == sharding.AbstractMesh((4, 2), ("a", "b")) and am != sharding.AbstractMesh((2, 4), ("a", "b"))
    # as jax: a mesh's abstract mesh names its kind of device, so it differs from one that names none
    ours_am = fcore.make_mesh((1,), ("a",)).abstract_mesh
    assert ours_am == sharding.AbstractMesh((1,), ("a",), abstract_device=ours_am.abstract_device)
    assert ours_am != sharding.AbstractMesh((1,), ("a",))
    jax_am = jax.make_mesh((1,), ("a",), (jax.sharding.AxisType.Auto,)).abstract_mesh
    assert repr(ours_am) == repr(jax_am) and jax_am != jax.sharding.AbstractMesh((1,), ("a",))
    assert fcore.make_mesh((1,), "batch").axis_names == jax.make_mesh((1,), "batch").axis_names == ("batch",)
    assert sharding.reshard(fnp.ones(2), sharding.NamedSharding(fcore.make_mesh((1,), ("a",)), sharding.P())).shape == (2,)
    for ours, theirs in ((fcore.host_id, jax.host_id), (fcore.host_count, jax.host_count), (fcore.host_ids, jax.host_ids)):
        with pytest.warns(UserWarning) as theirs_warning:
            expected = theirs()
        with pytest.warns(UserWarning) as ours_warning:
            assert ours() == expected
        assert str(ours_warning[0].message) == str(theirs_warning[0].message)


def test_live_arrays_lists_placed_arrays_until_deleted() -> None:
    x = fcore.device_put(fnp.arange(3.0))
    assert any(a is x for a in fcore.live_arrays())
    assert any(a is x for a in fcore.live_arrays("cpu"))
    x.delete()
    assert not any(a is x for a in fcore.live_arrays())


def test_make_array_from_single_device_arrays() -> None:
    mesh = fcore.make_mesh((1,), ("x",))
    s = fcore.NamedSharding(mesh, fcore.P("x"))
    y = fcore.make_array_from_single_device_arrays((4,), s, [fcore.device_put(fnp.arange(4.0))])
    np.testing.assert_array_equal(y, np.arange(4.0))
    assert y.sharding == s
    with pytest.raises(ValueError, match="doesn't match the single device array shape"):
        fcore.make_array_from_single_device_arrays((4,), s, [fcore.device_put(fnp.arange(3.0))])
    out = run_script(
        """
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        s = NamedSharding(mesh, P("x", "y"))
        host = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        idx = s.devices_indices_map((4, 4))
        parts = [fcore.device_put(host[idx[d]], d) for d in fcore.devices()]
        y = fcore.make_array_from_single_device_arrays((4, 4), s, parts)
        print(np.array_equal(np.asarray(y), host), y.sharding == s, float(fcore.jit(lambda a: a.sum())(y)))
        """
    )
    assert out.split() == ["True", "True", "120.0"]


def test_default_matmul_precision_matches_jax() -> None:
    def dot_precision(make_jaxpr: Any, np_: Any) -> Any:
        closed = make_jaxpr(lambda a: a @ a)(np_.ones((2, 2), np_.float32))
        return closed.jaxpr.eqns[0].params["precision"]

    for name in ("float32", "tensorfloat32", "bfloat16", "highest"):
        with fcore.default_matmul_precision(name), jax.default_matmul_precision(name):
            assert str(dot_precision(fcore.make_jaxpr, fnp)) == str(dot_precision(jax.make_jaxpr, jax.numpy))
    assert dot_precision(fcore.make_jaxpr, fnp) is None
    fcore.config.update("jax_default_matmul_precision", "high")
    try:
        assert fcore.config.read("default_matmul_precision") == "high"
        assert str(dot_precision(fcore.make_jaxpr, fnp)) == "(Precision.HIGH, Precision.HIGH)"
    finally:
        fcore.config.update("jax_default_matmul_precision", None)
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with fcore.default_matmul_precision("bogus"):
            pass


def test_jit_traces_again_under_another_matmul_precision() -> None:
    traces: list[int] = []

    def f(a: Any) -> Any:
        traces.append(1)
        return a @ a

    jf = fcore.jit(f)
    x = np.ones((2, 2), np.float32)
    jf(x)
    jf(x)
    with fcore.default_matmul_precision("highest"):
        jf(x)
        jf(x)
    jf(x)
    assert len(traces) == 2  # once per setting, each cached

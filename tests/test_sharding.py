"""Devices, ``fcore.sharding`` and sharded arrays (each test in a 4-device subprocess)."""

from __future__ import annotations

import pytest

import fcore
from multidevice import run_script


def test_device_queries_in_this_process() -> None:
    assert fcore.device_count() == len(fcore.devices()) >= 1
    assert fcore.local_devices() == fcore.devices()[: fcore.local_device_count()]
    assert fcore.process_index() == 0 and fcore.process_count() == 1


def test_num_cpu_devices_config_after_start_is_an_error() -> None:
    fcore.devices()
    with pytest.raises(RuntimeError, match="before backends are initialized"):
        fcore.config.update("jax_num_cpu_devices", 4)


def test_num_cpu_devices_config_and_xla_flags() -> None:
    out = run_script(
        """
        fcore.config.update("num_cpu_devices", 3)
        assert fcore.config.read("jax_num_cpu_devices") == 3
        print(fcore.device_count(), fcore.local_device_count(), [d.id for d in fcore.devices()])
        """,
        num_devices=1,
    )
    assert out.split("\n")[0] == "3 3 [0, 1, 2]"
    out = run_script("print(fcore.device_count(), fcore.process_count(), fcore.process_index())", num_devices=4)
    assert out.strip() == "4 1 0"


def test_shardings_and_sharded_arrays_match_jax() -> None:
    run_script(
        """
        import jax
        from jax.sharding import NamedSharding as JNS, PartitionSpec as JP, AxisType
        jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        assert mesh.shape == {"x": 2, "y": 2} and mesh.size == 4 and mesh.axis_names == ("x", "y")
        assert [d.id for d in mesh.devices.flat] == [d.id for d in jmesh.devices.flat]
        x = np.arange(48, dtype=np.float32).reshape(4, 12)
        specs = [(), ("x",), ("x", "y"), (None, "y"), (("x", "y"),), (None, ("y", "x")), ("y", "x")]
        for spec in specs:
            s, js = NamedSharding(mesh, P(*spec)), JNS(jmesh, JP(*spec))
            assert s.is_fully_replicated == js.is_fully_replicated, spec
            assert s.shard_shape(x.shape) == js.shard_shape(x.shape), spec
            assert s.num_devices == js.num_devices == 4
            assert {d.id for d in s.device_set} == {d.id for d in js.device_set}
            assert {d.id: i for d, i in s.devices_indices_map(x.shape).items()} == {
                d.id: i for d, i in js.devices_indices_map(x.shape).items()}, spec
            a, ja = fcore.device_put(x, s), jax.device_put(x, js)
            np.testing.assert_array_equal(np.asarray(a), x)
            assert a.sharding == s and a.is_fully_replicated == ja.is_fully_replicated
            shards = sorted(a.addressable_shards, key=lambda sh: sh.device.id)
            jshards = sorted(ja.addressable_shards, key=lambda sh: sh.device.id)
            for sh, jsh in zip(shards, jshards):
                assert sh.index == jsh.index and sh.replica_id == jsh.replica_id, spec
                np.testing.assert_array_equal(np.asarray(sh.data), np.asarray(jsh.data))
                assert sh.data.devices() == {sh.device}
            assert {d.id for d in a.devices()} == {0, 1, 2, 3}
            assert repr(s) == repr(js).replace("axis_types=(Auto, Auto)", "axis_types=(Auto, Auto)")
        # scalars, bool, int and bf16 values gather back exactly
        for v in [np.float32(3.5), np.arange(8) % 3 == 0, np.arange(8, dtype=np.int32)]:
            a = fcore.device_put(v, NamedSharding(mesh, P(*(("x",) if np.ndim(v) else ()))))
            np.testing.assert_array_equal(np.asarray(a), v)
        # eager arithmetic on sharded arrays, and single-device sharding
        a = fcore.device_put(x, NamedSharding(mesh, P("x")))
        np.testing.assert_array_equal(np.asarray(a * 2 + 1), x * 2 + 1)
        # make_array_from_callback / make_array_from_process_local_data, as jax
        s = NamedSharding(mesh, P("y", "x"))
        c = fcore.make_array_from_callback(x.shape, s, lambda idx: x[idx])
        jc = jax.make_array_from_callback(x.shape, JNS(jmesh, JP("y", "x")), lambda idx: x[idx])
        np.testing.assert_array_equal(np.asarray(c), np.asarray(jc))
        assert c.sharding == s
        d = fcore.make_array_from_process_local_data(s, x)
        assert d.shape == x.shape and d.sharding == s
        np.testing.assert_array_equal(np.asarray(d), x)
        # a tree of shardings for a tree of values
        t = fcore.device_put({"a": x, "b": (x, x)}, {"a": NamedSharding(mesh, P("x")), "b": NamedSharding(mesh, P())})
        assert t["a"].sharding.spec == P("x") and t["b"][1].sharding.spec == P()
        np.testing.assert_array_equal(np.asarray(t["b"][0]), x)
        one = fcore.sharding.SingleDeviceSharding(fcore.devices()[2])
        b = fcore.device_put(x, one)
        assert b.devices() == {fcore.devices()[2]} and b.sharding == one
        # bare PartitionSpecs under set_mesh (the explicit-sharding tutorial), as jax
        auto = fcore.sharding.AxisType.Auto
        assert fcore.make_mesh((2, 2), ("x", "y"), (auto, auto)).axis_types == (auto, auto)
        with fcore.set_mesh(mesh), jax.set_mesh(jax.make_mesh((2, 2), ("x", "y"))):  # jax: Explicit axes
            t, jt = fcore.device_put({"a": x}, {"a": P("x")}), jax.device_put({"a": x}, {"a": JP("x")})
            assert repr(t["a"].sharding.spec) == repr(jt["a"].sharding.spec) == repr(P("x"))
            r, jr = fcore.reshard(x, P(None, "y")), jax.reshard(x, JP(None, "y"))
            assert repr(r.sharding.spec) == repr(jr.sharding.spec) and r.sharding.mesh == mesh
            double = fcore.sharding.auto_axes(lambda v: v * 2)
            out = double(t["a"], out_sharding=P("y"))
            assert out.sharding.spec == P("y")
            np.testing.assert_array_equal(np.asarray(out), x * 2)
            seen = fcore.jit(fcore.sharding.explicit_axes(lambda v: v + 1, in_sharding=P("x", "y")))(x)
            np.testing.assert_array_equal(np.asarray(seen), x + 1)
            d, jd = fcore.numpy.dot(x, x.T, out_sharding=P("x")), jax.numpy.dot(x, x.T, out_sharding=JP("x"))
            assert d.sharding.shard_shape(d.shape) == jd.sharding.shard_shape(jd.shape) == (2, 4)
            np.testing.assert_allclose(np.asarray(d), np.asarray(jd), rtol=1e-6)
            k, jk = fcore.random.key(0), jax.random.key(0)
            n, jn = fcore.random.normal(k, (4,), out_sharding=P("y")), jax.random.normal(jk, (4,), out_sharding=JP("y"))
            assert repr(n.sharding.spec) == repr(jn.sharding.spec)
            np.testing.assert_array_equal(np.asarray(n), np.asarray(jn))
            z, jz = fcore.numpy.zeros((4, 2), out_sharding=P("x")), jax.numpy.zeros((4, 2), out_sharding=JP("x"))
            assert z.sharding.shard_shape(z.shape) == jz.sharding.shard_shape(jz.shape) == (2, 2)
            f3 = fcore.numpy.full_like(x, 3.0, device=fcore.devices()[3])
            assert f3.devices() == {fcore.devices()[3]} and float(f3[0, 0]) == 3.0
            ri = fcore.random.randint(k, (4,), 0, 9, out_sharding=P("x"))
            assert repr(ri.sharding.spec) == repr(jax.random.randint(jk, (4,), 0, 9, out_sharding=JP("x")).sharding.spec)
            # shard_map without in_specs: each argument keeps its layout (a host value: replicated)
            sm = fcore.shard_map(lambda a, b: a * 2 + b.sum(), out_specs=P("x"))(t["a"], x[:1])
            jsm = jax.shard_map(lambda a, b: a * 2 + b.sum(), out_specs=JP("x"))(jt["a"], x[:1])
            np.testing.assert_array_equal(np.asarray(sm), np.asarray(jsm))
        """
    )


def test_sharding_errors_match_jax() -> None:
    run_script(
        """
        import jax
        from jax.sharding import NamedSharding as JNS, PartitionSpec as JP, AxisType
        jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        def err(f):
            try:
                f()
            except Exception as e:
                return type(e).__name__, str(e)
            raise AssertionError("no error")
        e, je = err(lambda: NamedSharding(mesh, P("z"))), err(lambda: JNS(jmesh, JP("z")))
        assert e == je, (e, je)
        e, je = err(lambda: fcore.device_put(np.ones(3), NamedSharding(mesh, P("x")))), err(
            lambda: jax.device_put(np.ones(3), JNS(jmesh, JP("x"))))
        assert e[0] == je[0] == "IndivisibleError" and e[1].replace("P('x',)", "P('x',)") == je[1], (e, je)
        e, je = err(lambda: fcore.device_put(np.ones(4), P("x"))), err(lambda: jax.device_put(np.ones(4), JP("x")))
        assert e == je, (e, je)
        e = err(lambda: fcore.make_mesh((4, 2), ("x", "y")))
        assert e[0] == "ValueError", e
        e = err(lambda: fcore.jit(lambda v: v, in_shardings=NamedSharding(mesh, P("y")))(np.ones(3)))
        assert e[0] == "IndivisibleError" and "One of pjit arguments" in e[1], e
        """
    )


def test_eager_operations_run_where_placed_arrays_live() -> None:
    """As JAX: an eager operation on a sharded array, or on one committed to another device,
    runs there; results keep the sharding XLA gives them or stay on that device (they used
    to come back as single-device host results), through grad as well."""
    out = run_script(
        """
        import jax
        def where(lib, np_mod):
            mesh = lib.sharding.Mesh(np.array(lib.devices()[:4]), ("x",))
            s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
            x = lib.device_put(np.arange(8, dtype=np.float32), s)
            ys = [x * 2, np_mod.sin(x), x.sum(), x + x, x.reshape(2, 4), x[1:3], np_mod.where(x > 2, x, 0)]
            seen = [(str(y.sharding.spec), y.tolist()) for y in ys]
            z = lib.device_put(np.ones(3, np.float32), lib.devices()[2])
            zs = [z + 1, np_mod.sin(z) * z, z + np_mod.ones(3), z[1], lib.grad(lambda a: (a * a).sum())(z)]
            seen += [(sorted(d.id for d in r.devices()), r.tolist()) for r in zs]
            return seen
        ours, theirs = where(fcore, fnp), where(jax, jax.numpy)
        assert ours == theirs, (ours, theirs)
        print(ours[0][0], ours[2][0], ours[7][0])
        """,
    )
    assert out.split() == ["P('x',)", "P()", "[2]"]


def test_jit_follows_arguments_committed_to_another_device() -> None:
    """As JAX: jit runs where its committed arguments live (results stay there), host and
    default-device arguments move there, two devices at once are JAX's ValueError; a call
    cached for the default device falls back when its arguments live elsewhere."""
    out = run_script(
        """
        import jax
        def where(lib, put, ones):
            d = lib.devices()
            x = put(np.arange(3, dtype=np.float32), d[1])
            f = lib.jit(lambda a: a * 2)
            g = lib.jit(lambda a, b: a + b)
            h = lib.jit(lambda a: a + np.arange(3.0, dtype=np.float32))  # a constant
            rows = [f(ones(3)), f(x), f(f(x)), f(np.ones(3, np.float32)), g(x, ones(3)), g(ones(3), x), h(x)]
            seen = [(r.tolist(), sorted(dv.id for dv in r.devices())) for r in rows]
            try:
                g(x, put(np.ones(3, np.float32), d[2]))
            except ValueError as e:
                seen.append(str(e))
            seen.append(lib.grad(lambda a: (a * a).sum())(x).tolist())
            return seen
        ours = where(fcore, fcore.device_put, fnp.ones)
        theirs = where(jax, jax.device_put, jax.numpy.ones)
        assert ours == theirs, (ours, theirs)
        print(ours[1][1], ours[6][1])
        """,
        num_devices=3,
    )
    assert out.split() == ["[1]", "[1]"]

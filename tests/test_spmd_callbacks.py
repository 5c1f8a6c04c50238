"""Host callbacks in programs over several devices, against jax (in a 4-device subprocess).

Inside ``shard_map`` every device runs the callback on its shard; elsewhere in a sharded
program the callback is pinned to the mesh's first device and sees whole arrays, as in JAX.
"""

from __future__ import annotations

from multidevice import run_script


def test_callbacks_in_sharded_programs_match_jax() -> None:
    out = run_script(
        """
        import contextlib, io
        import jax, jax.numpy as jnp
        from jax.experimental import io_callback as jax_io_callback
        from fcore.experimental import io_callback

        def printed(run):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                result = run()
                np.asarray(result)
                fcore.effects_barrier()
                jax.effects_barrier()
            return sorted(buf.getvalue().splitlines()), np.asarray(result)

        x = np.arange(16, dtype=np.float32).reshape(4, 4)
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

        def per_shard(lib, dbg):
            def body(v):
                dbg.print("shard {v}", v=v)
                return v * 2
            spec = (P if lib is fcore else jax.P)("x", "y")
            return lib.jit(lib.shard_map(body, mesh=mesh if lib is fcore else jmesh, in_specs=spec, out_specs=spec))
        got, want = printed(lambda: per_shard(fcore, fcore.debug)(x)), printed(lambda: per_shard(jax, jax.debug)(x))
        assert got[0] == want[0] and len(got[0]) == 8, (got[0], want[0])  # four 2x2 shards
        np.testing.assert_array_equal(got[1], want[1])

        log = []
        def record(v):
            log.append(np.asarray(v).copy())
            return np.asarray(v).sum(dtype=np.float32)

        def whole(lib, dbg, iocb):
            def g(v):
                dbg.print("whole {v}", v=v.sum())
                y = lib.pure_callback(lambda a: np.asarray(a) + 1, lib.ShapeDtypeStruct(v.shape, v.dtype), v)
                s = iocb(record, lib.ShapeDtypeStruct((), np.float32), y, ordered=True)
                return y * 2 + s
            m, spec = (mesh, P("x", "y")) if lib is fcore else (jmesh, jax.P("x", "y"))
            s = (NamedSharding if lib is fcore else jax.sharding.NamedSharding)(m, spec)
            return lib.jit(g, in_shardings=s, out_shardings=s)
        got = printed(lambda: whole(fcore, fcore.debug, io_callback)(x))
        fcore_log, log[:] = list(log), []
        want = printed(lambda: whole(jax, jax.debug, jax_io_callback)(x))
        assert got[0] == want[0] == ["whole 120.0"], (got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert len(fcore_log) == len(log) == 1 and np.array_equal(fcore_log[0], log[0])

        # eagerly, on sharded arguments: the same program, run over the mesh
        sx = fcore.device_put(x, NamedSharding(mesh, P("x", "y")))
        got = printed(lambda: fcore.jit(lambda v: fcore.pure_callback(
            lambda a: np.asarray(a) * 3, fcore.ShapeDtypeStruct(v.shape, v.dtype), v))(sx))
        np.testing.assert_array_equal(got[1], x * 3)
        print("ok")
        """
    )
    assert out.strip().endswith("ok"), out

"""``ShapeDtypeStruct(..., sharding=)`` against JAX (meshes with Auto axes, as fcore's): the
sharding it carries (printed, compared, checked, updated, taken by ``like``), what
``eval_shape`` returns for it, and the shardings ``export`` records (``in_shardings_jax``,
``out_shardings_jax``, ``nr_devices``, the module's ``sdy.sharding`` attributes, serialization),
and the argument shardings ``jit(f).lower`` takes from it.
One 4-device subprocess runs both libraries."""

from __future__ import annotations

from multidevice import run_script


def test_shape_dtype_struct_sharding_matches_jax() -> None:
    out = run_script(
        """
        import jax, jax.numpy as jnp
        from jax.sharding import AxisType
        from fcore import export as fexport
        from jax import export as jexport

        jmesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
        fmesh = fcore.make_mesh((4,), ("x",))
        J, F = jax.sharding, fcore.sharding

        def both(f):
            got, want = f(fcore, fnp, F, fmesh, fexport), f(jax, jnp, J, jmesh, jexport)
            assert got == want, (got, want)
            return got

        def error(run):
            def f(L, np_, S, mesh, ex):
                try:
                    run(L, np_, S, mesh)
                except (ValueError, TypeError) as e:
                    return type(e).__name__, str(e).replace("jax.set_mesh", "set_mesh")
                return None
            return f

        both(lambda L, np_, S, mesh, ex: repr(L.ShapeDtypeStruct((8,), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x")))))
        both(lambda L, np_, S, mesh, ex: repr(L.ShapeDtypeStruct((8, 2), np_.int32, sharding=S.SingleDeviceSharding(L.devices()[1])).update(shape=(4, 2))))
        both(lambda L, np_, S, mesh, ex: repr(L.ShapeDtypeStruct((8,), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x"))).update(sharding=None)))
        both(lambda L, np_, S, mesh, ex: L.ShapeDtypeStruct((8,), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x"))) == L.ShapeDtypeStruct((8,), np_.float32))
        both(error(lambda L, np_, S, mesh: L.ShapeDtypeStruct((8,), np_.float32, sharding=3)))
        both(error(lambda L, np_, S, mesh: L.ShapeDtypeStruct((8,), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x", None)))))
        both(error(lambda L, np_, S, mesh: L.ShapeDtypeStruct((8,), np_.float32, sharding=S.PartitionSpec(None, "x"))))
        both(error(lambda L, np_, S, mesh: L.ShapeDtypeStruct((8,), np_.float32, sharding=S.PartitionSpec("x")).sharding))

        def under_mesh(L, np_, S, mesh, ex):
            with L.set_mesh(mesh):
                return repr(L.ShapeDtypeStruct((8,), np_.float32, sharding=S.PartitionSpec("x")))
        both(under_mesh)

        def like(L, np_, S, mesh, ex):
            x = L.device_put(np.arange(8.0, dtype=np.float32), S.NamedSharding(mesh, S.PartitionSpec("x")))
            return repr(L.ShapeDtypeStruct.like(x).sharding), repr(L.ShapeDtypeStruct.like(np.ones(3)))
        both(like)

        def eval_shape(L, np_, S, mesh, ex):
            spec = L.ShapeDtypeStruct((8, 4), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x")))
            return repr(L.eval_shape(lambda v: (v * 2).sum(0), spec))
        both(eval_shape)

        def exported(L, np_, S, mesh, ex):
            spec = L.ShapeDtypeStruct((8, 4), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x")))
            out = S.NamedSharding(mesh, S.PartitionSpec(None, "x"))
            e = ex.export(L.jit(lambda v, w: (v * 2, w), out_shardings=(out, None)))(spec, np.ones(3, np.float32))
            text = e.mlir_module()
            return (e.nr_devices, repr(e.in_shardings_jax(mesh)), repr(e.out_shardings_jax(mesh)),
                    'sdy.sharding<@mesh, [{"x"}, {}]>' in text, 'sdy.sharding<@mesh, [{}, {"x"}]>' in text,
                    "mhlo.num_partitions = 4" in text)
        both(exported)

        # fcore's own serialization keeps them (jax's needs flatbuffers, not installed here)
        spec = fcore.ShapeDtypeStruct((8, 4), fnp.float32, sharding=F.NamedSharding(fmesh, F.PartitionSpec("x")))
        e = fexport.export(fcore.jit(lambda v: v * 2))(spec)
        back = fexport.deserialize(e.serialize())
        assert (back.nr_devices, back.in_shardings_jax(fmesh), back.out_shardings_jax(fmesh)) == (
            4, e.in_shardings_jax(fmesh), (None,))

        def one_device(L, np_, S, mesh, ex):
            e = ex.export(L.jit(lambda v: v + 1))(L.ShapeDtypeStruct((8,), np_.float32))
            small = L.make_mesh((2,), ("y",), devices=L.devices()[:2])
            return e.nr_devices, repr(e.in_shardings_jax(small)), e.in_shardings_hlo
        both(one_device)

        def lowered(L, np_, S, mesh, ex):  # jit(f).lower takes the struct's sharding too
            spec = L.ShapeDtypeStruct((8, 2), np_.float32, sharding=S.NamedSharding(mesh, S.PartitionSpec("x")))
            low = L.jit(lambda v: v * 2).lower(spec)
            (got,), _ = low.compile().input_shardings
            return 'sdy.sharding<@mesh, [{"x"}, {}]>' in low.as_text(), repr(got.spec), repr(got.mesh.shape)
        both(lowered)
        print("ok")
        """
    )
    assert out.strip().endswith("ok")

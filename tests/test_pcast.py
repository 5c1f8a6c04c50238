"""``lax.pcast`` against JAX's ``check_vma=False`` behaviour (fcore's shard_map types no value
as varying): the identity for ``to='varying'``/``'reduced'`` over shard_map axes, on pytrees,
under ``jit`` and ``grad``; JAX's errors for ``to='unreduced'``, an unknown ``to``, a set of
names, and use outside ``shard_map`` (also under a ``vmap`` axis name). One 2-device
subprocess runs both libraries."""

from __future__ import annotations

from multidevice import run_script


def test_pcast_matches_jax_without_vma_checks() -> None:
    out = run_script(
        """
        import jax
        from jax.sharding import AxisType

        jmesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
        fmesh = fcore.make_mesh((2,), ("x",))
        x = np.arange(4.0, dtype=np.float32)

        def outcome(L, mesh, PS, f):
            sm = lambda g, i=PS("x"), o=PS("x"): L.shard_map(g, mesh=mesh, in_specs=i, out_specs=o, check_vma=False)
            try:
                r = f(L, sm, PS)
            except (ValueError, TypeError) as e:
                msg = str(e)
                return type(e).__name__, msg.split(" Allowed")[0]
            return repr(L.tree.map(np.asarray, r))

        cases = [
            lambda L, sm, PS: sm(lambda a: L.lax.pcast(a, "x", to="varying"))(x),
            lambda L, sm, PS: sm(lambda a: L.lax.pcast(a, ("x",), to="reduced"), i=PS(), o=PS())(x),
            lambda L, sm, PS: L.jit(sm(lambda a: L.lax.pcast((a, [a * 2]), "x", to="varying"), o=(PS("x"), [PS("x")])))(x),
            lambda L, sm, PS: L.grad(
                lambda v: sm(lambda a: L.lax.psum((L.lax.pcast(a, "x", to="varying") ** 2).sum(), "x"), o=PS())(v)
            )(x),
            lambda L, sm, PS: sm(lambda a: L.lax.pcast(a, "x", to="unreduced"))(x),
            lambda L, sm, PS: sm(lambda a: L.lax.pcast(a, "x", to="bogus"))(x),
            lambda L, sm, PS: sm(lambda a: L.lax.pcast(a, {"x"}, to="varying"))(x),
            lambda L, sm, PS: sm(lambda a: L.lax.pcast(a, (), to="bogus"))(x),
            lambda L, sm, PS: L.lax.pcast(x, "x", to="varying"),
            lambda L, sm, PS: L.lax.pcast(x, "x", to="reduced"),
            lambda L, sm, PS: L.vmap(lambda a: L.lax.pcast(a, "i", to="varying"), axis_name="i")(x),
        ]
        for k, f in enumerate(cases):
            got = outcome(fcore, fmesh, fcore.sharding.PartitionSpec, f)
            want = outcome(jax, jmesh, jax.sharding.PartitionSpec, f)
            assert got == want, (k, got, want)
        print("ok")
        """,
        num_devices=2,
    )
    assert out.strip().endswith("ok")

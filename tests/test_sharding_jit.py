"""``jit`` with ``in_shardings`` / ``out_shardings`` / sharded arguments and
``lax.with_sharding_constraint``, against jax on the same 4-device mesh (in a subprocess)."""

from __future__ import annotations

from multidevice import run_script


def test_sharded_jit_matches_jax() -> None:
    run_script(
        """
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding as JNS, PartitionSpec as JP, AxisType
        jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        def both(spec):
            return NamedSharding(mesh, P(*spec)), JNS(jmesh, JP(*spec))
        rng = np.random.default_rng(0)
        a = rng.standard_normal((8, 4)).astype(np.float32)
        b = rng.standard_normal((4, 6)).astype(np.float32)

        def check(fn, jfn, args, in_specs, out_spec, cons=None):
            ins = [both(s) for s in in_specs]
            kw, jkw = {}, {}
            if in_specs:
                kw["in_shardings"] = tuple(s for s, _ in ins)
                jkw["in_shardings"] = tuple(j for _, j in ins)
            if out_spec is not None:
                o, jo = both(out_spec)
                kw["out_shardings"], jkw["out_shardings"] = o, jo
            r = fcore.jit(fn, **kw)(*args)
            jr = jax.jit(jfn, **jkw)(*args)
            np.testing.assert_allclose(np.asarray(r), np.asarray(jr), rtol=1e-5, atol=1e-5)
            got = {d.id: i for d, i in r.sharding.devices_indices_map(r.shape).items()}
            want = {d.id: i for d, i in jr.sharding.devices_indices_map(jr.shape).items()}
            assert got == want, (r.sharding, jr.sharding)
            assert tuple(r.sharding.spec) == tuple(jr.sharding.spec), (r.sharding.spec, jr.sharding.spec)
            return r

        mm = lambda x, y: x @ y
        jmm = lambda x, y: x @ y
        check(mm, jmm, (a, b), [("x",), ()], None)
        check(mm, jmm, (a, b), [("x",), (None, "y")], ("x", "y"))
        check(mm, jmm, (a, b), [(None, "x"), ("x",)], ())
        check(lambda x: fnp.tanh(x).sum(0), lambda x: jnp.tanh(x).sum(0), (a,), [("x", "y")], ("y",))
        check(lambda x: (x * 2).T, lambda x: (x * 2).T, (a,), [("x",)], None)
        # with_sharding_constraint inside, no in/out shardings
        c, jc = both((None, "y"))
        check(lambda x, y: lax.with_sharding_constraint(x @ y, c) + 1,
              lambda x, y: jax.lax.with_sharding_constraint(x @ y, jc) + 1, (a, b), [], None)
        # sharded arguments decide the layout; results stay sharded; pytrees of arguments
        xs, jxs = both(("x",))
        sa, jsa = fcore.device_put(a, xs), jax.device_put(a, jxs)
        f = fcore.jit(lambda p: {"s": fnp.sin(p["a"]), "t": p["a"].sum()})
        jf = jax.jit(lambda p: {"s": jnp.sin(p["a"]), "t": p["a"].sum()})
        r, jr = f({"a": sa}), jf({"a": jsa})
        for k in "st":
            np.testing.assert_allclose(np.asarray(r[k]), np.asarray(jr[k]), rtol=1e-5, atol=1e-6)
            assert tuple(r[k].sharding.spec) == tuple(jr[k].sharding.spec), k
        # the same function with one-device arguments keeps the one-device path
        r1 = f({"a": a})
        assert len(r1["s"].devices()) == 1
        np.testing.assert_allclose(np.asarray(r1["s"]), np.sin(a), rtol=1e-6)
        # a bare PartitionSpec under `with mesh`
        with mesh:
            r = fcore.jit(lambda x: x + 1, in_shardings=P("x"), out_shardings=P(None, "y"))(a)
        assert r.sharding == NamedSharding(mesh, P(None, "y"))
        np.testing.assert_array_equal(np.asarray(r), a + 1)
        with fcore.set_mesh(mesh):  # as jax.set_mesh: for the block, or (without `with`) from now on
            assert fcore.sharding.get_abstract_mesh() is mesh
            r = fcore.jit(lambda x: x * 2, out_shardings=P("x"))(a)
        assert fcore.sharding.get_abstract_mesh() is None and r.sharding == NamedSharding(mesh, P("x"))
        fcore.set_mesh(mesh)
        assert fcore.sharding.get_mesh() is mesh
        # device_put to a bare PartitionSpec lays the array over the set mesh (as jax)
        assert fcore.device_put(a, P("x", "y")).sharding == NamedSharding(mesh, P("x", "y"))
        # out_sharding= of the products and fcore.reshard (fcore's axes are Auto: sharding constraints)
        for r, spec in ((fnp.dot(a, b, out_sharding=P("x")), P("x")),
                        (fnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, "y")), P(None, "y")),
                        (fnp.matmul(a, b, out_sharding=P("y")), P("y")),
                        (fnp.tensordot(a, b, 1, out_sharding=P("x", "y")), P("x", "y")),
                        (lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=P("y", "x")), P("y", "x")),
                        (fcore.jit(lambda u, v: lax.dot(u, v, out_sharding=P(None, "x")))(a, b), P(None, "x"))):
            assert r.sharding == NamedSharding(mesh, spec), (r.sharding, spec)
            np.testing.assert_allclose(np.asarray(r), a @ b, rtol=1e-5)
        tree = fcore.reshard({"a": a, "b": [b]}, {"a": P("x"), "b": P()})
        assert tree["a"].sharding == NamedSharding(mesh, P("x")) and tree["b"][0].sharding.is_fully_replicated
        r = fcore.jit(lambda u: fcore.reshard(u * 2, P(None, "y")))(a)
        assert r.sharding == NamedSharding(mesh, P(None, "y")) and np.array_equal(np.asarray(r), a * 2)
        fcore.set_mesh(None)
        for bad in (P("x"), "x"):  # no mesh set / not a sharding: jax's ValueErrors, not a recursion
            for put in (fcore.device_put, jax.device_put):
                try:
                    put(a, bad)
                    raise AssertionError(bad)
                except ValueError as e:
                    assert "set a mesh" in str(e) or "only accepts" in str(e), e
        # ahead of time: the lowered text carries the shardings; the compiled program runs over the mesh
        f = fcore.jit(mm, in_shardings=(xs, both(())[0]), out_shardings=both(("x", "y"))[0])
        low = f.lower(a, b)
        text = low.as_text()
        assert 'sdy.mesh @mesh = <["x"=2, "y"=2]>' in text and "mhlo.num_partitions = 4" in text, text
        assert '#sdy.sharding<@mesh, [{"x"}, {}]>' in text and '#sdy.sharding<@mesh, [{"x"}, {"y"}]>' in text, text
        comp = low.compile()
        r = comp(a, b)
        np.testing.assert_allclose(np.asarray(r), a @ b, rtol=1e-5)
        assert r.sharding == both(("x", "y"))[0] and comp.output_shardings == both(("x", "y"))[0]
        sm = fcore.jit(fcore.shard_map(lambda v: lax.psum(v, "x"), mesh=mesh, in_specs=P("x"), out_specs=P()))
        assert "sdy.manual_computation" in sm.lower(a).as_text()
        np.testing.assert_allclose(np.asarray(sm.lower(a).compile()(a)), a.reshape(2, 4, 4).sum(0), rtol=1e-6)
        # differentiating a jitted program over a mesh runs its derivative programs over the mesh too
        sm_loss = fcore.jit(fcore.shard_map(lambda v: lax.psum((v ** 2).sum(), "x"), mesh=mesh, in_specs=P("x"),
                                            out_specs=P()))
        np.testing.assert_allclose(np.asarray(fcore.grad(sm_loss)(a)), 2 * a, rtol=1e-6)
        v, g = fcore.value_and_grad(fcore.jit(lambda u: (lax.with_sharding_constraint(u, xs) ** 3).sum()))(a)
        np.testing.assert_allclose(np.asarray(g), 3 * a ** 2, rtol=1e-5)
        # a program with a host callback and sharded arguments (tests/test_spmd_callbacks.py for more)
        def printing(u):
            fcore.debug.print("total {}", u.sum())
            return u * 2
        pf = fcore.jit(printing)
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(pf(sa)), a * 2)
        # grad through a sharded jit
        g = fcore.jit(fcore.grad(lambda w, x: (fnp.tanh(x @ w) ** 2).sum()), in_shardings=(both(())[0], xs))(b, a)
        jg = jax.jit(jax.grad(lambda w, x: (jnp.tanh(x @ w) ** 2).sum()), in_shardings=(both(())[1], jxs))(b, a)
        np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-4, atol=1e-5)
        """
    )


def test_sharded_jit_errors() -> None:
    run_script(
        """
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        other = Mesh(np.asarray(fcore.devices()[::-1]).reshape(2, 2), ("x", "y"))
        def err(f):
            try:
                f()
            except Exception as e:
                return type(e).__name__, str(e)
            raise AssertionError("no error")
        x = np.ones((4, 4), np.float32)
        e = err(lambda: fcore.jit(lambda v: v, out_shardings=NamedSharding(mesh, P("x", "y", "z")))(x))
        assert e[0] == "ValueError" and "not found in mesh" in e[1], e
        e = err(lambda: fcore.jit(lambda v: v[:3], out_shardings=NamedSharding(mesh, P("x")))(x))
        assert e[0] == "IndivisibleError" and "One of pjit outputs" in e[1], e
        e = err(lambda: fcore.jit(lambda u, v: u + v, in_shardings=(NamedSharding(mesh, P()), NamedSharding(other, P())))(x, x))
        assert e[0] == "ValueError" and "incompatible devices" in e[1], e
        e = err(lambda: fcore.jit(lambda v: lax.with_sharding_constraint(v, P("x")))(x))
        assert e[0] == "RuntimeError" and "needs a mesh" in e[1], e
        """
    )

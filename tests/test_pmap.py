"""``fcore.pmap`` against ``jax.pmap`` over 4 CPU devices (in a subprocess)."""

from __future__ import annotations

from multidevice import run_script


def test_pmap_matches_jax() -> None:
    run_script(
        """
        import jax, jax.numpy as jnp
        rng = np.random.default_rng(0)
        x = rng.standard_normal((4, 3, 5)).astype(np.float32)
        w = rng.standard_normal((5, 2)).astype(np.float32)
        def check(r, jr):
            jt, t = jax.tree_util.tree_leaves(jr), fcore.tree_util.tree_leaves(r)
            assert len(jt) == len(t)
            for a, b in zip(t, jt):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
                assert a.shape == b.shape and a.dtype == b.dtype
        check(fcore.pmap(lambda v: fnp.sin(v) * 2)(x), jax.pmap(lambda v: jnp.sin(v) * 2)(x))
        check(fcore.pmap(lambda v: lax.psum(v, "i") / lax.axis_index("i").astype(np.float32).__add__(1), "i")(x),
              jax.pmap(lambda v: jax.lax.psum(v, "i") / (jax.lax.axis_index("i").astype(np.float32) + 1), "i")(x))
        check(fcore.pmap(lambda v, m: v @ m, in_axes=(0, None))(x, w), jax.pmap(lambda v, m: v @ m, in_axes=(0, None))(x, w))
        check(fcore.pmap(lambda v: {"a": v.sum(0), "b": lax.pmean(v, "i")}, "i", out_axes={"a": 1, "b": None})(x),
              jax.pmap(lambda v: {"a": v.sum(0), "b": jax.lax.pmean(v, "i")}, "i", out_axes={"a": 1, "b": None})(x))
        check(fcore.pmap(lambda v: lax.all_gather(v, "i"), "i", in_axes=1)(x.transpose(1, 0, 2)),
              jax.pmap(lambda v: jax.lax.all_gather(v, "i"), "i", in_axes=1)(x.transpose(1, 0, 2)))
        check(fcore.pmap(lambda v: lax.ppermute(v, "i", [(i, (i + 1) % 4) for i in range(4)]), "i")(x),
              jax.pmap(lambda v: jax.lax.ppermute(v, "i", [(i, (i + 1) % 4) for i in range(4)]), "i")(x))
        # grad inside pmap with pmean of the gradient (data parallel)
        def step(lib, l, w, v):
            g = (jax if lib is jnp else fcore).grad(lambda w: (lib.tanh(v @ w) ** 2).mean())(w)
            return l.pmean(g, "i")
        check(fcore.pmap(lambda w, v: step(fnp, lax, w, v), "i", in_axes=(None, 0))(w, x),
              jax.pmap(lambda w, v: step(jnp, jax.lax, w, v), "i", in_axes=(None, 0))(w, x))
        # static arguments, fewer devices than available
        check(fcore.pmap(lambda v, k: v * k, static_broadcasted_argnums=1)(x[:2], 3),
              jax.pmap(lambda v, k: v * k, static_broadcasted_argnums=1)(x[:2], 3))
        def err(f):
            try:
                f()
            except Exception as e:
                return type(e).__name__, str(e)
            raise AssertionError("no error")
        e = err(lambda: fcore.pmap(lambda v: v)(np.ones((8, 2))))
        assert e[0] == "ValueError" and "requires 8 logical devices" in e[1], e
        e = err(lambda: fcore.pmap(lambda a, b: a + b)(np.ones((4, 2)), np.ones((2, 2))))
        assert e[0] == "ValueError" and "inconsistent sizes" in e[1], e
        """
    )

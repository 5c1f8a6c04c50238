"""``fcore.shard_map`` and the collectives of ``fcore.lax``, against jax on a 2x2 mesh
(each test in a 4-device subprocess)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import fcore
from fcore import lax
from multidevice import run_script

_JAX_MESH = """
import jax, jax.numpy as jnp
from jax.sharding import AxisType
jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
mesh = fcore.make_mesh((2, 2), ("x", "y"))
def compare(body, x, in_specs, out_specs, jit=True, rtol=1e-6):
    f = fcore.shard_map(lambda v: body(fnp, lax, v), mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                        check_vma=False)
    jf = jax.shard_map(lambda v: body(jnp, jax.lax, v), mesh=jmesh, in_specs=jax.P(*in_specs),
                       out_specs=jax.P(*out_specs), check_vma=False)
    r = fcore.jit(f)(x) if jit else f(x)
    jr = jax.jit(jf)(x)
    np.testing.assert_allclose(np.asarray(r), np.asarray(jr), rtol=rtol, atol=1e-6)
    assert r.shape == jr.shape and r.dtype == jr.dtype, (r.shape, jr.shape, r.dtype, jr.dtype)
    assert tuple(r.sharding.spec) == tuple(jr.sharding.spec), (r.sharding.spec, jr.sharding.spec)
    return r
"""


def test_collectives_match_jax() -> None:
    run_script(
        _JAX_MESH
        + textwrap.dedent(
            """
        x = np.arange(64, dtype=np.float32).reshape(8, 8) / 7
        xy = P("x", "y")
        cases = [
            (lambda np_, l, v: l.psum(v, "x"), xy, P(None, "y")),
            (lambda np_, l, v: l.psum(v, ("x", "y")), xy, P()),
            (lambda np_, l, v: l.pmean(v, "y"), xy, P("x")),
            (lambda np_, l, v: l.pmax(v, "x") - l.pmin(v, "y"), xy, xy),
            (lambda np_, l, v: l.all_gather(v, "x"), xy, P(None, None, "y")),
            (lambda np_, l, v: l.all_gather(v, "y", axis=1, tiled=True), xy, P("x")),
            (lambda np_, l, v: l.all_gather(v, ("x", "y"), tiled=True), xy, P()),
            (lambda np_, l, v: l.psum_scatter(v, "x", scatter_dimension=1, tiled=True), xy, P(None, ("y", "x"))),
            (lambda np_, l, v: l.psum_scatter(v.reshape(2, 16), "y"), P("x"), P(("x", "y"))),
            (lambda np_, l, v: l.all_to_all(v, "x", 0, 1, tiled=True), xy, P(None, ("x", "y"))),
            (lambda np_, l, v: l.all_to_all(v.reshape(2, 2, 8), "y", 0, 2), P("x"), P("x", None, "y")),
            (lambda np_, l, v: l.ppermute(v, "x", [(0, 1), (1, 0)]), xy, xy),
            (lambda np_, l, v: l.ppermute(v, "y", [(0, 1)]), xy, xy),
            (lambda np_, l, v: v * l.axis_index("x") + 10 * l.axis_index(("y", "x")), xy, xy),
            (lambda np_, l, v: l.all_gather(v, "y", axis=1, tiled=True).T @ np_.sin(v), P(None, "y"), P(None, "y")),
        ]
        for i, (body, i_spec, o_spec) in enumerate(cases):
            try:
                compare(body, x, i_spec, o_spec)
            except Exception as e:
                raise AssertionError(f"case {i}") from e
        # eager (not under jit), and integer psum
        compare(lambda np_, l, v: l.psum(v, "x"), x, xy, P(None, "y"), jit=False)
        compare(lambda np_, l, v: l.psum(v, "y"), np.arange(16, dtype=np.int32).reshape(4, 4), xy, P("x"))
        # several arguments and results, pytrees
        f = fcore.shard_map(lambda a, b: {"s": lax.psum(a * b, "x"), "a": a}, mesh=mesh,
                            in_specs=(P("x"), P("x")), out_specs={"s": P(), "a": P("x")})
        r = f(x, x + 1)
        np.testing.assert_allclose(np.asarray(r["s"]), (x * (x + 1)).reshape(2, 4, 8).sum(0), rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(r["a"]), x)
        """
        )
    )


def test_grad_through_shard_map_with_split_results_matches_jax() -> None:
    """``linearize`` splits a ``shard_map`` into its primal and tangent halves (JAX's partial
    evaluation): results split over mesh axes, used after the ``shard_map`` by eager code,
    residuals that are per-device scalars and blocks, a collective in the body."""
    run_script(
        _JAX_MESH
        + textwrap.dedent(
            """
        rng = np.random.default_rng(2)
        x = rng.standard_normal((8, 4)).astype(np.float32)
        w = rng.standard_normal((4,)).astype(np.float32)
        def loss(np_, l, sm, x, w):
            def local(x, w):
                s = (x ** 2).sum()  # a per-device scalar residual
                y = np_.sin(x) * w * s
                return y, l.psum(np_.cos(x).sum(0), "x")
            y, z = sm(local, x, w)
            return (y ** 2).sum() + (z * w).sum()
        def fsm(local, x, w):
            return fcore.shard_map(local, mesh=mesh, in_specs=(P("x", "y"), P("y")),
                                   out_specs=(P("x", "y"), P("y")))(x, w)
        def jsm(local, x, w):
            return jax.shard_map(local, mesh=jmesh, in_specs=(jax.P("x", "y"), jax.P("y")),
                                 out_specs=(jax.P("x", "y"), jax.P("y")), check_vma=False)(x, w)
        f = lambda x, w: loss(fnp, lax, fsm, x, w)
        jf = lambda x, w: loss(jnp, jax.lax, jsm, x, w)
        jv, jg = jax.value_and_grad(jf, argnums=(0, 1))(x, w)
        for v, g in [fcore.value_and_grad(f, argnums=(0, 1))(x, w),
                     fcore.jit(fcore.value_and_grad(f, argnums=(0, 1)))(x, w)]:
            np.testing.assert_allclose(np.asarray(v), np.asarray(jv), rtol=1e-5)
            for a, b in zip(g, jg):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
        out, pullback = fcore.vjp(lambda x: fsm(lambda a, b: (a ** 2, b), x, w)[0], x)
        np.testing.assert_allclose(np.asarray(pullback(fnp.ones_like(out))[0]), 2 * x, rtol=1e-6)
        print("ok")
        """
        )
    )


def test_grad_and_vmap_through_shard_map_match_jax() -> None:
    run_script(
        _JAX_MESH
        + textwrap.dedent(
            """
        rng = np.random.default_rng(1)
        w = rng.standard_normal((8, 4)).astype(np.float32)
        x = rng.standard_normal((16, 8)).astype(np.float32)
        def loss(np_, l, sm, w, x):
            def local(w, x):
                # a rematerialized step inside: its jvp mixes primal and tangent results
                ck = fcore.checkpoint if np_ is fnp else jax.checkpoint
                y = ck(lambda x, w: np_.tanh(x @ w))(x, w)
                return l.pmean((y ** 2).sum(), "x")
            return sm(local, w, x)
        def fsm(local, w, x):
            return fcore.shard_map(local, mesh=mesh, in_specs=(P(), P("x")), out_specs=P())(w, x)
        def jsm(local, w, x):
            return jax.shard_map(local, mesh=jmesh, in_specs=(jax.P(), jax.P("x")), out_specs=jax.P(),
                                 check_vma=False)(w, x)
        g = fcore.grad(lambda w, x: loss(fnp, lax, fsm, w, x), argnums=(0, 1))(w, x)
        jg = jax.grad(lambda w, x: loss(jnp, jax.lax, jsm, w, x), argnums=(0, 1))(w, x)
        for a, b in zip(g, jg):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
        g = fcore.jit(fcore.grad(lambda w, x: loss(fnp, lax, fsm, w, x)))(w, x)
        np.testing.assert_allclose(np.asarray(g), np.asarray(jg[0]), rtol=1e-4, atol=1e-5)
        # collectives that transpose to each other: all_gather / psum_scatter / ppermute / all_to_all
        def body2(np_, l, v):
            g = l.all_gather(v, "x", tiled=True)
            p = l.ppermute(v, "y", [(0, 1), (1, 0)])
            a = l.all_to_all(v, "y", 1, 0, tiled=True)
            return (np_.sin(g) ** 2).sum() + (p * v).sum() + (a ** 3).sum()
        def f2(v):
            return fcore.shard_map(lambda u: lax.psum(body2(fnp, lax, u), ("x", "y")), mesh=mesh,
                                   in_specs=P("x", "y"), out_specs=P())(v)
        def jf2(v):
            return jax.shard_map(lambda u: jax.lax.psum(body2(jnp, jax.lax, u), ("x", "y")), mesh=jmesh,
                                 in_specs=jax.P("x", "y"), out_specs=jax.P(), check_vma=False)(v)
        np.testing.assert_allclose(np.asarray(fcore.grad(f2)(x)), np.asarray(jax.grad(jf2)(x)), rtol=1e-4, atol=1e-5)
        # jvp
        t = rng.standard_normal(x.shape).astype(np.float32)
        p, tp = fcore.jvp(f2, (x,), (t,))
        jp, jtp = jax.jvp(jf2, (x,), (t,))
        np.testing.assert_allclose(np.asarray(tp), np.asarray(jtp), rtol=1e-4, atol=1e-4)
        # vmap of a shard_map body with collectives (over a non-mesh axis)
        def body3(l, np_, v):
            return np_.stack([l.psum(v[i], "x") for i in range(v.shape[0])])
        xs = rng.standard_normal((3, 8, 4)).astype(np.float32)
        inner = fcore.vmap(lambda v: lax.psum(v, "x") * 2)
        r = fcore.shard_map(inner, mesh=mesh, in_specs=P(None, "x"), out_specs=P())(xs)
        np.testing.assert_allclose(np.asarray(r), xs.reshape(3, 2, 4, 4).sum(1) * 2, rtol=1e-5)
        """
        )
    )


def test_shard_map_errors() -> None:
    run_script(
        """
        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        def err(f):
            try:
                f()
            except Exception as e:
                return type(e).__name__, str(e)
            raise AssertionError("no error")
        x = np.ones((6, 4), np.float32)
        e = err(lambda: fcore.shard_map(lambda v: v, mesh=mesh, in_specs=P("z"), out_specs=P())(x))
        assert e[0] == "ValueError" and "'z'" in e[1], e
        e = err(lambda: fcore.shard_map(lambda v: v, mesh=mesh, in_specs=P(None, ("x", "y"), "x"), out_specs=P())(x))
        assert e[0] == "ValueError", e
        e = err(lambda: fcore.shard_map(lambda v: v, mesh=mesh, in_specs=P(("x", "y")), out_specs=P())(x))
        assert e[0] == "ValueError" and "evenly divisible" in e[1], e
        e = err(lambda: fcore.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(), P(), P()), out_specs=P())(x, x))
        assert e[0] == "ValueError" and "in_specs" in e[1], e
        e = err(lambda: fcore.shard_map(lambda v: v, mesh=mesh, in_specs=P(), out_specs=P("x", ("y", "x")))(x))
        assert e[0] == "ValueError" and "more than once" in e[1], e
        e = err(lambda: fcore.shard_map(lambda v: lax.psum(v, "z"), mesh=mesh, in_specs=P(), out_specs=P())(x))
        assert e[0] == "NameError" and "unbound axis name: z" in e[1], e
        # without mesh=: the mesh set where it is called (none: jax's error), not where it was defined
        late = fcore.shard_map(lambda v: lax.psum(v, "i"), in_specs=P("i"), out_specs=P())
        e = err(lambda: late(x))
        assert e == ("ValueError", "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh "
                     "context"), e
        with fcore.set_mesh(fcore.make_mesh((2,), ("i",))):
            np.testing.assert_array_equal(np.asarray(late(x)), 2 * x[:3])
        """
    )


def test_collective_outside_any_map_is_a_name_error() -> None:
    for f in (lambda v: lax.psum(v, "i"), lambda v: lax.axis_index("i"), lambda v: lax.all_gather(v, "i")):
        with pytest.raises(NameError, match="unbound axis name: i"):
            f(np.ones(3))
        with pytest.raises(NameError, match="unbound axis name: i"):
            fcore.jit(f)(np.ones(3))

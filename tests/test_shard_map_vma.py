"""``shard_map``'s replication check (``check_vma``), against jax (in a 4-device subprocess).

Each body's result is checked against its ``out_specs``: fcore refuses exactly what jax
refuses, with jax's message, and runs what jax runs. (JAX also types ``cond`` branches and
loop carries by their varying axes and asks for ``pcast`` where they differ; fcore joins them
instead, so those programs run.)
"""

from __future__ import annotations

from multidevice import run_script


def test_replication_check_matches_jax() -> None:
    out = run_script(
        """
        import jax, jax.numpy as jnp

        mesh = fcore.make_mesh((2, 2), ("x", "y"))
        jmesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
        x = np.arange(16, dtype=np.float32).reshape(4, 4)
        CASES = {
            "identity": (lambda l, n: (lambda v: v * 2), ()),
            "psum_x_keeps_y": (lambda l, n: (lambda v: l.psum(v, "x")), (None, "y")),
            "psum_x_not_y": (lambda l, n: (lambda v: l.psum(v, "x")), ()),
            "psum_both": (lambda l, n: (lambda v: l.psum(v, ("x", "y"))), ()),
            "pmean_both": (lambda l, n: (lambda v: l.pmean(v, ("x", "y")) + 1.0), ()),
            "axis_index": (lambda l, n: (lambda v: l.psum(v.sum(), ("x", "y")) + l.axis_index("y")), ()),
            "all_gather": (lambda l, n: (lambda v: l.all_gather(v, "x", tiled=True)), (None, "y")),
            "psum_scatter": (lambda l, n: (lambda v: l.psum_scatter(l.psum(v, "x"), "x", tiled=True)), (None, "y")),
            "ppermute": (lambda l, n: (lambda v: l.ppermute(l.psum(v, "x"), "x", [(0, 1), (1, 0)])), (None, "y")),
            "invariant_constant": (lambda l, n: (lambda v: n.ones(2) * 3), ()),
            "psum_of_invariant": (lambda l, n: (lambda v: l.psum(n.ones(2), "x")), ()),
            "jit_inside": (lambda l, n: (lambda v: (fcore if l is lax else jax).jit(lambda a, b: a)(n.ones(2), v)), ()),
            "jit_inside_varying": (lambda l, n: (lambda v: (fcore if l is lax else jax).jit(lambda a, b: b)(n.ones(2), v)), ()),
            "scan_invariant": (lambda l, n: (lambda v: l.scan(lambda c, _: (c + 1.0, c), 0.0, None, length=3)[0]), ()),
            "reduced_in_loop": (lambda l, n: (lambda v: l.fori_loop(0, 3, lambda i, c: c + l.psum(v.sum(), ("x", "y")), 0.0)), ()),
            "pytree": (lambda l, n: (lambda v: {"a": l.psum(v, ("x", "y")), "b": v}), {"a": (), "b": ("x", "y")}),
            "pytree_bad": (lambda l, n: (lambda v: {"a": v, "b": v}), {"a": (), "b": ("x", "y")}),
        }

        def run(lib, body, spec):
            Pc = P if lib is fcore else jax.P
            out_specs = {k: Pc(*s) for k, s in spec.items()} if isinstance(spec, dict) else Pc(*spec)
            f = lib.shard_map(body, mesh=mesh if lib is fcore else jmesh, in_specs=Pc("x", "y"), out_specs=out_specs)
            try:
                return "ok", jax.tree.map(np.asarray, f(x))
            except Exception as e:
                return type(e).__name__, str(e)

        for name, (make, spec) in CASES.items():
            got = run(fcore, make(lax, fnp), spec)
            want = run(jax, make(jax.lax, jnp), spec)
            assert got[0] == want[0], (name, got, want)
            if got[0] == "ok":
                jax.tree.map(np.testing.assert_array_equal, got[1], want[1])
            elif "which implies" in want[1]:
                part = lambda m: m[m.index("which implies"):]  # jax names its internal wrapper, fcore the lambda
                assert part(got[1]) == part(want[1]), (name, got[1], want[1])
            print(name, got[0])
        # the check can be turned off (and check_rep is its older name)
        for kw in ({"check_vma": False}, {"check_rep": False}):
            r = fcore.shard_map(lambda v: v, mesh=mesh, in_specs=P("x", "y"), out_specs=P(), **kw)(x)
            assert r.shape == (2, 2)
        print("done")
        """
    )
    assert out.strip().endswith("done"), out

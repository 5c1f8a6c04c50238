"""Memory kinds on CPU against JAX: ``NamedSharding``/``SingleDeviceSharding``'s
``memory_kind`` and ``with_memory_kind`` (checked against the device's memories, printed,
compared), ``device_put`` to ``pinned_host`` and back, and what ``jit`` reports for results
of such arrays and for ``out_shardings`` in host memory. One 2-device subprocess runs both."""

from __future__ import annotations

from multidevice import run_script


def test_memory_kinds_match_jax_on_cpu() -> None:
    out = run_script(
        """
        import jax
        from jax.sharding import AxisType

        jmesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
        fmesh = fcore.make_mesh((2,), ("x",))
        x = np.arange(4.0, dtype=np.float32)

        def outcome(L, mesh, f):
            S = L.sharding
            s = S.NamedSharding(mesh, S.PartitionSpec("x"))
            try:
                r = f(L, S, s)
            except ValueError as e:
                return "ValueError", str(e)
            return repr(r)

        cases = [
            lambda L, S, s: (s.memory_kind, s.with_memory_kind("pinned_host"), s.with_memory_kind("unpinned_host")),
            lambda L, S, s: s.with_memory_kind("bogus"),
            lambda L, S, s: (s.with_memory_kind("device") == s, s.with_memory_kind("pinned_host") == s,
                             S.NamedSharding(s.mesh, s.spec, memory_kind="pinned_host") == s.with_memory_kind("pinned_host")),
            lambda L, S, s: L.device_put(x, s.with_memory_kind("pinned_host")).sharding.memory_kind,
            lambda L, S, s: L.device_put(L.device_put(x, s.with_memory_kind("pinned_host")), s).sharding,
            lambda L, S, s: L.device_put(x, s.with_memory_kind("pinned_host")) * 2,
            lambda L, S, s: L.jit(lambda a: a * 2)(L.device_put(x, s.with_memory_kind("pinned_host"))).sharding,
            lambda L, S, s: L.jit(lambda a: a + 1, out_shardings=s.with_memory_kind("pinned_host"))(x).sharding,
            lambda L, S, s: L.jit(lambda a: a, out_shardings=s)(L.device_put(x, s.with_memory_kind("pinned_host"))),
            lambda L, S, s: (S.SingleDeviceSharding(L.devices()[0]).memory_kind,
                             S.SingleDeviceSharding(L.devices()[0]).with_memory_kind("pinned_host"),
                             S.SingleDeviceSharding(L.devices()[0], memory_kind="pinned_host") == S.SingleDeviceSharding(L.devices()[0])),
            lambda L, S, s: L.device_put(x, S.SingleDeviceSharding(L.devices()[1], memory_kind="pinned_host")) + 1,
        ]
        for k, f in enumerate(cases):
            got, want = outcome(fcore, fmesh, f), outcome(jax, jmesh, f)
            assert got == want, (k, got, want)
        print("ok")
        """,
        num_devices=2,
    )
    assert out.strip().endswith("ok")

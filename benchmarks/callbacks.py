"""Issue 15 workloads: a jitted call whose program runs a ``pure_callback`` and an ordered
``io_callback`` (the host-callback round trip), and a jitted loop with a callback per step."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.harness import Result, compare


def _round_trip(pkg: Any) -> Any:
    spec = pkg.ShapeDtypeStruct((64,), np.float32)

    def host(v: Any) -> Any:
        return np.asarray(v) * 2

    def f(v: Any) -> Any:
        return pkg.experimental.io_callback(host, spec, pkg.pure_callback(host, spec, v), ordered=True)

    return pkg.jit(f)


def _callback_loop(pkg: Any) -> Any:
    spec = pkg.ShapeDtypeStruct((), np.float32)

    def body(c: Any, _: Any) -> Any:
        return pkg.pure_callback(lambda v: np.float32(np.asarray(v) + 1), spec, c), None

    return pkg.jit(lambda c: pkg.lax.scan(body, c, None, length=100)[0])


def run() -> list[Result]:
    import jax

    import fcore

    x = np.arange(64, dtype=np.float32)
    f, j = _round_trip(fcore), _round_trip(jax)
    results = [compare("jit: pure_callback + ordered io_callback", lambda: f(x).block_until_ready(),
                       lambda: j(x).block_until_ready(), number=200, target="<= 1.5")]
    fl, jl = _callback_loop(fcore), _callback_loop(jax)
    zero = np.float32(0)
    results.append(compare("jit: scan of 100 pure_callbacks", lambda: fl(zero).block_until_ready(),
                           lambda: jl(zero).block_until_ready(), number=20, target="<= 1.5"))
    return results

"""Issue 21 item 3: a program of 10^4, 10^5, 10^6 equations through trace, jvp, vmap, grad,
print, parse and lower. Per-equation times (us/eqn) should stay flat as n grows (linear
time); the process's peak resident memory after each size is printed beside them.

``python -m benchmarks scale`` runs 10^4 and 10^5; ``python -m benchmarks.scale 1000000``
adds the 10^6 case (minutes, several GiB), kept out of the default run and of the tests.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable

import numpy as np

from benchmarks.harness import Result
from benchmarks.workloads import chain


def _us_per_eqn(fn: Callable[[], object], n: int) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) / n * 1e6


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stages(n: int) -> list[Result]:
    import fcore
    import fcore.numpy as fnp
    from fcore.backend.lowering import lower_jaxpr
    from fcore.core import parse_jaxpr

    x = np.linspace(0, 1, 8, dtype=np.float32)
    f = chain(fnp, n)
    closed = fcore.make_jaxpr(f)(x)
    text = str(closed)
    rows = {
        "trace": lambda: fcore.make_jaxpr(f)(x),
        "jvp (trace)": lambda: fcore.make_jaxpr(lambda v: fcore.jvp(f, (v,), (v,)))(x),
        "vmap (trace)": lambda: fcore.make_jaxpr(fcore.vmap(f))(np.stack([x, x])),
        "grad (trace)": lambda: fcore.make_jaxpr(fcore.grad(lambda v: f(v).sum()))(x),
        "print": lambda: str(closed),
        "parse": lambda: parse_jaxpr(text),
        "lower to StableHLO": lambda: lower_jaxpr(closed, "main"),
    }
    out = []
    for name, fn in rows.items():
        us = _us_per_eqn(fn, n)
        out.append(Result(f"{name}, n={n:.0e} (jax: n/a)", "us/eqn", us, float("nan"), f"flat in n; rss {_peak_rss_mib():.0f} MiB"))
    return out


def run(sizes: tuple[int, ...] = (10_000, 100_000)) -> list[Result]:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))  # the default: no deep recursion allowed
    return [r for n in sizes for r in stages(n)]


if __name__ == "__main__":
    from benchmarks.harness import HEADER

    print(HEADER)
    for result in run(tuple(int(a) for a in sys.argv[1:]) or (10_000, 100_000)):
        print(result.row(), flush=True)

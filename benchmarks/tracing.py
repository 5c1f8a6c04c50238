"""Issue 2 workloads: tracing cost per equation, eager dispatch, a 10^5-op chain."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable


import numpy as np

from benchmarks.harness import Result, compare
from benchmarks.workloads import chain


def _retained_bytes(build: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    obj = build()
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return used, obj


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp

    import fcore
    import fcore.numpy as fnp

    x_np = np.linspace(0, 1, 8, dtype=np.float32)
    results = []
    for n in (100, 1_000, 10_000):
        reps = 5 if n < 10_000 else 3
        r = compare(
            f"make_jaxpr chain N={n} (per eqn)",
            lambda: fcore.make_jaxpr(chain(fnp, n))(x_np),
            lambda: jax.make_jaxpr(chain(jnp, n))(x_np),
            repeats=reps,
            scale=1e6 / n,
            target="<= 0.3",
        )
        results.append(r)
    fx, jx = fnp.asarray(x_np), jnp.asarray(x_np)
    results.append(compare("eager sin f32[8] (per op)", lambda: fnp.sin(fx), lambda: jnp.sin(jx),
                           number=2000, target="<= 0.15"))
    f100, j100 = chain(fnp, 100), chain(jnp, 100)
    results.append(compare("eager 100-op chain (per op)", lambda: f100(fx), lambda: j100(jx),
                           number=5, scale=1e6 / 100, target="<= 0.3"))
    n = 100_000
    t0 = time.perf_counter()
    fbytes, fj = _retained_bytes(lambda: fcore.make_jaxpr(chain(fnp, n))(x_np))
    ft = time.perf_counter() - t0
    del fj
    t0 = time.perf_counter()
    jbytes, jj = _retained_bytes(lambda: jax.make_jaxpr(chain(jnp, n))(x_np))
    jt = time.perf_counter() - t0
    del jj
    results.append(Result("make_jaxpr 10^5 chain (total, tracemalloc on)", "s", ft, jt, "<= 0.3"))
    results.append(Result("make_jaxpr 10^5 chain retained heap per eqn", "bytes", fbytes / n, jbytes / n, "<= 0.5"))
    t0 = time.perf_counter()
    fcore.make_jaxpr(chain(fnp, n))(x_np)
    ft = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.make_jaxpr(chain(jnp, n))(x_np)
    jt = time.perf_counter() - t0
    results.append(Result("make_jaxpr 10^5 chain (total)", "s", ft, jt, "<= 0.3"))
    return results



"""Issue 21 item 2: the persistent compilation cache across processes.

A cold process compiles (and stores) the program; a second process with the same cache
directory loads it. Each first call runs in a fresh interpreter after the backend has
started (a tiny computation first), so the figure is the compile, or the load, alone.
The target is the second process's first call at most 0.25x the cold one; jax with its own
cache enabled gives the reference.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

from benchmarks.harness import Result

_SCRIPT = """
import sys, time
import numpy as np
LIB = sys.argv[1]
if LIB == "fcore":
    import fcore as lib
    import fcore.numpy as np_mod
    lib.config.update("persistent_cache_min_compile_time_secs", 0)
else:
    import jax as lib
    import jax.numpy as np_mod
    lib.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    lib.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
lib.config.update("jax_compilation_cache_dir", sys.argv[2])
from benchmarks.workloads import chain, mlp_loss
x = np.linspace(0, 1, 64, dtype=np.float32)
np.asarray(np_mod.sin(np_mod.asarray(x)))  # start the backend outside the clock
if sys.argv[3] == "chain":
    fn, args = lib.jit(chain(np_mod, 1000)), (x,)
else:
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(64, 64)).astype(np.float32), np.zeros(64, np.float32)) for _ in range(4)]
    fn, args = lib.jit(lib.value_and_grad(mlp_loss(np_mod))), (params, x[None].repeat(8, 0), x[None].repeat(8, 0))
t0 = time.perf_counter()
lib.block_until_ready(fn(*args))
print(time.perf_counter() - t0)
"""


def _first_call(lib: str, cache_dir: str, workload: str) -> float:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *sys.path])
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, lib, cache_dir, workload],
        capture_output=True, text=True, check=True, timeout=600, env=env,
    ).stdout
    return float(out.strip().splitlines()[-1])


def _cold_and_warm(lib: str, workload: str, repeats: int) -> tuple[float, float]:
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            cold.append(_first_call(lib, d, workload))
            warm.append(_first_call(lib, d, workload))
    return statistics.median(cold), statistics.median(warm)


def run(repeats: int = 3) -> list[Result]:
    results = []
    for workload, label in (("chain", "jit(chain 1000)"), ("mlp", "jit(value_and_grad(mlp loss))")):
        f_cold, f_warm = _cold_and_warm("fcore", workload, repeats)
        j_cold, j_warm = _cold_and_warm("jax", workload, repeats)
        results += [
            Result(f"first call {label}, cold cache", "ms", f_cold * 1e3, j_cold * 1e3, ""),
            Result(f"first call {label}, 2nd process", "ms", f_warm * 1e3, j_warm * 1e3, ""),
            Result(f"2nd process / cold, {label} (x100)", "%", 100 * f_warm / f_cold, 100 * j_warm / j_cold,
                   "fcore <= 25"),
        ]
    return results

"""Machine instructions per cached jit call and per eager operation, fcore vs jax, under callgrind.

``python -m benchmarks.dispatch_instructions [plain|results|tuple|dict|numpy|sin|grad ...] [--seeds 1 2 3]``

``sin`` is one eager ``jnp.sin`` of an f32[8] array, ``grad`` one eager ``grad`` of the
100-op chain (``benchmarks.workloads.chain``): issue 21's eager rows.

Timings on a shared machine are too noisy for changes of a few percent; instruction counts
are not. Each side runs in its own process under ``valgrind --tool=callgrind
--instr-atstart=no``; instrumentation is switched on only around two loops of 100 and 500
calls, 2 and 12 for ``grad`` (callgrind's client requests, from a small C helper compiled on
the fly), and a call costs the difference / 400 (/ 10). glibc's heap layout still moves a
figure by up to ±1k between processes, so each case runs once per ``PYTHONHASHSEED`` and the
mean is printed. Needs
valgrind, its headers (``valgrind/callgrind.h``) and a C compiler. docs/design.md ("jit's
cached call", "Eager `grad` and eager op, third round") quotes its figures.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.workloads import chain

CASES = ("plain", "results", "tuple", "dict", "numpy", "sin", "grad")
_HELPER = """#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS; }
"""
_REGIONS = (100, 500)
#: The eager grad of the chain is ~10^4 times a jit call: fewer calls per region.
_GRAD_REGIONS = (2, 12)


def _regions(case: str) -> tuple[int, int]:
    return _GRAD_REGIONS if case == "grad" else _REGIONS


def _workload(side: str, case: str) -> Callable[[], object]:
    """The call to count: ``f(a, b).block_until_ready()`` and its variants (``CASES``)."""
    a = np.arange(8, dtype=np.float32)
    lib: Any
    if side == "fcore":
        import fcore as lib
    else:
        import jax as lib
    np_mod = importlib.import_module(f"{lib.__name__}.numpy")
    if case == "sin":
        s = np_mod.asarray(a)
        sin = np_mod.sin
        return lambda: sin(s)
    if case == "grad":
        g = lib.grad(chain(np_mod, 100))
        x0 = np.float32(0.5)
        return lambda: g(x0)
    x, y = lib.device_put(a), lib.device_put(a * 2)
    f = lib.jit(lambda x, y: x * y + 1)
    if case == "numpy":  # host arguments, copied to the device by each call
        b = a * 2
        return lambda: f(a, b).block_until_ready()
    if case == "results":  # arrays an earlier jit call returned
        x, y = f(x, y), f(y, x)
    if case == "tuple":
        t = lib.jit(lambda x, y: (x * y, x + y))
        return lambda: t(x, y)[0].block_until_ready()
    if case == "dict":
        d = {f"k{i}": lib.device_put(np.full(4, i, np.float32)) for i in range(100)}
        g = lib.jit(lambda d: d["k0"] * 2 + d["k1"])
        return lambda: g(d).block_until_ready()
    return lambda: f(x, y).block_until_ready()


def _child(side: str, case: str, helper: str) -> None:
    """Runs under callgrind: warm up, then the two instrumented regions."""
    cg = ctypes.CDLL(helper)
    call = _workload(side, case)
    for _ in range(5 if case == "grad" else 50):
        call()
    for n in _regions(case):
        cg.cg_start()
        for _ in range(n):
            call()
        cg.cg_stop()


def _per_call(side: str, case: str, seed: int, helper: str, out_dir: str) -> int:
    prefix = os.path.join(out_dir, f"{side}.{case}.{seed}")
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}.%p",
         sys.executable, "-m", "benchmarks.dispatch_instructions", "--child", side, case, helper],
        env=env, check=True, capture_output=True,
    )
    dumps = sorted(Path(out_dir).glob(f"{side}.{case}.{seed}.*.[0-9]"), key=lambda p: int(p.suffix[1:]))
    totals = []
    for dump in dumps:
        match = re.search(r"^totals: (\d+)", dump.read_text(), re.MULTILINE)
        assert match is not None, dump
        totals.append(int(match.group(1)))
    small, large = _regions(case)
    return (totals[1] - totals[0]) // (large - small)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        _child(*argv[1:4])
        return
    seeds = [1, 2, 3]
    if "--seeds" in argv:
        i = argv.index("--seeds")
        seeds = [int(s) for s in argv[i + 1:]]
        argv = argv[:i]
    cases = argv or list(CASES)
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (and its headers, and a C compiler)")
    with tempfile.TemporaryDirectory() as tmp:
        helper = os.path.join(tmp, "cgctl.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", helper, "-x", "c", "-"], input=_HELPER.encode(),
                       check=True)
        for case in cases:
            means = {}
            for side in ("fcore", "jax"):
                counts = [_per_call(side, case, seed, helper, tmp) for seed in seeds]
                means[side] = statistics.mean(counts)
                print(f"{case:8s} {side:6s} {means[side]:9.0f} instructions/call  (seeds {seeds}: {counts})", flush=True)
            print(f"{case:8s} ratio  {means['fcore'] / means['jax']:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

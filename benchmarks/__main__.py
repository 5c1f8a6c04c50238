"""``python -m benchmarks [tracing|transforms|jit|ir_scale|pytrees|random|cnn|callbacks|data_parallel|linalg|compilation_cache|scale]``: print fcore vs jax ratios.

Each suite runs in a fresh interpreter: a suite leaves a large heap behind (the 10^5-equation
programs), and timing the next suite inside it would measure that heap, not the workload.
Within a suite fcore and jax run side by side in one process, interleaved.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

from benchmarks.harness import HEADER

SUITES = (
    "tracing", "transforms", "jit", "ir_scale", "pytrees", "random", "cnn", "callbacks", "data_parallel",
    "linalg", "compilation_cache", "scale",
)


def run_suite(name: str) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    print(f"-- {name}", flush=True)
    for result in module.run():
        print(result.row(), flush=True)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--in-process"]:
        for name in argv[1:]:
            run_suite(name)
        return
    print(HEADER, flush=True)
    for name in argv or SUITES:
        if name not in SUITES:
            raise SystemExit(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
        subprocess.run([sys.executable, "-m", "benchmarks", "--in-process", name], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])

"""``python -m benchmarks [tracing|transforms|jit|ir_scale|pytrees|random|cnn|callbacks|data_parallel|linalg|compilation_cache|scale]``: print fcore vs jax ratios.

Each suite runs in a fresh interpreter: a suite leaves a large heap behind (the 10^5-equation
programs), and timing the next suite inside it would measure that heap, not the workload.
Within a suite fcore and jax run side by side in one process, interleaved. After the suites'
own rows comes one table of every ratio with its target and whether it is met
(``benchmarks.summary``).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

from benchmarks.harness import HEADER, Result
from benchmarks.summary import decode, encode, table

SUITES = (
    "tracing", "transforms", "jit", "ir_scale", "pytrees", "random", "cnn", "callbacks", "data_parallel",
    "linalg", "compilation_cache", "scale",
)


def run_suite(name: str) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    print(f"-- {name}", flush=True)
    for result in module.run():
        print(result.row(), flush=True)
        print(encode(name, result), flush=True)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--in-process"]:
        for name in argv[1:]:
            run_suite(name)
        return
    print(HEADER, flush=True)
    rows: list[tuple[str, Result]] = []
    for name in argv or SUITES:
        if name not in SUITES:
            raise SystemExit(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
        child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks", "--in-process", name], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        for line in child.stdout:
            row = decode(line)
            if row is None:
                print(line, end="", flush=True)
            else:
                rows.append(row)
        if child.wait() != 0:
            raise SystemExit(f"suite {name} failed (exit status {child.returncode})")
    print()
    print(table(rows), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

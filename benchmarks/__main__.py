"""``python -m benchmarks [tracing|transforms|jit|ir]``: print fcore vs jax ratios."""

from __future__ import annotations

import importlib
import sys

from benchmarks.harness import HEADER

SUITES = ("tracing", "transforms", "jit", "ir_scale")


def main(argv: list[str]) -> None:
    chosen = argv or list(SUITES)
    print(HEADER)
    for name in chosen:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"-- {name}")
        for result in module.run():
            print(result.row(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

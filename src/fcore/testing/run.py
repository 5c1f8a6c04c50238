"""The long differential run: ``python -m fcore.testing.run --programs 10000 [--seed 0]``.

Draws programs from ``fcore.testing.programs()`` and compares fcore with jax (which must be
installed) in every mode; prints each disagreement (program, mode, error) as it is found, and a summary; the intended
differences of docs/testing.md (``KNOWN``) are counted apart.
Exit status 1 when any program disagreed.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence

from hypothesis import HealthCheck, given, seed, settings

from fcore.testing.checks import MODES, check_against
from fcore.testing.programs import Program, programs


#: The intended differences of docs/testing.md that the generator can meet, by the message they
#: give: counted, not failures (none at present).
KNOWN: dict[str, re.Pattern[str]] = {}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fcore.testing.run", description=__doc__)
    parser.add_argument("--programs", type=int, default=1000, help="how many programs to draw")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--modes", default=",".join(MODES))
    opts = parser.parse_args(argv)
    jax = importlib.import_module("jax")
    modes = opts.modes.split(",")
    failures: list[tuple[str, str]] = []
    ops_seen: Counter[str] = Counter()
    known: Counter[str] = Counter()
    count = 0
    start = time.perf_counter()

    @seed(opts.seed)
    @settings(max_examples=opts.programs, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(programs(max_steps=opts.max_steps))
    def run_one(program: Program) -> None:
        nonlocal count
        count += 1
        ops_seen.update(name for name, _ in program.steps)
        for mode in modes:
            try:
                check_against(program.function(__import__("fcore")), program.function(jax), jax,
                              program.inputs, modes=(mode,), rtol=2e-4, atol=2e-4)
            except Exception as e:  # a disagreement, or an error only one side raised
                known_as = next((k for k, pattern in KNOWN.items() if pattern.search(str(e))), None)
                if known_as is not None:
                    known[known_as] += 1
                    continue
                failures.append((mode, f"{program}\n    {type(e).__name__}: {str(e).strip()[:400]}"))
                print(f"[{mode}] {failures[-1][1]}", flush=True)
        if count % 100 == 0:
            print(f"... {count} programs, {len(failures)} disagreements", flush=True)

    run_one()
    by_mode = Counter(mode for mode, _ in failures)
    print(f"{count} programs x {len(modes)} modes in {time.perf_counter() - start:.0f} s: "
          f"{len(failures)} disagreements {dict(by_mode)}; ops used {len(ops_seen)}")
    for what, n in known.items():
        print(f"known difference, {n} (program, mode) pairs: {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

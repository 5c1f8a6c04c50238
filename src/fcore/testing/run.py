"""The long differential run: ``python -m fcore.testing.run --programs 10000 [--seed 0]``.

Draws programs from ``fcore.testing.programs()`` and compares fcore with a reference library
(``--reference``, default jax, which must be installed; imported by name, since fcore never
imports jax) in every mode; prints each disagreement (program, mode, error) as it is found, and
a summary; the intended differences of docs/testing.md (``KNOWN``) are counted apart. The
reference runs in a child process, beside fcore: a program that kills it (jax 0.10.2 dies with
SIGFPE when XLA folds some integer divisions by zero while compiling) is reported and counted
apart, the child is restarted, and the run goes on.
Exit status 1 when any program disagreed.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, seed, settings

import fcore
from fcore.testing.checks import MODES, compare_outcomes, input_dtypes, outcome
from fcore.testing.programs import Program, programs


#: The intended differences of docs/testing.md that the generator can meet, by the message they
#: give: counted, not failures (none at present).
KNOWN: dict[str, re.Pattern[str]] = {}

#: Seconds the reference may take for one program before it counts as hung.
_REFERENCE_TIMEOUT = 600.0


class _Raised(Exception):
    """An exception the reference raised outside ``outcome``'s user errors (re-raised here)."""


_error_types: dict[str, type[Exception]] = {}


def _error(name: str, message: str) -> Exception:
    """An exception named as the reference's was (``compare_outcomes`` compares names)."""
    cls = _error_types.get(name)
    if cls is None:
        cls = _error_types[name] = type(name, (Exception,), {})
    return cls(message)


def _portable(value: Any, reference: Any) -> Any:
    """An outcome the parent can unpickle without the reference: arrays as numpy, errors by name."""
    if isinstance(value, BaseException):
        return ("error", type(value).__name__, str(value))
    return ("value", reference.tree_util.tree_map(np.asarray, value))


def _serve(conn: Connection, modes: Sequence[str], reference_name: str) -> None:
    """The child: each program received is answered with its outcome in every mode, computed
    by the reference library (a module with JAX's API, imported by name: fcore never imports jax)."""
    reference = importlib.import_module(reference_name)
    while (program := conn.recv()) is not None:
        try:
            f = program.function(reference)
            conn.send([_portable(outcome(reference, f, program.inputs, mode), reference) for mode in modes])
        except Exception as e:  # not a user error of ``outcome``: the parent reports it
            conn.send(("raised", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"))


class _Reference:
    """The reference's outcomes of programs, computed in a child process while fcore computes its own."""

    def __init__(self, modes: Sequence[str], reference_name: str = "jax") -> None:
        self._modes = tuple(modes)
        self._reference_name = reference_name
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_conn = context.Pipe()
        self._process = context.Process(target=_serve, args=(child_conn, self._modes, self._reference_name), daemon=True)
        self._process.start()
        child_conn.close()

    def submit(self, program: Program) -> None:
        self._conn.send(program)

    def result(self) -> list[Any] | str:
        """The outcomes by mode, or why there are none (the child died or hung: restarted)."""
        try:
            if self._conn.poll(_REFERENCE_TIMEOUT):
                reply = self._conn.recv()
                if isinstance(reply, tuple) and reply[0] == "raised":
                    raise _Raised(reply[1])
                assert isinstance(reply, list)
                return [_error(*r[1:]) if r[0] == "error" else r[1] for r in reply]
            why = f"no answer in {_REFERENCE_TIMEOUT:.0f} s"
        except EOFError:
            why = "the reference process died"
        self._process.kill()
        self._process.join()
        why = f"{why} (exit code {self._process.exitcode})"
        self._start()
        return why

    def close(self) -> None:
        self._conn.send(None)
        self._process.join(timeout=30)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fcore.testing.run", description=__doc__)
    parser.add_argument("--programs", type=int, default=1000, help="how many programs to draw")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--reference", default="jax", help="the module with JAX's API to compare with")
    opts = parser.parse_args(argv)
    modes = opts.modes.split(",")
    reference = _Reference(modes, opts.reference)
    failures: list[tuple[str, str]] = []
    crashed: list[str] = []
    ops_seen: Counter[str] = Counter()
    known: Counter[str] = Counter()
    count = 0
    start = time.perf_counter()

    def report(mode: str, program: Program, e: BaseException) -> None:
        known_as = next((k for k, pattern in KNOWN.items() if pattern.search(str(e))), None)
        if known_as is not None:
            known[known_as] += 1
            return
        failures.append((mode, f"{program}\n    {type(e).__name__}: {str(e).strip()[:400]}"))
        print(f"[{mode}] {failures[-1][1]}", flush=True)

    @seed(opts.seed)
    @settings(max_examples=opts.programs, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(programs(max_steps=opts.max_steps))
    def run_one(program: Program) -> None:
        nonlocal count
        count += 1
        ops_seen.update(name for name, _ in program.steps)
        reference.submit(program)
        f = program.function(fcore)
        ours: list[Any] = []
        for mode in modes:
            try:
                ours.append(outcome(fcore, f, program.inputs, mode))
            except Exception as e:  # not a user error: fcore failed where it must not
                ours.append(e)
                report(mode, program, e)
        try:
            theirs = reference.result()
        except _Raised as e:
            report("reference", program, e)
            return
        if isinstance(theirs, str):
            crashed.append(f"{program}\n    {theirs}")
            print(f"[reference crashed] {crashed[-1]}", flush=True)
            return
        for mode, mine, its in zip(modes, ours, theirs):
            if isinstance(mine, Exception) and not isinstance(mine, (TypeError, ValueError, IndexError,
                                                                        ZeroDivisionError, OverflowError)):
                continue  # reported above
            try:
                compare_outcomes(mode, mine, its, rtol=2e-4, atol=2e-4, inputs=input_dtypes(program.inputs))
            except Exception as e:  # a disagreement, or an error only one side raised
                report(mode, program, e)
        if count % 100 == 0:
            print(f"... {count} programs, {len(failures)} disagreements, {len(crashed)} reference crashes",
                  flush=True)

    try:
        run_one()
    finally:
        reference.close()
    by_mode = Counter(mode for mode, _ in failures)
    print(f"{count} programs x {len(modes)} modes in {time.perf_counter() - start:.0f} s: "
          f"{len(failures)} disagreements {dict(by_mode)}; {len(crashed)} programs crashed the reference "
          f"(not compared); ops used {len(ops_seen)}")
    for what, n in known.items():
        print(f"known difference, {n} (program, mode) pairs: {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""``benchmarks.summary``: targets are read as bounds on the ratio or on fcore's own figure."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package lives at the repository root, beside src/
    sys.path.insert(0, str(ROOT))

from benchmarks.harness import Result  # noqa: E402
from benchmarks.summary import decode, encode, table, target_met  # noqa: E402


def test_targets_bound_the_ratio_or_fcores_own_figure() -> None:
    assert target_met(Result("a", "us", 9.0, 10.0, "<= 1.0")) is True
    assert target_met(Result("a", "us", 11.0, 10.0, "<= 1.0")) is False
    assert target_met(Result("a", "GFLOP/s", 90.0, 100.0, ">= 0.95")) is False
    assert target_met(Result("a", "eqns", 1.9, 5.0, "fcore <= 2.0")) is True
    assert target_met(Result("a", "s", 1.5, 0.1, "< 1 s")) is False
    assert target_met(Result("a", "us", 1.0, 1.0, "")) is None
    assert target_met(Result("a", "us", 1.0, 1.0, "flat in n")) is None


def test_rows_round_trip_and_tabulate() -> None:
    r = Result("jit dispatch", "us", 9.0, 10.0, "<= 1.0")
    assert decode(encode("jit", r)) == ("jit", r)
    assert decode("jit dispatch 9.0 10.0") is None
    text = table([("jit", r), ("ir", Result("parse", "s", 2.0, float("nan"), "< 1 s"))])
    assert "0.900" in text and "yes" in text and "2 s" in text and "NO" in text

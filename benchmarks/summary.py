"""One table of every fcore/jax ratio with its target beside it, and whether it is met.

``python -m benchmarks`` prints it after the suites' own rows; ``target_met`` reads the
targets as the rows write them (``<= 1.0``, ``>= 0.95``, ``fcore <= 2.0``, ``< 1 s``: a
bound on the ratio, or on fcore's own figure where the row says ``fcore`` or names a unit).
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Iterable

from benchmarks.harness import Result

#: How a child interpreter hands a result to the parent: this prefix, then the row as JSON.
RESULT_PREFIX = "@@result "

_TARGET = re.compile(r"^\s*(fcore\s+)?(<=|>=|<|>)\s*([0-9.eE+-]+)\s*([a-zA-Z%]*)\s*$")
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt,
}


def encode(suite: str, result: Result) -> str:
    return RESULT_PREFIX + json.dumps(
        {"suite": suite, "name": result.name, "unit": result.unit, "fcore": result.fcore, "jax": result.jax,
         "target": result.target}
    )


def decode(line: str) -> tuple[str, Result] | None:
    if not line.startswith(RESULT_PREFIX):
        return None
    d = json.loads(line[len(RESULT_PREFIX):])
    return d["suite"], Result(d["name"], d["unit"], d["fcore"], d["jax"], d["target"])


def target_met(result: Result) -> bool | None:
    """Whether the row meets its target; None where it states none (or none we can read)."""
    m = _TARGET.match(result.target)
    if m is None:
        return None
    own = bool(m.group(1) or m.group(4))
    value = result.fcore if own else result.ratio
    return _OPS[m.group(2)](value, float(m.group(3)))


def table(rows: Iterable[tuple[str, Result]]) -> str:
    """The summary table: suite, workload, ratio, target, met."""
    lines = [f"{'suite':<18} {'workload':<48} {'ratio':>8}  {'target':<14} met", "-" * 96]
    for suite, r in rows:
        met = target_met(r)
        mark = "" if met is None else ("yes" if met else "NO")
        m = _TARGET.match(r.target)
        own = m is not None and bool(m.group(1) or m.group(4))
        value = f"{r.fcore:.3g} {r.unit}" if own else f"{r.ratio:.3f}"
        lines.append(f"{suite:<18} {r.name:<48} {value:>8}  {r.target:<14} {mark}")
    return "\n".join(lines)

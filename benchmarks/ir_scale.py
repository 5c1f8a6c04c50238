"""Issue 5 workloads: printing, parsing, hashing and typecheck of a 10^5-equation jaxpr."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from benchmarks.harness import Result
from benchmarks.workloads import chain


def _seconds(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp

    import fcore
    import fcore.numpy as fnp
    from fcore.core import parse_jaxpr, typecheck

    n = 100_000
    x = np.linspace(0, 1, 8, dtype=np.float32)
    fj = fcore.make_jaxpr(chain(fnp, n))(x)
    jj = jax.make_jaxpr(chain(jnp, n))(x)
    text = str(fj)
    results = [
        Result("print 10^5-eqn jaxpr", "s", _seconds(lambda: str(fj.jaxpr)), _seconds(lambda: str(jj)), "< 1 s"),
        Result("parse 10^5-eqn jaxpr (jax: n/a)", "s", _seconds(lambda: parse_jaxpr(text)), float("nan"), "< 1 s"),
        Result("hash 10^5-eqn jaxpr (fresh; jax: id)", "s",
               _seconds(lambda: hash(fcore.core.Jaxpr(fj.jaxpr.constvars, fj.jaxpr.invars, fj.jaxpr.outvars,
                                                      fj.jaxpr.eqns))), float("nan"), "< 1 s"),
        Result("typecheck 10^5-eqn jaxpr", "s", _seconds(lambda: typecheck(fj)),
               _seconds(lambda: jax.core.check_jaxpr(jj.jaxpr)), "< 1 s"),
    ]
    return results

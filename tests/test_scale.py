"""Large programs: a 10^4-equation chain through trace, jvp, vmap, grad, print, parse and
lower under the default recursion limit (nothing may recurse per equation). The 10^5 and
10^6 figures are in benchmarks/scale.py, out of the suite's time budget."""

from __future__ import annotations

import sys

import numpy as np

import fcore
import fcore.numpy as fnp
from fcore.backend.lowering import lower_jaxpr
from fcore.core import parse_jaxpr
from fcore.typing import ArrayLike

N = 10_000


def _chain(v: ArrayLike) -> fcore.Array:
    x = fnp.asarray(v)
    for i in range(N):
        x = fnp.sin(x) if i % 2 == 0 else x * 0.999
    return x


def test_ten_thousand_equations_without_deep_recursion() -> None:
    assert sys.getrecursionlimit() < N  # a recursion per equation would fail here
    x = np.linspace(0, 1, 4, dtype=np.float32)
    closed = fcore.make_jaxpr(_chain)(x)
    assert len(closed.jaxpr.eqns) == N
    text = str(closed)
    assert str(parse_jaxpr(text)) == str(closed.jaxpr)
    assert len(fcore.make_jaxpr(lambda v: fcore.jvp(_chain, (v,), (v,)))(x).jaxpr.eqns) >= 2 * N
    assert len(fcore.make_jaxpr(fcore.vmap(_chain))(np.stack([x, x])).jaxpr.eqns) == N
    assert len(fcore.make_jaxpr(fcore.grad(lambda v: _chain(v).sum()))(x).jaxpr.eqns) >= 2 * N
    module = lower_jaxpr(closed, "main")
    assert module.count("stablehlo.sine") == N // 2

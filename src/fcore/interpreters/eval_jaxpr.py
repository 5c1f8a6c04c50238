"""Evaluating a jaxpr: bind each equation in order under the current trace.

Because it only calls ``bind``, ``eval_jaxpr`` works under any transformation: it is
how a staged jaxpr is replayed eagerly, re-traced, or differentiated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.trace import add_source_note, equation_source
from fcore.ir.core import ClosedJaxpr, Jaxpr, Literal


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Run ``jaxpr`` on ``consts`` and ``args``; returns the list of outputs."""
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(
            f"eval_jaxpr: jaxpr takes {len(jaxpr.constvars)} consts and {len(jaxpr.invars)} args, "
            f"got {len(consts)} and {len(args)}"
        )
    env: dict[int, Any] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[id(v)] = x
    for v, x in zip(jaxpr.invars, args):
        env[id(v)] = x

    def read(a: Any) -> Any:
        return a if type(a) is Literal else env[id(a)]

    def read_out(a: Any) -> Any:
        return ArrayImpl(np.asarray(a.val), a.aval.weak_type) if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        invals = [a if type(a) is Literal else env[id(a)] for a in eqn.invars]
        with equation_source(eqn):
            try:
                out = eqn.primitive.bind(*invals, **eqn.params)
            except Exception as e:
                add_source_note(e, eqn)
                raise
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, out):
                env[id(v)] = x
        else:
            env[id(eqn.outvars[0])] = out
    return [read_out(a) for a in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A Python function running ``closed`` (``fcore.core.jaxpr_as_fun``)."""

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    return fun

"""Evaluating a jaxpr: bind each equation in order under the current trace.

Because it only calls ``bind``, ``eval_jaxpr`` works under any transformation: it is
how a staged jaxpr is replayed eagerly, re-traced, or differentiated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.errors import JaxprArgumentError
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.trace import Tracer, add_source_note, equation_source
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr, Literal, Var


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Run ``jaxpr`` on ``consts`` and ``args``; returns the list of outputs.

    Raises ``JaxprArgumentError`` when the arguments do not match the jaxpr's inputs in count,
    shape or dtype (weak types may differ): a wrong shape would otherwise run silently.
    """
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise JaxprArgumentError(
            f"eval_jaxpr: jaxpr takes {len(jaxpr.constvars)} consts and {len(jaxpr.invars)} args, "
            f"got {len(consts)} and {len(args)}"
        )
    _check_arguments("constant", jaxpr.constvars, consts)
    _check_arguments("argument", jaxpr.invars, args)
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


def _check_arguments(kind: str, binders: Sequence[Var], values: Sequence[Any]) -> None:
    for i, (v, x) in enumerate(zip(binders, values)):
        want = v.aval
        got = _aval_if_array(x)
        if got is None:
            continue
        if got.shape != want.shape or (got.dtype != want.dtype and not got.weak_type):
            raise JaxprArgumentError(
                f"eval_jaxpr: {kind} {i} has type {got.str_short(short_dtypes=True)} but the jaxpr's "
                f"{'constvar' if kind == 'constant' else 'input'} {i} is typed {want.str_short(short_dtypes=True)}"
            )


def _aval_if_array(x: object) -> ShapedArray | None:
    """The aval of an array argument without copying it; ``None`` for other values (a symbolic
    zero, a Python object a rule accepts), which the equations' own rules judge."""
    if isinstance(x, (ArrayImpl, Literal, Tracer)):
        return get_aval(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, (bool, int, float, complex)):
        # A Python scalar is weakly typed: it adopts the input's dtype as in JAX.
        return ShapedArray((), dtypes.python_scalar_dtype(x), not isinstance(x, bool))
    return None


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A Python function running ``closed`` (``fcore.core.jaxpr_as_fun``)."""

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    return fun

"""Compositions: ``linearize`` = jvp + partial eval; ``vjp`` = linearize + transpose.

Each exists twice, as the *same* composition: over a Python function while tracing
(so Python control flow on concrete primal values works, as in the seeds), and over
a jaxpr (pure passes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import EvalTrace, get_aval, to_numpy_arg
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.stack import current_trace, set_current_trace, trace_scope
from fcore.interpreters.trace import Tracer, transform_name_stack
from fcore.interpreters.staging import StagingTracer
from fcore.ir.core import ClosedJaxpr, Jaxpr, Var
from fcore.transforms import ad_util
from fcore.transforms.ad_util import Zero, has_tangent
from fcore.transforms.jvp import JVPTrace, JVPTracer, jvp_jaxpr
from fcore.transforms.partial_eval import PartialEvalTrace, TapeEntry, partial_eval_jaxpr
from fcore.transforms.simplify import simplify_algebra
from fcore.transforms.transpose import backward_pass, backward_tape, transpose_jaxpr, transpose_open


@attrs.frozen(slots=True)
class Tape:
    """A transient linear map as ``PartialEvalTrace`` recorded it (``linearize_flat``'s
    ``transient``, when it staged nothing but tape entries): the map's input variables, its
    entries, and per output the variable holding it (``None``: not a linear value)."""

    invars: list[Var]
    entries: list[TapeEntry]
    outs: list[Var | None]


@attrs.frozen(slots=True)
class Linearized:
    """The result of tracing ``linearize``: primal outputs and the staged linear map (a
    ``Tape`` only where ``linearize_flat`` was ``transient``)."""

    primals_out: list[Any]
    linear: Jaxpr | Tape  # (residual constvars; one tangent per primal input) -> tangents out
    residuals: list[Any]

    def jvp(self, tangents: Sequence[Any]) -> list[Any]:
        assert isinstance(self.linear, Jaxpr), "a transient linear map is only transposed"
        return eval_jaxpr(self.linear, self.residuals, *tangents)


def linearize_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any], description: str, *, transient: bool = False
) -> Linearized:
    """Run ``fun`` on ``primals`` now; stage only its tangent (linear) part.

    ``transient``: the linear jaxpr is only transposed by the eager backward pass, now (``grad``
    called eagerly), which reads no source info of a parameterless equation: those are staged
    without it (the stack walk that finds the user's line is a sixth of eager ``grad``'s time)."""
    parent = current_trace()
    pe = PartialEvalTrace(parent, description)
    pe.record_source_info = pe.share_residuals = not transient
    if transient:
        pe.tape = []
    jvp = JVPTrace(parent, description, rule_trace=pe)
    tracers: list[JVPTracer] = []
    for p in primals:
        if transient and type(p) is not ArrayImpl and not isinstance(p, Tracer):
            # A NumPy or Python input as the eager array it becomes at its first operation
            # (JAX's arrays too are made at the call): each operation on it would convert it again.
            p = ArrayImpl(*to_numpy_arg(p))
        aval = get_aval(p)
        t = pe.new_arg(aval)
        tracers.append(JVPTracer(jvp, p, t if has_tangent(aval) else Zero(aval), aval))
    try:
        with trace_scope(jvp), transform_name_stack("jvp"):
            outs = fun(*tracers)
            pairs = [jvp.unpack(o) for o in outs]
        with set_current_trace(pe):
            tangent_outs = [ad_util.instantiate(t) for _, t in pairs]
        if pe.tape is not None:  # (the residuals are in its entries)
            outs_at = [t.atom if type(t) is StagingTracer and t._trace is pe else None for t in tangent_outs]
            tape = Tape(pe.invars, pe.tape, [v if type(v) is Var else None for v in outs_at])
            return Linearized([p for p, _ in pairs], tape, [])
        linear, residuals = pe.to_jaxpr(tangent_outs)
    finally:
        pe.alive = False
    return Linearized([p for p, _ in pairs], linear, residuals)


@attrs.frozen(slots=True)
class VJP:
    """A pullback: ``__call__(cts)`` returns one cotangent per primal input.

    ``residuals`` replaces the saved residuals by values of the same types: ``fcore.vjp``
    returns a ``Partial`` whose leaves are the residuals, so they may come back as tracers
    (the pullback passed through ``jit``) or as other arrays (``tree_map`` over it)."""

    linearized: Linearized
    _transposed: list[ClosedJaxpr] = attrs.field(factory=list)
    _transposed_open: list[tuple[Jaxpr, tuple[Any, ...]]] = attrs.field(factory=list)

    def __call__(self, cts: Sequence[Any], residuals: Sequence[Any] | None = None) -> list[Any]:
        lin = self.linearized.linear
        if type(lin) is Tape:
            # A transient map (``grad`` called eagerly): its transpose rules applied now.
            return backward_tape(lin.invars, lin.entries, lin.outs, cts)
        assert isinstance(lin, Jaxpr)
        saved = self.linearized.residuals
        res = saved if residuals is None else residuals
        if type(current_trace()) is EvalTrace:
            # Eager: evaluate the transpose rules directly, as JAX's backward_pass does;
            # building, simplifying and then interpreting a jaxpr would cost three more walks.
            return backward_pass(lin, [True] * len(lin.invars), res, [], cts)
        if residuals is None or all(a is b for a, b in zip(residuals, saved)):
            if not self._transposed:
                jaxpr, extra = transpose_open(lin, [True] * len(lin.invars))
                # Transposition leaves x*1 and neg-pairs behind; removing them is cheap and
                # keeps staged gradients small.
                self._transposed.append(simplify_algebra(ClosedJaxpr(jaxpr, tuple(saved) + tuple(extra))))
            backward = self._transposed[0]
            return eval_jaxpr(backward.jaxpr, backward.consts, *cts)
        if not self._transposed_open:
            open_jaxpr, new_consts = transpose_open(lin, [True] * len(lin.invars))
            self._transposed_open.append((open_jaxpr, tuple(new_consts)))
        open_jaxpr, consts = self._transposed_open[0]
        return eval_jaxpr(open_jaxpr, [*res, *consts], *cts)


def vjp_flat(
    fun: Callable[..., Sequence[Any]], primals: Sequence[Any], description: str, *, transient: bool = False
) -> tuple[list[Any], VJP]:
    lin = linearize_flat(fun, primals, description, transient=transient)
    return lin.primals_out, VJP(lin)


def linearize_jaxpr(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, ClosedJaxpr, int]:
    """linearize_jaxpr : (a -> b) -> (a -> (b, r), (r, T a) -> T b)

    jvp_jaxpr with every tangent nonzero, then partial_eval_jaxpr with the tangents
    unknown. Returns the primal jaxpr, the linear jaxpr and the number of residuals.
    """
    n = len(closed.jaxpr.invars)
    jvp, _ = jvp_jaxpr(closed, [True] * n, True)
    known, unknown, _, num_res = partial_eval_jaxpr(jvp, [False] * n + [True] * n, [False] * len(
        closed.jaxpr.outvars
    ) + [True] * len(closed.jaxpr.outvars))
    return known, unknown, num_res


def vjp_jaxpr(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, ClosedJaxpr, int]:
    """vjp_jaxpr : (a -> b) -> (a -> (b, r), (r, ct b) -> ct a)

    ``linearize_jaxpr`` followed by ``transpose_jaxpr`` of the linear half (residuals
    are its non-linear inputs).
    """
    primal, linear, num_res = linearize_jaxpr(closed)
    n_lin = len(linear.jaxpr.invars) - num_res
    backward = transpose_jaxpr(linear, [False] * num_res + [True] * n_lin)
    return primal, backward, num_res

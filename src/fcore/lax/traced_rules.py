"""Higher-order primitives whose parameters include traced Python rules (custom derivatives).

A custom rule is traced to a jaxpr on first use (``LazyJaxpr``), as JAX's are: a rule
usually calls the function it differentiates, so tracing it whenever the function is
staged would never end. Such a parameter is compared by identity and prints as the
rule's name.

A rule traced late must still see the values the function closed over as they are at the
call (batched under ``vmap``, say, or staged by a trace that has finished since): a rule
jaxpr takes those values as leading inputs (``trace_rule``), and a rule run as Python
(a ``bwd``) runs with them standing for the current operands (``with_closure``).

Also the small helpers the call-like primitives of ``custom_derivatives`` and ``remat``
share: typed parameter access, evaluation, eager results, lowering as a ``func.call``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from fcore.backend.lowering import LoweringRuleContext, tensor_type
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import to_numpy_arg
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.stack import bind_with_trace, current_trace, set_current_trace, trace_scope
from fcore.interpreters.staging import StagingTrace
from fcore.interpreters.trace import Trace, Tracer
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, JaxprEqn
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.primitive import Primitive

P = TypeVar("P")
T = TypeVar("T")

__all__ = ["LazyJaxpr", "trace_rule", "with_closure", "param_of", "eval_closed", "as_eager_results", "lower_call"]


class LazyJaxpr(ParamStruct):
    """A closed jaxpr traced on first use and kept: a custom rule (see the module docstring).

    Compared by identity; prints as the rule's name (``jvp=f_jvp``), as JAX does.
    """

    __slots__ = ("name", "_make", "_closed")

    def __init__(self, name: str, make: Callable[[], ClosedJaxpr]) -> None:
        self.name = name
        self._make: Callable[[], ClosedJaxpr] | None = make
        self._closed: ClosedJaxpr | None = None

    def get(self) -> ClosedJaxpr:
        closed = self._closed
        if closed is None:
            assert self._make is not None
            closed = self._make()
            self._closed, self._make = closed, None  # drop the closure: the tracing is done
        return closed

    def derive(self, transform: Callable[[ClosedJaxpr], ClosedJaxpr]) -> LazyJaxpr:
        """A lazy ``transform(self.get())`` (e.g. the rule of a batched call)."""
        return LazyJaxpr(self.name, lambda: transform(self.get()))

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return self.name


class _ClosureTrace(Trace):
    """Hands every bind to ``parent`` with the objects in ``values`` (by identity) replaced."""

    __slots__ = ("parent", "values")

    def __init__(self, parent: Trace, values: dict[int, Any]) -> None:
        super().__init__("custom_vjp bwd")
        self.parent = parent
        self.values = values

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        values = self.values
        return bind_with_trace(self.parent, prim, [values.get(id(a), a) for a in args], params)


def with_closure(fun: Callable[[], T], closure: Sequence[Any], values: Sequence[Any]) -> T:
    """Run ``fun`` with the tracers among ``closure`` (values a function closed over when it
    was staged) standing for ``values`` (the same operands now, e.g. batched, or the values of
    a later trace): a ``bwd`` called after the staging trace finished still works."""
    subst = {id(c): v for c, v in zip(closure, values, strict=True) if isinstance(c, Tracer) and c is not v}
    if not subst:
        return fun()
    with set_current_trace(_ClosureTrace(current_trace(), subst)):
        return fun()


class _RuleTrace(StagingTrace):
    """Stages a custom rule; the values the function's body closes over (which the rule
    usually closes over too) are its leading inputs rather than constants."""

    __slots__ = ("closure",)

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.closure: dict[int, Atom] = {}

    def to_atom(self, x: object) -> Atom:
        atom = self.closure.get(id(x))
        return super().to_atom(x) if atom is None else atom


def trace_rule(fun: Callable[..., Sequence[Any]], closure: Sequence[Any], closure_avals: Sequence[ShapedArray],
               avals: Sequence[ShapedArray], description: str) -> ClosedJaxpr:
    """Stage ``fun`` (flat in, flat out) as a jaxpr taking ``closure`` (the values the
    function's body closes over, by identity) followed by ``fun``'s own arguments."""
    trace = _RuleTrace(description)
    with trace_scope(trace):
        for c, aval in zip(closure, closure_avals, strict=True):
            trace.closure[id(c)] = trace.new_arg(aval).atom
        outs = fun(*[trace.new_arg(a) for a in avals])
        return trace.to_closed_jaxpr(outs)


def param_of(eqn: JaxprEqn, name: str, cls: type[P]) -> P:
    """The parameter ``name`` of ``eqn``, which the primitive declares of type ``cls``."""
    value = eqn.params[name]
    assert isinstance(value, cls), (name, value)
    return value


def eval_closed(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``closed`` on ``args`` under the current trace (binding each equation)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def as_eager_results(outs: Sequence[Any], avals: Sequence[ShapedArray]) -> list[ArrayImpl]:
    """Eager results as ``ArrayImpl`` s of the given types (an output may be an input as passed)."""
    result: list[ArrayImpl] = []
    for o, a in zip(outs, avals, strict=True):
        if type(o) is ArrayImpl and o.dtype == a.dtype and o.weak_type == a.weak_type:
            result.append(o)
        else:
            arr, _ = to_numpy_arg(o)
            result.append(ArrayImpl(np.asarray(arr, a.dtype), a.weak_type))
    return result


def lower_call(ctx: LoweringRuleContext, args: Sequence[str], closed: ClosedJaxpr, name: str) -> list[str]:
    """Lower a call of the const-free ``closed`` as a ``func.call`` of a private function."""
    sym = ctx.module.private_function(closed.jaxpr, name)
    outs = closed.out_avals
    ins = ", ".join(tensor_type(a) for a in ctx.avals_in)
    call = f"func.call @{sym}({', '.join(args)}) : ({ins}) -> ({', '.join(tensor_type(a) for a in outs)})"
    if not outs:
        ctx.fn.lines.append(f"    {call}{ctx.fn.location}")
        return []
    result = ctx.emit(call, n_results=len(outs))
    return [result] if len(outs) == 1 else [f"{result}#{i}" for i in range(len(outs))]

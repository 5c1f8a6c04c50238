"""Custom rules traced late: parameters that hold a user's Python rule (custom derivatives).

A custom rule is traced to a jaxpr on first use (``LazyJaxpr``), as JAX's are: a rule
usually calls the function it differentiates, so tracing it whenever the function is
staged would never end. Such a parameter is compared by identity and prints as the
rule's name (docs/guide.md, "Custom derivatives").

A rule traced late must still see the values the function closed over as they are at the
call (batched under ``vmap``, say, or staged by a trace that has finished since): a rule
jaxpr takes those values as leading inputs (``trace_rule``), and a rule run as Python
(a ``bwd``) runs with them standing for the current operands (``with_closure``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from fcore.interpreters.array import Array
from fcore.interpreters.stack import bind_with_trace, current_trace, set_current_trace, trace_scope
from fcore.interpreters.staging import StagingTrace
from fcore.interpreters.trace import Trace, Tracer
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr
from fcore.ir.params import ByIdentity, ParamValue
from fcore.ir.primitive import Primitive
from fcore.lax._base import ArrayLike

T = TypeVar("T")

__all__ = ["LazyJaxpr", "trace_rule", "with_closure"]


class LazyJaxpr(ByIdentity):
    """A closed jaxpr traced on first use and kept: a custom rule (see the module docstring).

    Compared by identity; prints as the rule's name (``jvp=f_jvp``), as JAX does. It does
    not pickle: tracing the rule to pickle it would not end (a rule usually calls its own
    function, whose staged call holds a new lazy rule, and so on).
    """

    __slots__ = ("_make", "_closed")
    what = "custom rule"

    def __init__(self, name: str, make: Callable[[], ClosedJaxpr]) -> None:
        super().__init__(name)
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


class _ClosureTrace(Trace):
    """Hands every bind to ``parent`` with the objects in ``values`` (by identity) replaced."""

    __slots__ = ("parent", "values")

    def __init__(self, parent: Trace, values: dict[int, ArrayLike]) -> None:
        super().__init__("custom_vjp bwd")
        self.parent = parent
        self.values = values

    def process_primitive(self, prim: Primitive, args: Sequence[object], params: dict[str, ParamValue]) -> object:
        values = self.values
        return bind_with_trace(self.parent, prim, [values.get(id(a), a) for a in args], params)


def with_closure(fun: Callable[[], T], closure: Sequence[ArrayLike], values: Sequence[ArrayLike]) -> T:
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


def trace_rule(fun: Callable[..., Sequence[Array]], closure: Sequence[ArrayLike], closure_avals: Sequence[ShapedArray],
               avals: Sequence[ShapedArray], description: str) -> ClosedJaxpr:
    """Stage ``fun`` (flat in, flat out) as a jaxpr taking ``closure`` (the values the
    function's body closes over, by identity) followed by ``fun``'s own arguments."""
    trace = _RuleTrace(description)
    with trace_scope(trace):
        for c, aval in zip(closure, closure_avals, strict=True):
            trace.closure[id(c)] = trace.new_arg(aval).atom
        outs = fun(*[trace.new_arg(a) for a in avals])
        return trace.to_closed_jaxpr(outs)

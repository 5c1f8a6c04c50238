"""The trace stack: the current trace lives in a ``ContextVar`` (never a module global).

Entering a transformation is a ``with trace_scope(trace)`` block, which sets the
variable and always resets it, so an exception cannot leave a stale handler behind;
leaving the block also retires the trace so leaked tracers are detected. Each
thread and each asyncio task has its own current trace; a context copied while a trace
was current (``contextvars.copy_context``, an asyncio task) still holds it once retired,
so a retired trace counts as eager evaluation (``current_trace``, ``StagingTrace``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.trace import Trace, user_location
from fcore.ir import primitive as _primitive
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive

_current_trace: ContextVar[Trace] = ContextVar("fcore_current_trace", default=EVAL_TRACE)

#: The variable itself, for the few per-primitive hot paths (a trace applying a rule under
#: another trace) where even ``set_current_trace``'s object costs too much; they must pair
#: every ``set`` with a ``reset`` in a ``finally``.
CURRENT_TRACE = _current_trace
#: ``CURRENT_TRACE.get``, bound once: ``CURRENT_TRACE.get()`` looks the method up on the variable
#: and makes (and frees) a bound-method object at each call, ~300 instructions of an eager op's
#: ~7k. For the per-primitive hot paths (user functions, rule halves); returns the variable's
#: value as is (a retired trace included, unlike ``current_trace``).
trace_now = _current_trace.get


def current_trace() -> Trace:
    """The trace handling binds here; eager evaluation where the current one has finished
    (a ``contextvars`` context or asyncio task copied while a transformation ran keeps the
    variable's value after the transformation returns)."""
    trace = trace_now()
    return trace if trace.alive else EVAL_TRACE


class set_current_trace:  # noqa: N801 - used like the function-style context managers
    """``with set_current_trace(trace):`` makes ``trace`` handle binds inside the block
    (without retiring it afterwards). A class rather than ``contextlib.contextmanager``:
    every jvp rule application enters one, and a generator per entry costs more."""

    __slots__ = ("_trace", "_token")

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def __enter__(self) -> Trace:
        self._token = _current_trace.set(self._trace)
        return self._trace

    def __exit__(self, *exc: object) -> None:
        _current_trace.reset(self._token)


class trace_scope:  # noqa: N801 - used like the function-style context managers
    """``with trace_scope(trace):`` runs a transformation's body under ``trace``, then retires the
    trace. A class rather than ``contextlib.contextmanager`` (a generator per entry costs more)."""

    __slots__ = ("_trace", "_token")

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def __enter__(self) -> Trace:
        trace = self._trace
        trace.created_at = user_location()
        self._token = _current_trace.set(trace)
        return trace

    def __exit__(self, *exc: object) -> None:
        _current_trace.reset(self._token)
        self._trace.alive = False


def bind(prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
    """``bind`` is an effect: the current trace handles it."""
    return current_trace().process_primitive(prim, args, params)


def bind_with_trace(trace: Trace, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
    """Bind under ``trace`` (a parent), with ``trace`` current while its rules run."""
    token = _current_trace.set(trace)
    try:
        return trace.process_primitive(prim, args, params)
    finally:
        _current_trace.reset(token)


_primitive.install_handler_var(_current_trace)

"""Small pieces of JAX's front end: ``eval_shape``, ``typeof``, ``named_scope`` /
``named_call`` and ``ensure_compile_time_eval``."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

from fcore.api.refs import typeof as typeof
from fcore.api.staging import make_jaxpr
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import bind_with_trace, current_trace, set_current_trace
from fcore.interpreters.trace import Trace, Tracer, name_stack
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive

__all__ = ["current_name_stack", "ensure_compile_time_eval", "eval_shape", "named_call", "named_scope", "typeof"]

F = TypeVar("F", bound=Callable[..., Any])


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of ``ShapeDtypeStruct`` s,
    found by tracing alone (nothing is computed). Arguments may be arrays, scalars or
    ``ShapeDtypeStruct`` s, as in ``jax.eval_shape``."""
    return make_jaxpr(fun, return_shape=True)(*args, **kwargs)[1]


# -- names ----------------------------------------------------------------------------------
def current_name_stack() -> tuple[str, ...]:
    """The names of the enclosing ``named_scope`` s, outermost first."""
    return name_stack.get()


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Name the operations staged inside the block (``jax.named_scope``); what they compute is
    unchanged. The names form a context-local stack (``current_name_stack``) that every equation
    staged inside records in its ``source_info.name_stack`` (printed by
    ``jaxpr.pretty_print(name_stack=True)``, emitted in StableHLO locations)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    token = name_stack.set((*name_stack.get(), name))
    try:
        yield
    finally:
        name_stack.reset(token)


def named_call(fun: F, *, name: str | None = None) -> F:
    """``fun`` with its operations staged under ``name`` (default: the function's name), as
    ``jax.named_call``; the results are unchanged."""
    scope = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with named_scope(scope):
            return fun(*args, **kwargs)

    return cast(F, named)  # functools.wraps keeps the signature


# -- compile-time evaluation --------------------------------------------------------------------
class CompileTimeEvalTrace(Trace):
    """Computes operations on concrete values now, even while a function is being staged; an
    operation on a tracer goes to the trace that was current before (``parent``)."""

    __slots__ = ("parent",)

    def __init__(self, parent: Trace) -> None:
        super().__init__("ensure_compile_time_eval")
        self.parent = parent

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        for a in args:
            if isinstance(a, Tracer):
                return bind_with_trace(self.parent, prim, args, params)
        return bind_with_trace(EVAL_TRACE, prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, operations whose operands are all concrete are evaluated right away,
    also under ``jit``, so their results are concrete (``jax.ensure_compile_time_eval``)."""
    parent = current_trace()
    with set_current_trace(parent if parent is EVAL_TRACE else CompileTimeEvalTrace(parent)):
        yield

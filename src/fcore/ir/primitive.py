"""Primitives: named operations whose rules are data looked up by the interpreters.

A ``Primitive`` lives in the IR layer because equations name it, but applying one
(``bind``) is an *effect* handled by whichever interpreter is active; that handler
lives in ``fcore.interpreters``, which installs itself here when imported
(dependency inversion keeps ``ir`` free of imports from upper layers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from fcore.ir.avals import ShapedArray
from fcore.ir.params import ParamValue

if TYPE_CHECKING:
    from fcore.ir.core import JaxprEqn

F = TypeVar("F", bound=Callable[..., Any])

AbstractEvalResult = ShapedArray | Sequence[ShapedArray]


class Handler(Protocol):
    """What handles ``bind``: a trace (defined in ``fcore.interpreters``)."""

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any: ...


#: The context variable holding the current handler; installed by fcore.interpreters.
_handler_var: list[ContextVar[Any]] = []
_registry: dict[str, Primitive] = {}


def install_handler_var(var: ContextVar[Any]) -> None:
    """Called once by ``fcore.interpreters``: ``bind`` dispatches to ``var.get()``."""
    _handler_var[:] = [var]


def lookup_primitive(name: str) -> Primitive | None:
    """The primitive registered under ``name`` (used by the jaxpr parser)."""
    return _registry.get(name)


def registered_primitives() -> Mapping[str, Primitive]:
    return dict(_registry)


class Primitive:
    """A named operation with its rules (SPEC §3.5).

    Rules are plain callables stored on the primitive. Signatures (single values for
    single-result primitives, lists where ``multiple_results``):

    * impl ``(*arrays, **params) -> array(s)`` on concrete NumPy values;
    * abstract eval ``(*avals, **params) -> aval(s)``;
    * jvp ``(primals, tangents, **params) -> (primals_out, tangents_out)``;
    * transpose ``(cts, *invals, **params) -> cts_in`` with ``UndefinedPrimal`` for linear inputs;
    * batching ``(axis_size, vals, dims, **params) -> (outs, out_dims)``;
    * lowering ``(ctx, *operands, **params) -> results`` (see docs/design.md).

    ``param_names``, when given, is the exact set of parameters the primitive accepts;
    ``typecheck`` rejects equations with others.
    """

    __slots__ = (
        "name",
        "multiple_results",
        "param_names",
        "impl_rule",
        "abstract_eval_rule",
        "jvp_rule",
        "transpose_rule",
        "batching_rule",
        "lowering_rule",
        "partial_eval_rule",
        "dce_rule",
        "weak_type_rule",
        "jvp_takes_symbolic_zeros",
        "impl_takes_arrays",
        "eager_rule",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        *,
        multiple_results: bool = False,
        param_names: Sequence[str] | None = None,
    ) -> None:
        self.name = name
        self.multiple_results = multiple_results
        self.param_names: frozenset[str] | None = None if param_names is None else frozenset(param_names)
        self.impl_rule: Callable[..., Any] | None = None
        self.abstract_eval_rule: Callable[..., AbstractEvalResult] | None = None
        self.jvp_rule: Callable[..., Any] | None = None
        self.transpose_rule: Callable[..., Any] | None = None
        self.batching_rule: Callable[..., Any] | None = None
        self.lowering_rule: Callable[..., Any] | None = None
        #: Partial evaluation of a higher-order primitive, at the level of its params:
        #: ``(unknowns, **params) -> (known_params, unknown_params, out_unknowns, num_res)``.
        #: The known half maps known inputs to known outputs + residuals; the unknown half
        #: maps residuals + unknown inputs to unknown outputs; both bind this primitive.
        self.partial_eval_rule: Callable[..., tuple[Any, Any, list[bool], int]] | None = None
        #: jaxpr-level DCE of one equation (higher-order primitives).
        self.dce_rule: Callable[[Sequence[bool], JaxprEqn], tuple[list[bool], JaxprEqn | None]] | None = None
        #: ``(in_weak_types, params) -> out weak type`` used by eager evaluation.
        self.weak_type_rule: Callable[[Sequence[bool], Mapping[str, ParamValue]], bool] | None = None
        #: fcore's own jvp rules understand ``Zero`` tangents; user rules get materialized zeros.
        self.jvp_takes_symbolic_zeros = False
        #: The eager impl receives fcore arrays as they are (e.g. ``jit`` keeps device buffers).
        self.impl_takes_arrays = False
        #: Optional fast path of eager evaluation, ``(*args, **params) -> result | None`` on the
        #: operands as given; ``None`` means "not the common case" and the impl path runs.
        self.eager_rule: Callable[..., Any] | None = None
        if name not in _registry:
            _registry[name] = self

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: ParamValue) -> Any:
        """Apply the primitive: the active interpreter (the current trace) decides what that means."""
        handler: Handler = _handler_var[0].get()
        return handler.process_primitive(self, args, params)

    # Decorator-style registration of rules, as in JAX (each returns its argument).
    def def_impl(self, f: F) -> F:
        self.impl_rule = f
        return f

    def def_abstract_eval(self, f: F) -> F:
        self.abstract_eval_rule = f
        return f

    def def_jvp(self, f: F) -> F:
        self.jvp_rule = f
        return f

    def def_transpose(self, f: F) -> F:
        self.transpose_rule = f
        return f

    def def_batching(self, f: F) -> F:
        self.batching_rule = f
        return f

    def def_lowering(self, f: F) -> F:
        self.lowering_rule = f
        return f

    def def_partial_eval(self, f: F) -> F:
        self.partial_eval_rule = f
        return f

    def def_dce(self, f: F) -> F:
        self.dce_rule = f
        return f

    def abstract_eval(self, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> list[ShapedArray]:
        """Output avals as a list, whatever ``multiple_results`` is."""
        rule = self.abstract_eval_rule
        if rule is None:
            raise NotImplementedError(f"primitive '{self.name}' has no abstract evaluation rule")
        out = rule(*avals, **params)
        if isinstance(out, ShapedArray):
            assert not self.multiple_results, f"abstract eval of {self.name} must return a list"
            return [out]
        assert self.multiple_results, f"abstract eval of {self.name} returned {out!r}"
        return list(out)

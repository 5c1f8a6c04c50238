"""Primitives: named operations whose rules are data looked up by the interpreters.

A ``Primitive`` lives in the IR layer because equations name it, but applying one
(``bind``) is an *effect* handled by whichever interpreter is active; that handler
lives in ``fcore.interpreters``, which installs itself here when imported
(dependency inversion keeps ``ir`` free of imports from upper layers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import sys
from contextvars import ContextVar
from typing import Any, Generic, Protocol, TypeVar, cast

import attrs
from typing_extensions import ParamSpec

from fcore.ir.avals import ShapedArray
from fcore.ir.effects import Effects
from fcore.ir.params import ParamValue

F = TypeVar("F", bound=Callable[..., Any])
#: A primitive's parameters as a keyword-only signature (its schema's constructor).
P = ParamSpec("P", default=...)

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


#: Names of fcore's own primitives: a user primitive may not take one.
_builtin_names: set[str] = set()


def _register(prim: Primitive[Any], defining_module: str) -> None:
    """Enter ``prim`` in the name registry (what the parser resolves names with).

    A primitive defined in fcore's own modules is built in; a user primitive may not reuse a
    built-in name (printed text would be ambiguous, and the parser would resolve it to the
    built-in). A user primitive defined again under its own name (a re-run notebook cell, a
    helper called twice) replaces the earlier one, as the latest definition.
    """
    name = prim.name
    if defining_module == "fcore" or defining_module.startswith("fcore."):
        _builtin_names.add(name)
    elif name in _builtin_names:
        raise ValueError(
            f"a primitive named '{name}' is already defined by fcore; give the new primitive another "
            "name (jaxpr text and the parser identify primitives by name)"
        )
    _registry[name] = prim


def lookup_primitive(name: str) -> Primitive | None:
    """The primitive registered under ``name`` (used by the jaxpr parser)."""
    return _registry.get(name)


def registered_primitives() -> Mapping[str, Primitive]:
    return dict(_registry)


class Primitive(Generic[P]):
    """A named operation: what is the primitive's own, and nothing an interpreter owns (docs/design.md, "The rule surface").

    It holds its name, its parameter schema, its abstract evaluation, its eager impl and flags.
    Every other rule (jvp, transpose, batching, partial eval, DCE, lowering) lives in the
    ``RuleTable`` of the interpreter that applies it (``fcore.ir.rules``; docs/design.md).

    The parameter schema is a frozen attrs class with keyword-only fields and no defaults
    (``params=ReduceParams``; ``params=NoParams`` for none): ``P`` is its constructor's signature,
    so mypy checks that rules registered for this primitive take exactly these keywords, and
    ``typecheck`` rejects equations with other parameters. ``param_names`` is the untyped form
    (names only); with neither, any parameters are accepted, as in JAX.

    Signatures (single values for single-result primitives, lists where ``multiple_results``):
    impl ``(*arrays, **params) -> array(s)`` on NumPy values; abstract eval
    ``(*avals, **params) -> aval(s)``.
    """

    __slots__ = (
        "name",
        "multiple_results",
        "params_schema",
        "param_names",
        "impl_rule",
        "abstract_eval_rule",
        "weak_type_rule",
        "impl_takes_arrays",
        "eager_rule",
        "effects_rule",
        "commutative",
        "idempotent",
        "pure",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        *,
        multiple_results: bool = False,
        params: Callable[P, object] | None = None,
        param_names: Sequence[str] | None = None,
        commutative: bool = False,
        idempotent: bool = False,
        pure: bool = True,
        defined_in: str | None = None,
    ) -> None:
        self.name = name
        self.multiple_results = multiple_results
        #: The typed parameter schema (an attrs class), if declared.
        self.params_schema: Callable[P, object] | None = params
        if params is not None:
            param_names = [f.name for f in attrs.fields(cast(type, params))]
        self.param_names: frozenset[str] | None = None if param_names is None else frozenset(param_names)
        self.impl_rule: Callable[..., Any] | None = None
        self.abstract_eval_rule: Callable[..., AbstractEvalResult] | None = None
        #: ``(in_weak_types, params) -> out weak type`` used by eager evaluation.
        self.weak_type_rule: Callable[[Sequence[bool], Mapping[str, ParamValue]], bool] | None = None
        #: The eager impl receives fcore arrays as they are (e.g. ``jit`` keeps device buffers).
        self.impl_takes_arrays = False
        #: Optional fast path of eager evaluation, ``(*args, **params) -> result | None`` on the
        #: operands as given; ``None`` means "not the common case" and the impl path runs.
        self.eager_rule: Callable[..., Any] | None = None
        #: ``(**params) -> Effects``: the effects of an equation of this primitive (JAX's
        #: effectful abstract eval). Without one, an equation has the effects of the jaxprs in
        #: its parameters (what every higher-order primitive needs), else none.
        self.effects_rule: Callable[..., Effects] | None = None
        # Traits that rewrites consult (fcore.transforms.rewrite, docs/embedding.md): whether the
        # result is the same with the two operands swapped; whether applying it twice (unary,
        # ``f(f(x)) == f(x)``) or to one value twice (binary, ``f(x, x) == x``) changes nothing;
        # and whether an equation may be merged, moved or dropped when its results are equal or
        # unused (``pure=False`` for a primitive whose impl has side effects not declared as
        # effects). Whether an equation is *effectful* is its ``effects``, not a trait.
        self.commutative = commutative
        self.idempotent = idempotent
        self.pure = pure
        # ``defined_in``: the module that defines it, where that is not the caller (a subclass's
        # ``__init__`` passes its own caller's).
        _register(self, defined_in if defined_in is not None else sys._getframe(1).f_globals.get("__name__", ""))

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: ParamValue) -> Any:
        """Apply the primitive: the active interpreter (the current trace) decides what that means."""
        handler: Handler = _handler_var[0].get()
        return handler.process_primitive(self, args, params)

    def def_impl(self, f: F) -> F:
        """Register the eager impl (a decorator, as in JAX)."""
        self.impl_rule = f
        return f

    def def_abstract_eval(self, f: F) -> F:
        """Register the abstract evaluation (a decorator, as in JAX)."""
        self.abstract_eval_rule = f
        return f

    def def_effects(self, f: F) -> F:
        """Register the effects rule ``(**params) -> Effects`` (a decorator)."""
        self.effects_rule = f
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

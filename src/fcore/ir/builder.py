"""Building jaxprs equation by equation, without tracing Python functions.

Passes, tests and code generators often know the equations they want; tracing a
Python function to get them would run interpreters for nothing. ``JaxprBuilder``
types each equation by the primitive's abstract evaluation as it is added and
rejects ill-typed ones immediately, naming the equation index and primitive, so
errors surface where they are made rather than in a later ``typecheck``::

    b = JaxprBuilder()
    x = b.invar(ShapedArray((3,), float32))
    y, = b.eqn(sin_p, [x])
    z, = b.eqn(add_p, [y, b.literal(1.0, float32)])
    jaxpr = b.build([z])

Higher-order primitives take their sub-jaxprs as ``ClosedJaxpr`` parameters, made
by another builder (``build_closed``).
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.errors import JaxprTypeError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, LiteralScalar, Var
from fcore.ir.params import ParamStruct, ParamValue, make_params
from fcore.ir.primitive import Primitive
from fcore.ir.typecheck import typecheck

__all__ = ["JaxprBuilder"]

_SCALAR_PARAM_TYPES = (type(None), bool, int, float, complex, str, np.dtype, enum.Enum, ParamStruct)


class JaxprBuilder:
    """Accumulates constvars, invars and equations; ``build`` freezes them into a ``Jaxpr``.

    Variables belong to the builder that made them: using another builder's
    variable (or one not yet bound) is an error, as it would be in the jaxpr.
    A builder may keep growing after ``build``; each ``build`` is a snapshot.
    """

    __slots__ = ("_constvars", "_invars", "_eqns", "_bound")

    def __init__(self) -> None:
        self._constvars: list[Var] = []
        self._invars: list[Var] = []
        self._eqns: list[JaxprEqn] = []
        self._bound: set[int] = set()

    @property
    def num_eqns(self) -> int:
        return len(self._eqns)

    # -- binders ------------------------------------------------------------------------
    def invar(self, aval: ShapedArray) -> Var:
        """A new input variable (inputs are ordered by creation)."""
        return self._new_binder(aval, self._invars, "invar")

    def constvar(self, aval: ShapedArray) -> Var:
        """A new constant variable; ``build_closed`` supplies its value."""
        return self._new_binder(aval, self._constvars, "constvar")

    def _new_binder(self, aval: ShapedArray, into: list[Var], what: str) -> Var:
        if not isinstance(aval, ShapedArray):
            raise JaxprTypeError(f"{what} needs a ShapedArray, got {aval!r}")
        v = Var(aval)
        into.append(v)
        self._bound.add(id(v))
        return v

    @staticmethod
    def literal(
        value: LiteralScalar | np.generic, dtype: dtypes.DTypeLike | ShapedArray, weak_type: bool = False
    ) -> Literal:
        """A scalar literal of ``dtype`` (or of the scalar aval given); the value must fit the dtype."""
        if isinstance(dtype, ShapedArray):
            aval = dtype
            if aval.shape != ():
                raise JaxprTypeError(f"literals must be scalars, got aval {aval.jaxpr_text()}")
        else:
            aval = shaped_array((), dtypes.to_dtype(dtype), weak_type)
        scalar = value.item() if isinstance(value, np.generic) else value
        if not _fits_kind(scalar, aval.dtype):
            raise JaxprTypeError(f"literal {value!r} is not a value of dtype {dtypes.dtype_name(aval.dtype)}")
        try:
            return Literal.of(scalar, aval)
        except (OverflowError, ValueError) as e:
            raise JaxprTypeError(f"literal {value!r} does not fit dtype {dtypes.dtype_name(aval.dtype)}: {e}") from None

    # -- equations ----------------------------------------------------------------------
    def eqn(self, primitive: Primitive, inputs: Sequence[Atom], /, **params: ParamValue) -> list[Var]:
        """Add ``outs = primitive[params] inputs``; the outputs are typed by abstract evaluation.

        Returns the output variables as a list (also for single-result primitives:
        ``y, = b.eqn(sin_p, [x])``). Raises ``JaxprTypeError`` naming the equation.
        ``primitive`` and ``inputs`` are positional-only, so any parameter name is usable.
        """
        index = len(self._eqns)
        if not isinstance(primitive, Primitive):
            raise JaxprTypeError(f"equation {index}: {primitive!r} is not a Primitive")
        name = primitive.name
        ins = tuple(inputs)
        for k, a in enumerate(ins):
            problem = self._atom_problem(a)
            if problem is not None:
                raise JaxprTypeError(f"equation {index} ({name}): input {k} {problem}")
        where = f"equation {index} ({name} applied to {_pp_types(ins)})"
        if primitive.param_names is not None:
            extra = set(params) - primitive.param_names
            missing = primitive.param_names - set(params)
            if extra:
                raise JaxprTypeError(f"{where}: {name} does not accept params {sorted(extra)}")
            if missing:
                raise JaxprTypeError(f"{where}: {name} is missing params {sorted(missing)}")
        for key, value in params.items():
            problem = _param_problem(value)
            if problem is not None:
                raise JaxprTypeError(f"{where}: param {key}={value!r}: {problem}")
        avals = [a.aval for a in ins]
        try:
            out_avals = primitive.abstract_eval(avals, params)
        except TypeError as e:
            raise JaxprTypeError(f"{where}: {_arity_problem(primitive, avals, params) or e}") from None
        except (ValueError, NotImplementedError) as e:
            raise JaxprTypeError(f"{where}: {e}") from None
        outs: list[Var] = []
        for aval in out_avals:
            if not isinstance(aval, ShapedArray):
                raise JaxprTypeError(f"{where}: abstract evaluation returned {aval!r}, not a ShapedArray")
            v = Var(aval)
            self._bound.add(id(v))
            outs.append(v)
        self._eqns.append(JaxprEqn(primitive, ins, tuple(outs), make_params(params)))
        return outs

    def _atom_problem(self, a: object) -> str | None:
        if isinstance(a, Var):
            return None if id(a) in self._bound else f"{a!r} is not bound in this builder (yet)"
        if isinstance(a, Literal):
            if a.aval.shape != () or np.asarray(a.val).dtype != a.aval.dtype:
                return f"literal {a} does not match its aval"
            return None
        return f"{a!r} is not a Var or a Literal (make literals with JaxprBuilder.literal)"

    # -- results ------------------------------------------------------------------------
    def build(self, outvars: Sequence[Atom]) -> Jaxpr:
        """The jaxpr of everything added so far, returning ``outvars``."""
        outs = tuple(outvars)
        for k, a in enumerate(outs):
            problem = self._atom_problem(a)
            if problem is not None:
                raise JaxprTypeError(f"output {k}: {problem}")
        return Jaxpr(tuple(self._constvars), tuple(self._invars), outs, tuple(self._eqns))

    def build_closed(self, outvars: Sequence[Atom], consts: Sequence[Any] = ()) -> ClosedJaxpr:
        """``build`` with values for the constvars (arrays whose shape and dtype match them)."""
        jaxpr = self.build(outvars)
        values = tuple(consts)
        if len(values) != len(jaxpr.constvars):
            raise JaxprTypeError(f"{len(jaxpr.constvars)} constvars but {len(values)} consts")
        for k, (v, c) in enumerate(zip(jaxpr.constvars, values)):
            arr = np.asarray(c)
            if arr.shape != v.aval.shape or arr.dtype != v.aval.dtype:
                raise JaxprTypeError(
                    f"const {k} has shape {arr.shape} and dtype {arr.dtype}, "
                    f"but its constvar is typed {v.aval.jaxpr_text()}"
                )
        return ClosedJaxpr(jaxpr, values)


def _pp_types(atoms: Sequence[Atom]) -> str:
    return ", ".join(a.aval.jaxpr_text() for a in atoms) if atoms else "no inputs"


def _fits_kind(value: object, dtype: dtypes.DType) -> bool:
    """Whether a Python scalar may be stored in ``dtype`` without changing kind (no silent truncation)."""
    if isinstance(value, bool):
        return dtypes.is_bool(dtype)
    if isinstance(value, int):
        return dtypes.is_integer(dtype) or dtypes.is_inexact(dtype)
    if isinstance(value, float):
        return dtypes.is_inexact(dtype)
    if isinstance(value, complex):
        return dtypes.is_complex(dtype)
    return False


def _param_problem(value: object) -> str | None:
    """Why ``value`` is not a ``ParamValue`` (or an ill-typed nested jaxpr), or None."""
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        try:
            typecheck(value)
        except JaxprTypeError as e:
            return f"ill-typed nested jaxpr: {e}"
        return None
    if isinstance(value, tuple):
        for item in value:
            problem = _param_problem(item)
            if problem is not None:
                return problem
        return None
    if isinstance(value, np.dtype):
        return None if dtypes.is_supported(value) else f"unsupported dtype {value}"
    if isinstance(value, _SCALAR_PARAM_TYPES):
        return None
    return f"a {type(value).__name__} is not a parameter value (use tuples, scalars, dtypes, enums, jaxprs)"


_signatures: dict[Callable[..., object], inspect.Signature | None] = {}


def _arity_problem(primitive: Primitive, avals: Sequence[ShapedArray], params: dict[str, ParamValue]) -> str | None:
    """A clearer message when a rule's ``TypeError`` comes from calling it with the wrong arguments."""
    rule: Callable[..., object] | None = primitive.abstract_eval_rule
    if rule is None:
        return None
    if rule not in _signatures:
        try:
            _signatures[rule] = inspect.signature(rule)
        except (TypeError, ValueError):
            _signatures[rule] = None
    sig = _signatures[rule]
    if sig is None:
        return None
    try:
        sig.bind(*avals, **params)
    except TypeError as e:
        return f"wrong number of inputs or params for {primitive.name} ({len(avals)} inputs given): {e}"
    return None

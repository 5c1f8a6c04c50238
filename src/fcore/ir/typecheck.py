"""The verifier: a jaxpr's type, or a ``JaxprTypeError`` naming the bad equation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from fcore.errors import JaxprTypeError
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import Params, ParamValue


@attrs.frozen(slots=True)
class JaxprType:
    """``(in_avals) -> (out_avals)``, printed as ``(f32[3], i32[]) -> (f32[3],)``."""

    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]

    def __str__(self) -> str:
        return f"{_pp_avals(self.in_avals)} -> {_pp_avals(self.out_avals)}"

    def replace(self, **changes: Any) -> JaxprType:
        return attrs.evolve(self, **changes)


def _pp_avals(avals: Sequence[ShapedArray]) -> str:
    parts = [a.jaxpr_text() for a in avals]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def typecheck(jaxpr: Jaxpr | ClosedJaxpr) -> JaxprType:
    """Check every binder, use and equation; return the jaxpr's type.

    Rejects unbound variables, variables bound twice, wrong arity, equations whose
    declared output avals differ from the primitive's abstract evaluation, unknown
    parameters, equations with effects the jaxpr does not declare, and ill-typed nested jaxprs.
    """
    if isinstance(jaxpr, ClosedJaxpr):
        _check_consts(jaxpr)
        jaxpr = jaxpr.jaxpr
    bound: set[int] = set()

    def bind(v: Var, where: str) -> None:
        if not isinstance(v, Var):
            raise JaxprTypeError(f"{where}: binder {v!r} is not a Var")
        if id(v) in bound:
            raise JaxprTypeError(f"{where}: variable {v!r} is bound twice")
        bound.add(id(v))

    for v in jaxpr.constvars:
        bind(v, "constvars")
    for v in jaxpr.invars:
        bind(v, "invars")
    declared = jaxpr.effects
    for i, eqn in enumerate(jaxpr.eqns):
        try:
            _check_eqn(eqn, bound)
            if not eqn.effects <= declared:
                missing = ", ".join(sorted(repr(e) for e in eqn.effects - declared))
                raise JaxprTypeError(f"{eqn.primitive.name} has effects {{{missing}}} not in the jaxpr's effects")
        except JaxprTypeError as e:
            raise JaxprTypeError(f"in equation {i} `{_eqn_text(jaxpr, i)}`: {e}{_bound_at(jaxpr, i)}") from None
        for v in eqn.outvars:
            if id(v) in bound:
                raise JaxprTypeError(
                    f"in equation {i} `{_eqn_text(jaxpr, i)}`: output variable bound twice{_bound_at(jaxpr, i)}"
                )
            bound.add(id(v))
    for a in jaxpr.outvars:
        _check_atom(a, bound, "jaxpr outputs")
    return JaxprType(tuple(v.aval for v in jaxpr.invars), tuple(a.aval for a in jaxpr.outvars))


def _eqn_text(jaxpr: Jaxpr, i: int) -> str:
    from fcore.ir.printer import pp_eqn_one_line

    return pp_eqn_one_line(jaxpr, i)


def _bound_at(jaxpr: Jaxpr, i: int) -> str:
    """`` (equation i was bound at file:line:col (function))`` when its source info says."""
    info = jaxpr.eqns[i].source_info
    if info is None or info.frame is None:
        return ""
    return f" (equation {i} was bound at {info.summary()})"


def _check_consts(closed: ClosedJaxpr) -> None:
    if len(closed.consts) != len(closed.jaxpr.constvars):
        raise JaxprTypeError(
            f"closed jaxpr has {len(closed.jaxpr.constvars)} constvars but {len(closed.consts)} consts"
        )
    for k, (v, c) in enumerate(zip(closed.jaxpr.constvars, closed.consts)):
        shape = tuple(getattr(c, "shape", ()))
        dtype = getattr(c, "dtype", v.aval.dtype)  # Python scalars carry no dtype of their own
        if shape != v.aval.shape or dtype != v.aval.dtype:
            raise JaxprTypeError(
                f"constant {k} of shape {shape} and dtype {dtype} bound to constvar {v.aval.jaxpr_text()}"
            )


def _check_atom(a: Atom, bound: set[int], where: str) -> None:
    if isinstance(a, Literal):
        if a.aval.shape != () or np.asarray(a.val).dtype != a.aval.dtype:
            raise JaxprTypeError(f"{where}: literal {a} does not match its aval")
        return
    if not isinstance(a, Var):
        raise JaxprTypeError(f"{where}: {a!r} is not a Var or Literal")
    if id(a) not in bound:
        raise JaxprTypeError(f"{where}: variable {a!r} is not bound")


def _check_eqn(eqn: JaxprEqn, bound: set[int]) -> None:
    prim = eqn.primitive
    if not isinstance(eqn.params, Params):
        raise JaxprTypeError(
            f"params of {prim.name} are a {type(eqn.params).__name__}, not Params "
            "(JaxprEqn.replace and new_eqn convert dicts)"
        )
    for a in eqn.invars:
        _check_atom(a, bound, f"input of {prim.name}")
    if prim.param_names is not None:
        extra = set(eqn.params) - prim.param_names
        missing = prim.param_names - set(eqn.params)
        if extra:
            raise JaxprTypeError(f"{prim.name} does not accept params {sorted(extra)}")
        if missing:
            raise JaxprTypeError(f"{prim.name} is missing params {sorted(missing)}")
    for value in eqn.params.values():
        _check_nested(value)
    try:
        out_avals = prim.abstract_eval([a.aval for a in eqn.invars], eqn.params)
    except JaxprTypeError:
        raise
    except (TypeError, ValueError) as e:
        raise JaxprTypeError(f"{prim.name}: {e}") from None
    if len(out_avals) != len(eqn.outvars):
        raise JaxprTypeError(
            f"{prim.name} produces {len(out_avals)} results but the equation binds {len(eqn.outvars)}"
        )
    for v, expected in zip(eqn.outvars, out_avals):
        if v.aval != expected:
            raise JaxprTypeError(
                f"{prim.name} produces {expected.jaxpr_text()} but the binder is typed {v.aval.jaxpr_text()}"
            )


def _check_nested(value: ParamValue) -> None:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        typecheck(value)
    elif isinstance(value, tuple):
        for v in value:
            _check_nested(v)

"""Staging: the handler that records every ``bind`` as a jaxpr equation (omnistaging).

``StagingTrace`` is also the *builder* that the pure jaxpr passes emit into: a pass
walks a jaxpr, calls a primitive's rule with this trace current, and the rule's own
``bind`` s become the new equations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.config import verify_enabled
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.ref_frames import RefFrame, ref_frame
from fcore.interpreters.stack import trace_scope
from fcore.interpreters.trace import Trace, Tracer, current_source_info
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import EMPTY_PARAMS, Params, ParamValue
from fcore.ir.primitive import Primitive
from fcore.ir.typecheck import typecheck


class StagingTracer(Tracer):
    """A staged value: an atom (variable or literal) of the trace's jaxpr."""

    __slots__ = ("atom",)

    def __init__(self, trace: StagingTrace, atom: Atom) -> None:
        self._trace = trace
        self.atom = atom

    @property
    def aval(self) -> ShapedArray:
        return self.atom.aval

    def __repr__(self) -> str:
        return f"JitTracer({self.aval})"  # as JAX prints a value staged for jit or make_jaxpr


class StagingTrace(Trace):
    """Records equations; closed-over values become constvars, Python scalars literals."""

    __slots__ = ("invars", "eqns", "const_vars", "const_vals", "_const_ids", "_literals")

    def __init__(self, description: str = "make_jaxpr") -> None:
        super().__init__(description)
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.const_vars: list[Var] = []
        self.const_vals: list[Any] = []
        self._const_ids: dict[object, Var] = {}
        self._literals: dict[tuple[object, ...], Literal] = {}

    # -- building -------------------------------------------------------------------
    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        v = Var(aval)
        self.invars.append(v)
        return StagingTracer(self, v)

    def new_const_arg(self, aval: ShapedArray) -> StagingTracer:
        """A constvar whose value is supplied later (building open jaxprs)."""
        v = Var(aval)
        self.const_vars.append(v)
        self.const_vals.append(None)
        return StagingTracer(self, v)

    def tracer(self, atom: Atom) -> StagingTracer:
        return StagingTracer(self, atom)

    def emit(self, prim: Primitive, invars: Sequence[Atom], params: Params | dict[str, ParamValue]) -> list[Var]:
        """Append one equation (abstract-evaluating its outputs); return its outvars. Its source
        info is the user's line, or the equation a pass is re-binding (``equation_source``)."""
        out_avals = prim.abstract_eval([a.aval for a in invars], params)
        outvars = [Var(a) for a in out_avals]
        p = params if type(params) is Params else (Params(params) if params else EMPTY_PARAMS)
        self.eqns.append(JaxprEqn(prim, tuple(invars), tuple(outvars), p, current_source_info()))
        return outvars

    def add_eqn(self, eqn: JaxprEqn) -> None:
        self.eqns.append(eqn)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        if not self.alive:  # still current in a context copied while it traced: evaluate
            return EVAL_TRACE.process_primitive(prim, args, params)
        invars = [self.to_atom(a) for a in args]
        rule = prim.abstract_eval_rule
        aval = None if prim.multiple_results or rule is None else rule(*[a.aval for a in invars], **params)
        if type(aval) is not ShapedArray:
            outvars = self.emit(prim, invars, params)
            return [StagingTracer(self, v) for v in outvars] if prim.multiple_results else StagingTracer(self, outvars[0])
        # ``emit`` for the common single-result case, without its lists.
        out = Var(aval)
        p = Params(params) if params else EMPTY_PARAMS
        self.eqns.append(JaxprEqn(prim, tuple(invars), (out,), p, current_source_info()))
        return StagingTracer(self, out)

    # -- operands -------------------------------------------------------------------
    def to_atom(self, x: object) -> Atom:
        if type(x) is StagingTracer and x._trace is self:
            return x.atom
        if type(x) is ArrayImpl and x.shape == ():
            return self._scalar_literal(x)
        if type(x) is Literal:
            return x
        if type(x) is float or type(x) is int or type(x) is bool or type(x) is complex:
            return self.literal(x)
        if isinstance(x, Tracer):
            x._trace.check_alive()
            return self.lift_const(x)
        if isinstance(x, (np.ndarray, np.generic, ArrayImpl)):
            if x.shape == ():
                return self._scalar_literal(x)
            return self.lift_const(x)
        raise TypeError(f"value of type {type(x).__name__} is not a valid fcore array: {x!r}")

    def literal(self, x: bool | int | float | complex) -> Literal:
        """A weakly typed literal for a Python scalar (``bool`` is strongly typed)."""
        key = (type(x), x)
        lit = self._literals.get(key)
        if lit is None:
            dt = dtypes.python_scalar_dtype(x)
            lit = Literal.of(x, shaped_array((), dt, not isinstance(x, bool)))
            self._literals[key] = lit
        return lit

    def _scalar_literal(self, x: np.ndarray[Any, Any] | np.generic | ArrayImpl) -> Literal:
        weak = x.weak_type if isinstance(x, ArrayImpl) else False
        arr = np.asarray(x)
        dt = dtypes.canonicalize_dtype(arr.dtype)
        key = (dt, weak, arr.tobytes())
        lit = self._literals.get(key)
        if lit is None:
            lit = Literal.of(arr, shaped_array((), dt, weak))
            self._literals[key] = lit
        return lit

    def lift_const(self, x: Any) -> Var:
        """A constvar for a closed-over array or outer-trace tracer: one per object, and for
        concrete arrays one per host buffer (``fcore.numpy`` wraps a closed-over NumPy array
        anew at each use). Keys stay valid: ``const_vals`` keeps what they identify alive."""
        if type(x) is ArrayImpl:  # the common case (residuals of ``linearize``), first
            host = x._np
            key: object = (id(host), x._weak) if host is not None else id(x)
            v = self._const_ids.get(key)
            if v is None:
                v = self._const_ids[key] = Var(x.aval)
                self.const_vars.append(v)
                self.const_vals.append(x)
            return v
        key = id(x)
        v = self._const_ids.get(key)
        if v is None:
            if isinstance(x, (Tracer, ArrayImpl)):
                aval = x.aval
            else:
                arr = np.asarray(x)
                dt = dtypes.canonicalize_dtype(arr.dtype)
                if dt != arr.dtype:
                    x = arr.astype(dt)
                    key = id(x)  # the original is not kept alive, its converted copy is
                aval = ShapedArray(arr.shape, dt, False)
            v = Var(aval)
            self._const_ids[key] = v
            self.const_vars.append(v)
            self.const_vals.append(x)
        return v

    # -- results --------------------------------------------------------------------
    def to_jaxpr(self, outs: Sequence[object]) -> tuple[Jaxpr, list[Any]]:
        """The open jaxpr built so far, with ``outs`` as outputs, and its const values."""
        outvars = [self.to_atom(o) for o in outs]
        jaxpr = Jaxpr(tuple(self.const_vars), tuple(self.invars), tuple(outvars), tuple(self.eqns))
        return jaxpr, list(self.const_vals)

    def to_closed_jaxpr(self, outs: Sequence[object]) -> ClosedJaxpr:
        jaxpr, consts = self.to_jaxpr(outs)
        closed = ClosedJaxpr(jaxpr, tuple(consts))
        if verify_enabled():
            typecheck(closed)
        return closed


def trace_to_jaxpr(
    fun: Callable[..., Sequence[object]], in_avals: Sequence[ShapedArray], description: str
) -> ClosedJaxpr:
    """Stage ``fun`` (flat list in, flat list out) into a closed jaxpr. Refs made outside
    are refused inside (``ref_frames``), unless ``fun`` opens a lifting frame of its own."""
    trace = StagingTrace(description)
    with trace_scope(trace), ref_frame(RefFrame(None, description)):
        args = [trace.new_arg(a) for a in in_avals]
        outs = fun(*args)
        return trace.to_closed_jaxpr(outs)

"""Primitives computed by a decomposition into other lax operations (JAX's ``mlir.lower_fun``).

JAX lowers ``igamma``, ``regularized_incomplete_beta``, ``bessel_i0e``, ... by tracing a
Python function of lax ops (loops included) and inlining its StableHLO; eagerly it compiles
the primitive alone with XLA (``apply_primitive``). fcore does the same, so its numbers are
XLA's, as JAX's are:

* ``lower_decomposed(fn)``: a lowering rule that traces ``fn`` for the equation's operand
  types (once per types) and calls it as a private function;
* ``xla_impl(prim)``: an eager impl that stages the one equation, compiles it (once per
  operand types, through ``jit``'s executable cache) and runs it.
* ``elementwise_run_by_xla(name, arity)``: an elementwise float primitive with that impl;
* ``call_decomposed(fn, name, *args)``: ``fn`` as a ``jit`` call (a function that JAX
  writes in lax ops without a primitive of its own, computed by XLA eagerly too);
* ``up_and_broadcast(fn)``: JAX's helper of the same name: operands broadcast to one shape,
  float16/bfloat16 computed in float32, ``fn`` told the dtype it computes in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from fcore.backend.lowering import LoweringRuleContext, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.interpreters.eval import get_aval
from fcore.lax._primitive import Primitive
from fcore.lax.call import bind_jit, launch_for
from fcore.lax.elementwise import _define, convert_element_type
from fcore.lax.shapes import broadcast_in_dim

NpArray = np.ndarray[Any, Any]
Decomposition = Callable[..., Array]

__all__ = ["call_decomposed", "elementwise_run_by_xla", "lower_decomposed", "xla_impl", "up_and_broadcast"]

_traced: dict[tuple[object, ...], ClosedJaxpr] = {}
_lock = threading.Lock()


def _trace(key: tuple[object, ...], fn: Callable[..., Any], avals: list[ShapedArray], what: str) -> ClosedJaxpr:
    closed = _traced.get(key)
    if closed is None:
        closed = trace_to_jaxpr(lambda *xs: [fn(*xs)], avals, what)
        with _lock:
            closed = _traced.setdefault(key, closed)
    return closed


def lower_decomposed(fn: Decomposition, name: str) -> Callable[..., str]:
    """A lowering rule: ``fn(*operands, **params)`` traced to a private function and called."""

    def rule(ctx: LoweringRuleContext, *args: str, **params: ParamValue) -> str:
        avals = [a.strip_weak_type() for a in ctx.avals_in]
        key = (fn, tuple(avals), tuple(sorted(params.items())))
        closed = _trace(key, lambda *xs: fn(*xs, **params), avals, name)
        operands = [ctx.constant(np.asarray(c), v.aval.dtype, v.aval.shape)
                    for v, c in zip(closed.jaxpr.constvars, closed.consts)] + list(args)
        j = closed.jaxpr
        sym = ctx.module.private_function(Jaxpr((), j.constvars + j.invars, j.outvars, j.eqns), name)
        ins = ", ".join(tensor_type(v.aval) for v in j.constvars + j.invars)
        out = tensor_type(j.outvars[0].aval)
        return ctx.emit(f"func.call @{sym}({', '.join(operands)}) : ({ins}) -> ({out})")

    return rule


def xla_impl(prim: Primitive) -> Callable[..., NpArray]:
    """An eager impl running ``prim`` compiled by XLA, as JAX's eager mode does."""

    def impl(*args: NpArray, **params: ParamValue) -> NpArray:
        avals = [ShapedArray(a.shape, a.dtype) for a in args]
        key = (prim, tuple(avals), tuple(sorted(params.items())))
        closed = _trace(key, lambda *xs: prim.bind(*xs, **params), avals, prim.name)
        (out,) = launch_for(closed, prim.name)(args)
        return out.host()

    return impl


def elementwise_run_by_xla(name: str, arity: int) -> Primitive:
    """An elementwise primitive on floats (the elementwise family's shape, dtype and weak-type
    rules) whose eager impl runs its lowering through XLA; its rules are registered by the
    caller, in the tables."""
    def impl(*xs: NpArray) -> NpArray:
        return run(*xs)  # bound below: the impl needs the primitive it belongs to

    p = _define(name, arity, "float", impl)
    run = xla_impl(p)
    return p


def call_decomposed(fn: Decomposition, name: str, *args: Array) -> Array:
    """``fn(*args)`` staged once per operand types and bound as a ``jit`` call."""
    avals = [get_aval(a) for a in args]
    closed = _trace((fn, tuple(avals)), fn, avals, name)
    (out,) = bind_jit(closed, args, name)
    result: Array = out
    return result


def up_and_broadcast(fn: Callable[..., Array]) -> Decomposition:
    """``fn(*operands, dtype=...)`` on operands broadcast to one shape (NumPy's rules), in
    float32 for the 16-bit floats (whose precision the algorithms' constants need)."""

    def wrapped(*args: Array) -> Array:
        shape = tuple(np.broadcast_shapes(*(a.shape for a in args)))
        xs = [a if a.shape == shape else broadcast_in_dim(a, shape, tuple(range(len(shape) - a.ndim, len(shape))))
              for a in args]
        dt: DType = xs[0].dtype
        if dt in (dtypes.float16, dtypes.bfloat16):
            out = fn(*[convert_element_type(x, dtypes.float32) for x in xs], dtype=dtypes.float32)
            return convert_element_type(out, dt)
        return fn(*xs, dtype=dt)

    return wrapped

"""Eager evaluation: the default handler runs each primitive's impl on NumPy."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.config import eager_checks
from fcore.errors import UnexpectedTracerError
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.float_checks import check_call, check_primitive
from fcore.interpreters.trace import Trace, Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import ClosedJaxpr, Literal
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive


def to_numpy_arg(x: object) -> tuple[np.ndarray[Any, Any], bool]:
    """A concrete operand as (NumPy array of canonical dtype, weak_type)."""
    if type(x) is ArrayImpl:
        return x.host(), x._weak
    if type(x) is Literal:
        return np.asarray(x.val), x.aval.weak_type
    if isinstance(x, np.ndarray):
        dt = dtypes.canonicalize_dtype(x.dtype)
        return (x if dt == x.dtype else x.astype(dt)), False
    if isinstance(x, np.generic):  # before Python scalars: np.float64 subclasses float
        dt = dtypes.canonicalize_dtype(x.dtype)
        return np.asarray(x, dt), False
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dtypes.python_scalar_dtype(x)), not isinstance(x, bool)
    if isinstance(x, ArrayImpl):
        return x.host(), x._weak
    if isinstance(x, Tracer):
        x._trace.check_alive()
        raise UnexpectedTracerError(
            f"Encountered an unexpected tracer {x!r} outside of the transformation that created it "
            f"({x._trace.description})."
        )
    raise TypeError(f"value of type {type(x).__name__} is not a valid fcore array: {x!r}")


def aval_of_concrete(x: object) -> ShapedArray:
    arr, weak = to_numpy_arg(x)
    return ShapedArray(arr.shape, arr.dtype, weak)


#: Runs a primitive on its operands' devices, for an operand committed to another device than
#: the default one or sharded (installed by ``fcore.api.eager_placed``): as JAX, an eager
#: operation on such arrays runs there and its results stay there.
placed_runner: list[Callable[[Primitive, Sequence[Any], dict[str, ParamValue]], Any]] = []


class EvalTrace(Trace):
    """Runs ``impl`` rules eagerly; results are ``ArrayImpl`` s."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        eager = prim.eager_rule
        if eager is not None:
            out = eager(*args, **params) if params else eager(*args)  # (no empty keyword dict to copy)
            if out is not None:
                if eager_checks():
                    check_eager(prim, args, params, out)
                return out
        if prim.impl_takes_arrays:
            for a in args:
                if isinstance(a, Tracer):
                    to_numpy_arg(a)  # raises UnexpectedTracerError
            assert prim.impl_rule is not None
            result = prim.impl_rule(*args, **params)
            if eager_checks():
                _check_call(prim, args, params, result)
            return result
        vals = []
        weaks = []
        for a in args:
            if type(a) is ArrayImpl:
                host = a._np
                if host is None:
                    if placed_runner and a.runs_on_device():
                        return placed_runner[0](prim, args, params)
                    host = a.host()
                vals.append(host)
                weaks.append(a._weak)
            else:
                v, w = to_numpy_arg(a)
                vals.append(v)
                weaks.append(w)
        impl = prim.impl_rule
        if impl is None:
            raise NotImplementedError(f"primitive '{prim.name}' has no eager implementation (impl rule)")
        shape_rule = prim.abstract_eval_rule
        if shape_rule is not None:  # the type rule's errors (JAX's), not NumPy's leniency (issue 23)
            check_allocation(shape_rule(*[shaped_array(v.shape, v.dtype, w) for v, w in zip(vals, weaks)], **params))
        out = impl(*vals, **params)
        verify = eager_checks()
        if prim.multiple_results:
            outs = [np.asarray(o) for o in out]
            out_weak = self._out_weak_types(prim, vals, weaks, params, len(outs))
            if verify:
                _check_results(prim, vals, weaks, params, outs, out_weak)
            return [ArrayImpl(o, w) for o, w in zip(outs, out_weak)]
        o = out if type(out) is np.ndarray else np.asarray(out)
        rule = prim.weak_type_rule
        if rule is not None:
            w = rule(weaks, params)
        elif True in weaks:
            (w,) = self._out_weak_types(prim, vals, weaks, params, 1)
        else:
            w = False
        if verify:
            _check_results(prim, vals, weaks, params, [o], [w])
        return ArrayImpl(o, w)

    @staticmethod
    def _out_weak_types(
        prim: Primitive, vals: list[np.ndarray[Any, Any]], weaks: list[bool], params: dict[str, ParamValue], n: int
    ) -> list[bool]:
        rule = prim.weak_type_rule
        if rule is not None:
            return [rule(weaks, params)] * n
        if not any(weaks) or prim.abstract_eval_rule is None:  # jax runs an impl without a type rule
            return [False] * n
        avals = [ShapedArray(v.shape, v.dtype, w) for v, w in zip(vals, weaks)]
        return [a.weak_type for a in prim.abstract_eval(avals, params)]


def _memory_bytes() -> int:
    """The host's physical memory: no eager result can be larger."""
    global _MEMORY_BYTES
    if _MEMORY_BYTES is None:
        try:
            _MEMORY_BYTES = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):  # not POSIX: no limit known
            _MEMORY_BYTES = sys.maxsize
    return _MEMORY_BYTES


_MEMORY_BYTES: int | None = None


def check_allocation(out: ShapedArray | Sequence[ShapedArray]) -> None:
    """Fail fast, before any work, where a result could never fit in memory (eager results,
    and the results of a compiled program before it is compiled and run): JAX's error
    (``RESOURCE_EXHAUSTED``) in a millisecond instead of NumPy computing over a broadcast view
    for minutes or allocating for seconds (issue 23, class 8)."""
    for a in (out,) if isinstance(out, ShapedArray) else out:
        nbytes = math.prod(a.shape) * a.dtype.itemsize
        if nbytes > _memory_bytes():
            from fcore.backend import XlaRuntimeError  # lazy: the backend imports the interpreters

            raise XlaRuntimeError(f"RESOURCE_EXHAUSTED: Out of memory allocating {nbytes} bytes.")


def _check_results(
    prim: Primitive,
    vals: list[np.ndarray[Any, Any]],
    weaks: list[bool],
    params: dict[str, ParamValue],
    outs: list[np.ndarray[Any, Any]],
    out_weak: list[bool],
) -> None:
    """The eager checks that are on (``eager_checks``) of one impl application."""
    checks = eager_checks()
    if "verify" in checks:
        _check_impl(prim, vals, weaks, params, outs, out_weak)
    if checks.floats:
        check_primitive(prim.name, outs)


def _check_impl(
    prim: Primitive,
    vals: list[np.ndarray[Any, Any]],
    weaks: list[bool],
    params: dict[str, ParamValue],
    outs: list[np.ndarray[Any, Any]],
    out_weak: list[bool],
) -> None:
    """Verify-each for eager mode: impl results must match abstract evaluation."""
    if prim.abstract_eval_rule is None:
        return
    avals = [ShapedArray(v.shape, v.dtype, w) for v, w in zip(vals, weaks)]
    expected = prim.abstract_eval(avals, params)
    got = [ShapedArray(o.shape, o.dtype, w) for o, w in zip(outs, out_weak)]
    if got != expected:
        raise AssertionError(
            f"impl of {prim.name} returned {[g.str_short() for g in got]} but abstract eval says "
            f"{[e.str_short() for e in expected]} for inputs {[a.str_short() for a in avals]}, params {params}"
        )


def check_eager(prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue], out: Any) -> None:
    """The eager checks of eager fast paths: verify-each (they must agree with the impl path),
    and the NaN/Inf checks."""
    pairs = [to_numpy_arg(a) for a in args]
    outs = [to_numpy_arg(o) for o in (out if prim.multiple_results else [out])]
    _check_results(
        prim, [v for v, _ in pairs], [w for _, w in pairs], params, [v for v, _ in outs], [w for _, w in outs]
    )


def _check_call(prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue], out: Any) -> None:
    """The NaN/Inf checks of a primitive whose impl runs a program (``jit``, control flow):
    a ``jit`` whose outputs are special is re-run op by op to name the primitive, as JAX."""
    if not eager_checks().floats:
        return
    outs = list(out) if prim.multiple_results else [out]
    jaxpr = params.get("jaxpr")
    if prim.name != "jit" or not isinstance(jaxpr, ClosedJaxpr):
        check_primitive(prim.name, outs)
        return
    from fcore.interpreters.eval_jaxpr import eval_jaxpr  # lazy: it imports this module

    closed = jaxpr
    name = str(params.get("name", ""))
    check_call(
        f"jit({name})", outs, lambda: eval_jaxpr(closed.jaxpr, closed.consts, *args),
        backward=name.startswith("transpose_"),
    )


_TRACER_TYPES: set[type] = set()
"""Tracer classes seen by ``get_aval`` (a set lookup instead of an ABC ``isinstance``)."""

EVAL_TRACE = EvalTrace("eager evaluation")


def get_aval(x: object) -> ShapedArray:
    """The aval of any value a trace may see: tracer, array, NumPy value, Python scalar."""
    if type(x) is ArrayImpl or type(x) is Literal:
        return x.aval
    if type(x) in _TRACER_TYPES:
        aval: ShapedArray = x.aval  # type: ignore[attr-defined]  # a Tracer type (``cast`` costs a call)
        return aval
    if isinstance(x, Tracer):
        _TRACER_TYPES.add(type(x))
        return x.aval
    if isinstance(x, ArrayImpl):
        return x.aval
    return aval_of_concrete(x)

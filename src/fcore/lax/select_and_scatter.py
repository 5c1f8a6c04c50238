"""``select_and_scatter_p``: XLA's ``SelectAndScatter`` with any ``select`` and ``scatter``
computations (JAX's general form, which its ``select_and_scatter_add`` lowers through).

For each window of ``operand`` the ``select`` computation picks one element; the ``source``
value of that window is combined by ``scatter`` into the result (``init_value`` elsewhere). The
two computations are scalar jaxprs, lowered as private functions the op's regions call. As in
JAX there is no jvp, transpose or batching rule; eagerly the one equation runs through XLA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, bind, index_tuple
from fcore.lax.call import launch_for

__all__ = ["select_and_scatter_p"]

Padding = tuple[tuple[int, int], ...]


@attrs.frozen(kw_only=True)
class SelectAndScatterParams:
    """``select_and_scatter[...]``: the two scalar computations as closed jaxprs (JAX's always
    empty ``consts`` beside them) and the window parameters."""

    select_jaxpr: ClosedJaxpr
    select_consts: tuple[ParamValue, ...]
    scatter_jaxpr: ClosedJaxpr
    scatter_consts: tuple[ParamValue, ...]
    window_dimensions: Shape
    window_strides: Shape
    padding: Padding


select_and_scatter_p = Primitive("select_and_scatter", params=SelectAndScatterParams)


@select_and_scatter_p.def_abstract_eval
def _select_and_scatter_abstract_eval(
    operand: ShapedArray, source: ShapedArray, init_value: ShapedArray, *, select_jaxpr: ClosedJaxpr,
    select_consts: tuple[ParamValue, ...], scatter_jaxpr: ClosedJaxpr, scatter_consts: tuple[ParamValue, ...],
    window_dimensions: Shape, window_strides: Shape, padding: Padding,
) -> ShapedArray:
    for what, dims in (("window_dimensions", window_dimensions), ("window_strides", window_strides)):
        if any(d < 0 for d in dims):
            raise TypeError(f"select_and_scatter {what} must have every element be nonnegative, got {dims}.")
    if len(window_dimensions) != len(window_strides):
        raise TypeError("select_and_scatter got inconsistent window_strides and window_dimensions: got "
                        f"window_strides {window_strides} and window_dimensions {window_dimensions}.")
    if len(window_dimensions) != operand.ndim or len(padding) != operand.ndim:
        raise TypeError(f"select_and_scatter: window_dimensions {window_dimensions} and padding {padding} must have "
                        f"one entry per axis of the operand {operand.str_short()}")
    if source.dtype != operand.dtype or init_value.dtype != operand.dtype or init_value.shape != ():
        raise TypeError(f"select_and_scatter: source {source.str_short()} and init_value {init_value.str_short()} "
                        f"must be of the operand's dtype {operand.dtype.name} (init_value a scalar)")
    return operand


@select_and_scatter_p.def_impl
def _select_and_scatter_impl(*args: Any, **params: Any) -> Any:
    """The one equation compiled and run by XLA."""
    avals = [ShapedArray(a.shape, a.dtype) for a in args]
    closed = trace_to_jaxpr(lambda *xs: [select_and_scatter_p.bind(*xs, **params)], avals, "select_and_scatter")
    (out,) = launch_for(closed, "select_and_scatter")(list(args))
    return out.host()


def _region(ctx: LoweringRuleContext, closed: ClosedJaxpr, name: str, elem: ShapedArray) -> str:
    """A two-argument region calling ``closed``'s private function on its block arguments."""
    sym = ctx.module.private_function(closed.jaxpr, name)
    a, b, r = (f"%r{ctx.fn.fresh()[1:]}" for _ in range(3))
    t, out = tensor_type(elem), tensor_type(closed.out_avals[0])
    return (f"    ^bb0({a}: {t}, {b}: {t}):\n      {r} = func.call @{sym}({a}, {b}) : ({t}, {t}) -> ({out})\n"
            f"      stablehlo.return {r} : {out}\n")


@lowering_rules.register(select_and_scatter_p)
def _select_and_scatter_lowering(
    ctx: LoweringRuleContext, operand: str, source: str, init_value: str, *, select_jaxpr: ClosedJaxpr,
    select_consts: tuple[ParamValue, ...], scatter_jaxpr: ClosedJaxpr, scatter_consts: tuple[ParamValue, ...],
    window_dimensions: Shape, window_strides: Shape, padding: Padding,
) -> str:
    x_aval, s_aval, i_aval = ctx.avals_in
    elem = ShapedArray((), x_aval.dtype)
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    attributes = (
        f"padding = dense<[{pads}]> : tensor<{len(padding)}x2xi64>, "
        f"window_dimensions = array<i64: {', '.join(map(str, window_dimensions))}>, "
        f"window_strides = array<i64: {', '.join(map(str, window_strides))}>"
    )
    select = _region(ctx, select_jaxpr, "select_and_scatter_select", elem)
    scatter = _region(ctx, scatter_jaxpr, "select_and_scatter_scatter", elem)
    return ctx.emit(
        f'"stablehlo.select_and_scatter"({operand}, {source}, {init_value}) <{{{attributes}}}> ({{\n'
        f"{select}    }}, {{\n{scatter}    }}) : "
        f"({tensor_type(x_aval)}, {tensor_type(s_aval)}, {tensor_type(i_aval)}) -> {tensor_type(ctx.avals_out[0])}"
    )


def _scalar_jaxpr(fun: Callable[[Any, Any], Any], dt: np.dtype[Any], what: str) -> ClosedJaxpr:
    aval = ShapedArray((), dt)
    closed = trace_to_jaxpr(lambda a, b: [fun(a, b)], [aval, aval], what)
    if closed.consts:
        raise NotImplementedError(f"select_and_scatter: a {what} computation closing over arrays is not supported")
    return closed


def select_and_scatter(
    operand: Any, select: Callable[[Any, Any], Any], window_dimensions: Sequence[int], window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]], source: Any, init_value: Any, scatter: Callable[[Any, Any], Any],
) -> Array:
    """JAX's ``_select_and_scatter``: trace ``select`` (to a bool) and ``scatter`` on scalars of
    the init value's dtype and bind ``select_and_scatter``."""
    dt = get_aval(init_value).dtype
    select_jaxpr = _scalar_jaxpr(select, dt, "select")
    if select_jaxpr.out_avals[0].dtype != dtypes.bool_:
        raise TypeError(f"select_and_scatter: select must return a bool, got {select_jaxpr.out_avals[0].str_short()}")
    return bind(
        select_and_scatter_p, operand, source, init_value, select_jaxpr=select_jaxpr, select_consts=(),
        scatter_jaxpr=_scalar_jaxpr(scatter, dt, "scatter"), scatter_consts=(),
        window_dimensions=index_tuple(window_dimensions), window_strides=index_tuple(window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
    )

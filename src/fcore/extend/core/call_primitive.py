"""``CallPrimitive`` and ``call_impl``, as ``jax.extend.core`` has them: a primitive whose
equations call a jaxpr (``call_jaxpr``), and that every transformation sees through.

``p = CallPrimitive("my_call")`` comes with all its rules: ``p.bind(fun, *args)`` traces
``fun`` for the arguments' types and binds one ``my_call[call_jaxpr name]`` equation (as JAX's
``call_p.bind(f, *args)`` does); jvp, transpose, vmap, partial evaluation and DCE transform
the called jaxpr and bind ``p`` again, so the call stays one equation; it lowers to a
``func.call`` of a private function. fcore's ``CallPrimitive`` is a frozen-IR value like
every primitive: its equation holds the traced jaxpr, not a Python function.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, JaxprEqn
from fcore.ir.params import ParamValue
from fcore.lax._base import ArrayLike, check_operands
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, hoist_consts, lower_call, param_of
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, is_undefined
from fcore.transforms.batching import Dim, batch_jaxpr, batching_rules
from fcore.transforms.dce import dce_jaxpr_open, dce_rules
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from fcore.transforms.transpose import transpose_jaxpr, transpose_rules

__all__ = ["CallParams", "CallPrimitive", "call_impl"]


@attrs.frozen(kw_only=True)
class CallParams:
    """``<call>[call_jaxpr name]``: the const-free jaxpr called, and the called function's name."""

    call_jaxpr: ClosedJaxpr
    name: str


class CallPrimitive(Primitive[...]):
    """A primitive calling the jaxpr in its ``call_jaxpr`` parameter (several results)."""

    __slots__ = ()

    def __init__(self, name: str) -> None:
        super().__init__(name, multiple_results=True, params=CallParams,
                         defined_in=sys._getframe(1).f_globals.get("__name__", ""))
        self.impl_takes_arrays = True
        self.def_abstract_eval(_abstract_eval)
        self.def_impl(_impl)
        _register_rules(self)

    def bind(self, *args: Any, **params: ParamValue) -> Any:
        """``bind(fun, *args, name=...)`` traces ``fun`` and calls it (JAX's form); an equation's
        own ``bind(*operands, call_jaxpr=..., name=...)`` applies it as it is."""
        if "call_jaxpr" in params or not args or not callable(args[0]) or isinstance(args[0], Array):
            return super().bind(*args, **params)
        fun, operands = args[0], args[1:]
        name = params.pop("name", None)
        if params:
            raise TypeError(f"{self.name}.bind(fun, *args): unexpected parameters {sorted(params)}")
        closed = trace_to_jaxpr(lambda *xs: list(fun(*xs)), [get_aval(x) for x in operands], f"{self.name} call")
        hoisted, consts = hoist_consts(closed)
        fun_name = name if isinstance(name, str) else getattr(fun, "__name__", type(fun).__name__)
        return super().bind(*consts, *operands, call_jaxpr=hoisted, name=fun_name)


def call_impl(f: Callable[..., Any], *args: Any, **params: Any) -> Any:
    """Call ``f`` on ``args``: the parameters parameterize the call primitive, not the function."""
    del params
    return f(*args)


def _abstract_eval(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, name: str) -> list[ShapedArray]:
    check_operands(f"call of {name}", avals, call_jaxpr.in_avals)
    return list(call_jaxpr.out_avals)


def _impl(*args: ArrayLike, call_jaxpr: ClosedJaxpr, name: str) -> list[ArrayImpl]:
    return as_eager_results(eval_closed(call_jaxpr, args), call_jaxpr.out_avals)


def _bind(p: CallPrimitive, closed: ClosedJaxpr, args: Sequence[Any], name: str) -> list[Array]:
    hoisted, consts = hoist_consts(closed)
    outs: list[Array] = Primitive.bind(p, *consts, *args, call_jaxpr=hoisted, name=name)
    return outs


def _register_rules(p: CallPrimitive) -> None:
    """The rules of ``p``: each transforms the called jaxpr and calls it with ``p`` again."""

    @jvp_rules.register(p, symbolic_zeros=True)
    def jvp(primals: list[Array], tangents: list[Tangent], *, call_jaxpr: ClosedJaxpr,
            name: str) -> tuple[list[Array], list[Tangent]]:
        nonzeros = [type(t) is not Zero for t in tangents]
        jvp_closed, out_nz = jvp_jaxpr(call_jaxpr, nonzeros, False)
        outs = _bind(p, jvp_closed, [*primals, *[t for t in tangents if not isinstance(t, Zero)]], f"jvp_{name}")
        n = len(call_jaxpr.out_avals)
        rest = iter(outs[n:])
        return outs[:n], [next(rest) if nz else Zero(a) for nz, a in zip(out_nz, call_jaxpr.out_avals)]

    @transpose_rules.register(p)
    def transpose(cts: list[Array], *invals: Array | UndefinedPrimal, call_jaxpr: ClosedJaxpr,
                  name: str) -> list[Array | None]:
        linear = [is_undefined(x) for x in invals]
        nonlinear = [x for x in invals if not isinstance(x, UndefinedPrimal)]
        outs = iter(_bind(p, transpose_jaxpr(call_jaxpr, linear), [*nonlinear, *cts], f"transpose_{name}"))
        return [next(outs) if lin else None for lin in linear]

    @batching_rules.register(p)
    def batching(axis_size: int, vals: list[Array], dims: list[Dim], *, call_jaxpr: ClosedJaxpr,
                 name: str) -> tuple[list[Array], list[Dim]]:
        batched, out_dims = batch_jaxpr(call_jaxpr, axis_size, dims)
        return _bind(p, batched, vals, f"vmap_{name}"), out_dims

    @partial_eval_rules.register(p)
    def partial_eval(unknowns: list[bool], *, call_jaxpr: ClosedJaxpr,
                     name: str) -> tuple[dict[str, ParamValue], dict[str, ParamValue], list[bool], int]:
        known, unknown, out_unknowns, num_res = partial_eval_jaxpr(call_jaxpr, unknowns, False)
        return {"call_jaxpr": known, "name": name}, {"call_jaxpr": unknown, "name": name}, out_unknowns, num_res

    @dce_rules.register(p)
    def dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
        closed = param_of(eqn, "call_jaxpr", ClosedJaxpr)
        new, used_inputs = dce_jaxpr_open(closed.jaxpr, used_outputs)
        invars = tuple(a for a, u in zip(eqn.invars, used_inputs) if u)
        outvars = tuple(v for v, u in zip(eqn.outvars, used_outputs) if u)
        return used_inputs, eqn.replace(invars=invars, outvars=outvars,
                                        params=eqn.params.replace(call_jaxpr=ClosedJaxpr(new, ())))

    @lowering_rules.register(p)
    def lowering(ctx: LoweringRuleContext, *args: str, call_jaxpr: ClosedJaxpr, name: str) -> list[str]:
        return lower_call(ctx, args, call_jaxpr, name)

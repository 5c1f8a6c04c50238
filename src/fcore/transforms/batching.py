"""Vectorization (``vmap``): batching rules applied by a trace and by a jaxpr pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Concatenate, TypeAlias

from fcore.interpreters.eval import get_aval
from fcore.interpreters.stack import bind_with_trace, set_current_trace
from fcore.interpreters.staging import StagingTrace
from fcore.interpreters.trace import Trace, Tracer, equation_source, transform_name_stack
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import ClosedJaxpr, Literal
from fcore.ir.params import ParamValue
from fcore.ir.primitive import P, Primitive
from fcore.ir.rules import RuleTable
from fcore.transforms.ad_util import vspace
from fcore.transforms.util import literal_value

Dim = int | None


#: A batching rule: ``(axis_size, vals, dims, **params) -> (outs, out_dims)`` (lists where the
#: primitive has several results); ``P`` is the primitive's parameter signature.
BatchingRule: TypeAlias = Callable[Concatenate[int, list[Any], list[Dim], P], tuple[Any, Any]]


class BatchingRules(RuleTable["BatchingRule[...]"]):
    """The batching rules, applied by ``BatchTrace`` and by ``batch_jaxpr``."""

    __slots__ = ()

    def register(self, prim: Primitive[P]) -> Callable[[BatchingRule[P]], BatchingRule[P]]:
        return super().register(prim)


batching_rules = BatchingRules("Batching")


def call_batching_rule(
    prim: Primitive, axis_size: int, vals: Sequence[Any], dims: Sequence[Dim], params: dict[str, ParamValue]
) -> tuple[list[Any], list[Dim]]:
    outs, out_dims = batching_rules[prim](axis_size, list(vals), list(dims), **params)
    if prim.multiple_results:
        return list(outs), list(out_dims)
    return [outs], [out_dims]


def moveaxis(x: Any, src: int, dst: int) -> Any:
    return x if src == dst else vspace().moveaxis(x, src, dst)


def bdim_at(x: Any, dim: Dim, axis_size: int, dst: int) -> Any:
    """``x`` with its batch axis at ``dst`` (broadcasting an unbatched value)."""
    if dim is None:
        return vspace().broadcast_batched(x, axis_size, dst)
    return moveaxis(x, dim, dst)


# -- rule helpers ---------------------------------------------------------------------
def defbroadcasting(prim: Primitive) -> None:
    """Batching for elementwise primitives, as JAX's ``_broadcasting_batcher``: batch axes go
    to the front, unbatched operands of full rank get a size-1 batch axis and lower-rank
    batched ones trailing size-1 axes, so the shape rule's size-1 broadcasting does the rest
    (unbatched rank-0 operands keep broadcasting)."""

    def rule(axis_size: int, vals: list[Any], dims: list[Dim], **params: ParamValue) -> tuple[Any, Any]:
        avals = [get_aval(v) for v in vals]
        logical = [a.ndim - (d is not None) for a, d in zip(avals, dims)]
        rank = max(logical)
        batched_dims = {d for d in dims if d is not None}
        if len(batched_dims) == 1 and all(
            (d is None and r == 0) or (d is not None and r == rank) for d, r in zip(dims, logical)
        ):
            return prim.bind(*vals, **params), batched_dims.pop()
        shape_rule = prim.abstract_eval_rule
        if shape_rule is not None:  # the per-example shape rule's error, not one about batched shapes
            shape_rule(*[a.update(shape=a.shape[:d] + a.shape[d + 1 :]) if d is not None else a
                   for a, d in zip(avals, dims)], **params)
        new_vals = []
        for v, a, d, r in zip(vals, avals, dims, logical):
            if d is None:
                new_vals.append(v if r == 0 else vspace().broadcast_in_dim(v, (1,) + a.shape, tuple(range(1, r + 1))))
                continue
            v0 = v if d == 0 else moveaxis(v, d, 0)
            if r < rank:
                shape = get_aval(v0).shape + (1,) * (rank - r)
                v0 = vspace().broadcast_in_dim(v0, shape, tuple(range(r + 1)))
            new_vals.append(v0)
        return prim.bind(*new_vals, **params), 0

    batching_rules.register(prim)(rule)


def defvectorized(prim: Primitive) -> None:
    """Batching for unary elementwise primitives: apply as is, batch dim unchanged."""

    def rule(axis_size: int, vals: list[Any], dims: list[Dim], **params: ParamValue) -> tuple[Any, Any]:
        return prim.bind(*vals, **params), dims[0]

    batching_rules.register(prim)(rule)


# -- the front end: a trace ---------------------------------------------------------------
class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace: BatchTrace, val: Any, bdim: Dim) -> None:
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self) -> ShapedArray:
        a = get_aval(self.val)
        if self.bdim is None:
            return a
        return shaped_array(a.shape[: self.bdim] + a.shape[self.bdim + 1 :], a.dtype, a.weak_type)

    def __repr__(self) -> str:
        return f"VmapTracer(aval={self.aval}, batched={get_aval(self.val)})"  # as JAX's


class BatchTrace(Trace):
    """Carries (value, batch dim) pairs for one ``vmap`` axis of size ``axis_size``."""

    __slots__ = ("parent", "axis_size")

    def __init__(self, parent: Trace, axis_size: int, description: str) -> None:
        super().__init__(description)
        self.parent = parent
        self.axis_size = axis_size

    def unpack(self, x: Any) -> tuple[Any, Dim]:
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.bdim
        if isinstance(x, Tracer):
            x._trace.check_alive()
        return x, None

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        vals = []
        dims: list[Dim] = []
        for a in args:
            v, d = self.unpack(a)
            vals.append(v)
            dims.append(d)
        if all(d is None for d in dims):
            return bind_with_trace(self.parent, prim, vals, params)
        with set_current_trace(self.parent):
            outs, out_dims = call_batching_rule(prim, self.axis_size, vals, dims, params)
        result = [BatchTracer(self, o, d) if d is not None else o for o, d in zip(outs, out_dims)]
        return result if prim.multiple_results else result[0]


# -- the pure pass ------------------------------------------------------------------------
def batch_jaxpr(
    closed: ClosedJaxpr,
    axis_size: int,
    in_dims: Sequence[Dim],
    out_dims: Sequence[Dim] | None = None,
) -> tuple[ClosedJaxpr, list[Dim]]:
    """batch_jaxpr : (a -> b) -> ([n]a -> [n]b)

    ``in_dims[i]`` is input i's batch axis (``None`` = unbatched). ``out_dims``, when
    given, forces where each output's batch axis goes (``None`` = unbatched, an error if
    the output depends on a batched input); otherwise the natural dims are reported.
    """
    jaxpr = closed.jaxpr
    if len(in_dims) != len(jaxpr.invars):
        raise ValueError(f"in_dims has {len(in_dims)} entries but the jaxpr has {len(jaxpr.invars)} inputs")
    builder = StagingTrace("batch_jaxpr")
    env: dict[int, tuple[Any, Dim]] = {}
    with set_current_trace(builder), transform_name_stack("vmap"):
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[id(v)] = (builder.tracer(builder.lift_const(c)), None)
        for v, d in zip(jaxpr.invars, in_dims):
            aval = v.aval
            if d is not None:
                if not -aval.ndim - 1 <= d <= aval.ndim:
                    raise ValueError(f"in_dims entry {d} is out of range for an input of rank {aval.ndim}")
                d = d % (aval.ndim + 1)
                aval = shaped_array(aval.shape[:d] + (axis_size,) + aval.shape[d:], aval.dtype, aval.weak_type)
            env[id(v)] = (builder.new_arg(aval), d)

        def read(a: Any) -> tuple[Any, Dim]:
            return (literal_value(a), None) if type(a) is Literal else env[id(a)]

        for eqn in jaxpr.eqns:
            pairs = [read(a) for a in eqn.invars]
            if all(d is None for _, d in pairs):
                with equation_source(eqn):
                    outvars = builder.emit(eqn.primitive, [builder.to_atom(x) for x, _ in pairs], eqn.params)
                for v, o in zip(eqn.outvars, outvars):
                    env[id(v)] = (builder.tracer(o), None)
                continue
            with equation_source(eqn):
                outs, dims = call_batching_rule(
                    eqn.primitive, axis_size, [x for x, _ in pairs], [d for _, d in pairs], eqn.params.as_dict()
                )
            for v, o, d in zip(eqn.outvars, outs, dims):
                env[id(v)] = (o, d)
        results = [read(a) for a in jaxpr.outvars]
        if out_dims is None:
            final = [x for x, _ in results]
            final_dims = [d for _, d in results]
        else:
            if len(out_dims) != len(results):
                raise ValueError(f"out_dims has {len(out_dims)} entries but the jaxpr has {len(results)} outputs")
            final = []
            final_dims = list(out_dims)
            for (x, d), want, a in zip(results, out_dims, jaxpr.outvars):
                if want is None:
                    if d is not None:
                        raise ValueError(
                            f"an output of type {a.aval.str_short()} depends on a batched input, "
                            "so its out_dims entry cannot be None"
                        )
                    final.append(x)
                else:
                    final.append(bdim_at(x, d, axis_size, want % (a.aval.ndim + 1)))
        out = builder.to_closed_jaxpr(final)
    builder.alive = False
    return out, final_dims

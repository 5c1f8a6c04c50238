"""What the control-flow primitives share: operand bookkeeping, jaxpr surgery, partial
evaluation that stages a whole equation, and the region blocks of their lowerings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from fcore.backend.lowering import TOKEN_TYPE, LoweringRuleContext, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, Var
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.lax._base import ArrayLike
from fcore.lax.call import eval_closed, hoist_consts
from fcore.lax.elementwise import convert_element_type
from fcore.lax.shapes import broadcast_in_dim
from fcore.transforms.ad_util import Zero, instantiate
from fcore.transforms.dce import dce_jaxpr_open

T = TypeVar("T")

#: What a control-flow partial-evaluation rule returns: the known and unknown halves as
#: jaxprs, which outputs are unknown, and how many residuals the known half appends.
PeResult = tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]


def pp_avals(avals: Sequence[ShapedArray]) -> str:
    """Types as a Python tuple prints: ``(f32[3],)``."""
    parts = [a.jaxpr_text() for a in avals]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def check_const_free(what: str, closed: ClosedJaxpr) -> None:
    if closed.jaxpr.constvars or closed.consts:
        raise TypeError(f"{what} must be a closed jaxpr without consts (hoist them into operands)")


def split(xs: Sequence[T], *sizes: int) -> list[list[T]]:
    """``xs`` cut into pieces of the given sizes, then the rest: ``split(x, 2, 1)`` is 3 lists."""
    out: list[list[T]] = []
    start = 0
    for n in sizes:
        out.append(list(xs[start : start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def trace_hoisted(
    fun: Callable[..., Sequence[Array]], avals: Sequence[ShapedArray], description: str
) -> tuple[ClosedJaxpr, list[ArrayLike]]:
    """Stage ``fun``; its consts become leading inputs (returned as the operands to pass)."""
    return hoist_consts(trace_to_jaxpr(fun, avals, description))


def permute_invars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    """The same const-free jaxpr taking its inputs in the order ``invars[order[k]]``."""
    j = closed.jaxpr
    assert not j.constvars and sorted(order) == list(range(len(j.invars)))
    return ClosedJaxpr(j.replace(invars=[j.invars[k] for k in order]), ())


def with_outvars(closed: ClosedJaxpr, outvars: Sequence[Atom]) -> ClosedJaxpr:
    """``closed`` returning ``outvars`` instead (dead equations and unused consts removed)."""
    j = closed.jaxpr.replace(outvars=outvars)
    pruned, _ = dce_jaxpr_open(j, [True] * len(outvars), prune_inputs=False)
    kept = {id(v) for v in pruned.constvars}
    consts = tuple(c for v, c in zip(j.constvars, closed.consts) if id(v) in kept)
    return ClosedJaxpr(pruned, consts)


def extra_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``closed`` with unused trailing inputs of the given types."""
    j = closed.jaxpr
    return ClosedJaxpr(j.replace(invars=list(j.invars) + [Var(a) for a in avals]), closed.consts)


def join_consts(closeds: Sequence[ClosedJaxpr]) -> tuple[list[ClosedJaxpr], list[ArrayLike]]:
    """Give jaxprs (e.g. the branches of a cond) common leading const inputs.

    Each result takes every jaxpr's consts (deduplicated by identity) followed by its
    own inputs, and ignores the consts of the others.
    """
    consts: list[ArrayLike] = []
    avals: list[ShapedArray] = []
    index: dict[int, int] = {}
    for c in closeds:
        for v, x in zip(c.jaxpr.constvars, c.consts):
            if id(x) not in index:
                index[id(x)] = len(consts)
                consts.append(x)
                avals.append(v.aval)
    out: list[ClosedJaxpr] = []
    for c in closeds:
        slots = [Var(a) for a in avals]
        for v, x in zip(c.jaxpr.constvars, c.consts):
            slots[index[id(x)]] = v
        j = c.jaxpr
        out.append(ClosedJaxpr(Jaxpr((), tuple(slots) + j.invars, j.outvars, j.eqns), ()))
    return out, consts


def convert_outs(closed: ClosedJaxpr, weak: Sequence[bool], description: str) -> ClosedJaxpr:
    """``closed`` with output ``i`` made strongly typed where ``weak[i]`` is False."""
    outs = closed.out_avals
    if all(o.weak_type == w or not o.weak_type for o, w in zip(outs, weak)):
        return closed

    def fix(*args: Array) -> list[Array]:
        vals = eval_closed(closed, args)
        return [
            convert_element_type(v, a.dtype, False) if a.weak_type and not w else v
            for v, a, w in zip(vals, outs, weak)
        ]

    return trace_to_jaxpr(fix, closed.in_avals, description)


def zeros(aval: ShapedArray) -> Array:
    """A materialized zero of type ``aval``."""
    zero: Array = instantiate(Zero(aval))
    return zero


def broadcast_leading(pred: Array, aval: ShapedArray) -> Array:
    """A batched predicate (``[n]``) broadcast along the leading axis of ``aval``."""
    if aval.ndim <= 1:
        return pred
    return broadcast_in_dim(pred, aval.shape, (0,))


def fixpoint(step: Callable[[list[bool]], list[bool]], start: list[bool]) -> list[bool]:
    """The least flags above ``start`` that ``step`` keeps: ``flags | step(flags)`` iterated.

    Loop carries need it: a carry is batched (has a tangent, is unknown, ...) if its initial
    value is, or if the body makes it so from the carries that are.
    """
    flags = start
    while True:
        new = [x or y for x, y in zip(flags, step(flags))]
        if new == flags:
            return flags
        flags = new


def stage_all(prim: Primitive, unknowns: Sequence[bool], in_avals: Sequence[ShapedArray],
              params: dict[str, ParamValue]) -> PeResult:
    """Partial evaluation that makes every output unknown: the known half forwards the
    known operands as residuals; the unknown half is the whole equation."""
    k_avals = [a for a, u in zip(in_avals, unknowns) if not u]
    u_avals = [a for a, u in zip(in_avals, unknowns) if u]

    def known(*ks: Array) -> list[Array]:
        return list(ks)

    def unknown(*args: Array) -> list[Array]:
        res, uks = args[: len(k_avals)], args[len(k_avals) :]
        k_it, u_it = iter(res), iter(uks)
        full = [next(u_it) if u else next(k_it) for u in unknowns]
        out: list[Array] = prim.bind(*full, **params)
        return out

    known_j = trace_to_jaxpr(known, k_avals, f"partial_eval({prim.name})")
    unknown_j = trace_to_jaxpr(unknown, k_avals + u_avals, f"partial_eval({prim.name})")
    n_out = len(prim.abstract_eval(list(in_avals), params))
    return known_j, unknown_j, [True] * n_out, len(k_avals)


class RegionBlock:
    """The lines of one region block of a lowered op (``case`` branch, ``while`` cond/body);
    SSA names come from the enclosing function."""

    __slots__ = ("ctx", "lines")

    def __init__(self, ctx: LoweringRuleContext) -> None:
        self.ctx = ctx
        self.lines: list[str] = []

    def emit(self, rhs: str, n_results: int = 1) -> str:
        name = self.ctx.fn.fresh()
        lhs = name if n_results == 1 else f"{name}:{n_results}"
        self.lines.append(f"      {lhs} = {rhs}")
        return name

    def call(self, sym: str, args: Sequence[str], in_avals: Sequence[ShapedArray],
             out_avals: Sequence[ShapedArray]) -> list[str]:
        ins = ", ".join(tensor_type(a) for a in in_avals)
        outs = ", ".join(tensor_type(a) for a in out_avals)
        if not out_avals:
            self.lines.append(f"      func.call @{sym}({', '.join(args)}) : ({ins}) -> ()")
            return []
        r = self.emit(f"func.call @{sym}({', '.join(args)}) : ({ins}) -> ({outs})", len(out_avals))
        return result_names(r, len(out_avals))

    def call_threaded(self, sym: str, args: Sequence[str], in_avals: Sequence[ShapedArray],
                      out_avals: Sequence[ShapedArray], token: str | None) -> tuple[list[str], str | None]:
        """``call``, passing ``token`` last and taking the callee's token back (see
        ``ModuleBuilder.private_function``) when it is not None."""
        if token is None:
            return self.call(sym, args, in_avals, out_avals), None
        ins = ", ".join([*(tensor_type(a) for a in in_avals), TOKEN_TYPE])
        outs = ", ".join([*(tensor_type(a) for a in out_avals), TOKEN_TYPE])
        n = len(out_avals) + 1
        r = self.emit(f"func.call @{sym}({', '.join([*args, token])}) : ({ins}) -> ({outs})", n)
        names = result_names(r, n)
        return names[:-1], names[-1]

    def text(self, results: Sequence[str], avals: Sequence[ShapedArray], header: str = "", token: str | None = None
             ) -> str:
        """The block, returning ``results`` (of types ``avals``) and ``token`` last if given."""
        types = ", ".join([*(tensor_type(a) for a in avals), *([TOKEN_TYPE] if token is not None else [])])
        if token is not None:
            results = [*results, token]
        ret = f"      stablehlo.return {', '.join(results)} : {types}" if results else "      stablehlo.return"
        head = f"\n    {header}" if header else ""
        return "{" + head + "\n" + "\n".join([*self.lines, ret]) + "\n    }"


def result_names(name: str, n: int) -> list[str]:
    """The SSA names of an op's ``n`` results: ``%4`` for one, ``%4#0``, ``%4#1``, ... else."""
    return [name] if n == 1 else [f"{name}#{i}" for i in range(n)]

"""Structured control flow: ``cond``/``switch``, ``while_loop``/``fori_loop`` and ``scan``.

Three higher-order primitives with JAX's names and parameters, each holding closed
jaxprs without consts (closed-over values, including tracers of outer transformations,
are hoisted into explicit leading operands, as for ``jit``):

* ``cond[branches] index *ops``: runs ``branches[index]`` (an ``int32`` scalar index;
  out of range selects the last branch, as XLA's ``case`` does);
* ``while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts] *cond_consts *body_consts *carry``;
* ``scan[jaxpr length reverse num_consts num_carry linear unroll] *consts *carry *xs``.

Every rule sits next to its primitive: impl (the eager interpreter, which evaluates the
nested jaxprs with ``eval_jaxpr``), abstract eval, jvp, batching, partial evaluation,
transposition (``while`` has none: reverse mode through a loop of unknown trip count is
an error, as in JAX), dead-code elimination and lowering to StableHLO text.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.transforms.batching import batching_rules
from fcore.transforms.dce import dce_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.partial_eval import partial_eval_rules
from fcore.transforms.transpose import transpose_rules
from fcore import tree_util
from fcore.backend.lowering import LoweringRuleContext, tensor_type
from fcore.errors import ConcretizationError
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import get_aval, to_numpy_arg
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array, typematch
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Var
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax import elementwise as ew
from fcore.lax._base import check_operands
from fcore.lax.call import hoist_consts
from fcore.transforms import ad_util
from fcore.transforms.ad_util import Zero, has_tangent, is_undefined
from fcore.transforms.batching import bdim_at, batch_jaxpr, moveaxis
from fcore.transforms.dce import dce_jaxpr_open
from fcore.transforms.jvp import jvp_jaxpr
from fcore.transforms.partial_eval import partial_eval_jaxpr
from fcore.transforms.transpose import transpose_jaxpr

Dim = int | None
PeResult = tuple[Any, Any, list[bool], int]

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "cond_p", "while_p", "scan_p"]


# =========================================================================================
# Shared helpers
# =========================================================================================
def _structural() -> Any:
    from fcore.lax import structural

    return structural


def _pp(avals: Sequence[ShapedArray]) -> str:
    parts = [a.str_short() for a in avals]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _const_free(what: str, closed: ClosedJaxpr) -> None:
    if closed.jaxpr.constvars or closed.consts:
        raise TypeError(f"{what} must be a closed jaxpr without consts (hoist them into operands)")


def _split(xs: Sequence[Any], *sizes: int) -> list[list[Any]]:
    out: list[list[Any]] = []
    start = 0
    for n in sizes:
        out.append(list(xs[start : start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def _fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    def run(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    return run


def _trace_hoisted(
    fun: Callable[..., Sequence[Any]], avals: Sequence[ShapedArray], description: str
) -> tuple[ClosedJaxpr, list[Any]]:
    """Stage ``fun``; its consts become leading inputs (returned as the operands to pass)."""
    return hoist_consts(trace_to_jaxpr(fun, avals, description))


def _permute_invars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    """The same const-free jaxpr taking its inputs in the order ``invars[order[k]]``."""
    j = closed.jaxpr
    assert not j.constvars and sorted(order) == list(range(len(j.invars)))
    return ClosedJaxpr(j.replace(invars=[j.invars[k] for k in order]), ())


def _with_outvars(closed: ClosedJaxpr, outvars: Sequence[Atom]) -> ClosedJaxpr:
    """``closed`` returning ``outvars`` instead (dead equations and unused consts removed)."""
    j = closed.jaxpr.replace(outvars=outvars)
    pruned, _ = dce_jaxpr_open(j, [True] * len(outvars), prune_inputs=False)
    kept = {id(v) for v in pruned.constvars}
    consts = tuple(c for v, c in zip(j.constvars, closed.consts) if id(v) in kept)
    return ClosedJaxpr(pruned, consts)


def _extra_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``closed`` with unused trailing inputs of the given types."""
    j = closed.jaxpr
    return ClosedJaxpr(j.replace(invars=list(j.invars) + [Var(a) for a in avals]), closed.consts)


def _join_consts(closeds: Sequence[ClosedJaxpr]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Give jaxprs (e.g. the branches of a cond) common leading const inputs.

    Each result takes every jaxpr's consts (deduplicated by identity) followed by its
    own inputs, and ignores the consts of the others.
    """
    consts: list[Any] = []
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


def _finish(prim: Primitive, args: Sequence[Any], params: dict[str, Any], outs: Sequence[Any]) -> list[ArrayImpl]:
    """Eager results as ``ArrayImpl`` s with the dtypes and weak types of abstract evaluation."""
    avals = prim.abstract_eval([get_aval(a) for a in args], params)
    result: list[ArrayImpl] = []
    for o, a in zip(outs, avals):
        if type(o) is ArrayImpl and o.dtype == a.dtype and o._weak == a.weak_type:
            result.append(o)
            continue
        arr, _ = to_numpy_arg(o)
        result.append(ArrayImpl(np.asarray(arr, a.dtype), a.weak_type))
    return result


def _convert_outs(closed: ClosedJaxpr, weak: Sequence[bool], description: str) -> ClosedJaxpr:
    """``closed`` with output ``i`` made strongly typed where ``weak[i]`` is False."""
    outs = closed.out_avals
    if all(o.weak_type == w or not o.weak_type for o, w in zip(outs, weak)):
        return closed

    def fix(*args: Any) -> list[Any]:
        vals = _fun(closed)(*args)
        return [
            ew.convert_element_type(v, a.dtype, False) if a.weak_type and not w else v
            for v, a, w in zip(vals, outs, weak)
        ]

    return trace_to_jaxpr(fix, closed.in_avals, description)


def _zeros(aval: ShapedArray) -> Any:
    return ad_util.instantiate(Zero(aval))


def _bcast_to(x: Any, aval: ShapedArray) -> Any:
    """A batched predicate (``[n]``) broadcast along the leading axis of ``aval``."""
    if aval.ndim <= 1:
        return x
    return _structural().broadcast_in_dim(x, aval.shape, (0,))


def _stage_all(prim: Primitive, unknowns: Sequence[bool], in_avals: Sequence[ShapedArray],
               params: dict[str, Any]) -> PeResult:
    """Partial evaluation that makes every output unknown: the known half forwards the
    known operands as residuals; the unknown half is the whole equation."""
    k_avals = [a for a, u in zip(in_avals, unknowns) if not u]
    u_avals = [a for a, u in zip(in_avals, unknowns) if u]

    def known(*ks: Any) -> list[Any]:
        return list(ks)

    def unknown(*args: Any) -> list[Any]:
        res, uks = args[: len(k_avals)], args[len(k_avals) :]
        k_it, u_it = iter(res), iter(uks)
        full = [next(u_it) if u else next(k_it) for u in unknowns]
        out: list[Any] = prim.bind(*full, **params)
        return out

    known_j = trace_to_jaxpr(known, k_avals, f"partial_eval({prim.name})")
    unknown_j = trace_to_jaxpr(unknown, k_avals + u_avals, f"partial_eval({prim.name})")
    n_out = len(prim.abstract_eval(list(in_avals), params))
    return known_j, unknown_j, [True] * n_out, len(k_avals)


# -- lowering helpers -------------------------------------------------------------------
class _Block:
    """The lines of one region block; SSA names come from the enclosing function."""

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
        return [r] if len(out_avals) == 1 else [f"{r}#{i}" for i in range(len(out_avals))]

    def text(self, results: Sequence[str], avals: Sequence[ShapedArray], header: str = "") -> str:
        types = ", ".join(tensor_type(a) for a in avals)
        ret = f"      stablehlo.return {', '.join(results)} : {types}" if results else "      stablehlo.return"
        head = f"\n    {header}" if header else ""
        return "{" + head + "\n" + "\n".join([*self.lines, ret]) + "\n    }"


def _results(name: str, n: int) -> list[str]:
    return [name] if n == 1 else [f"{name}#{i}" for i in range(n)]


# =========================================================================================
# cond
# =========================================================================================
cond_p = Primitive("cond", multiple_results=True, param_names=("branches",))
cond_p.impl_takes_arrays = True


def _xla_branch(i: int, n: int) -> int:
    """XLA's ``case``: an out-of-range index selects the last branch."""
    return i if 0 <= i < n else n - 1


@cond_p.def_abstract_eval
def _cond_abstract_eval(index: ShapedArray, *ops: ShapedArray, branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    if not branches:
        raise TypeError("cond requires at least one branch")
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for i, b in enumerate(branches):
        _const_free(f"cond branch {i}", b)
        check_operands(f"cond branch {i}", ops, b.in_avals)
    outs = branches[0].out_avals
    for i, b in enumerate(branches[1:], 1):
        if len(b.out_avals) != len(outs) or not all(typematch(x, y) for x, y in zip(b.out_avals, outs)):
            raise TypeError(f"cond branch {i} returns {_pp(b.out_avals)} but branch 0 returns {_pp(outs)}")
    return [shaped_array(a.shape, a.dtype, all(b.out_avals[k].weak_type for b in branches)) for k, a in enumerate(outs)]


@cond_p.def_impl
def _cond_impl(index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[ArrayImpl]:
    i = _xla_branch(int(to_numpy_arg(index)[0]), len(branches))
    outs = _fun(branches[i])(*ops)
    return _finish(cond_p, [index, *ops], {"branches": branches}, outs)


def _bind_cond(index: Any, branches: Sequence[ClosedJaxpr], ops: Sequence[Any]) -> list[Any]:
    joined, consts = _join_consts(branches)
    outs: list[Any] = cond_p.bind(index, *consts, *ops, branches=tuple(joined))
    return outs


def _cond_jvp(primals: list[Any], tangents: list[Any], *, branches: tuple[ClosedJaxpr, ...]) -> tuple[Any, Any]:
    index, *ops = primals
    ts = tangents[1:]
    nz = [type(t) is not Zero for t in ts]
    n_out = len(branches[0].out_avals)
    out_nz = [False] * n_out
    for b in branches:
        _, b_nz = jvp_jaxpr(b, nz, False)
        out_nz = [x or y for x, y in zip(out_nz, b_nz)]
    jvps = [jvp_jaxpr(b, nz, out_nz)[0] for b in branches]
    outs = _bind_cond(index, jvps, [*ops, *[t for t in ts if type(t) is not Zero]])
    t_it = iter(outs[n_out:])
    avals = _cond_abstract_eval(get_aval(index), *[get_aval(o) for o in ops], branches=branches)
    touts = [next(t_it) if z else Zero(a) for z, a in zip(out_nz, avals)]
    return outs[:n_out], touts


jvp_rules.register(cond_p, symbolic_zeros=True)(_cond_jvp)


def _clamp_index(index: Any, n: int) -> Any:
    """An int32 index mapped into ``[0, n)`` the way XLA's ``case`` treats it."""
    lo = ew.clamp(np.int32(0), index, np.int32(n - 1))
    last = ew.clamp(np.int32(n - 1), index, np.int32(n - 1))
    return ew.select_n(ew.lt(index, np.int32(0)), lo, last)


@batching_rules.register(cond_p)
def _cond_batching(
    axis_size: int, vals: list[Any], dims: list[Dim], *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Any], list[Dim]]:
    index, *ops = vals
    idim, *odims = dims
    n_out = len(branches[0].out_avals)
    if idim is None:
        out_bat = [False] * n_out
        for b in branches:
            _, d = batch_jaxpr(b, axis_size, odims)
            out_bat = [x or y is not None for x, y in zip(out_bat, d)]
        out_dims: list[Dim] = [0 if x else None for x in out_bat]
        batched = [batch_jaxpr(b, axis_size, odims, out_dims)[0] for b in branches]
        return _bind_cond(index, batched, ops), out_dims
    # A batched index: run every branch on the whole batch and select per element (as JAX).
    index = _clamp_index(moveaxis(index, idim, 0), len(branches))
    ops = [bdim_at(x, d, axis_size, 0) for x, d in zip(ops, odims)]
    per_branch: list[list[Any]] = []
    for i, b in enumerate(branches):
        bj, _ = batch_jaxpr(b, axis_size, [0] * len(ops), [0] * n_out)
        pred = ew.eq(index, np.int32(i))
        # Inputs of the branches not taken are cut from differentiation (JAX issue #1052).
        ops_i = [ew.select_n(_bcast_to(pred, get_aval(x)), ew.stop_gradient(x), x) for x in ops]
        per_branch.append(_fun(bj)(*ops_i))
    outs = [ew.select_n(_bcast_to(index, get_aval(os[0])), *os) for os in zip(*per_branch)]
    return outs, [0] * n_out


@transpose_rules.register(cond_p)
def _cond_transpose(cts: list[Any], index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    if is_undefined(index):
        raise ValueError("cond cannot be transposed with respect to its index")
    linear = [is_undefined(x) for x in ops]
    transposed = [transpose_jaxpr(b, linear) for b in branches]
    nonlinear = [x for x, lin in zip(ops, linear) if not lin]
    outs = iter(_bind_cond(index, transposed, [*nonlinear, *cts]))
    return [None] + [next(outs) if lin else None for lin in linear]


@partial_eval_rules.register(cond_p)
def _cond_partial_eval(unknowns: list[bool], *, branches: tuple[ClosedJaxpr, ...]) -> PeResult:
    idx_uk, *ops_uk = unknowns
    op_avals = branches[0].in_avals
    in_avals = [shaped_array((), dtypes.int32), *op_avals]
    if idx_uk:
        return _stage_all(cond_p, unknowns, in_avals, {"branches": branches})
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for b in branches:
        _, _, b_uk, _ = partial_eval_jaxpr(b, ops_uk, False)
        out_uk = [x or y for x, y in zip(out_uk, b_uk)]
    splits = [partial_eval_jaxpr(b, ops_uk, out_uk) for b in branches]
    n_known_out = n_out - sum(out_uk)
    if not any(out_uk):
        res_avals: list[list[ShapedArray]] = [[] for _ in splits]
        knowns = [_with_outvars(k, k.jaxpr.outvars[:n_known_out]) for k, _, _, _ in splits]
    else:
        res_avals = [k.out_avals[n_known_out:] for k, _, _, _ in splits]
        knowns = [k for k, _, _, _ in splits]
    all_res = [a for avs in res_avals for a in avs]
    k_avals = [a for a, u in zip(op_avals, ops_uk) if not u]
    u_avals = [a for a, u in zip(op_avals, ops_uk) if u]

    def known_branch(i: int) -> ClosedJaxpr:
        def f(*ks: Any) -> list[Any]:
            outs = _fun(knowns[i])(*ks)
            res: list[Any] = []
            for j, avs in enumerate(res_avals):
                res += outs[n_known_out:] if j == i else [_zeros(a) for a in avs]
            return outs[:n_known_out] + res

        return trace_to_jaxpr(f, k_avals, "cond known branch")

    def unknown_branch(i: int) -> ClosedJaxpr:
        start = sum(len(avs) for avs in res_avals[:i])
        mine = slice(start, start + len(res_avals[i]))

        def f(*args: Any) -> list[Any]:
            res, uks = args[: len(all_res)], args[len(all_res) :]
            return _fun(splits[i][1])(*res[mine], *uks)

        return trace_to_jaxpr(f, all_res + u_avals, "cond unknown branch")

    known_bs = [known_branch(i) for i in range(len(branches))]
    unknown_bs = [unknown_branch(i) for i in range(len(branches))] if any(out_uk) else []

    def known(index: Any, *ks: Any) -> list[Any]:
        outs = _bind_cond(index, known_bs, ks) if known_bs[0].out_avals else []
        if not any(out_uk):
            return outs
        return outs[:n_known_out] + [index] + outs[n_known_out:]

    def unknown(*args: Any) -> list[Any]:
        if not any(out_uk):
            return []
        index, res, uks = args[0], args[1 : 1 + len(all_res)], args[1 + len(all_res) :]
        return _bind_cond(index, unknown_bs, [*res, *uks])

    idx_aval = shaped_array((), dtypes.int32)
    known_j = trace_to_jaxpr(known, [idx_aval, *k_avals], "partial_eval(cond)")
    num_res = 1 + len(all_res) if any(out_uk) else 0
    res_in = [idx_aval, *all_res] if any(out_uk) else []
    unknown_j = trace_to_jaxpr(unknown, res_in + u_avals, "partial_eval(cond)")
    return known_j, unknown_j, out_uk, num_res


@dce_rules.register(cond_p)
def _cond_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    """Prune outputs unused by the caller and operands no branch needs (mask over the old operands)."""
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]  # type: ignore[assignment]
    dced = [dce_jaxpr_open(b.jaxpr, used_outputs, prune_inputs=False) for b in branches]
    n_ops = len(eqn.invars) - 1
    used_in = [any(u[k] for _, u in dced) for k in range(n_ops)]
    new_branches = tuple(
        ClosedJaxpr(j.replace(invars=[v for v, u in zip(j.invars, used_in) if u]), ()) for j, _ in dced
    )
    invars = [eqn.invars[0]] + [a for a, u in zip(eqn.invars[1:], used_in) if u]
    outvars = [v for v, u in zip(eqn.outvars, used_outputs) if u]
    new = eqn.replace(invars=tuple(invars), outvars=tuple(outvars), params=eqn.params.replace(branches=new_branches))
    return [True, *used_in], new


@lowering_rules.register(cond_p)
def _cond_lowering(ctx: LoweringRuleContext, index: str, *ops: str, branches: tuple[ClosedJaxpr, ...]) -> list[str]:
    outs = ctx.avals_out
    if not outs:
        return []
    in_avals = ctx.avals_in[1:]
    regions = []
    for i, b in enumerate(branches):
        sym = ctx.module.private_function(b.jaxpr, f"cond_branch{i}")
        block = _Block(ctx)
        results = block.call(sym, ops, in_avals, b.out_avals)
        regions.append(block.text(results, outs))
    types = ", ".join(tensor_type(a) for a in outs)
    name = ctx.emit(
        f'"stablehlo.case"({index}) ({", ".join(regions)}) : ({tensor_type(ctx.avals_in[0])}) -> ({types})',
        n_results=len(outs),
    )
    return _results(name, len(outs))


# -- the API ---------------------------------------------------------------------------
def _trace_branches(
    funs: Sequence[Callable[..., Any]],
    labels: Sequence[str],
    what: str,
    operands: tuple[Any, ...],
) -> tuple[list[ClosedJaxpr], list[Any], tree_util.PyTreeDef]:
    ops, in_tree = tree_util.tree_flatten(operands)
    avals = [get_aval(x) for x in ops]
    traced: list[tuple[ClosedJaxpr, tree_util.PyTreeDef]] = []
    for fun, label in zip(funs, labels):
        out_trees: list[tree_util.PyTreeDef] = []

        def flat(
            *leaves: Any, fun: Callable[..., Any] = fun, out_trees: list[tree_util.PyTreeDef] = out_trees
        ) -> list[Any]:
            out = fun(*tree_util.tree_unflatten(in_tree, leaves))
            out_leaves, tree = tree_util.tree_flatten(out)
            out_trees.append(tree)
            return out_leaves

        traced.append((trace_to_jaxpr(flat, avals, f"cond branch {label}"), out_trees[0]))
    (closed0, tree0), label0 = traced[0], labels[0]
    for (closed, tree), label in zip(traced[1:], labels[1:]):
        if tree != tree0:
            raise TypeError(f"{what} must have same type structure, got {tree0} ({label0}) and {tree} ({label}).")
        a0, a = closed0.out_avals, closed.out_avals
        if not all(typematch(x, y) for x, y in zip(a0, a)):
            raise TypeError(
                f"{what} must have identical types, got\n  {label0} output: {_pp(a0)}\n  {label} output: {_pp(a)}"
            )
    weak = [all(c.out_avals[k].weak_type for c, _ in traced) for k in range(len(closed0.out_avals))]
    branches = [_convert_outs(c, weak, f"cond branch {label}") for (c, _), label in zip(traced, labels)]
    return branches, ops, tree0


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as ``cond``.

    As in JAX the predicate may be a bool or integer scalar (non-zero is true), both
    branches are traced, and their outputs must have identical types and tree structure.
    """
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
    if not dtypes.is_bool(aval.dtype):
        if not dtypes.is_integer(aval.dtype):
            raise TypeError(f"Pred type must be either boolean or integer, got {dtypes.dtype_name(aval.dtype)}.")
        pred = bool(pred) if type(pred) is int else ew.ne(pred, 0)
    index = ew.convert_element_type(pred, dtypes.int32)
    branches, ops, out_tree = _trace_branches(
        [false_fun, true_fun], ["false_fun", "true_fun"], "true_fun and false_fun output", operands
    )
    return tree_util.tree_unflatten(out_tree, _bind_cond(index, branches, ops))


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[clamp(0, index, len(branches) - 1)](*operands)``, staged as ``cond``."""
    funs = tuple(branches)
    if not funs:
        raise ValueError("Empty branch sequence")
    if not all(callable(f) for f in funs):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if isinstance(index, (list, tuple)):
        raise TypeError(f"Branch index must be scalar, got {index} of type {type(index)}")
    aval = get_aval(index)
    if aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {aval.shape}.")
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"Index type must be an integer, got {index} of type {dtypes.dtype_name(aval.dtype)}.")
    if len(funs) == 1:
        return funs[0](*operands)
    if aval.dtype != dtypes.int32 or aval.weak_type:
        index = ew.convert_element_type(index, dtypes.int32)
    index = ew.clamp(np.int32(0), index, np.int32(len(funs) - 1))
    labels = [f"branch {i}" for i in range(len(funs))]
    traced, ops, out_tree = _trace_branches(funs, labels, "branch outputs", operands)
    return tree_util.tree_unflatten(out_tree, _bind_cond(index, traced, ops))


# =========================================================================================
# while
# =========================================================================================
while_p = Primitive(
    "while", multiple_results=True, param_names=("cond_jaxpr", "body_jaxpr", "cond_nconsts", "body_nconsts")
)
while_p.impl_takes_arrays = True

_WHILE_REVERSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
    "start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
)


@while_p.def_abstract_eval
def _while_abstract_eval(
    *avals: ShapedArray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
) -> list[ShapedArray]:
    _const_free("while cond_jaxpr", cond_jaxpr)
    _const_free("while body_jaxpr", body_jaxpr)
    cc, bc, carry = _split(avals, cond_nconsts, body_nconsts)
    check_operands("while cond_jaxpr", cc + carry, cond_jaxpr.in_avals)
    check_operands("while body_jaxpr", bc + carry, body_jaxpr.in_avals)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or not dtypes.is_bool(pred[0].dtype):
        raise TypeError(f"while cond_jaxpr must return one bool scalar, got {_pp(pred)}")
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(typematch(o, c) for o, c in zip(outs, carry)):
        raise TypeError(f"while body_jaxpr returns {_pp(outs)} for a carry of type {_pp(carry)}")
    return outs


@while_p.def_impl
def _while_impl(*args: Any, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                body_nconsts: int) -> list[ArrayImpl]:
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    cond_f, body_f = _fun(cond_jaxpr), _fun(body_jaxpr)
    while bool(to_numpy_arg(cond_f(*cc, *carry)[0])[0]):
        carry = body_f(*bc, *carry)
    params = {"cond_jaxpr": cond_jaxpr, "body_jaxpr": body_jaxpr, "cond_nconsts": cond_nconsts,
              "body_nconsts": body_nconsts}
    return _finish(while_p, args, params, carry)


def _bind_while(cond_j: ClosedJaxpr, body_j: ClosedJaxpr, cc: Sequence[Any], bc: Sequence[Any],
                carry: Sequence[Any]) -> list[Any]:
    """Bind ``while`` with possibly-closed jaxprs (their consts become leading consts)."""
    cond_h, cond_consts = hoist_consts(cond_j)
    body_h, body_consts = hoist_consts(body_j)
    cc_all = [*cond_consts, *cc]
    bc_all = [*body_consts, *bc]
    outs: list[Any] = while_p.bind(
        *cc_all, *bc_all, *carry, cond_jaxpr=cond_h, body_jaxpr=body_h,
        cond_nconsts=len(cc_all), body_nconsts=len(bc_all),
    )
    return outs


def _while_jvp(primals: list[Any], tangents: list[Any], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
               cond_nconsts: int, body_nconsts: int) -> tuple[Any, Any]:
    cc, bc, carry = _split(primals, cond_nconsts, body_nconsts)
    _, bc_t, carry_t = _split(tangents, cond_nconsts, body_nconsts)
    carry_avals = body_jaxpr.in_avals[body_nconsts:]
    bc_nz = [type(t) is not Zero for t in bc_t]
    carry_nz = [type(t) is not Zero and has_tangent(a) for t, a in zip(carry_t, carry_avals)]
    while True:  # the carries with a tangent: a fixpoint
        _, out_nz = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
        new = [x or y for x, y in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    body_jvp, _ = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
    hoisted, consts = hoist_consts(body_jvp)
    nh, nb, nc = len(consts), body_nconsts, len(carry)
    nbt, nct = sum(bc_nz), sum(carry_nz)
    # hoisted inputs: [consts, bc, carry, bc_t, carry_t] -> [consts, bc, bc_t, carry, carry_t]
    order = [*range(nh + nb), *range(nh + nb + nc, nh + nb + nc + nbt), *range(nh + nb, nh + nb + nc),
             *range(nh + nb + nc + nbt, nh + nb + nc + nbt + nct)]
    body_new = _permute_invars(hoisted, order)
    cond_new = _extra_inputs(cond_jaxpr, [a for a, z in zip(carry_avals, carry_nz) if z])
    bc_t_nz = [t for t in bc_t if type(t) is not Zero]
    init_t = [ad_util.instantiate(t) if type(t) is not Zero else _zeros(a)
              for t, a, z in zip(carry_t, carry_avals, carry_nz) if z]
    outs: list[Any] = while_p.bind(
        *cc, *consts, *bc, *bc_t_nz, *carry, *init_t, cond_jaxpr=cond_new, body_jaxpr=body_new,
        cond_nconsts=cond_nconsts, body_nconsts=nh + nb + nbt,
    )
    t_it = iter(outs[nc:])
    touts = [next(t_it) if z else Zero(a) for z, a in zip(carry_nz, body_jaxpr.out_avals)]
    return outs[:nc], touts


jvp_rules.register(while_p, symbolic_zeros=True)(_while_jvp)


@batching_rules.register(while_p)
def _while_batching(
    axis_size: int, vals: list[Any], dims: list[Dim], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
    cond_nconsts: int, body_nconsts: int,
) -> tuple[list[Any], list[Dim]]:
    vals = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    dims = [0 if d is not None else None for d in dims]
    cc, bc, carry = _split(vals, cond_nconsts, body_nconsts)
    ccd, bcd, card = _split(dims, cond_nconsts, body_nconsts)
    carry_bat = [d is not None for d in card]
    while True:  # the batched carries: a fixpoint
        _, out_d = batch_jaxpr(body_jaxpr, axis_size, bcd + [0 if b else None for b in carry_bat])
        new = [b or d is not None for b, d in zip(carry_bat, out_d)]
        if new == carry_bat:
            break
        carry_bat = new
    carry_dims: list[Dim] = [0 if b else None for b in carry_bat]
    _, (pred_d,) = batch_jaxpr(cond_jaxpr, axis_size, ccd + carry_dims)
    if pred_d is None:
        cond_b, _ = batch_jaxpr(cond_jaxpr, axis_size, ccd + carry_dims, [None])
        body_b, _ = batch_jaxpr(body_jaxpr, axis_size, bcd + carry_dims, carry_dims)
        carry = [bdim_at(x, d, axis_size, 0) if b else x for x, d, b in zip(carry, card, carry_bat)]
        return _bind_while(cond_b, body_b, cc, bc, carry), carry_dims
    # A batched predicate: every carry is batched; loop while any element's predicate holds,
    # and let the elements whose predicate is false keep their values (as JAX).
    all0: list[Dim] = [0] * len(carry)
    carry = [bdim_at(x, d, axis_size, 0) for x, d in zip(carry, card)]
    cond_b, _ = batch_jaxpr(cond_jaxpr, axis_size, ccd + all0, [0])
    body_b, _ = batch_jaxpr(body_jaxpr, axis_size, bcd + all0, all0)
    cc_avals = [get_aval(x) for x in cc]
    bc_avals = [get_aval(x) for x in bc]
    carry_avals = [get_aval(x) for x in carry]
    reductions = _reductions()

    def new_cond(*args: Any) -> list[Any]:
        (pred,) = _fun(cond_b)(*args)
        return [reductions.reduce_or(pred, (0,))]

    def new_body(*args: Any) -> list[Any]:
        c, b, x = _split(args, len(cc), len(bc))
        (pred,) = _fun(cond_b)(*c, *x)
        new = _fun(body_b)(*b, *x)
        return [ew.select_n(_bcast_to(pred, a), old, n) for old, n, a in zip(x, new, carry_avals)]

    cond_j = trace_to_jaxpr(new_cond, cc_avals + carry_avals, "vmap(while cond)")
    body_j = trace_to_jaxpr(new_body, cc_avals + bc_avals + carry_avals, "vmap(while body)")
    return _bind_while(cond_j, body_j, cc, [*cc, *bc], carry), all0


def _reductions() -> Any:
    from fcore.lax import reductions

    return reductions


@transpose_rules.register(while_p)
def _while_transpose(cts: list[Any], *args: Any, **params: Any) -> list[Any]:
    raise ValueError(_WHILE_REVERSE_ERROR)


@partial_eval_rules.register(while_p)
def _while_partial_eval(unknowns: list[bool], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                        cond_nconsts: int, body_nconsts: int) -> PeResult:
    params: dict[str, ParamValue] = {"cond_jaxpr": cond_jaxpr, "body_jaxpr": body_jaxpr,
                                     "cond_nconsts": cond_nconsts, "body_nconsts": body_nconsts}
    cc_uk, bc_uk, init_uk = _split(unknowns, cond_nconsts, body_nconsts)
    in_avals = [*cond_jaxpr.in_avals[:cond_nconsts], *body_jaxpr.in_avals]
    carry_uk = list(init_uk)
    while True:  # the unknown carries: a fixpoint
        _, _, out_uk, _ = partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk)
        new = [x or y for x, y in zip(carry_uk, out_uk)]
        if new == carry_uk:
            break
        carry_uk = new
    cond_known, _, (pred_uk,), _ = partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk, False)
    if pred_uk or all(carry_uk):
        return _stage_all(while_p, unknowns, in_avals, params)
    # The known carries are computed by a loop over the known part of the body; the unknown
    # ones by the whole loop, recomputing the known part (JAX's rematerialization).
    body_known, _, _, _ = partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk)
    n_known_carry = len(carry_uk) - sum(carry_uk)
    body_k = _with_outvars(body_known, body_known.jaxpr.outvars[:n_known_carry])
    cond_k = _with_outvars(cond_known, cond_known.jaxpr.outvars[:1])
    k_avals = [a for a, u in zip(in_avals, unknowns) if not u]
    u_avals = [a for a, u in zip(in_avals, unknowns) if u]
    n_cc, n_bc = cond_nconsts, body_nconsts

    def known(*ks: Any) -> list[Any]:
        k_it = iter(ks)
        full = [None if u else next(k_it) for u in unknowns]
        cc, bc, init = _split(full, n_cc, n_bc)
        kcc = [x for x, u in zip(cc, cc_uk) if not u]
        kbc = [x for x, u in zip(bc, bc_uk) if not u]
        kcarry = [x for x, u in zip(init, carry_uk) if not u]
        return _bind_while(cond_k, body_k, kcc, kbc, kcarry) + list(ks)

    def unknown(*args: Any) -> list[Any]:
        res, uks = args[: len(k_avals)], args[len(k_avals) :]
        k_it, u_it = iter(res), iter(uks)
        full = [next(u_it) if u else next(k_it) for u in unknowns]
        outs: list[Any] = while_p.bind(*full, **params)
        return [o for o, u in zip(outs, carry_uk) if u]

    known_j = trace_to_jaxpr(known, k_avals, "partial_eval(while)")
    unknown_j = trace_to_jaxpr(unknown, k_avals + u_avals, "partial_eval(while)")
    return known_j, unknown_j, carry_uk, len(k_avals)


@dce_rules.register(while_p)
def _while_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    """Keep the carries that are used, read by the predicate, or needed by a kept carry (a
    fixpoint), and the consts those need; the mask is over the old operands."""
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    cond_j: ClosedJaxpr = eqn.params["cond_jaxpr"]  # type: ignore[assignment]
    body_j: ClosedJaxpr = eqn.params["body_jaxpr"]  # type: ignore[assignment]
    ncc: int = eqn.params["cond_nconsts"]  # type: ignore[assignment]
    nbc: int = eqn.params["body_nconsts"]  # type: ignore[assignment]
    cond_d, c_used = dce_jaxpr_open(cond_j.jaxpr, [True], prune_inputs=False)
    used = [u or c for u, c in zip(used_outputs, c_used[ncc:])]
    while True:
        body_d, b_used = dce_jaxpr_open(body_j.jaxpr, used, prune_inputs=False)
        new = [u or b for u, b in zip(used, b_used[nbc:])]
        if new == used:
            break
        used = new
    keep_cc, keep_bc = c_used[:ncc], b_used[:nbc]
    new_cond = cond_d.replace(invars=[v for v, k in zip(cond_d.invars, keep_cc + used) if k])
    new_body = body_d.replace(invars=[v for v, k in zip(body_d.invars, keep_bc + used) if k])
    cc, bc, carry = _split(eqn.invars, ncc, nbc)
    invars = (
        [a for a, k in zip(cc, keep_cc) if k] + [a for a, k in zip(bc, keep_bc) if k]
        + [a for a, k in zip(carry, used) if k]
    )
    params = eqn.params.replace(
        cond_jaxpr=ClosedJaxpr(new_cond, ()), body_jaxpr=ClosedJaxpr(new_body, ()),
        cond_nconsts=sum(keep_cc), body_nconsts=sum(keep_bc),
    )
    outvars = [v for v, k in zip(eqn.outvars, used) if k]
    return keep_cc + keep_bc + used, eqn.replace(invars=tuple(invars), outvars=tuple(outvars), params=params)


@lowering_rules.register(while_p)
def _while_lowering(ctx: LoweringRuleContext, *args: str, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                    cond_nconsts: int, body_nconsts: int) -> list[str]:
    cc, bc, init = _split(args, cond_nconsts, body_nconsts)
    cc_a, bc_a, carry_a = _split(ctx.avals_in, cond_nconsts, body_nconsts)
    if not init:
        return []
    cond_sym = ctx.module.private_function(cond_jaxpr.jaxpr, "while_cond")
    body_sym = ctx.module.private_function(body_jaxpr.jaxpr, "while_body")
    iters = [ctx.fn.fresh() for _ in init]
    cb = _Block(ctx)
    (pred,) = cb.call(cond_sym, [*cc, *iters], [*cc_a, *carry_a], cond_jaxpr.out_avals)
    bb = _Block(ctx)
    new = bb.call(body_sym, [*bc, *iters], [*bc_a, *carry_a], body_jaxpr.out_avals)
    bind = ", ".join(f"{i} = {x}" for i, x in zip(iters, init))
    types = ", ".join(tensor_type(a) for a in carry_a)
    text = (
        f"stablehlo.while({bind}) : {types}\n    cond {cb.text([pred], cond_jaxpr.out_avals)} "
        f"do {bb.text(new, carry_a)}"
    )
    return _results(ctx.emit(text, n_results=len(init)), len(init))


# -- the API ---------------------------------------------------------------------------
def _trace_carry_fun(
    fun: Callable[[list[Any]], tuple[list[Any], tree_util.PyTreeDef, int]],
    carry: list[Any],
    carry_tree: tree_util.PyTreeDef,
    other_avals: Sequence[ShapedArray],
    description: str,
    what: str,
) -> tuple[ClosedJaxpr, list[Any], tree_util.PyTreeDef]:
    """Stage a loop body ``fun(leaves) -> (out_leaves, out_tree, n_carry_out)`` whose inputs are
    the carry leaves then ``other_avals``; its carry output must match the carry input.

    Returns the body (carry outputs given the carry's weak types), the carry (made strongly
    typed where the body's output is strong, as JAX's weak-type promotion of loop carries)
    and the tree of the non-carry outputs.
    """
    for _ in range(2):
        avals = [get_aval(x) for x in carry]
        trees: list[tuple[tree_util.PyTreeDef, int]] = []

        def flat(*leaves: Any) -> list[Any]:
            out_leaves, tree, n = fun(list(leaves))
            trees.append((tree, n))
            return out_leaves

        closed = trace_to_jaxpr(flat, avals + list(other_avals), description)
        (extra_tree, _) = trees[0]
        outs = closed.out_avals[: len(carry)]
        if not all(typematch(a, b) for a, b in zip(avals, outs)):
            raise TypeError(f"{what} must have identical types, got\n  input:  {_pp(avals)}\n  output: {_pp(outs)}")
        promote = [a.weak_type and not b.weak_type for a, b in zip(avals, outs)]
        if not any(promote):
            break
        carry = [ew.convert_element_type(x, a.dtype) if p else x for x, a, p in zip(carry, avals, promote)]
    weak = [a.weak_type for a in avals] + [a.weak_type for a in closed.out_avals[len(carry) :]]
    return _convert_outs(closed, weak, description), carry, extra_tree


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)``, staged as ``while`` (JAX's ``lax.while_loop``)."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    init, in_tree = tree_util.tree_flatten(init_val)

    def body(leaves: list[Any]) -> tuple[list[Any], tree_util.PyTreeDef, int]:
        out = body_fun(tree_util.tree_unflatten(in_tree, leaves))
        out_leaves, tree = tree_util.tree_flatten(out)
        if tree != in_tree:
            raise TypeError(f"body_fun output and input must have same type structure, got {tree} and {in_tree}.")
        return out_leaves, tree, len(out_leaves)

    body_j, init, _ = _trace_carry_fun(body, init, in_tree, [], "while_loop body", "body_fun output and input")
    avals = [get_aval(x) for x in init]

    def cond_flat(*leaves: Any) -> list[Any]:
        out = cond_fun(tree_util.tree_unflatten(in_tree, leaves))
        return tree_util.tree_leaves(out)

    cond_j = trace_to_jaxpr(cond_flat, avals, "while_loop cond")
    pred = cond_j.out_avals
    if len(pred) != 1 or pred[0].shape != () or not dtypes.is_bool(pred[0].dtype):
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) {[a.str_short() for a in pred]}.")
    return tree_util.tree_unflatten(in_tree, _bind_while(cond_j, body_j, [], [], init))


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any,
              *, unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    As in JAX: a ``scan`` when the bounds are concrete (so that it is reverse-mode
    differentiable), a ``while`` over ``(i, upper, val)`` otherwise.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lo_aval, hi_aval = get_aval(lower), get_aval(upper)
    dtype = lo_aval.dtype
    if lo_aval.dtype != hi_aval.dtype:
        both_signed = dtypes.is_signed_int(lo_aval.dtype) and dtypes.is_signed_int(hi_aval.dtype)
        if both_signed and lo_aval.weak_type and not hi_aval.weak_type:
            dtype = hi_aval.dtype
        elif not (both_signed and hi_aval.weak_type and not lo_aval.weak_type):
            raise TypeError(
                "lower and upper arguments to fori_loop must have equal types, got "
                f"{dtypes.dtype_name(lo_aval.dtype)} and {dtypes.dtype_name(hi_aval.dtype)}"
            )
    try:
        lo, hi = int(lower), int(upper)
    except ConcretizationError:
        static = False
    else:
        static = True
    if static:
        n_unroll = 1 if unroll is None or unroll is False else unroll

        def scan_body(carry: tuple[Any, Any], _: None) -> tuple[tuple[Any, Any], None]:
            i, x = carry
            return (ew.add(i, 1), body_fun(i, x)), None

        (_, result), _ = scan(scan_body, (lo, init_val), None, length=max(hi - lo, 0), unroll=n_unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    if lo_aval.dtype != dtype:
        lower = ew.convert_element_type(lower, dtype)
    if hi_aval.dtype != dtype:
        upper = ew.convert_element_type(upper, dtype)

    def cond_fun(c: tuple[Any, Any, Any]) -> Any:
        return ew.lt(c[0], c[1])

    def body(c: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        i, u, x = c
        return ew.add(i, 1), u, body_fun(i, x)

    _, _, result = while_loop(cond_fun, body, (lower, upper, init_val))
    return result


# =========================================================================================
# scan
# =========================================================================================
scan_p = Primitive(
    "scan", multiple_results=True,
    param_names=("jaxpr", "length", "reverse", "num_consts", "num_carry", "linear", "unroll"),
)
scan_p.impl_takes_arrays = True


def _scan_params(jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int, num_carry: int,
                 linear: tuple[bool, ...], unroll: int) -> dict[str, ParamValue]:
    return {"jaxpr": jaxpr, "length": length, "reverse": reverse, "num_consts": num_consts,
            "num_carry": num_carry, "linear": linear, "unroll": unroll}


def _stacked(aval: ShapedArray, length: int) -> ShapedArray:
    return shaped_array((length, *aval.shape), aval.dtype, aval.weak_type)


def _unstacked(aval: ShapedArray) -> ShapedArray:
    return shaped_array(aval.shape[1:], aval.dtype, aval.weak_type)


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                        num_carry: int, linear: tuple[bool, ...], unroll: int) -> list[ShapedArray]:
    _const_free("scan jaxpr", jaxpr)
    if len(linear) != len(avals):
        raise TypeError(f"scan linear has {len(linear)} entries for {len(avals)} operands")
    if length < 0:
        raise TypeError(f"scan length must be nonnegative, got {length}")
    ins = jaxpr.in_avals
    if len(avals) != len(ins):
        raise TypeError(f"scan jaxpr takes {len(ins)} operands, got {len(avals)}")
    consts, carry, xs = _split(avals, num_consts, num_carry)
    check_operands("scan consts", consts, ins[:num_consts])
    check_operands("scan carry", carry, ins[num_consts : num_consts + num_carry])
    for i, (x, want) in enumerate(zip(xs, ins[num_consts + num_carry :])):
        if x.shape != (length, *want.shape) or x.dtype != want.dtype:
            raise TypeError(f"scan xs operand {i} has type {x.str_short()}, expected {_stacked(want, length).str_short()}")
    outs = jaxpr.out_avals
    if len(outs) < num_carry or not all(typematch(o, c) for o, c in zip(outs, carry)):
        raise TypeError(f"scan jaxpr returns {_pp(outs[:num_carry])} for a carry of type {_pp(carry)}")
    return outs[:num_carry] + [_stacked(y, length) for y in outs[num_carry:]]


@scan_p.def_impl
def _scan_impl(*args: Any, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int, num_carry: int,
               linear: tuple[bool, ...], unroll: int) -> list[ArrayImpl]:
    consts, carry, xs = _split(args, num_consts, num_carry)
    xs_np = [to_numpy_arg(x)[0] for x in xs]
    body = _fun(jaxpr)
    y_avals = jaxpr.out_avals[num_carry:]
    ys: list[list[np.ndarray[Any, Any]]] = [[] for _ in y_avals]
    for k in range(length):
        i = length - 1 - k if reverse else k
        outs = body(*consts, *carry, *[x[i] for x in xs_np])
        carry = outs[:num_carry]
        for acc, y in zip(ys, outs[num_carry:]):
            acc.append(to_numpy_arg(y)[0])
    stacked = []
    for acc, a in zip(ys, y_avals):
        if reverse:
            acc.reverse()
        stacked.append(np.stack(acc).astype(a.dtype) if acc else np.zeros((0, *a.shape), a.dtype))
    params = _scan_params(jaxpr, length, reverse, num_consts, num_carry, linear, unroll)
    return _finish(scan_p, args, params, [*carry, *stacked])


def _scan_jvp(primals: list[Any], tangents: list[Any], *, jaxpr: ClosedJaxpr, length: int, reverse: bool,
              num_consts: int, num_carry: int, linear: tuple[bool, ...], unroll: int) -> tuple[Any, Any]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = _split(primals, nc, ncar)
    consts_t, init_t, xs_t = _split(tangents, nc, ncar)
    lin_c, lin_car, lin_x = _split(list(linear), nc, ncar)
    carry_avals = jaxpr.in_avals[nc : nc + ncar]
    ny = len(jaxpr.out_avals) - ncar
    const_nz = [type(t) is not Zero for t in consts_t]
    xs_nz = [type(t) is not Zero for t in xs_t]
    carry_nz = [type(t) is not Zero and has_tangent(a) for t, a in zip(init_t, carry_avals)]
    while True:  # the carries with a tangent: a fixpoint
        _, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
        new = [x or y for x, y in zip(carry_nz, out_nz[:ncar])]
        if new == carry_nz:
            break
        carry_nz = new
    body_jvp, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
    ys_nz = out_nz[ncar:]
    hoisted, hconsts = hoist_consts(body_jvp)
    nh, nx = len(hconsts), len(xs)
    nct, ncart, nxt = sum(const_nz), sum(carry_nz), sum(xs_nz)
    # inputs [h, consts, carry, xs, consts_t, carry_t, xs_t] -> [h, consts, consts_t, carry, carry_t, xs, xs_t]
    p = nh + nc + ncar + nx
    order = [*range(nh + nc), *range(p, p + nct), *range(nh + nc, nh + nc + ncar), *range(p + nct, p + nct + ncart),
             *range(nh + nc + ncar, p), *range(p + nct + ncart, p + nct + ncart + nxt)]
    body = _permute_invars(hoisted, order)
    # outputs [carry, ys, carry_t, ys_t] -> [carry, carry_t, ys, ys_t]
    outs_j = list(body.jaxpr.outvars)
    nyt = sum(ys_nz)
    outs_j = outs_j[:ncar] + outs_j[ncar + ny : ncar + ny + ncart] + outs_j[ncar : ncar + ny] + outs_j[ncar + ny + ncart :]
    assert len(outs_j) == ncar + ncart + ny + nyt
    body = ClosedJaxpr(body.jaxpr.replace(outvars=outs_j), ())
    init_tv = [ad_util.instantiate(t) if type(t) is not Zero else _zeros(a)
               for t, a, z in zip(init_t, carry_avals, carry_nz) if z]
    operands = [*hconsts, *consts, *[t for t in consts_t if type(t) is not Zero], *init, *init_tv,
                *xs, *[t for t in xs_t if type(t) is not Zero]]
    new_linear = (
        [False] * nh + lin_c + [True] * nct + lin_car + [True] * ncart + lin_x + [True] * nxt
    )
    outs: list[Any] = scan_p.bind(
        *operands, **_scan_params(body, length, reverse, nh + nc + nct, ncar + ncart, tuple(new_linear), unroll)
    )
    carry_out, carry_t_out, ys, ys_t = _split(outs, ncar, ncart, ny)
    out_avals = _scan_abstract_eval(*[get_aval(x) for x in primals], jaxpr=jaxpr, length=length, reverse=reverse,
                                    num_consts=nc, num_carry=ncar, linear=linear, unroll=unroll)
    ct_it, yt_it = iter(carry_t_out), iter(ys_t)
    touts = [next(ct_it) if z else Zero(a) for z, a in zip(carry_nz, out_avals[:ncar])]
    touts += [next(yt_it) if z else Zero(a) for z, a in zip(ys_nz, out_avals[ncar:])]
    return [*carry_out, *ys], touts


jvp_rules.register(scan_p, symbolic_zeros=True)(_scan_jvp)


@batching_rules.register(scan_p)
def _scan_batching(axis_size: int, vals: list[Any], dims: list[Dim], *, jaxpr: ClosedJaxpr, length: int,
                   reverse: bool, num_consts: int, num_carry: int, linear: tuple[bool, ...],
                   unroll: int) -> tuple[list[Any], list[Dim]]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = _split(vals, nc, ncar)
    cd, ind, xd = _split(dims, nc, ncar)
    consts = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(consts, cd)]
    xs = [moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, xd)]
    const_dims: list[Dim] = [0 if d is not None else None for d in cd]
    xs_dims: list[Dim] = [0 if d is not None else None for d in xd]
    carry_bat = [d is not None for d in ind]
    ny = len(jaxpr.out_avals) - ncar
    while True:  # the batched carries: a fixpoint
        carry_dims: list[Dim] = [0 if b else None for b in carry_bat]
        _, out_d = batch_jaxpr(jaxpr, axis_size, const_dims + carry_dims + xs_dims)
        new = [b or d is not None for b, d in zip(carry_bat, out_d[:ncar])]
        if new == carry_bat:
            break
        carry_bat = new
    ys_dims: list[Dim] = [0 if d is not None else None for d in out_d[ncar:]]
    body, _ = batch_jaxpr(jaxpr, axis_size, const_dims + carry_dims + xs_dims, carry_dims + ys_dims)
    hoisted, hconsts = hoist_consts(body)
    init = [bdim_at(x, d, axis_size, 0) if b else x for x, d, b in zip(init, ind, carry_bat)]
    params = _scan_params(hoisted, length, reverse, len(hconsts) + nc, ncar,
                          (False,) * len(hconsts) + linear, unroll)
    outs: list[Any] = scan_p.bind(*hconsts, *consts, *init, *xs, **params)
    return outs, carry_dims + [1 if d is not None else None for d in ys_dims[:ny]]


@transpose_rules.register(scan_p)
def _scan_transpose(cts: list[Any], *args: Any, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                    num_carry: int, linear: tuple[bool, ...], unroll: int) -> list[Any]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = _split(args, nc, ncar)
    c_lin = [is_undefined(x) for x in consts]
    # Carries are transposed as linear even where the initial value is known (a tangent
    # carry starting from instantiated zeros, as JAX does); such an init gets no cotangent.
    init_lin = [is_undefined(x) for x in init]
    car_lin = [True] * ncar
    x_lin = [is_undefined(x) for x in xs]
    ct_carry, ct_ys = cts[:ncar], cts[ncar:]
    body_t = transpose_jaxpr(jaxpr, c_lin + car_lin + x_lin)
    ins = jaxpr.in_avals
    c_avals, car_avals, x_avals = _split(ins, nc, ncar)
    nl_c = [x for x, lin in zip(consts, c_lin) if not lin]
    nl_x = [x for x, lin in zip(xs, x_lin) if not lin]
    nl_c_avals = [a for a, lin in zip(c_avals, c_lin) if not lin]
    nl_x_avals = [a for a, lin in zip(x_avals, x_lin) if not lin]
    acc_avals = [a for a, lin in zip(c_avals, c_lin) if lin]  # weak consts get weak cotangents, as in JAX
    ct_car_avals = [a.strip_weak_type() for a in jaxpr.out_avals[:ncar]]
    ct_y_avals = [a.strip_weak_type() for a in jaxpr.out_avals[ncar:]]
    n_nlc, n_acc, n_nlx = len(nl_c), len(acc_avals), len(nl_x)

    def body(*a: Any) -> list[Any]:
        nlc, acc, ctc, nlx, cty = _split(a, n_nlc, n_acc, ncar, n_nlx)
        outs = _fun(body_t)(*nlc, *nlx, *ctc, *cty)
        ct_lc, ct_car, ct_lx = _split(outs, n_acc, ncar)
        sums = [ew.convert_element_type(ew.add(x, y), a.dtype, a.weak_type) for x, y, a in zip(acc, ct_lc, acc_avals)]
        return [*sums, *ct_car, *ct_lx]

    body_j, hconsts = _trace_hoisted(body, nl_c_avals + acc_avals + ct_car_avals + nl_x_avals + ct_y_avals,
                                     "transpose(scan body)")
    acc0 = [_zeros(a) for a in acc_avals]
    n_consts = len(hconsts) + n_nlc
    new_linear = (False,) * n_consts + (True,) * (n_acc + ncar) + (False,) * n_nlx + (True,) * len(ct_ys)
    outs: list[Any] = scan_p.bind(
        *hconsts, *nl_c, *acc0, *ct_carry, *nl_x, *ct_ys,
        **_scan_params(body_j, length, not reverse, n_consts, n_acc + ncar, new_linear, unroll),
    )
    ct_consts, ct_init, ct_xs = _split(outs, n_acc, ncar)
    c_it, x_it = iter(ct_consts), iter(ct_xs)
    return ([next(c_it) if lin else None for lin in c_lin] + [c if lin else None for c, lin in zip(ct_init, init_lin)]
            + [next(x_it) if lin else None for lin in x_lin])


@partial_eval_rules.register(scan_p)
def _scan_partial_eval(unknowns: list[bool], *, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                       num_carry: int, linear: tuple[bool, ...], unroll: int) -> PeResult:
    nc, ncar = num_consts, num_carry
    const_uk, init_uk, xs_uk = _split(unknowns, nc, ncar)
    lin_c, lin_car, lin_x = _split(list(linear), nc, ncar)
    ny = len(jaxpr.out_avals) - ncar
    carry_uk = list(init_uk)
    while True:  # the unknown carries: a fixpoint
        _, _, out_uk, _ = partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk, carry_uk + [False] * ny)
        new = [x or y for x, y in zip(carry_uk, out_uk[:ncar])]
        if new == carry_uk:
            break
        carry_uk = new
    known_b, unknown_b, out_uk, num_res = partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk,
                                                             carry_uk + [False] * ny)
    ys_uk = out_uk[ncar:]
    any_uk = any(out_uk)
    n_kout = len(out_uk) - sum(out_uk)
    c_avals, car_avals, x_avals = _split(jaxpr.in_avals, nc, ncar)
    op_avals = c_avals + car_avals + [_stacked(a, length) for a in x_avals]
    # The known body's inputs: known consts, carries that stay known, known xs.
    n_kc = nc - sum(const_uk)
    n_kcar = ncar - sum(carry_uk)
    kin = known_b.jaxpr.invars
    res_outs = list(known_b.jaxpr.outvars[n_kout:]) if any_uk else []
    # Residuals: a known const or xs input of the body is forwarded as it is; anything
    # else varies per iteration and is stacked as an extra ys output of the known scan.
    kinds: list[tuple[str, int]] = []
    stacked_outs: list[Atom] = []
    for r in res_outs:
        j = next((k for k, v in enumerate(kin) if v is r), None)
        if j is not None and j < n_kc:
            kinds.append(("const", j))
        elif j is not None and j >= n_kc + n_kcar:
            kinds.append(("xs", j - n_kc - n_kcar))
        else:
            kinds.append(("stacked", len(stacked_outs)))
            stacked_outs.append(r)
    body_k = _with_outvars(known_b, list(known_b.jaxpr.outvars[:n_kout]) + stacked_outs)
    body_k, hk = hoist_consts(body_k)
    res_avals = [a.aval for a in res_outs]
    k_avals = [a for a, u in zip(op_avals, unknowns) if not u]
    u_avals = [a for a, u in zip(op_avals, unknowns) if u]
    promoted = [not iu and cu for iu, cu in zip(init_uk, carry_uk)]  # known inits of unknown carries
    n_stacked = len(stacked_outs)

    def known(*ks: Any) -> list[Any]:
        k_it = iter(ks)
        full = [None if u else next(k_it) for u in unknowns]
        consts, init, xs = _split(full, nc, ncar)
        kconsts = [x for x, u in zip(consts, const_uk) if not u]
        kinit = [x for x, u in zip(init, carry_uk) if not u]
        kxs = [x for x, u in zip(xs, xs_uk) if not u]
        klin = ([False] * len(hk) + [x for x, u in zip(lin_c, const_uk) if not u]
                + [x for x, u in zip(lin_car, carry_uk) if not u] + [x for x, u in zip(lin_x, xs_uk) if not u])
        if body_k.out_avals:
            outs: list[Any] = scan_p.bind(*hk, *kconsts, *kinit, *kxs, **_scan_params(
                body_k, length, reverse, len(hk) + len(kconsts), len(kinit), tuple(klin), unroll))
        else:
            outs = []
        kout, stacked = outs[:n_kout], outs[n_kout:]
        if not any_uk:
            return kout
        res_vals = []
        for kind, j in kinds:
            res_vals.append(kconsts[j] if kind == "const" else kxs[j] if kind == "xs" else stacked[j])
        return kout + [x for x, p in zip(init, promoted) if p] + res_vals

    n_prom = sum(promoted)
    n_res = (n_prom + len(res_outs)) if any_uk else 0
    prom_avals = [a for a, p in zip(car_avals, promoted) if p]
    c_res_idx = [k for k, (kind, _) in enumerate(kinds) if kind == "const"]
    s_res_idx = [k for k, (kind, _) in enumerate(kinds) if kind == "stacked"]
    x_res_idx = [k for k, (kind, _) in enumerate(kinds) if kind == "xs"]
    # The unknown body's inputs: [residuals, unknown consts, unknown carries, unknown xs];
    # the unknown scan takes [const residuals, unknown consts | carries | stacked and xs
    # residuals, unknown xs].
    if any_uk:
        unknown_h, hu = hoist_consts(unknown_b)
        nhu, nr = len(hu), len(res_outs)
        n_uc, n_ucar, n_ux = sum(const_uk), sum(carry_uk), sum(xs_uk)
        base = nhu + nr
        order = [*range(nhu), *[nhu + k for k in c_res_idx], *range(base, base + n_uc),
                 *range(base + n_uc, base + n_uc + n_ucar), *[nhu + k for k in s_res_idx],
                 *[nhu + k for k in x_res_idx], *range(base + n_uc + n_ucar, base + n_uc + n_ucar + n_ux)]
        body_u = _permute_invars(unknown_h, order)

    def unknown(*args: Any) -> list[Any]:
        if not any_uk:
            return []
        prom, res, uks = _split(args, n_prom, len(res_outs))
        u_it = iter(uks)
        full = [next(u_it) if u else None for u in unknowns]
        consts, init, xs = _split(full, nc, ncar)
        uconsts = [x for x, u in zip(consts, const_uk) if u]
        uxs = [x for x, u in zip(xs, xs_uk) if u]
        p_it = iter(prom)
        uinit = [x if iu else next(p_it) for x, iu, cu in zip(init, init_uk, carry_uk) if cu]
        c_res = [res[k] for k in c_res_idx]
        x_res = [res[k] for k in s_res_idx] + [res[k] for k in x_res_idx]
        ulin = ([False] * (nhu + len(c_res)) + [x for x, u in zip(lin_c, const_uk) if u]
                + [x for x, u in zip(lin_car, carry_uk) if u] + [False] * len(x_res)
                + [x for x, u in zip(lin_x, xs_uk) if u])
        outs: list[Any] = scan_p.bind(*hu, *c_res, *uconsts, *uinit, *x_res, *uxs, **_scan_params(
            body_u, length, reverse, nhu + len(c_res) + len(uconsts), len(uinit), tuple(ulin), unroll))
        return outs

    res_in_avals = prom_avals + [
        a if kind == "const" else _stacked(a, length) for a, (kind, _) in zip(res_avals, kinds)
    ] if any_uk else []
    known_j = trace_to_jaxpr(known, k_avals, "partial_eval(scan)")
    unknown_j = trace_to_jaxpr(unknown, res_in_avals + u_avals, "partial_eval(scan)")
    assert n_stacked == len(s_res_idx)
    return known_j, unknown_j, carry_uk + ys_uk, n_res


@dce_rules.register(scan_p)
def _scan_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    """Keep the used ys, the carries used or needed by kept outputs (a fixpoint), and the
    consts and xs those need; the mask is over the old operands."""
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    jaxpr: ClosedJaxpr = eqn.params["jaxpr"]  # type: ignore[assignment]
    nc: int = eqn.params["num_consts"]  # type: ignore[assignment]
    ncar: int = eqn.params["num_carry"]  # type: ignore[assignment]
    linear: tuple[bool, ...] = eqn.params["linear"]  # type: ignore[assignment]
    used_carry = list(used_outputs[:ncar])
    used_ys = list(used_outputs[ncar:])
    while True:
        body_d, used_in = dce_jaxpr_open(jaxpr.jaxpr, used_carry + used_ys, prune_inputs=False)
        new = [u or b for u, b in zip(used_carry, used_in[nc : nc + ncar])]
        if new == used_carry:
            break
        used_carry = new
    keep = used_in[:nc] + used_carry + used_in[nc + ncar :]
    new_body = body_d.replace(invars=[v for v, k in zip(body_d.invars, keep) if k])
    invars = tuple(a for a, k in zip(eqn.invars, keep) if k)
    outvars = tuple(v for v, k in zip(eqn.outvars, used_carry + used_ys) if k)
    params = eqn.params.replace(
        jaxpr=ClosedJaxpr(new_body, ()), num_consts=sum(used_in[:nc]), num_carry=sum(used_carry),
        linear=tuple(x for x, k in zip(linear, keep) if k),
    )
    return keep, eqn.replace(invars=invars, outvars=outvars, params=params)


@lowering_rules.register(scan_p)
def _scan_lowering(ctx: LoweringRuleContext, *args: str, jaxpr: ClosedJaxpr, length: int, reverse: bool,
                   num_consts: int, num_carry: int, linear: tuple[bool, ...], unroll: int) -> list[str]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = _split(args, nc, ncar)
    c_avals, car_avals, xs_avals = _split(ctx.avals_in, nc, ncar)
    y_avals = ctx.avals_out[ncar:]
    if length == 0:
        return list(init) + [ctx.constant(0, a.dtype, a.shape) for a in y_avals]
    i32 = shaped_array((), dtypes.int32)
    zero = ctx.constant(0, dtypes.int32)
    one = ctx.constant(1, dtypes.int32)
    n = ctx.constant(length, dtypes.int32)
    last = ctx.constant(length - 1, dtypes.int32)
    ys0 = [ctx.constant(0, a.dtype, a.shape) for a in y_avals]
    body_sym = ctx.module.private_function(jaxpr.jaxpr, "scan_body")
    loop_avals = [i32, *car_avals, *y_avals]
    iters = [ctx.fn.fresh() for _ in loop_avals]
    i, carry, ys = iters[0], iters[1 : 1 + ncar], iters[1 + ncar :]
    cb = _Block(ctx)
    pred_aval = shaped_array((), dtypes.bool_)
    pred = cb.emit(f"stablehlo.compare LT, {i}, {n}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
    bb = _Block(ctx)
    idx = bb.emit(f"stablehlo.subtract {last}, {i} : tensor<i32>") if reverse else i
    slices = []
    for x, xa, a in zip(xs, xs_avals, jaxpr.in_avals[nc + ncar :]):
        starts = ", ".join([idx] + [zero] * a.ndim)
        sizes = ", ".join(["1", *map(str, a.shape)])
        one_a = shaped_array((1, *a.shape), a.dtype)
        ins = ", ".join([tensor_type(xa)] + ["tensor<i32>"] * (a.ndim + 1))
        s = bb.emit(f"stablehlo.dynamic_slice {x}, {starts}, sizes = [{sizes}] : ({ins}) -> {tensor_type(one_a)}")
        slices.append(bb.emit(f"stablehlo.reshape {s} : ({tensor_type(one_a)}) -> {tensor_type(a)}"))
    outs = bb.call(body_sym, [*consts, *carry, *slices], [*c_avals, *car_avals, *jaxpr.in_avals[nc + ncar :]],
                   jaxpr.out_avals)
    new_ys = []
    for buf, y, ya, a in zip(ys, outs[ncar:], y_avals, jaxpr.out_avals[ncar:]):
        one_a = shaped_array((1, *a.shape), a.dtype)
        r = bb.emit(f"stablehlo.reshape {y} : ({tensor_type(a)}) -> {tensor_type(one_a)}")
        starts = ", ".join([idx] + [zero] * a.ndim)
        ins = ", ".join([tensor_type(ya), tensor_type(one_a)] + ["tensor<i32>"] * (a.ndim + 1))
        new_ys.append(bb.emit(f"stablehlo.dynamic_update_slice {buf}, {r}, {starts} : ({ins}) -> {tensor_type(ya)}"))
    i1 = bb.emit(f"stablehlo.add {i}, {one} : tensor<i32>")
    bind = ", ".join(f"{v} = {x}" for v, x in zip(iters, [zero, *init, *ys0]))
    types = ", ".join(tensor_type(a) for a in loop_avals)
    text = (
        f"stablehlo.while({bind}) : {types}\n    cond {cb.text([pred], [pred_aval])} "
        f"do {bb.text([i1, *outs[:ncar], *new_ys], loop_avals)}"
    )
    results = _results(ctx.emit(text, n_results=len(loop_avals)), len(loop_avals))
    return results[1:]


# -- the API ---------------------------------------------------------------------------
def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[Any, Any]:
    """JAX's ``lax.scan``: ``carry, y = f(carry, x)`` over the leading axis of ``xs``,
    returning the final carry and the stacked ``y`` s (staged as ``scan``)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = tree_util.tree_flatten(xs)
    x_avals = [get_aval(x) for x in xs_flat]
    for x, a in zip(xs_flat, x_avals):
        if a.shape == ():
            raise ValueError(f"scan got value with no leading axis to scan over: {x}")
    sizes = sorted({a.shape[0] for a in x_avals})
    if length is not None:
        length = operator.index(length)
        if any(s != length for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes {sizes}.")
    else:
        if not sizes:
            raise ValueError("scan got no values to scan over and `length` not provided.")
        if len(sizes) > 1:
            raise ValueError(f"scan got values with different leading axis sizes: {', '.join(map(str, sizes))}.")
        length = sizes[0]
    if isinstance(unroll, bool):
        unroll = max(length, 1) if unroll else 1
    elif operator.index(unroll) < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    carry, carry_tree = tree_util.tree_flatten(init)
    ncar = len(carry)

    def body(leaves: list[Any]) -> tuple[list[Any], tree_util.PyTreeDef, int]:
        c = tree_util.tree_unflatten(carry_tree, leaves[:ncar])
        x = tree_util.tree_unflatten(xs_tree, leaves[ncar:])
        out = f(c, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair (carry, y), got {out!r}.")
        c_leaves, c_tree = tree_util.tree_flatten(out[0])
        if c_tree != carry_tree:
            raise TypeError(
                "scan body function carry input and carry output must have the same pytree structure, "
                f"but they differ: input {carry_tree}, output {c_tree}."
            )
        y_leaves, y_tree = tree_util.tree_flatten(out[1])
        return c_leaves + y_leaves, y_tree, ncar

    body_j, carry, y_tree = _trace_carry_fun(
        body, carry, carry_tree, [_unstacked(a) for a in x_avals], "scan body",
        "scan body function carry input and carry output",
    )
    hoisted, consts = hoist_consts(body_j)
    n_in = len(consts) + ncar + len(xs_flat)
    outs: list[Any] = scan_p.bind(*consts, *carry, *xs_flat, **_scan_params(
        hoisted, length, bool(reverse), len(consts), ncar, (False,) * n_in, int(unroll)))
    return tree_util.tree_unflatten(carry_tree, outs[:ncar]), tree_util.tree_unflatten(y_tree, outs[ncar:])


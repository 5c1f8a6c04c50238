"""``cond``/``switch``: the ``cond`` primitive, which runs one of several branch jaxprs.

``cond[branches] index *ops`` runs ``branches[index]`` on ``ops``, with an ``int32`` scalar
index; an out-of-range index selects the last branch, as XLA's ``case`` does (``switch``
clamps it first, as JAX does). The branches are closed jaxprs without consts: closed-over
values, tracers of outer transformations included, are hoisted into leading operands
shared by all branches (docs/guide.md, "Control flow").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast, overload

import attrs
import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from fcore import tree_util
from fcore.backend.lowering import (
    TOKEN_TYPE, LoweringRuleContext, lowering_rules, ordered_token, tensor_type, threads_token,
)
from fcore.config import jit_disabled
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.trace import Tracer
from fcore.interpreters.eval import get_aval, to_numpy_arg
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array, typematch
from fcore.ir.core import ClosedJaxpr, JaxprEqn
from fcore.lax._base import ArrayLike, check_operands, const
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, tuple_param_of
from fcore.lax.control_flow.ref_carry import RefCarry, with_outer_refs
from fcore.lax.control_flow.common import (
    PeResult, RegionBlock, broadcast_leading, check_const_free, convert_outs, join_consts, pp_avals, result_names,
    stage_all, with_outvars, zeros,
)
from fcore.lax.elementwise import clamp, convert_element_type, eq, lt, ne, select_n, stop_gradient
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, is_undefined
from fcore.transforms.batching import Dim, batch_jaxpr, batching_rules, bdim_at, moveaxis
from fcore.transforms.dce import dce_jaxpr_open, dce_rules
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from fcore.transforms.transpose import transpose_jaxpr, transpose_rules


def _xla_branch(i: int, n: int) -> int:
    """XLA's ``case``: an out-of-range index selects the last branch."""
    return i if 0 <= i < n else n - 1


def _clamp_index(index: Array, n: int) -> Array:
    """An int32 index mapped into ``[0, n)`` the way XLA's ``case`` treats it."""
    lo = clamp(np.int32(0), index, np.int32(n - 1))
    last = clamp(np.int32(n - 1), index, np.int32(n - 1))
    return select_n(lt(index, np.int32(0)), lo, last)


@attrs.frozen(kw_only=True)
class CondParams:
    """``cond[branches]``: one const-free jaxpr per branch, all of the same type."""

    branches: tuple[ClosedJaxpr, ...]


cond_p = Primitive("cond", multiple_results=True, params=CondParams)
cond_p.impl_takes_arrays = True


@cond_p.def_abstract_eval
def _cond_abstract_eval(index: ShapedArray, *ops: ShapedArray, branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    if not branches:
        raise TypeError("cond requires at least one branch")
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for i, b in enumerate(branches):
        check_const_free(f"cond branch {i}", b)
        check_operands(f"cond branch {i}", ops, b.in_avals)
    outs = branches[0].out_avals
    for i, b in enumerate(branches[1:], 1):
        if len(b.out_avals) != len(outs) or not all(typematch(x, y) for x, y in zip(b.out_avals, outs)):
            raise TypeError(f"cond branch {i} returns {pp_avals(b.out_avals)} but branch 0 returns {pp_avals(outs)}")
    return [shaped_array(a.shape, a.dtype, all(b.out_avals[k].weak_type for b in branches)) for k, a in enumerate(outs)]


@cond_p.def_impl
def _cond_impl(index: ArrayLike, *ops: ArrayLike, branches: tuple[ClosedJaxpr, ...]) -> list[ArrayImpl]:
    i = _xla_branch(int(to_numpy_arg(index)[0]), len(branches))
    outs = eval_closed(branches[i], ops)
    avals = _cond_abstract_eval(get_aval(index), *[get_aval(x) for x in ops], branches=branches)
    return as_eager_results(outs, avals)


@jvp_rules.register(cond_p, symbolic_zeros=True)
def _cond_jvp(
    primals: list[Array], tangents: list[Tangent], *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Array], list[Tangent]]:
    index, *ops = primals
    ts = tangents[1:]
    nz = [type(t) is not Zero for t in ts]
    n_out = len(branches[0].out_avals)
    out_nz = [False] * n_out
    for b in branches:
        _, b_nz = jvp_jaxpr(b, nz, False)
        out_nz = [x or y for x, y in zip(out_nz, b_nz)]
    jvps = [jvp_jaxpr(b, nz, out_nz)[0] for b in branches]
    outs = _bind_cond(index, jvps, [*ops, *[t for t in ts if not isinstance(t, Zero)]])
    t_it = iter(outs[n_out:])
    avals = _cond_abstract_eval(get_aval(index), *[get_aval(o) for o in ops], branches=branches)
    touts: list[Tangent] = [next(t_it) if z else Zero(a) for z, a in zip(out_nz, avals)]
    return outs[:n_out], touts


@transpose_rules.register(cond_p)
def _cond_transpose(
    cts: list[Array], index: Array | UndefinedPrimal, *ops: Array | UndefinedPrimal, branches: tuple[ClosedJaxpr, ...]
) -> list[Array | None]:
    if isinstance(index, UndefinedPrimal):
        raise ValueError("cond cannot be transposed with respect to its index")
    linear = [is_undefined(x) for x in ops]
    transposed = [transpose_jaxpr(b, linear) for b in branches]
    nonlinear = [x for x in ops if not isinstance(x, UndefinedPrimal)]
    outs = iter(_bind_cond(index, transposed, [*nonlinear, *cts]))
    return [None] + [next(outs) if lin else None for lin in linear]


@batching_rules.register(cond_p)
def _cond_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Array], list[Dim]]:
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
    per_branch: list[list[Array]] = []
    for i, b in enumerate(branches):
        bj, _ = batch_jaxpr(b, axis_size, [0] * len(ops), [0] * n_out)
        pred = eq(index, np.int32(i))
        # Inputs of the branches not taken are cut from differentiation (JAX issue #1052).
        ops_i = [select_n(broadcast_leading(pred, get_aval(x)), stop_gradient(x), x) for x in ops]
        per_branch.append(eval_closed(bj, ops_i))
    outs = [select_n(broadcast_leading(index, get_aval(os[0])), *os) for os in zip(*per_branch)]
    return outs, [0] * n_out


@partial_eval_rules.register(cond_p)
def _cond_partial_eval(unknowns: list[bool], *, branches: tuple[ClosedJaxpr, ...]) -> PeResult:
    idx_uk, *ops_uk = unknowns
    op_avals = branches[0].in_avals
    idx_aval = shaped_array((), dtypes.int32)
    if idx_uk:
        return stage_all(cond_p, unknowns, [idx_aval, *op_avals], {"branches": branches})
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for b in branches:
        _, _, b_uk, _ = partial_eval_jaxpr(b, ops_uk, False)
        out_uk = [x or y for x, y in zip(out_uk, b_uk)]
    splits = [partial_eval_jaxpr(b, ops_uk, out_uk) for b in branches]
    n_known_out = n_out - sum(out_uk)
    if not any(out_uk):
        res_avals: list[list[ShapedArray]] = [[] for _ in splits]
        knowns = [with_outvars(k, k.jaxpr.outvars[:n_known_out]) for k, _, _, _ in splits]
    else:
        res_avals = [k.out_avals[n_known_out:] for k, _, _, _ in splits]
        knowns = [k for k, _, _, _ in splits]
    all_res = [a for avs in res_avals for a in avs]
    k_avals = [a for a, u in zip(op_avals, ops_uk) if not u]
    u_avals = [a for a, u in zip(op_avals, ops_uk) if u]

    def known_branch(i: int) -> ClosedJaxpr:
        """Branch ``i``'s known half, returning zeros for the other branches' residuals."""

        def f(*ks: Array) -> list[Array]:
            outs = eval_closed(knowns[i], ks)
            res: list[Array] = []
            for j, avs in enumerate(res_avals):
                res += outs[n_known_out:] if j == i else [zeros(a) for a in avs]
            return outs[:n_known_out] + res

        return trace_to_jaxpr(f, k_avals, "cond known branch")

    def unknown_branch(i: int) -> ClosedJaxpr:
        """Branch ``i``'s unknown half, reading its own slice of all branches' residuals."""
        start = sum(len(avs) for avs in res_avals[:i])
        mine = slice(start, start + len(res_avals[i]))

        def f(*args: Array) -> list[Array]:
            res, uks = args[: len(all_res)], args[len(all_res) :]
            return eval_closed(splits[i][1], [*res[mine], *uks])

        return trace_to_jaxpr(f, all_res + u_avals, "cond unknown branch")

    known_bs = [known_branch(i) for i in range(len(branches))]
    unknown_bs = [unknown_branch(i) for i in range(len(branches))] if any(out_uk) else []

    def known(index: Array, *ks: Array) -> list[Array]:
        outs = _bind_cond(index, known_bs, ks) if known_bs[0].out_avals else []
        if not any(out_uk):
            return outs
        return outs[:n_known_out] + [index] + outs[n_known_out:]

    def unknown(*args: Array) -> list[Array]:
        if not any(out_uk):
            return []
        index, res, uks = args[0], args[1 : 1 + len(all_res)], args[1 + len(all_res) :]
        return _bind_cond(index, unknown_bs, [*res, *uks])

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
    branches = tuple_param_of(eqn, "branches", ClosedJaxpr)
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
    if not outs and not any(b.effects for b in branches):
        return []  # nothing to compute (an effectful branch still runs)
    in_avals = ctx.avals_in[1:]
    threaded = [threads_token(b.jaxpr) for b in branches]
    token_in = ordered_token(ctx) if any(threaded) else None  # every branch returns a token then
    regions = []
    for i, (b, t) in enumerate(zip(branches, threaded)):
        sym = ctx.module.private_function(b.jaxpr, f"cond_branch{i}")
        block = RegionBlock(ctx)
        results, token_out = block.call_threaded(sym, ops, in_avals, b.out_avals, token_in if t else None)
        regions.append(block.text(results, outs, token=token_out if t else token_in))
    types = ", ".join([*(tensor_type(a) for a in outs), *([TOKEN_TYPE] if token_in is not None else [])])
    case = f'"stablehlo.case"({index}) ({", ".join(regions)}) : ({tensor_type(ctx.avals_in[0])}) -> ({types})'
    n = len(outs) + (token_in is not None)
    if not n:
        ctx.fn.lines.append(f"    {case}{ctx.fn.location}")
        return []
    names = result_names(ctx.emit(case, n_results=n), n)
    if token_in is not None:
        ctx.fn.token = names.pop()
    return names


def _bind_cond(index: ArrayLike, branches: Sequence[ClosedJaxpr], ops: Sequence[ArrayLike]) -> list[Array]:
    """Bind ``cond`` on branches that may have consts (they become shared leading operands)."""
    joined, consts = join_consts(branches)
    outs: list[Array] = cond_p.bind(index, *consts, *ops, branches=tuple(joined))
    return outs


def _trace_branches(
    funs: Sequence[Callable[..., Any]],
    labels: Sequence[str],
    what: str,
    operands: tuple[Any, ...],
) -> tuple[list[ClosedJaxpr], list[ArrayLike], tree_util.PyTreeDef]:
    """Stage each branch on the flattened ``operands``; their outputs must agree in tree
    structure and types, and are weakly typed only where every branch's is."""
    ops: list[ArrayLike]
    ops, in_tree = tree_util.tree_flatten(operands)
    avals = [get_aval(x) for x in ops]
    traced: list[tuple[ClosedJaxpr, tree_util.PyTreeDef]] = []
    for fun, label in zip(funs, labels):
        out_trees: list[tree_util.PyTreeDef] = []

        def flat(
            *leaves: Array, fun: Callable[..., Any] = fun, out_trees: list[tree_util.PyTreeDef] = out_trees
        ) -> list[ArrayLike]:
            out_leaves, tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, leaves)))
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
                f"{what} must have identical types, got\n  {label0} output: {pp_avals(a0)}\n  {label} output: {pp_avals(a)}"
            )
    weak = [all(c.out_avals[k].weak_type for c, _ in traced) for k in range(len(closed0.out_avals))]
    branches = [convert_outs(c, weak, f"cond branch {label}") for (c, _), label in zip(traced, labels)]
    return branches, ops, tree0


R = TypeVar("R")  # the branches' result
Ts = TypeVarTuple("Ts")  # the operands, as the branches take them


def cond(pred: Any, true_fun: Callable[[Unpack[Ts]], R], false_fun: Callable[[Unpack[Ts]], R], *operands: Unpack[Ts]) -> R:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as ``cond``.

    As in JAX the predicate may be a bool or integer scalar (non-zero is true), both
    branches are traced, and their outputs must have identical types and tree structure.
    """
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")

    def run(refs: RefCarry) -> R:
        if not refs.refs:
            return _cond(pred, true_fun, false_fun, *operands)
        t, f = (_branch_with_refs(fun, refs, f"cond branch {label}") for fun, label in
                ((true_fun, "true_fun"), (false_fun, "false_fun")))
        out, values = _cond(pred, t, f, operands, refs.initial_values())
        refs.write_finals(values)
        return cast(R, out)

    return with_outer_refs(run)


def _branch_with_refs(fun: Callable[..., Any], refs: RefCarry, label: str) -> Callable[[Any, list[Any]], Any]:
    """A branch taking the carried refs' values after its operands, returning their new values."""

    def branch(operands: tuple[Any, ...], values: list[Any]) -> tuple[Any, list[Any]]:
        with refs.inside(values, label) as finals:
            return fun(*operands), finals()

    return branch


def _cond(pred: Any, true_fun: Callable[..., R], false_fun: Callable[..., R], *operands: Any) -> R:
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
        pred = bool(pred) if type(pred) is int else ne(pred, const(pred, 0))
    if jit_disabled() and not isinstance(pred, Tracer):  # ``disable_jit``: Python runs one branch
        return true_fun(*operands) if pred else false_fun(*operands)
    index = convert_element_type(pred, dtypes.int32)
    branches, ops, out_tree = _trace_branches(
        [false_fun, true_fun], ["false_fun", "true_fun"], "true_fun and false_fun output", operands
    )
    return cast(R, tree_util.tree_unflatten(out_tree, _bind_cond(index, branches, ops)))


@overload
def switch(index: Any, branches: Sequence[Callable[[Unpack[Ts]], R]], *operands: Unpack[Ts]) -> R: ...


@overload  # branches mypy cannot join into one callable type (a function and a ``custom_jvp``)
def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any: ...


def switch(index: Any, branches: Sequence[Callable[[Unpack[Ts]], R]] | Sequence[Callable[..., Any]], *operands: Unpack[Ts]) -> Any:
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

    def run(refs: RefCarry) -> Any:
        if not refs.refs:
            return _switch(index, funs, *operands)
        with_refs = [_branch_with_refs(fun, refs, f"switch branch {i}") for i, fun in enumerate(funs)]
        out, values = _switch(index, with_refs, operands, refs.initial_values())
        refs.write_finals(values)
        return out

    return with_outer_refs(run)


def _switch(index: Any, funs: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    aval = get_aval(index)
    if jit_disabled() and not isinstance(index, Tracer):  # ``disable_jit``: Python picks the branch
        return funs[min(max(int(index), 0), len(funs) - 1)](*operands)
    if aval.dtype != dtypes.int32 or aval.weak_type:
        index = convert_element_type(index, dtypes.int32)
    index = clamp(np.int32(0), index, np.int32(len(funs) - 1))
    labels = [f"branch {i}" for i in range(len(funs))]
    traced, ops, out_tree = _trace_branches(funs, labels, "branch outputs", operands)
    return tree_util.tree_unflatten(out_tree, _bind_cond(index, traced, ops))

"""Loops: the ``while`` and ``scan`` primitives, ``while_loop``, ``scan`` and ``fori_loop``.

* ``while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts] *cond_consts *body_consts *carry``
  runs ``body_jaxpr`` on the carry while ``cond_jaxpr`` returns true. It has no transpose:
  reverse mode through a loop of unknown trip count is an error, as in JAX.
* ``scan[jaxpr length reverse num_consts num_carry linear unroll] *consts *carry *xs`` runs
  ``jaxpr`` ``length`` times, slicing the ``xs`` along their leading axis and stacking the
  per-iteration outputs.

The nested jaxprs have no consts: closed-over values, tracers of outer transformations
included, are hoisted into the leading const operands (docs/guide.md, "Control flow").
``fori_loop`` is a ``scan`` when its bounds are concrete (so that it is reverse-mode
differentiable) and a ``while`` otherwise, as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, SupportsInt, TypeVar, cast, overload

import attrs
import numpy as np

from fcore import tree_util
from fcore.backend.lowering import (
    TOKEN_TYPE, LoweringRuleContext, lowering_rules, ordered_token, tensor_type, threads_token,
)
from fcore.errors import ConcretizationError
from fcore.config import jit_disabled
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval, to_numpy_arg
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array, typematch
from fcore.ir.core import Atom, ClosedJaxpr, JaxprEqn
from fcore.ir.params import ParamValue
from fcore.lax._base import ArrayLike, NpArray, check_operands, const
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, hoist_consts, param_of, tuple_param_of
from fcore.lax.control_flow.common import (
    PeResult, RegionBlock, broadcast_leading, check_const_free, convert_outs, extra_inputs, fixpoint,
    permute_invars, pp_avals, result_names, split, stage_all, trace_hoisted, with_outvars, zeros,
)
from fcore.lax.control_flow.python_mode import NOT_CONCRETE, scan_in_python, while_in_python
from fcore.lax.control_flow.ref_carry import RefCarry, with_outer_refs
from fcore.lax.elementwise import add, convert_element_type, lt, select_n
from fcore.lax.reductions import reduce_or
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, has_tangent, is_undefined
from fcore.transforms.batching import Dim, batch_jaxpr, batching_rules, bdim_at, moveaxis
from fcore.transforms.dce import dce_jaxpr_open, dce_rules
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from fcore.transforms.transpose import transpose_jaxpr, transpose_rules

#: A staged loop body: ``(carry leaves, other inputs) -> (out leaves, tree of the non-carry
#: outputs, number of carry outputs)``.
CarryFun = Callable[[list[Array]], tuple[list[ArrayLike], tree_util.PyTreeDef, int]]


def _promoted_carry_dtype(init: ShapedArray, out: ShapedArray) -> np.dtype[Any]:
    """The dtype a weakly typed loop input takes to match the body's output."""
    if typematch(init, out):
        return init.dtype
    return dtypes.result_type((init.dtype, True), (out.dtype, out.weak_type))[0]


def _trace_carry_fun(
    fun: CarryFun,
    carry: list[ArrayLike],
    other_avals: Sequence[ShapedArray],
    description: str,
    what: str,
) -> tuple[ClosedJaxpr, list[ArrayLike], tree_util.PyTreeDef]:
    """Stage a loop body ``fun(leaves) -> (out_leaves, out_tree, n_carry_out)`` whose inputs are
    the carry leaves then ``other_avals``; its carry output must match the carry input.

    Returns the body (carry outputs given the carry's weak types), the carry (made strongly
    typed where the body's output is strong, as JAX's weak-type promotion of loop carries)
    and the tree of the non-carry outputs.
    """
    while True:  # each pass makes at least one weak input strong, so this ends
        avals = [get_aval(x) for x in carry]
        trees: list[tuple[tree_util.PyTreeDef, int]] = []

        def flat(*leaves: Array) -> list[ArrayLike]:
            out_leaves, tree, n = fun(list(leaves))
            trees.append((tree, n))
            return out_leaves

        closed = trace_to_jaxpr(flat, avals + list(other_avals), description)
        (extra_tree, _) = trees[0]
        outs = closed.out_avals[: len(carry)]
        # A weak input may also change dtype (a Python float carried as a float32), as in JAX.
        promote = [a.weak_type and not (b.weak_type and typematch(a, b)) for a, b in zip(avals, outs)]
        if not all(typematch(a, b) or p for a, b, p in zip(avals, outs, promote)) or not any(promote):
            break
        carry = [convert_element_type(x, _promoted_carry_dtype(a, b)) if p else x
                 for x, a, b, p in zip(carry, avals, outs, promote)]
    if not all(typematch(a, b) for a, b in zip(avals, outs)):
        raise TypeError(f"{what} must have identical types, got\n  input:  {pp_avals(avals)}\n  output: {pp_avals(outs)}")
    weak = [a.weak_type for a in avals] + [a.weak_type for a in closed.out_avals[len(carry) :]]
    return convert_outs(closed, weak, description), carry, extra_tree


# =========================================================================================
# while
# =========================================================================================
_WHILE_REVERSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
    "start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
)


@attrs.frozen(kw_only=True)
class WhileParams:
    """``while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts]``: the predicate takes the
    ``cond_nconsts`` leading operands and the carry, the body the next ``body_nconsts`` and
    the carry."""

    cond_jaxpr: ClosedJaxpr
    body_jaxpr: ClosedJaxpr
    cond_nconsts: int
    body_nconsts: int


while_p = Primitive("while", multiple_results=True, params=WhileParams)
while_p.impl_takes_arrays = True


@while_p.def_abstract_eval
def _while_abstract_eval(
    *avals: ShapedArray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
) -> list[ShapedArray]:
    check_const_free("while cond_jaxpr", cond_jaxpr)
    check_const_free("while body_jaxpr", body_jaxpr)
    cc, bc, carry = split(avals, cond_nconsts, body_nconsts)
    check_operands("while cond_jaxpr", cc + carry, cond_jaxpr.in_avals)
    check_operands("while body_jaxpr", bc + carry, body_jaxpr.in_avals)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or not dtypes.is_bool(pred[0].dtype):
        raise TypeError(f"while cond_jaxpr must return one bool scalar, got {pp_avals(pred)}")
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(typematch(o, c) for o, c in zip(outs, carry)):
        raise TypeError(f"while body_jaxpr returns {pp_avals(outs)} for a carry of type {pp_avals(carry)}")
    return outs


@while_p.def_impl
def _while_impl(*args: ArrayLike, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                body_nconsts: int) -> list[ArrayImpl]:
    cc, bc, carry = split(args, cond_nconsts, body_nconsts)
    while bool(to_numpy_arg(eval_closed(cond_jaxpr, [*cc, *carry])[0])[0]):
        carry = eval_closed(body_jaxpr, [*bc, *carry])
    avals = _while_abstract_eval(*[get_aval(x) for x in args], cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                                 cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return as_eager_results(carry, avals)


@jvp_rules.register(while_p, symbolic_zeros=True)
def _while_jvp(primals: list[Array], tangents: list[Tangent], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
               cond_nconsts: int, body_nconsts: int) -> tuple[list[Array], list[Tangent]]:
    cc, bc, carry = split(primals, cond_nconsts, body_nconsts)
    _, bc_t, carry_t = split(tangents, cond_nconsts, body_nconsts)
    carry_avals = body_jaxpr.in_avals[body_nconsts:]
    bc_nz = [type(t) is not Zero for t in bc_t]
    carry_nz = fixpoint(  # the carries with a tangent
        lambda nz: jvp_jaxpr(body_jaxpr, bc_nz + nz, nz)[1],
        [type(t) is not Zero and has_tangent(a) for t, a in zip(carry_t, carry_avals)],
    )
    body_jvp, _ = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
    hoisted, consts = hoist_consts(body_jvp)
    nh, nb, nc = len(consts), body_nconsts, len(carry)
    nbt, nct = sum(bc_nz), sum(carry_nz)
    # hoisted inputs: [consts, bc, carry, bc_t, carry_t] -> [consts, bc, bc_t, carry, carry_t]
    order = [*range(nh + nb), *range(nh + nb + nc, nh + nb + nc + nbt), *range(nh + nb, nh + nb + nc),
             *range(nh + nb + nc + nbt, nh + nb + nc + nbt + nct)]
    body_new = permute_invars(hoisted, order)
    cond_new = extra_inputs(cond_jaxpr, [a for a, z in zip(carry_avals, carry_nz) if z])
    bc_t_nz = [t for t in bc_t if not isinstance(t, Zero)]
    init_t = [zeros(a) if isinstance(t, Zero) else t for t, a, z in zip(carry_t, carry_avals, carry_nz) if z]
    outs = _bind_while_hoisted(cc, [*consts, *bc, *bc_t_nz], [*carry, *init_t], cond_new, body_new)
    t_it = iter(outs[nc:])
    touts: list[Tangent] = [next(t_it) if z else Zero(a) for z, a in zip(carry_nz, body_jaxpr.out_avals)]
    return outs[:nc], touts


@transpose_rules.register(while_p)
def _while_transpose(cts: list[Array], *args: Array | UndefinedPrimal, cond_jaxpr: ClosedJaxpr,
                     body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int) -> list[Array | None]:
    raise ValueError(_WHILE_REVERSE_ERROR)


@batching_rules.register(while_p)
def _while_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
    cond_nconsts: int, body_nconsts: int,
) -> tuple[list[Array], list[Dim]]:
    vals = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    dims = [0 if d is not None else None for d in dims]
    cc, bc, carry = split(vals, cond_nconsts, body_nconsts)
    ccd, bcd, card = split(dims, cond_nconsts, body_nconsts)

    def batched_outs(bat: list[bool]) -> list[bool]:
        _, out_d = batch_jaxpr(body_jaxpr, axis_size, bcd + [0 if b else None for b in bat])
        return [d is not None for d in out_d]

    carry_bat = fixpoint(batched_outs, [d is not None for d in card])  # the batched carries
    carry_dims: list[Dim] = [0 if b else None for b in carry_bat]
    _, (pred_d,) = batch_jaxpr(cond_jaxpr, axis_size, ccd + carry_dims)
    if pred_d is None:
        cond_b, _ = batch_jaxpr(cond_jaxpr, axis_size, ccd + carry_dims, [None])
        body_b, _ = batch_jaxpr(body_jaxpr, axis_size, bcd + carry_dims, carry_dims)
        carry = [bdim_at(x, d, axis_size, 0) if b else x for x, d, b in zip(carry, card, carry_bat)]
        return _bind_while(cond_b, body_b, cc, bc, carry), carry_dims
    # A batched predicate: every carry is batched; loop while any element's predicate holds,
    # and let the elements whose predicate is false keep their values (as JAX).
    for effect in (*cond_jaxpr.effects, *body_jaxpr.effects):
        if effect.batched_while_error is not None:
            raise ValueError(effect.batched_while_error)
    all0: list[Dim] = [0] * len(carry)
    carry = [bdim_at(x, d, axis_size, 0) for x, d in zip(carry, card)]
    cond_b, _ = batch_jaxpr(cond_jaxpr, axis_size, ccd + all0, [0])
    body_b, _ = batch_jaxpr(body_jaxpr, axis_size, bcd + all0, all0)
    cc_avals = [get_aval(x) for x in cc]
    bc_avals = [get_aval(x) for x in bc]
    carry_avals = [get_aval(x) for x in carry]

    def new_cond(*args: Array) -> list[Array]:
        (pred,) = eval_closed(cond_b, args)
        return [reduce_or(pred, (0,))]

    def new_body(*args: Array) -> list[Array]:
        c, b, x = split(args, len(cc), len(bc))
        (pred,) = eval_closed(cond_b, [*c, *x])
        new = eval_closed(body_b, [*b, *x])
        return [select_n(broadcast_leading(pred, a), old, n) for old, n, a in zip(x, new, carry_avals)]

    cond_j = trace_to_jaxpr(new_cond, cc_avals + carry_avals, "vmap(while cond)")
    body_j = trace_to_jaxpr(new_body, cc_avals + bc_avals + carry_avals, "vmap(while body)")
    return _bind_while(cond_j, body_j, cc, [*cc, *bc], carry), all0


@partial_eval_rules.register(while_p)
def _while_partial_eval(unknowns: list[bool], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                        cond_nconsts: int, body_nconsts: int) -> PeResult:
    params: dict[str, ParamValue] = {"cond_jaxpr": cond_jaxpr, "body_jaxpr": body_jaxpr,
                                     "cond_nconsts": cond_nconsts, "body_nconsts": body_nconsts}
    cc_uk, bc_uk, init_uk = split(unknowns, cond_nconsts, body_nconsts)
    in_avals = [*cond_jaxpr.in_avals[:cond_nconsts], *body_jaxpr.in_avals]
    carry_uk = fixpoint(  # the unknown carries
        lambda uk: partial_eval_jaxpr(body_jaxpr, bc_uk + uk, uk)[2], init_uk
    )
    cond_known, _, (pred_uk,), _ = partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk, False)
    if pred_uk or all(carry_uk):
        return stage_all(while_p, unknowns, in_avals, params)
    # The known carries are computed by a loop over the known part of the body; the unknown
    # ones by the whole loop, recomputing the known part (JAX's rematerialization).
    body_known, _, _, _ = partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk)
    n_known_carry = len(carry_uk) - sum(carry_uk)
    body_k = with_outvars(body_known, body_known.jaxpr.outvars[:n_known_carry])
    cond_k = with_outvars(cond_known, cond_known.jaxpr.outvars[:1])
    k_avals = [a for a, u in zip(in_avals, unknowns) if not u]
    u_avals = [a for a, u in zip(in_avals, unknowns) if u]

    def known(*ks: Array) -> list[Array]:
        k_it = iter(ks)
        full = [None if u else next(k_it) for u in unknowns]
        cc, bc, init = split(full, cond_nconsts, body_nconsts)
        kcc = [x for x, u in zip(cc, cc_uk) if x is not None and not u]
        kbc = [x for x, u in zip(bc, bc_uk) if x is not None and not u]
        kcarry = [x for x, u in zip(init, carry_uk) if x is not None and not u]
        return _bind_while(cond_k, body_k, kcc, kbc, kcarry) + list(ks)

    def unknown(*args: Array) -> list[Array]:
        res, uks = args[: len(k_avals)], args[len(k_avals) :]
        k_it, u_it = iter(res), iter(uks)
        full = [next(u_it) if u else next(k_it) for u in unknowns]
        outs: list[Array] = while_p.bind(*full, **params)
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
    cond_j = param_of(eqn, "cond_jaxpr", ClosedJaxpr)
    body_j = param_of(eqn, "body_jaxpr", ClosedJaxpr)
    ncc = param_of(eqn, "cond_nconsts", int)
    nbc = param_of(eqn, "body_nconsts", int)
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
    cc, bc, carry = split(eqn.invars, ncc, nbc)
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
    cc, bc, init = split(args, cond_nconsts, body_nconsts)
    cc_a, bc_a, carry_a = split(ctx.avals_in, cond_nconsts, body_nconsts)
    if threads_token(cond_jaxpr.jaxpr):
        return _while_lowering_effectful_cond(ctx, cc, bc, init, cc_a, bc_a, carry_a, cond_jaxpr, body_jaxpr)
    # The token of ordered effects in the body is one more loop-carried value (the last).
    token_in = ordered_token(ctx) if threads_token(body_jaxpr.jaxpr) else None
    if not init and token_in is None:
        return []
    cond_sym = ctx.module.private_function(cond_jaxpr.jaxpr, "while_cond")
    body_sym = ctx.module.private_function(body_jaxpr.jaxpr, "while_body")
    iters = [ctx.fn.fresh() for _ in init]
    token_iter = ctx.fn.fresh() if token_in is not None else None
    cb = RegionBlock(ctx)
    (pred,) = cb.call(cond_sym, [*cc, *iters], [*cc_a, *carry_a], cond_jaxpr.out_avals)
    bb = RegionBlock(ctx)
    new, token_out = bb.call_threaded(body_sym, [*bc, *iters], [*bc_a, *carry_a], body_jaxpr.out_avals, token_iter)
    bind = ", ".join(f"{i} = {x}" for i, x in zip([*iters, token_iter], [*init, token_in]) if i is not None)
    types = ", ".join([*(tensor_type(a) for a in carry_a), *([TOKEN_TYPE] if token_in is not None else [])])
    text = (
        f"stablehlo.while({bind}) : {types}\n    cond {cb.text([pred], cond_jaxpr.out_avals)} "
        f"do {bb.text(new, carry_a, token=token_out)}"
    )
    n = len(init) + (token_in is not None)
    names = result_names(ctx.emit(text, n_results=n), n)
    if token_in is not None:
        ctx.fn.token = names.pop()
    return names


def _while_lowering_effectful_cond(
    ctx: LoweringRuleContext, cc: list[str], bc: list[str], init: list[str], cc_a: list[ShapedArray],
    bc_a: list[ShapedArray], carry_a: list[ShapedArray], cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
) -> list[str]:
    """A loop whose predicate has ordered effects (as JAX lowers it): the predicate is computed
    once before the loop and again at the end of each iteration, so that its effects run in
    program order with the body's; the loop carries it, and the token, as two more values."""
    cond_sym = ctx.module.private_function(cond_jaxpr.jaxpr, "while_cond")
    body_sym = ctx.module.private_function(body_jaxpr.jaxpr, "while_body")
    pred_a = cond_jaxpr.out_avals[0]
    cond_ins = ", ".join([*(tensor_type(a) for a in [*cc_a, *carry_a]), TOKEN_TYPE])
    cond_outs = f"{tensor_type(pred_a)}, {TOKEN_TYPE}"
    first = ctx.emit(f"func.call @{cond_sym}({', '.join([*cc, *init, ordered_token(ctx)])}) : ({cond_ins}) -> ({cond_outs})", 2)
    iters = [ctx.fn.fresh() for _ in init]
    pred_iter, token_iter = ctx.fn.fresh(), ctx.fn.fresh()
    cb = RegionBlock(ctx)
    bb = RegionBlock(ctx)
    body_token = token_iter if threads_token(body_jaxpr.jaxpr) else None
    new, token_out = bb.call_threaded(body_sym, [*bc, *iters], [*bc_a, *carry_a], body_jaxpr.out_avals, body_token)
    (pred,), token_after = bb.call_threaded(cond_sym, [*cc, *new], [*cc_a, *carry_a], cond_jaxpr.out_avals,
                                            token_out or token_iter)
    assert token_after is not None
    bind = ", ".join(f"{i} = {x}" for i, x in zip([*iters, pred_iter, token_iter], [*init, f"{first}#0", f"{first}#1"]))
    types = ", ".join([*(tensor_type(a) for a in [*carry_a, pred_a]), TOKEN_TYPE])
    text = (
        f"stablehlo.while({bind}) : {types}\n    cond {cb.text([pred_iter], [pred_a])} "
        f"do {bb.text([*new, pred], [*carry_a, pred_a], token=token_after)}"
    )
    n = len(init) + 2
    names = result_names(ctx.emit(text, n_results=n), n)
    ctx.fn.token = names[-1]
    return names[: len(init)]


def _bind_while_hoisted(cond_consts: Sequence[ArrayLike], body_consts: Sequence[ArrayLike],
                        carry: Sequence[ArrayLike], cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr) -> list[Array]:
    """Bind ``while`` on const-free jaxprs."""
    outs: list[Array] = while_p.bind(
        *cond_consts, *body_consts, *carry, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts),
    )
    return outs


def _bind_while(cond_j: ClosedJaxpr, body_j: ClosedJaxpr, cc: Sequence[ArrayLike], bc: Sequence[ArrayLike],
                carry: Sequence[ArrayLike]) -> list[Array]:
    """Bind ``while`` on jaxprs that may have consts (they become leading const operands)."""
    cond_h, cond_consts = hoist_consts(cond_j)
    body_h, body_consts = hoist_consts(body_j)
    return _bind_while_hoisted([*cond_consts, *cc], [*body_consts, *bc], carry, cond_h, body_h)


T = TypeVar("T")  # a loop's carry
C = TypeVar("C")  # scan's carry
X = TypeVar("X")  # scan's xs (one slice of them per step)
Y = TypeVar("Y")  # scan's ys (one slice of them per step)


@overload
def while_loop(cond_fun: Callable[[T], ArrayLike], body_fun: Callable[[T], T], init_val: T) -> T: ...


@overload  # an initial value of Python or NumPy values, which the loop turns into arrays
def while_loop(cond_fun: Callable[[T], ArrayLike], body_fun: Callable[[T], T], init_val: object) -> T: ...


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)``, staged as ``while`` (JAX's ``lax.while_loop``);
    refs from outside used in the functions are carried (``ref_carry``)."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")

    def run(refs: RefCarry) -> Any:
        if not refs.refs:
            return _while_loop(cond_fun, body_fun, init_val)

        def cond_with_refs(carry: tuple[Any, list[Any]]) -> Any:
            with refs.inside(carry[1], "while_loop cond"):
                return cond_fun(carry[0])

        def body_with_refs(carry: tuple[Any, list[Any]]) -> tuple[Any, list[Any]]:
            with refs.inside(carry[1], "while_loop body") as finals:
                return body_fun(carry[0]), finals()

        out, values = _while_loop(cond_with_refs, body_with_refs, (init_val, refs.initial_values()))
        refs.write_finals(values)
        return out

    return with_outer_refs(run)


def _while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    if jit_disabled():
        result = while_in_python(cond_fun, body_fun, init_val)
        if result is not NOT_CONCRETE:
            return result
    init: list[ArrayLike]
    init, in_tree = tree_util.tree_flatten(init_val)

    def body(leaves: list[Array]) -> tuple[list[ArrayLike], tree_util.PyTreeDef, int]:
        out_leaves, tree = tree_util.tree_flatten(body_fun(tree_util.tree_unflatten(in_tree, leaves)))
        if tree != in_tree:
            raise TypeError(f"body_fun output and input must have same type structure, got {tree} and {in_tree}.")
        return out_leaves, tree, len(out_leaves)

    body_j, init, _ = _trace_carry_fun(body, init, [], "while_loop body", "body_fun output and input")
    avals = [get_aval(x) for x in init]

    def cond_flat(*leaves: Array) -> list[ArrayLike]:
        return tree_util.tree_leaves(cond_fun(tree_util.tree_unflatten(in_tree, leaves)))

    cond_j = trace_to_jaxpr(cond_flat, avals, "while_loop cond")
    pred = cond_j.out_avals
    if len(pred) != 1 or pred[0].shape != () or not dtypes.is_bool(pred[0].dtype):
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) {[a.str_short() for a in pred]}.")
    return tree_util.tree_unflatten(in_tree, _bind_while(cond_j, body_j, [], [], init))


# =========================================================================================
# scan
# =========================================================================================
def _stacked(aval: ShapedArray, length: int) -> ShapedArray:
    return shaped_array((length, *aval.shape), aval.dtype, aval.weak_type)


def _unstacked(aval: ShapedArray) -> ShapedArray:
    return shaped_array(aval.shape[1:], aval.dtype, aval.weak_type)


@attrs.frozen(kw_only=True)
class ScanParams:
    """``scan[jaxpr length reverse num_consts num_carry linear unroll]``: ``jaxpr`` takes the
    ``num_consts`` leading operands, the ``num_carry`` carries and one slice of each ``xs``;
    ``linear`` flags each operand, ``unroll`` is XLA's unrolling hint."""

    jaxpr: ClosedJaxpr
    length: int
    reverse: bool
    num_consts: int
    num_carry: int
    linear: tuple[bool, ...]
    unroll: int


scan_p = Primitive("scan", multiple_results=True, params=ScanParams)
scan_p.impl_takes_arrays = True


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                        num_carry: int, linear: tuple[bool, ...], unroll: int) -> list[ShapedArray]:
    check_const_free("scan jaxpr", jaxpr)
    if len(linear) != len(avals):
        raise TypeError(f"scan linear has {len(linear)} entries for {len(avals)} operands")
    if length < 0:
        raise TypeError(f"scan length must be nonnegative, got {length}")
    ins = jaxpr.in_avals
    if len(avals) != len(ins):
        raise TypeError(f"scan jaxpr takes {len(ins)} operands, got {len(avals)}")
    consts, carry, xs = split(avals, num_consts, num_carry)
    check_operands("scan consts", consts, ins[:num_consts])
    check_operands("scan carry", carry, ins[num_consts : num_consts + num_carry])
    for i, (x, want) in enumerate(zip(xs, ins[num_consts + num_carry :])):
        if x.shape != (length, *want.shape) or x.dtype != want.dtype:
            raise TypeError(f"scan xs operand {i} has type {x.str_short()}, expected {_stacked(want, length).str_short()}")
    outs = jaxpr.out_avals
    if len(outs) < num_carry or not all(typematch(o, c) for o, c in zip(outs, carry)):
        raise TypeError(f"scan jaxpr returns {pp_avals(outs[:num_carry])} for a carry of type {pp_avals(carry)}")
    return outs[:num_carry] + [_stacked(y, length) for y in outs[num_carry:]]


@scan_p.def_impl
def _scan_impl(*args: ArrayLike, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int, num_carry: int,
               linear: tuple[bool, ...], unroll: int) -> list[ArrayImpl]:
    consts, carry, xs = split(args, num_consts, num_carry)
    xs_np = [to_numpy_arg(x)[0] for x in xs]
    y_avals = jaxpr.out_avals[num_carry:]
    ys: list[list[NpArray]] = [[] for _ in y_avals]
    for k in range(length):
        i = length - 1 - k if reverse else k
        outs = eval_closed(jaxpr, [*consts, *carry, *[x[i] for x in xs_np]])
        carry = outs[:num_carry]
        for acc, y in zip(ys, outs[num_carry:]):
            acc.append(to_numpy_arg(y)[0])
    stacked: list[ArrayLike] = []
    for acc, a in zip(ys, y_avals):
        if reverse:
            acc.reverse()
        stacked.append(np.stack(acc).astype(a.dtype) if acc else np.zeros((0, *a.shape), a.dtype))
    avals = _scan_abstract_eval(*[get_aval(x) for x in args], jaxpr=jaxpr, length=length, reverse=reverse,
                                num_consts=num_consts, num_carry=num_carry, linear=linear, unroll=unroll)
    return as_eager_results([*carry, *stacked], avals)


@jvp_rules.register(scan_p, symbolic_zeros=True)
def _scan_jvp(primals: list[Array], tangents: list[Tangent], *, jaxpr: ClosedJaxpr, length: int, reverse: bool,
              num_consts: int, num_carry: int, linear: tuple[bool, ...],
              unroll: int) -> tuple[list[Array], list[Tangent]]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = split(primals, nc, ncar)
    consts_t, init_t, xs_t = split(tangents, nc, ncar)
    lin_c, lin_car, lin_x = split(linear, nc, ncar)
    carry_avals = jaxpr.in_avals[nc : nc + ncar]
    ny = len(jaxpr.out_avals) - ncar
    const_nz = [type(t) is not Zero for t in consts_t]
    xs_nz = [type(t) is not Zero for t in xs_t]
    carry_nz = fixpoint(  # the carries with a tangent
        lambda nz: jvp_jaxpr(jaxpr, const_nz + nz + xs_nz, nz + [False] * ny)[1][:ncar],
        [type(t) is not Zero and has_tangent(a) for t, a in zip(init_t, carry_avals)],
    )
    body_jvp, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
    ys_nz = out_nz[ncar:]
    hoisted, hconsts = hoist_consts(body_jvp)
    nh, nx = len(hconsts), len(xs)
    nct, ncart, nxt = sum(const_nz), sum(carry_nz), sum(xs_nz)
    # inputs [h, consts, carry, xs, consts_t, carry_t, xs_t] -> [h, consts, consts_t, carry, carry_t, xs, xs_t]
    p = nh + nc + ncar + nx
    order = [*range(nh + nc), *range(p, p + nct), *range(nh + nc, nh + nc + ncar), *range(p + nct, p + nct + ncart),
             *range(nh + nc + ncar, p), *range(p + nct + ncart, p + nct + ncart + nxt)]
    body = permute_invars(hoisted, order)
    # outputs [carry, ys, carry_t, ys_t] -> [carry, carry_t, ys, ys_t]
    outs_j = list(body.jaxpr.outvars)
    nyt = sum(ys_nz)
    outs_j = outs_j[:ncar] + outs_j[ncar + ny : ncar + ny + ncart] + outs_j[ncar : ncar + ny] + outs_j[ncar + ny + ncart :]
    assert len(outs_j) == ncar + ncart + ny + nyt
    body = ClosedJaxpr(body.jaxpr.replace(outvars=outs_j), ())
    init_tv = [zeros(a) if isinstance(t, Zero) else t for t, a, z in zip(init_t, carry_avals, carry_nz) if z]
    operands = [*hconsts, *consts, *[t for t in consts_t if not isinstance(t, Zero)], *init, *init_tv,
                *xs, *[t for t in xs_t if not isinstance(t, Zero)]]
    new_linear = (False,) * nh + (*lin_c,) + (True,) * nct + (*lin_car,) + (True,) * ncart + (*lin_x,) + (True,) * nxt
    outs = _bind_scan(operands, jaxpr=body, length=length, reverse=reverse, num_consts=nh + nc + nct,
                      num_carry=ncar + ncart, linear=new_linear, unroll=unroll)
    carry_out, carry_t_out, ys, ys_t = split(outs, ncar, ncart, ny)
    out_avals = _scan_abstract_eval(*[get_aval(x) for x in primals], jaxpr=jaxpr, length=length, reverse=reverse,
                                    num_consts=nc, num_carry=ncar, linear=linear, unroll=unroll)
    ct_it, yt_it = iter(carry_t_out), iter(ys_t)
    touts: list[Tangent] = [next(ct_it) if z else Zero(a) for z, a in zip(carry_nz, out_avals[:ncar])]
    touts += [next(yt_it) if z else Zero(a) for z, a in zip(ys_nz, out_avals[ncar:])]
    return [*carry_out, *ys], touts


@transpose_rules.register(scan_p)
def _scan_transpose(cts: list[Array], *args: Array | UndefinedPrimal, jaxpr: ClosedJaxpr, length: int,
                    reverse: bool, num_consts: int, num_carry: int, linear: tuple[bool, ...],
                    unroll: int) -> list[Array | None]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = split(args, nc, ncar)
    c_lin = [is_undefined(x) for x in consts]
    # Carries are transposed as linear even where the initial value is known (a tangent
    # carry starting from instantiated zeros, as JAX does); such an init gets no cotangent.
    init_lin = [is_undefined(x) for x in init]
    car_lin = [True] * ncar
    x_lin = [is_undefined(x) for x in xs]
    ct_carry, ct_ys = cts[:ncar], cts[ncar:]
    body_t = transpose_jaxpr(jaxpr, c_lin + car_lin + x_lin)
    c_avals, car_avals, x_avals = split(jaxpr.in_avals, nc, ncar)
    nl_c = [x for x in consts if not isinstance(x, UndefinedPrimal)]
    nl_x = [x for x in xs if not isinstance(x, UndefinedPrimal)]
    nl_c_avals = [a for a, lin in zip(c_avals, c_lin) if not lin]
    nl_x_avals = [a for a, lin in zip(x_avals, x_lin) if not lin]
    acc_avals = [a for a, lin in zip(c_avals, c_lin) if lin]  # weak consts get weak cotangents, as in JAX
    ct_car_avals = [a.strip_weak_type() for a in jaxpr.out_avals[:ncar]]
    ct_y_avals = [a.strip_weak_type() for a in jaxpr.out_avals[ncar:]]
    n_nlc, n_acc, n_nlx = len(nl_c), len(acc_avals), len(nl_x)

    def body(*a: Array) -> list[Array]:
        nlc, acc, ctc, nlx, cty = split(a, n_nlc, n_acc, ncar, n_nlx)
        outs = eval_closed(body_t, [*nlc, *nlx, *ctc, *cty])
        ct_lc, ct_car, ct_lx = split(outs, n_acc, ncar)
        sums = [convert_element_type(add(x, y), a.dtype, a.weak_type) for x, y, a in zip(acc, ct_lc, acc_avals)]
        return [*sums, *ct_car, *ct_lx]

    body_j, hconsts = trace_hoisted(body, nl_c_avals + acc_avals + ct_car_avals + nl_x_avals + ct_y_avals,
                                    "transpose(scan body)")
    acc0 = [zeros(a) for a in acc_avals]
    n_consts = len(hconsts) + n_nlc
    new_linear = (False,) * n_consts + (True,) * (n_acc + ncar) + (False,) * n_nlx + (True,) * len(ct_ys)
    outs = _bind_scan([*hconsts, *nl_c, *acc0, *ct_carry, *nl_x, *ct_ys], jaxpr=body_j, length=length,
                      reverse=not reverse, num_consts=n_consts, num_carry=n_acc + ncar, linear=new_linear,
                      unroll=unroll)
    ct_consts, ct_init, ct_xs = split(outs, n_acc, ncar)
    c_it, x_it = iter(ct_consts), iter(ct_xs)
    return ([next(c_it) if lin else None for lin in c_lin] + [c if lin else None for c, lin in zip(ct_init, init_lin)]
            + [next(x_it) if lin else None for lin in x_lin])


@batching_rules.register(scan_p)
def _scan_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, jaxpr: ClosedJaxpr, length: int,
                   reverse: bool, num_consts: int, num_carry: int, linear: tuple[bool, ...],
                   unroll: int) -> tuple[list[Array], list[Dim]]:
    nc, ncar = num_consts, num_carry
    consts, init, xs = split(vals, nc, ncar)
    cd, ind, xd = split(dims, nc, ncar)
    consts = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(consts, cd)]
    xs = [moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, xd)]
    const_dims: list[Dim] = [0 if d is not None else None for d in cd]
    xs_dims: list[Dim] = [0 if d is not None else None for d in xd]
    carry_bat = [d is not None for d in ind]
    ny = len(jaxpr.out_avals) - ncar
    while True:  # the batched carries: a fixpoint (the last pass also gives the ys' dims)
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
    outs = _bind_scan([*hconsts, *consts, *init, *xs], jaxpr=hoisted, length=length, reverse=reverse,
                      num_consts=len(hconsts) + nc, num_carry=ncar, linear=(False,) * len(hconsts) + linear,
                      unroll=unroll)
    return outs, carry_dims + [1 if d is not None else None for d in ys_dims[:ny]]


@partial_eval_rules.register(scan_p)
def _scan_partial_eval(unknowns: list[bool], *, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                       num_carry: int, linear: tuple[bool, ...], unroll: int) -> PeResult:
    nc, ncar = num_consts, num_carry
    const_uk, init_uk, xs_uk = split(unknowns, nc, ncar)
    lin_c, lin_car, lin_x = split(linear, nc, ncar)
    ny = len(jaxpr.out_avals) - ncar
    carry_uk = fixpoint(  # the unknown carries
        lambda uk: partial_eval_jaxpr(jaxpr, const_uk + uk + xs_uk, uk + [False] * ny)[2][:ncar], init_uk
    )
    known_b, unknown_b, out_uk, num_res = partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk,
                                                             carry_uk + [False] * ny)
    ys_uk = out_uk[ncar:]
    any_uk = any(out_uk)
    n_kout = len(out_uk) - sum(out_uk)
    c_avals, car_avals, x_avals = split(jaxpr.in_avals, nc, ncar)
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
    body_k = with_outvars(known_b, list(known_b.jaxpr.outvars[:n_kout]) + stacked_outs)
    body_k, hk = hoist_consts(body_k)
    res_avals = [a.aval for a in res_outs]
    k_avals = [a for a, u in zip(op_avals, unknowns) if not u]
    u_avals = [a for a, u in zip(op_avals, unknowns) if u]
    promoted = [not iu and cu for iu, cu in zip(init_uk, carry_uk)]  # known inits of unknown carries
    n_stacked = len(stacked_outs)

    def known(*ks: Array) -> list[Array]:
        k_it = iter(ks)
        full = [None if u else next(k_it) for u in unknowns]
        consts, init, xs = split(full, nc, ncar)
        kconsts = [x for x, u in zip(consts, const_uk) if x is not None and not u]
        kinit = [x for x, u in zip(init, carry_uk) if x is not None and not u]
        kxs = [x for x, u in zip(xs, xs_uk) if x is not None and not u]
        klin = ((False,) * len(hk) + tuple(x for x, u in zip(lin_c, const_uk) if not u)
                + tuple(x for x, u in zip(lin_car, carry_uk) if not u) + tuple(x for x, u in zip(lin_x, xs_uk) if not u))
        outs: list[Array] = []
        if body_k.out_avals:
            outs = _bind_scan([*hk, *kconsts, *kinit, *kxs], jaxpr=body_k, length=length, reverse=reverse,
                              num_consts=len(hk) + len(kconsts), num_carry=len(kinit), linear=klin, unroll=unroll)
        kout, stacked = outs[:n_kout], outs[n_kout:]
        if not any_uk:
            return kout
        res_vals = [kconsts[j] if kind == "const" else kxs[j] if kind == "xs" else stacked[j] for kind, j in kinds]
        return kout + [x for x, p in zip(init, promoted) if x is not None and p] + res_vals

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
        body_u = permute_invars(unknown_h, order)

    def unknown(*args: Array) -> list[Array]:
        if not any_uk:
            return []
        prom, res, uks = split(args, n_prom, len(res_outs))
        u_it = iter(uks)
        full = [next(u_it) if u else None for u in unknowns]
        consts, init, xs = split(full, nc, ncar)
        uconsts = [x for x, u in zip(consts, const_uk) if x is not None and u]
        uxs = [x for x, u in zip(xs, xs_uk) if x is not None and u]
        p_it = iter(prom)
        uinit = [x if x is not None and iu else next(p_it) for x, iu, cu in zip(init, init_uk, carry_uk) if cu]
        c_res = [res[k] for k in c_res_idx]
        x_res = [res[k] for k in s_res_idx] + [res[k] for k in x_res_idx]
        ulin = ((False,) * (nhu + len(c_res)) + tuple(x for x, u in zip(lin_c, const_uk) if u)
                + tuple(x for x, u in zip(lin_car, carry_uk) if u) + (False,) * len(x_res)
                + tuple(x for x, u in zip(lin_x, xs_uk) if u))
        return _bind_scan([*hu, *c_res, *uconsts, *uinit, *x_res, *uxs], jaxpr=body_u, length=length,
                          reverse=reverse, num_consts=nhu + len(c_res) + len(uconsts), num_carry=len(uinit),
                          linear=ulin, unroll=unroll)

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
    jaxpr = param_of(eqn, "jaxpr", ClosedJaxpr)
    nc = param_of(eqn, "num_consts", int)
    ncar = param_of(eqn, "num_carry", int)
    linear = tuple_param_of(eqn, "linear", bool)
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
    consts, init, xs = split(args, nc, ncar)
    c_avals, car_avals, xs_avals = split(ctx.avals_in, nc, ncar)
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
    # The token of ordered effects in the body is one more loop-carried value (the last).
    token_in = ordered_token(ctx) if threads_token(jaxpr.jaxpr) else None
    token_iter = ctx.fn.fresh() if token_in is not None else None
    cb = RegionBlock(ctx)
    pred_aval = shaped_array((), dtypes.bool_)
    pred = cb.emit(f"stablehlo.compare LT, {i}, {n}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
    bb = RegionBlock(ctx)
    idx = bb.emit(f"stablehlo.subtract {last}, {i} : tensor<i32>") if reverse else i
    slices = []
    for x, xa, a in zip(xs, xs_avals, jaxpr.in_avals[nc + ncar :]):
        starts = ", ".join([idx] + [zero] * a.ndim)
        sizes = ", ".join(["1", *map(str, a.shape)])
        one_a = shaped_array((1, *a.shape), a.dtype)
        ins = ", ".join([tensor_type(xa)] + ["tensor<i32>"] * (a.ndim + 1))
        s = bb.emit(f"stablehlo.dynamic_slice {x}, {starts}, sizes = [{sizes}] : ({ins}) -> {tensor_type(one_a)}")
        slices.append(bb.emit(f"stablehlo.reshape {s} : ({tensor_type(one_a)}) -> {tensor_type(a)}"))
    outs, token_out = bb.call_threaded(
        body_sym, [*consts, *carry, *slices], [*c_avals, *car_avals, *jaxpr.in_avals[nc + ncar :]], jaxpr.out_avals,
        token_iter,
    )
    new_ys = []
    for buf, y, ya, a in zip(ys, outs[ncar:], y_avals, jaxpr.out_avals[ncar:]):
        one_a = shaped_array((1, *a.shape), a.dtype)
        r = bb.emit(f"stablehlo.reshape {y} : ({tensor_type(a)}) -> {tensor_type(one_a)}")
        starts = ", ".join([idx] + [zero] * a.ndim)
        ins = ", ".join([tensor_type(ya), tensor_type(one_a)] + ["tensor<i32>"] * (a.ndim + 1))
        new_ys.append(bb.emit(f"stablehlo.dynamic_update_slice {buf}, {r}, {starts} : ({ins}) -> {tensor_type(ya)}"))
    i1 = bb.emit(f"stablehlo.add {i}, {one} : tensor<i32>")
    bind = ", ".join(f"{v} = {x}" for v, x in zip([*iters, token_iter], [zero, *init, *ys0, token_in]) if v is not None)
    types = ", ".join([*(tensor_type(a) for a in loop_avals), *([TOKEN_TYPE] if token_in is not None else [])])
    text = (
        f"stablehlo.while({bind}) : {types}\n    cond {cb.text([pred], [pred_aval])} "
        f"do {bb.text([i1, *outs[:ncar], *new_ys], loop_avals, token=token_out)}"
    )
    n_loop = len(loop_avals) + (token_in is not None)
    results = result_names(ctx.emit(text, n_results=n_loop), n_loop)
    if token_in is not None:
        ctx.fn.token = results.pop()
    return results[1:]


def _bind_scan(operands: Sequence[ArrayLike], *, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
               num_carry: int, linear: tuple[bool, ...], unroll: int) -> list[Array]:
    """Bind ``scan`` (the keywords are ``ScanParams``', checked by mypy here)."""
    outs: list[Array] = scan_p.bind(
        *operands, jaxpr=jaxpr, length=length, reverse=reverse, num_consts=num_consts, num_carry=num_carry,
        linear=linear, unroll=unroll,
    )
    return outs


@overload
def scan(
    f: Callable[[C, X], tuple[C, Y]],
    init: C,
    xs: X,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[C, Y]: ...


@overload
def scan(
    f: Callable[[C, None], tuple[C, Y]],
    init: C,
    xs: None = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[C, Y]: ...


# The carry's initial value may be Python or NumPy values that become the arrays ``f`` returns.
@overload
def scan(
    f: Callable[[C, X], tuple[C, Y]],
    init: object,
    xs: X,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[C, Y]: ...


@overload
def scan(
    f: Callable[[C, None], tuple[C, Y]],
    init: object,
    xs: None = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[C, Y]: ...


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[Any, Any]:
    """JAX's ``lax.scan``: ``carry, y = f(carry, x)`` over the leading axis of ``xs``,
    returning the final carry and the stacked ``y`` s (staged as ``scan``); refs from outside
    used in ``f`` are carried (``ref_carry``)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")

    def run(refs: RefCarry) -> tuple[Any, Any]:
        if not refs.refs:
            return _scan(f, init, xs, length, reverse, unroll)

        def f_with_refs(carry: tuple[Any, list[Any]], x: Any) -> Any:
            with refs.inside(carry[1], "scan body") as finals:
                out: object = f(carry[0], x)  # typed as a pair, but user code: checked
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    return out  # ``_scan``'s error
                return (out[0], finals()), out[1]

        (out, values), ys = _scan(f_with_refs, (init, refs.initial_values()), xs, length, reverse, unroll)
        refs.write_finals(values)
        return out, ys

    return with_outer_refs(run)


def _scan(
    f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, length: int | None, reverse: bool, unroll: int | bool
) -> tuple[Any, Any]:
    xs_flat: list[ArrayLike]
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
    if jit_disabled():
        return scan_in_python(f, init, xs, length, reverse)
    if isinstance(unroll, bool):
        unroll = max(length, 1) if unroll else 1
    elif operator.index(unroll) < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    carry: list[ArrayLike]
    carry, carry_tree = tree_util.tree_flatten(init)
    ncar = len(carry)

    def body(leaves: list[Array]) -> tuple[list[ArrayLike], tree_util.PyTreeDef, int]:
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
        body, carry, [_unstacked(a) for a in x_avals], "scan body", "scan body function carry input and carry output",
    )
    hoisted, consts = hoist_consts(body_j)
    n_in = len(consts) + ncar + len(xs_flat)
    outs = _bind_scan([*consts, *carry, *xs_flat], jaxpr=hoisted, length=length, reverse=bool(reverse),
                      num_consts=len(consts), num_carry=ncar, linear=(False,) * n_in, unroll=int(unroll))
    return tree_util.tree_unflatten(carry_tree, outs[:ncar]), tree_util.tree_unflatten(y_tree, outs[ncar:])


# =========================================================================================
# fori_loop: a scan or a while
# =========================================================================================
@overload
def fori_loop(lower: ArrayLike, upper: ArrayLike, body_fun: Callable[[Array, T], T], init_val: T,
              *, unroll: int | bool | None = None) -> T: ...


@overload  # an initial value of Python or NumPy values, which the loop turns into arrays
def fori_loop(lower: ArrayLike, upper: ArrayLike, body_fun: Callable[[Array, T], T], init_val: object,
              *, unroll: int | bool | None = None) -> T: ...


def fori_loop(lower: ArrayLike, upper: ArrayLike, body_fun: Callable[[Any, Any], Any], init_val: Any,
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
        # int() of a traced bound raises; a concrete one is a NumPy or Python number.
        lo, hi = int(cast(SupportsInt, lower)), int(cast(SupportsInt, upper))
    except ConcretizationError:
        static = False
    else:
        static = True
    if static:
        n_unroll = 1 if unroll is None or unroll is False else unroll

        def scan_body(carry: tuple[Array, Any], _: None) -> tuple[tuple[Array, Any], None]:
            i, x = carry
            return (add(i, const(i, 1)), body_fun(i, x)), None

        if jit_disabled() and hi <= lo:
            return init_val  # the Python scan of ``disable_jit`` has no zero-length form (as jax)
        (_, result), _ = scan(scan_body, (lo, init_val), None, length=max(hi - lo, 0), unroll=n_unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    if lo_aval.dtype != dtype:
        lower = convert_element_type(lower, dtype)
    if hi_aval.dtype != dtype:
        upper = convert_element_type(upper, dtype)

    def cond_fun(c: tuple[Array, Array, Any]) -> Array:
        return lt(c[0], c[1])

    def body(c: tuple[Array, Array, Any]) -> tuple[Array, Array, Any]:
        i, u, x = c
        return add(i, const(i, 1)), u, body_fun(i, x)

    _, _, result = while_loop(cond_fun, body, (lower, upper, init_val))
    return result

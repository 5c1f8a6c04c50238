"""``checkpoint``/``remat``: the ``remat2`` primitive, JAX's name (docs/guide.md, "Checkpointing").

``remat2[jaxpr prevent_cse differentiated policy] *args`` computes ``jaxpr`` (const-free;
closed-over values are hoisted into leading operands, as for ``jit``). What makes it more
than a call is its partial-evaluation rule (JAX's ``remat_partial_eval``): when part of
its inputs are unknown (the tangents, under ``linearize``/``grad``), the known half only
computes the known outputs and saves as residuals the known inputs plus the values the
``policy`` allows (none when ``policy`` is None); the unknown half is one ``remat2``
equation (``differentiated=True``) that recomputes every other known value it needs from
those residuals. Transposing it transposes its jaxpr, so the recomputation also lands
inside the transposed ``remat2``. Lowering puts the operands of a differentiated
``remat2`` behind an optimization barrier when ``prevent_cse`` is set, so that XLA does not
merge the recomputation with the forward pass.

Policies are parameter values: ``EverythingSaveable()``, ``NothingSaveable()``,
``DotsSaveable(only_if_no_batch_dims=...)``, or a user function wrapped in
``CallablePolicy`` (compared by identity). A policy sees each equation of the known half
(nested ``jit`` calls inlined) as JAX's do: ``policy(prim, *in_avals, **params) -> bool``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import attrs

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Var
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.parser import register_param_struct
from fcore.ir.primitive import Primitive as IrPrimitive
from fcore.lax._base import ArrayLike, NpArray, check_operands
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, hoist_consts, lower_call, param_of
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, is_undefined
from fcore.transforms.batching import Dim, batch_jaxpr, batching_rules
from fcore.transforms.dce import dce_jaxpr_open, dce_rules
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from fcore.transforms.simplify import inline_calls
from fcore.transforms.transpose import transpose_jaxpr, transpose_rules
from fcore.transforms.util import verified

__all__ = [
    "SavePolicy",
    "EverythingSaveable",
    "NothingSaveable",
    "DotsSaveable",
    "CallablePolicy",
    "as_policy",
    "Recompute",
    "Saveable",
    "Offloadable",
    "SaveNames",
    "EitherSaves",
    "saves",
    "name_p",
    "checkpoint_name",
    "RematParams",
    "remat_p",
    "bind_remat",
]


# =========================================================================================
# Policies
# =========================================================================================
class SavePolicy(ParamStruct):
    """Which values of a checkpointed function differentiation may keep as residuals."""

    __slots__ = ()

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        raise NotImplementedError

    def __call__(self, prim: IrPrimitive, *avals: ShapedArray, **params: ParamValue) -> bool:
        """JAX's calling convention for policies."""
        return self.saveable(prim, avals, params)


@register_param_struct
@attrs.frozen(slots=True)
class EverythingSaveable(SavePolicy):
    """Save every value: differentiation as without ``checkpoint``."""

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        return True


@register_param_struct
@attrs.frozen(slots=True)
class NothingSaveable(SavePolicy):
    """Save nothing but the inputs: recompute everything (what ``policy=None`` means)."""

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        return False


@register_param_struct
@attrs.frozen(slots=True)
class DotsSaveable(SavePolicy):
    """Save the results of matrix multiplications (``dot_general``), optionally only those
    without batch dimensions; recompute the rest."""

    only_if_no_batch_dims: bool

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        if prim.name != "dot_general":
            return False
        if not self.only_if_no_batch_dims:
            return True
        dims = params["dimension_numbers"]  # ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
        assert isinstance(dims, tuple) and isinstance(dims[1], tuple), dims
        return not any(dims[1])


class CallablePolicy(SavePolicy):
    """A user's policy function ``fun(prim, *avals, **params) -> bool`` (compared by identity)."""

    __slots__ = ("fun",)

    def __init__(self, fun: Callable[..., bool]) -> None:
        if not callable(fun):
            raise TypeError(f"a checkpoint policy must be callable, got {fun!r}")
        self.fun = fun

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        return saves(self.fun(prim, *avals, **params))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallablePolicy) and self.fun is other.fun

    def __hash__(self) -> int:
        return id(self.fun)

    def __repr__(self) -> str:
        return f"CallablePolicy({getattr(self.fun, '__name__', type(self.fun).__name__)})"


class RecomputeType:
    """The type of ``Recompute``: a policy's answer "do not save this value"."""

    __slots__ = ()


class SaveableType:
    """The type of ``Saveable``: a policy's answer "save this value"."""

    __slots__ = ()


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """A policy's answer "save this value in memory ``dst``"; fcore runs on one memory space
    (host CPU), so an offloaded value is simply saved."""

    src: str
    dst: str


PolicyAnswer = bool | RecomputeType | SaveableType | Offloadable


def saves(answer: PolicyAnswer) -> bool:
    """Whether a policy's answer keeps the value (``Offloadable`` keeps it: one memory space)."""
    if isinstance(answer, (SaveableType, Offloadable)):
        return True
    if isinstance(answer, RecomputeType):
        return False
    return bool(answer)


@register_param_struct
@attrs.frozen(slots=True)
class SaveNames(SavePolicy):
    """Save only the values named by ``checkpoint_name``: those in ``names`` (``exclude=False``,
    JAX's ``save_only_these_names``) or all but those (``exclude=True``,
    ``save_any_names_but_these``)."""

    names: tuple[str, ...]
    exclude: bool

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        if prim is not name_p:
            return False
        return (params["name"] in self.names) != self.exclude


@register_param_struct
@attrs.frozen(slots=True)
class EitherSaves(SavePolicy):
    """Save what either policy saves (``save_from_both_policies``)."""

    first: SavePolicy
    second: SavePolicy

    def saveable(self, prim: IrPrimitive, avals: Sequence[ShapedArray], params: Mapping[str, ParamValue]) -> bool:
        return self.first.saveable(prim, avals, params) or self.second.saveable(prim, avals, params)


def as_policy(policy: Callable[..., bool] | None) -> SavePolicy | None:
    """A policy parameter value for ``checkpoint(..., policy=...)``."""
    if policy is None or isinstance(policy, SavePolicy):
        return policy
    return CallablePolicy(policy)


# =========================================================================================
# name: checkpoint_name's identity, which name policies look for
# =========================================================================================
@attrs.frozen(kw_only=True)
class NameParams:
    """``name[name]``: the label ``checkpoint_name`` gives a value."""

    name: str


name_p = Primitive("name", params=NameParams)


@name_p.def_abstract_eval
def _name_abstract_eval(x: ShapedArray, *, name: str) -> ShapedArray:
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name's name must be a str, got {name!r}")
    return x


@name_p.def_impl
def _name_impl(x: NpArray, *, name: str) -> NpArray:
    return x


@jvp_rules.register(name_p, symbolic_zeros=True)
def _name_jvp(primals: list[Array], tangents: list[Tangent], *, name: str) -> tuple[Array, Tangent]:
    (x,), (t,) = primals, tangents
    out: Array = name_p.bind(x, name=name)
    return out, t  # the tangent is not named, as in JAX


@batching_rules.register(name_p)
def _name_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, name: str) -> tuple[Array, Dim]:
    out: Array = name_p.bind(vals[0], name=name)
    return out, dims[0]


@lowering_rules.register(name_p)
def _name_lowering(ctx: LoweringRuleContext, x: str, *, name: str) -> str:
    return x


def checkpoint_name(x: ArrayLike, name: str) -> Array:
    """``x``, labelled ``name`` for the name policies of ``checkpoint`` (one array; the
    pytree version is ``fcore.ad_checkpoint.checkpoint_name``)."""
    out: Array = name_p.bind(x, name=name)
    return out


# =========================================================================================
# remat2
# =========================================================================================
def _saved_by_policy(known: ClosedJaxpr, policy: SavePolicy | None) -> tuple[ClosedJaxpr, list[Var]]:
    """The known half (nested calls inlined when a policy looks at equations) and the
    outputs of the equations ``policy`` saves."""
    if policy is None or isinstance(policy, NothingSaveable):
        return known, []
    known = inline_calls(known)
    saved = [
        v for e in known.jaxpr.eqns
        if policy.saveable(e.primitive, [a.aval for a in e.invars], e.params) for v in e.outvars
    ]
    return known, saved


def _recompute_jaxpr(known: Jaxpr, saved: Sequence[Var], residuals: Sequence[Atom]) -> tuple[Jaxpr, list[bool]]:
    """``(known inputs, saved values) -> residuals`` without the saving equations; returns
    it with its unused inputs pruned and the mask of those it uses."""
    saved_ids = {id(v) for v in saved}
    eqns = tuple(e for e in known.eqns if not any(id(v) in saved_ids for v in e.outvars))
    jaxpr = Jaxpr(known.constvars, known.invars + tuple(saved), tuple(residuals), eqns)
    return dce_jaxpr_open(jaxpr, [True] * len(residuals))


@attrs.frozen(kw_only=True)
class RematParams:
    """``remat2[jaxpr prevent_cse differentiated policy]`` (module docstring)."""

    jaxpr: ClosedJaxpr
    prevent_cse: bool
    differentiated: bool
    policy: SavePolicy | None


remat_p = Primitive("remat2", multiple_results=True, params=RematParams)
remat_p.impl_takes_arrays = True


@remat_p.def_abstract_eval
def _remat_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                         policy: SavePolicy | None) -> list[ShapedArray]:
    if jaxpr.jaxpr.constvars or jaxpr.consts:
        raise TypeError("remat2's jaxpr must be a closed jaxpr without consts (hoist them into operands)")
    if not isinstance(prevent_cse, bool) or not isinstance(differentiated, bool):
        raise TypeError("remat2's prevent_cse and differentiated must be bools")
    if policy is not None and not isinstance(policy, SavePolicy):
        raise TypeError(f"remat2's policy must be None or a SavePolicy, got {policy!r}")
    check_operands("remat2", avals, jaxpr.in_avals)
    return jaxpr.out_avals


@remat_p.def_impl
def _remat_impl(*args: ArrayLike, jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                policy: SavePolicy | None) -> list[ArrayImpl]:
    return as_eager_results(eval_closed(jaxpr, args), jaxpr.out_avals)


@jvp_rules.register(remat_p, symbolic_zeros=True)
def _remat_jvp(primals: list[Array], tangents: list[Tangent], *, jaxpr: ClosedJaxpr, prevent_cse: bool,
               differentiated: bool, policy: SavePolicy | None) -> tuple[list[Array], list[Tangent]]:
    nonzeros = [type(t) is not Zero for t in tangents]
    jvp, out_nz = jvp_jaxpr(jaxpr, nonzeros, False)
    outs = bind_remat(jvp, [*primals, *[t for t in tangents if not isinstance(t, Zero)]],
                      prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
    n = len(jaxpr.out_avals)
    t_it = iter(outs[n:])
    return outs[:n], [next(t_it) if nz else Zero(a) for nz, a in zip(out_nz, jaxpr.out_avals)]


@transpose_rules.register(remat_p)
def _remat_transpose(cts: list[Array], *invals: Array | UndefinedPrimal, jaxpr: ClosedJaxpr, prevent_cse: bool,
                     differentiated: bool, policy: SavePolicy | None) -> list[Array | None]:
    linear = [is_undefined(x) for x in invals]
    transposed = transpose_jaxpr(jaxpr, linear)
    nonlinear = [x for x in invals if not isinstance(x, UndefinedPrimal)]
    outs = iter(bind_remat(transposed, [*nonlinear, *cts], prevent_cse=prevent_cse,
                           differentiated=differentiated, policy=policy))
    return [next(outs) if lin else None for lin in linear]


@batching_rules.register(remat_p)
def _remat_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, jaxpr: ClosedJaxpr, prevent_cse: bool,
                    differentiated: bool, policy: SavePolicy | None) -> tuple[list[Array], list[Dim]]:
    batched, out_dims = batch_jaxpr(jaxpr, axis_size, dims)
    outs = bind_remat(batched, vals, prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
    return outs, out_dims


@partial_eval_rules.register(remat_p)
def _remat_partial_eval(unknowns: list[bool], *, jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                        policy: SavePolicy | None) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """Save the inputs (and what the policy allows), recompute the rest (module docstring)."""
    known_j, unknown_j, out_unknowns, _ = partial_eval_jaxpr(jaxpr, unknowns, False)
    n_known_out = len(out_unknowns) - sum(out_unknowns)
    known_j, saved = _saved_by_policy(known_j, policy)
    k = known_j.jaxpr
    residuals = k.outvars[n_known_out:] if any(out_unknowns) else ()
    recompute, used = _recompute_jaxpr(k, saved, residuals)
    res_vars = [v for v, u in zip(k.invars + tuple(saved), used) if u]
    recompute_ids = {id(v) for v in recompute.constvars}
    recompute_consts = tuple(c for v, c in zip(k.constvars, known_j.consts) if id(v) in recompute_ids)

    # The known half: the known outputs, and the residuals (inputs and saved values) as is.
    outs = list(k.outvars[:n_known_out]) + res_vars
    pruned, _ = dce_jaxpr_open(k.replace(outvars=tuple(outs)), [True] * len(outs), prune_inputs=False)
    kept = {id(v) for v in pruned.constvars}
    known_consts = tuple(c for v, c in zip(k.constvars, known_j.consts) if id(v) in kept)
    known_half = verified(ClosedJaxpr(pruned, known_consts))

    # The unknown half: one remat2 equation recomputing the residuals of the plain split.
    res_avals = [v.aval for v in res_vars]
    unknown_avals = [a for a, u in zip(jaxpr.in_avals, unknowns) if u]

    def body(*args: Array) -> list[Array]:
        residuals = eval_closed(ClosedJaxpr(recompute, recompute_consts), args[: len(res_vars)])
        return eval_closed(unknown_j, [*residuals, *args[len(res_vars):]])

    def unknown(*args: Array) -> list[Array]:
        if not any(out_unknowns):
            return []
        inner = trace_to_jaxpr(body, [*res_avals, *unknown_avals], "checkpoint (rematerialized)")
        return bind_remat(inner, args, prevent_cse=prevent_cse, differentiated=True, policy=policy)

    unknown_half = trace_to_jaxpr(unknown, [*res_avals, *unknown_avals], "partial_eval(remat2)")
    return known_half, unknown_half, out_unknowns, len(res_vars)


@dce_rules.register(remat_p)
def _remat_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    closed = param_of(eqn, "jaxpr", ClosedJaxpr)
    new, used_inputs = dce_jaxpr_open(closed.jaxpr, used_outputs)
    invars = tuple(a for a, u in zip(eqn.invars, used_inputs) if u)
    outvars = tuple(v for v, u in zip(eqn.outvars, used_outputs) if u)
    params = eqn.params.replace(jaxpr=ClosedJaxpr(new, ()))
    return used_inputs, eqn.replace(invars=invars, outvars=outvars, params=params)


@lowering_rules.register(remat_p)
def _remat_lowering(ctx: LoweringRuleContext, *args: str, jaxpr: ClosedJaxpr, prevent_cse: bool,
                    differentiated: bool, policy: SavePolicy | None) -> list[str]:
    operands = list(args)
    if differentiated and prevent_cse and operands:
        types = ", ".join(tensor_type(a) for a in ctx.avals_in)
        barrier = ctx.emit(f"stablehlo.optimization_barrier {', '.join(operands)} : {types}", n_results=len(operands))
        operands = [barrier] if len(operands) == 1 else [f"{barrier}#{i}" for i in range(len(operands))]
    return lower_call(ctx, operands, jaxpr, "checkpoint")


def bind_remat(closed: ClosedJaxpr, args: Sequence[ArrayLike], *, prevent_cse: bool, differentiated: bool,
               policy: SavePolicy | None) -> list[Array]:
    """Bind ``remat2`` on ``closed`` (its consts hoisted into leading operands)."""
    hoisted, consts = hoist_consts(closed)
    outs: list[Array] = remat_p.bind(
        *consts, *args, jaxpr=hoisted, prevent_cse=prevent_cse, differentiated=differentiated, policy=policy
    )
    return outs

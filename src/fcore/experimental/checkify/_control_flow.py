"""Checkify rules of the higher-order primitives: the equation is bound again on checkified
copies of its jaxprs, which take the error's leaves as extra operands and return them as
extra results (as JAX's ``checkify`` does for ``jit``, ``cond``, ``while``, ``scan``, ``remat``
and the custom-derivative calls).

Branches and loop bodies must carry error values of one type, so each is first checkified
once to learn which error effects it can raise; the incoming error gets a never-failing slot
for each (``add_placeholder_effects``) and the jaxprs are checkified again on that. The codes
of the checks in a later branch follow those of the earlier ones (each branch starts from the
metadata the previous one ended with), so no two checks share a code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import fcore.numpy as fnp
from fcore import tree_util
from fcore.api.staging import abstractify
from fcore.experimental.checkify._errors import Error, ErrorEffect
from fcore.experimental.checkify._primitive import add_placeholder_effects
from fcore.experimental.checkify._transform import (
    Enabled,
    ErrorFun,
    checkify_fun,
    checkify_jaxpr,
    checkify_rules,
    jaxpr_fun,
    split_error,
)
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, JaxprEqn
from fcore.ir.params import ParamValue
from fcore.lax import stop_gradient
from fcore.lax.call import bind_jit, eval_closed, hoist_consts, jit_p
from fcore.lax.control_flow.common import join_consts
from fcore.lax.control_flow.conditionals import cond_p
from fcore.lax.control_flow.loops import scan_p, while_p
from fcore.lax.custom_derivatives import CustomBwd, custom_jvp_call_p, custom_vjp_call_p
from fcore.lax.remat import remat_p
from fcore.lax.traced_rules import LazyJaxpr


def _leaves(error: Error) -> list[Any]:
    return tree_util.tree_flatten(error)[0]


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    return [abstractify(x) for x in xs]


def _closed(eqn: JaxprEqn, name: str) -> ClosedJaxpr:
    p = eqn.params[name]
    assert isinstance(p, ClosedJaxpr)
    return p


def _int(eqn: JaxprEqn, name: str) -> int:
    p = eqn.params[name]
    assert isinstance(p, int)
    return p


def _merged_error(funs: Sequence[ErrorFun], error: Error, avals: Sequence[ShapedArray], n_before: int = 0) -> Error:
    """``error`` with a slot for every effect that one of ``funs`` can raise."""
    effects: set[ErrorEffect] = set()
    metadata = error._metadata
    for fun in funs:
        _, out = checkify_fun(fun, error.with_metadata(metadata), avals, n_before)
        effects.update(out.effects())
        metadata = out._metadata
    return add_placeholder_effects(error, sorted(effects, key=ErrorEffect.sort_key))


@checkify_rules.register(jit_p)
def _jit_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    closed, out_error = checkify_fun(jaxpr_fun(_closed(eqn, "jaxpr"), enabled), error, _avals(args))
    name = eqn.params["name"]
    assert isinstance(name, str)
    return split_error(out_error, bind_jit(closed, [*_leaves(error), *args], name))


@checkify_rules.register(remat_p)
def _remat_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    closed, out_error = checkify_fun(jaxpr_fun(_closed(eqn, "jaxpr"), enabled), error, _avals(args))
    hoisted, consts = hoist_consts(closed)
    params = eqn.params.replace(jaxpr=hoisted)
    return split_error(out_error, remat_p.bind(*consts, *_leaves(error), *args, **params))


@checkify_rules.register(cond_p)
def _cond_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    index, *ops = args
    branches = eqn.params["branches"]
    assert isinstance(branches, tuple)
    funs = [jaxpr_fun(b, enabled) for b in branches if isinstance(b, ClosedJaxpr)]
    avals = _avals(ops)
    merged = _merged_error(funs, error, avals)
    new_branches: list[ClosedJaxpr] = []
    out_error = merged
    for fun in funs:
        closed, out_error = checkify_fun(fun, merged.with_metadata(out_error._metadata), avals)
        new_branches.append(closed)
    joined, consts = join_consts(new_branches)
    outs = cond_p.bind(index, *consts, *_leaves(merged), *ops, branches=tuple(joined))
    return split_error(out_error, outs)


@checkify_rules.register(while_p)
def _while_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    cond_j, body_j = _closed(eqn, "cond_jaxpr"), _closed(eqn, "body_jaxpr")
    cn, bn = _int(eqn, "cond_nconsts"), _int(eqn, "body_nconsts")
    c_consts, b_consts, carry = args[:cn], args[cn : cn + bn], args[cn + bn :]
    # The first evaluation of the predicate, then each body followed by the next predicate.
    error, _ = checkify_jaxpr(cond_j.jaxpr, cond_j.consts, enabled, error, [*c_consts, *carry])

    def body(err: Error, vals: list[Any]) -> tuple[Error, list[Any]]:
        cc, bc, cr = vals[:cn], vals[cn : cn + bn], vals[cn + bn :]
        err, out = checkify_jaxpr(body_j.jaxpr, body_j.consts, enabled, err, [*bc, *cr])
        err, _ = checkify_jaxpr(cond_j.jaxpr, cond_j.consts, enabled, err, [*cc, *out])
        return err, out

    def cond(err: Error, vals: list[Any]) -> tuple[Error, list[Any]]:
        return checkify_jaxpr(cond_j.jaxpr, cond_j.consts, enabled, err, vals)

    body_avals = _avals([*c_consts, *b_consts, *carry])
    merged = _merged_error([body], error, body_avals, cn + bn)
    body_closed, out_error = checkify_fun(body, merged, body_avals, cn + bn)
    cond_closed, _ = checkify_fun(cond, merged, _avals([*c_consts, *carry]), cn, keep_error=False)
    body_h, body_consts = hoist_consts(body_closed)
    cond_h, cond_consts = hoist_consts(cond_closed)
    outs = while_p.bind(
        *cond_consts, *c_consts, *body_consts, *c_consts, *b_consts, *_leaves(merged), *carry,
        cond_jaxpr=cond_h, body_jaxpr=body_h, cond_nconsts=len(cond_consts) + cn,
        body_nconsts=len(body_consts) + cn + bn,
    )
    return split_error(out_error, outs)


@checkify_rules.register(scan_p)
def _scan_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    nc, ncarry = _int(eqn, "num_consts"), _int(eqn, "num_carry")
    linear = eqn.params["linear"]
    assert isinstance(linear, tuple)
    fun = jaxpr_fun(_closed(eqn, "jaxpr"), enabled)
    avals = _avals(args)
    n_in = nc + ncarry
    avals = [*avals[:n_in], *(ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in avals[n_in:])]
    merged = _merged_error([fun], error, avals, nc)
    closed, out_error = checkify_fun(fun, merged, avals, nc)
    hoisted, consts = hoist_consts(closed)
    n_err = len(_leaves(merged))
    params = eqn.params.replace(
        jaxpr=hoisted, num_consts=len(consts) + nc, num_carry=n_err + ncarry,
        linear=(False,) * len(consts) + linear[:nc] + (False,) * n_err + linear[nc:],
    )
    outs = scan_p.bind(*consts, *args[:nc], *_leaves(merged), *args[nc:], **params)
    return split_error(out_error, outs)


def _custom_call_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    """The body of a ``custom_jvp``/``custom_vjp`` function is checkified; its error leaves are
    leading (closure) operands and leading results. Its derivative rule is not checked (as in
    JAX): under differentiation the error passes through the rule unchanged."""
    call = _closed(eqn, "call_jaxpr")
    nconsts = _int(eqn, "num_consts")
    closed, out_error = checkify_fun(jaxpr_fun(call, enabled), error, _avals(args))
    if out_error._metadata == error._metadata:  # no check inside: the call stays as it is
        outs = eqn.primitive.bind(*args, **eqn.params)
        return error, list(outs)
    merged = add_placeholder_effects(error, out_error.effects())  # the rule's error: in and out alike
    closed, out_error = checkify_fun(jaxpr_fun(call, enabled), merged, _avals(args))
    hoisted, consts = hoist_consts(closed)
    # The error enters as closure operands, which a custom rule may not differentiate; its
    # payloads only format messages, so no derivative flows through them.
    leaves = [stop_gradient(x) for x in _leaves(merged)]
    n_lead = len(consts) + len(leaves)
    n_out = len(call.out_avals)
    rule_name = "jvp" if eqn.primitive is custom_jvp_call_p else "fwd"
    rule = eqn.params[rule_name]
    assert isinstance(rule, LazyJaxpr)

    def forward_error(old: ClosedJaxpr) -> ClosedJaxpr:
        """The rule over the new leading operands: the error comes out as it went in."""
        lead_avals = [*_avals(consts), *(abstractify(x) for x in leaves)]

        def fun(*vals: Any) -> list[Any]:
            lead, rest = vals[:n_lead], vals[n_lead:]
            err = list(lead[len(consts) :])
            outs = eval_closed(old, list(rest))
            if eqn.primitive is custom_jvp_call_p:
                return [*err, *outs[:n_out], *(fnp.zeros_like(e) for e in err), *outs[n_out:]]
            return [*err, *outs]

        return trace_to_jaxpr(fun, [*lead_avals, *old.in_avals], "checkify rule")

    replaced: dict[str, ParamValue] = {rule_name: rule.derive(forward_error)}
    if eqn.primitive is custom_vjp_call_p:
        bwd = eqn.params["bwd"]
        assert isinstance(bwd, CustomBwd)
        replaced["bwd"] = _bwd_ignoring_error(bwd, n_lead, _avals(leaves))
    params = eqn.params.replace(call_jaxpr=hoisted, num_consts=nconsts + n_lead, **replaced)
    outs = eqn.primitive.bind(*consts, *leaves, *args, **params)
    return split_error(out_error, outs)


def _bwd_ignoring_error(bwd: CustomBwd, n_lead: int, error_avals: Sequence[ShapedArray]) -> CustomBwd:
    """``bwd`` of the checkified call: the leading residuals (the hoisted constants and the
    error leaves) and the error's cotangents are not the user's."""
    n_err = len(error_avals)

    def fun(res: Sequence[Any], cts: Sequence[Any]) -> Any:
        return bwd.fun(list(res[n_lead:]), list(cts[n_err:]))

    return CustomBwd(bwd.name, fun, [*error_avals, *bwd.out_avals])


checkify_rules.register(custom_jvp_call_p)(_custom_call_rule)
checkify_rules.register(custom_vjp_call_p)(_custom_call_rule)

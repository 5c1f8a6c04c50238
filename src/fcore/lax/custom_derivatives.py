"""Custom derivative rules as higher-order primitives (docs/guide.md, "Custom derivatives").

* ``custom_jvp_call[call_jaxpr jvp num_consts symbolic_zeros name] *consts *args`` computes
  ``call_jaxpr`` (the function's body; values it closes over are hoisted into the leading
  ``num_consts`` operands, as for ``jit``). Its jvp rule evaluates ``jvp``, the user's rule
  traced to a jaxpr ``(consts, args, arg tangents) -> (outs, out tangents)``.
* ``custom_vjp_call[call_jaxpr fwd bwd num_consts symbolic_zeros name] *consts *args``
  likewise; its jvp rule evaluates ``fwd`` (``(consts, args) -> (outs, residuals)``) and
  binds ``custom_lin`` on the consts, residuals and tangents.
* ``custom_lin[num_res bwd] *residuals *tangents``: the linear map of a ``custom_vjp`` call,
  transposed by the user's ``bwd`` (a Python function: such equations do not parse either).
  It has no forward evaluation: forward-mode differentiation of a ``custom_vjp`` function
  is an error, as in JAX.

The rule jaxprs are traced on first use (``fcore.lax.traced_rules.LazyJaxpr``), so these
equations do not parse back from text; transformations of a call derive new lazy rules
from the old ones (batched, dead-code eliminated). A rule jaxpr takes the call's operands,
closure operands included, and the ``bwd`` runs with its closure standing for the
closure operands as they are then (``traced_rules.with_closure``).

Derivatives with respect to the hoisted closure operands are refused (JAX refuses them
too): the rule only says how the function depends on its explicit arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from fcore.backend.lowering import LoweringError, LoweringRuleContext, lowering_rules
from fcore.errors import FcoreError
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.stack import current_trace, trace_scope
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, JaxprEqn
from fcore.ir.params import ByIdentity
from fcore.lax._base import ArrayLike, check_operands
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, lower_call, param_of
from fcore.lax.reductions import reduce_sum
from fcore.lax.traced_rules import LazyJaxpr
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate, is_undefined
from fcore.transforms.batching import BatchTrace, BatchTracer, Dim, batch_jaxpr, batching_rules, bdim_at
from fcore.transforms.dce import dce_jaxpr_open, dce_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import backward_pass, transpose_rules
from fcore.transforms.util import verified

__all__ = [
    "CustomBwd",
    "ClosureDifferentiationError",
    "ForwardModeError",
    "custom_jvp_call_p",
    "custom_vjp_call_p",
    "custom_lin_p",
]


# =========================================================================================
# Parameter values and errors
# =========================================================================================
#: ``bwd(residuals, out_cotangents) -> in_cotangents`` on flat lists; ``None`` is a zero.
FlatBwd = Callable[[Sequence[Array], Sequence[Array]], list[Array | None]]


class CustomBwd(ByIdentity):
    """The user's ``bwd`` as a flat function, with the avals of the function's outputs (the
    types of the tangents ``custom_lin`` produces). Compared by identity; prints as its name."""

    __slots__ = ("fun", "out_avals")
    what = "custom bwd rule"

    def __init__(self, name: str, fun: FlatBwd, out_avals: Sequence[ShapedArray]) -> None:
        super().__init__(name)
        self.fun = fun
        self.out_avals = tuple(out_avals)


class ClosureDifferentiationError(FcoreError, TypeError):
    """A custom-derivative function was differentiated with respect to a value it closes over."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(
            f"Detected differentiation of a {kind} function ({name}) with respect to a closed-over value. "
            f"That isn't supported because the custom rule only specifies how to differentiate the {kind} "
            "function with respect to explicit input parameters. Try passing the closed-over value into "
            f"the {kind} function as an argument, and adapting the custom rule."
        )


class ForwardModeError(FcoreError, TypeError):
    """Forward-mode differentiation (jvp) of a ``custom_vjp`` function, which has no jvp rule."""

    def __init__(self, bwd: CustomBwd) -> None:
        super().__init__(
            f"can't apply forward-mode autodiff (jvp) to a custom_vjp function ({bwd.name}); "
            "use grad/vjp, or define the derivative with custom_jvp instead"
        )


class _ForwardModeLoweringError(LoweringError, TypeError):
    """``ForwardModeError`` met while compiling (lowering errors pass through unwrapped)."""


# =========================================================================================
# Helpers shared by the two calls
# =========================================================================================
def _check_rule(what: str, rule: object) -> None:
    if not isinstance(rule, LazyJaxpr):
        raise TypeError(
            f"{what} must be a traced custom rule, got {rule!r} (custom rules are Python functions, "
            "which jaxpr text cannot carry)"
        )


def _call_abstract_eval(what: str, avals: Sequence[ShapedArray], call_jaxpr: ClosedJaxpr) -> list[ShapedArray]:
    if call_jaxpr.jaxpr.constvars or call_jaxpr.consts:
        raise TypeError(f"{what} call_jaxpr must be a closed jaxpr without consts (hoist them into operands)")
    check_operands(what, avals, call_jaxpr.in_avals)
    return call_jaxpr.out_avals


def _refuse_closure_tangents(kind: str, name: str, tangents: Sequence[Tangent]) -> None:
    if any(type(t) is not Zero for t in tangents):
        raise ClosureDifferentiationError(kind, name)


def _dce_closed(closed: ClosedJaxpr, used_outputs: Sequence[bool]) -> ClosedJaxpr:
    """``closed`` computing only the used outputs (all inputs kept)."""
    jaxpr, _ = dce_jaxpr_open(closed.jaxpr, used_outputs, prune_inputs=False)
    kept = {id(v) for v in jaxpr.constvars}
    consts = tuple(c for v, c in zip(closed.jaxpr.constvars, closed.consts) if id(v) in kept)
    return verified(ClosedJaxpr(jaxpr, consts))


def _batch_all(closed: ClosedJaxpr, axis_size: int, in_dims: Sequence[Dim]) -> ClosedJaxpr:
    """``closed`` batched with every output's batch axis at 0."""
    batched, _ = batch_jaxpr(closed, axis_size, in_dims, [0] * len(closed.out_avals))
    return batched


# =========================================================================================
# custom_jvp_call
# =========================================================================================
@attrs.frozen(kw_only=True)
class CustomJvpCallParams:
    """``custom_jvp_call[call_jaxpr jvp num_consts symbolic_zeros name]`` (module docstring)."""

    call_jaxpr: ClosedJaxpr
    jvp: LazyJaxpr
    num_consts: int
    symbolic_zeros: bool
    name: str


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True, params=CustomJvpCallParams)
custom_jvp_call_p.impl_takes_arrays = True


@custom_jvp_call_p.def_abstract_eval
def _custom_jvp_call_abstract_eval(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, jvp: LazyJaxpr, num_consts: int, symbolic_zeros: bool, name: str
) -> list[ShapedArray]:
    _check_rule("custom_jvp_call's jvp", jvp)
    return _call_abstract_eval(f"custom_jvp_call of {name}", avals, call_jaxpr)


@custom_jvp_call_p.def_impl
def _custom_jvp_call_impl(
    *args: ArrayLike, call_jaxpr: ClosedJaxpr, jvp: LazyJaxpr, num_consts: int, symbolic_zeros: bool, name: str
) -> list[ArrayImpl]:
    return as_eager_results(eval_closed(call_jaxpr, args), call_jaxpr.out_avals)


@jvp_rules.register(custom_jvp_call_p, symbolic_zeros=True)
def _custom_jvp_call_jvp(
    primals: list[Array], tangents: list[Tangent], *, call_jaxpr: ClosedJaxpr, jvp: LazyJaxpr, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> tuple[list[Array], list[Array]]:
    _refuse_closure_tangents("custom_jvp", name, tangents[:num_consts])
    arg_tangents: list[Array] = [instantiate(t) for t in tangents[num_consts:]]
    outs = eval_closed(jvp.get(), [*primals, *arg_tangents])
    n = len(call_jaxpr.out_avals)
    return outs[:n], outs[n:]


@transpose_rules.register(custom_jvp_call_p)
def _custom_jvp_call_transpose(
    cts: list[Array], *invals: Array | UndefinedPrimal, call_jaxpr: ClosedJaxpr, jvp: LazyJaxpr, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> list[Array | None]:
    """A ``custom_jvp`` call in a linear program (a rule applying a custom function to
    tangents) is transposed through its body, as in JAX. (A ``custom_vjp`` call has no
    transpose, as in JAX: its ``bwd`` would be silently ignored.)"""
    linear = [is_undefined(x) for x in invals]
    nonlinear = [x for x in invals if not isinstance(x, UndefinedPrimal)]
    cts_in = iter(backward_pass(call_jaxpr.jaxpr, linear, call_jaxpr.consts, nonlinear, cts))
    return [next(cts_in) if lin else None for lin in linear]


@batching_rules.register(custom_jvp_call_p)
def _custom_jvp_call_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, call_jaxpr: ClosedJaxpr, jvp: LazyJaxpr, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> tuple[list[Array], list[Dim]]:
    # Every output gets its batch axis at 0: the outputs' batching must not depend on
    # whether the (lazy) rule or the body ends up computing them.
    batched = _batch_all(call_jaxpr, axis_size, dims)
    arg_dims = dims[num_consts:]
    batched_jvp = jvp.derive(lambda rule: _batch_all(rule, axis_size, [*dims, *arg_dims]))
    outs: list[Array] = custom_jvp_call_p.bind(
        *vals, call_jaxpr=batched, jvp=batched_jvp, num_consts=num_consts, symbolic_zeros=symbolic_zeros, name=name
    )
    return outs, [0] * len(outs)


@dce_rules.register(custom_jvp_call_p)
def _custom_jvp_call_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    """Prune unused outputs from the body and (lazily) from the rule; every input stays (the
    rule may use inputs the body does not)."""
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    if all(used_outputs):
        return [True] * len(eqn.invars), eqn
    call, jvp = param_of(eqn, "call_jaxpr", ClosedJaxpr), param_of(eqn, "jvp", LazyJaxpr)
    used = list(used_outputs)
    params = eqn.params.replace(
        call_jaxpr=_dce_closed(call, used), jvp=jvp.derive(lambda rule: _dce_closed(rule, used + used))
    )
    outvars = tuple(v for v, u in zip(eqn.outvars, used) if u)
    return [True] * len(eqn.invars), eqn.replace(outvars=outvars, params=params)


@lowering_rules.register(custom_jvp_call_p)
def _custom_jvp_call_lowering(
    ctx: LoweringRuleContext, *args: str, call_jaxpr: ClosedJaxpr, jvp: LazyJaxpr, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> list[str]:
    return lower_call(ctx, args, call_jaxpr, name)


# =========================================================================================
# custom_vjp_call
# =========================================================================================
@attrs.frozen(kw_only=True)
class CustomVjpCallParams:
    """``custom_vjp_call[call_jaxpr fwd bwd num_consts symbolic_zeros name]`` (module docstring)."""

    call_jaxpr: ClosedJaxpr
    fwd: LazyJaxpr
    bwd: CustomBwd
    num_consts: int
    symbolic_zeros: bool
    name: str


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True, params=CustomVjpCallParams)
custom_vjp_call_p.impl_takes_arrays = True


@custom_vjp_call_p.def_abstract_eval
def _custom_vjp_call_abstract_eval(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, fwd: LazyJaxpr, bwd: CustomBwd, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> list[ShapedArray]:
    _check_rule("custom_vjp_call's fwd", fwd)
    if not isinstance(bwd, CustomBwd):
        raise TypeError(f"custom_vjp_call's bwd must be a CustomBwd, got {bwd!r} (jaxpr text cannot carry it)")
    return _call_abstract_eval(f"custom_vjp_call of {name}", avals, call_jaxpr)


@custom_vjp_call_p.def_impl
def _custom_vjp_call_impl(
    *args: ArrayLike, call_jaxpr: ClosedJaxpr, fwd: LazyJaxpr, bwd: CustomBwd, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> list[ArrayImpl]:
    return as_eager_results(eval_closed(call_jaxpr, args), call_jaxpr.out_avals)


@jvp_rules.register(custom_vjp_call_p, symbolic_zeros=True)
def _custom_vjp_call_jvp(
    primals: list[Array], tangents: list[Tangent], *, call_jaxpr: ClosedJaxpr, fwd: LazyJaxpr, bwd: CustomBwd,
    num_consts: int, symbolic_zeros: bool, name: str,
) -> tuple[list[Array], list[Array]]:
    _refuse_closure_tangents("custom_vjp", name, tangents[:num_consts])
    n = len(call_jaxpr.out_avals)
    outs_res = eval_closed(fwd.get(), primals)
    res = outs_res[n:]
    arg_tangents: list[Array] = [instantiate(t) for t in tangents[num_consts:]]
    # The closure operands go along as residuals: the bwd runs with them (see ``with_closure``).
    t_out: list[Array] = custom_lin_p.bind(
        *primals[:num_consts], *res, *arg_tangents, num_res=num_consts + len(res), bwd=bwd
    )
    return outs_res[:n], t_out


def _vmap_bwd(bwd: CustomBwd, axis_size: int, res_dims: Callable[[], Sequence[Dim]],
              arg_dims: Sequence[Dim], out_avals: Sequence[ShapedArray]) -> CustomBwd:
    """``bwd`` of a batched call: the user's bwd vmapped over the batched residuals and the
    cotangents (batch axis 0); each input cotangent gets its operand's batch axis, and is
    summed over the batch for an unbatched operand."""

    def batched(res: Sequence[Array], cts: Sequence[Array]) -> list[Array | None]:
        in_dims: list[Dim] = [*res_dims(), *[0] * len(cts)]
        trace = BatchTrace(current_trace(), axis_size, f"vmap(custom_vjp bwd {bwd.name})")
        with trace_scope(trace):
            args: list[Array] = [x if d is None else BatchTracer(trace, x, d) for x, d in zip([*res, *cts], in_dims)]
            cts_in = bwd.fun(args[: len(res)], args[len(res) :])
            pairs = [None if c is None else trace.unpack(c) for c in cts_in]
        out: list[Array | None] = []
        for pair, want in zip(pairs, arg_dims, strict=True):
            if pair is None:
                out.append(None)
                continue
            x, d = pair
            if want is not None:
                out.append(bdim_at(x, d, axis_size, want))
            elif d is not None:
                out.append(reduce_sum(x, (d,)))
            else:
                out.append(x)
        return out

    return CustomBwd(bwd.name, batched, out_avals)


@batching_rules.register(custom_vjp_call_p)
def _custom_vjp_call_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, call_jaxpr: ClosedJaxpr, fwd: LazyJaxpr, bwd: CustomBwd,
    num_consts: int, symbolic_zeros: bool, name: str,
) -> tuple[list[Array], list[Dim]]:
    batched = _batch_all(call_jaxpr, axis_size, dims)
    arg_dims = dims[num_consts:]
    n_out = len(call_jaxpr.out_avals)
    found_res_dims: list[list[Dim]] = []

    def batch_fwd(rule: ClosedJaxpr) -> ClosedJaxpr:
        # Outputs at axis 0 like the body's; residuals keep their natural batch axes.
        _, natural = batch_jaxpr(rule, axis_size, dims)
        res_dims: list[Dim] = [None if d is None else 0 for d in natural[n_out:]]
        found_res_dims.append(res_dims)
        out, _ = batch_jaxpr(rule, axis_size, dims, [0] * n_out + res_dims)
        return out

    batched_fwd = fwd.derive(batch_fwd)

    def res_dims() -> list[Dim]:
        batched_fwd.get()  # the bwd runs after the fwd: this only reads the memo
        return [*dims[:num_consts], *found_res_dims[0]]

    batched_bwd = _vmap_bwd(bwd, axis_size, res_dims, arg_dims, batched.out_avals)
    outs: list[Array] = custom_vjp_call_p.bind(
        *vals, call_jaxpr=batched, fwd=batched_fwd, bwd=batched_bwd, num_consts=num_consts,
        symbolic_zeros=symbolic_zeros, name=name,
    )
    return outs, [0] * len(outs)


@dce_rules.register(custom_vjp_call_p)
def _custom_vjp_call_dce(used_outputs: Sequence[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    """Prune unused outputs from the body and the fwd (residuals stay); the bwd gets zero
    cotangents for the pruned outputs."""
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    if all(used_outputs):
        return [True] * len(eqn.invars), eqn
    call, fwd = param_of(eqn, "call_jaxpr", ClosedJaxpr), param_of(eqn, "fwd", LazyJaxpr)
    bwd = param_of(eqn, "bwd", CustomBwd)
    used = list(used_outputs)

    def dce_fwd(rule: ClosedJaxpr) -> ClosedJaxpr:
        n_res = len(rule.out_avals) - len(used)
        return _dce_closed(rule, used + [True] * n_res)

    def full_bwd(res: Sequence[Array], cts: Sequence[Array]) -> list[Array | None]:
        it = iter(cts)
        full: list[Array] = [next(it) if u else instantiate(Zero(a)) for u, a in zip(used, bwd.out_avals)]
        return bwd.fun(res, full)

    new_bwd = CustomBwd(bwd.name, full_bwd, [a for a, u in zip(bwd.out_avals, used) if u])
    params = eqn.params.replace(call_jaxpr=_dce_closed(call, used), fwd=fwd.derive(dce_fwd), bwd=new_bwd)
    outvars = tuple(v for v, u in zip(eqn.outvars, used) if u)
    return [True] * len(eqn.invars), eqn.replace(outvars=outvars, params=params)


@lowering_rules.register(custom_vjp_call_p)
def _custom_vjp_call_lowering(
    ctx: LoweringRuleContext, *args: str, call_jaxpr: ClosedJaxpr, fwd: LazyJaxpr, bwd: CustomBwd, num_consts: int,
    symbolic_zeros: bool, name: str,
) -> list[str]:
    return lower_call(ctx, args, call_jaxpr, name)


# =========================================================================================
# custom_lin
# =========================================================================================
@attrs.frozen(kw_only=True)
class CustomLinParams:
    """``custom_lin[num_res bwd]``: the leading ``num_res`` operands are residuals."""

    num_res: int
    bwd: CustomBwd


custom_lin_p = Primitive("custom_lin", multiple_results=True, params=CustomLinParams)


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals: ShapedArray, num_res: int, bwd: CustomBwd) -> list[ShapedArray]:
    if not isinstance(bwd, CustomBwd):
        raise TypeError(f"custom_lin's bwd must be a CustomBwd, got {bwd!r} (jaxpr text cannot carry it)")
    return list(bwd.out_avals)


@custom_lin_p.def_impl
def _custom_lin_impl(*args: ArrayLike, num_res: int, bwd: CustomBwd) -> list[ArrayImpl]:
    raise ForwardModeError(bwd)


@transpose_rules.register(custom_lin_p)
def _custom_lin_transpose(
    cts: list[Array], *invals: Array | UndefinedPrimal, num_res: int, bwd: CustomBwd
) -> list[Array | None]:
    residuals = [x for x in invals[:num_res] if not isinstance(x, UndefinedPrimal)]
    assert len(residuals) == num_res, "custom_lin's residuals are never linear"
    cts_in = bwd.fun(residuals, [instantiate(c) for c in cts])
    lin = invals[num_res:]
    assert len(cts_in) == len(lin), (len(cts_in), len(lin))
    return [None] * num_res + [c if is_undefined(x) else None for x, c in zip(lin, cts_in)]


@batching_rules.register(custom_lin_p)
def _custom_lin_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, num_res: int, bwd: CustomBwd
) -> tuple[list[Array], list[Dim]]:
    raise ForwardModeError(bwd)


@lowering_rules.register(custom_lin_p)
def _custom_lin_lowering(ctx: LoweringRuleContext, *args: str, num_res: int, bwd: CustomBwd) -> list[str]:
    raise _ForwardModeLoweringError(str(ForwardModeError(bwd)))

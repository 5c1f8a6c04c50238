"""JAX's call-like primitives in: calls, custom derivatives and rematerialization, kept as
fcore's equations of the same meaning so that values *and derivatives* are unchanged.

* ``pjit``/``jit``/``closed_call`` become fcore ``jit`` equations (constants hoisted).
* ``custom_jvp_call`` becomes fcore's ``custom_jvp_call``: its rule is JAX's
  ``jvp_jaxpr_fun``, traced by JAX and converted when fcore first differentiates the call.
* ``custom_vjp_call`` becomes fcore's ``custom_vjp_call``: ``fwd`` is JAX's
  ``fwd_jaxpr_thunk`` likewise, ``bwd`` runs JAX's ``bwd`` traced by ``jax.make_jaxpr`` and
  converted. These two need ``jax`` importable when differentiated (it is: the jaxpr came from it).
* ``checkpoint``/``remat2`` become fcore's ``remat2`` with the same policy where fcore has it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fcore import ad_checkpoint
from fcore.interop._from_jax import SPECIAL, Converter, Special, convert_closed, convert_open, is_jax_closed_jaxpr
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr, Literal
from fcore.ir.params import ParamValue
from fcore.lax.call import eval_closed, hoist_consts, jit_p
from fcore.lax.custom_derivatives import CustomBwd, custom_jvp_call_p, custom_vjp_call_p
from fcore.lax.remat import DotsSaveable, SaveNames, SavePolicy, remat_p
from fcore.lax.shapes import broadcast_in_dim_p
from fcore.lax.traced_rules import LazyJaxpr

__all__: list[str] = []

Params = Mapping[str, object]


def _closed_param(params: Params, *names: str) -> ClosedJaxpr:
    """The first of ``names`` present, a closed or open JAX jaxpr, converted."""
    for name in names:
        inner = params.get(name)
        if inner is None:
            continue
        if is_jax_closed_jaxpr(inner):
            return convert_closed(inner)
        if hasattr(inner, "eqns"):
            return convert_open(inner)
    raise NotImplementedError(f"call without a {' or '.join(repr(n) for n in names)} parameter: {sorted(params)}")


def _hoisted(conv: Converter, closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Atom]]:
    """``closed`` without consts, and the constants of ``conv``'s jaxpr that feed them."""
    hoisted, consts = hoist_consts(closed)
    atoms: list[Atom] = [conv.const(np.asarray(c), v.aval) for v, c in zip(hoisted.jaxpr.invars, consts)]
    return hoisted, atoms


def _call_name(params: Params, inner: object, default: str) -> str:
    name = params.get("name")
    if name:
        return str(name)
    debug = getattr(getattr(inner, "jaxpr", inner), "debug_info", None)
    func_name = getattr(debug, "func_name", None)
    return str(func_name) if func_name else default


def _convert_call(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    hoisted, consts = _hoisted(conv, _closed_param(params, "jaxpr", "call_jaxpr"))
    name = params.get("name")
    return list(conv.builder.eqn(jit_p, [*consts, *ins], jaxpr=hoisted, name=str(name) if name else "jit"))


def _int_param(params: Params, key: str) -> int:
    value = params.get(key, 0)
    if not isinstance(value, (int, np.integer)):
        raise NotImplementedError(f"parameter {key}={value!r} is not an integer")
    return int(value)


def _zeros(conv: Converter, aval: ShapedArray) -> Atom:
    zero = Literal.of(np.zeros((), aval.dtype), ShapedArray((), aval.dtype, aval.weak_type))
    if aval.shape == ():
        return zero
    (out,) = conv.builder.eqn(broadcast_in_dim_p, [zero], shape=aval.shape, broadcast_dimensions=())
    return out


def _differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


def _rule_converter(in_avals: Sequence[ShapedArray]) -> tuple[Converter, list[Atom]]:
    conv = Converter()
    return conv, [conv.builder.invar(a) for a in in_avals]


# -- custom rules ------------------------------------------------------------------------------
class _ConstsAsInputs:
    """A JAX jaxpr whose constvars are leading invars (duck-typed like JAX's ``Jaxpr``)."""

    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, jaxpr: object) -> None:
        self.constvars: list[object] = []
        self.invars = [*getattr(jaxpr, "constvars"), *getattr(jaxpr, "invars")]
        self.outvars, self.eqns = getattr(jaxpr, "outvars"), getattr(jaxpr, "eqns")


def _inline_rule(rule: Converter, jax_rule: object, jax_consts: Sequence[object], operands: Mapping[int, Atom],
                 inputs: Sequence[Atom]) -> list[Atom]:
    """Inline a rule jaxpr JAX traced late. Its constants are values, or tracers of the trace that
    staged the call, finished since: each stands for the call operand of its variable (``operands``,
    by the id of JAX's variable), as it would in JAX's own (still running) trace."""
    const_atoms: list[Atom] = []
    for c in jax_consts:
        if type(c).__name__.endswith("Tracer"):
            atom = operands.get(id(getattr(c, "val", None)))
            if atom is None:
                raise NotImplementedError("a custom rule closes over a traced value that is not an operand of its call")
            const_atoms.append(atom)
        else:
            const_atoms.append(rule.const(np.asarray(c)))
    return rule.inline(convert_open(_ConstsAsInputs(jax_rule)), [*const_atoms, *inputs])


def _convert_custom_jvp(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    call, hoisted = _hoisted(conv, _closed_param(params, "call_jaxpr"))
    num_consts = _int_param(params, "num_consts") + len(hoisted)
    jvp_fun = params.get("jvp_jaxpr_fun", params.get("jvp_jaxpr_thunk"))
    if jvp_fun is None or not hasattr(jvp_fun, "call_wrapped"):
        raise NotImplementedError(f"custom_jvp_call without a 'jvp_jaxpr_fun' parameter: {sorted(params)}")
    name = _call_name(params, params.get("call_jaxpr"), "custom_jvp")
    avals = [*[a.aval for a in hoisted], *[a.aval for a in ins]]
    rule_name = str(getattr(getattr(jvp_fun, "debug_info", None), "func_name", None) or "jvp")
    jax_invars = list(conv.jax_invars)

    def make() -> ClosedJaxpr:
        """fcore's rule ``(operands, arg tangents) -> (outs, out tangents)`` from JAX's, which
        takes the arguments and the nonzero tangents and returns the nonzero out tangents."""
        args = avals[num_consts:]
        zeros = [not _differentiable(a) for a in args]
        jax_jvp, jax_consts, out_zeros = getattr(jvp_fun, "call_wrapped")(*zeros)
        rule, vs = _rule_converter([*avals, *args])
        operands = {id(v): a for v, a in zip(jax_invars, vs[len(hoisted) : len(avals)], strict=True)}
        primals, tangents = vs[num_consts : len(avals)], vs[len(avals) :]
        res = _inline_rule(rule, jax_jvp, jax_consts, operands,
                           [*primals, *[t for t, z in zip(tangents, zeros) if not z]])
        n = len(out_zeros)
        nonzero = iter(res[n:])
        touts = [_zeros(rule, o.aval) if z else next(nonzero) for o, z in zip(res[:n], out_zeros)]
        return rule.builder.build_closed([*res[:n], *touts], rule.consts)

    return list(conv.builder.eqn(
        custom_jvp_call_p, [*hoisted, *ins], call_jaxpr=call, jvp=LazyJaxpr(rule_name, make),
        num_consts=num_consts, symbolic_zeros=bool(params.get("symbolic_zeros", False)), name=name,
    ))


def _convert_custom_vjp(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    call, hoisted = _hoisted(conv, _closed_param(params, "call_jaxpr"))
    num_consts = _int_param(params, "num_consts") + len(hoisted)
    fwd_thunk, jax_bwd, out_trees = params.get("fwd_jaxpr_thunk"), params.get("bwd"), params.get("out_trees")
    if not (hasattr(fwd_thunk, "call_wrapped") and hasattr(jax_bwd, "call_wrapped") and callable(out_trees)):
        raise NotImplementedError(f"custom_vjp_call without 'fwd_jaxpr_thunk', 'bwd' and 'out_trees': {sorted(params)}")
    name = _call_name(params, params.get("call_jaxpr"), "custom_vjp")
    avals = [*[a.aval for a in hoisted], *[a.aval for a in ins]]
    fwd_name = str(getattr(getattr(fwd_thunk, "debug_info", None), "func_name", None) or "fwd")
    bwd_name = str(getattr(getattr(jax_bwd, "debug_info", None), "func_name", None) or "bwd")
    jax_invars = list(conv.jax_invars)

    def make_fwd() -> ClosedJaxpr:
        """fcore's ``fwd``: ``operands -> (outs, residuals)``. JAX's takes the arguments (not the
        closure operands), returns the residuals first and leaves out those that are operands
        (``out_trees``' input forwards, which index JAX's operands)."""
        jax_fwd, jax_consts = getattr(fwd_thunk, "call_wrapped")(*[_differentiable(a) for a in avals[num_consts:]])
        _, res_tree, input_fwds = out_trees()
        num_res_out = int(res_tree.num_leaves) - sum(f is not None for f in input_fwds)
        rule, vs = _rule_converter(avals)
        jax_operands = vs[len(hoisted) :]
        operands = {id(v): a for v, a in zip(jax_invars, jax_operands, strict=True)}
        res_and_outs = _inline_rule(rule, jax_fwd, jax_consts, operands, vs[num_consts:])
        res_out = iter(res_and_outs[:num_res_out])
        res = [next(res_out) if f is None else jax_operands[f] for f in input_fwds]
        return rule.builder.build_closed([*res_and_outs[num_res_out:], *res], rule.consts)

    traced: dict[tuple[ShapedArray, ...], tuple[ClosedJaxpr, list[bool]]] = {}

    def bwd(res: Sequence[Array], cts: Sequence[Array]) -> list[Array | None]:
        """JAX's ``bwd`` (of the residuals, without fcore's leading closure operands) traced by
        JAX on these types, converted, evaluated on fcore values."""
        args = [*res[num_consts:], *cts]
        in_avals = tuple(_aval_of(x) for x in args)
        if in_avals not in traced:
            traced[in_avals] = _trace_jax_bwd(jax_bwd, in_avals)
        closed, present = traced[in_avals]
        got = iter(eval_closed(closed, args))
        return [next(got) if p else None for p in present]

    return list(conv.builder.eqn(
        custom_vjp_call_p, [*hoisted, *ins], call_jaxpr=call, fwd=LazyJaxpr(fwd_name, make_fwd),
        bwd=CustomBwd(bwd_name, bwd, call.out_avals), num_consts=num_consts,
        symbolic_zeros=bool(params.get("symbolic_zeros", False)), name=name,
    ))


def _aval_of(x: Any) -> ShapedArray:
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    arr = np.asarray(x)
    return ShapedArray(arr.shape, arr.dtype)


def _trace_jax_bwd(jax_bwd: object, in_avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[bool]]:
    """JAX's flat ``bwd`` as an fcore jaxpr, and which cotangents it gives (zeros are ``None``)."""
    jax = importlib.import_module("jax")
    present: list[bool] = []

    def flat(*args: Any) -> list[Any]:
        cts = list(getattr(jax_bwd, "call_wrapped")(*args))
        present[:] = [type(c).__name__ not in ("Zero", "SymbolicZero") and c is not None for c in cts]
        return [c for c, p in zip(cts, present) if p]

    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in in_avals]
    return convert_closed(jax.make_jaxpr(flat)(*specs)), present


# -- checkpoint --------------------------------------------------------------------------------
#: JAX's named residual policies (by function name) as fcore's.
_POLICIES: dict[str, Callable[[], SavePolicy]] = {
    name: (lambda name: lambda: getattr(ad_checkpoint.checkpoint_policies, name))(name)
    for name in (
        "everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
        "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
    )
}


def _policy(value: object) -> ParamValue:
    """JAX's residual policy as fcore's: the named functions by name, JAX 0.10's policy objects
    (``DotsSaveable``, ``SaveOnlyTheseNames``, ``SaveAnyNamesButThese``) by class and fields."""
    if value is None:
        return None
    make = _POLICIES.get(str(getattr(value, "__name__", None)))
    if make is not None:
        return make()
    kind = type(value).__name__
    if kind == "DotsSaveable":
        return DotsSaveable(only_if_no_batch_dims=bool(getattr(value, "only_if_no_batch_dims")))
    if kind in ("SaveOnlyTheseNames", "SaveAnyNamesButThese"):
        names = getattr(value, "saveable_names" if kind == "SaveOnlyTheseNames" else "names")
        return SaveNames(names=tuple(sorted(str(n) for n in names)), exclude=kind == "SaveAnyNamesButThese")
    raise NotImplementedError(f"checkpoint policy {value!r} has no fcore equivalent")


def _convert_checkpoint(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    body, consts = _hoisted(conv, _closed_param(params, "jaxpr"))
    return list(conv.builder.eqn(
        remat_p, [*consts, *ins], jaxpr=body, prevent_cse=bool(params.get("prevent_cse", True)),
        differentiated=bool(params.get("differentiated", False)), policy=_policy(params.get("policy")),
    ))


# -- small renamings ---------------------------------------------------------------------------
def _convert_add_any(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    return conv.equation("add", ins, {}, outs)


def _convert_square(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    return conv.equation("integer_pow", ins, {"y": 2}, outs)


def _convert_copy(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    return list(ins)


def _convert_split(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    (x,) = ins
    axis = _ints((params["axis"],))[0]
    results: list[Atom] = []
    start = 0
    for size in _ints(params["sizes"]):
        lo = [0] * x.aval.ndim
        hi = list(x.aval.shape)
        lo[axis], hi[axis] = start, start + size
        results.extend(conv.equation("slice", [x], {"start_indices": tuple(lo), "limit_indices": tuple(hi),
                                                     "strides": None}, outs))
        start += size
    return results


def _convert_stack(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    """JAX 0.10's ``stack[axis]``: each operand given a unit axis there, then concatenated."""
    axis = _ints((params["axis"],))[0]
    shape = list(ins[0].aval.shape)
    shape.insert(axis, 1)
    dims = tuple(d for d in range(len(shape)) if d != axis)
    parts: list[Atom] = []
    for x in ins:
        (part,) = conv.builder.eqn(broadcast_in_dim_p, [x], shape=tuple(shape), broadcast_dimensions=dims)
        parts.append(part)
    return conv.equation("concatenate", parts, {"dimension": axis}, outs)


def _convert_platform_index(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    """``lax.platform_dependent``'s branch index: JAX lowers it to a constant per platform;
    fcore knows its platform now, so it is that constant (``None`` is the default branch)."""
    platform = importlib.import_module("fcore").devices()[0].platform
    names = {platform, "cuda" if platform == "gpu" else platform}
    platforms = params.get("platforms")
    if not isinstance(platforms, (tuple, list)):
        raise NotImplementedError(f"platform_index without 'platforms': {sorted(params)}")
    for i, group in enumerate(platforms):
        if group is None or names & {str(g) for g in group}:
            return [Literal.of(np.int32(i), ShapedArray((), dtypes.int32))]
    raise NotImplementedError(f"platform_index: no branch for platform {platform!r} among {platforms}")


def _total_order(cmp: str) -> Special:
    """JAX's ``eq_to``/``lt_to``/``le_to``: comparisons in IEEE total order (-0 < +0, NaNs
    ordered by sign and payload): floats compared as their bits made monotonic integers."""

    def convert(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
        dtype = ins[0].aval.dtype
        if dtypes.is_inexact(dtype) and not dtypes.is_complex(dtype):
            ints = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[dtype.itemsize]
            ins = [_monotonic_bits(conv, a, ints) for a in ins]
        return conv.equation(cmp, ins, {}, outs)

    return convert


def _monotonic_bits(conv: Converter, x: Atom, ints: dtypes.DType) -> Atom:
    """The bits of float ``x`` as a signed integer ordered as IEEE's total order."""
    (bits,) = conv.equation("bitcast_convert_type", [x], {"new_dtype": ints}, [])
    mask = Literal.of(np.array(np.iinfo(ints).max, ints), ShapedArray((), ints))
    zero = Literal.of(np.zeros((), ints), ShapedArray((), ints))
    (flipped,) = conv.equation("xor", [bits, mask], {}, [bits.aval])
    (negative,) = conv.equation("lt", [bits, zero], {}, [bits.aval])
    return conv.equation("select_n", [negative, bits, flipped], {}, [bits.aval])[0]


def _ints(value: object) -> list[int]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise NotImplementedError(f"expected a sequence of integers, got {value!r}")
    return [int(v) for v in value]


SPECIAL.update({
    "pjit": _convert_call,
    "jit": _convert_call,
    "closed_call": _convert_call,
    "core_call": _convert_call,
    "custom_jvp_call": _convert_custom_jvp,
    "custom_vjp_call": _convert_custom_vjp,
    "checkpoint": _convert_checkpoint,
    "remat2": _convert_checkpoint,
    "add_any": _convert_add_any,
    "square": _convert_square,
    "copy": _convert_copy,
    "copy_p": _convert_copy,
    "split": _convert_split,
    "stack": _convert_stack,
    "platform_index": _convert_platform_index,
    "eq_to": _total_order("eq"),
    "lt_to": _total_order("lt"),
    "le_to": _total_order("le"),
})

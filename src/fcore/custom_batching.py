"""``fcore.custom_batching`` as ``jax.custom_batching``: ``custom_vmap`` and ``sequential_vmap``.

A ``custom_vmap`` function is the primitive ``custom_vmap_call[call rule num_consts] *consts
*args``: unbatched it runs ``call`` (the function's body; the values it closes over are hoisted
into the leading ``num_consts`` operands); under ``vmap`` it runs the user's rule instead.
As in JAX, forward mode works (the jvp is another ``custom_vmap_call``, whose rule is the jvp of
the user's rule) and reverse mode does not: put a ``custom_vjp`` around the function for that.
The rule is a Python function, so such equations print but do not parse back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fcore import tree_util
from fcore.api.autodiff import jvp
from fcore.api.custom import _resolve_kwargs
from fcore.api.staging import abstractify, fun_name
from fcore.errors import FcoreError
from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.stack import current_trace, trace_scope
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ByIdentity
from fcore.lax._base import ArrayLike, check_operands
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, lower_call
from fcore.lax.control_flow import map as lax_map
from fcore.lax.control_flow.common import trace_hoisted
from fcore.numpy import asarray
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, instantiate
from fcore.transforms.batching import BatchTrace, BatchTracer, Dim, batching_rules, bdim_at, moveaxis
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = ["custom_vmap", "sequential_vmap"]

#: ``(axis_size, in_batched, args) -> (outs, out_batched)`` on flat lists (closure operands first).
FlatRule = Callable[[int, list[bool], list[Any]], tuple[list[Any], list[bool]]]


class VmapRule(ByIdentity):
    """The batching rule of a ``custom_vmap_call`` as a flat function (compared by identity,
    prints as its name)."""

    __slots__ = ("fun",)
    what = "custom_vmap rule"

    def __init__(self, name: str, fun: FlatRule) -> None:
        super().__init__(name)
        self.fun = fun


class ReverseModeError(FcoreError, ValueError):
    """Reverse-mode differentiation of a ``custom_vmap`` function (a ValueError, as JAX's)."""

    def __init__(self, rule_name: str) -> None:
        super().__init__(
            f"custom_vmap functions do not support reverse-mode autodiff (the function with vmap rule {rule_name} "
            "was differentiated by grad/vjp/linearize). To customize both vmap and reverse-mode autodiff, put a "
            "custom_vjp around the custom_vmap function."
        )


def _vmap_unrestricted(fun: Callable[[list[Any]], list[Any]], args: Sequence[Any], in_dims: Sequence[Dim],
                       axis_size: int, what: str) -> tuple[list[Any], list[bool]]:
    """``vmap(fun)`` over the inputs with a batch axis, each output batched at 0 where it depends
    on one (and unbatched otherwise): JAX's ``vmap_unrestricted``."""
    trace = BatchTrace(current_trace(), axis_size, what)
    with trace_scope(trace):
        outs = fun([x if d is None else BatchTracer(trace, x, d) for x, d in zip(args, in_dims)])
        pairs = [trace.unpack(o) for o in outs]
    return [x if d is None else moveaxis(x, d, 0) for x, d in pairs], [d is not None for _, d in pairs]


# =========================================================================================
# custom_vmap_call
# =========================================================================================
@attrs.frozen(kw_only=True)
class CustomVmapParams:
    """``custom_vmap_call[call rule num_consts]`` (module docstring)."""

    call: ClosedJaxpr
    rule: VmapRule
    num_consts: int


custom_vmap_p = Primitive("custom_vmap_call", multiple_results=True, params=CustomVmapParams)
custom_vmap_p.impl_takes_arrays = True


@custom_vmap_p.def_abstract_eval
def _custom_vmap_abstract_eval(*avals: ShapedArray, call: ClosedJaxpr, rule: VmapRule, num_consts: int
                               ) -> list[ShapedArray]:
    if not isinstance(rule, VmapRule):
        raise TypeError(f"custom_vmap_call's rule must be a VmapRule, got {rule!r} (jaxpr text cannot carry it)")
    check_operands(f"custom_vmap_call of {rule.name}", avals, call.in_avals)
    return call.out_avals


@custom_vmap_p.def_impl
def _custom_vmap_impl(*args: ArrayLike, call: ClosedJaxpr, rule: VmapRule, num_consts: int) -> list[ArrayImpl]:
    return as_eager_results(eval_closed(call, args), call.out_avals)


@jvp_rules.register(custom_vmap_p, symbolic_zeros=True)
def _custom_vmap_jvp(primals: list[Array], tangents: list[Tangent], *, call: ClosedJaxpr, rule: VmapRule,
                     num_consts: int) -> tuple[list[Array], list[Array]]:
    """Another ``custom_vmap_call`` on primals and tangents: its body is the jvp of the body, its
    rule the jvp of the rule, vmapped over the inputs only one of primal and tangent batches."""
    n_in, n_out = len(primals), len(call.out_avals)
    jvp_call, _ = jvp_jaxpr(call, [True] * n_in, True)

    def jvp_of_rule(axis_size: int, in_batched: list[bool], args: list[Any]) -> tuple[list[Any], list[bool]]:
        pb, tb = in_batched[:n_in], in_batched[n_in:]
        mutual = [p and t for p, t in zip(pb, tb)]
        extra: list[Dim] = [0 if p and not t else None for p, t in zip(pb, tb)]
        extra += [0 if t and not p else None for p, t in zip(pb, tb)]
        rule_batched: list[list[bool]] = []

        def to_jvp(*ps: Any) -> list[Any]:
            outs, out_batched = rule.fun(axis_size, mutual, list(ps))
            rule_batched.append(out_batched)
            return outs

        def primal_and_tangent(xs: list[Any]) -> list[Any]:
            outs, t_outs = jvp(to_jvp, xs[:n_in], xs[n_in:])
            return [*outs, *t_outs]

        outs, extra_out = _vmap_unrestricted(primal_and_tangent, args, extra, axis_size,
                                             f"vmap(jvp of custom_vmap rule {rule.name})")
        mutual_out = rule_batched[-1]
        return outs, [m or e for m, e in zip(mutual_out + mutual_out, extra_out)]

    operands = [*primals, *[instantiate(t) for t in tangents]]
    outs: list[Array] = custom_vmap_p.bind(
        *operands, call=jvp_call, rule=VmapRule(f"jvp({rule.name})", jvp_of_rule), num_consts=0
    )
    return outs[:n_out], outs[n_out:]


@transpose_rules.register(custom_vmap_p)
def _custom_vmap_transpose(cts: list[Array], *invals: Array | UndefinedPrimal, call: ClosedJaxpr, rule: VmapRule,
                           num_consts: int) -> list[Array | None]:
    """None, as in JAX (where linearization fails): say how to get reverse mode."""
    raise ReverseModeError(rule.name)


@batching_rules.register(custom_vmap_p)
def _custom_vmap_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, call: ClosedJaxpr, rule: VmapRule,
                          num_consts: int) -> tuple[list[Array], list[Dim]]:
    # The rule sees fcore arrays, as JAX's sees jax arrays (eager vmap hands over NumPy values).
    args = [asarray(x if d is None else bdim_at(x, d, axis_size, 0)) for x, d in zip(vals, dims)]
    outs, out_batched = rule.fun(axis_size, [d is not None for d in dims], args)
    return outs, [0 if b else None for b in out_batched]


@lowering_rules.register(custom_vmap_p)
def _custom_vmap_lowering(ctx: LoweringRuleContext, *args: str, call: ClosedJaxpr, rule: VmapRule, num_consts: int
                          ) -> list[str]:
    return lower_call(ctx, args, call, "custom_vmap_call")


# =========================================================================================
# The decorators
# =========================================================================================
def _check_vmap_rule_trees(name: str, original: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef,
                           out_batched_tree: tree_util.PyTreeDef) -> None:
    if out_tree != out_batched_tree:
        raise ValueError(
            f"structure of output value and output batching specification returned by custom vmap rule ({name}) "
            f"do not match.\nOutput values: {out_tree}\nBatching spec: {out_batched_tree}"
        )
    if out_tree != original:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({name}) does not match that of original "
            f"custom-vmapped function.\nOriginal output: {original}\nRule output: {out_tree}"
        )


class custom_vmap:
    """A function with its own ``vmap`` rule (``jax.custom_batching.custom_vmap``).

    ``f.def_vmap(rule)`` sets the rule ``rule(axis_size, in_batched, *args) -> (out,
    out_batched)``: ``in_batched`` holds one pytree of bools per argument, batched arguments
    carry the batch axis first, and ``out_batched`` says which outputs the rule batched.

    >>> import numpy as np
    >>> import fcore
    >>> @fcore.custom_batching.custom_vmap
    ... def f(x, y):
    ...     return x + y
    >>> @f.def_vmap
    ... def f_vmap_rule(axis_size, in_batched, xs, ys):
    ...     return xs * ys, True
    >>> fcore.vmap(f)(np.arange(3), np.arange(1, 4))  # the rule's xs * ys, not xs + ys
    Array([0, 2, 6], dtype=int32)
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., tuple[Any, Any]] | None = None

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        """Set the vmap rule (returned unchanged, so this works as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vmap")
        user_rule = self.vmap_rule
        if not user_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        flat, in_tree = tree_util.tree_flatten(args)
        out_trees: list[tree_util.PyTreeDef] = []

        def body(*leaves: Any) -> list[Any]:
            outs, out_tree = tree_util.tree_flatten(self.fun(*tree_util.tree_unflatten(in_tree, leaves)))
            out_trees.append(out_tree)
            return outs

        call, consts = trace_hoisted(body, [abstractify(x) for x in flat], f"custom_vmap({name})")
        out_tree = out_trees[0]
        n_consts = len(consts)
        rule_name = fun_name(user_rule)

        def flat_rule(axis_size: int, in_batched: list[bool], all_args: list[Any]) -> tuple[list[Any], list[bool]]:
            if any(in_batched[:n_consts]):
                raise ValueError(
                    f"custom_vmap function {name} closes over a value that the enclosing vmap batches; pass it "
                    "to the function as an argument instead"
                )
            rule_args = tree_util.tree_unflatten(in_tree, all_args[n_consts:])
            batched = tree_util.tree_unflatten(in_tree, in_batched[n_consts:])
            out, out_batched = user_rule(axis_size, list(batched), *rule_args)
            outs, tree1 = tree_util.tree_flatten(out)
            flags, tree2 = tree_util.tree_flatten(out_batched)
            _check_vmap_rule_trees(rule_name, out_tree, tree1, tree2)
            return outs, [bool(b) for b in flags]

        outs: list[Array] = custom_vmap_p.bind(*consts, *flat, call=call, rule=VmapRule(rule_name, flat_rule),
                                               num_consts=n_consts)
        return tree_util.tree_unflatten(out_tree, outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` batched by a loop over the batch (``lax.map``), for functions with no batched form
    (``jax.custom_batching.sequential_vmap``).

    >>> import numpy as np
    >>> import fcore
    >>> @fcore.custom_batching.sequential_vmap
    ... def f(x):
    ...     return x + 1
    >>> fcore.vmap(f)(np.arange(3))
    Array([1, 2, 3], dtype=int32)
    """
    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        mapped = tree_util.tree_map(lambda b, x: x if b else None, in_batched, list(args))
        bcast = tree_util.tree_map(lambda b, x: None if b else x, in_batched, list(args))

        def one(mapped_args: Any) -> Any:
            merged = tree_util.tree_map(lambda b, m, c: m if b else c, in_batched, mapped_args, bcast)
            return g(*merged)

        out = lax_map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return g

"""User-defined derivative rules: ``custom_jvp``, ``custom_vjp`` and ``checkpoint``.

A custom rule takes effect when the function is called with tracers of the innermost
differentiation trace (``jvp``/``linearize``/``grad``/``vjp`` directly around the call);
under other transformations (``vmap``, or ``jit`` staging the call) the function body
runs and is transformed as usual.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from fcore import tree_util
from fcore.api.staging import fun_name
from fcore.interpreters.eval import get_aval
from fcore.interpreters.stack import current_trace, set_current_trace
from fcore.lax.custom_derivatives import CustomVJPRule, custom_lin_p
from fcore.transforms import ad_util
from fcore.transforms.jvp import JVPTrace, JVPTracer


def _own_pairs(trace: JVPTrace, flat: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
    if not any(type(x) is JVPTracer and x._trace is trace for x in flat):
        return None
    pairs = [trace.unpack(x) for x in flat]
    return [p for p, _ in pairs], [t for _, t in pairs]


class custom_jvp:  # noqa: N801  (JAX's name)
    """``f = custom_jvp(f)``; ``@f.defjvp def f_jvp(primals, tangents): return out, t_out``."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        functools.update_wrapper(self, fun, updated=())  # never copy fun.__dict__ over our attributes

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """One function per argument: ``fn(g, ans, *primals)`` is that argument's contribution."""

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            ans = self.fun(*primals)
            terms = [fn(t, ans, *primals) for fn, t in zip(tangent_fns, tangents) if fn is not None]
            total = terms[0]
            for t in terms[1:]:
                total = tree_util.tree_map(lambda a, b: a + b, total, t)
            return ans, total

        self.jvp = jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {fun_name(self.fun)} using defjvp.")
        trace = current_trace()
        nondiff = [args[i] for i in self.nondiff_argnums]
        diff = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)
        if isinstance(trace, JVPTrace):
            flat, in_tree = tree_util.tree_flatten(diff)
            split = _own_pairs(trace, flat)
            if split is not None:
                primals, tangents = split
                with set_current_trace(trace.rule_trace):
                    tangents = [ad_util.instantiate(t) for t in tangents]
                    out, t_out = self.jvp(
                        *nondiff, tree_util.tree_unflatten(in_tree, primals), tree_util.tree_unflatten(in_tree, tangents)
                    )
                out_flat, out_tree = tree_util.tree_flatten(out)
                t_flat, t_tree = tree_util.tree_flatten(t_out)
                if out_tree != t_tree:
                    raise TypeError(
                        f"custom_jvp rule of {fun_name(self.fun)} must produce primal and tangent outputs with "
                        f"equal tree structures, got {out_tree} and {t_tree}"
                    )
                return tree_util.tree_unflatten(out_tree, [JVPTracer(trace, o, t) for o, t in zip(out_flat, t_flat)])
        return self.fun(*args)


class custom_vjp:  # noqa: N801  (JAX's name)
    """``f = custom_vjp(f)``; ``f.defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, res)`` and
    ``bwd(res, ct) -> tuple`` of one cotangent per argument."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        functools.update_wrapper(self, fun, updated=())  # never copy fun.__dict__ over our attributes

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {fun_name(self.fun)} using defvjp.")
        trace = current_trace()
        if isinstance(trace, JVPTrace):
            flat, in_tree = tree_util.tree_flatten(args)
            split = _own_pairs(trace, flat)
            if split is not None:
                primals, tangents = split
                with set_current_trace(trace.parent):
                    out, res = self.fwd(*tree_util.tree_unflatten(in_tree, primals))
                out_flat, out_tree = tree_util.tree_flatten(out)
                res_flat, res_tree = tree_util.tree_flatten(res)
                rule = CustomVJPRule(
                    self.bwd, res_tree, in_tree, out_tree, [get_aval(o) for o in out_flat], fun_name(self.fun)
                )
                with set_current_trace(trace.rule_trace):
                    tangents = [ad_util.instantiate(t) for t in tangents]
                    t_out = custom_lin_p.bind(*res_flat, *tangents, num_res=len(res_flat), rule=rule)
                return tree_util.tree_unflatten(out_tree, [JVPTracer(trace, o, t) for o, t in zip(out_flat, t_out)])
        return self.fun(*args)


def checkpoint(fun: Callable[..., Any], **kwargs: Any) -> Callable[..., Any]:
    """``jax.checkpoint``: same values and derivatives. fcore does not rematerialize yet:
    residuals are stored as without it (a memory, not a correctness, difference)."""
    return fun


remat = checkpoint

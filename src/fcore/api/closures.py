"""``closure_convert`` and ``custom_gradient``: functions whose closures hold traced values,
made explicit so that custom derivative rules can see them (docs/guide.md, "Custom
derivatives"). Both stage the function to a jaxpr; the traced values it closes over become
the jaxpr's consts, passed as arguments or kept as ``Partial`` leaves."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fcore import tree_util
from fcore.api.custom import custom_vjp
from fcore.api.staging import fun_name
from fcore.interpreters.eval import get_aval
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir.core import ClosedJaxpr
from fcore.transforms.ad_util import Zero
from fcore.transforms.jvp import JVPTracer


def _stage(fun: Callable[..., Any], args: tuple[Any, ...], description: str) -> tuple[
        ClosedJaxpr, tree_util.PyTreeDef, tree_util.PyTreeDef]:
    """``fun(*args)`` as a closed jaxpr over the flattened arguments, with both trees."""
    flat, in_tree = tree_util.tree_flatten(args)
    out_trees: list[tree_util.PyTreeDef] = []

    def flat_fun(*leaves: Any) -> list[Any]:
        out, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out

    closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat], description)
    return closed, in_tree, out_trees[0]


def _maybe_perturbed(x: Any) -> bool:
    """Whether ``x`` may carry a nonzero tangent (JAX's heuristic): a tracer, unless it is a
    JVP tracer with a symbolic-zero tangent around a value that cannot."""
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, JVPTracer) and isinstance(x.tangent, Zero):
        return _maybe_perturbed(x.primal)
    return True


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)`` for
    arguments of ``example_args``' types, taking the traced values ``fun`` closes over as
    trailing arguments; concrete closed-over values stay inside."""
    closed, in_tree, out_tree = _stage(fun, example_args, f"closure_convert({fun_name(fun)})")
    perturbed = [_maybe_perturbed(c) for c in closed.consts]
    hoisted = [c for c, p in zip(closed.consts, perturbed) if p]
    kept = [c for c, p in zip(closed.consts, perturbed) if not p]

    def converted_fun(*args_and_consts: Any) -> Any:
        n_args = len(args_and_consts) - len(hoisted)
        flat, tree = tree_util.tree_flatten(tuple(args_and_consts[:n_args]))
        if tree != in_tree:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same Pytree structure as "
                f"the example arguments passed when closure_convert was called. Expected {in_tree}, but got {tree}"
            )
        const_args, kept_values = iter(args_and_consts[n_args:]), iter(kept)
        consts = [next(const_args) if p else next(kept_values) for p in perturbed]
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, consts, *flat))

    return converted_fun, hoisted


class _StagedRule:
    """A ``custom_gradient`` rule staged as a jaxpr: ``Partial(rule, consts)(cts)``."""

    def __init__(self, closed: ClosedJaxpr, in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef) -> None:
        self.jaxpr, self.in_tree, self.out_tree = closed.jaxpr, in_tree, out_tree

    def __call__(self, consts: list[Any], cts: Any) -> tuple[Any, ...]:
        flat, tree = tree_util.tree_flatten((cts,))
        if tree != self.in_tree:
            raise TypeError(f"{self.in_tree}\n!=\n{tree}")
        out = tree_util.tree_unflatten(self.out_tree, eval_jaxpr(self.jaxpr, consts, *flat))
        return out if isinstance(out, tuple) else (out,)


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """TensorFlow-style custom gradients, as ``jax.custom_gradient``: ``fun`` returns
    ``(value, vjp_fn)``; differentiation calls ``vjp_fn(cotangent)``, whose result has one
    entry per argument of ``fun``."""

    @custom_vjp
    def wrapped_fun(*args: Any, **kwargs: Any) -> Any:
        ans, _ = fun(*args, **kwargs)
        return ans

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        ans, rule = fun(*args, **kwargs)
        closed, in_tree, out_tree = _stage(lambda ct: rule(ct), (ans,), f"custom_gradient rule of {fun_name(fun)}")
        return ans, tree_util.Partial(_StagedRule(closed, in_tree, out_tree), list(closed.consts))

    def bwd(res: Any, cts: Any) -> tuple[Any, ...]:
        result: tuple[Any, ...] = res(cts)
        return result

    wrapped_fun.defvjp(fwd, bwd)
    return wrapped_fun

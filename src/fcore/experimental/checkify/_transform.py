"""``checkify``: a jaxpr interpreter that threads an error value through a program.

``checkify(f)`` stages ``f`` and evaluates its jaxpr equation by equation under the current
trace (so it works eagerly, under ``jit``, ``vmap`` and ``grad``), as ``eval_jaxpr`` does, but
with an ``Error`` beside the values: a ``check`` equation is merged into it instead of being
bound, an equation whose primitive has a rule in ``checkify_rules`` may add automatic checks
(NaN, division by zero, out-of-bounds indexing), and a higher-order equation (``jit``,
``cond``, ``while``, ``scan``, ``remat``) is bound again on a checkified copy of its jaxprs
that takes and returns the error's leaves. Nothing is mutated: each step returns a new error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from fcore import tree_util
from fcore.api.staging import abstractify
from fcore.experimental.checkify._errors import Error, ErrorCategory, init_error, user_checks
from fcore.experimental.checkify._primitive import ErrorTree, check_p, merge_error
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import add_source_note, equation_source
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal
from fcore.ir.params import ParamValue
from fcore.ir.rules import RuleTable

Out = TypeVar("Out")
Enabled = frozenset[ErrorCategory]


class CheckifyRule(Protocol):
    """``(error, enabled checks, equation, operands) -> (error, results)``: binds the equation
    (or its checkified form) and adds the checks it calls for."""

    def __call__(self, error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]: ...


#: The checkify interpreter's rules; a primitive without one is bound as it is.
checkify_rules: RuleTable[CheckifyRule] = RuleTable("Checkify")


def checkify_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], enabled: Enabled, error: Error, args: Sequence[Any]) -> tuple[Error, list[Any]]:
    """Evaluate ``jaxpr`` on ``consts`` and ``args`` under the current trace, threading ``error``."""
    env: dict[int, Any] = {}
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[id(v)] = x
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[id(v)] = x

    def read(a: Any) -> Any:
        return ArrayImpl(np.asarray(a.val), a.aval.weak_type) if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        invals = [read(a) for a in eqn.invars]
        rule = checkify_rules.get(eqn.primitive)
        with equation_source(eqn):
            try:
                if rule is not None:
                    error, outs = rule(error, enabled, eqn, invals)
                else:
                    refuse_nested_checks(eqn)
                    out = eqn.primitive.bind(*invals, **eqn.params)
                    outs = list(out) if eqn.primitive.multiple_results else [out]
            except Exception as e:
                add_source_note(e, eqn)
                raise
        for v, x in zip(eqn.outvars, outs, strict=True):
            env[id(v)] = x
    return error, [read(a) for a in jaxpr.outvars]


def refuse_nested_checks(eqn: JaxprEqn) -> None:
    """A higher-order primitive checkify has no rule for must not hide a ``check``."""
    for p in eqn.params.values():
        if _holds_check(p):
            raise NotImplementedError(
                f"checkify of a `check` inside '{eqn.primitive.name}' is not supported; move the check "
                f"outside of '{eqn.primitive.name}' or checkify the function given to it"
            )


def _holds_check(p: ParamValue) -> bool:
    if isinstance(p, tuple):
        return any(_holds_check(q) for q in p)
    jaxpr = p.jaxpr if isinstance(p, ClosedJaxpr) else p if isinstance(p, Jaxpr) else None
    if jaxpr is None:
        return False
    return any(e.primitive is check_p or any(_holds_check(q) for q in e.params.values()) for e in jaxpr.eqns)


# -- checkified jaxprs for higher-order primitives ---------------------------------------------
ErrorFun = Callable[[Error, list[Any]], tuple[Error, list[Any]]]


def checkify_fun(
    fun: ErrorFun, error: Error, in_avals: Sequence[ShapedArray], n_before: int = 0, keep_error: bool = True
) -> tuple[ClosedJaxpr, Error]:
    """Stage ``fun`` (error and values in, error and values out) as a jaxpr over the error's
    leaves and the values: ``(*values[:n_before], *error leaves, *values[n_before:]) ->
    (*error leaves, *values)`` (without the error leaves when not ``keep_error``). Returns it
    and the output error (its leaves abstract: only its effects and metadata are meant)."""
    leaves, tree = tree_util.tree_flatten(error)
    n = len(leaves)
    out_errors: list[Error] = []

    def flat(*vals: Any) -> list[Any]:
        err_leaves = vals[n_before : n_before + n]
        values = [*vals[:n_before], *vals[n_before + n :]]
        err, outs = fun(tree_util.tree_unflatten(tree, err_leaves), values)
        out_errors.append(err)
        return [*tree_util.tree_flatten(err)[0], *outs] if keep_error else outs

    avals = [*in_avals[:n_before], *(abstractify(x) for x in leaves), *in_avals[n_before:]]
    closed = trace_to_jaxpr(flat, avals, "checkify")
    return closed, out_errors[0]


def jaxpr_fun(closed: ClosedJaxpr, enabled: Enabled) -> ErrorFun:
    def fun(error: Error, args: list[Any]) -> tuple[Error, list[Any]]:
        return checkify_jaxpr(closed.jaxpr, closed.consts, enabled, error, args)

    return fun


def split_error(out_error: Error, outs: Sequence[Any]) -> tuple[Error, list[Any]]:
    """The error (of ``out_error``'s structure) and the values of a checkified call's results."""
    leaves, tree = tree_util.tree_flatten(out_error)
    n = len(leaves)
    return tree_util.tree_unflatten(tree, outs[:n]), list(outs[n:])


# -- the public transformation --------------------------------------------------------------
def checkify(f: Callable[..., Out], errors: frozenset[ErrorCategory] = user_checks) -> Callable[..., tuple[Error, Out]]:
    """``checkify(f, errors)(*args)`` returns ``(error, f(*args))``: the ``check`` s in ``f`` and
    the automatic checks in ``errors`` (``user_checks`` by default; ``nan_checks``,
    ``div_checks``, ``index_checks``, or unions such as ``all_checks``) are functionalized into
    ``error``, whose ``get()`` is the first failure's message (``None`` if none failed)."""
    enabled = frozenset(errors)

    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Out]:
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        dynamic = [i for i, x in enumerate(flat) if isinstance(x, (Array, np.ndarray, np.generic))]
        out_trees: list[tree_util.PyTreeDef] = []

        def flat_fun(*vals: Any) -> list[Any]:
            leaves = list(flat)
            for i, v in zip(dynamic, vals):
                leaves[i] = v
            a, k = tree_util.tree_unflatten(in_tree, leaves)
            out, out_tree = tree_util.tree_flatten(f(*a, **k))
            out_trees.append(out_tree)
            return out

        closed = trace_to_jaxpr(flat_fun, [abstractify(flat[i]) for i in dynamic], "checkify")
        error, outs = checkify_jaxpr(closed.jaxpr, closed.consts, enabled, init_error, [flat[i] for i in dynamic])
        return error, tree_util.tree_unflatten(out_trees[0], outs)

    checked.__name__ = checked.__qualname__ = f"checkify({getattr(f, '__name__', type(f).__name__)})"
    checked.__doc__ = f.__doc__
    return checked


# -- check: merged into the error ------------------------------------------------------------
@checkify_rules.register(check_p)
def _check_rule(error: Error, enabled: Enabled, eqn: JaxprEqn, args: list[Any]) -> tuple[Error, list[Any]]:
    tree = eqn.params["err_tree"]
    assert isinstance(tree, ErrorTree)
    new: Error = tree_util.tree_unflatten(tree.treedef, args)
    # As in JAX, only the enabled categories are functionalized; the others are dropped.
    return merge_error(error, new, enabled), []

"""``fcore.ad_checkpoint`` as ``jax.ad_checkpoint``: names for values inside ``checkpoint``,
the policies that choose residuals by name, and ``print_saved_residuals`` to see what
differentiation keeps (docs/guide.md, "Checkpointing").

A policy is a parameter value of the ``remat2`` equation (``fcore.lax.remat``), so the
policies here build frozen values rather than closures: equal policies give equal jaxprs.
``Offloadable`` answers and the offload policies save the value, since fcore's one backend
has a single memory space.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from fcore import tree_util
from fcore.api.autodiff import vjp
from fcore.api.staging import make_jaxpr
from fcore.interpreters.array import Array
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Literal, Var
from fcore.lax.remat import (
    DotsSaveable,
    EitherSaves,
    EverythingSaveable,
    NothingSaveable,
    Offloadable as Offloadable,
    Recompute as Recompute,
    Saveable as Saveable,
    SaveNames,
    SavePolicy,
    as_policy,
    name_p,
)
from fcore.lax.remat import checkpoint_name as _name_one


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` (a pytree of arrays) unchanged, each leaf labelled ``name`` for the name
    policies of ``checkpoint``."""
    return tree_util.tree_map(lambda leaf: _name_one(leaf, name), x)


def save_only_these_names(*names_which_can_be_saved: str) -> SavePolicy:
    """Save only values named by ``checkpoint_name``, and only those among the names given."""
    return SaveNames(tuple(sorted(set(names_which_can_be_saved))), False)


def save_any_names_but_these(*names_not_to_save: str) -> SavePolicy:
    """Save only named values, except those with the names given."""
    return SaveNames(tuple(sorted(set(names_not_to_save))), True)


def save_anything_except_these_names(*names_not_to_save: str) -> SavePolicy:
    """JAX's policy of this name saves every value (its exclusion is not implemented there
    either); kept for programs that name it."""
    return EverythingSaveable()


def save_from_both_policies(policy_1: Callable[..., Any], policy_2: Callable[..., Any]) -> SavePolicy:
    """Save what either policy saves."""
    first, second = as_policy(policy_1), as_policy(policy_2)
    assert first is not None and second is not None
    return EitherSaves(first, second)


def save_and_offload_only_these_names(
    *, names_which_can_be_saved: Any, names_which_can_be_offloaded: Any, offload_src: str, offload_dst: str
) -> SavePolicy:
    """``save_only_these_names`` over both lists (offloading saves: one memory space)."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    intersection = saved & offloaded
    if intersection:
        raise ValueError(
            "The names should be exclusive and should not intersect in `names_which_can_be_saved` and "
            f"`names_which_can_be_offloaded`. Got names_which_can_be_saved={saved}, "
            f"names_which_can_be_offloaded={offloaded} and the intersection={intersection}"
        )
    return SaveNames(tuple(sorted(saved | offloaded)), False)


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> SavePolicy:
    """``dots_with_no_batch_dims_saveable`` (offloading saves: one memory space)."""
    return DotsSaveable(True)


class checkpoint_policies:  # noqa: N801  (JAX's namespace name)
    """Residual-saving policies for ``checkpoint(..., policy=...)``, as ``jax.checkpoint_policies``."""

    everything_saveable = EverythingSaveable()
    nothing_saveable = NothingSaveable()
    dots_saveable = checkpoint_dots = DotsSaveable(False)
    dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = DotsSaveable(True)
    offload_dot_with_no_batch_dims = staticmethod(offload_dot_with_no_batch_dims)
    save_anything_except_these_names = staticmethod(save_anything_except_these_names)
    save_any_names_but_these = staticmethod(save_any_names_but_these)
    save_only_these_names = staticmethod(save_only_these_names)
    save_from_both_policies = staticmethod(save_from_both_policies)
    save_and_offload_only_these_names = staticmethod(save_and_offload_only_these_names)


def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[ShapedArray, str]]:
    """What ``vjp(f, *args)`` keeps for the backward pass: each residual's type and where it
    comes from (an argument, a constant, a literal, or the equation that computes it)."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))

    def residuals_of(*flat: Array) -> list[Any]:
        a, kw = tree_util.tree_unflatten(in_tree, flat)
        _, f_vjp = vjp(lambda *a_: f(*a_, **kw), *a)
        return tree_util.tree_leaves(f_vjp)

    closed = make_jaxpr(residuals_of)(*leaves)
    jaxpr = closed.jaxpr
    names = _argument_names(f, args, kwargs)
    residuals = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    # JAX's order: literals, constants, arguments, then equations in program order.
    results = [(v.aval, "from a literal") for v in jaxpr.outvars if isinstance(v, Literal)]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if id(v) in residuals]
    results += [(v.aval, f"from the argument {n}") for v, n in zip(jaxpr.invars, names) if id(v) in residuals]
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if id(v) not in residuals:
                continue
            where = "unknown" if eqn.source_info is None else eqn.source_info.summary()
            if eqn.primitive is name_p:
                results.append((v.aval, f"named '{eqn.params['name']}' from {where}"))
            elif eqn.primitive.name == "jit":
                results.append((v.aval, f"output of jitted function '{eqn.params['name']}' from {where}"))
            else:
                results.append((v.aval, f"output of {eqn.primitive.name} from {where}"))
    return results


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print ``saved_residuals(f, *args, **kwargs)`` one residual per line, as JAX does."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {src}")


def _argument_names(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """JAX's names of the flattened arguments: the parameter's name and the leaf's key path."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        params: list[tuple[str, Any]] = list(bound.arguments.items())
        positional = [(n, v) for n, v in params if n not in kwargs]
        keyword = [(n, kwargs[n]) for n in kwargs]
    except (TypeError, ValueError):
        positional = [(f"args[{i}]", a) for i, a in enumerate(args)]
        keyword = [(n, v) for n, v in kwargs.items()]
    names: list[str] = []
    for name, value in positional + keyword:
        for path, _ in tree_util.tree_flatten_with_path(value)[0]:
            names.append(f"{name}{tree_util.keystr(path)}")
    if len(names) != len(tree_util.tree_leaves((args, kwargs))):
        return [f"at flattened index {i}" for i in range(len(tree_util.tree_leaves((args, kwargs))))]
    return names


"""The function ``fcore.vjp`` returns: a first-class ``VJP`` object, as ``jax.vjp``'s.

It is a pytree whose leaves are the saved residuals, split as JAX splits them: ``args_res``
mirrors the arguments (each leaf the argument value the backward pass reads verbatim, or a
``NotNeeded()`` placeholder), ``opaque_residuals`` holds the values computed by the forward
pass. So it passes into and out of ``jit``, and its saved state can be read and replaced
(``f_vjp.args_res[0] = W``). ``with_refs`` picks, per argument, whether its cotangent is
returned (``GradValue()``), accumulated into a ``Ref`` or not wanted (``DontWant()``); these
markers are ``fcore.ad``'s, as they are ``jax.ad``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from fcore import tree_util
from fcore.api.refs import Ref, addupdate
from fcore.ir.core import Jaxpr

__all__ = ["VJP", "DidntWant", "DontWant", "GradRef", "GradValue", "NotNeeded", "VjpFun", "make_vjp"]


@dataclasses.dataclass(frozen=True, slots=True)
class NotNeeded:
    """In ``VJP.args_res``: the backward pass does not read this argument, so it is not saved."""


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """``with_refs`` marker: return this argument's cotangent (the default)."""


@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """In ``with_refs``'s result: the cotangent went into the ``Ref`` given for it."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """``with_refs`` marker: this argument's cotangent is not wanted."""


@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """In ``with_refs``'s result: the place of a cotangent marked ``DontWant()``."""


for _empty_node in (NotNeeded, GradRef, DidntWant):
    tree_util.register_dataclass(_empty_node, data_fields=[], meta_fields=[])

#: One flat residual: ``(True, i)`` is leaf ``i`` of the arguments, ``(False, i)`` opaque residual ``i``.
ResidualSpec = tuple[tuple[bool, int], ...]


class VjpFun:
    """The static part of a ``VJP`` (its treedef's aux data): where each residual comes from,
    and the pullback ``(flat residuals, out_ct, *extra) -> flat cotangents``."""

    def __init__(self, spec: ResidualSpec, jaxpr: Jaxpr, pullback: Callable[..., list[Any]]) -> None:
        self.spec, self.jaxpr, self.pullback = spec, jaxpr, pullback

    def residuals(self, args_res: Sequence[Any], opaque_residuals: Sequence[Any]) -> list[Any]:
        """The flat residuals the linear jaxpr takes, gathered from the two channels."""
        arg_leaves = tree_util.tree_leaves(list(args_res), is_leaf=_is_not_needed)
        missing = [i for from_arg, i in self.spec if from_arg and _is_not_needed(arg_leaves[i])]
        if missing:
            raise ValueError(
                "VJP function called with NotNeeded() in args_res where the backward pass needs the "
                f"argument value (flat argument leaves {missing}): assign the argument back first."
            )
        return [arg_leaves[i] if from_arg else opaque_residuals[i] for from_arg, i in self.spec]

    def __call__(
        self, in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef, args_res: Sequence[Any],
        opaque_residuals: Sequence[Any], *maybe_ct_refs: Any,
    ) -> tree_util.Partial:
        """``jax``'s ``_vjp3_callable``: the backward function, a ``Partial`` over the residuals."""
        if maybe_ct_refs:
            markers, tree = tree_util.tree_flatten(maybe_ct_refs)
            if tree != in_tree:
                raise ValueError(
                    f"VJP.with_refs expects one marker or Ref per argument leaf, structured as {in_tree}; "
                    f"got {tree}."
                )
        else:
            markers = [GradValue()] * in_tree.num_leaves
        kinds = tuple(_marker_kind(m) for m in markers)
        refs = [m for m in markers if isinstance(m, Ref)]
        backward = _Backward(self.pullback, in_tree, kinds)
        return tree_util.Partial(backward, self.residuals(args_res, opaque_residuals), refs)


def _is_not_needed(x: Any) -> bool:
    return isinstance(x, NotNeeded)


def _marker_kind(m: Any) -> str:
    if isinstance(m, GradValue):
        return "value"
    if isinstance(m, DontWant):
        return "dont_want"
    if isinstance(m, Ref):
        return "ref"
    raise TypeError(
        f"VJP.with_refs takes fcore.ad.GradValue(), fcore.ad.DontWant() or a Ref for each argument leaf, got {m!r}."
    )


class _Backward:
    """``(residuals, refs, out_ct) -> cotangents``: values, ``GradRef()`` where a ``Ref`` was
    accumulated into, ``DidntWant()`` where none was wanted."""

    def __init__(self, pullback: Callable[..., list[Any]], in_tree: tree_util.PyTreeDef, kinds: tuple[str, ...]) -> None:
        self.pullback, self.in_tree, self.kinds = pullback, in_tree, kinds

    def __call__(self, residuals: list[Any], refs: list[Any], out_ct: Any, *extra: Any) -> Any:
        cts = self.pullback(residuals, out_ct, *extra)
        if all(k == "value" for k in self.kinds):
            return self.in_tree.unflatten(cts)
        ref_iter = iter(refs)
        out: list[Any] = []
        for kind, ct in zip(self.kinds, cts):
            if kind == "ref":
                addupdate(next(ref_iter), ..., ct)
                out.append(GradRef())
            else:
                out.append(ct if kind == "value" else DidntWant())
        return self.in_tree.unflatten(out)


@dataclasses.dataclass(slots=True, weakref_slot=True, eq=False)
class VJP:
    """``f_vjp`` of ``out, f_vjp = fcore.vjp(f, *args)``: ``f_vjp(out_ct)`` is the tuple of
    argument cotangents. Compared and hashed by identity, as JAX's (its residuals may change)."""

    fun: VjpFun
    in_tree: tree_util.PyTreeDef
    out_tree: tree_util.PyTreeDef
    args_res: list[Any]
    opaque_residuals: list[Any]

    @property
    def jaxpr(self) -> Jaxpr:
        """The linear jaxpr the backward pass transposes: residuals are its constvars."""
        return self.fun.jaxpr

    if TYPE_CHECKING:
        # One cotangent: a second argument is a static error (at run time JAX's TypeError below).
        def __call__(self, out_ct: Any, /) -> tuple[Any, ...]: ...
    else:

        def __call__(self, out_ct, *extra_args):
            residuals = self.fun.residuals(self.args_res, self.opaque_residuals)
            return self.in_tree.unflatten(self.fun.pullback(residuals, out_ct, *extra_args))

    def with_refs(self, *maybe_ct_refs: Any) -> tree_util.Partial:
        """The backward function, with per argument leaf ``GradValue()``, ``DontWant()`` or a ``Ref``
        to add the cotangent into (``maybe_ct_refs`` structured as the arguments)."""
        return self.fun(self.in_tree, self.out_tree, self.args_res, self.opaque_residuals, *maybe_ct_refs)


def _flatten_vjp(v: VJP) -> tuple[tuple[list[Any], list[Any]], tuple[VjpFun, tree_util.PyTreeDef, tree_util.PyTreeDef]]:
    return (v.args_res, v.opaque_residuals), (v.fun, v.in_tree, v.out_tree)


def _unflatten_vjp(meta: tuple[VjpFun, tree_util.PyTreeDef, tree_util.PyTreeDef], children: Sequence[Any]) -> VJP:
    args_res, opaque = children
    return VJP(*meta, list(args_res), list(opaque))


tree_util.register_pytree_node(VJP, _flatten_vjp, _unflatten_vjp)


def make_vjp(
    args: Sequence[Any], in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef, jaxpr: Jaxpr,
    residuals: Sequence[Any], pullback: Callable[..., list[Any]],
) -> VJP:
    """Split ``residuals`` into the argument leaves saved verbatim (found by identity, as JAX does)
    and the opaque rest; ``args`` are the flat argument leaves."""
    arg_index = {id(x): i for i, x in enumerate(args)}
    used: set[int] = set()
    opaque: list[Any] = []
    spec: list[tuple[bool, int]] = []
    for r in residuals:
        i = arg_index.get(id(r))
        if i is None:
            spec.append((False, len(opaque)))
            opaque.append(r)
        else:
            used.add(i)
            spec.append((True, i))
    kept = [x if i in used else NotNeeded() for i, x in enumerate(args)]
    args_res = in_tree.walk(lambda xs, _: tuple(xs), lambda x: x, kept)
    return VJP(VjpFun(tuple(spec), jaxpr, pullback), in_tree, out_tree, list(args_res), opaque)

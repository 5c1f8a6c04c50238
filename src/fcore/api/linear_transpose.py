"""``linear_transpose``: the transpose of a function promised to be linear, without its
forward pass (docs/guide.md, "Differentiation"): stage it, then run the transpose pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fcore import tree_util
from fcore.api.staging import abstractify, fun_name
from fcore.interpreters.eval import get_aval
from fcore.interpreters.eval_jaxpr import eval_jaxpr
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Jaxpr
from fcore.transforms.transpose import transpose_open


class _Transposed:
    """``(consts, out_cotangent) -> in_cotangents``: the static part of the ``Partial``."""

    def __init__(self, jaxpr: Jaxpr, extra: list[Any], in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef,
                 in_avals: list[ShapedArray], out_avals: list[ShapedArray]) -> None:
        self.jaxpr, self.extra = jaxpr, extra
        self.in_tree, self.out_tree, self.in_avals, self.out_avals = in_tree, out_tree, in_avals, out_avals

    def __call__(self, consts: list[Any], out_cotangent: Any) -> Any:
        cts, tree = tree_util.tree_flatten(out_cotangent)
        if tree != self.out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected {self.out_tree} but got {tree}")
        got = [get_aval(c) for c in cts]
        if any(g.shape != a.shape or g.dtype != a.dtype for g, a in zip(got, self.out_avals)):
            raise TypeError(f"cotangent type does not match function output, expected {self.out_avals} but got {cts}")
        in_cts = eval_jaxpr(self.jaxpr, [*consts, *self.extra], *cts)
        return tree_util.tree_unflatten(self.in_tree, in_cts)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The transpose of the linear ``fun`` at arguments of ``primals``' types (arrays or
    ``ShapeDtypeStruct`` s): a ``Partial`` taking a cotangent of ``fun``'s output and
    returning a tuple of cotangents with ``primals``' structure and dtypes."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    flat, in_tree = tree_util.tree_flatten(primals)
    in_avals = [abstractify(x).strip_weak_type() for x in flat]
    out_trees: list[tree_util.PyTreeDef] = []

    def flat_fun(*leaves: Any) -> list[Any]:
        out, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out

    closed = trace_to_jaxpr(flat_fun, in_avals, f"linear_transpose({fun_name(fun)})")
    out_avals = closed.out_avals
    kinds = [a.dtype for a in in_avals + out_avals]
    if not (all(dtypes.is_inexact(d) for d in kinds) or all(dtypes.is_integer(d) for d in kinds)):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and integer -> integer "
            f"functions, but got {[a.dtype for a in in_avals]} -> {[a.dtype for a in out_avals]}."
        )
    jaxpr, extra = transpose_open(closed.jaxpr, [True] * len(in_avals))
    transposed = _Transposed(jaxpr, extra, in_tree, out_trees[0], in_avals, out_avals)
    return tree_util.Partial(transposed, list(closed.consts))

"""``custom_lin``: the staged linear map of a ``custom_vjp`` function, transposed by the user's bwd.

Under ``linearize``/``grad`` the tangent of a ``custom_vjp`` call is this one equation; its
transpose rule calls the user's ``bwd`` with the residuals. It has no forward-mode
evaluation, as in JAX (forward mode of a custom_vjp function is an error).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fcore import tree_util
from fcore.ir.avals import ShapedArray
from fcore.ir.params import ParamStruct
from fcore.ir.primitive import Primitive
from fcore.transforms.ad_util import instantiate, is_undefined


class CustomVJPRule(ParamStruct):
    """The user's ``bwd`` with the tree structures it needs (compared by identity; not parseable)."""

    __slots__ = ("bwd", "res_tree", "in_tree", "out_tree", "out_avals", "name")

    def __init__(
        self,
        bwd: Callable[..., Any],
        res_tree: tree_util.PyTreeDef,
        in_tree: tree_util.PyTreeDef,
        out_tree: tree_util.PyTreeDef,
        out_avals: Sequence[ShapedArray],
        name: str,
    ) -> None:
        self.bwd = bwd
        self.res_tree = res_tree
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        self.name = name

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"CustomVJPRule({self.name})"


custom_lin_p = Primitive("custom_lin", multiple_results=True, param_names=("num_res", "rule"))


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals: ShapedArray, num_res: int, rule: CustomVJPRule) -> list[ShapedArray]:
    return [a.strip_weak_type() for a in rule.out_avals]


@custom_lin_p.def_impl
def _custom_lin_impl(*args: Any, num_res: int, rule: CustomVJPRule) -> list[Any]:
    raise TypeError(
        f"can't apply forward-mode autodiff (jvp) to a custom_vjp function ({rule.name}); "
        "use grad/vjp, or define the derivative with custom_jvp instead"
    )


@custom_lin_p.def_transpose
def _custom_lin_transpose(cts: list[Any], *invals: Any, num_res: int, rule: CustomVJPRule) -> list[Any]:
    res = tree_util.tree_unflatten(rule.res_tree, invals[:num_res])
    ct_tree = tree_util.tree_unflatten(rule.out_tree, [instantiate(c) for c in cts])
    cts_in = rule.bwd(res, ct_tree)
    if not isinstance(cts_in, tuple):
        raise TypeError(f"custom_vjp bwd of {rule.name} must return a tuple (one cotangent per primal input)")
    flat = tree_util.tree_leaves(cts_in, is_leaf=lambda x: x is None)
    lin = invals[num_res:]
    if len(flat) != len(lin):
        raise ValueError(
            f"custom_vjp bwd of {rule.name} returned {len(flat)} cotangent leaves for {len(lin)} primal input leaves"
        )
    out: list[Any] = [None] * num_res
    for x, c in zip(lin, flat):
        out.append(None if c is None or not is_undefined(x) else c)
    return out



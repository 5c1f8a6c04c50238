"""``fcore.interpreters.batching`` as ``jax.interpreters.batching``: how code written for JAX gives
its own primitives a batching rule. ``primitive_batchers`` is a view of fcore's
``batching_rules`` (docs/adding_a_primitive.md, "Rules written JAX's way"); a JAX rule has no
``axis_size`` argument, which the adapter drops.

This is a public facade at JAX's module path: it sits above ``fcore.transforms``, and nothing
in fcore imports it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from fcore.interpreters.eval import get_aval
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.interpreters._rule_views import JaxRule, RuleView
from fcore.transforms import batching as _batching
from fcore.transforms.ad_util import vspace
from fcore.transforms.batching import Dim, batching_rules

__all__ = ["bdim_at_front", "broadcast", "defbroadcasting", "defreducer", "defvectorized", "primitive_batchers"]


def _register(prim: Primitive[Any], rule: JaxRule) -> Any:
    @functools.wraps(rule)
    def adapter(axis_size: int, vals: list[Any], dims: list[Dim], **params: ParamValue) -> tuple[Any, Any]:
        return rule(tuple(vals), tuple(dims), **params)  # type: ignore[no-any-return]  # (tuples, as in JAX)

    return batching_rules.register(prim)(adapter)


def _axis_size(vals: Sequence[Any], dims: Sequence[Dim]) -> int:
    for v, d in zip(vals, dims):
        if d is not None:
            return get_aval(v).shape[d]
    raise ValueError("a batching rule was called with no batched operand")


def _from_table(prim: Primitive[Any], rule: Any) -> JaxRule:
    """fcore's own rule in JAX's convention: the axis size is read off a batched operand."""

    def jax_rule(vals: Sequence[Any], dims: Sequence[Dim], **params: ParamValue) -> tuple[Any, Any]:
        return rule(_axis_size(vals, dims), list(vals), list(dims), **params)  # type: ignore[no-any-return]

    return jax_rule


#: ``primitive_batchers[p] = rule``: ``rule(vals, dims, **params) -> (out, out_dim)``, where an
#: unbatched operand's dim is ``None``.
primitive_batchers = RuleView(batching_rules, _register, _from_table)


def defvectorized(prim: Primitive[Any]) -> None:
    """An elementwise unary primitive: applied to the batched operand as it is."""
    _batching.defvectorized(prim)


def defbroadcasting(prim: Primitive[Any]) -> None:
    """An elementwise primitive of several operands (NumPy-style broadcasting of size-1 axes)."""
    _batching.defbroadcasting(prim)


def defreducer(prim: Primitive[Any], ident: object = None) -> None:
    """A reduction with an ``axes`` parameter: the axes move past the batch axis (``ident`` is
    JAX's identity element, unused here: fcore batches without padding)."""

    def rule(vals: list[Any], dims: list[Dim], *, axes: Sequence[int], **params: ParamValue) -> tuple[Any, Any]:
        (operand,), (bdim,) = vals, dims
        assert bdim is not None  # only batched operands reach a batching rule
        moved = tuple(int(a) if a < bdim else int(a) + 1 for a in axes)
        ndim = get_aval(operand).ndim
        out_dim = [i for i in range(ndim) if i not in moved].index(bdim)
        if "input_shape" in params:
            params = dict(params, input_shape=tuple(get_aval(operand).shape))
        return prim.bind(operand, axes=moved, **params), out_dim

    primitive_batchers[prim] = rule


def bdim_at_front(x: Any, bdim: Dim, size: int) -> Any:
    """``x`` with its batch axis first (an unbatched ``x`` broadcast to ``size`` along it)."""
    return _batching.bdim_at(x, bdim, size, 0)


def broadcast(x: Any, sz: int, axis: int, mesh_axis: object = None) -> Any:
    """``x`` with a new axis of size ``sz`` inserted at ``axis``."""
    return vspace().broadcast_batched(x, sz, int(axis))

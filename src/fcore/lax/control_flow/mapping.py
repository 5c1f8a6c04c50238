"""``lax.map``: apply a function over the leading axis as a ``scan`` (optionally in batches)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fcore import tree_util
from fcore.lax._base import shape_of
from fcore.lax.control_flow.loops import scan
from fcore.lax.shapes import concatenate, reshape
from fcore.lax.slicing import slice_in_dim


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 - JAX's name
    """``lax.map(f, xs)``: ``f`` applied to each slice of ``xs`` along the leading axis, stacked,
    computed by a ``scan``. With ``batch_size``, ``vmap(f)`` runs on batches of that many
    slices (the remainder in one more ``vmap``), as ``jax.lax.map`` does."""
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    if batch_size <= 0:  # JAX fails in its reshape; say why instead
        raise ValueError(f"lax.map batch_size must be positive, got {batch_size}")
    from fcore.api.vectorize import vmap  # the API layer sits above lax

    scan_xs, rest_xs = _batch_and_remainder(xs, batch_size)
    _, scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)
    ys = tree_util.tree_map(lambda y: reshape(y, (shape_of(y)[0] * shape_of(y)[1], *shape_of(y)[2:])), scan_ys)
    if rest_xs is None:
        return ys
    rest_ys = vmap(f)(rest_xs)
    return tree_util.tree_map(lambda a, b: concatenate([a, b], 0), ys, rest_ys)


def _batch_and_remainder(xs: Any, batch_size: int) -> tuple[Any, Any]:
    leaves, tree = tree_util.tree_flatten(xs)
    if not leaves:
        return xs, None
    num_batches, remainder = divmod(shape_of(leaves[0])[0], batch_size)
    total = num_batches * batch_size
    batched = [
        reshape(slice_in_dim(leaf, 0, total) if remainder else leaf, (num_batches, batch_size, *shape_of(leaf)[1:]))
        for leaf in leaves
    ]
    if not remainder:
        return tree.unflatten(batched), None
    rest = [slice_in_dim(leaf, total, shape_of(leaf)[0]) for leaf in leaves]
    return tree.unflatten(batched), tree.unflatten(rest)

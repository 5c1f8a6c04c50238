"""``lax.pcast``: change which mesh axes a ``shard_map`` value is typed as varying, reduced or
unreduced over (JAX's varying-manual-axes casts).

fcore's ``shard_map`` has no such types: every value behaves as JAX's do under
``check_vma=False``, where each value is invarying in its type and the casts to ``varying``
and ``reduced`` are the identity (``to='unreduced'`` has no cast from invarying). As in JAX,
the axes must be ``shard_map`` (manual) axes.
"""

from __future__ import annotations

from typing import Any, cast

from fcore import tree_util
from fcore.lax.parallel import manual_axes

__all__ = ["pcast"]

_ALLOWED_TO = {"unreduced", "reduced", "varying"}
#: The primitive JAX binds for each cast, named in its error outside ``shard_map``.
_CAST_NAME = {"varying": "pvary", "reduced": "preduced"}


def pcast(x: Any, axis_name: str | tuple[str, ...], *, to: str) -> Any:
    """``x`` (a pytree) cast ``to`` varying / reduced over the manual axes ``axis_name``: the
    same values (fcore types no value as varying)."""
    if isinstance(cast(object, axis_name), (set, frozenset)):  # typed away, passed anyway
        raise TypeError(f"{axis_name=} must be a tuple or a str. Got {axis_name}")
    axes = (axis_name,) if not isinstance(axis_name, tuple) else axis_name
    if not axis_name:
        return x
    if to not in _ALLOWED_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_ALLOWED_TO}")

    def cast_leaf(leaf: Any) -> Any:
        if to == "unreduced":
            raise ValueError(f"Unsupported pcast from=invarying, {to=}")
        if not manual_axes(axes):
            raise ValueError(f"{_CAST_NAME[to]} should be called under jax.shard_map.")
        return leaf

    return tree_util.tree_map(cast_leaf, x)

"""``vmap``'s error messages, worded as JAX's so that ported code and tests recognise them:
axis specifications that are not tree prefixes of the values, and inconsistent axis sizes.
Arguments are named by parameter name and key path (``argument p['v'][0]``).
"""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore import tree_util
from fcore.api._diff_args import type_str
from fcore.api._float0 import float0, is_float0
from fcore.interpreters.eval import get_aval


def _children(x: Any) -> tuple[list[str], list[Any]] | None:
    """Key strings and children of a container node (None for leaves and other node types)."""
    if isinstance(x, dict):
        keys = list(x) if isinstance(x, collections.OrderedDict) else sorted(x)
        return [f"[{k!r}]" for k in keys], [x[k] for k in keys]
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return [f".{f}" for f in getattr(type(x), "_fields")], list(x)
    if isinstance(x, (tuple, list)):
        return [f"[{i}]" for i in range(len(x))], list(x)
    return None


def _prefix_errors(name: str, path: str, prefix: Any, full: Any) -> list[str]:
    """Why ``prefix`` is not a tree prefix of ``full`` (JAX's ``prefix_errors``); ``None`` is a leaf."""
    if prefix is None or tree_util.treedef_is_leaf(tree_util.tree_structure(prefix)):
        return []
    where = f"at key path\n    {name}{path}\nAt that key path, the prefix pytree {name} has a subtree of type"
    if type(prefix) is not type(full):
        return [
            f"pytree structure error: different types {where}\n    {type(prefix)}\nbut at the same key path "
            f"the full pytree has a subtree of different type\n    {type(full)}."
        ]
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        ty = type(prefix).__name__
        return [
            f"pytree structure error: different lengths of {ty} at key path\n    {name}{path}\nAt that key "
            f"path, the prefix pytree {name} has a subtree of type {ty} of length {len(prefix)}, but the full "
            f"pytree has a subtree of the same type but of length {len(full)}."
        ]
    p_nodes, f_nodes = _children(prefix), _children(full)
    if p_nodes is None or f_nodes is None:
        return [f"pytree structure error: different pytree metadata {where}\n    {type(prefix)}."]
    (p_keys, p_children), (f_keys, f_children) = p_nodes, f_nodes
    if len(p_keys) != len(f_keys):
        return [
            f"pytree structure error: different numbers of pytree children {where}\n    {type(prefix)}\nwith "
            f"{len(p_keys)} child keys\n    {' '.join(p_keys)}\nbut at the same key path the full pytree has a "
            f"subtree of the same type but with {len(f_keys)} child keys\n    {' '.join(f_keys)}"
        ]
    if p_keys != f_keys:
        return [
            f"pytree structure error: different pytree metadata {where}\n    {type(prefix)}\nwith metadata\n    "
            f"{' '.join(p_keys)}\nbut at the same key path the full pytree has a subtree of the same type but "
            f"with metadata\n    {' '.join(f_keys)}"
        ]
    return [e for k, p, f in zip(p_keys, p_children, f_children) for e in _prefix_errors(name, path + k, p, f)]


def not_a_prefix(name: str, prefix: Any, full: Any, detail: str) -> ValueError:
    errors = _prefix_errors(name, "", prefix, full)
    details = "\n  ".join(errors) if errors else detail
    return ValueError(
        f"{name} specification must be a tree prefix of the corresponding value; \n"
        f"  Mismatch details ({max(len(errors), 1)} found):\n  {details}"
    )


def _argument_type(x: Any) -> str:
    if is_float0(x):
        return type_str(np.shape(x), float0)
    try:
        aval = get_aval(x)
    except TypeError:
        return "unknown"
    return type_str(aval.shape, aval.dtype)


def inconsistent_sizes(
    fun: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    flat: Sequence[Any],
    axes: Sequence[int | None],
    sizes: Sequence[int | None],
    axis_size: int | None,
) -> ValueError:
    """JAX's message: each distinct size, with one argument that has it."""
    try:
        params: list[str] | None = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None
    paths: list[str] = []
    for path, _ in tree_util.tree_leaves_with_path(tuple(args)):
        i = path[0].idx if isinstance(path[0], tree_util.SequenceKey) else len(args)
        head = f"argument {params[i]}" if params is not None and i < len(params) else f"args[{i}]"
        paths.append(head + tree_util.keystr(path[1:]))
    paths += ["kwargs" + tree_util.keystr(path) for path, _ in tree_util.tree_leaves_with_path(kwargs)]
    examples = [f"{p} of type {_argument_type(x)}" for p, x in zip(paths, flat)]
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};")
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    for rank, (size, count) in enumerate(counts):
        i = sizes.index(size)
        example = f"axis {axes[i]} of {examples[i]}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {example};")
        else:
            lines.append(f"  * {'most' if rank == 0 else 'some'} axes ({count} of them) had size {size}, e.g. {example};")
    return ValueError("\n".join(lines)[:-1])

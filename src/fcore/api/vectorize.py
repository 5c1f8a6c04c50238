"""``vmap``: vectorizing a function over a leading (or any) axis of its arguments."""

from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from fcore import tree_util
from fcore.api.staging import fun_name
from fcore.interpreters.eval import get_aval
from fcore.interpreters.stack import current_trace, set_current_trace, trace_scope
from fcore.ir import dtypes
from fcore.transforms.batching import BatchTrace, BatchTracer, bdim_at


def _check_axis(axis: Any, what: str) -> int | None:
    if axis is None or isinstance(axis, int):
        return axis
    raise ValueError(f"vmap {what} must be an int, None, or a pytree prefix of them; got {axis!r}")


def _leaf_paths(treedef: tree_util.PyTreeDef, prefix: str) -> list[str]:
    """The key path of each leaf of ``treedef`` after ``prefix`` (``['a'][0]``, as JAX's ``keystr``)."""
    if treedef.num_leaves == 0:
        return []
    node = treedef.node_data()
    if node is None:
        return [prefix]
    typ, data = node
    children = treedef.children()
    if issubclass(typ, dict) and isinstance(data, (list, tuple)):
        keys = [f"[{k!r}]" for k in data]
    elif issubclass(typ, tuple) and hasattr(typ, "_fields"):
        keys = [f".{name}" for name in typ._fields]
    else:
        keys = [f"[{i}]" for i in range(len(children))]
    return [path for key, child in zip(keys, children) for path in _leaf_paths(child, prefix + key)]


def _inconsistent_sizes(
    fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, flat: Sequence[Any], axes: Sequence[int | None],
    sizes: dict[int, int], axis_size: int | None,
) -> ValueError:
    """JAX's message: each distinct size with one argument (by parameter name and key path) that has it."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    paths: list[str] = []
    for i, child in enumerate(in_tree.children()):
        named = i < len(params) and params[i].kind in positional
        paths += _leaf_paths(child, f"argument {params[i].name}" if named else f"args[{i}]")
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};")
    counts = collections.Counter(sizes.values()).most_common()
    for rank, (size, count) in enumerate(counts):
        i = next(k for k, s in sizes.items() if s == size)
        aval = get_aval(flat[i])
        example = f"axis {axes[i]} of {paths[i]} of type {dtypes.dtype_name(aval.dtype)}[{','.join(map(str, aval.shape))}]"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {example};")
        else:
            many = "most" if rank == 0 else "some"
            lines.append(f"  * {many} axes ({count} of them) had size {size}, e.g. {example};")
    return ValueError("\n".join(lines)[:-1])


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
) -> Callable[..., Any]:
    """Vectorize ``fun``: ``in_axes``/``out_axes`` are pytree prefixes of ints or ``None``."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("vmap does not support keyword arguments; pass them positionally")
        flat, in_tree = tree_util.tree_flatten(args)
        try:
            axes = tree_util.broadcast_prefix(
                in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), args, is_leaf=lambda x: x is None
            )
        except ValueError as e:
            raise ValueError(
                f"vmap in_axes must be a tree prefix of the arguments of {fun_name(fun)}: {e}"
            ) from None
        axes = [_check_axis(a, "in_axes") for a in axes]
        sizes = {}
        for i, (x, ax) in enumerate(zip(flat, axes)):
            if ax is None:
                continue
            aval = get_aval(x)
            if not -aval.ndim <= ax < aval.ndim:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies that its rank "
                    f"should be at least {ax + 1 if ax >= 0 else -ax}, but is only {aval.ndim} "
                    f"(its shape is {aval.shape})"
                )
            sizes[i] = aval.shape[ax]
        size_set = set(sizes.values())
        if axis_size is not None:
            size_set.add(axis_size)
        if not size_set:
            raise ValueError("vmap must have at least one non-None value in in_axes (or pass axis_size)")
        if len(size_set) > 1:
            raise _inconsistent_sizes(fun, in_tree, flat, axes, sizes, axis_size)
        n = size_set.pop()
        trace = BatchTrace(current_trace(), n, f"vmap({fun_name(fun)})")
        with trace_scope(trace):
            tracers = [
                x if ax is None else BatchTracer(trace, x, ax % get_aval(x).ndim) for x, ax in zip(flat, axes)
            ]
            out = fun(*tree_util.tree_unflatten(in_tree, tracers))
            out_flat, out_tree = tree_util.tree_flatten(out)
            pairs = [trace.unpack(o) for o in out_flat]
        try:
            o_axes = tree_util.broadcast_prefix(out_axes, out, is_leaf=lambda x: x is None)
        except ValueError as e:
            raise ValueError(f"vmap out_axes must be a tree prefix of the outputs of {fun_name(fun)}: {e}") from None
        results = []
        with set_current_trace(trace.parent):
            for (v, d), want in zip(pairs, o_axes):
                want = _check_axis(want, "out_axes")
                if want is None:
                    if d is not None:
                        raise ValueError(
                            f"vmap has mapped output but out_axes is None (output of shape {get_aval(v).shape})"
                        )
                    results.append(v)
                else:
                    rank = get_aval(v).ndim + (1 if d is None else 0)
                    results.append(bdim_at(v, d, n, want % rank))
        return tree_util.tree_unflatten(out_tree, results)

    return vmapped

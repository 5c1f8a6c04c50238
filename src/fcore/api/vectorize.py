"""``vmap``: vectorizing a function over an axis of its arguments, as ``jax.vmap``.

``in_axes`` covers the positional arguments (keyword arguments are always mapped over axis 0),
``out_axes`` the outputs; both are pytree prefixes of ints and ``None`` (unmapped). ``float0``
arrays (tangents of integers) have no values to batch: they are sliced and re-broadcast here.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np

from fcore import tree_util
from fcore.api._diff_args import check_callable, typeof
from fcore.api._float0 import float0_zeros, is_float0
from fcore.api._vmap_errors import inconsistent_sizes, not_a_prefix
from fcore.api.refs import Ref, read, write
from fcore.api.staging import fun_name
from fcore.interpreters.eval import get_aval
from fcore.interpreters.stack import current_trace, set_current_trace, trace_scope
from fcore.interpreters.trace import Tracer, transform_name_stack
from fcore.lax.parallel import vmap_axis
from fcore.transforms.batching import BatchTrace, BatchTracer, bdim_at

#: jaxlib's C++ flattener, called directly on this hot path (no Python frame in between).
_flatten = tree_util.default_registry.flatten


def _check_axes_spec(name: str, axes: Any) -> None:
    if not all(type(leaf) is int for leaf in tree_util.tree_leaves(axes)):
        raise TypeError(f"vmap {name} must be an int, None, or (nested) container with those types as leaves, but got {axes}.")


def _broadcast_axes(name: str, axes: Any, tree: Any, shown: tuple[Any, Any] | None = None) -> list[Any]:
    """One axis per leaf of ``tree``. A prefix error names the mismatch between ``shown``'s
    (prefix, value) pair, by default ``(axes, tree)`` (``vmap`` shows only the positional part)."""
    try:
        return tree_util.broadcast_prefix(axes, tree)
    except ValueError as e:
        prefix, full = (axes, tree) if shown is None else shown
        raise not_a_prefix(name, prefix, full, str(e)) from None


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)) if is_float0(x) or isinstance(x, Ref) else typeof(x).shape


def _mapped_axis(x: Any, axis: int | None) -> tuple[int | None, int | None]:
    """(size, non-negative axis) of the mapped axis of argument leaf ``x``; (None, None) if unmapped."""
    if axis is None:
        return None, None
    shape = _shape(x)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(
            f"vmap was requested to map its argument along axis {axis}, which implies that its rank should be "
            f"at least {axis + 1 if axis >= 0 else -axis}, but is only {len(shape)} (its shape is {shape})"
        )
    return shape[axis], axis % len(shape)


def _check_output(x: Any) -> None:
    if isinstance(x, Tracer) or is_float0(x):
        return
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a valid JAX type") from None


P = ParamSpec("P")
R = TypeVar("R")


def vmap(
    fun: Callable[P, R],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
) -> Callable[P, R]:
    """Vectorize ``fun``; ``in_axes``/``out_axes`` are pytree prefixes of ints or ``None``.

    ``axis_name`` names the mapped axis for the collectives of ``fcore.lax`` (``psum``,
    ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index``); ``spmd_axis_name`` is
    accepted for JAX compatibility.
    """
    check_callable(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
            f"arguments passed to the function, but got {in_axes}."
        )
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                f"arguments passed to the function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)} "
                "(a tuple in_axes is a tree prefix of the tuple of positional arguments)"
            )
        flat, in_tree = _flatten((args, kwargs))
        axes = _broadcast_axes("vmap in_axes", (in_axes, 0), (args, kwargs), (in_axes, args))
        mapped = [_mapped_axis(x, ax) for x, ax in zip(flat, axes)]
        sizes = [size for size, _ in mapped]
        dims = [dim for _, dim in mapped]
        n = _axis_size(fun, args, kwargs, flat, axes, sizes, axis_size)
        trace = BatchTrace(current_trace(), n, f"vmap({fun_name(fun)})")
        named = vmap_axis(axis_name, n, trace) if axis_name is not None else contextlib.nullcontext()
        with trace_scope(trace), named, transform_name_stack("vmap"):
            inputs = [_batched_input(trace, x, d) for x, d in zip(flat, dims)]
            in_args, in_kwargs = in_tree.unflatten(inputs)
            out = fun(*in_args, **in_kwargs)
            out_flat, out_tree = _flatten(out)
            for o in out_flat:
                _check_output(o)
            pairs = [trace.unpack(o) for o in out_flat]
            ref_pairs = _written_refs(trace, flat, inputs, dims)
        o_axes = _broadcast_axes("vmap out_axes", out_axes, out)
        with set_current_trace(trace.parent):
            results = [_place_output(v, d, want, n, out, i) for i, ((v, d), want) in enumerate(zip(pairs, o_axes))]
            for ref, (v, d), want in ref_pairs:  # a mapped ref argument's new value, batched where it came in
                write(ref, _place_output(v, d, want, n, None, 0))
        return out_tree.unflatten(results)

    return vmapped


def _axis_size(
    fun: Callable[..., Any], args: Any, kwargs: dict[str, Any], flat: list[Any], axes: list[Any],
    sizes: list[int | None], axis_size: int | None,
) -> int:
    if not flat:
        if axis_size is not None:
            return axis_size
        raise ValueError(
            "vmap wrapped function must be passed at least one argument containing an array or axis_size must "
            f"be specified, got empty *args={args} and **kwargs={kwargs}"
        )
    distinct = {s for s in sizes if s is not None}
    if axis_size is not None:
        distinct.add(axis_size)
    if not distinct:
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")
    if len(distinct) > 1:
        raise inconsistent_sizes(fun, args, kwargs, flat, axes, sizes, axis_size)
    return distinct.pop()


def _written_refs(
    trace: BatchTrace, flat: list[Any], inputs: list[Any], dims: list[int | None]
) -> list[tuple[Ref, tuple[Any, int | None], int]]:
    """The mapped ref arguments the function wrote: (the ref, its new value as (value, batch
    dim), the axis it was mapped over)."""
    return [
        (x, trace.unpack(inner._value), d) for x, inner, d in zip(flat, inputs, dims)
        if isinstance(x, Ref) and d is not None and isinstance(inner, Ref)
        and not (isinstance(inner._value, BatchTracer) and inner._value._trace is trace and inner._value.val is read(x))
    ]


def _batched_input(trace: BatchTrace, x: Any, dim: int | None) -> Any:
    if dim is None:
        return x
    if isinstance(x, Ref):  # a mapped ref argument: a ref of one example's slice inside
        return Ref(BatchTracer(trace, read(x), dim))
    if is_float0(x):  # no values to batch: one example's shape
        shape = np.shape(x)
        return float0_zeros(shape[:dim] + shape[dim + 1 :])
    return BatchTracer(trace, x, dim)


def _place_output(v: Any, d: int | None, want: int | None, n: int, out: Any, i: int) -> Any:
    """Leaf ``i`` of ``out``, ``v`` (batched at ``d``), with its batch axis at ``want`` (``None``: unbatched)."""
    if want is None:
        if d is not None:
            path = tree_util.keystr(tree_util.tree_leaves_with_path(out)[i][0])
            raise ValueError(f"at vmap out_axes{path}, got axis spec None but output was batched on axis {d}")
        return v
    rank = len(_shape(v)) + (1 if d is None else 0)
    if not -rank <= want < rank:
        raise ValueError(f"axis {want} is out of bounds for array of dimension {rank}")
    if is_float0(v):
        shape = _shape(v)
        return float0_zeros(shape[: want % rank] + (n,) + shape[want % rank :])
    return bdim_at(v, d, n, want % rank)

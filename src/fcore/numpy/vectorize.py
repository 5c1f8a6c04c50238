"""Functions of ``fcore.numpy`` that lift a function over array axes with ``vmap``:
``vectorize`` (with NumPy's generalized-ufunc ``signature``), ``apply_along_axis``,
``apply_over_axes`` and ``piecewise`` — ``jnp``'s constructions.

``vectorize`` never loops in Python: each broadcast dimension is one ``vmap``, so the
vectorized function traces once and stages as batched primitives.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from fcore import lax
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, broadcast_shapes, normalize_axis
from fcore.numpy.creation import array, asarray as to_array
from fcore.numpy.reductions import argmax, cumsum
from fcore.numpy.shape_ops import concatenate, expand_dims, squeeze

_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = "(?:{0:}(?:,{0:})*)?".format(_DIMENSION_NAME)
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = "{0:}(?:,{0:})*".format(_ARGUMENT)
_SIGNATURE = "^{0:}->{0:}$".format(_ARGUMENT_LIST)

CoreDims = tuple[str, ...]


def _parse_gufunc_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """``"(m,n),(n)->(m)"`` as the core dimensions of each input and each output."""
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    args, outs = (
        [tuple(re.findall(_DIMENSION_NAME, arg)) for arg in re.findall(_ARGUMENT, arg_list)]
        for arg_list in signature.split("->")
    )
    return args, outs


def _update_dim_sizes(dim_sizes: dict[str, int], shape: tuple[int, ...], core_dims: CoreDims, error_context: str,
                      *, is_input: bool) -> None:
    """Record (or check against earlier ones) the sizes of ``core_dims``, the trailing axes of ``shape``."""
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(
            f"input with shape {shape!r} does not have enough dimensions for all core dimensions {core_dims!r} {error_context}"
        )
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core_dims!r} {error_context}")
    core_shape = shape[-n:] if core_dims else ()
    for dim, size in zip(core_dims, core_shape):
        if dim not in dim_sizes:
            dim_sizes[dim] = size
        elif size != dim_sizes[dim]:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs {dim_sizes[dim]!r} {error_context}")


def _parse_input_dimensions(args: Sequence[Array], input_core_dims: list[CoreDims],
                            error_context: str) -> tuple[tuple[int, ...], dict[str, int]]:
    """The broadcast shape of the loop dimensions, and the size of every core dimension."""
    if len(args) != len(input_core_dims):
        raise TypeError(
            f"wrong number of positional arguments: expected {len(input_core_dims)!r}, got {len(args)!r} {error_context}"
        )
    shapes: list[tuple[int, ...]] = []
    dim_sizes: dict[str, int] = {}
    for arg, core_dims in zip(args, input_core_dims):
        _update_dim_sizes(dim_sizes, arg.shape, core_dims, error_context, is_input=True)
        shapes.append(arg.shape[: arg.ndim - len(core_dims)])
    return broadcast_shapes(*shapes), dim_sizes


def _check_output_dims(func: Callable[..., Any], dim_sizes: dict[str, int], expected: list[CoreDims],
                       error_context: str) -> Callable[..., Any]:
    """``func``, checking that its outputs have the core dimensions the signature promises."""

    def wrapped(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(expected) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n{error_context}")
        if len(outs) != len(expected):
            raise TypeError(f"wrong number of output arguments: expected {len(expected)!r}, got {len(outs)!r} {error_context}")
        sizes = dict(dim_sizes)
        for o, core_dims in zip(outs, expected):
            _update_dim_sizes(sizes, tuple(asarray(o).shape), core_dims, error_context, is_input=False)
        return out

    return wrapped


def _apply_excluded(func: Callable[..., Any], excluded: Collection[int | str], args: Sequence[Any],
                    kwargs: dict[str, Any]) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """``func`` with the excluded arguments bound, and the arguments left to vectorize."""
    if not excluded:
        return func, list(args), kwargs
    dynamic_args = [arg for i, arg in enumerate(args) if i not in excluded]
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
    static_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}

    def new_func(*a: Any, **kw: Any) -> Any:
        full = list(a)
        for i, arg in static_args:
            full.insert(i, arg)
        return func(*full, **kw, **static_kwargs)

    return new_func, dynamic_args, dynamic_kwargs


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` applied elementwise (or, with a ``signature`` such as ``"(n),(n)->()"``, over
    core dimensions) to broadcast arrays, built from ``vmap``: one ``vmap`` per loop dimension.

    ``excluded`` names positional indices or keywords passed through unvectorized; other
    keyword arguments are an error (``jnp.vectorize`` ignores them).
    """
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        error_context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, dyn_args, dyn_kwargs = _apply_excluded(pyfunc, excluded, args, kwargs)
        if dyn_kwargs:
            # jnp.vectorize silently drops them; an error is kinder than a wrong result.
            raise TypeError(
                f"keyword arguments {sorted(dyn_kwargs)} of a vectorized function must be listed in "
                "excluded (they are not vectorized)"
            )
        input_core_dims: list[CoreDims]
        output_core_dims: list[CoreDims] | None
        if signature is not None:
            input_core_dims, output_core_dims = _parse_gufunc_signature(signature)
        else:
            input_core_dims, output_core_dims = [()] * len(dyn_args), None
        none_args = {i for i, arg in enumerate(dyn_args) if arg is None}
        if none_args:
            if any(input_core_dims[i] != () for i in none_args):
                raise ValueError(f"Cannot pass None at locations {none_args} with signature={signature!r}")
            func, dyn_args, _ = _apply_excluded(func, none_args, dyn_args, {})
            input_core_dims = [d for i, d in enumerate(input_core_dims) if i not in none_args]
        arrays = [to_array(a) for a in dyn_args]
        broadcast_shape, dim_sizes = _parse_input_dimensions(arrays, input_core_dims, error_context)
        checked = func if output_core_dims is None else _check_output_dims(func, dim_sizes, output_core_dims, error_context)

        squeezed: list[Array] = []
        rev_filled_shapes: list[tuple[int, ...]] = []
        for arg, core_dims in zip(arrays, input_core_dims):
            noncore_shape = arg.shape[: arg.ndim - len(core_dims)]
            filled = (1,) * (len(broadcast_shape) - len(noncore_shape)) + noncore_shape
            rev_filled_shapes.append(filled[::-1])
            squeezed.append(squeeze(arg, axis=tuple(i for i, n in enumerate(noncore_shape) if n == 1)))

        vectorized = checked
        dims_to_expand: list[int] = []
        for negdim, axis_sizes in enumerate(zip(*rev_filled_shapes)):
            in_axes = tuple(None if n == 1 else 0 for n in axis_sizes)
            if all(a is None for a in in_axes):
                dims_to_expand.append(len(broadcast_shape) - 1 - negdim)
            else:
                vectorized = vmap(vectorized, in_axes)
        result = vectorized(*squeezed)
        if not dims_to_expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, axis=dims_to_expand) for r in result)
        return expand_dims(result, axis=dims_to_expand)

    return wrapped


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Array:
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (one ``vmap`` per other axis)."""
    a = asarray(arr, "apply_along_axis")
    ndim = a.ndim
    ax = normalize_axis(axis, ndim)

    def func(x: Array) -> Any:
        return func1d(x, *args, **kwargs)

    for i in range(1, ndim - ax):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(ax):
        func = vmap(func, in_axes=0, out_axes=0)
    out: Array = func(a)
    return out


def apply_over_axes(func: Callable[[ArrayLike, int], Array], a: ArrayLike, axes: Sequence[int]) -> Array:
    """``func(a, axis)`` applied for each of ``axes`` in turn, keeping the number of dimensions."""
    arr = asarray(a, "apply_over_axes")
    for axis in axes:
        b = func(arr, axis)
        if b.ndim == arr.ndim:
            arr = b
        elif b.ndim == arr.ndim - 1:
            arr = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def piecewise(x: ArrayLike, condlist: Array | Sequence[ArrayLike], funclist: Sequence[ArrayLike | Callable[..., Array]],
              *args: Any, **kw: Any) -> Array:
    """Each element of ``x`` through the function (or constant) of the last condition that holds
    there, or of the default (the extra last entry of ``funclist``, else 0): a vectorized
    ``lax.switch``."""
    x_arr = asarray(x, "piecewise")
    nc, nf = len(condlist), len(funclist)
    funcs: list[ArrayLike | Callable[..., Array]]
    if nf == nc + 1:
        funcs = [*funclist[-1:], *funclist[:-1]]
    elif nf == nc:
        funcs = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")
    conds = array(condlist, dtype=bool)
    indices = argmax(cumsum(concatenate([lax.full_like(conds[:1], False), conds], 0), 0), 0)
    dtype = x_arr.dtype

    def branch(f: ArrayLike | Callable[..., Array]) -> Callable[[Array], Array]:
        if callable(f):
            fn = f
            return lambda v: asarray(fn(v, *args, **kw)).astype(dtype)
        return lambda v: array(f, dtype=dtype)

    branches = [branch(f) for f in funcs]
    out: Array = vectorize(lax.switch, excluded=(1,))(indices, branches, x_arr)
    return out

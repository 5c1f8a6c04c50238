"""Structural primitives: operations that move, copy or select elements without arithmetic.

Each primitive has JAX's name and parameters (sharding parameters dropped), an abstract
evaluation rule that validates shapes and dimension parameters, and an eager NumPy impl.
The user functions normalize their arguments once (tuples of Python ints, canonical
dtypes) so that the rules on the hot path only check, never convert.

Eager impls return NumPy *views* where NumPy can (transpose, broadcast, slice, rev):
fcore arrays are immutable, so sharing memory is safe and saves a copy per operation.

``gather``/``scatter``/``scatter-add`` follow XLA's general semantics (dimension numbers as
frozen ``ParamStruct`` values, JAX's ``GatherScatterMode``), which covers NumPy-style indexing
and ``x.at[idx].set/add``; the impls address every window element with one advanced index.
"""

from __future__ import annotations

import builtins
import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.transforms.batching import batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules
from fcore.interpreters.array import Array
from fcore.interpreters.trace import Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ParamStruct, ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax._base import ArrayLike, match_scalars, same_dtypes, checked_impl, shape_of
from fcore.lax.elementwise import add, convert_element_type, lt, select_n

NpArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]

__all__ = [
    "broadcast_in_dim_p", "reshape_p", "squeeze_p", "transpose_p", "concatenate_p", "pad_p",
    "slice_p", "dynamic_slice_p", "dynamic_update_slice_p", "iota_p", "rev_p",
    "broadcast_in_dim", "broadcast", "reshape", "squeeze", "expand_dims", "transpose",
    "concatenate", "pad", "slice", "slice_in_dim", "index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "iota", "broadcasted_iota",
    "rev", "gather_p", "scatter_p", "scatter_add_p", "scatter_mul_p", "scatter_min_p", "scatter_max_p",
    "GatherScatterMode", "GatherDimensionNumbers", "ScatterDimensionNumbers", "gather", "scatter", "scatter_add",
    "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "full", "full_like", "broadcast_to_rank", "collapse",
    "split", "tile", "stack", "unstack",
]


def _index_tuple(xs: Sequence[int] | NpArray) -> Shape:
    """Static dimension arguments as a tuple of Python ints (params are never lists)."""
    return tuple(map(operator.index, xs))


_PERMUTATIONS: set[Shape] = set()


def _is_permutation(p: Shape) -> bool:
    """``p`` is a permutation of ``range(len(p))`` (memoized: programs reuse a few permutations)."""
    if p in _PERMUTATIONS:
        return True
    ok = sorted(p) == list(range(len(p)))
    if ok and len(_PERMUTATIONS) < 4096:
        _PERMUTATIONS.add(p)
    return ok


def _check_nonnegative(name: str, what: str, values: Shape) -> None:
    for v in values:
        if v < 0:
            raise TypeError(f"{name} {what} must have every element be nonnegative, got {values}.")


def _check_unique_in_range(name: str, what: str, dims: Shape, ndim: int, aval: ShapedArray) -> None:
    """``dims`` are distinct axes of an operand of rank ``ndim`` (no negative axes at this level)."""
    for d in dims:
        if not 0 <= d < ndim:
            raise TypeError(
                f"{name} {what} must all be in the range [0, {ndim}), got {what} {dims} "
                f"for operand {aval.str_short()}."
            )
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} {what} must be unique, got {dims} for operand {aval.str_short()}.")


def _bind(p: Primitive, *args: ArrayLike, **params: ParamValue) -> Array:
    result: Array = p.bind(*args, **params)
    return result


# -- broadcast_in_dim[shape, broadcast_dimensions] ------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim", param_names=("shape", "broadcast_dimensions"))


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(x: ShapedArray, *, shape: Shape, broadcast_dimensions: Shape) -> ShapedArray:
    _check_nonnegative("broadcast_in_dim", "shape", shape)
    if len(broadcast_dimensions) != len(x.shape):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {broadcast_dimensions} for operand {x.str_short()}."
        )
    nd = len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < nd:
            raise TypeError(
                "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
                f"{broadcast_dimensions} for operand {x.str_short()} and shape {shape}."
            )
        s = x.shape[i]
        if s != 1 and s != shape[d]:
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                f"corresponding dimensions in the target broadcast shape; got operand {x.str_short()}, "
                f"target broadcast shape {shape}, broadcast_dimensions {broadcast_dimensions}."
            )
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be unique, got {broadcast_dimensions}.")
    return shaped_array(shape, x.dtype, x.weak_type)


@checked_impl(broadcast_in_dim_p)
def _broadcast_in_dim_impl(x: NpArray, *, shape: Shape, broadcast_dimensions: Shape) -> NpArray:
    if x.shape == shape:
        return x if broadcast_dimensions == tuple(range(len(shape))) else np.transpose(x, np.argsort(broadcast_dimensions))
    if any(a > b for a, b in zip(broadcast_dimensions, broadcast_dimensions[1:])):
        order = np.argsort(broadcast_dimensions)
        x = np.transpose(x, order)
        broadcast_dimensions = tuple(broadcast_dimensions[i] for i in order)
    expanded = [1] * len(shape)
    for s, d in zip(x.shape, broadcast_dimensions):
        expanded[d] = s
    return np.broadcast_to(x.reshape(expanded), shape)


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Array:
    """Broadcast ``operand`` to ``shape``; operand axis ``i`` becomes axis ``broadcast_dimensions[i]``."""
    shape_t = _index_tuple(shape)
    dims = _index_tuple(broadcast_dimensions)
    if isinstance(operand, Array) and operand.shape == shape_t and dims == tuple(range(len(shape_t))):
        return operand  # JAX forwards the identity broadcast instead of staging it
    return _bind(broadcast_in_dim_p, operand, shape=shape_t, broadcast_dimensions=dims)


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Array:
    """Add leading dimensions of ``sizes`` (``lax.broadcast``)."""
    sizes_t = _index_tuple(sizes)
    if not sizes_t and isinstance(operand, Array):
        return operand
    in_shape = shape_of(operand)
    dims = tuple(range(len(sizes_t), len(sizes_t) + len(in_shape)))
    return broadcast_in_dim(operand, sizes_t + in_shape, dims)


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Insert size-1 axes at ``dimensions`` (of the result); staged as ``broadcast_in_dim`` like JAX."""
    dims_in = _index_tuple(dimensions)
    if len(set(dims_in)) != len(dims_in):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims_in}")
    in_shape = shape_of(array)
    ndim_out = len(in_shape) + len(dims_in)
    dims = [_canonicalize_axis("expand_dims", d, ndim_out) for d in dims_in]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    dims_set = frozenset(dims)
    result_shape = list(in_shape)
    for i in sorted(dims_set):
        result_shape.insert(i, 1)
    bdims = tuple(i for i in range(ndim_out) if i not in dims_set)
    return broadcast_in_dim(array, result_shape, bdims)


def _canonicalize_axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


# -- reshape[new_sizes, dimensions] ---------------------------------------------------------
reshape_p = Primitive("reshape", param_names=("new_sizes", "dimensions"))


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x: ShapedArray, *, new_sizes: Shape, dimensions: Shape | None) -> ShapedArray:
    n = 1
    for s in new_sizes:
        if s < 0:
            raise TypeError(f"reshape new_sizes must all be nonnegative, got {new_sizes}.")
        n *= s
    if n != x.size:
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} (size {n}) "
            f"for operand {x.str_short()} (size {x.size})."
        )
    if dimensions is not None and (len(dimensions) != len(x.shape) or not _is_permutation(dimensions)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got dimensions "
            f"{dimensions} for operand {x.str_short()}."
        )
    return shaped_array(new_sizes, x.dtype, x.weak_type)


@checked_impl(reshape_p)
def _reshape_impl(x: NpArray, *, new_sizes: Shape, dimensions: Shape | None) -> NpArray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return x.reshape(new_sizes)


def reshape(operand: ArrayLike, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Array:
    """Reshape (after transposing by ``dimensions`` when given), as ``lax.reshape``."""
    sizes = _index_tuple(new_sizes)
    in_shape = shape_of(operand)
    if dimensions is None:
        dims: Shape | None = None
        same_dims = True
    else:
        dims = _index_tuple(dimensions)
        same_dims = dims == tuple(range(len(in_shape)))
    if in_shape and in_shape == sizes and same_dims and isinstance(operand, Array):
        return operand
    return _bind(reshape_p, operand, new_sizes=sizes, dimensions=None if same_dims else dims)


# -- squeeze[dimensions] --------------------------------------------------------------------
squeeze_p = Primitive("squeeze", param_names=("dimensions",))


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(x: ShapedArray, *, dimensions: Shape) -> ShapedArray:
    nd = len(x.shape)
    for d in dimensions:
        if not 0 <= d < nd:
            raise ValueError(f"squeeze: axis {d} is out of bounds for operand {x.str_short()}")
        if x.shape[d] != 1:
            raise ValueError(
                "squeeze: cannot select an axis to squeeze out which has size not equal to one, "
                f"got operand {x.str_short()} and dimensions={dimensions}"
            )
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"squeeze: dimensions are not unique: {dimensions}")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return shaped_array(shape, x.dtype, x.weak_type)


@checked_impl(squeeze_p)
def _squeeze_impl(x: NpArray, *, dimensions: Shape) -> NpArray:
    return np.squeeze(x, axis=dimensions) if dimensions else x


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Remove size-1 axes ``dimensions`` (negative axes allowed, as in ``lax.squeeze``)."""
    nd = len(shape_of(array))
    dims = tuple(sorted(_canonicalize_axis("squeeze", d, nd) for d in _index_tuple(dimensions)))
    if not dims and isinstance(array, Array):
        return array
    return _bind(squeeze_p, array, dimensions=dims)


# -- transpose[permutation] -----------------------------------------------------------------
transpose_p = Primitive("transpose", param_names=("permutation",))


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x: ShapedArray, *, permutation: Shape) -> ShapedArray:
    shape = x.shape
    if len(permutation) != len(shape) or not _is_permutation(permutation):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got permutation "
            f"{permutation} for operand {x.str_short()}."
        )
    return shaped_array(tuple(shape[p] for p in permutation), x.dtype, x.weak_type)


@checked_impl(transpose_p)
def _transpose_impl(x: NpArray, *, permutation: Shape) -> NpArray:
    return np.transpose(x, permutation)


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """Permute axes: result axis ``i`` is operand axis ``permutation[i]``."""
    perm = _index_tuple(permutation)
    if perm == tuple(range(len(shape_of(operand)))) and isinstance(operand, Array):
        return operand
    return _bind(transpose_p, operand, permutation=perm)


# -- concatenate[dimension] -----------------------------------------------------------------
concatenate_p = Primitive("concatenate", param_names=("dimension",))


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    dt = same_dtypes("concatenate", xs)
    first = xs[0].shape
    nd = len(first)
    if any(len(x.shape) != nd for x in xs):
        raise TypeError(
            "concatenate: cannot concatenate arrays with different numbers of dimensions: got "
            + ", ".join(x.str_short() for x in xs) + "."
        )
    if not 0 <= dimension < nd:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            + ", ".join(str(x.shape) for x in xs) + "."
        )
    total = 0
    for x in xs:
        s = x.shape
        if s[:dimension] != first[:dimension] or s[dimension + 1:] != first[dimension + 1:]:
            raise TypeError(
                "concatenate: cannot concatenate arrays with shapes that differ in dimensions other "
                f"than the one being concatenated: concatenating along dimension {dimension} for "
                "shapes " + ", ".join(str(x.shape) for x in xs) + "."
            )
        total += s[dimension]
    weak = all(x.weak_type for x in xs)
    return shaped_array(first[:dimension] + (total,) + first[dimension + 1:], dt, weak)


@checked_impl(concatenate_p)
def _concatenate_impl(*xs: NpArray, dimension: int) -> NpArray:
    return np.concatenate(xs, axis=dimension)


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """Join ``operands`` (same dtype, same shape except along ``dimension``)."""
    if len(operands) == 0:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1:
        (op,) = operands
        if isinstance(op, Array):
            return op
    return _bind(concatenate_p, *operands, dimension=operator.index(dimension))


# -- pad[padding_config] --------------------------------------------------------------------
PaddingConfig = tuple[tuple[int, int, int], ...]
pad_p = Primitive("pad", param_names=("padding_config",))


@pad_p.def_abstract_eval
def _pad_abstract_eval(x: ShapedArray, padding_value: ShapedArray, *, padding_config: PaddingConfig) -> ShapedArray:
    if x.dtype != padding_value.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{dtypes.dtype_name(x.dtype)} and {dtypes.dtype_name(padding_value.dtype)}."
        )
    if padding_value.shape != ():
        raise ValueError(f"pad: padding_value must be a scalar; got shape {padding_value.shape}")
    if len(padding_config) != len(x.shape):
        raise ValueError(
            "pad: length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand {x.str_short()}"
        )
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ValueError(f"pad: interior padding in padding_config must be nonnegative, got {padding_config}")
        n = lo + hi + d + (d - 1) * interior if d else lo + hi
        if n < 0:
            raise ValueError(
                "pad: dimension size after padding is not at least 0, got padding_config "
                f"{padding_config} for operand {x.str_short()}"
            )
        shape.append(n)
    return shaped_array(tuple(shape), x.dtype, x.weak_type and padding_value.weak_type)


@checked_impl(pad_p)
def _pad_impl(x: NpArray, padding_value: NpArray, *, padding_config: PaddingConfig) -> NpArray:
    if all(lo == hi == interior == 0 for lo, hi, interior in padding_config):
        return x
    # Pad with the non-negative parts of (lo, hi) and the interior, then crop negative edges.
    full_shape = []
    place = []
    crop = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        plo, phi = builtins.max(lo, 0), builtins.max(hi, 0)
        inner = d + (d - 1) * interior if d else 0
        full = plo + inner + phi
        full_shape.append(full)
        place.append(np.s_[plo:plo + inner:interior + 1])
        crop.append(np.s_[builtins.max(-lo, 0):full - builtins.max(-hi, 0)])
    out = np.full(full_shape, padding_value, dtype=x.dtype)
    out[tuple(place)] = x
    return out[tuple(crop)]


def pad(operand: ArrayLike, padding_value: ArrayLike, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pad each axis with ``(low, high, interior)`` copies of ``padding_value`` (negative low/high crop).

    As everywhere in ``fcore.lax``, a Python-scalar ``padding_value`` takes the operand's dtype.
    """
    config = tuple((operator.index(lo), operator.index(hi), operator.index(i)) for lo, hi, i in padding_config)
    operand, padding_value = match_scalars(operand, padding_value)
    return _bind(pad_p, operand, padding_value, padding_config=config)


# -- slice[start_indices, limit_indices, strides] -------------------------------------------
slice_p = Primitive("slice", param_names=("start_indices", "limit_indices", "strides"))


@slice_p.def_abstract_eval
def _slice_abstract_eval(
    x: ShapedArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None
) -> ShapedArray:
    nd = len(x.shape)
    if len(start_indices) != nd or len(limit_indices) != nd or (strides is not None and len(strides) != nd):
        raise TypeError(
            f"slice start_indices {start_indices}, limit_indices {limit_indices} and strides {strides} "
            f"must each have one entry per axis of operand {x.str_short()}."
        )
    shape = []
    for i, (d, start, limit) in enumerate(zip(x.shape, start_indices, limit_indices)):
        if not 0 <= start <= limit <= d:
            raise TypeError(
                f"slice indices must satisfy 0 <= start <= limit <= size in every axis, got start_indices "
                f"{start_indices} and limit_indices {limit_indices} for operand {x.str_short()}."
            )
        if strides is None:
            shape.append(limit - start)
        else:
            stride = strides[i]
            if stride < 1:
                raise TypeError(f"slice strides must be positive, got {strides}.")
            shape.append((limit - start + stride - 1) // stride)
    return shaped_array(tuple(shape), x.dtype, x.weak_type)


@checked_impl(slice_p)
def _slice_impl(x: NpArray, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> NpArray:
    if strides is None:
        return x[tuple(builtins.slice(s, l) for s, l in zip(start_indices, limit_indices))]
    return x[tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def slice(
    operand: ArrayLike, start_indices: Sequence[int], limit_indices: Sequence[int], strides: Sequence[int] | None = None
) -> Array:
    """Static slice ``operand[start:limit:stride]`` in every axis (``lax.slice``)."""
    return _bind(
        slice_p,
        operand,
        start_indices=_index_tuple(start_indices),
        limit_indices=_index_tuple(limit_indices),
        strides=None if strides is None else _index_tuple(strides),
    )


def slice_in_dim(
    operand: ArrayLike, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
) -> Array:
    """``lax.slice`` along one axis; ``None`` and negative indices as in Python slicing (no clipping)."""
    shape = shape_of(operand)
    axis = operator.index(axis)
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: ArrayLike, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """``operand[..., index, ...]`` along ``axis`` with a static index (``IndexError`` when out of range)."""
    index, axis = operator.index(index), operator.index(axis)
    n = shape_of(operand)[axis]
    wrapped = index + n if index < 0 else index
    if not 0 <= wrapped < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


# -- dynamic_slice[slice_sizes] -------------------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice", param_names=("slice_sizes",))


def _check_indices(name: str, x: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    if len(indices) != len(x.shape):
        raise TypeError(
            f"{name} takes one start index per axis of operand {x.str_short()}, got {len(indices)}."
        )
    if indices:
        dt = indices[0].dtype
        for i in indices:
            if i.dtype != dt or not dtypes.is_integer(i.dtype):
                raise TypeError(
                    f"index arguments to {name} must be integers of the same type, got: "
                    + ", ".join(dtypes.dtype_name(j.dtype) for j in indices)
                )
            if i.shape != ():
                raise TypeError(
                    f"start_indices arguments to {name} must be scalars, got "
                    + ", ".join(j.str_short() for j in indices)
                )


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(x: ShapedArray, *indices: ShapedArray, slice_sizes: Shape) -> ShapedArray:
    _check_indices("dynamic_slice", x, indices)
    if len(slice_sizes) != len(x.shape):
        raise TypeError(f"dynamic_slice slice_sizes {slice_sizes} must have one entry per axis of {x.str_short()}.")
    for d, s in zip(x.shape, slice_sizes):
        if not 0 <= s <= d:
            raise TypeError(
                "dynamic_slice slice_sizes must be nonnegative and at most the operand shape, got "
                f"slice_sizes {slice_sizes} for operand {x.str_short()}."
            )
    return shaped_array(slice_sizes, x.dtype, x.weak_type)


def _clamped_starts(shape: Shape, sizes: Shape, indices: Sequence[NpArray]) -> tuple[builtins.slice, ...]:
    """XLA clamps each start index into ``[0, dim - size]`` so the slice is always in bounds."""
    out = []
    for d, s, i in zip(shape, sizes, indices):
        start = builtins.min(builtins.max(int(i), 0), d - s)
        out.append(builtins.slice(start, start + s))
    return tuple(out)


@checked_impl(dynamic_slice_p)
def _dynamic_slice_impl(x: NpArray, *indices: NpArray, slice_sizes: Shape) -> NpArray:
    return x[_clamped_starts(x.shape, slice_sizes, indices)]


def _index_dtype(i: object) -> DType | None:
    if isinstance(i, (Array, np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(i.dtype)
    return None


def _normalize_index(name: str, i: ArrayLike, d: int, allow_negative: bool) -> ArrayLike:
    """JAX's ``_dynamic_slice_indices`` for one index: wrap a negative index once (``i + d``).

    Static indices (Python ints, NumPy and concrete fcore values) are wrapped here and become
    strongly typed 0-d arrays, staged as literals; traced indices get ``select_n(i < 0, i, i + d)``.
    """
    if type(i) is int:
        if i < 0:
            if not allow_negative:
                raise ValueError(f"{name}: index {i} is out of bounds for dimension {d} if allow_negative_indices=False")
            i += d
        return np.array(i).astype(dtypes.default_int_dtype())
    dt = _index_dtype(i)
    if dt is None or not dtypes.is_signed_int(dt):
        return i  # unsigned indices are never negative; non-integers are rejected by the rule
    if isinstance(i, Tracer):
        if not allow_negative:
            return i
        if i.weak_type:
            i = convert_element_type(i, dt)
        return select_n(lt(i, 0), i, add(i, d))
    v = int(np.asarray(i))
    if v < 0:
        if not allow_negative:
            raise ValueError(f"{name}: index {v} is out of bounds for dimension {d} if allow_negative_indices=False")
        v += d
    return np.array(v).astype(dt)


def _start_indices(
    name: str, shape: Shape, start_indices: Sequence[ArrayLike] | Array | NpArray, allow_negative: bool | Sequence[bool]
) -> list[ArrayLike]:
    items: Sequence[ArrayLike]
    if isinstance(start_indices, (Array, np.ndarray)):
        if len(start_indices.shape) != 1:
            raise ValueError(f"{name}: slice indices must be a 1D sequence, got shape {start_indices.shape}")
        if isinstance(start_indices, Tracer):
            items = [index_in_dim(start_indices, k, 0, keepdims=False) for k in range(start_indices.shape[0])]
        else:
            items = list(np.asarray(start_indices))
    else:
        items = start_indices
    if len(items) != len(shape):
        raise ValueError(
            f"{name}: length of slice indices must match number of operand dimensions ({len(items)} vs {shape})"
        )
    allow = [allow_negative] * len(shape) if isinstance(allow_negative, bool) else list(allow_negative)
    return [_normalize_index(name, i, d, a) for i, d, a in zip(items, shape, allow)]


def dynamic_slice(
    operand: ArrayLike,
    start_indices: Sequence[ArrayLike] | Array | NpArray,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """Slice of static size at traced start indices; out-of-range starts are clamped like XLA.

    A negative index is first wrapped once by the axis size, as in JAX.
    """
    shape = shape_of(operand)
    idx = _start_indices("dynamic_slice", shape, start_indices, allow_negative_indices)
    return _bind(dynamic_slice_p, operand, *idx, slice_sizes=_index_tuple(slice_sizes))


def dynamic_slice_in_dim(
    operand: ArrayLike, start_index: ArrayLike, slice_size: int, axis: int = 0, *, allow_negative_indices: bool = True
) -> Array:
    """``dynamic_slice`` along one axis (the other axes are taken whole)."""
    shape = shape_of(operand)
    axis = operator.index(axis)
    starts: list[ArrayLike] = [_zero_like_index(start_index)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(
    operand: ArrayLike, index: ArrayLike, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True
) -> Array:
    """``operand[..., index, ...]`` along ``axis`` for a traced ``index`` (clamped)."""
    result = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


def _zero_like_index(i: ArrayLike) -> ArrayLike:
    """A zero start index of ``i``'s type (JAX's ``_const(i, 0)``)."""
    dt = _index_dtype(i)
    return 0 if dt is None else np.zeros((), dt)


# -- dynamic_update_slice -------------------------------------------------------------------
dynamic_update_slice_p = Primitive("dynamic_update_slice", param_names=())


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(x: ShapedArray, update: ShapedArray, *indices: ShapedArray) -> ShapedArray:
    if len(update.shape) != len(x.shape):
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got update "
            f"{update.str_short()} for operand {x.str_short()}."
        )
    same_dtypes("dynamic_update_slice", (x, update))
    _check_indices("dynamic_update_slice", x, indices)
    for d, u in zip(x.shape, update.shape):
        if u > d:
            raise TypeError(
                "dynamic_update_slice update shape must be smaller than operand shape, got update "
                f"{update.str_short()} for operand {x.str_short()}."
            )
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in indices)
    return shaped_array(x.shape, x.dtype, weak)


@checked_impl(dynamic_update_slice_p)
def _dynamic_update_slice_impl(x: NpArray, update: NpArray, *indices: NpArray) -> NpArray:
    out = x.copy()
    out[_clamped_starts(x.shape, update.shape, indices)] = update
    return out


def dynamic_update_slice(
    operand: ArrayLike,
    update: ArrayLike,
    start_indices: Sequence[ArrayLike] | Array | NpArray,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """``operand`` with the block at ``start_indices`` replaced by ``update`` (starts clamped like XLA)."""
    shape = shape_of(operand)
    idx = _start_indices("dynamic_update_slice", shape, start_indices, allow_negative_indices)
    return _bind(dynamic_update_slice_p, operand, update, *idx)


def dynamic_update_slice_in_dim(
    operand: ArrayLike, update: ArrayLike, start_index: ArrayLike, axis: int, *, allow_negative_indices: bool = True
) -> Array:
    """``dynamic_update_slice`` at ``start_index`` along ``axis`` (0 along the others)."""
    nd = len(shape_of(operand))
    axis = operator.index(axis)
    starts: list[ArrayLike] = [_zero_like_index(start_index)] * nd
    starts[axis] = start_index
    allow = [False] * nd
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(
    operand: ArrayLike, update: ArrayLike, index: ArrayLike, axis: int, *, allow_negative_indices: bool = True
) -> Array:
    """Replace the size-1 slab at ``index`` along ``axis``; ``update`` may lack that axis."""
    axis = operator.index(axis)
    if len(shape_of(update)) + 1 == len(shape_of(operand)):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)


# -- iota[dtype, shape, dimension] ----------------------------------------------------------
iota_p = Primitive("iota", param_names=("dtype", "shape", "dimension"))


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype: DType, shape: Shape, dimension: int) -> ShapedArray:
    if not (dtypes.is_integer(dtype) or dtypes.is_inexact(dtype)):
        raise TypeError(
            f"iota does not accept dtype {dtypes.dtype_name(dtype)}. Accepted dtype kinds: int, float, complex."
        )
    _check_nonnegative("iota", "shape", shape)
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dimension} for shape={shape}")
    return shaped_array(shape, dtype, False)


@checked_impl(iota_p)
def _iota_impl(*, dtype: DType, shape: Shape, dimension: int) -> NpArray:
    line = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Array:
    """``0, 1, 2, …`` along ``dimension`` of an array of ``shape``, constant along the others."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    return _bind(iota_p, dtype=dt, shape=_index_tuple(shape), dimension=operator.index(dimension))


def iota(dtype: Any, size: int) -> Array:
    """``[0, 1, …, size - 1]`` of ``dtype`` (``lax.iota``)."""
    return broadcasted_iota(dtype, (size,), 0)


# -- rev[dimensions] ------------------------------------------------------------------------
rev_p = Primitive("rev", param_names=("dimensions",))


@rev_p.def_abstract_eval
def _rev_abstract_eval(x: ShapedArray, *, dimensions: Shape) -> ShapedArray:
    _check_unique_in_range("rev", "dimensions", dimensions, len(x.shape), x)
    return x


@checked_impl(rev_p)
def _rev_impl(x: NpArray, *, dimensions: Shape) -> NpArray:
    return np.flip(x, dimensions) if dimensions else x


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Reverse the order of elements along ``dimensions`` (``lax.rev``)."""
    return _bind(rev_p, operand, dimensions=_index_tuple(dimensions))


# -- gather / scatter -----------------------------------------------------------------------
class GatherScatterMode(enum.Enum):
    """How gather and scatter treat out-of-bounds windows (``lax.GatherScatterMode``).

    ``CLIP`` clamps start indices so the window is in bounds; ``FILL_OR_DROP`` fills an
    out-of-bounds gathered window with ``fill_value`` and drops an out-of-bounds scattered one;
    ``PROMISE_IN_BOUNDS`` behaves like XLA's CPU backend (gathers clamp, scatters drop).
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


@attrs.frozen(slots=True)
class GatherDimensionNumbers(ParamStruct):
    """XLA's gather dimension numbers; the index vector is always the last axis of the indices."""

    offset_dims: Shape = attrs.field(converter=_index_tuple)
    collapsed_slice_dims: Shape = attrs.field(converter=_index_tuple)
    start_index_map: Shape = attrs.field(converter=_index_tuple)
    operand_batching_dims: Shape = attrs.field(default=(), converter=_index_tuple)
    start_indices_batching_dims: Shape = attrs.field(default=(), converter=_index_tuple)


@attrs.frozen(slots=True)
class ScatterDimensionNumbers(ParamStruct):
    """XLA's scatter dimension numbers; the index vector is always the last axis of the indices."""

    update_window_dims: Shape = attrs.field(converter=_index_tuple)
    inserted_window_dims: Shape = attrs.field(converter=_index_tuple)
    scatter_dims_to_operand_dims: Shape = attrs.field(converter=_index_tuple)
    operand_batching_dims: Shape = attrs.field(default=(), converter=_index_tuple)
    scatter_indices_batching_dims: Shape = attrs.field(default=(), converter=_index_tuple)


def _sorted_unique_in_range(op: str, name: str, dims: Shape, rank: int) -> None:
    for i, d in enumerate(dims):
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {dims}.")
        if i and dims[i - 1] >= d:
            raise TypeError(f"{name} in {op} op must be sorted and must not repeat; got {dims}")


def _unique_in_range(op: str, name: str, dims: Shape, rank: int) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {dims}.")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint(op: str, name1: str, dims1: Shape, name2: str, dims2: Shape) -> None:
    if set(dims1) & set(dims2):
        raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; got {dims1} and {dims2}.")


def _check_index_dtype(op: str, indices: ShapedArray) -> None:
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"{op}: indices must have an integer type, got {indices.str_short()}")
    if not indices.shape:
        raise TypeError(f"{op}: indices must have rank >= 1 (the last axis is the index vector), got {indices.str_short()}")


gather_p = Primitive(
    "gather",
    param_names=("dimension_numbers", "slice_sizes", "unique_indices", "indices_are_sorted", "mode", "fill_value"),
)


@gather_p.def_abstract_eval
def _gather_abstract_eval(
    operand: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: GatherScatterMode,
    fill_value: bool | int | float | complex | None,
) -> ShapedArray:
    _check_index_dtype("gather", indices)
    dn = dimension_numbers
    rank = len(operand.shape)
    ivd = len(indices.shape) - 1
    out_rank = len(dn.offset_dims) + ivd
    _sorted_unique_in_range("gather", "offset_dims", dn.offset_dims, out_rank)
    if len(dn.start_index_map) != indices.shape[ivd]:
        raise TypeError(
            f"gather op has {len(dn.start_index_map)} elements in start_index_map but the index vector "
            f"(last) dimension of indices {indices.str_short()} has size {indices.shape[ivd]}."
        )
    _unique_in_range("gather", "start_index_map", dn.start_index_map, rank)
    _sorted_unique_in_range("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, rank)
    _sorted_unique_in_range("gather", "operand_batching_dims", dn.operand_batching_dims, rank)
    _disjoint("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, "operand_batching_dims", dn.operand_batching_dims)
    _disjoint("gather", "start_index_map", dn.start_index_map, "operand_batching_dims", dn.operand_batching_dims)
    _unique_in_range("gather", "start_indices_batching_dims", dn.start_indices_batching_dims, ivd)
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise TypeError(
            "gather op requires equal numbers of operand_batching_dims and start_indices_batching_dims, got "
            f"{dn.operand_batching_dims} and {dn.start_indices_batching_dims}."
        )
    if tuple(operand.shape[i] for i in dn.operand_batching_dims) != tuple(
        indices.shape[i] for i in dn.start_indices_batching_dims
    ):
        raise TypeError(
            "gather op requires operand batching dimensions and indices batching dimensions to have the same "
            f"shape, got operand {operand.str_short()} and indices {indices.str_short()}."
        )
    if len(slice_sizes) != rank:
        raise TypeError(f"gather op must have one slice size for every operand dimension; got {slice_sizes} for {operand.str_short()}")
    if rank != len(dn.offset_dims) + len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims):
        raise TypeError(
            "All components of the offset index in a gather op must either be an offset dimension or explicitly "
            f"collapsed/batching; got slice_sizes={slice_sizes}, {dn}."
        )
    if indices.size:
        for s, d in zip(slice_sizes, operand.shape):
            if not 0 <= s <= d:
                raise TypeError(f"gather: slice sizes {slice_sizes} out of range for operand {operand.str_short()}")
    for d in dn.collapsed_slice_dims:
        if slice_sizes[d] != 1:
            raise TypeError(f"gather op can only collapse slice dims with bound 1, got slice_sizes {slice_sizes}, {dn}")
    for d in dn.operand_batching_dims:
        if slice_sizes[d] > 1:
            raise TypeError(f"gather op can only have operand batching dims with bound 0/1, got slice_sizes {slice_sizes}")
    skip = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = iter([s for i, s in enumerate(slice_sizes) if i not in skip])
    batch = iter(indices.shape[:ivd])
    shape = tuple(next(window) if i in dn.offset_dims else next(batch) for i in range(out_rank))
    return shaped_array(shape, operand.dtype, operand.weak_type)


def _window_starts(
    batch_shape: Shape, indices: NpArray, nd: int, index_map: Shape, operand_bdims: Shape, indices_bdims: Shape
) -> NpArray:
    """Each window's full start index (one row per index vector), before clamping or masking."""
    nb = _prod(batch_shape)
    starts = np.zeros((nb, nd), np.int64)
    starts[:, list(index_map)] = indices.reshape(nb, len(index_map))
    if operand_bdims:
        coords = np.indices(batch_shape).reshape(len(batch_shape), nb)
        for od, idim in zip(operand_bdims, indices_bdims):
            starts[:, od] = coords[idim]
    return starts


def _window_index(starts: NpArray, window: Shape) -> tuple[NpArray, ...]:
    """Advanced-indexing arrays of shape ``(windows, *window)`` addressing every window element."""
    nb, nd = starts.shape
    out = []
    for d in range(nd):
        shape = [1] * (nd + 1)
        shape[d + 1] = window[d]
        out.append(starts[:, d].reshape((nb,) + (1,) * nd) + np.arange(window[d]).reshape(shape))
    return tuple(out)


def _prod(xs: Sequence[int]) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


@checked_impl(gather_p)
def _gather_impl(
    operand: NpArray,
    indices: NpArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: GatherScatterMode,
    fill_value: bool | int | float | complex | None,
) -> NpArray:
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT is not implemented")
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    starts = _window_starts(
        batch_shape, indices, operand.ndim, dn.start_index_map, dn.operand_batching_dims, dn.start_indices_batching_dims
    )
    upper = np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64)
    oob: NpArray | None = None
    if mode is GatherScatterMode.FILL_OR_DROP:
        # JAX masks on the indexed dimensions only, then gathers with clamping.
        cols = list(dn.start_index_map)
        oob = np.asarray(((starts[:, cols] < 0) | (starts[:, cols] > upper[cols])).any(axis=1))
    starts = np.clip(starts, 0, np.maximum(upper, 0))
    window = operand[_window_index(starts, slice_sizes)]
    if oob is not None and oob.any():
        window = window.copy()
        window[oob] = np.array(fill_value).astype(operand.dtype)
    skip = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = [s for i, s in enumerate(slice_sizes) if i not in skip]
    window = window.reshape(batch_shape + tuple(offsets))
    nbatch = len(batch_shape)
    perm, b = [], 0
    for i in range(nbatch + len(offsets)):
        if i in dn.offset_dims:
            perm.append(nbatch + dn.offset_dims.index(i))
        else:
            perm.append(b)
            b += 1
    return np.transpose(window, perm)


def _default_fill_value(dt: DType) -> bool | int | float:
    if dtypes.is_inexact(dt):
        return float("nan")
    if dtypes.is_signed_int(dt):
        return int(np.iinfo(dt).min)
    if dtypes.is_unsigned_int(dt):
        return int(np.iinfo(dt).max)
    return True


def gather(
    operand: ArrayLike,
    start_indices: ArrayLike,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: bool | int | float | complex | None = None,
) -> Array:
    """XLA's gather (``lax.gather``): one window of ``slice_sizes`` per index vector.

    ``mode`` defaults to ``PROMISE_IN_BOUNDS`` (clamping); with ``"fill"`` an out-of-bounds
    window is ``fill_value`` (default NaN, the integer minimum/maximum, or True, as in JAX).
    """
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill_value(dtypes.canonicalize_dtype(_operand_dtype(operand)))
    else:
        fill_value = None
    return _bind(
        gather_p,
        operand,
        start_indices,
        dimension_numbers=dimension_numbers,
        slice_sizes=_index_tuple(slice_sizes),
        unique_indices=bool(unique_indices),
        indices_are_sorted=bool(indices_are_sorted),
        mode=parsed,
        fill_value=fill_value,
    )


def _operand_dtype(x: ArrayLike) -> DType:
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return np.dtype(x.dtype)
    return dtypes.python_scalar_dtype(x)


_SCATTER_PARAMS = (
    "dimension_numbers", "indices_are_sorted", "unique_indices", "mode", "update_jaxpr", "update_consts",
)


def _scatter_abstract_eval(
    name: str,
    operand: ShapedArray,
    indices: ShapedArray,
    updates: ShapedArray,
    dn: ScatterDimensionNumbers,
) -> ShapedArray:
    _check_index_dtype(name, indices)
    same_dtypes(name, (operand, updates))
    rank, urank = len(operand.shape), len(updates.shape)
    ivd = len(indices.shape) - 1
    _sorted_unique_in_range(name, "update_window_dims", dn.update_window_dims, urank)
    _sorted_unique_in_range(name, "inserted_window_dims", dn.inserted_window_dims, rank)
    _sorted_unique_in_range(name, "operand_batching_dims", dn.operand_batching_dims, rank)
    _disjoint(name, "inserted_window_dims", dn.inserted_window_dims, "operand_batching_dims", dn.operand_batching_dims)
    if len(dn.update_window_dims) + len(dn.inserted_window_dims) + len(dn.operand_batching_dims) != rank:
        raise TypeError(
            f"{name} op has window of size {len(dn.update_window_dims)} plus inserted/batching dims, which must "
            f"add up to the operand rank {rank}; got {dn}."
        )
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[ivd]:
        raise TypeError(
            f"{name} op has {len(dn.scatter_dims_to_operand_dims)} elements in scatter_dims_to_operand_dims but the "
            f"index vector (last) dimension of indices {indices.str_short()} has size {indices.shape[ivd]}."
        )
    _unique_in_range(name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, rank)
    _disjoint(
        name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, "operand_batching_dims",
        dn.operand_batching_dims,
    )
    _unique_in_range(name, "scatter_indices_batching_dims", dn.scatter_indices_batching_dims, ivd)
    if len(dn.operand_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise TypeError(
            f"{name} op requires equal numbers of operand_batching_dims and scatter_indices_batching_dims, got {dn}."
        )
    if tuple(operand.shape[i] for i in dn.operand_batching_dims) != tuple(
        indices.shape[i] for i in dn.scatter_indices_batching_dims
    ):
        raise TypeError(
            f"{name} op requires operand batching dimensions and indices batching dimensions to have the same "
            f"shape, got operand {operand.str_short()} and indices {indices.str_short()}."
        )
    if urank != len(dn.update_window_dims) + ivd:
        raise TypeError(
            f"{name}: updates rank must be len(update_window_dims) + indices rank - 1, got updates "
            f"{updates.str_short()}, indices {indices.str_short()} and {dn}."
        )
    scatter_sizes = tuple(s for i, s in enumerate(updates.shape) if i not in dn.update_window_dims)
    if scatter_sizes != indices.shape[:ivd]:
        raise TypeError(
            f"{name}: the scatter dimensions of updates {updates.str_short()} must match the batch dimensions "
            f"of indices {indices.str_short()}."
        )
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [i for i in range(rank) if i not in skip]
    for od, ud in zip(window_dims, dn.update_window_dims):
        if updates.shape[ud] > operand.shape[od]:
            raise TypeError(
                f"{name}: update window {updates.str_short()} does not fit in operand {operand.str_short()} ({dn})."
            )
    return operand


def _scatter_impl(
    operand: NpArray, indices: NpArray, updates: NpArray, dn: ScatterDimensionNumbers, mode: GatherScatterMode,
    combine: np.ufunc | None,
) -> NpArray:
    """The scatter, replacing (``combine=None``) or combining with ``combine.at`` (repeated
    windows combine in order)."""
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("scatter: mode ONE_HOT is not implemented")
    nd = operand.ndim
    batch_shape = indices.shape[:-1]
    starts = _window_starts(
        batch_shape, indices, nd, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
    )
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = [1] * nd
    for od, ud in zip([i for i in range(nd) if i not in skip], dn.update_window_dims):
        window[od] = updates.shape[ud]
    upper = np.array(operand.shape, np.int64) - np.array(window, np.int64)
    scatter_dims = [i for i in range(updates.ndim) if i not in dn.update_window_dims]
    upd = np.transpose(updates, scatter_dims + list(dn.update_window_dims)).reshape((len(starts), *window))
    if mode is GatherScatterMode.CLIP:
        starts = np.clip(starts, 0, upper)
    else:  # FILL_OR_DROP, and PROMISE_IN_BOUNDS as XLA implements it: drop out-of-bounds windows
        keep = ((starts >= 0) & (starts <= upper)).all(axis=1)
        if not keep.all():
            starts, upd = starts[keep], upd[keep]
    out = operand.copy()
    where = _window_index(starts, tuple(window))
    if combine is None:
        out[where] = upd
    else:
        combine.at(out, where, upd)
    return out


scatter_p = Primitive("scatter", param_names=_SCATTER_PARAMS)
scatter_add_p = Primitive("scatter-add", param_names=_SCATTER_PARAMS)


@scatter_p.def_abstract_eval
def _scatter_p_abstract_eval(
    operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *, dimension_numbers: ScatterDimensionNumbers,
    **params: ParamValue,
) -> ShapedArray:
    return _scatter_abstract_eval("scatter", operand, indices, updates, dimension_numbers)


@scatter_add_p.def_abstract_eval
def _scatter_add_p_abstract_eval(
    operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *, dimension_numbers: ScatterDimensionNumbers,
    **params: ParamValue,
) -> ShapedArray:
    if dtypes.is_bool(operand.dtype):
        raise TypeError("scatter-add does not accept dtype bool (add is not defined on bool).")
    return _scatter_abstract_eval("scatter-add", operand, indices, updates, dimension_numbers)


@checked_impl(scatter_p)
def _scatter_p_impl(
    operand: NpArray, indices: NpArray, updates: NpArray, *, dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode, **params: ParamValue,
) -> NpArray:
    return _scatter_impl(operand, indices, updates, dimension_numbers, mode, None)


@checked_impl(scatter_add_p)
def _scatter_add_p_impl(
    operand: NpArray, indices: NpArray, updates: NpArray, *, dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode, **params: ParamValue,
) -> NpArray:
    with np.errstate(over="ignore"):
        return _scatter_impl(operand, indices, updates, dimension_numbers, mode, np.add)


def _scatter_combining(name: str, combine: np.ufunc, accepts_bool: bool) -> Primitive:
    """A scatter whose windows combine with the operand (``scatter-mul/min/max``)."""
    p = Primitive(name, param_names=_SCATTER_PARAMS)

    @p.def_abstract_eval
    def _abstract_eval(
        operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *, dimension_numbers: ScatterDimensionNumbers,
        **params: ParamValue,
    ) -> ShapedArray:
        if dtypes.is_bool(operand.dtype) and not accepts_bool:
            raise TypeError(f"{name} does not accept dtype bool.")
        return _scatter_abstract_eval(name, operand, indices, updates, dimension_numbers)

    @checked_impl(p)
    def _impl(
        operand: NpArray, indices: NpArray, updates: NpArray, *, dimension_numbers: ScatterDimensionNumbers,
        mode: GatherScatterMode, **params: ParamValue,
    ) -> NpArray:
        with np.errstate(over="ignore", invalid="ignore"):
            return _scatter_impl(operand, indices, updates, dimension_numbers, mode, combine)

    return p


scatter_mul_p = _scatter_combining("scatter-mul", np.multiply, accepts_bool=False)
scatter_min_p = _scatter_combining("scatter-min", np.minimum, accepts_bool=True)
scatter_max_p = _scatter_combining("scatter-max", np.maximum, accepts_bool=True)

_combiner_jaxprs: dict[tuple[str, DType], ClosedJaxpr] = {}


def _combiner_jaxpr(op: str, dt: DType) -> ClosedJaxpr:
    """``{ lambda ; a b. let c = <op> a b in (c,) }`` on scalars of ``dt``: a scatter's
    combiner, as JAX records it in ``update_jaxpr``."""
    jaxpr = _combiner_jaxprs.get((op, dt))
    if jaxpr is None:
        from fcore.interpreters.staging import trace_to_jaxpr
        from fcore.lax import elementwise

        fn = getattr(elementwise, op)
        aval = shaped_array((), dt)
        jaxpr = trace_to_jaxpr(lambda a, b: [fn(a, b)], [aval, aval], f"scatter-{op} combiner")
        _combiner_jaxprs[(op, dt)] = jaxpr
    return jaxpr


def _add_jaxpr(dt: DType) -> ClosedJaxpr:
    return _combiner_jaxpr("add", dt)


def scatter(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter with replacement (``lax.scatter``); ``mode`` defaults to dropping out-of-bounds windows.

    With repeated indices the last update wins here (XLA leaves the order unspecified).
    """
    return _bind(
        scatter_p, operand, scatter_indices, updates, update_jaxpr=None, update_consts=(),
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
    )


def scatter_add(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that adds updates into ``operand`` (``lax.scatter_add``); repeated indices accumulate."""
    dt = dtypes.canonicalize_dtype(_operand_dtype(operand))
    combiner = _add_jaxpr(dt) if not dtypes.is_bool(dt) else None
    return _bind(
        scatter_add_p, operand, scatter_indices, updates, update_jaxpr=combiner, update_consts=(),
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
    )


def _scatter_combined(
    p: Primitive, op: str, operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool, unique_indices: bool,
    mode: str | GatherScatterMode | None,
) -> Array:
    dt = dtypes.canonicalize_dtype(_operand_dtype(operand))
    return _bind(
        p, operand, scatter_indices, updates, update_jaxpr=_combiner_jaxpr(op, dt), update_consts=(),
        dimension_numbers=dimension_numbers, indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
    )


def scatter_mul(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that multiplies updates into ``operand`` (``lax.scatter_mul``)."""
    return _scatter_combined(scatter_mul_p, "mul", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


def scatter_min(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that keeps the minimum of operand and updates (``lax.scatter_min``)."""
    return _scatter_combined(scatter_min_p, "min", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


def scatter_max(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """XLA's scatter that keeps the maximum of operand and updates (``lax.scatter_max``)."""
    return _scatter_combined(scatter_max_p, "max", operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode)


def scatter_sub(
    operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike, dimension_numbers: ScatterDimensionNumbers, *,
    indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | GatherScatterMode | None = None,
) -> Array:
    """``scatter_add`` of the negated updates (``lax.scatter_sub``)."""
    from fcore.lax.elementwise import neg

    return scatter_add(operand, scatter_indices, neg(updates), dimension_numbers, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode)


# -- conveniences built from the primitives above ------------------------------------------------
def _static_shape(shape: Sequence[int] | int) -> Shape:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return _index_tuple(shape)


def _array_dtype_weak(x: ArrayLike) -> tuple[DType, bool]:
    if isinstance(x, Array):
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(np.dtype(x.dtype)), False
    return dtypes.python_scalar_dtype(x), not isinstance(x, bool)


def full(shape: Sequence[int] | int, fill_value: ArrayLike, dtype: Any = None) -> Array:
    """An array of ``shape`` filled with the scalar ``fill_value`` (``lax.full``)."""
    from fcore.lax.elementwise import convert_element_type

    shp = _static_shape(shape)
    if np.shape(fill_value) if not isinstance(fill_value, Array) else fill_value.shape:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    fdt, fweak = _array_dtype_weak(fill_value)
    weak = dtype is None and fweak
    dt = fdt if dtype is None else dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    value = convert_element_type(fill_value, dt, weak)
    return broadcast(value, shp)


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Sequence[int] | None = None) -> Array:
    """``fill_value`` in the shape, dtype and weak type of ``x`` (``lax.full_like``)."""
    from fcore.lax.elementwise import convert_element_type

    xdt, xweak = _array_dtype_weak(x)
    if shape is not None:
        shp = _static_shape(shape)
    else:
        shp = x.shape if isinstance(x, Array) else tuple(np.shape(x))
    weak = dtype is None and xweak
    dt = xdt if dtype is None else dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    return full(shp, convert_element_type(fill_value, dt, weak))


def broadcast_to_rank(x: ArrayLike, rank: int) -> Array:
    """``x`` with leading unit axes added up to ``rank``."""
    nd = len(np.shape(x)) if not isinstance(x, Array) else x.ndim
    if nd == rank:
        return x if isinstance(x, Array) else broadcast(x, ())
    return broadcast(x, (1,) * (rank - nd))


def collapse(operand: ArrayLike, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """``operand`` with dimensions ``[start, stop)`` merged into one (``lax.collapse``)."""
    shape = tuple(np.shape(operand)) if not isinstance(operand, Array) else operand.shape
    nd = len(shape)
    start = start_dimension % nd if nd else 0
    stop = nd if stop_dimension is None else (stop_dimension if stop_dimension >= 0 else stop_dimension + nd)
    if not 0 <= start <= stop <= nd:
        raise ValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for an operand of rank {nd}")
    size = 1
    for d in shape[start:stop]:
        size *= d
    return reshape(operand, shape[:start] + (size,) + shape[stop:])


def split(operand: ArrayLike, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """``operand`` cut along ``axis`` into pieces of the given ``sizes`` (``lax.split``)."""
    shape = tuple(np.shape(operand)) if not isinstance(operand, Array) else operand.shape
    ax = operator.index(axis)
    ax = ax + len(shape) if ax < 0 else ax
    sizes_t = _index_tuple(sizes)
    if sum(sizes_t) != shape[ax]:
        raise ValueError(f"Sum of sizes {sum(sizes_t)} must be equal to dimension {ax} of the operand shape {shape}")
    if any(s < 0 for s in sizes_t):
        raise ValueError(f"Sizes must be non-negative, got sizes={sizes_t}")
    out, start = [], 0
    for s in sizes_t:
        out.append(slice_in_dim(operand, start, start + s, axis=ax))
        start += s
    return out


def tile(operand: ArrayLike, reps: Sequence[int]) -> Array:
    """``operand`` repeated ``reps[i]`` times along each axis (``lax.tile``)."""
    shape = tuple(np.shape(operand)) if not isinstance(operand, Array) else operand.shape
    reps_t = _index_tuple(reps)
    if len(reps_t) != len(shape):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps_t)} and x.ndim={len(shape)}.")
    inter: list[int] = []
    for r, n in zip(reps_t, shape):
        inter += [r, n]
    y = broadcast_in_dim(operand, tuple(inter), tuple(range(1, 2 * len(shape), 2)))
    return reshape(y, tuple(r * n for r, n in zip(reps_t, shape)))


def stack(operands: Sequence[ArrayLike], axis: int = 0) -> Array:
    """The operands (same shape and dtype) joined along a new ``axis`` (``lax.stack``)."""
    if not operands:
        raise ValueError("stack requires at least one operand")
    nd = len(np.shape(operands[0])) if not isinstance(operands[0], Array) else operands[0].ndim
    ax = operator.index(axis)
    ax = ax + nd + 1 if ax < 0 else ax
    return concatenate([expand_dims(o, (ax,)) for o in operands], ax)


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis`` (``lax.unstack``)."""
    shape = tuple(np.shape(x)) if not isinstance(x, Array) else x.shape
    ax = operator.index(axis)
    ax = ax + len(shape) if ax < 0 else ax
    return tuple(index_in_dim(x, i, ax, keepdims=False) for i in range(shape[ax]))


# ======================================================================================
# Transformation rules. Each is written once and used by both the tracing front end
# and the jaxpr passes (fcore.transforms), as in elementwise.py.
# ======================================================================================
from fcore.interpreters.array import ArrayImpl  # noqa: E402
from fcore.interpreters.eval import get_aval  # noqa: E402
from fcore.ir.parser import register_param_enum, register_param_struct  # noqa: E402
from fcore.lax.elementwise import div, eq, mul, sub  # noqa: E402
from fcore.lax.reductions import reduce_sum  # noqa: E402
from fcore.transforms.ad_util import UndefinedPrimal, Zero, instantiate, is_undefined  # noqa: E402
from fcore.transforms.batching import Dim, bdim_at, moveaxis  # noqa: E402
from fcore.transforms.jvp import deflinear, defjvp, defjvp_zero  # noqa: E402

register_param_enum(GatherScatterMode)
register_param_struct(GatherDimensionNumbers)
register_param_struct(ScatterDimensionNumbers)


def _aval(x: Any) -> ShapedArray:
    return x.aval if isinstance(x, UndefinedPrimal) else get_aval(x)


def _zeros(aval: ShapedArray) -> Any:
    """Materialized (strongly typed) zeros of ``aval``'s shape and dtype."""
    return instantiate(Zero(aval.strip_weak_type()))


def _const(value: bool | int | float, dt: DType, weak: bool = False) -> ArrayImpl:
    """A 0-d constant of ``dt`` (staged as a literal); booleans are never weakly typed."""
    return ArrayImpl(np.array(value).astype(dt), weak and not dtypes.is_bool(dt))


def _shift(dims: Shape, k: int = 1) -> Shape:
    return tuple(d + k for d in dims)


def _sum_all(x: Any) -> Any:
    nd = get_aval(x).ndim
    return reduce_sum(x, tuple(range(nd))) if nd else x


def _inverse_perm(perm: Shape) -> Shape:
    return tuple(int(i) for i in np.argsort(perm))


# -- jvp rules -----------------------------------------------------------------------------
for _p in (broadcast_in_dim_p, reshape_p, squeeze_p, transpose_p, concatenate_p, pad_p, slice_p, rev_p):
    deflinear(_p)
deflinear(dynamic_slice_p, [0])  # the start indices are integers: not differentiable
deflinear(dynamic_update_slice_p, [0, 1])
deflinear(scatter_add_p, [0, 2])
defjvp_zero(iota_p)


def _gather_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    x, idx = primals
    t = tangents[0]
    out = gather_p.bind(x, idx, **params)
    if type(t) is Zero:
        return out, Zero(get_aval(out))
    if params["mode"] is GatherScatterMode.FILL_OR_DROP:
        params = dict(params, fill_value=0)  # an out-of-bounds window is constant: its tangent is 0
    return out, gather_p.bind(t, idx, **params)


jvp_rules.register(gather_p, symbolic_zeros=True)(_gather_jvp)


def _gather_dnums_of(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather that reads back the windows a scatter with ``dn`` writes."""
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )


def _scatter_window(dn: ScatterDimensionNumbers, operand_ndim: int, updates_shape: Shape) -> Shape:
    """The operand-shaped window a scatter writes per index vector (gather ``slice_sizes``)."""
    skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = iter(dn.update_window_dims)
    return tuple(1 if i in skip else updates_shape[next(window)] for i in range(operand_ndim))


def _readback_mode(mode: GatherScatterMode) -> GatherScatterMode:
    """The gather mode that reads exactly what a scatter of ``mode`` wrote (dropped windows as fill)."""
    return GatherScatterMode.CLIP if mode is GatherScatterMode.CLIP else GatherScatterMode.FILL_OR_DROP


def _scatter_winners(
    idx: Any, dn: ScatterDimensionNumbers, operand_shape: Shape, updates_shape: Shape, indices_are_sorted: bool,
    mode: GatherScatterMode,
) -> tuple[Any, Any]:
    """Where a scatter with repeated indices keeps the operand, and which updates win.

    JAX's scheme: tag each update with a positive id, scatter the ids (the same way the values
    are scattered) and read them back; an update won where it reads back its own id.
    Returns bool masks shaped like the operand and like the updates.
    """
    ids_shape = tuple(1 if d in dn.update_window_dims else s for d, s in enumerate(updates_shape))
    num_ids = _prod(ids_shape)
    id_dt = np.dtype(np.uint32) if num_ids < 2**32 - 1 else np.dtype(np.uint64)
    ids = add(reshape(iota(id_dt, num_ids), ids_shape), _const(1, id_dt))
    update_ids = broadcast_in_dim(ids, updates_shape, tuple(range(len(updates_shape))))
    scattered_ids = scatter(
        broadcast_in_dim(_const(0, id_dt), operand_shape, ()), idx, update_ids, dn,
        indices_are_sorted=indices_are_sorted, mode=mode,
    )
    window = _scatter_window(dn, len(operand_shape), updates_shape)
    read_mode = _readback_mode(mode)
    gathered_ids = gather(
        scattered_ids, idx, _gather_dnums_of(dn), window, mode=read_mode,
        fill_value=0 if read_mode is GatherScatterMode.FILL_OR_DROP else None,
    )
    return eq(scattered_ids, _const(0, id_dt)), eq(update_ids, gathered_ids)


def _scatter_jvp(
    primals: list[Any], tangents: list[Any], *, dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any, update_consts: Any,
) -> tuple[Any, Any]:
    """JAX's ``_scatter_jvp``: with repeated indices, which update wins is unspecified, so primal
    and tangent are recomputed as scatter-adds of the winning values (both agree on the winner)."""
    x, idx, u = primals
    tx, _, tu = tangents
    params: dict[str, Any] = dict(
        dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts,
    )
    if type(tx) is Zero and type(tu) is Zero:
        out = scatter_p.bind(x, idx, u, **params)
        return out, Zero(get_aval(out))
    tx, tu = instantiate(tx), instantiate(tu)
    if unique_indices:
        return scatter_p.bind(x, idx, u, **params), scatter_p.bind(tx, idx, tu, **params)
    xa, ua = get_aval(x), get_aval(u)
    keep_operand, keep_update = _scatter_winners(idx, dimension_numbers, xa.shape, ua.shape, indices_are_sorted, mode)
    x_zeros, u_zeros = _zeros(xa), _zeros(ua)

    def scatter_kept(op: Any, up: Any) -> Any:
        return scatter_add(
            select_n(keep_operand, x_zeros, op), idx, select_n(keep_update, u_zeros, up), dimension_numbers,
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
        )

    return scatter_kept(x, u), scatter_kept(tx, tu)


jvp_rules.register(scatter_p, symbolic_zeros=True)(_scatter_jvp)


def _scatter_params(**params: Any) -> dict[str, Any]:
    return {k: params[k] for k in _SCATTER_PARAMS}


def _scatter_mul_jvp_updates(g: Any, x: Any, idx: Any, u: Any, **params: Any) -> Any:
    """As JAX: the updates' tangent is defined only for unique indices (else which update
    multiplies into which window is ambiguous)."""
    if not params["unique_indices"]:
        raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
    dn = params["dimension_numbers"]
    return mul(x, scatter_add(_zeros(get_aval(x)), idx, g, dn, indices_are_sorted=params["indices_are_sorted"],
                              unique_indices=True, mode=params["mode"]))


defjvp(scatter_mul_p, lambda g, x, idx, u, **params: scatter_mul_p.bind(g, idx, u, **params), None,
       _scatter_mul_jvp_updates)


def _scatter_extremal_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    """JAX's ``_scatter_extremal_jvp``: where several values tie for the extremum of a
    window, the tangent is their average."""

    def rule(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        x, idx, u = primals
        tx, _, tu = tangents
        out = prim.bind(x, idx, u, **params)
        if type(tx) is Zero and type(tu) is Zero:
            return out, Zero(get_aval(out))
        tx, tu = instantiate(tx), instantiate(tu)
        dn = params["dimension_numbers"]
        xa, ua = get_aval(x), get_aval(u)
        gdn = _gather_dnums_of(dn)
        window = _scatter_window(dn, xa.ndim, ua.shape)

        def back(v: Any) -> Any:
            return gather(v, idx, gdn, window)

        initial, target = back(x), back(out)
        won = eq(u, target)
        kept = eq(initial, target)
        one = _const(1, ua.dtype)
        ones_u = broadcast_in_dim(one, ua.shape, ())
        zeros_u = _zeros(ua)
        num_updates = back(scatter_add(_zeros(xa), idx, select_n(won, zeros_u, ones_u), dn))
        num_refs = back(scatter_add(_zeros(xa), idx, ones_u, dn))
        plus_one = add(num_updates, broadcast_in_dim(one, ua.shape, ()))
        updates_norm = select_n(kept, div(ones_u, num_updates), div(ones_u, plus_one))
        updates_coef = select_n(won, zeros_u, updates_norm)
        operand_norm = select_n(kept, zeros_u, div(ones_u, plus_one))
        operand_coef = div(sub(operand_norm, ones_u), num_refs)
        t_updates = add(mul(back(tx), operand_coef), mul(tu, updates_coef))
        t_out = scatter_add(tx, idx, t_updates, dn, indices_are_sorted=params["indices_are_sorted"],
                            unique_indices=params["unique_indices"], mode=params["mode"])
        return out, t_out

    return rule


for _p in (scatter_min_p, scatter_max_p):
    jvp_rules.register(_p, symbolic_zeros=True)(_scatter_extremal_jvp(_p))


# -- transpose rules -----------------------------------------------------------------------
def _broadcast_in_dim_transpose(ct: Any, x: Any, *, shape: Shape, broadcast_dimensions: Shape) -> list[Any]:
    in_shape = _aval(x).shape
    unit = {i for i, (s, d) in enumerate(zip(in_shape, broadcast_dimensions)) if s == 1 and shape[d] != 1}
    kept = [d for i, d in enumerate(broadcast_dimensions) if i not in unit]
    axes = tuple(d for d in range(len(shape)) if d not in kept)
    out = reduce_sum(ct, axes) if axes else ct
    order = sorted(kept)
    out = transpose(out, tuple(order.index(d) for d in kept))
    if get_aval(out).shape != in_shape:
        out = reshape_p.bind(out, new_sizes=in_shape, dimensions=None)
    return [out]


def _reshape_transpose(ct: Any, x: Any, *, new_sizes: Shape, dimensions: Shape | None) -> list[Any]:
    in_shape = _aval(x).shape
    if dimensions is None:
        return [reshape_p.bind(ct, new_sizes=in_shape, dimensions=None)]
    permuted = reshape_p.bind(ct, new_sizes=tuple(in_shape[d] for d in dimensions), dimensions=None)
    return [transpose(permuted, _inverse_perm(dimensions))]


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list[Any]:
    ct_shape = get_aval(ct).shape
    out: list[Any] = []
    start = 0
    for x in xs:
        size = _aval(x).shape[dimension]
        if is_undefined(x):
            starts = [0] * len(ct_shape)
            limits = list(ct_shape)
            starts[dimension], limits[dimension] = start, start + size
            out.append(slice_p.bind(ct, start_indices=tuple(starts), limit_indices=tuple(limits), strides=None))
        else:
            out.append(None)
        start += size
    return out


def _pad_transpose(ct: Any, x: Any, padding_value: Any, *, padding_config: PaddingConfig) -> list[Any]:
    """JAX's ``_pad_transpose``: undo negative edges by padding, then a strided slice."""
    a = get_aval(ct)
    t_operand = ct
    if any(lo or hi for lo, hi, _ in padding_config):
        unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
        t_operand = pad_p.bind(t_operand, _const(0, a.dtype, True), padding_config=unpad)
    if any(interior for _, _, interior in padding_config):
        shape = get_aval(t_operand).shape
        t_operand = slice_p.bind(
            t_operand, start_indices=(0,) * len(shape), limit_indices=shape,
            strides=tuple(interior + 1 for _, _, interior in padding_config),
        )
    t_padv = sub(_sum_all(ct), _sum_all(t_operand)) if is_undefined(padding_value) else None
    return [t_operand if is_undefined(x) else None, t_padv]


def _slice_transpose(ct: Any, x: Any, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> list[Any]:
    in_shape = _aval(x).shape
    a = get_aval(ct)
    if strides is None or all(s == 1 for s in strides):
        config = tuple((s, d - lim, 0) for s, lim, d in zip(start_indices, limit_indices, in_shape))
    else:
        real_limits = [s + (0 if t == 0 else 1 + (t - 1) * st) for s, t, st in zip(start_indices, a.shape, strides)]
        config = tuple((s, d - lim, st - 1) for s, lim, d, st in zip(start_indices, real_limits, in_shape, strides))
    return [pad_p.bind(ct, _const(0, a.dtype, True), padding_config=config)]


def _dynamic_slice_transpose(ct: Any, x: Any, *indices: Any, slice_sizes: Shape) -> list[Any]:
    if not is_undefined(x) or any(is_undefined(i) for i in indices):
        raise ValueError("dynamic_slice is linear only in its operand")
    return [dynamic_update_slice_p.bind(_zeros(_aval(x)), ct, *indices)] + [None] * len(indices)


def _dynamic_update_slice_transpose(ct: Any, x: Any, update: Any, *indices: Any) -> list[Any]:
    if any(is_undefined(i) for i in indices):
        raise ValueError("dynamic_update_slice is not linear in its start indices")
    ua = _aval(update)
    op_ct = dynamic_update_slice_p.bind(ct, _zeros(ua), *indices) if is_undefined(x) else None
    up_ct = dynamic_slice_p.bind(ct, *indices, slice_sizes=ua.shape) if is_undefined(update) else None
    return [op_ct, up_ct] + [None] * len(indices)


def _gather_transpose(
    ct: Any, x: Any, idx: Any, *, dimension_numbers: GatherDimensionNumbers, slice_sizes: Shape,
    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: Any,
) -> list[Any]:
    """A scatter-add of the cotangent windows into zeros. XLA's gather clamps out-of-bounds
    starts (``PROMISE_IN_BOUNDS`` included), so those transpose to a clamping scatter: the exact
    adjoint even when the promise is broken; filled windows (``FILL_OR_DROP``) are dropped."""
    if not is_undefined(x) or is_undefined(idx):
        raise ValueError("gather is linear only in its operand")
    dn = dimension_numbers
    if mode is GatherScatterMode.PROMISE_IN_BOUNDS:
        mode = GatherScatterMode.CLIP
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )
    out = scatter_add(
        _zeros(_aval(x)), idx, ct, sdn, unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode
    )
    return [out, None]


def _scatter_add_transpose(
    ct: Any, x: Any, idx: Any, u: Any, *, dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
    unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any, update_consts: Any,
) -> list[Any]:
    if is_undefined(idx):
        raise ValueError("scatter-add is not linear in its indices")
    dn = dimension_numbers
    up_ct = None
    if is_undefined(u):
        window = _scatter_window(dn, get_aval(ct).ndim, _aval(u).shape)
        up_ct = gather(
            ct, idx, _gather_dnums_of(dn), window, unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted, mode=_readback_mode(mode), fill_value=0,
        )
    return [ct if is_undefined(x) else None, None, up_ct]


def _scatter_transpose(
    ct: Any, x: Any, idx: Any, u: Any, *, dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
    unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any, update_consts: Any,
) -> list[Any]:
    """The operand keeps the cotangent outside the written windows; each update gets the
    cotangent of its window where it won (all of them with ``unique_indices``)."""
    if is_undefined(idx):
        raise ValueError("scatter is not linear in its indices")
    dn = dimension_numbers
    ua = _aval(u)
    op_ct = up_ct = None
    if is_undefined(x):
        op_ct = scatter(
            ct, idx, _zeros(ua), dn, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode
        )
    if is_undefined(u):
        operand_shape = get_aval(ct).shape
        window = _scatter_window(dn, len(operand_shape), ua.shape)
        up_ct = gather(
            ct, idx, _gather_dnums_of(dn), window, unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted, mode=_readback_mode(mode), fill_value=0,
        )
        if not unique_indices:
            keep_update = _scatter_winners(idx, dn, operand_shape, ua.shape, indices_are_sorted, mode)[1]
            up_ct = select_n(keep_update, _zeros(ua), up_ct)
    return [op_ct, None, up_ct]


transpose_rules.register(broadcast_in_dim_p)(_broadcast_in_dim_transpose)
transpose_rules.register(reshape_p)(_reshape_transpose)
transpose_rules.register(squeeze_p)(lambda ct, x, *, dimensions: [reshape_p.bind(ct, new_sizes=_aval(x).shape, dimensions=None)])
transpose_rules.register(transpose_p)(lambda ct, x, *, permutation: [transpose(ct, _inverse_perm(permutation))])
transpose_rules.register(concatenate_p)(_concatenate_transpose)
transpose_rules.register(pad_p)(_pad_transpose)
transpose_rules.register(slice_p)(_slice_transpose)
transpose_rules.register(dynamic_slice_p)(_dynamic_slice_transpose)
transpose_rules.register(dynamic_update_slice_p)(_dynamic_update_slice_transpose)
transpose_rules.register(rev_p)(lambda ct, x, *, dimensions: [rev_p.bind(ct, dimensions=dimensions)])
transpose_rules.register(gather_p)(_gather_transpose)
transpose_rules.register(scatter_add_p)(_scatter_add_transpose)
transpose_rules.register(scatter_p)(_scatter_transpose)


def _scatter_mul_transpose(
    ct: Any, x: Any, idx: Any, u: Any, *, dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
    unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any, update_consts: Any,
) -> list[Any]:
    """Linear in the operand (for fixed updates) and, with unique indices, in the updates."""
    if is_undefined(idx):
        raise ValueError("scatter-mul is not linear in its indices")
    dn = dimension_numbers
    op_ct = None
    up_ct = None
    if is_undefined(x):
        op_ct = scatter_mul(ct, idx, u, dn, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                            mode=mode)
    if is_undefined(u):
        if not unique_indices:
            raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
        window = _scatter_window(dn, get_aval(ct).ndim, _aval(u).shape)
        up_ct = gather(mul(ct, x), idx, _gather_dnums_of(dn), window, mode=mode, fill_value=0)
    return [op_ct, None, up_ct]


transpose_rules.register(scatter_mul_p)(_scatter_mul_transpose)


# -- batching rules ----------------------------------------------------------------------
def _phys(d: int, b: int) -> int:
    """Physical axis of logical axis ``d`` in a value batched at ``b``."""
    return d + 1 if d >= b else d


def _broadcast_in_dim_batch(
    axis_size: int, vals: list[Any], dims: list[Dim], *, shape: Shape, broadcast_dimensions: Shape
) -> tuple[Any, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    nd = get_aval(x).ndim
    bd = tuple(0 if j == b else broadcast_dimensions[j - (j > b)] + 1 for j in range(nd))
    return broadcast_in_dim_p.bind(x, shape=(axis_size,) + shape, broadcast_dimensions=bd), 0


def _reshape_batch(
    axis_size: int, vals: list[Any], dims: list[Dim], *, new_sizes: Shape, dimensions: Shape | None
) -> tuple[Any, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    x = moveaxis(x, b, 0)
    perm = None if dimensions is None else (0,) + _shift(dimensions)
    return reshape_p.bind(x, new_sizes=(axis_size,) + new_sizes, dimensions=perm), 0


def _squeeze_batch(axis_size: int, vals: list[Any], dims: list[Dim], *, dimensions: Shape) -> tuple[Any, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    phys = tuple(_phys(d, b) for d in dimensions)
    return squeeze_p.bind(x, dimensions=phys), b - sum(1 for p in phys if p < b)


def _transpose_batch(axis_size: int, vals: list[Any], dims: list[Dim], *, permutation: Shape) -> tuple[Any, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    perm = tuple(_phys(p, b) for p in permutation)
    return transpose_p.bind(x, permutation=perm[:b] + (b,) + perm[b:]), b


def _concatenate_batch(axis_size: int, vals: list[Any], dims: list[Dim], *, dimension: int) -> tuple[Any, Dim]:
    xs = [bdim_at(x, d, axis_size, 0) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


def _pad_batch(
    axis_size: int, vals: list[Any], dims: list[Dim], *, padding_config: PaddingConfig
) -> tuple[Any, Dim]:
    x, pv = vals
    bx, bp = dims
    if bp is None:
        assert bx is not None
        config = padding_config[:bx] + ((0, 0, 0),) + padding_config[bx:]
        return pad_p.bind(x, pv, padding_config=config), bx
    # A batched padding value: pad with zeros, then select the padding positions by a mask.
    x = bdim_at(x, bx, axis_size, 0)
    a = get_aval(x)
    config = ((0, 0, 0),) + padding_config
    padded = pad_p.bind(x, _const(0, a.dtype, True), padding_config=config)
    mask = pad_p.bind(
        broadcast_in_dim_p.bind(_const(True, dtypes.bool_), shape=a.shape, broadcast_dimensions=()),
        _const(False, dtypes.bool_), padding_config=config,
    )
    out_shape = get_aval(padded).shape
    fill = broadcast_in_dim_p.bind(moveaxis(pv, bp, 0), shape=out_shape, broadcast_dimensions=(0,))
    return select_n(mask, fill, padded), 0


def _slice_batch(
    axis_size: int, vals: list[Any], dims: list[Dim], *, start_indices: Shape, limit_indices: Shape,
    strides: Shape | None,
) -> tuple[Any, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    out = slice_p.bind(
        x,
        start_indices=start_indices[:b] + (0,) + start_indices[b:],
        limit_indices=limit_indices[:b] + (axis_size,) + limit_indices[b:],
        strides=None if strides is None else strides[:b] + (1,) + strides[b:],
    )
    return out, b


def _index_dtype_of(indices: Sequence[Any]) -> DType:
    return get_aval(indices[0]).dtype if indices else dtypes.canonicalize_dtype(np.dtype(np.int32))


def _stack_indices(axis_size: int, indices: Sequence[Any], dims: Sequence[Dim]) -> Any:
    """Per-example scalar start indices (batched or not) as one ``(axis_size, len(indices))`` array."""
    cols = [
        broadcast_in_dim_p.bind(i, shape=(axis_size, 1), broadcast_dimensions=() if d is None else (0,))
        for i, d in zip(indices, dims)
    ]
    return cols[0] if len(cols) == 1 else concatenate_p.bind(*cols, dimension=1)


def _dynamic_slice_batch(axis_size: int, vals: list[Any], dims: list[Dim], *, slice_sizes: Shape) -> tuple[Any, Dim]:
    x, *idx = vals
    bx, *bidx = dims
    if all(d is None for d in bidx):
        assert bx is not None
        zero = _const(0, _index_dtype_of(idx))
        starts = idx[:bx] + [zero] + idx[bx:]
        return dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes[:bx] + (axis_size,) + slice_sizes[bx:]), bx
    # Batched start indices: a gather of one clamped window per example (as JAX does).
    dt = get_aval(x).dtype
    if axis_size == 0:
        return broadcast_in_dim_p.bind(_const(0, dt), shape=(0,) + slice_sizes, broadcast_dimensions=()), 0
    index = _stack_indices(axis_size, idx, bidx)
    nd = len(slice_sizes)
    if bx is None:
        dn = GatherDimensionNumbers(
            offset_dims=tuple(range(1, nd + 1)), collapsed_slice_dims=(), start_index_map=tuple(range(nd))
        )
        return gather(x, index, dn, slice_sizes, mode=GatherScatterMode.CLIP), 0
    dn = GatherDimensionNumbers(
        offset_dims=tuple(range(1, nd + 1)), collapsed_slice_dims=(), start_index_map=tuple(range(1, nd + 1)),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,),
    )
    return gather(moveaxis(x, bx, 0), index, dn, (1,) + slice_sizes, mode=GatherScatterMode.CLIP), 0


def _dynamic_update_slice_batch(axis_size: int, vals: list[Any], dims: list[Dim]) -> tuple[Any, Dim]:
    x, u, *idx = vals
    bx, bu, *bidx = dims
    if all(d is None for d in bidx):
        if bx is not None and bx == bu:
            b = bx
        else:
            b = 0
            x, u = bdim_at(x, bx, axis_size, 0), bdim_at(u, bu, axis_size, 0)
        zero = _const(0, _index_dtype_of(idx))
        return dynamic_update_slice_p.bind(x, u, *idx[:b], zero, *idx[b:]), b
    # Batched start indices: a scatter of one clamped window per example (as JAX does).
    x, u = bdim_at(x, bx, axis_size, 0), bdim_at(u, bu, axis_size, 0)
    if axis_size == 0:
        return x, 0
    index = _stack_indices(axis_size, idx, bidx)
    nd = len(idx)
    dn = ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, nd + 1)), inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(1, nd + 1)), operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,),
    )
    return scatter(x, index, u, dn, indices_are_sorted=True, unique_indices=True, mode=GatherScatterMode.CLIP), 0


def _iota_batch(axis_size: int, vals: list[Any], dims: list[Dim], **params: Any) -> tuple[Any, Dim]:
    return iota_p.bind(**params), None  # iota has no operands: never batched


def _rev_batch(axis_size: int, vals: list[Any], dims: list[Dim], *, dimensions: Shape) -> tuple[Any, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    return rev_p.bind(x, dimensions=tuple(_phys(d, b) for d in dimensions)), b


def _gather_batch(
    axis_size: int, vals: list[Any], dims: list[Dim], *, dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape, unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: Any,
) -> tuple[Any, Dim]:
    """JAX's ``_gather_batching_rule``: a batched operand becomes an offset (window) dimension,
    batched indices an extra batch dimension, and both batched an operand batching dimension."""
    x, idx = vals
    bx, bi = dims
    dn = dimension_numbers
    params: dict[str, Any] = dict(
        unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value
    )
    if bi is None:
        assert bx is not None
        x = moveaxis(x, bx, 0)
        new = GatherDimensionNumbers(
            offset_dims=(0,) + _shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=(axis_size,) + slice_sizes, **params), 0
    idx = moveaxis(idx, bi, 0)
    if bx is None:
        new = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_shift(dn.start_indices_batching_dims),
        )
        params.update(unique_indices=False, indices_are_sorted=False)
        return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=slice_sizes, **params), 0
    x = moveaxis(x, bx, 0)
    if axis_size == 0:  # a size-1 batching slice of a size-0 axis is not a valid gather
        xa, ia = get_aval(x), get_aval(idx)
        out = gather_p.abstract_eval(
            [shaped_array(xa.shape[1:], xa.dtype), shaped_array(ia.shape[1:], ia.dtype)],
            dict(dimension_numbers=dn, slice_sizes=slice_sizes, **params),
        )[0]
        return broadcast_in_dim_p.bind(_const(0, xa.dtype), shape=(0,) + out.shape, broadcast_dimensions=()), 0
    new = GatherDimensionNumbers(
        offset_dims=_shift(dn.offset_dims),
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _shift(dn.start_indices_batching_dims),
    )
    return gather_p.bind(x, idx, dimension_numbers=new, slice_sizes=(1,) + slice_sizes, **params), 0


def _scatter_batching(prim: Primitive) -> Callable[..., tuple[Any, Dim]]:
    """JAX's ``_scatter_batching_rule`` (the operand is always batched: it is written into)."""

    def rule(
        axis_size: int, vals: list[Any], dims: list[Dim], *, dimension_numbers: ScatterDimensionNumbers,
        **params: ParamValue,
    ) -> tuple[Any, Dim]:
        x, idx, u = vals
        bx, bi, bu = dims
        dn = dimension_numbers
        x = bdim_at(x, bx, axis_size, 0)
        u = bdim_at(u, bu, axis_size, 0)
        if bi is None:
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + _shift(dn.update_window_dims),
                inserted_window_dims=_shift(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_shift(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
            )
        else:
            if axis_size == 0:
                return x, 0
            idx = moveaxis(idx, bi, 0)
            new = ScatterDimensionNumbers(
                update_window_dims=_shift(dn.update_window_dims),
                inserted_window_dims=_shift(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
                scatter_indices_batching_dims=(0,) + _shift(dn.scatter_indices_batching_dims),
            )
        return prim.bind(x, idx, u, dimension_numbers=new, **params), 0

    return rule


batching_rules.register(broadcast_in_dim_p)(_broadcast_in_dim_batch)
batching_rules.register(reshape_p)(_reshape_batch)
batching_rules.register(squeeze_p)(_squeeze_batch)
batching_rules.register(transpose_p)(_transpose_batch)
batching_rules.register(concatenate_p)(_concatenate_batch)
batching_rules.register(pad_p)(_pad_batch)
batching_rules.register(slice_p)(_slice_batch)
batching_rules.register(dynamic_slice_p)(_dynamic_slice_batch)
batching_rules.register(dynamic_update_slice_p)(_dynamic_update_slice_batch)
batching_rules.register(iota_p)(_iota_batch)
batching_rules.register(rev_p)(_rev_batch)
batching_rules.register(gather_p)(_gather_batch)
batching_rules.register(scatter_p)(_scatter_batching(scatter_p))
batching_rules.register(scatter_add_p)(_scatter_batching(scatter_add_p))
for _p in (scatter_mul_p, scatter_min_p, scatter_max_p):
    batching_rules.register(_p)(_scatter_batching(_p))


# -- lowering rules (StableHLO text) -------------------------------------------------------
from fcore.backend.lowering import LoweringRuleContext, tensor_type  # noqa: E402


def _ints(xs: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def _i64_array(xs: Sequence[int]) -> str:
    return "array<i64: " + ", ".join(str(int(x)) for x in xs) + ">" if xs else "array<i64>"


def _index_compare_type(dt: DType) -> str:
    return "UNSIGNED" if dtypes.is_unsigned_int(dt) else "SIGNED"


@lowering_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_lowering(ctx: LoweringRuleContext, x: str, *, shape: Shape, broadcast_dimensions: Shape) -> str:
    (a,), out = ctx.avals_in, ctx.avals_out[0]
    return ctx.op_typed("stablehlo.broadcast_in_dim", [x], [a], out, f", dims = {_ints(broadcast_dimensions)}")


def _reshape_to(ctx: LoweringRuleContext, x: str, a: ShapedArray, out: ShapedArray) -> str:
    return x if a.shape == out.shape else ctx.op_typed("stablehlo.reshape", [x], [a], out)


def _transpose_to(ctx: LoweringRuleContext, x: str, a: ShapedArray, perm: Shape) -> tuple[str, ShapedArray]:
    if perm == tuple(range(len(perm))):
        return x, a
    out = a.update(shape=tuple(a.shape[p] for p in perm))
    return ctx.op_typed("stablehlo.transpose", [x], [a], out, f", dims = {_ints(perm)}"), out


@lowering_rules.register(reshape_p)
def _reshape_lowering(ctx: LoweringRuleContext, x: str, *, new_sizes: Shape, dimensions: Shape | None) -> str:
    a = ctx.avals_in[0]
    if dimensions is not None:
        x, a = _transpose_to(ctx, x, a, dimensions)
    return _reshape_to(ctx, x, a, ctx.avals_out[0])


@lowering_rules.register(squeeze_p)
def _squeeze_lowering(ctx: LoweringRuleContext, x: str, *, dimensions: Shape) -> str:
    return _reshape_to(ctx, x, ctx.avals_in[0], ctx.avals_out[0])


@lowering_rules.register(transpose_p)
def _transpose_lowering(ctx: LoweringRuleContext, x: str, *, permutation: Shape) -> str:
    return _transpose_to(ctx, x, ctx.avals_in[0], permutation)[0]


@lowering_rules.register(concatenate_p)
def _concatenate_lowering(ctx: LoweringRuleContext, *xs: str, dimension: int) -> str:
    if len(xs) == 1:
        return xs[0]
    return ctx.op_typed("stablehlo.concatenate", list(xs), ctx.avals_in, ctx.avals_out[0], f", dim = {dimension}")


@lowering_rules.register(pad_p)
def _pad_lowering(ctx: LoweringRuleContext, x: str, padding_value: str, *, padding_config: PaddingConfig) -> str:
    if all(lo == hi == interior == 0 for lo, hi, interior in padding_config):
        return x
    lo, hi, interior = zip(*padding_config)
    attrs = f", low = {_ints(lo)}, high = {_ints(hi)}, interior = {_ints(interior)}"
    return ctx.op_typed("stablehlo.pad", [x, padding_value], ctx.avals_in, ctx.avals_out[0], attrs)


@lowering_rules.register(slice_p)
def _slice_lowering(
    ctx: LoweringRuleContext, x: str, *, start_indices: Shape, limit_indices: Shape, strides: Shape | None
) -> str:
    a, out = ctx.avals_in[0], ctx.avals_out[0]
    if a.shape == out.shape:
        return x  # the whole operand (a rank-0 slice included)
    steps = strides if strides is not None else (1,) * len(start_indices)
    parts = ", ".join(
        f"{s}:{lim}" if st == 1 else f"{s}:{lim}:{st}" for s, lim, st in zip(start_indices, limit_indices, steps)
    )
    return ctx.op_typed("stablehlo.slice", [f"{x} [{parts}]"], [a], out)


@lowering_rules.register(dynamic_slice_p)
def _dynamic_slice_lowering(ctx: LoweringRuleContext, x: str, *indices: str, slice_sizes: Shape) -> str:
    if not indices:
        return x
    return ctx.op_typed(
        "stablehlo.dynamic_slice", [x, *indices], ctx.avals_in, ctx.avals_out[0], f", sizes = {_ints(slice_sizes)}"
    )


@lowering_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_lowering(ctx: LoweringRuleContext, x: str, update: str, *indices: str) -> str:
    if not indices:
        return update
    return ctx.op_typed("stablehlo.dynamic_update_slice", [x, update, *indices], ctx.avals_in, ctx.avals_out[0])


@lowering_rules.register(iota_p)
def _iota_lowering(ctx: LoweringRuleContext, *, dtype: DType, shape: Shape, dimension: int) -> str:
    return ctx.emit(f"stablehlo.iota dim = {dimension} : {tensor_type(ctx.avals_out[0])}")


@lowering_rules.register(rev_p)
def _rev_lowering(ctx: LoweringRuleContext, x: str, *, dimensions: Shape) -> str:
    if not dimensions:
        return x
    return ctx.emit(f"stablehlo.reverse {x}, dims = {_ints(dimensions)} : {tensor_type(ctx.avals_out[0])}")


def _index_upper_bounds(ctx: LoweringRuleContext, idx: ShapedArray, bounds: Sequence[int]) -> str:
    """``bounds`` (one per index-vector entry) broadcast to the indices' shape, in their dtype."""
    info = np.iinfo(idx.dtype)
    values = np.clip(np.array(bounds, np.int64), builtins.max(int(info.min), 0), int(info.max)).astype(idx.dtype)
    vec = ctx.constant(values, idx.dtype, (len(bounds),))
    return ctx.broadcast(vec, ShapedArray((len(bounds),), idx.dtype), idx.shape, [idx.ndim - 1])


def _dnums_attr(kind: str, fields: Sequence[tuple[str, Shape]], index_vector_dim: int) -> str:
    body = ", ".join(f"{name} = {_ints(v)}" for name, v in fields if v)
    sep = ", " if body else ""
    return f"#stablehlo.{kind}<{body}{sep}index_vector_dim = {index_vector_dim}>"


def _bool_attr(b: bool) -> str:
    return "true" if b else "false"


@lowering_rules.register(gather_p)
def _gather_lowering(
    ctx: LoweringRuleContext, x: str, idx: str, *, dimension_numbers: GatherDimensionNumbers, slice_sizes: Shape,
    unique_indices: bool, indices_are_sorted: bool, mode: GatherScatterMode, fill_value: Any,
) -> str:
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT is not implemented")
    xa, ia = ctx.avals_in
    out = ctx.avals_out[0]
    dn = dimension_numbers
    dnums = _dnums_attr("gather", [
        ("offset_dims", dn.offset_dims), ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("operand_batching_dims", dn.operand_batching_dims),
        ("start_indices_batching_dims", dn.start_indices_batching_dims), ("start_index_map", dn.start_index_map),
    ], ia.ndim - 1)
    gathered = ctx.emit(
        f'"stablehlo.gather"({x}, {idx}) <{{dimension_numbers = {dnums}, '
        f"indices_are_sorted = {_bool_attr(indices_are_sorted)}, slice_sizes = {_i64_array(slice_sizes)}}}> : "
        f"({tensor_type(xa)}, {tensor_type(ia)}) -> {tensor_type(out)}"
    )
    k = ia.shape[-1]
    if mode is not GatherScatterMode.FILL_OR_DROP or k == 0 or out.size == 0:
        return gathered
    # FILL_OR_DROP: XLA clamps, so mask windows whose start is out of bounds in an indexed dimension.
    pred = ia.update(dtype=dtypes.bool_)
    cmp = f", {_index_compare_type(ia.dtype)}"
    upper = _index_upper_bounds(ctx, ia, [xa.shape[d] - slice_sizes[d] for d in dn.start_index_map])
    ok = ctx.op_typed("stablehlo.compare LE,", [idx, upper], [ia, ia], pred, cmp)
    if not dtypes.is_unsigned_int(ia.dtype):
        zero = ctx.constant(0, ia.dtype, ia.shape)
        ok = ctx.op("stablehlo.and", [ok, ctx.op_typed("stablehlo.compare GE,", [idx, zero], [ia, ia], pred, cmp)], pred)
    per_window = pred.update(shape=ia.shape[:-1])
    true = ctx.constant(True, dtypes.bool_)
    mask = ctx.emit(
        f"stablehlo.reduce({ok} init: {true}) applies stablehlo.and across dimensions = [{ia.ndim - 1}] : "
        f"({tensor_type(pred)}, tensor<i1>) -> {tensor_type(per_window)}"
    )
    batch_dims = [d for d in range(out.ndim) if d not in dn.offset_dims]
    mask = ctx.broadcast(mask, per_window, out.shape, batch_dims)
    fill = ctx.constant(fill_value, out.dtype, out.shape)
    return ctx.emit(f"stablehlo.select {mask}, {gathered}, {fill} : {tensor_type(out.update(dtype=dtypes.bool_))}, "
                    f"{tensor_type(out)}")


def _scatter_lowering(op: str | None) -> Callable[..., str]:
    """``stablehlo.scatter`` whose region replaces (``op=None``) or combines with ``op``."""

    def rule(
        ctx: LoweringRuleContext, x: str, idx: str, u: str, *, dimension_numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any,
        update_consts: Any,
    ) -> str:
        if mode is GatherScatterMode.ONE_HOT:
            raise NotImplementedError("scatter: mode ONE_HOT is not implemented")
        xa, ia, ua = ctx.avals_in
        out = ctx.avals_out[0]
        dn = dimension_numbers
        if mode is GatherScatterMode.CLIP and ia.size and ia.shape[-1]:
            # XLA drops out-of-bounds windows; CLIP clamps the start indices first (JAX's way).
            window = _scatter_window(dn, xa.ndim, ua.shape)
            upper = _index_upper_bounds(ctx, ia, [xa.shape[d] - window[d] for d in dn.scatter_dims_to_operand_dims])
            zero = ctx.constant(0, ia.dtype, ia.shape)
            idx = ctx.op("stablehlo.clamp", [zero, idx, upper], ia)
        dnums = _dnums_attr("scatter", [
            ("update_window_dims", dn.update_window_dims), ("inserted_window_dims", dn.inserted_window_dims),
            ("input_batching_dims", dn.operand_batching_dims),
            ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims),
        ], ia.ndim - 1)
        scalar = tensor_type(ShapedArray((), out.dtype))
        lhs, rhs = ctx.fn.fresh(), ctx.fn.fresh()
        if op is not None:
            res = ctx.fn.fresh()
            body = (f"      {res} = {op} {lhs}, {rhs} : {scalar}\n"
                    f"      stablehlo.return {res} : {scalar}\n")
        else:
            body = f"      stablehlo.return {rhs} : {scalar}\n"
        return ctx.emit(
            f'"stablehlo.scatter"({x}, {idx}, {u}) <{{indices_are_sorted = {_bool_attr(indices_are_sorted)}, '
            f"scatter_dimension_numbers = {dnums}, unique_indices = {_bool_attr(unique_indices)}}}> ({{\n"
            f"    ^bb0({lhs}: {scalar}, {rhs}: {scalar}):\n{body}"
            f"    }}) : ({tensor_type(xa)}, {tensor_type(ia)}, {tensor_type(ua)}) -> {tensor_type(out)}"
        )

    return rule


lowering_rules.register(scatter_p)(_scatter_lowering(None))
lowering_rules.register(scatter_add_p)(_scatter_lowering("stablehlo.add"))
lowering_rules.register(scatter_mul_p)(_scatter_lowering("stablehlo.multiply"))
lowering_rules.register(scatter_min_p)(_scatter_lowering("stablehlo.minimum"))
lowering_rules.register(scatter_max_p)(_scatter_lowering("stablehlo.maximum"))

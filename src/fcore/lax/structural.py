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
from typing import Any, TypeVar

import attrs
import numpy as np

from fcore.interpreters.array import Array
from fcore.interpreters.trace import Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType
from fcore.ir.core import Jaxpr
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.primitive import Primitive
from fcore.lax._base import ArrayLike, match_scalars, same_dtypes, shape_of
from fcore.lax.elementwise import add, convert_element_type, lt, select_n

NpArray = np.ndarray[Any, Any]
_F = TypeVar("_F", bound=Callable[..., Any])


def _checked_impl(p: Primitive) -> Callable[[_F], _F]:
    """Register ``f`` as ``p``'s eager impl, preceded by ``p``'s abstract evaluation.

    Eager evaluation calls impls directly; running the (cheap) shape rule first gives eager
    code the same errors as staged code, instead of NumPy's (or no error where NumPy is lax).
    """

    def register(f: _F) -> _F:
        rule = p.abstract_eval_rule
        assert rule is not None, f"define the abstract eval of {p.name} before its impl"

        def impl(*args: NpArray, **params: ParamValue) -> Any:
            rule(*[shaped_array(a.shape, a.dtype) for a in args], **params)
            return f(*args, **params)

        p.def_impl(impl)
        return f

    return register


Shape = tuple[int, ...]

__all__ = [
    "broadcast_in_dim_p", "reshape_p", "squeeze_p", "transpose_p", "concatenate_p", "pad_p",
    "slice_p", "dynamic_slice_p", "dynamic_update_slice_p", "iota_p", "rev_p",
    "broadcast_in_dim", "broadcast", "reshape", "squeeze", "expand_dims", "transpose",
    "concatenate", "pad", "slice", "slice_in_dim", "index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "iota", "broadcasted_iota",
    "rev", "gather_p", "scatter_p", "scatter_add_p", "GatherScatterMode", "GatherDimensionNumbers",
    "ScatterDimensionNumbers", "gather", "scatter", "scatter_add",
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


@_checked_impl(broadcast_in_dim_p)
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


@_checked_impl(reshape_p)
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


@_checked_impl(squeeze_p)
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


@_checked_impl(transpose_p)
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


@_checked_impl(concatenate_p)
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


@_checked_impl(pad_p)
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


@_checked_impl(slice_p)
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


@_checked_impl(dynamic_slice_p)
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


@_checked_impl(dynamic_update_slice_p)
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


@_checked_impl(iota_p)
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


@_checked_impl(rev_p)
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


@_checked_impl(gather_p)
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
    operand: NpArray, indices: NpArray, updates: NpArray, dn: ScatterDimensionNumbers, mode: GatherScatterMode, add: bool
) -> NpArray:
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
    if add:
        np.add.at(out, where, upd)
    else:
        out[where] = upd
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


@_checked_impl(scatter_p)
def _scatter_p_impl(
    operand: NpArray, indices: NpArray, updates: NpArray, *, dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode, **params: ParamValue,
) -> NpArray:
    return _scatter_impl(operand, indices, updates, dimension_numbers, mode, add=False)


@_checked_impl(scatter_add_p)
def _scatter_add_p_impl(
    operand: NpArray, indices: NpArray, updates: NpArray, *, dimension_numbers: ScatterDimensionNumbers,
    mode: GatherScatterMode, **params: ParamValue,
) -> NpArray:
    with np.errstate(over="ignore"):
        return _scatter_impl(operand, indices, updates, dimension_numbers, mode, add=True)


_add_jaxprs: dict[DType, Jaxpr] = {}


def _add_jaxpr(dt: DType) -> Jaxpr:
    """``{ lambda ; a b. let c = add a b in (c,) }`` on scalars of ``dt``: scatter-add's combiner, as JAX records it."""
    jaxpr = _add_jaxprs.get(dt)
    if jaxpr is None:
        from fcore.interpreters.staging import trace_to_jaxpr

        aval = shaped_array((), dt)
        jaxpr = trace_to_jaxpr(lambda a, b: [add(a, b)], [aval, aval], "scatter-add combiner").jaxpr
        _add_jaxprs[dt] = jaxpr
    return jaxpr


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

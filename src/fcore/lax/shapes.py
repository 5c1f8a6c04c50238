"""Shape primitives: operations that move, copy or pad elements without arithmetic.

``broadcast_in_dim``, ``reshape``, ``squeeze``, ``transpose``, ``concatenate``, ``pad``, ``rev``
and ``iota`` have JAX's names and parameters (sharding parameters dropped), an abstract
evaluation that validates shapes and dimension parameters, and an eager NumPy impl; after the
primitive blocks come the conveniences ``lax`` builds from them (``full``, ``tile``, ``stack``,
``collapse``, ...). Each primitive is one block, as docs/adding_a_primitive.md describes.

The user functions normalize their arguments once (tuples of Python ints, canonical dtypes)
so that the rules on the hot path only check, never convert. Eager impls return NumPy *views*
where NumPy can (transpose, broadcast, rev): fcore arrays are immutable, so sharing memory
is safe and saves a copy per operation.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence

import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType, DTypeLike
from fcore.lax._base import ArrayLike, NpArray, checked_impl, same_dtypes, shape_of
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, aval_of, bind, hlo_ints, index_tuple, literal, shift_dims
from fcore.lax.elementwise import convert_element_type, select_n, sub
from fcore.transforms.ad_util import UndefinedPrimal, is_undefined
from fcore.transforms.batching import Dim, batching_rules, bdim_at, moveaxis
from fcore.transforms.jvp import deflinear, defjvp_zero
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "broadcast_in_dim_p", "reshape_p", "squeeze_p", "transpose_p", "concatenate_p", "pad_p", "iota_p", "rev_p",
    "broadcast_in_dim", "broadcast", "expand_dims", "reshape", "squeeze", "transpose", "concatenate", "pad",
    "iota", "broadcasted_iota", "rev", "full", "full_like", "broadcast_to_rank", "collapse",
]

#: ``pad``'s ``(low, high, interior)`` per axis (a tuple of triples, printed as JAX prints it).
PaddingConfig = tuple[tuple[int, int, int], ...]


# -- helpers shared by the blocks ------------------------------------------------------------
_PERMUTATIONS: set[Shape] = set()


def _is_permutation(p: Shape) -> bool:
    """``p`` is a permutation of ``range(len(p))`` (memoized: programs reuse a few permutations)."""
    if p in _PERMUTATIONS:
        return True
    ok = sorted(p) == list(range(len(p)))
    if ok and len(_PERMUTATIONS) < 4096:
        _PERMUTATIONS.add(p)
    return ok


def _inverse_perm(perm: Shape) -> Shape:
    return tuple(int(i) for i in np.argsort(perm))


def _check_nonnegative(name: str, what: str, values: Shape) -> None:
    for v in values:
        if v < 0:
            raise TypeError(f"{name} {what} must have every element be nonnegative, got {values}.")


def _canonicalize_axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _phys(d: int, b: int) -> int:
    """Physical axis of logical axis ``d`` in a value batched at ``b``."""
    return d + 1 if d >= b else d


def _slice(x: Array, start_indices: Shape, limit_indices: Shape, strides: Shape | None) -> Array:
    """``slice_p`` for the transposes of ``concatenate`` and ``pad``.

    ``fcore.lax.slicing`` builds on this module (slice's transpose is a pad), so it is
    imported here when a rule first runs, to break that import cycle.
    """
    from fcore.lax.slicing import slice_p

    return bind(slice_p, x, start_indices=start_indices, limit_indices=limit_indices, strides=strides)


def _reduce_sum(x: Array, axes: Shape) -> Array:
    """``reduce_sum`` for the transposes of ``broadcast_in_dim`` and ``pad``.

    ``fcore.lax.reductions`` builds on this module (its rules reshape, pad and broadcast),
    so it is imported here when a rule first runs, to break that import cycle.
    """
    from fcore.lax.reductions import reduce_sum

    return reduce_sum(x, axes) if axes else x


def _reshape_to(ctx: LoweringRuleContext, x: str, a: ShapedArray, out: ShapedArray) -> str:
    return x if a.shape == out.shape else ctx.op_typed("stablehlo.reshape", [x], [a], out)


def _transpose_to(ctx: LoweringRuleContext, x: str, a: ShapedArray, perm: Shape) -> tuple[str, ShapedArray]:
    if perm == tuple(range(len(perm))):
        return x, a
    out = a.update(shape=tuple(a.shape[p] for p in perm))
    return ctx.op_typed("stablehlo.transpose", [x], [a], out, f", dims = {hlo_ints(perm)}"), out


# -- broadcast_in_dim[shape, broadcast_dimensions] ------------------------------------------
@attrs.frozen(kw_only=True)
class BroadcastInDimParams:
    """``broadcast_in_dim[shape, broadcast_dimensions]``: operand axis ``i`` is result axis
    ``broadcast_dimensions[i]`` of the result ``shape``."""

    shape: Shape
    broadcast_dimensions: Shape


broadcast_in_dim_p = Primitive("broadcast_in_dim", params=BroadcastInDimParams)


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


deflinear(broadcast_in_dim_p)


@transpose_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_transpose(
    ct: Array, x: UndefinedPrimal, *, shape: Shape, broadcast_dimensions: Shape
) -> list[Array]:
    in_shape = x.aval.shape
    unit = {i for i, (s, d) in enumerate(zip(in_shape, broadcast_dimensions)) if s == 1 and shape[d] != 1}
    kept = [d for i, d in enumerate(broadcast_dimensions) if i not in unit]
    out = _reduce_sum(ct, tuple(d for d in range(len(shape)) if d not in kept))
    order = sorted(kept)
    out = transpose(out, tuple(order.index(d) for d in kept))
    if get_aval(out).shape != in_shape:
        out = bind(reshape_p, out, new_sizes=in_shape, dimensions=None)
    return [out]


@batching_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, shape: Shape, broadcast_dimensions: Shape
) -> tuple[Array, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    nd = get_aval(x).ndim
    bd = tuple(0 if j == b else broadcast_dimensions[j - (j > b)] + 1 for j in range(nd))
    return bind(broadcast_in_dim_p, x, shape=(axis_size,) + shape, broadcast_dimensions=bd), 0


@lowering_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_lowering(ctx: LoweringRuleContext, x: str, *, shape: Shape, broadcast_dimensions: Shape) -> str:
    (a,), out = ctx.avals_in, ctx.avals_out[0]
    return ctx.op_typed("stablehlo.broadcast_in_dim", [x], [a], out, f", dims = {hlo_ints(broadcast_dimensions)}")


def broadcast_in_dim(operand: ArrayLike, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Array:
    """Broadcast ``operand`` to ``shape``; operand axis ``i`` becomes axis ``broadcast_dimensions[i]``."""
    shape_t = index_tuple(shape)
    dims = index_tuple(broadcast_dimensions)
    if isinstance(operand, Array) and operand.shape == shape_t and dims == tuple(range(len(shape_t))):
        return operand  # JAX forwards the identity broadcast instead of staging it
    return bind(broadcast_in_dim_p, operand, shape=shape_t, broadcast_dimensions=dims)


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Array:
    """Add leading dimensions of ``sizes`` (``lax.broadcast``)."""
    sizes_t = index_tuple(sizes)
    if not sizes_t and isinstance(operand, Array):
        return operand
    in_shape = shape_of(operand)
    dims = tuple(range(len(sizes_t), len(sizes_t) + len(in_shape)))
    return broadcast_in_dim(operand, sizes_t + in_shape, dims)


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Insert size-1 axes at ``dimensions`` (of the result); staged as ``broadcast_in_dim`` like JAX."""
    dims_in = index_tuple(dimensions)
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


# -- reshape[new_sizes, dimensions] ---------------------------------------------------------
@attrs.frozen(kw_only=True)
class ReshapeParams:
    """``reshape[new_sizes, dimensions]``: the result shape, and the operand's axes permuted
    first by ``dimensions`` (``None``: not permuted)."""

    new_sizes: Shape
    dimensions: Shape | None


reshape_p = Primitive("reshape", params=ReshapeParams)


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


deflinear(reshape_p)


@transpose_rules.register(reshape_p)
def _reshape_transpose(ct: Array, x: UndefinedPrimal, *, new_sizes: Shape, dimensions: Shape | None) -> list[Array]:
    in_shape = x.aval.shape
    if dimensions is None:
        return [bind(reshape_p, ct, new_sizes=in_shape, dimensions=None)]
    permuted = bind(reshape_p, ct, new_sizes=tuple(in_shape[d] for d in dimensions), dimensions=None)
    return [transpose(permuted, _inverse_perm(dimensions))]


@batching_rules.register(reshape_p)
def _reshape_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, new_sizes: Shape, dimensions: Shape | None
) -> tuple[Array, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    x = moveaxis(x, b, 0)
    perm = None if dimensions is None else (0,) + shift_dims(dimensions)
    return bind(reshape_p, x, new_sizes=(axis_size,) + new_sizes, dimensions=perm), 0


@lowering_rules.register(reshape_p)
def _reshape_lowering(ctx: LoweringRuleContext, x: str, *, new_sizes: Shape, dimensions: Shape | None) -> str:
    a = ctx.avals_in[0]
    if dimensions is not None:
        x, a = _transpose_to(ctx, x, a, dimensions)
    return _reshape_to(ctx, x, a, ctx.avals_out[0])


def reshape(operand: ArrayLike, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Array:
    """Reshape (after transposing by ``dimensions`` when given), as ``lax.reshape``."""
    sizes = index_tuple(new_sizes)
    in_shape = shape_of(operand)
    if dimensions is None:
        dims: Shape | None = None
        same_dims = True
    else:
        dims = index_tuple(dimensions)
        same_dims = dims == tuple(range(len(in_shape)))
    if in_shape and in_shape == sizes and same_dims and isinstance(operand, Array):
        return operand
    return bind(reshape_p, operand, new_sizes=sizes, dimensions=None if same_dims else dims)


# -- squeeze[dimensions] --------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class SqueezeParams:
    """``squeeze[dimensions]``: the size-1 axes removed (sorted, non-negative)."""

    dimensions: Shape


squeeze_p = Primitive("squeeze", params=SqueezeParams)


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


deflinear(squeeze_p)


@transpose_rules.register(squeeze_p)
def _squeeze_transpose(ct: Array, x: UndefinedPrimal, *, dimensions: Shape) -> list[Array]:
    return [bind(reshape_p, ct, new_sizes=x.aval.shape, dimensions=None)]


@batching_rules.register(squeeze_p)
def _squeeze_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, dimensions: Shape) -> tuple[Array, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    phys = tuple(_phys(d, b) for d in dimensions)
    return bind(squeeze_p, x, dimensions=phys), b - sum(1 for p in phys if p < b)


@lowering_rules.register(squeeze_p)
def _squeeze_lowering(ctx: LoweringRuleContext, x: str, *, dimensions: Shape) -> str:
    return _reshape_to(ctx, x, ctx.avals_in[0], ctx.avals_out[0])


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Remove size-1 axes ``dimensions`` (negative axes allowed, as in ``lax.squeeze``)."""
    nd = len(shape_of(array))
    dims = tuple(sorted(_canonicalize_axis("squeeze", d, nd) for d in index_tuple(dimensions)))
    if not dims and isinstance(array, Array):
        return array
    return bind(squeeze_p, array, dimensions=dims)


# -- transpose[permutation] -----------------------------------------------------------------
@attrs.frozen(kw_only=True)
class TransposeParams:
    """``transpose[permutation]``: result axis ``i`` is operand axis ``permutation[i]``."""

    permutation: Shape


transpose_p = Primitive("transpose", params=TransposeParams)


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


deflinear(transpose_p)


@transpose_rules.register(transpose_p)
def _transpose_transpose(ct: Array, x: UndefinedPrimal, *, permutation: Shape) -> list[Array]:
    return [transpose(ct, _inverse_perm(permutation))]


@batching_rules.register(transpose_p)
def _transpose_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, permutation: Shape) -> tuple[Array, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    perm = tuple(_phys(p, b) for p in permutation)
    return bind(transpose_p, x, permutation=perm[:b] + (b,) + perm[b:]), b


@lowering_rules.register(transpose_p)
def _transpose_lowering(ctx: LoweringRuleContext, x: str, *, permutation: Shape) -> str:
    return _transpose_to(ctx, x, ctx.avals_in[0], permutation)[0]


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """Permute axes: result axis ``i`` is operand axis ``permutation[i]``."""
    perm = index_tuple(permutation)
    if perm == tuple(range(len(shape_of(operand)))) and isinstance(operand, Array):
        return operand
    return bind(transpose_p, operand, permutation=perm)


# -- concatenate[dimension] -----------------------------------------------------------------
@attrs.frozen(kw_only=True)
class ConcatenateParams:
    """``concatenate[dimension]``: the axis along which the operands are joined."""

    dimension: int


concatenate_p = Primitive("concatenate", params=ConcatenateParams)


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs: ShapedArray, dimension: int) -> ShapedArray:
    # JAX's shape rule, then its dtype rule, in its words.
    if not xs:
        raise TypeError("concatenate expects at least one operand, got 0.")
    first = xs[0].shape
    nd = len(first)
    if any(len(x.shape) != nd for x in xs):
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: got "
            + ", ".join(str(x.shape) for x in xs) + "."
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
                "Cannot concatenate arrays with shapes that differ in dimensions other "
                f"than the one being concatenated: concatenating along dimension {dimension} for "
                "shapes " + ", ".join(str(x.shape) for x in xs) + "."
            )
        total += s[dimension]
    dt = same_dtypes("concatenate", xs)
    weak = all(x.weak_type for x in xs)
    return shaped_array(first[:dimension] + (total,) + first[dimension + 1:], dt, weak)


@checked_impl(concatenate_p)
def _concatenate_impl(*xs: NpArray, dimension: int) -> NpArray:
    return np.concatenate(xs, axis=dimension)


deflinear(concatenate_p)


@transpose_rules.register(concatenate_p)
def _concatenate_transpose(ct: Array, *xs: Array | UndefinedPrimal, dimension: int) -> list[Array | None]:
    ct_shape = get_aval(ct).shape
    out: list[Array | None] = []
    start = 0
    for x in xs:
        size = aval_of(x).shape[dimension]
        if is_undefined(x):
            starts = [0] * len(ct_shape)
            limits = list(ct_shape)
            starts[dimension], limits[dimension] = start, start + size
            out.append(_slice(ct, tuple(starts), tuple(limits), None))
        else:
            out.append(None)
        start += size
    return out


@batching_rules.register(concatenate_p)
def _concatenate_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, dimension: int) -> tuple[Array, Dim]:
    xs = [bdim_at(x, d, axis_size, 0) for x, d in zip(vals, dims)]
    return bind(concatenate_p, *xs, dimension=dimension + 1), 0


@lowering_rules.register(concatenate_p)
def _concatenate_lowering(ctx: LoweringRuleContext, *xs: str, dimension: int) -> str:
    if len(xs) == 1:
        return xs[0]
    return ctx.op_typed("stablehlo.concatenate", list(xs), ctx.avals_in, ctx.avals_out[0], f", dim = {dimension}")


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """Join ``operands`` (same dtype, same shape except along ``dimension``)."""
    if len(operands) == 0:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1:
        (op,) = operands
        if isinstance(op, Array):
            return op
    return bind(concatenate_p, *operands, dimension=operator.index(dimension))


# -- pad[padding_config] --------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class PadParams:
    """``pad[padding_config]``: ``(low, high, interior)`` padding per axis (negative edges crop)."""

    padding_config: PaddingConfig


pad_p = Primitive("pad", params=PadParams)


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
        size = plo + inner + phi
        full_shape.append(size)
        place.append(np.s_[plo:plo + inner:interior + 1])
        crop.append(np.s_[builtins.max(-lo, 0):size - builtins.max(-hi, 0)])
    out = np.full(full_shape, padding_value, dtype=x.dtype)
    out[tuple(place)] = x
    return out[tuple(crop)]


deflinear(pad_p)


@transpose_rules.register(pad_p)
def _pad_transpose(
    ct: Array, x: Array | UndefinedPrimal, padding_value: Array | UndefinedPrimal, *, padding_config: PaddingConfig
) -> list[Array | None]:
    """JAX's ``_pad_transpose``: undo negative edges by padding, then a strided slice."""
    a = get_aval(ct)
    t_operand = ct
    if any(lo or hi for lo, hi, _ in padding_config):
        unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
        t_operand = bind(pad_p, t_operand, literal(0, a.dtype, True), padding_config=unpad)
    if any(interior for _, _, interior in padding_config):
        shape = get_aval(t_operand).shape
        t_operand = _slice(
            t_operand, (0,) * len(shape), shape, tuple(interior + 1 for _, _, interior in padding_config)
        )
    t_padv = None
    if is_undefined(padding_value):
        t_padv = sub(_reduce_sum(ct, tuple(range(a.ndim))), _reduce_sum(t_operand, tuple(range(a.ndim))))
    return [t_operand if is_undefined(x) else None, t_padv]


@batching_rules.register(pad_p)
def _pad_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, padding_config: PaddingConfig
) -> tuple[Array, Dim]:
    x, pv = vals
    bx, bp = dims
    if bp is None:
        assert bx is not None
        config = padding_config[:bx] + ((0, 0, 0),) + padding_config[bx:]
        return bind(pad_p, x, pv, padding_config=config), bx
    # A batched padding value: pad with zeros, then select the padding positions by a mask.
    x = bdim_at(x, bx, axis_size, 0)
    a = get_aval(x)
    config = ((0, 0, 0),) + padding_config
    padded = bind(pad_p, x, literal(0, a.dtype, True), padding_config=config)
    mask = bind(
        pad_p,
        bind(broadcast_in_dim_p, literal(True, dtypes.bool_), shape=a.shape, broadcast_dimensions=()),
        literal(False, dtypes.bool_),
        padding_config=config,
    )
    out_shape = get_aval(padded).shape
    fill = bind(broadcast_in_dim_p, moveaxis(pv, bp, 0), shape=out_shape, broadcast_dimensions=(0,))
    return select_n(mask, fill, padded), 0


@lowering_rules.register(pad_p)
def _pad_lowering(ctx: LoweringRuleContext, x: str, padding_value: str, *, padding_config: PaddingConfig) -> str:
    if all(lo == hi == interior == 0 for lo, hi, interior in padding_config):
        return x
    lo, hi, interior = zip(*padding_config)
    config = f", low = {hlo_ints(lo)}, high = {hlo_ints(hi)}, interior = {hlo_ints(interior)}"
    return ctx.op_typed("stablehlo.pad", [x, padding_value], ctx.avals_in, ctx.avals_out[0], config)


def pad(operand: ArrayLike, padding_value: ArrayLike, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pad each axis with ``(low, high, interior)`` copies of ``padding_value`` (negative low/high crop).

    As everywhere in ``fcore.lax``, a Python-scalar ``padding_value`` has its default dtype
    (``0.0`` is float32), which must be the operand's.
    """
    config = tuple((operator.index(lo), operator.index(hi), operator.index(i)) for lo, hi, i in padding_config)
    return bind(pad_p, operand, padding_value, padding_config=config)


# -- iota[dtype, shape, dimension] ----------------------------------------------------------
@attrs.frozen(kw_only=True)
class IotaParams:
    """``iota[dtype, shape, dimension]``: ``0, 1, 2, ...`` along ``dimension`` of ``shape``."""

    dtype: DType
    shape: Shape
    dimension: int


iota_p = Primitive("iota", params=IotaParams)


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


defjvp_zero(iota_p)


@batching_rules.register(iota_p)
def _iota_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, dtype: DType, shape: Shape, dimension: int
) -> tuple[Array, Dim]:
    return bind(iota_p, dtype=dtype, shape=shape, dimension=dimension), None  # no operands: never batched


@lowering_rules.register(iota_p)
def _iota_lowering(ctx: LoweringRuleContext, *, dtype: DType, shape: Shape, dimension: int) -> str:
    return ctx.emit(f"stablehlo.iota dim = {dimension} : {tensor_type(ctx.avals_out[0])}")


def broadcasted_iota(dtype: DTypeLike, shape: Sequence[int], dimension: int) -> Array:
    """``0, 1, 2, …`` along ``dimension`` of an array of ``shape``, constant along the others."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    return bind(iota_p, dtype=dt, shape=index_tuple(shape), dimension=operator.index(dimension))


def iota(dtype: DTypeLike, size: int) -> Array:
    """``[0, 1, …, size - 1]`` of ``dtype`` (``lax.iota``)."""
    return broadcasted_iota(dtype, (size,), 0)


# -- rev[dimensions] ------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class RevParams:
    """``rev[dimensions]``: the axes whose order of elements is reversed."""

    dimensions: Shape


rev_p = Primitive("rev", params=RevParams)


@rev_p.def_abstract_eval
def _rev_abstract_eval(x: ShapedArray, *, dimensions: Shape) -> ShapedArray:
    ndim = len(x.shape)
    for d in dimensions:
        if not 0 <= d < ndim:
            raise TypeError(
                f"rev dimensions must all be in the range [0, {ndim}), got dimensions {dimensions} "
                f"for operand {x.str_short()}."
            )
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions} for operand {x.str_short()}.")
    return x


@checked_impl(rev_p)
def _rev_impl(x: NpArray, *, dimensions: Shape) -> NpArray:
    return np.flip(x, dimensions) if dimensions else x


deflinear(rev_p)


@transpose_rules.register(rev_p)
def _rev_transpose(ct: Array, x: UndefinedPrimal, *, dimensions: Shape) -> list[Array]:
    return [bind(rev_p, ct, dimensions=dimensions)]


@batching_rules.register(rev_p)
def _rev_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, dimensions: Shape) -> tuple[Array, Dim]:
    (x,), (b,) = vals, dims
    assert b is not None
    return bind(rev_p, x, dimensions=tuple(_phys(d, b) for d in dimensions)), b


@lowering_rules.register(rev_p)
def _rev_lowering(ctx: LoweringRuleContext, x: str, *, dimensions: Shape) -> str:
    if not dimensions:
        return x
    return ctx.emit(f"stablehlo.reverse {x}, dims = {hlo_ints(dimensions)} : {tensor_type(ctx.avals_out[0])}")


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Reverse the order of elements along ``dimensions`` (``lax.rev``)."""
    return bind(rev_p, operand, dimensions=index_tuple(dimensions))


# -- conveniences built from the primitives above ------------------------------------------
def _static_shape(shape: Sequence[int] | int) -> Shape:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return index_tuple(shape)


def _array_dtype_weak(x: ArrayLike) -> tuple[DType, bool]:
    if isinstance(x, Array):
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(np.dtype(x.dtype)), False
    return dtypes.python_scalar_dtype(x), not isinstance(x, bool)


def full(shape: Sequence[int] | int, fill_value: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    """An array of ``shape`` filled with the scalar ``fill_value`` (``lax.full``)."""
    shp = _static_shape(shape)
    if np.shape(fill_value) if not isinstance(fill_value, Array) else fill_value.shape:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {np.shape(fill_value)}.")
    fdt, fweak = _array_dtype_weak(fill_value)
    weak = dtype is None and fweak
    dt = fdt if dtype is None else dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    value = convert_element_type(fill_value, dt, weak)
    return broadcast(value, shp)


def full_like(
    x: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None, shape: Sequence[int] | None = None
) -> Array:
    """``fill_value`` in the shape, dtype and weak type of ``x`` (``lax.full_like``)."""
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

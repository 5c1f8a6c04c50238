"""``ragged_dot`` / ``ragged_dot_general``: a matrix product whose lhs rows (or contracting or
batch positions) fall into consecutive groups of sizes ``group_sizes`` (mixture-of-experts).

JAX's CPU lowering of ``ragged_dot_general`` is its ``_ragged_dot_general_impl``, a
composition of lax ops (a one-hot group mask from ``cumsum(group_sizes)``, then one
``dot_general`` that also contracts the group axis). fcore runs the same composition as a
``jit`` call (eagerly too, so the numbers are XLA's as JAX's are), after JAX's shape and dtype
checks; jvp, transpose and vmap come from the composition's ops.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence

import attrs
import numpy as np

from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType, DTypeLike
from fcore.lax._base import ArrayLike
from fcore.lax._decomposed import call_decomposed
from fcore.lax.dot import (
    CanonicalPrecision, Dims, DotDimensionNumbers, PrecisionLike, _dot_general_abstract_eval,
    canonicalize_precision, dot_general,
)
from fcore.lax.elementwise import and_, convert_element_type, le, lt, select, sub
from fcore.lax.reductions import cumsum
from fcore.lax.shapes import broadcast_in_dim, broadcasted_iota, full_like, transpose
from fcore.lax.sharding_constraint import with_sharding_constraint

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


def _as_dims(d: Sequence[int]) -> Dims:
    return tuple(int(i) for i in d)


@attrs.frozen(init=False)
class RaggedDotDimensionNumbers:
    """The dot dimension numbers ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``,
    the lhs ragged dimension (exactly one) and the rhs group dimensions (one in the
    non-contracting mode, none otherwise), as ``jax.lax.RaggedDotDimensionNumbers``."""

    dot_dimension_numbers: DotDimensionNumbers
    lhs_ragged_dimensions: Dims
    rhs_group_dimensions: Dims

    def __init__(
        self,
        dot_dimension_numbers: Sequence[Sequence[Sequence[int]]],
        lhs_ragged_dimensions: Sequence[int],
        rhs_group_dimensions: Sequence[int],
    ) -> None:
        (lc, rc), (lb, rb) = dot_dimension_numbers
        dn: DotDimensionNumbers = ((_as_dims(lc), _as_dims(rc)), (_as_dims(lb), _as_dims(rb)))
        self.__attrs_init__(dn, _as_dims(lhs_ragged_dimensions), _as_dims(rhs_group_dimensions))


_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


class _Mode(enum.Enum):
    NONCONTRACTING = 1  # [b.., m.., k..] x [g, b.., k.., n..] -> [b.., m.., n..]
    CONTRACTING = 2  # [b.., m.., k..] x [b.., k.., n..] -> [g, b.., m.., n..]
    BATCH = 3  # [b.., m.., k..] x [b.., k.., n..] -> [b.., m.., n..]


def _remaining(n: int, *taken: Sequence[int]) -> list[int]:
    skip = set().union(*taken)
    return [i for i in range(n) if i not in skip]


def _mode(lhs_rank: int, dims: RaggedDotDimensionNumbers) -> _Mode:
    ragged = dims.lhs_ragged_dimensions[0]
    (lc, _), (lb, _) = dims.dot_dimension_numbers
    free = _remaining(lhs_rank, lc, lb)
    if ragged in free:
        return _Mode.NONCONTRACTING
    if ragged in lc:
        return _Mode.CONTRACTING
    if ragged in lb:
        return _Mode.BATCH
    raise TypeError(
        f"lhs_ragged_dim {ragged} not found in lhs_noncontracting {free}, lhs_contracting {lc}, or lhs_batch {lb}."
    )


def _prefix_dims(mode: _Mode, rank: int, ragged: int, batch: Dims, contract: Dims) -> list[int]:
    """The operand axes ``group_sizes``' leading axes stand for (JAX's ``[b..., x..., g]``)."""
    free = _remaining(rank, contract, batch)
    if mode is _Mode.NONCONTRACTING:
        return list(batch) + free[: free.index(ragged)]
    if mode is _Mode.CONTRACTING:
        return list(batch) + list(contract[: contract.index(ragged)])
    return list(batch[: batch.index(ragged)])


def _check_in_range(dim: int, rank: int, dim_name: str, arg_name: str) -> None:
    if dim < 0 or dim >= rank:
        raise TypeError(
            f"ragged_dot_general requires {dim_name} numbers to be nonnegative and less than the number of axes "
            f"of the {arg_name} value, got {dim} for {arg_name} of rank {rank}."
        )


def _check(lhs: ShapedArray, rhs: ShapedArray, gs: ShapedArray, dims: RaggedDotDimensionNumbers,
           precision: CanonicalPrecision, preferred: DType | None) -> None:
    """JAX's shape rule, then its dtype rule, of ``ragged_dot_general``."""
    if len(dims.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = dims.lhs_ragged_dimensions[0]
    _check_in_range(ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    mode = _mode(lhs.ndim, dims)
    (lc, rc), (lb, rb) = dims.dot_dimension_numbers
    if gs.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if gs.ndim != 1:
        expected = tuple(lhs.shape[i] for i in _prefix_dims(mode, lhs.ndim, ragged, lb, lc)) + (gs.shape[-1],)
        if gs.shape != expected:
            raise TypeError(f"expected group_sizes to have shape {expected}, got {gs.shape}.")
    groups = gs.shape[-1]
    group_dims = dims.rhs_group_dimensions
    if mode is _Mode.NONCONTRACTING:
        if len(group_dims) != 1:
            raise TypeError(
                "ragged_dot_general requires exactly one rhs group dimension when lhs ragged dimension is "
                "noncontracting."
            )
        _check_in_range(group_dims[0], rhs.ndim, "rhs group dimension", "rhs")
        if group_dims[0] in rb or group_dims[0] in rc:
            raise TypeError(
                "ragged_dot_general requires rhs group dimension numbers to be distinct from contracting and "
                "batch dimensions."
            )
        if rhs.shape[group_dims[0]] != groups:
            raise TypeError(f"expected rhs group dimension size to be {groups}, got {rhs.shape[group_dims[0]]}.")
    elif group_dims:
        raise TypeError(
            "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension is "
            "contracting or batch."
        )
    if not dtypes.is_integer(gs.dtype):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of np.integer.")
    _dot_general_abstract_eval(lhs, rhs, dimension_numbers=dims.dot_dimension_numbers, precision=precision,
                               preferred_element_type=preferred)


def _expand(x: Array, dim: int, gs: Array, axes: list[int]) -> Array:
    """``x`` with a leading group axis: group ``i``'s slice keeps the positions of ``x``'s axis
    ``dim`` that group ``i`` covers (per ``gs``' leading ``axes``) and is zero elsewhere."""
    shape = (gs.shape[-1], *x.shape)
    ends = cumsum(gs, axis=gs.ndim - 1)
    starts = sub(ends, gs)
    if gs.ndim == 1:
        gs_dims: tuple[int, ...] = (0,)
    else:  # group axis first, then the prefix axes in x's order, for broadcast_in_dim
        order = [int(i) for i in np.argsort(axes)]
        perm = [gs.ndim - 1, *order]
        ends, starts = transpose(ends, perm), transpose(starts, perm)
        gs_dims = (0, *sorted(a + 1 for a in axes))
    iota = broadcasted_iota(gs.dtype, shape, dim + 1)
    mask = and_(le(broadcast_in_dim(starts, shape, gs_dims), iota), lt(iota, broadcast_in_dim(ends, shape, gs_dims)))
    wide = broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
    return select(mask, wide, full_like(wide, 0))


@functools.lru_cache(maxsize=256)
def _decomposition(
    dims: RaggedDotDimensionNumbers, precision: CanonicalPrecision, preferred: DType | None
) -> functools.partial[Array]:
    return functools.partial(_ragged_dot_general_impl, dims=dims, precision=precision, preferred=preferred)


def _ragged_dot_general_impl(lhs: Array, rhs: Array, gs: Array, *, dims: RaggedDotDimensionNumbers,
                             precision: CanonicalPrecision, preferred: DType | None) -> Array:
    """JAX's ``_ragged_dot_general_impl``: the group mask, then one ``dot_general``."""
    mode = _mode(lhs.ndim, dims)
    ragged = dims.lhs_ragged_dimensions[0]
    (lc, rc), (lb, rb) = dims.dot_dimension_numbers
    l_prefix = _prefix_dims(mode, lhs.ndim, ragged, lb, lc)

    def inc(ds: Sequence[int]) -> Dims:
        return tuple(d + 1 for d in ds)

    if mode is _Mode.NONCONTRACTING:
        dn: DotDimensionNumbers = (((*inc(lc), 0), (*rc, dims.rhs_group_dimensions[0])), (inc(lb), rb))
        return dot_general(_expand(lhs, ragged, gs, l_prefix), rhs, dn, precision, preferred)
    if mode is _Mode.CONTRACTING:
        r_ragged = rc[lc.index(ragged)]
        r_prefix = _prefix_dims(mode, rhs.ndim, r_ragged, rb, rc)
        dn = ((inc(lc), inc(rc)), ((0, *inc(lb)), (0, *inc(rb))))
        return dot_general(_expand(lhs, ragged, gs, l_prefix), _expand(rhs, r_ragged, gs, r_prefix), dn,
                           precision, preferred)
    return dot_general(lhs, rhs, dims.dot_dimension_numbers, precision, preferred)


def ragged_dot_general(
    lhs: ArrayLike,
    rhs: ArrayLike,
    group_sizes: ArrayLike,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: PrecisionLike = None,
    preferred_element_type: DTypeLike | None = None,
    group_offset: ArrayLike | None = None,
    out_sharding: object = None,
) -> Array:
    """``lax.ragged_dot_general``: ``dot_general`` with one lhs dimension split into groups
    (non-contracting: group ``i`` multiplies the rhs's group ``i``; contracting: one result per
    group, leading; batch: a plain ``dot_general``)."""
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    prec = canonicalize_precision(precision)
    pref = None if preferred_element_type is None else dtypes.canonicalize_dtype(dtypes.to_dtype(preferred_element_type))
    avals = [get_aval(a) for a in (lhs, rhs, group_sizes)]
    _check(avals[0], avals[1], avals[2], ragged_dot_dimension_numbers, prec, pref)
    fn = _decomposition(ragged_dot_dimension_numbers, prec, pref)
    args = [convert_element_type(a, t.dtype, t.weak_type) for a, t in zip((lhs, rhs, group_sizes), avals)]
    result = call_decomposed(fn, "ragged_dot_general", *args)
    if out_sharding is not None:  # as fcore's dot_general: a sharding constraint on the result
        result = with_sharding_constraint(result, out_sharding)
    return result


def ragged_dot(
    lhs: ArrayLike,
    rhs: ArrayLike,
    group_sizes: ArrayLike,
    precision: PrecisionLike = None,
    preferred_element_type: DTypeLike | None = None,
    group_offset: ArrayLike | None = None,
    out_sharding: object = None,
) -> Array:
    """``lax.ragged_dot``: ``lhs [m, k]`` times ``rhs [g, k, n]`` -> ``[m, n]``, where the
    ``group_sizes[i]`` rows after the first ``sum(group_sizes[:i])`` multiply ``rhs[i]`` (rows
    past ``sum(group_sizes)`` are zero)."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision, preferred_element_type, group_offset,
                              out_sharding)

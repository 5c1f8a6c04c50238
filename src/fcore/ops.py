"""``fcore.ops`` as ``jax.ops``: segment reductions (docs/ops.md).

``segment_<op>(data, segment_ids, num_segments)`` combines the rows of ``data`` that share a
segment id, as JAX does it: one ``lax.scatter_<op>`` into an array filled with the operation's
identity (0, 1, the dtype's lowest or highest value), so empty segments hold that identity and
out-of-range ids are dropped (``mode`` ``"fill"``/``"drop"``, the default) or clamped
(``"clip"``). With ``bucket_size`` the rows are scattered per bucket of ``bucket_size``
consecutive rows and the buckets are then reduced, which is more accurate for long sums.
Transformations need nothing of their own: the scatters carry jvp, transpose and batching rules.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from fcore import lax
from fcore.ir import dtypes
from fcore import numpy as fnp
from fcore.errors import ConcretizationError
from fcore.interpreters.array import Array
from fcore.lax import GatherScatterMode, ScatterDimensionNumbers
from fcore.typing import ArrayLike

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]

_Scatter = Callable[..., Array]
_Reducer = Callable[..., Array]


def _check_arraylike(name: str, *args: object) -> None:
    for pos, x in enumerate(args):
        if not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position {pos}.")


def _identity(kind: str, dtype: np.dtype) -> bool | int | float:
    """The value an empty segment holds: the identity of the combining operation."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtypes.is_bool(dtype):
        return kind == "min"
    if dtypes.is_integer(dtype):
        info = fnp.iinfo(dtype)
        return int(info.max) if kind == "min" else int(info.min)
    return float("inf") if kind == "min" else float("-inf")


def _num_segments(name: str, num_segments: object, segment_ids: Array) -> int:
    """``num_segments`` as a static int; by default ``max(segment_ids) + 1``, which needs
    concrete ids (as in JAX, under ``jit`` the number must be given)."""
    if num_segments is None:
        num_segments = np.max(segment_ids) + 1  # type: ignore[call-overload]
    try:
        n = operator.index(num_segments)  # type: ignore[arg-type]
    except ConcretizationError:
        raise ConcretizationError(
            f"Abstract tracer value encountered where concrete value is expected: {name}() `num_segments` "
            "argument. Since num_segments fixes the output's shape, a static value must be provided to use "
            f"{name} under jit."
        ) from None
    if n < 0:
        raise ValueError("num_segments must be non-negative.")
    return n


def _segment_update(
    name: str, kind: str, scatter: _Scatter, reducer: _Reducer, data: ArrayLike, segment_ids: ArrayLike,
    num_segments: int | None, indices_are_sorted: bool, unique_indices: bool, bucket_size: int | None,
    mode: GatherScatterMode | str | None, out_sharding: object,
) -> Array:
    _check_arraylike(name, data, segment_ids)
    if out_sharding is not None:
        raise NotImplementedError(f"{name}: out_sharding is not supported by fcore")
    parsed_mode = GatherScatterMode.from_any(GatherScatterMode.FILL_OR_DROP if mode is None else mode)
    x = fnp.asarray(data)
    ids = fnp.asarray(segment_ids)
    if not dtypes.is_integer(ids.dtype):
        raise TypeError(f"{name}: segment_ids must have an integer dtype, got {ids.dtype}")
    n = _num_segments(name, num_segments, ids)
    dtype = x.dtype
    window = x.shape[1:] if x.ndim else ()
    if bucket_size is None:
        out = fnp.full((n, *window), _identity(kind, dtype), dtype=dtype)
        idx = lax.expand_dims(ids, (ids.ndim,))
        batch: tuple[int, ...] = ids.shape
        inserted: tuple[int, ...] = (0,)
    else:
        num_buckets = -(-ids.size // bucket_size)
        out = fnp.full((num_buckets, n, *window), _identity(kind, dtype), dtype=dtype)
        rows = lax.div(lax.iota(ids.dtype, ids.shape[0] if ids.ndim else 1), np.array(bucket_size, ids.dtype))
        bucket_ids, seg_ids = fnp.broadcast_arrays(rows, lax.expand_dims(ids, (0,)))
        idx = fnp.stack([bucket_ids, seg_ids], axis=-1)
        batch = bucket_ids.shape
        inserted = (0, 1)
    updates = fnp.broadcast_to(x, (*batch, *window))
    dnums = ScatterDimensionNumbers(
        update_window_dims=tuple(range(len(batch), len(batch) + len(window))),
        inserted_window_dims=inserted,
        scatter_dims_to_operand_dims=inserted,
    )
    if updates.size:  # JAX skips the scatter when there is nothing to scatter
        out = scatter(out, idx, updates, dnums, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=parsed_mode)
    if bucket_size is not None:
        out = reducer(out, axis=0).astype(dtype)
    return out


def segment_sum(
    data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None, indices_are_sorted: bool = False,
    unique_indices: bool = False, bucket_size: int | None = None, mode: GatherScatterMode | str | None = None,
    out_sharding: object = None,
) -> Array:
    """The sum of ``data``'s rows per segment (``jax.ops.segment_sum``); empty segments are 0.

    >>> import numpy as np
    >>> from fcore import ops
    >>> ops.segment_sum(np.arange(5), np.array([0, 0, 1, 1, 2]))
    Array([1, 5, 4], dtype=int32)
    """
    return _segment_update("segment_sum", "sum", lax.scatter_add, fnp.sum, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)


def segment_prod(
    data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None, indices_are_sorted: bool = False,
    unique_indices: bool = False, bucket_size: int | None = None, mode: GatherScatterMode | str | None = None,
    out_sharding: object = None,
) -> Array:
    """The product of ``data``'s rows per segment (``jax.ops.segment_prod``); empty segments are 1.

    >>> import numpy as np
    >>> from fcore import ops
    >>> ops.segment_prod(np.arange(6), np.array([0, 0, 1, 1, 2, 2]))
    Array([ 0,  6, 20], dtype=int32)
    """
    return _segment_update("segment_prod", "prod", lax.scatter_mul, fnp.prod, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)


def segment_max(
    data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None, indices_are_sorted: bool = False,
    unique_indices: bool = False, bucket_size: int | None = None, mode: GatherScatterMode | str | None = None,
    out_sharding: object = None,
) -> Array:
    """The maximum of ``data``'s rows per segment (``jax.ops.segment_max``); empty segments hold
    ``-inf`` (the lowest integer, ``False``).

    >>> import numpy as np
    >>> from fcore import ops
    >>> ops.segment_max(np.arange(6.0, dtype=np.float32), np.array([0, 0, 1, 1, 3, 3]))
    Array([  1.,   3., -inf,   5.], dtype=float32)
    """
    return _segment_update("segment_max", "max", lax.scatter_max, fnp.max, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)


def segment_min(
    data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None, indices_are_sorted: bool = False,
    unique_indices: bool = False, bucket_size: int | None = None, mode: GatherScatterMode | str | None = None,
    out_sharding: object = None,
) -> Array:
    """The minimum of ``data``'s rows per segment (``jax.ops.segment_min``); empty segments hold
    ``inf`` (the highest integer, ``True``).

    >>> import numpy as np
    >>> from fcore import ops
    >>> ops.segment_min(np.arange(6), np.array([0, 0, 1, 1, 2, 2]), 4)
    Array([         0,          2,          4, 2147483647], dtype=int32)
    """
    return _segment_update("segment_min", "min", lax.scatter_min, fnp.min, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)

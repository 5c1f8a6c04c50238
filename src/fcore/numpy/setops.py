"""Set operations of ``fcore.numpy``: ``unique`` and the Array API ``unique_*`` functions,
``union1d``, ``intersect1d``, ``setdiff1d`` and ``setxor1d``, with ``jnp``'s algorithms.

Their output sizes depend on the data, so without ``size`` they need concrete inputs (a traced
one raises a ``ConcretizationError`` saying to pass ``size``); with a static ``size`` (and a
``fill_value`` for the padding) they have fixed shapes and work under ``jit`` and ``vmap``.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert, normalize_axis, result_of
from fcore.numpy.creation import arange, full, full_like, ones, zeros
from fcore.numpy.manipulation import append, diff
from fcore.numpy.reductions import any as _any, cumsum
from fcore.numpy.searching import concrete, nonzero
from fcore.numpy.shape_ops import concatenate, moveaxis, ravel
from fcore.numpy.sorting import lexsort, sort
from fcore.numpy.ufuncs_logic import isnan, logical_and, logical_not, not_equal, where

_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify "
    "a concrete value for the size argument, which will determine the output size."
)


class UniqueAllResult(NamedTuple):
    """What ``unique_all`` returns (the Array API's field names)."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """What ``unique_counts`` returns."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """What ``unique_inverse`` returns."""

    values: Array
    inverse_indices: Array


def _static_size(size: int | None, what: str) -> int | None:
    if size is None:
        return None
    try:
        return operator.index(size)
    except TypeError:
        raise TypeError(f"The size argument of {what} must be a static integer; got {size!r}. " + _SIZE_HINT) from None


def _promote_pair(name: str, a: ArrayLike, b: ArrayLike) -> tuple[Array, Array]:
    x, y = asarray(a, name), asarray(b, name, 1)
    dt, weak = result_of(x, y, name=name)
    return convert(x, dt, weak), convert(y, dt, weak)


def _unique_sorted_mask(ar: Array, axis: int, equal_nan: bool) -> tuple[Array, Array, Array]:
    """The slices of ``ar`` along ``axis`` sorted lexicographically, a mask of the first of each
    run of equal slices, and the sorting permutation."""
    aux = moveaxis(ar, axis, 0)
    if dtypes.is_complex(aux.dtype):
        # NaN only in the imaginary part sorts differently from NumPy: make it a full NaN.
        aux = where(isnan(aux), ArrayImpl(np.asarray(np.nan, aux.dtype), False), aux)
    size, *rest = aux.shape
    if math.prod(rest) == 0:
        size = 1
        perm = zeros(1, dtype=int)
    else:
        perm = lexsort(lax.rev(aux.reshape(size, math.prod(rest)).T, (0,)))
    aux = aux[perm]
    if aux.size:
        neq = not_equal(aux[1:], aux[:-1])
        if dtypes.is_inexact(aux.dtype) and equal_nan:
            neq = logical_and(neq, logical_not(logical_and(isnan(aux[1:]), isnan(aux[:-1]))))
        mask = ones(size, dtype=bool).at[1:].set(_any(neq, tuple(range(1, aux.ndim))))
    else:
        mask = zeros(size, dtype=bool)
    return aux, mask, perm


def _unique(ar: Array, axis: int, return_index: bool = False, return_inverse: bool = False,
            return_counts: bool = False, equal_nan: bool = True, size: int | None = None,
            fill_value: ArrayLike | None = None, return_true_size: bool = False) -> tuple[Array, ...]:
    """``jnp``'s ``_unique``: the results ``unique`` asks for, in NumPy's order."""
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    ind: Array
    if size is None:
        ind = ArrayImpl(np.nonzero(concrete(mask, "The error arose in jnp.unique(). " + _SIZE_HINT))[0]
                        .astype(dtypes.default_int_dtype()), False)
    else:
        ind = nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        fill = convert(fill_value, result.dtype)
        if result.shape[0]:
            valid = lax.expand_dims(arange(size) < mask.sum(), tuple(range(1, result.ndim)))
            result = where(valid, result, fill)
        else:
            result = full_like(result, fill, shape=(size, *result.shape[1:]))
    result = moveaxis(result, 0, axis)
    ret: tuple[Array, ...] = (result,)
    if return_index:
        ret += (perm[ind] if aux.size else perm,)
    if return_inverse:
        if aux.size:
            imask = cumsum(mask) - 1
            inv_idx = zeros(mask.shape, dtype=int).at[perm].set(imask)
        else:
            inv_idx = zeros(ar.shape[axis], dtype=int)
        ret += (inv_idx,)
    if return_counts:
        if aux.size:
            if size is None:
                idx = append(nonzero(mask)[0], mask.size)
            else:
                idx = nonzero(mask, size=size + 1)[0]
                idx = idx.at[1:].set(where(idx[1:], idx[1:], mask.size))
            ret += (diff(idx),)
        elif ar.shape[axis]:
            ret += (full((1,), ar.shape[axis], dtype=int),)
        else:
            ret += (zeros(0, dtype=int),)
    if return_true_size:
        ret += (mask.sum(),)
    return ret


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None,
           fill_value: ArrayLike | None = None, sorted: bool = True) -> Any:  # noqa: A002
    """The sorted unique elements (or slices along ``axis``), optionally with the indices of
    their first occurrences, the inverse indices and the counts; a static ``size`` pads (with
    ``fill_value``, default the smallest value) or truncates the result so it works under jit."""
    arr = asarray(ar, "unique")
    size = _static_size(size, "jnp.unique")
    if size is None:
        concrete(arr, "The error arose for the first argument of jnp.unique(). " + _SIZE_HINT)
    shape = arr.shape
    if axis is None:
        ax = 0
        arr = ravel(arr)
    else:
        ax = normalize_axis(axis, arr.ndim)
    result = _unique(arr, ax, return_index, return_inverse, return_counts, equal_nan=equal_nan, size=size,
                     fill_value=fill_value)
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        result = (*result[:i], result[i].reshape(shape), *result[i + 1:])
    return result[0] if len(result) == 1 else result


def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> UniqueAllResult:
    """Unique values with first indices, inverse indices and counts (NaNs are all distinct)."""
    values, indices, inverse, counts = unique(asarray(x, "unique_all"), return_index=True, return_inverse=True,
                                              return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueAllResult(values=values, indices=indices, inverse_indices=inverse, counts=counts)


def unique_counts(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> UniqueCountsResult:
    """Unique values and how often each occurs."""
    values, counts = unique(asarray(x, "unique_counts"), return_counts=True, equal_nan=False, size=size,
                            fill_value=fill_value)
    return UniqueCountsResult(values=values, counts=counts)


def unique_inverse(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> UniqueInverseResult:
    """Unique values and, for each element of ``x``, the index of its value among them."""
    values, inverse = unique(asarray(x, "unique_inverse"), return_inverse=True, equal_nan=False, size=size,
                             fill_value=fill_value)
    return UniqueInverseResult(values=values, inverse_indices=inverse)


def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The unique values of ``x`` (NaNs are all distinct)."""
    out: Array = unique(asarray(x, "unique_values"), equal_nan=False, size=size, fill_value=fill_value)
    return out


def _in1d(arr1: Array, arr2: Array, invert: bool) -> Array:
    """Whether each element of the flat ``arr1`` is in ``arr2`` (all pairs compared, as jnp's
    default method)."""
    a, b = _promote_pair("in1d", ravel(arr1), ravel(arr2))
    if a.size == 0 or b.size == 0:
        return (ones if invert else zeros)(a.shape, dtype=bool)
    pairs = (lax.broadcast_in_dim(a, (a.size, b.size), (0,)), lax.broadcast_in_dim(b, (a.size, b.size), (1,)))
    return lax.reduce_and(lax.ne(*pairs), (1,)) if invert else lax.reduce_or(lax.eq(*pairs), (1,))


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
              fill_value: ArrayLike | None = None) -> Array:
    """The sorted unique values of ``ar1`` that are not in ``ar2``."""
    arr1, arr2 = ravel(asarray(ar1, "setdiff1d")), ravel(asarray(ar2, "setdiff1d", 1))
    size = _static_size(size, "setdiff1d")
    if size is None:
        concrete(arr1, "The error arose in setdiff1d()")
    fill = full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    if arr1.size == 0:
        return full_like(arr1, fill, shape=size or 0)
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.size)
    mask = _in1d(arr1, arr2, invert=True)
    if size is None:
        return arr1[mask]
    if not assume_unique:
        # unique() pads with its smallest value: those positions are not results.
        n_unique = arr1.size + 1 - (arr1 == arr1[0]).sum()
        mask = where(arange(arr1.size) < n_unique, mask, False)
    return where(arange(size) < mask.sum(), arr1[where(mask, size=size)], fill)


def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """The sorted unique values that are in either array."""
    arr1, arr2 = asarray(ar1, "union1d"), asarray(ar2, "union1d", 1)
    size = _static_size(size, "union1d")
    if size is None:
        concrete(arr1, "The error arose in union1d()")
        concrete(arr2, "The error arose in union1d()")
    out: Array = unique(concatenate((arr1, arr2), axis=None), size=size, fill_value=fill_value)
    return out


def _concat_unique(arr1: Array, arr2: Array) -> tuple[Array, Array]:
    """The unique values of each array, the second's right after the first's, and their count."""
    a, n1 = _unique(arr1, 0, size=arr1.size, return_true_size=True)
    b, n2 = _unique(arr2, 0, size=arr2.size, return_true_size=True)
    arr = zeros(a.size + b.size, dtype=a.dtype)
    arr = lax.dynamic_update_slice(arr, a, (convert(0, n1.dtype),))
    arr = lax.dynamic_update_slice(arr, b, (n1,))
    return arr, n1 + n2


def _fill_results(vals: Array, num_results: Array, fill_value: ArrayLike | None) -> Array:
    valid = arange(vals.shape[0]) < num_results
    if fill_value is None:
        vals = where(valid, vals, vals.max())
        return where(valid, vals, vals.min())
    return where(valid, vals, fill_value)


def _setxor1d_size(arr1: Array, arr2: Array, fill_value: ArrayLike | None, assume_unique: bool, size: int) -> Array:
    if assume_unique:
        aux = sort(concatenate([arr1, arr2]))
        flag = concatenate((asarray(bool(aux.size)), aux[1:] != aux[:-1], asarray(True)), axis=None)
    else:
        arr, num_unique = _concat_unique(arr1, arr2)
        mask = arange(arr.size + 1) < num_unique + 1
        _, aux = lax.sort([logical_not(mask[1:]), arr], is_stable=True, num_keys=2)
        flag = logical_and(mask, concatenate((asarray(bool(aux.size)), aux[1:] != aux[:-1], asarray(False)), axis=None)
                           .at[num_unique].set(True))
    aux_mask = logical_and(flag[1:], flag[:-1])
    num_results = aux_mask.sum()
    if aux.size:
        indices = nonzero(aux_mask, size=size, fill_value=aux.shape[0])[0]
        vals = aux.at[indices].get(mode="fill", fill_value=0)
    else:
        vals = zeros(size, aux.dtype)
    return _fill_results(vals, num_results, fill_value)


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Array:
    """The sorted unique values that are in exactly one of the arrays."""
    arr1, arr2 = _promote_pair("setxor1d", ar1, ar2)
    arr1, arr2 = ravel(arr1), ravel(arr2)
    size = _static_size(size, "setxor1d")
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value, assume_unique, size)
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = concatenate((arr1, arr2))
    if aux.size == 0:
        return aux
    aux = sort(aux)
    flag = concatenate((asarray(True), aux[1:] != aux[:-1], asarray(True)), axis=None)
    return aux[concrete(logical_and(flag[1:], flag[:-1]), "The error arose in setxor1d()")]


def _intersect1d_size(arr1: Array, arr2: Array, fill_value: ArrayLike | None, assume_unique: bool, size: int,
                      return_indices: bool) -> Array | tuple[Array, Array, Array]:
    # The sorted unique values of both arrays, concatenated, with the positions they came from.
    if assume_unique:
        ind1, num_unique1 = arange(arr1.size), full((), arr1.size, dtype=int)
        ind2 = arange(arr2.size)
        arr = concatenate([arr1, arr2])
        aux, aux_sort_indices = lax.sort([arr, arange(arr.size)], is_stable=True, num_keys=1)
        mask = ones(arr.size, dtype=bool)
    else:
        a, ind1, num_unique1 = _unique(arr1, 0, size=arr1.size, return_index=True, return_true_size=True, fill_value=0)
        b, ind2, num_unique2 = _unique(arr2, 0, size=arr2.size, return_index=True, return_true_size=True, fill_value=0)
        arr = zeros(a.size + b.size, dtype=a.dtype)
        arr = lax.dynamic_update_slice(arr, a, (convert(0, num_unique1.dtype),))
        arr = lax.dynamic_update_slice(arr, b, (num_unique1,))
        mask = arange(arr.size) < num_unique1 + num_unique2
        _, aux, aux_sort_indices = lax.sort([logical_not(mask), arr, arange(arr.size)], is_stable=True, num_keys=2)
    # Equal neighbours in the sorted unique values are the intersection.
    aux_mask = logical_and(aux[1:] == aux[:-1], mask[1:])
    num_results = aux_mask.sum()
    if aux.size:
        val_indices = nonzero(aux_mask, size=size, fill_value=aux.size)[0]
        vals = aux.at[val_indices].get(mode="fill", fill_value=0)
    else:
        val_indices = arange(0)
        vals = zeros(size, aux.dtype)
    vals = _fill_results(vals, num_results, fill_value)
    if not return_indices:
        return vals
    valid = arange(size) < num_results
    i1 = where(valid, aux_sort_indices.at[val_indices].get(mode="fill", fill_value=arr1.size), arr1.size)
    i2 = aux_sort_indices.at[val_indices + 1].get(mode="fill", fill_value=arr2.size) - num_unique1
    i2 = where(valid, i2, arr2.size)
    if not assume_unique:
        i1 = ind1.at[i1].get(mode="fill", fill_value=ind1.size)
        i2 = ind2.at[i2].get(mode="fill", fill_value=ind2.size)
    return vals, i1, i2


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value: ArrayLike | None = None) -> Array | tuple[Array, Array, Array]:
    """The sorted unique values in both arrays (with ``return_indices``, where each first occurs)."""
    arr1, arr2 = _promote_pair("intersect1d", ar1, ar2)
    arr1, arr2 = ravel(arr1), ravel(arr2)
    size = _static_size(size, "intersect1d")
    if size is not None:
        return _intersect1d_size(arr1, arr2, fill_value, assume_unique, size, return_indices)
    ind1 = ind2 = arange(0)
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    arr = concatenate((arr1, arr2))
    if return_indices:
        aux, aux_sort_indices = lax.sort_key_val(arr, lax.iota(dtypes.int32, arr.size))
    else:
        aux = sort(arr)
    mask = concrete(aux[1:] == aux[:-1], "The error arose in intersect1d()")
    int1d = aux[:-1][mask]
    if not return_indices:
        return int1d
    i1 = aux_sort_indices[:-1][mask]
    i2 = aux_sort_indices[1:][mask] - arr1.size
    if not assume_unique:
        i1, i2 = ind1[i1], ind2[i2]
    return int1d, i1, i2

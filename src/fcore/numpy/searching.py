"""Data-dependent selection in ``fcore.numpy``: ``nonzero``, ``argwhere``, ``flatnonzero``,
``bincount``, ``compress``/``extract``, and the fixed-shape ``select``/``digitize``/``isin``.

Functions whose output shape depends on the data take a static ``size`` (and ``fill_value``)
as in ``jnp``: with it they work under ``jit``; without it they need a concrete input, and a
traced one raises a ``ConcretizationError`` that says to pass ``size``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore.errors import ConcretizationError
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, broadcast_shapes, broadcast_to, convert, normalize_axis, result_of



def concrete(x: Array, what: str) -> np.ndarray[Any, Any]:
    """The value of ``x`` on the host; a traced ``x`` raises a ``ConcretizationError`` naming ``what``."""
    try:
        return np.asarray(x)
    except ConcretizationError as e:
        raise ConcretizationError(f"{what}: {e}") from None


def _default_int(value: Any) -> Array:
    return ArrayImpl(np.asarray(value).astype(dtypes.default_int_dtype()), False)


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one array per dimension (default int dtype).

    Without ``size`` the input must be concrete; with it the result has exactly ``size``
    entries (truncated, or padded with ``fill_value``, default 0) and works under ``jit``.
    """
    arr = asarray(a, "nonzero")
    if arr.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if dtypes.is_bool(arr.dtype) else lax.ne(arr, ArrayImpl(np.zeros((), arr.dtype), False))
    if size is None:
        host = concrete(
            mask,
            "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero within JAX transformations",
        )
        found = np.nonzero(host)
        if fill_value is not None:
            _fill_values(fill_value, arr.ndim)
        return tuple(_default_int(i) for i in found)
    n = operator.index(size)
    if arr.size == 0 or n == 0:
        return tuple(_default_int(np.zeros(n)) for _ in arr.shape)
    from fcore.numpy.reductions import cumsum

    flat_mask = lax.reshape(mask, (arr.size,))
    flat_indices = cumsum(bincount(cumsum(flat_mask), length=n))
    idt = flat_indices.dtype
    strides = (np.cumprod(arr.shape[::-1])[::-1] // arr.shape).astype(idt)
    out = [
        lax.rem(lax.div(flat_indices, ArrayImpl(np.asarray(stride, idt), False)), ArrayImpl(np.asarray(dim, idt), False))
        for stride, dim in zip(strides, arr.shape)
    ]
    if fill_value is not None:
        fills = _fill_values(fill_value, arr.ndim)
        count = lax.reduce_sum(lax.convert_element_type(flat_mask, idt), (0,))
        pad = lax.ge(lax.iota(idt, n), lax.broadcast_in_dim(count, (n,), ()))
        from fcore.numpy.ufuncs_logic import where

        out = [where(pad, f, entry) for f, entry in zip(fills, out)]
    return tuple(out)


def _fill_values(fill_value: ArrayLike | tuple[ArrayLike, ...], ndim: int) -> tuple[ArrayLike, ...]:
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * ndim
    if len(fills) != ndim or any(np.shape(f) != () for f in fills):
        raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim}; got {fill_value}")
    return fills


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """Indices of the nonzero elements of the flattened array."""
    x = asarray(a, "flatnonzero")
    return nonzero(lax.reshape(x, (x.size,)), size=size, fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Array:
    """Indices of the nonzero elements as rows of an ``(N, a.ndim)`` array."""
    x = asarray(a, "argwhere")
    x1 = lax.reshape(x, (1,)) if x.ndim == 0 else x
    cols = nonzero(x1, size=size, fill_value=fill_value)
    result = lax.concatenate([lax.expand_dims(c, (1,)) for c in cols], 1)
    if x.ndim == 0:
        return lax.slice(result, (0, 0), (result.shape[0], 0))
    return result


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *, length: int | None = None) -> Array:
    """Count (or sum ``weights`` of) each non-negative integer; ``length`` makes it jit-able.

    Negative values count towards bin 0 and values past ``length`` are dropped, as in ``jnp``.
    """
    arr = asarray(x, "bincount")
    if dtypes.is_bool(arr.dtype):
        arr = lax.convert_element_type(arr, dtypes.int32)
    if not dtypes.is_integer(arr.dtype):
        raise TypeError(f"x argument to bincount must have an integer type; got {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        host = concrete(arr, "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, pass a static `length` argument")
        length = max(minlength, int(host.max()) + 1 if host.size else 0)
    else:
        length = operator.index(length)
    if weights is None:
        w: Array = ArrayImpl(np.ones((), dtypes.default_int_dtype()), False)
    else:
        w = asarray(weights, "bincount", 1)
        if w.shape != arr.shape:
            raise ValueError("shape of weights must match shape of x.")
    from fcore.numpy.creation import zeros
    from fcore.numpy.ufuncs_binary import clip

    counts: Array = zeros(length, w.dtype).at[clip(arr, 0)].add(w, mode="drop")
    return counts


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *, size: int | None = None,
             fill_value: ArrayLike = 0, out: None = None) -> Array:
    """The slices of ``a`` along ``axis`` where ``condition`` (1-D) is true."""
    from fcore.numpy.indexing import getitem
    from fcore.numpy.shape_ops import moveaxis

    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond = asarray(condition, "compress")
    arr = asarray(a, "compress", 1)
    asarray(fill_value, "compress", 2)
    cond = convert(cond, dtypes.bool_) if not dtypes.is_bool(cond.dtype) else cond
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        ax = 0
        arr = lax.reshape(arr, (arr.size,))
    else:
        ax = normalize_axis(axis, arr.ndim)
        arr = moveaxis(arr, ax, 0)
    n = arr.shape[0]
    extra = getitem(cond, slice(n, None))
    cond = getitem(cond, slice(None, n))
    arr = getitem(arr, slice(None, cond.shape[0]))
    if size is None:
        if concrete(extra, "compress").any():
            raise ValueError("condition contains entries that are out of bounds")
        result = getitem(arr, concrete(cond, "The size argument of jnp.compress must be given under transformations"))
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError(
            "size must be positive and not greater than the size of the array axis;"
            f" got size={size} for a.shape[axis]={arr.shape[0]}"
        )
    else:
        from fcore.numpy.sorting import argsort
        from fcore.numpy.ufuncs_logic import where

        mask = lax.broadcast_in_dim(cond, arr.shape, (0,))
        arr = where(mask, arr, convert(fill_value, arr.dtype))
        result = getitem(getitem(arr, argsort(cond, stable=True, descending=True)), slice(None, size))
    return moveaxis(result, 0, ax) if axis is not None else result


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0) -> Array:
    """The elements of ``arr`` where ``condition`` is true (both flattened)."""
    c, x = asarray(condition, "extract"), asarray(arr, "extract", 1)
    return compress(lax.reshape(c, (c.size,)), lax.reshape(x, (x.size,)), size=size, fill_value=fill_value)


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: ArrayLike = 0) -> Array:
    """For each element, the choice of the first true condition (``default`` if none is)."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    conds = [asarray(c, "select", i) for i, c in enumerate(condlist)]
    choices = [asarray(c, "select", i) for i, c in enumerate(choicelist)]
    dft = asarray(default, "select")
    dt, weak = result_of(dft, *choices, name="select")
    values = [convert(v, dt, weak) for v in (dft, *choices)]
    shape = broadcast_shapes(*(c.shape for c in conds), *(v.shape for v in values))
    bool_conds = [broadcast_to(c if dtypes.is_bool(c.dtype) else convert(c, dtypes.bool_), shape) for c in conds]
    stacked = lax.concatenate(
        [lax.expand_dims(c, (0,)) for c in (broadcast_to(ArrayImpl(np.asarray(False), False), shape), *bool_conds)], 0
    )
    idx = lax.argmax(stacked, 0, dtypes.int32)  # fcore's select_n takes int32 (or bool) cases
    return lax.select_n(idx, *(broadcast_to(v, shape) for v in values))


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False, *, method: str | None = None) -> Array:
    """The index of the bin each ``x`` falls in (``bins`` increasing or decreasing)."""
    from fcore.numpy.sorting import searchsorted
    from fcore.numpy.ufuncs_binary import subtract
    from fcore.numpy.ufuncs_logic import where

    xa, b = asarray(x, "digitize"), asarray(bins, "digitize", 1)
    if b.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if b.shape[0] == 0:
        return lax.broadcast_in_dim(ArrayImpl(np.zeros((), np.int32), False), xa.shape, ())
    side = "left" if right else "right"
    how = "scan" if method is None else method
    increasing = lax.ge(lax.index_in_dim(b, b.shape[0] - 1, keepdims=False), lax.index_in_dim(b, 0, keepdims=False))
    return where(
        increasing,
        searchsorted(b, xa, side=side, method=how),
        subtract(b.shape[0], searchsorted(lax.rev(b, (0,)), xa, side=side, method=how)),
    )


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Array:
    """Whether each element of ``element`` occurs in ``test_elements`` (compared all to all)."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', 'binary_search', 'sort', and 'auto'")
    e, t = asarray(element, "isin"), asarray(test_elements, "isin", 1)
    dt, weak = result_of(e, t, name="isin")
    a1, a2 = convert(e, dt, weak), convert(t, dt, weak)
    a1, a2 = lax.reshape(a1, (a1.size,)), lax.reshape(a2, (a2.size,))
    n, m = a1.shape[0], a2.shape[0]
    if n == 0 or m == 0:
        out = lax.broadcast_in_dim(ArrayImpl(np.asarray(invert), False), (n,), ())
    else:
        pairs = (lax.broadcast_in_dim(a1, (n, m), (0,)), lax.broadcast_in_dim(a2, (n, m), (1,)))
        out = lax.reduce_and(lax.ne(*pairs), (1,)) if invert else lax.reduce_or(lax.eq(*pairs), (1,))
    return lax.reshape(out, e.shape)

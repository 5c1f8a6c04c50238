"""Index construction of ``fcore.numpy``: ``tril_indices``/``triu_indices`` (and ``_from``),
``diag_indices``, ``mask_indices``, ``indices``, ``ix_``, ``unravel_index``,
``ravel_multi_index`` and the ``mgrid``/``ogrid``/``r_``/``c_``/``s_``/``index_exp`` helpers,
with ``jnp``'s dtypes."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert, result_of



def _int_array(values: np.ndarray[Any, Any]) -> Array:
    return ArrayImpl(values.astype(dtypes.default_int_dtype()), False)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array."""
    rows, cols = np.tril_indices(operator.index(n), operator.index(k), None if m is None else operator.index(m))
    return _int_array(rows), _int_array(cols)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array."""
    rows, cols = np.triu_indices(operator.index(n), operator.index(k), None if m is None else operator.index(m))
    return _int_array(rows), _int_array(cols)


def _matrix_shape(arr: Any, name: str) -> tuple[int, ...]:
    shape = tuple(arr.shape) if hasattr(arr, "shape") else asarray(arr, name).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    rows, cols = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(rows, k=k, m=cols)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    rows, cols = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(rows, k=k, m=cols)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """The indices of the main diagonal of an ``ndim``-dimensional array of side ``n``."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    idt = dtypes.int64 if n >= 2**31 else dtypes.default_int_dtype()
    return (lax.iota(idt, n),) * ndim


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    x = asarray(arr, "diag_indices_from")
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], ndim=x.ndim)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """A grid of indices (stacked, or a tuple of broadcastable arrays when ``sparse``)."""
    from fcore.numpy._dtypes import canonical_dtype
    from fcore.numpy.shape_ops import stack

    dt = canonical_dtype(int if dtype is None else dtype)
    dims = tuple(operator.index(d) for d in dimensions)
    nd = len(dims)
    out: list[Array] = []
    for i, dim in enumerate(dims):
        shape = (1,) * i + (dim,) + (1,) * (nd - i - 1) if sparse else dims
        out.append(lax.broadcast_in_dim(lax.iota(dt, dim), shape, (i,)))
    if sparse:
        return tuple(out)
    return stack(out, 0) if out else ArrayImpl(np.zeros((0,), dt), False)


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Open-mesh index arrays from 1-D sequences (``x[ix_(rows, cols)]`` is a sub-grid)."""
    arrays = [asarray(a, "ix", i) for i, a in enumerate(args)]
    n = len(arrays)
    out: list[Array] = []
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}")
        if dtypes.is_bool(a.dtype):
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = a.shape[0]
        if a.size == 0:
            out.append(ArrayImpl(np.zeros(shape, np.intp).astype(dtypes.canonicalize_dtype(np.dtype(np.intp))), False))
        else:
            out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(out)


def unravel_index(indices: ArrayLike, shape: Sequence[int] | int) -> tuple[Array, ...]:
    """The multi-indices of flat ``indices`` into an array of ``shape`` (out-of-range indices
    are clamped, as in jnp)."""
    from fcore.numpy.ufuncs_binary import divmod as _divmod, subtract
    from fcore.numpy.ufuncs_logic import greater, less, where

    idx = asarray(indices, "unravel_index")
    dims = [operator.index(s) for s in shape] if isinstance(shape, (list, tuple)) else [operator.index(cast(int, shape))]
    out: list[Any] = [0] * len(dims)
    for i, s in reversed(list(enumerate(dims))):
        idx, out[i] = _divmod(idx, s)
    oob_pos = greater(idx, 0)
    oob_neg = ArrayImpl(np.asarray(False), False) if dtypes.is_unsigned_int(idx.dtype) else less(idx, -1)
    return tuple(where(oob_pos, subtract(s, 1), where(oob_neg, 0, i)) for s, i in zip(dims, out))


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Array:
    """Flat indices of the multi-indices ``multi_index`` into an array of shape ``dims``."""
    from fcore.numpy._dtypes import canonical_dtype
    from fcore.numpy.ufuncs_binary import add, clip, multiply, remainder

    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    shape = tuple(operator.index(d) for d in dims)
    arrays = [asarray(m, "ravel_multi_index", i) for i, m in enumerate(multi_index)]
    dt = result_of(1, *arrays, name="ravel_multi_index")[0] if dtype is None else canonical_dtype(dtype)
    if not dtypes.is_integer(dt):
        raise ValueError(f"dtype={dt} is not an integer type.")
    if math.prod(shape) - 1 > np.iinfo(dt).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dt} not large enough to hold flattened index for dims={shape}. Use the "
            "dtype argument to pass a suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims)))."
        )
    for a in arrays:
        if not dtypes.is_integer(a.dtype):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        from fcore.numpy.searching import concrete

        for a, d in zip(arrays, shape):
            host = concrete(a, "The error occurred because ravel_multi_index was jit-compiled with mode='raise'. "
                               "Use mode='wrap' or mode='clip' instead")
            if ((host < 0) | (host >= d)).any():
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        arrays = [clip(a, 0, d - 1) for a, d in zip(arrays, shape)]
    elif mode == "wrap":
        arrays = [remainder(a, d) for a, d in zip(arrays, shape)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + shape[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + shape[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result: Array = ArrayImpl(np.zeros((), dt), False)
    for a, s in zip(arrays, strides):
        result = add(result, multiply(convert(a, dt), int(s)))
    return result


class _Grid:
    """``mgrid[...]``/``ogrid[...]``: slices become ``arange`` (or ``linspace`` for a complex
    step, whose magnitude is the number of points), then a dense or open mesh."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        from fcore.numpy.creation import arange, linspace, meshgrid
        from fcore.numpy.shape_ops import stack

        def axis_values(s: slice) -> Array:
            start = 0 if s.start is None else s.start
            step = 1 if s.step is None else s.step
            if isinstance(step, complex):
                points: Array = linspace(start, s.stop, int(abs(step)), endpoint=True)
                return points
            return arange(start, s.stop, step)

        if isinstance(key, slice):
            return axis_values(key)
        grids = [axis_values(s) for s in key]
        dt, weak = result_of(*grids, name="mgrid")
        grids = [convert(g, dt, weak) for g in grids]
        output = meshgrid(*grids, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return tuple(output)
        if not output:
            return ArrayImpl(np.zeros((0,), dtypes.default_int_dtype()), False)
        return stack(output, 0)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)
s_ = np.s_
index_exp = np.index_exp


def _grid_1d(s: slice) -> Array:
    """A slice in ``r_``/``c_``: ``arange``, or ``linspace`` for a complex step (its number of points)."""
    from fcore.numpy.creation import arange, linspace

    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if np.iscomplex(step):
        points: Array = linspace(start, s.stop, int(abs(step)))
        return points
    return arange(start, s.stop, step)


class _AxisConcat:
    """``r_[...]``/``c_[...]``: concatenate the items (slices become ``arange``/``linspace``)
    along ``axis`` after making each at least ``ndmin``-dimensional; a leading string such as
    ``"0,2,-1"`` sets the axis, ``ndmin`` and where 1-D items go, and ``"r"``/``"c"`` make a
    row or column matrix, as NumPy's index tricks do."""

    def __init__(self, axis: int, ndmin: int, trans1d: int) -> None:
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Array:
        from fcore.numpy.creation import array
        from fcore.numpy.shape_ops import concatenate, expand_dims, transpose

        items: tuple[Any, ...] = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = items[0]
        if isinstance(directive, str):
            items = items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                k = len(vec)
                vec = vec + params[k:] if k < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in items:
            if isinstance(item, slice):
                newobj, item_ndim = _grid_1d(item), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                newobj = array(item, copy=False)
                item_ndim = newobj.ndim
            newobj = array(newobj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                newobj = transpose(newobj, order[shift:] + order[:shift])
            output.append(newobj)
        res = concatenate(tuple(output), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


r_ = _AxisConcat(axis=0, ndmin=1, trans1d=-1)
c_ = _AxisConcat(axis=-1, ndmin=2, trans1d=0)


def mask_indices(n: int, mask_func: Callable[[ArrayLike, int], Array], k: int = 0, *,
                 size: int | None = None) -> tuple[Array, Array]:
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (``size`` makes it jit-able)."""
    from fcore.numpy.creation import ones
    from fcore.numpy.searching import nonzero

    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j

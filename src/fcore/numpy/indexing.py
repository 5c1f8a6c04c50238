"""NumPy indexing for fcore arrays: ``x[idx]`` and ``x.at[idx].set/add/mul/min/max/get``.

Supported indices: integers (negative ones too), slices with any step, ``None``/``newaxis``,
``Ellipsis``, traced integer scalars and integer arrays (advanced indexing, NumPy's rules for
where the broadcast index dimensions go), and concrete boolean masks (replaced by their
``nonzero`` indices, as in JAX; a traced mask raises ``NonConcreteBooleanIndexError``).

* Basic indices become ``lax.slice`` (static ints and slices), ``lax.rev`` (negative steps),
  ``lax.dynamic_slice`` (traced scalars), ``lax.squeeze`` and ``lax.expand_dims``.
* Advanced indices move the indexed axes to the front, merge them into one axis and take
  rows of it at the linearized indices (``_take_rows``: one ``lax.gather``).
* ``.at[idx]`` updates of a block (static in-bounds ints and unit-step slices) read, combine
  and write back that block (``lax.slice``, ``lax.dynamic_update_slice``). Other updates
  compute, for every element of ``x[idx]``, its flat position in ``x``
  (indexing an ``iota`` the same way), then scatter the updates at those positions
  (``_scatter_flat``: ``lax.scatter``/``lax.scatter_add``); out-of-bounds updates are
  dropped, as in JAX.

As in JAX, out-of-bounds retrievals are clamped by default (``mode="clip"``);
``.at[idx].get(mode="fill", fill_value=...)`` fills them instead.

``.at[].mul/min/max`` are ``lax.scatter_mul/min/max``; as in JAX, the gradient of ``multiply``
with respect to the values needs indices known to be unique (basic indices always are).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.errors import ConcretizationError
from fcore.interpreters.trace import Tracer
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.config import promotion_mode
from fcore.numpy._promotion import Shape, asarray, broadcast_shapes, broadcast_to, convert, operand

_INT = dtypes.int32


# -- index classification -----------------------------------------------------------------
class _Dyn:
    """A traced integer scalar index."""

    __slots__ = ("value",)

    def __init__(self, value: Array) -> None:
        self.value = value


class _Adv:
    """An integer-array index (advanced indexing); ``value`` is host NumPy or an fcore Array."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray[Any, Any] | Array) -> None:
        self.value = value

    @property
    def shape(self) -> Shape:
        return tuple(self.value.shape)


Entry = None | slice | int | _Dyn | _Adv
_ELLIPSIS = object()


def _is_int_dtype(dt: np.dtype[Any]) -> bool:
    return dtypes.is_integer(dt) if dtypes.is_supported(dt) else np.issubdtype(dt, np.integer)


class NonConcreteBooleanIndexError(ConcretizationError, IndexError):
    """A boolean mask index was traced: the result's shape would depend on its values (an
    ``IndexError`` as JAX's class of the same name, and a ``ConcretizationError``)."""


def _classify(i: object) -> Entry | object:
    if i is None:
        return None
    if i is Ellipsis:
        return _ELLIPSIS
    if isinstance(i, slice):
        return slice(_slice_part(i.start), _slice_part(i.stop), _slice_part(i.step))
    if isinstance(i, (int, np.integer)):
        return operator.index(i)
    if isinstance(i, (list, tuple)):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; "
            "use `arr[array(seq)]` instead of `arr[seq]`."
        )
    if isinstance(i, (np.ndarray, ArrayImpl)):
        arr = np.asarray(i)
        if not _is_int_dtype(arr.dtype):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {arr.dtype}")
        if arr.ndim == 0:
            return int(arr)
        return _Adv(arr)
    if isinstance(i, Array):
        dt = i.dtype
        if not dtypes.is_integer(dt):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt}")
        return _Dyn(i) if i.ndim == 0 else _Adv(i)
    raise TypeError(f"Indexer must be an int, slice, None, Ellipsis or integer array; got {i!r} of type {type(i).__name__}")


def _slice_part(v: object) -> int | None:
    if v is None:
        return None
    if isinstance(v, Tracer):
        raise IndexError(
            "Array slice indices must have static start/stop/step to be used with NumPy indexing "
            "syntax; use lax.dynamic_slice for traced start indices."
        )
    return operator.index(v)  # type: ignore[arg-type]


def _is_bool_index(i: object) -> bool:
    if isinstance(i, (bool, np.bool_)):
        return True
    dt = getattr(i, "dtype", None)
    return isinstance(i, (np.ndarray, Array)) and dt == np.bool_


def _concrete_mask(i: object) -> np.ndarray[Any, Any]:
    try:
        return np.asarray(i)
    except ConcretizationError:
        aval = getattr(i, "aval", None)
        what = aval.str_short() if aval is not None else type(i).__name__
        raise NonConcreteBooleanIndexError(
            f"Array boolean indices must be concrete; got {what}. Use fnp.where(mask, x, y) "
            "or the size= argument of fnp.nonzero instead, whose result shape does not depend on the data."
        ) from None


def _sequence_index(i: list[Any]) -> np.ndarray[Any, Any]:
    arr = np.asarray(i)
    return arr.astype(np.int32) if arr.size == 0 else arr  # ``[]`` indexes nothing


def _expand(idx: object, shape: Shape) -> tuple[list[Entry], list[int]]:
    """Classify the entries and replace ``...`` by full slices (checking the index count).

    Boolean masks (which must be concrete) become their ``nonzero`` integer arrays; a scalar
    boolean becomes a new unit axis indexed by ``arange(1)`` or ``arange(0)``, as in JAX.
    Returns the entries and the axes to insert into the array before indexing it.
    """
    ndim = len(shape)
    raw = idx if isinstance(idx, tuple) else (idx,)
    if isinstance(idx, tuple):  # sequences inside a tuple index are arrays (JAX)
        raw = tuple(_sequence_index(i) if isinstance(i, list) else i for i in raw)
    masks: dict[int, np.ndarray[Any, Any]] = {k: _concrete_mask(i) for k, i in enumerate(raw) if _is_bool_index(i)}
    entries = [None if k in masks else _classify(i) for k, i in enumerate(raw)]
    n_ell = sum(1 for e in entries if e is _ELLIPSIS)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consuming = sum(1 for k, e in enumerate(entries) if k not in masks and e is not None and e is not _ELLIPSIS)
    consuming += sum(m.ndim for m in masks.values())
    if consuming > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array, but {consuming} were indexed")
    out: list[Entry] = []
    new_axes: list[int] = []
    filled = False
    dim = 0  # the dimension of the (expanded) array the next entry consumes
    for k, e in enumerate(entries):
        if k in masks:
            m = masks[k]
            if m.ndim == 0:
                new_axes.append(dim)
                out.append(_Adv(np.arange(int(m.item()))))
                dim += 1
                continue
            expected = shape[dim - len(new_axes): dim - len(new_axes) + m.ndim]
            if not all(s1 in (0, s2) for s1, s2 in zip(m.shape, expected)):
                raise IndexError(
                    f"boolean index did not match shape of indexed array in index {k}: got {m.shape}, expected {expected}"
                )
            out.extend(_Adv(a) for a in np.nonzero(m))
            dim += m.ndim
        elif e is _ELLIPSIS:
            out.extend([slice(None)] * (ndim - consuming))
            dim += ndim - consuming
            filled = True
        else:
            out.append(e)  # type: ignore[arg-type]
            if e is not None:
                dim += 1
    if not filled:
        out.extend([slice(None)] * (ndim - consuming))
    return out, new_axes


# -- fill values ----------------------------------------------------------------------------
def _default_fill(dt: DType) -> Any:
    if dtypes.is_inexact(dt):
        return np.nan
    if dtypes.is_signed_int(dt):
        return np.iinfo(dt).min
    if dtypes.is_unsigned_int(dt):
        return np.iinfo(dt).max
    return True


def _full(shape: Shape, value: Any, dt: DType, weak: bool) -> Array:
    v = convert(value, dt, weak) if not isinstance(value, Array) else convert(value, dt, weak)
    return v if shape == () else lax.broadcast_in_dim(v, shape, ())


# -- basic indexing -------------------------------------------------------------------------
def _index_scalar(v: Array) -> Array:
    """A traced integer index as a strong int32 (the dtype dynamic_slice's starts share)."""
    if v.dtype == _INT and not v.weak_type:
        return v
    return lax.convert_element_type(v, _INT)


def _basic(x: Array, entries: list[Entry], mode: str, fill_value: Any) -> Array:
    shape = x.shape
    starts, limits, strides = [0] * x.ndim, list(shape), [1] * x.ndim
    rev_dims: list[int] = []
    squeeze_dims: list[int] = []
    dyn: dict[int, Array] = {}
    new_axes: list[int] = []
    out_pos = 0
    oob = False
    dim = 0
    for e in entries:
        if e is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        n = shape[dim]
        if isinstance(e, int):
            i = e + n if e < 0 else e
            if not 0 <= i < n:
                if n == 0 or mode != "fill":
                    if n == 0:
                        raise IndexError(f"index {e} is out of bounds for axis {dim} with size 0")
                    i = min(max(i, 0), n - 1)
                else:
                    oob = True
                    i = 0
            starts[dim], limits[dim] = i, i + 1
            squeeze_dims.append(dim)
        elif isinstance(e, slice):
            start, stop, step = e.indices(n)
            if step > 0:
                m = len(range(start, stop, step))
                starts[dim], limits[dim], strides[dim] = start, start + (m - 1) * step + 1 if m else start, step
            else:
                m = len(range(start, stop, step))
                if m:
                    lo = start + (m - 1) * step
                    starts[dim], limits[dim], strides[dim] = lo, start + 1, -step
                    rev_dims.append(dim)
                else:
                    starts[dim], limits[dim] = 0, 0
            out_pos += 1
        elif isinstance(e, _Dyn):
            dyn[dim] = e.value
            squeeze_dims.append(dim)
        else:  # pragma: no cover - advanced entries never reach here
            raise AssertionError(e)
        dim += 1
    y = x
    if starts != [0] * x.ndim or limits != list(shape) or strides != [1] * x.ndim:
        y = lax.slice(y, starts, limits, strides if any(s != 1 for s in strides) else None)
    valid: Array | None = None
    if dyn:
        ystarts: list[ArrayLike] = [np.zeros((), _INT)] * y.ndim
        sizes = list(y.shape)
        for d, v in dyn.items():
            iv = _index_scalar(v)
            n = y.shape[d]
            ystarts[d] = iv
            sizes[d] = 1
            if mode == "fill":
                ok = lax.and_(lax.ge(iv, np.asarray(-n, _INT)), lax.lt(iv, np.asarray(n, _INT)))
                valid = ok if valid is None else lax.and_(valid, ok)
        y = lax.dynamic_slice(y, ystarts, sizes)
    if rev_dims:
        y = lax.rev(y, tuple(rev_dims))
    if squeeze_dims:
        y = lax.squeeze(y, tuple(sorted(squeeze_dims)))
    if new_axes:
        y = lax.expand_dims(y, tuple(new_axes))
    if mode == "fill":
        fv = _default_fill(x.dtype) if fill_value is None else fill_value
        if oob:
            return _full(y.shape, fv, x.dtype, x.weak_type)
        if valid is not None:
            filler = _full(y.shape, fv, x.dtype, x.weak_type)
            return lax.select_n(valid, filler, y)
    return y


# -- advanced indexing ----------------------------------------------------------------------
def _index_array(a: _Adv | int | _Dyn) -> Array:
    """An advanced index as an int32 fcore array (static ones on the host)."""
    if isinstance(a, int):
        return ArrayImpl(np.asarray(a, _INT), False)
    v = a.value
    if isinstance(v, np.ndarray):
        return ArrayImpl(np.asarray(v).astype(_INT), False)
    return _index_scalar(v)


def _take_rows(x2: Array, lin: Array) -> Array:
    """``x2[lin]`` along axis 0 for an in-bounds int32 index array ``lin``: one ``lax.gather``
    of whole rows. Result shape ``lin.shape + x2.shape[1:]``."""
    nb = lin.ndim
    rest = x2.shape[1:]
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(nb, nb + len(rest))), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    return lax.gather(x2, lax.expand_dims(lin, (nb,)), dnums, (1, *rest), mode="clip")


def _take_rows_onehot(x2: Array, lin: Array) -> Array:
    """``_take_rows`` without gather: a one-hot masked sum (exact: the masked-out terms are
    ``-0.0``, or ``False`` for bool). Kept as the reference the gather path is tested against."""
    p = x2.shape[0]
    rest = x2.shape[1:]
    b = lin.shape
    nb = len(b)
    full = (*b, p, *rest)
    onehot = lax.eq(
        lax.broadcast_in_dim(lin, (*b, p), tuple(range(nb))),
        lax.broadcasted_iota(_INT, (*b, p), nb),
    )
    mask = lax.broadcast_in_dim(onehot, full, tuple(range(nb + 1)))
    vals = lax.broadcast_in_dim(x2, full, tuple(range(nb, nb + 1 + len(rest))))
    if dtypes.is_bool(x2.dtype):
        return lax.reduce_or(lax.and_(mask, vals), (nb,))
    zero = _full(full, -0.0 if dtypes.is_inexact(x2.dtype) else 0, x2.dtype, x2.weak_type)
    return lax.reduce_sum(lax.select_n(mask, zero, vals), (nb,))


def _add_index(a: Array, b: Array) -> Array:
    if isinstance(a, ArrayImpl) and isinstance(b, ArrayImpl):
        return ArrayImpl(np.asarray(a) + np.asarray(b), False)
    return lax.add(a, b)


def _advanced(x: Array, entries: list[Entry], mode: str, fill_value: Any) -> Array:
    # 1. Apply the slices (dims keep their count); the other entries index whole axes.
    x = _basic(x, [e if isinstance(e, slice) else slice(None) for e in entries if e is not None], "clip", None)
    adv_dims: list[int] = []
    adv_idx: list[Array] = []
    adv_pos: list[int] = []
    dim = 0
    for pos, e in enumerate(entries):
        if e is None:
            continue
        if not isinstance(e, slice):
            adv_dims.append(dim)
            adv_idx.append(_index_array(e))
            adv_pos.append(pos)
        dim += 1
    b = broadcast_shapes(*(i.shape for i in adv_idx))
    sizes = [x.shape[d] for d in adv_dims]
    # 2. Normalize negative indices; clamp (clip) or record validity (fill); linearize.
    valid: Array | None = None
    lin: Array | None = None
    stride = 1
    for d, n, idx in reversed(list(zip(adv_dims, sizes, adv_idx))):
        if n == 0 and 0 not in b:  # an empty index may index an empty axis
            raise IndexError(f"index is out of bounds for axis {d} with size 0")
        if isinstance(idx, ArrayImpl):  # static: compute on the host
            h = np.asarray(idx).astype(np.int64)
            h = np.where(h < 0, h + n, h)
            if mode == "fill":
                ok: Array = ArrayImpl(np.broadcast_to((h >= 0) & (h < n), b).copy(), False)
                valid = ok if valid is None else lax.and_(valid, ok)
            term: Array = ArrayImpl(np.broadcast_to(np.clip(h, 0, n - 1) * stride, b).astype(np.int32), False)
        else:
            nn = np.asarray(n, _INT)
            idx = lax.select_n(lax.lt(idx, np.zeros((), _INT)), idx, lax.add(idx, nn))
            if mode == "fill":
                ok = broadcast_to(lax.and_(lax.ge(idx, np.zeros((), _INT)), lax.lt(idx, nn)), b)
                valid = ok if valid is None else lax.and_(valid, ok)
            idx = lax.clamp(np.zeros((), _INT), idx, np.asarray(n - 1, _INT))
            term = lax.mul(idx, np.asarray(stride, _INT)) if stride != 1 else idx
            term = broadcast_to(term, b)
        lin = term if lin is None else _add_index(lin, term)
        stride *= n
    assert lin is not None
    # 3. Move the indexed axes to the front and merge them.
    rest_dims = [d for d in range(x.ndim) if d not in adv_dims]
    perm = tuple(adv_dims + rest_dims)
    xt = lax.transpose(x, perm) if perm != tuple(range(x.ndim)) else x
    rest_shape = tuple(x.shape[d] for d in rest_dims)
    x2 = lax.reshape(xt, (math.prod(sizes), *rest_shape))
    got = _take_rows(x2, lin)  # shape b + rest
    if valid is not None:
        fv = _default_fill(x.dtype) if fill_value is None else fill_value
        filler = _full(got.shape, fv, x.dtype, x.weak_type)
        vmask = lax.broadcast_in_dim(valid, got.shape, tuple(range(len(b))))
        got = lax.select_n(vmask, filler, got)
    # 4. Place the broadcast index dimensions (NumPy: in place when the advanced indices are
    #    adjacent, else first) and insert the new axes.
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    nb = len(b)
    layout: list[int] = []  # positions in `got` of the output dims, None entries excluded
    new_axes: list[int] = []
    if not adjacent:
        layout.extend(range(nb))
    r = 0
    inserted = False
    for e in entries:
        if e is None:
            new_axes.append(len(layout) + len(new_axes))
        elif isinstance(e, slice):
            layout.append(nb + r)
            r += 1
        elif adjacent and not inserted:
            layout.extend(range(nb))
            inserted = True
    out = lax.transpose(got, tuple(layout)) if tuple(layout) != tuple(range(got.ndim)) else got
    if new_axes:
        out = lax.expand_dims(out, tuple(new_axes))
    return out


def getitem(x: Array, idx: object, mode: str | None = None, fill_value: Any = None) -> Array:
    """``x[idx]`` (NumPy semantics; out-of-bounds indices clamp unless ``mode="fill"``)."""
    m = "clip" if mode in (None, "clip", "promise_in_bounds") else mode
    if m not in ("clip", "fill"):
        raise ValueError(f"Invalid indexing mode: {mode!r} (expected 'clip', 'fill' or 'promise_in_bounds')")
    if isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_)) and x.ndim >= 1 and m == "clip":
        # Fast path: x[i] with a static integer.
        n = x.shape[0]
        i = operator.index(idx)
        i = i + n if i < 0 else i
        if n == 0:
            raise IndexError(f"index {idx} is out of bounds for axis 0 with size 0")
        i = min(max(i, 0), n - 1)
        y = lax.slice(x, (i, *([0] * (x.ndim - 1))), (i + 1, *x.shape[1:]))
        return lax.squeeze(y, (0,))
    entries, new_axes = _expand(idx, x.shape)
    if new_axes:
        x = lax.expand_dims(x, tuple(new_axes))
    if any(isinstance(e, _Adv) for e in entries):
        return _advanced(x, entries, m, fill_value)
    return _basic(x, entries, m, fill_value)


# -- .at[...] updates -------------------------------------------------------------------------
def _positions(x: Array, idx: object, mode: str | None = None) -> Array:
    """Flat positions in ``x`` of the elements of ``x[idx]``: ``-1`` where out of bounds (those
    updates are dropped), or clamped into bounds with ``mode="clip"``."""
    pos = lax.reshape(lax.iota(_INT, x.size), x.shape) if x.ndim != 1 else lax.iota(_INT, x.size)
    if mode == "clip":
        return getitem(pos, idx)
    if mode not in (None, "drop", "fill", "promise_in_bounds"):
        raise ValueError(f"Invalid scatter mode: {mode!r} (expected 'clip', 'drop', 'fill' or 'promise_in_bounds')")
    return getitem(pos, idx, mode="fill", fill_value=-1)


_FLAT_SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


_SCATTERS: dict[str, Callable[..., Array]] = {
    "set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min, "max": lax.scatter_max,
}


def _unique_positions(idx: object, pos: Array) -> bool:
    """Whether no element is updated twice: always for basic indices (ints, slices, traced
    scalars), and for static advanced indices whose in-bounds positions do not repeat. JAX
    passes the same fact to its scatters (it decides whether ``multiply`` is differentiable
    with respect to the values)."""
    if isinstance(pos, ArrayImpl):
        host = np.asarray(pos).ravel()
        host = host[host >= 0]
        return bool(np.unique(host).size == host.size)
    raw = idx if isinstance(idx, tuple) else (idx,)
    return not any(isinstance(i, (list, np.ndarray)) or (isinstance(i, Array) and i.ndim > 0) for i in raw)


def _scatter_flat(x: Array, pos: Array, updates: Array, kind: str, unique: bool) -> Array:
    """Scatter ``updates`` into ``x`` at flat positions ``pos`` (same shape; ``-1`` dropped):
    one ``lax.scatter``/``scatter_add``/``scatter_mul``/``scatter_min``/``scatter_max`` on the
    flattened array (repeated positions: the last update wins for ``set``, the others combine)."""
    size = x.size
    m = pos.size
    if m == 0 or size == 0:
        return x
    p1 = lax.reshape(pos, (m,)) if pos.ndim != 1 else pos
    u1 = lax.reshape(updates, (m,)) if updates.ndim != 1 else updates
    xf = lax.reshape(x, (size,)) if x.ndim != 1 else x
    out = _SCATTERS[kind](xf, lax.expand_dims(p1, (1,)), u1, _FLAT_SCATTER, mode="drop", unique_indices=unique)
    return lax.reshape(out, x.shape) if x.ndim != 1 else out


def _check_update_dtype(x: Array, values: ArrayLike) -> None:
    """jnp's scatter check: values that do not cast safely to ``x``'s dtype warn (standard
    promotion) or raise ``TypePromotionError`` (strict), as JAX's ``safe_to_cast`` does."""
    if type(values) is int and dtypes.is_integer(x.dtype):
        info = np.iinfo(x.dtype)
        if info.min <= values <= info.max:  # jnp converts such ints to x's dtype first
            return
    vd, vw = operand(values, "scatter", 1)
    if vd == x.dtype:
        return
    dt, _ = dtypes.result_type((vd, vw), (x.dtype, x.weak_type))
    if dt != x.dtype:
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from dtype={dtypes.dtype_name(vd)} "
            f"to dtype={dtypes.dtype_name(x.dtype)} with jax_numpy_dtype_promotion={promotion_mode()}. "
            "In future JAX releases this will result in an error.",
            FutureWarning,
            stacklevel=4,
        )


def _update(x: Array, idx: object, values: ArrayLike, kind: str, mode: str | None = None, check: bool = True) -> Array:
    """The scatter of ``x.at[idx].<kind>(values)``. As in jnp, ``x`` and the values are first
    promoted to their common dtype, and the result is converted back to ``x``'s dtype (so an
    integer array accumulates float updates before truncating)."""
    if check:
        _check_update_dtype(x, values)
    if type(values) is int and dtypes.is_integer(x.dtype) and np.iinfo(x.dtype).min <= values <= np.iinfo(x.dtype).max:
        dt, weak = x.dtype, x.weak_type
    else:
        dt, weak = dtypes.result_type((x.dtype, x.weak_type), operand(values, "scatter", 1))
    if dtypes.is_bool(dt) and kind in ("add", "mul"):
        op = "add" if kind == "add" else "mul"
        raise TypeError(f"{op} does not accept dtype bool: x.at[...].{op} needs a numeric array (as in JAX).")
    u = convert(values, dt, weak)
    window = _static_window(idx, x.shape) if mode in (None, "clip", "drop", "fill", "promise_in_bounds") else None
    if window is not None:
        out = _update_window(convert(x, dt, weak), window, u, kind)
        return convert(out, x.dtype, x.weak_type)
    pos = _positions(x, idx, mode)
    if u.shape != pos.shape:
        u = broadcast_to(_drop_leading_ones(u, pos.ndim), pos.shape)
    out = _scatter_flat(convert(x, dt, weak), pos, u, kind, _unique_positions(idx, pos))
    return convert(out, x.dtype, x.weak_type)


_Window = tuple[tuple[int, ...], tuple[int, ...], tuple[bool, ...]]


def _static_window(idx: object, shape: Shape) -> _Window | None:
    """``(starts, sizes, kept)`` when ``x[idx]`` is a non-empty block of ``x``: ``idx`` holds only
    static in-bounds integers, unit-step slices and at most one ``Ellipsis``; ``kept`` marks the
    dimensions a slice keeps. Other indices (``None`` for the general path) need positions."""
    raw = idx if isinstance(idx, tuple) else (idx,)
    if any(i is Ellipsis for i in raw):
        if sum(i is Ellipsis for i in raw) > 1:
            return None
        at = raw.index(Ellipsis)
        raw = raw[:at] + (slice(None),) * (len(shape) - len(raw) + 1) + raw[at + 1 :]
    if len(raw) > len(shape):
        return None
    raw = raw + (slice(None),) * (len(shape) - len(raw))
    starts, sizes, kept = [], [], []
    for i, n in zip(raw, shape):
        if isinstance(i, slice):
            if i.step not in (None, 1) or not all(v is None or type(v) is int for v in (i.start, i.stop)):
                return None
            start, stop, _ = i.indices(n)
            if stop <= start:
                return None
            starts.append(start)
            sizes.append(stop - start)
            kept.append(True)
        elif type(i) is int or isinstance(i, np.integer):
            k = int(i) + n if int(i) < 0 else int(i)
            if not 0 <= k < n:
                return None  # out of bounds: the general path drops the update, as JAX
            starts.append(k)
            sizes.append(1)
            kept.append(False)
        else:
            return None
    return tuple(starts), tuple(sizes), tuple(kept)


_COMBINE: dict[str, Callable[[Array, Array], Array]] = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}


def _update_window(x: Array, window: _Window, u: Array, kind: str) -> Array:
    """``x.at[idx].<kind>(u)`` for a block index: the block is read with ``lax.slice``, combined,
    and written back with ``lax.dynamic_update_slice`` — O(block), where positions cost O(x.size)."""
    starts, sizes, kept = window
    indexed = tuple(n for n, k in zip(sizes, kept) if k)
    if u.ndim == 0:
        indexed = sizes
    if u.shape != indexed:
        u = broadcast_to(_drop_leading_ones(u, len(indexed)), indexed)
    if u.shape != sizes:
        u = lax.reshape(u, sizes)
    if kind != "set":
        block = lax.slice(x, starts, tuple(s + n for s, n in zip(starts, sizes)))
        u = _COMBINE[kind](block, u)
    return lax.dynamic_update_slice(x, u, starts)


def _drop_leading_ones(u: Array, ndim: int) -> Array:
    extra = u.ndim - ndim
    if extra > 0 and all(d == 1 for d in u.shape[:extra]):
        return lax.reshape(u, u.shape[extra:])
    return u


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates of the indexed elements (JAX's ``_IndexUpdateRef``)."""

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index: object) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None, fill_value: Any = None) -> Array:
        """``x[idx]`` (``mode="fill"`` fills out-of-bounds positions with ``fill_value``)."""
        return getitem(self.array, self.index, mode=mode, fill_value=fill_value)

    def set(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] = values``."""
        return _update(self.array, self.index, values, "set", mode)

    def add(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] += values`` (repeated indices accumulate)."""
        return _update(self.array, self.index, values, "add", mode)

    def subtract(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] -= values`` (repeated indices accumulate)."""
        from fcore.numpy.ufuncs_unary import negative

        x = self.array
        _check_update_dtype(x, values)
        dt, weak = dtypes.result_type((x.dtype, x.weak_type), operand(values, "scatter", 1))
        return _update(x, self.index, negative(convert(values, dt, weak)), "add", mode, check=False)

    def multiply(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] *= values`` (repeated indices accumulate)."""
        return _update(self.array, self.index, values, "mul", mode)

    mul = multiply

    def divide(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """``x / d`` where ``d`` is ``values`` at ``idx`` and 1 elsewhere (as jnp: an integer
        ``x`` gives a floating result)."""
        from fcore.numpy.creation import ones_like
        from fcore.numpy.ufuncs_binary import true_divide

        return true_divide(self.array, _update(ones_like(self.array), self.index, values, "mul", mode))

    def min(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] = minimum(x[idx], values)``."""
        return _update(self.array, self.index, values, "min", mode)

    def max(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] = maximum(x[idx], values)``."""
        return _update(self.array, self.index, values, "max", mode)

    def power(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """``x ** p`` where ``p`` is ``values`` at ``idx`` and 1 elsewhere (as jnp)."""
        from fcore.numpy.creation import ones_like
        from fcore.numpy.ufuncs_binary import power

        return power(self.array, _update(ones_like(self.array), self.index, values, "mul", mode))

    def apply(self, func: Callable[[Array], Array], *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None) -> Array:
        """A copy of ``x`` with ``x[idx] = func(x[idx])``."""
        return _update(self.array, self.index, func(getitem(self.array, self.index)), "set", mode)


class _IndexUpdateHelper:
    """``x.at``: index it to get an ``_IndexUpdateRef``."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, index: object) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def at(x: Array) -> _IndexUpdateHelper:
    return _IndexUpdateHelper(x)


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False, fill_value: Any = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when None).
    ``unique_indices`` and ``indices_are_sorted`` are hints fcore does not need."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    x = asarray(a, "take")
    if axis is None:
        x = lax.reshape(x, (x.size,)) if x.ndim != 1 else x
        axis = 0
    from fcore.numpy._promotion import normalize_axis

    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    ind: ArrayLike = indices
    if mode is None or mode == "fill":  # jnp's default: out-of-bounds indices give fill_value
        get_mode = "fill"
    elif mode in ("wrap", "clip"):
        from fcore.numpy.ufuncs_binary import clip, mod

        ind = mod(indices, n) if mode == "wrap" else clip(indices, 0, n - 1)  # clip: -1 is 0, as in jnp
        get_mode = "clip"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    idx: tuple[object, ...] = (slice(None),) * ax + (ind,)
    return getitem(x, idx, mode=get_mode, fill_value=fill_value)


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int | None) -> Array:
    """``arr`` indexed by ``indices`` along ``axis``, the other axes matched elementwise."""
    x = asarray(arr, "take_along_axis")
    ind = asarray(indices, "take_along_axis")
    if axis is None:
        x = lax.reshape(x, (x.size,))
        axis = 0
    ax = operator.index(axis) % x.ndim
    if ind.ndim != x.ndim:
        raise ValueError("indices and arr must have the same number of dimensions")
    shape = broadcast_shapes(tuple(1 if i == ax else d for i, d in enumerate(x.shape)), tuple(1 if i == ax else d for i, d in enumerate(ind.shape)))
    full_idx: list[object] = []
    for d in range(x.ndim):
        if d == ax:
            full_idx.append(broadcast_to(ind, tuple(shape[i] if i != ax else ind.shape[ax] for i in range(x.ndim))))
        else:
            io = [1] * x.ndim
            io[d] = shape[d]
            full_idx.append(lax.reshape(lax.iota(_INT, shape[d]), tuple(io)))
    x = broadcast_to(x, tuple(shape[i] if i != ax else x.shape[ax] for i in range(x.ndim)))
    return getitem(x, tuple(full_idx))

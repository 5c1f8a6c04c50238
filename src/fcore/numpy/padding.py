"""``fnp.pad`` with NumPy's modes (constant, edge, wrap, reflect, symmetric, linear_ramp,
maximum/minimum/mean/median, empty), each built from slices and concatenations exactly as
``jnp.pad`` builds it, so values, dtypes and errors agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert

Pairs = tuple[tuple[Any, Any], ...]
StatFunc = Callable[..., Array]

_ALLOWED_KWARGS: dict[str, tuple[str, ...]] = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",), "minimum": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}


def _broadcast_to_pairs(nvals: Any, nd: int, name: str) -> Pairs:
    """``pad_width``-style arguments as one ``(before, after)`` pair per axis."""
    try:
        arr = np.asarray(nvals)
    except ValueError as e:
        raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
    if arr.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {nvals}")
    if arr.shape == (nd, 2):
        return tuple((v[0], v[1]) for v in arr)
    if arr.shape == (1, 2):
        return tuple((arr[0, 0], arr[0, 1]) for _ in range(nd))
    if arr.shape == (2,):
        return tuple((arr[0], arr[1]) for _ in range(nd))
    if arr.shape == (1,):
        return tuple((arr[0], arr[0]) for _ in range(nd))
    if arr.shape == ():
        return tuple((arr[()], arr[()]) for _ in range(nd))
    raise ValueError(
        f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. "
        f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ()."
    )


def _check_no_padding(pair: tuple[int, int], mode: str) -> None:
    if pair[0] > 0 or pair[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _slice(x: Array, start: int | None, stop: int | None, axis: int) -> Array:
    n = x.shape[axis]
    s, e, _ = slice(start, stop).indices(n)
    return lax.slice_in_dim(x, s, max(s, e), axis=axis)


def _repeat(x: Array, n: int, axis: int) -> Array:
    from fcore.numpy.shape_ops import repeat

    return repeat(x, n, axis=axis)


def _pad_constant(x: Array, widths: Pairs, constant_values: Array) -> Array:
    nd = x.ndim
    values = convert(constant_values, x.dtype, x.weak_type)
    if values.ndim == 0:
        return lax.pad(x, values, [(lo, hi, 0) for lo, hi in widths])
    if values.ndim == 1:
        if values.shape[-1] == 1:
            return lax.pad(x, lax.reshape(values, ()), [(lo, hi, 0) for lo, hi in widths])
        if values.shape[-1] != 2:
            raise ValueError(
                f"jnp.pad: constant_values has unsupported shape {values.shape}. If the shape is 1D or 2D, the "
                "last dimension must be of size 1 or 2."
            )
    from fcore.numpy._promotion import broadcast_to

    values = broadcast_to(values, (nd, 2))
    for i in range(nd):
        for side in (0, 1):
            if widths[i][side]:
                config = [(0, 0, 0)] * nd
                config[i] = (widths[i][0], 0, 0) if side == 0 else (0, widths[i][1], 0)
                v = lax.reshape(lax.slice(values, (i, side), (i + 1, side + 1)), ())
                x = lax.pad(x, v, config)
    return x


def _pad_wrap(x: Array, widths: Pairs) -> Array:
    for i in range(x.ndim):
        size = x.shape[i]
        if size == 0:
            _check_no_padding(widths[i], "wrap")
            continue
        left_repeats, left_rem = divmod(widths[i][0], size)
        right_repeats, right_rem = divmod(widths[i][1], size)
        parts: list[Array] = []
        if left_rem > 0:
            parts.append(_slice(x, size - left_rem, size, i))
        parts += [x] * (left_repeats + right_repeats + 1)
        if right_rem > 0:
            parts.append(_slice(x, 0, right_rem, i))
        x = lax.concatenate(parts, i) if len(parts) > 1 else parts[0]
    return x


def _pad_symmetric_or_reflect(x: Array, widths: Pairs, mode: str, reflect_type: str) -> Array:
    from fcore.numpy.ufuncs_binary import multiply, subtract

    for i in range(x.ndim):
        axis_size = x.shape[i]
        if axis_size == 0:
            _check_no_padding(widths[i], mode)
            continue
        if widths[i] == (0, 0):
            continue
        offset = 1 if (mode == "reflect" and axis_size > 1) else 0
        for before in (True, False):
            padding = widths[i][0] if before else widths[i][1]
            edge = _slice(x, 0, 1, i) if before else _slice(x, -1, None, i)
            while padding > 0:
                cur = min(padding, axis_size - offset)
                padding -= cur
                if before:
                    piece = _slice(x, offset, offset + cur, i)
                else:
                    stop = None if (mode == "symmetric" or axis_size == 1) else -1
                    piece = _slice(x, -(cur + offset), stop, i)
                piece = lax.rev(piece, (i,))
                if reflect_type == "odd":
                    piece = subtract(multiply(2, edge), piece)
                    if axis_size > 1:
                        edge = _slice(piece, 0, 1, i) if before else _slice(piece, -1, None, i)
                x = lax.concatenate([piece, x] if before else [x, piece], i)
    return x


def _pad_edge(x: Array, widths: Pairs) -> Array:
    for i in range(x.ndim):
        n = x.shape[i]
        if n == 0:
            _check_no_padding(widths[i], "edge")
            continue
        before = _repeat(_slice(x, 0, 1, i), widths[i][0], i)
        after = _repeat(_slice(x, n - 1, n, i), widths[i][1], i)
        x = lax.concatenate([before, x, after], i)
    return x


def _pad_linear_ramp(x: Array, widths: Pairs, end_values: Pairs) -> Array:
    from fcore.numpy.creation import linspace

    for axis in range(x.ndim):
        edge_before = lax.squeeze(_slice(x, 0, 1, axis), (axis,))
        edge_after = lax.squeeze(_slice(x, -1, None, axis), (axis,))
        ramp_before = linspace(end_values[axis][0], edge_before, widths[axis][0], endpoint=False, dtype=x.dtype, axis=axis)
        ramp_after = linspace(end_values[axis][1], edge_after, widths[axis][1], endpoint=False, dtype=x.dtype, axis=axis)
        ramp_before = lax.convert_element_type(ramp_before, x.dtype, x.weak_type)
        ramp_after = lax.rev(lax.convert_element_type(ramp_after, x.dtype, x.weak_type), (axis,))
        x = lax.concatenate([ramp_before, x, ramp_after], axis)
    return x


def _pad_stats(x: Array, widths: Pairs, stat_length: Pairs | None, stat: StatFunc) -> Array:
    from fcore.numpy.ufuncs_unary import round as _round

    for i in range(x.ndim):
        if stat_length is None:
            before = after = stat(x, axis=i, keepdims=True)
        else:
            n = x.shape[i]
            len_before, len_after = (int(v) for v in stat_length[i])
            if len_before == 0 or len_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            before = stat(_slice(x, 0, min(len_before, n), i), axis=i, keepdims=True)
            after = stat(_slice(x, -min(len_after, n), None, i), axis=i, keepdims=True)
        if dtypes.is_integer(x.dtype):
            before, after = _round(before), _round(after)
        before = lax.convert_element_type(before, x.dtype, x.weak_type)
        after = lax.convert_element_type(after, x.dtype, x.weak_type)
        x = lax.concatenate([_repeat(before, widths[i][0], i), x, _repeat(after, widths[i][1], i)], i)
    return x


def _pad_empty(x: Array, widths: Pairs) -> Array:
    from fcore.numpy.creation import zeros_like

    for i in range(x.ndim):
        before = zeros_like(x, shape=x.shape[:i] + (widths[i][0],) + x.shape[i + 1:])
        after = zeros_like(x, shape=x.shape[:i] + (widths[i][1],) + x.shape[i + 1:])
        x = lax.concatenate([before, x, after], i)
    return x


def _stat_funcs() -> dict[str, StatFunc]:
    from fcore.numpy.reductions import max as amax, mean, min as amin
    from fcore.numpy.statistics import median

    return {"maximum": amax, "minimum": amin, "mean": mean, "median": median}


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """``array`` padded by ``pad_width`` (one ``(before, after)`` pair per axis, or one pair or
    number for all axes) with NumPy's ``mode``."""
    x = asarray(array, "pad")
    nd = x.ndim
    widths = _broadcast_to_pairs(pad_width, nd, "pad_width")
    if widths and not all(isinstance(v, (int, np.integer)) for p in widths for v in p):
        raise TypeError("`pad_width` must be of integral type.")
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if callable(mode):
        raise NotImplementedError("fnp.pad: a callable mode is not supported")
    if mode not in _ALLOWED_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return x
    if any(v < 0 for p in widths for v in p):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        from fcore.numpy.creation import asarray as to_array

        return _pad_constant(x, widths, to_array(kwargs.get("constant_values", 0)))
    if mode == "wrap":
        return _pad_wrap(x, widths)
    if mode in ("symmetric", "reflect"):
        return _pad_symmetric_or_reflect(x, widths, mode, kwargs.get("reflect_type", "even"))
    if mode == "edge":
        return _pad_edge(x, widths)
    if mode == "linear_ramp":
        return _pad_linear_ramp(x, widths, _broadcast_to_pairs(kwargs.get("end_values", 0), nd, "end_values"))
    if mode == "empty":
        return _pad_empty(x, widths)
    stat_length = kwargs.get("stat_length")
    lengths = None if stat_length is None else _broadcast_to_pairs(stat_length, nd, "stat_length")
    return _pad_stats(x, widths, lengths, _stat_funcs()[mode])

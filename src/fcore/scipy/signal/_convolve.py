"""Convolution and correlation (``jax.scipy.signal``'s direct and FFT methods) and ``detrend``.

The direct method is one ``lax.conv_general_dilated`` of the two inputs as single-channel
images, as JAX computes it; the FFT method multiplies (real) FFTs of the full output size."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy import linalg as np_linalg
from fcore.numpy._promotion import asarray, normalize_axis, promote_dtypes

__all__ = ["fftconvolve", "convolve", "convolve2d", "correlate", "correlate2d", "detrend"]

ModeString = Literal["full", "same", "valid"]
Precision = lax.Precision | str | tuple[lax.Precision | str, lax.Precision | str] | None


def _inexact(name: str, *args: ArrayLike) -> list[Array]:
    return promote_dtypes(*[asarray(a, name, i) for i, a in enumerate(args)], name=name, inexact=True)


def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", axes: Sequence[int] | None = None) -> Array:
    """Convolve two N-dimensional arrays using FFT (over ``axes``; the others are mapped and
    must have equal sizes)."""
    x, y = _inexact("fftconvolve", in1, in2)
    if x.ndim != y.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def unbatched(a: Array, b: Array) -> Array:
        return _fftconvolve_unbatched(a, b, mode)

    conv: Callable[[Array, Array], Array] = unbatched
    if axes is None:
        return conv(x, y)
    axes_tuple = (axes,) if isinstance(axes, int) else tuple(axes)
    axes_tuple = tuple(normalize_axis(ax, x.ndim) for ax in axes_tuple)
    mapped = set(range(x.ndim)) - set(axes_tuple)
    if any(x.shape[i] != y.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={x.shape} in2.shape={y.shape} axes={axes_tuple}")
    for ax in sorted(mapped):
        conv = vmap(conv, in_axes=ax, out_axes=ax)
    return conv(x, y)


def _fftconvolve_unbatched(in1: Array, in2: Array, mode: str) -> Array:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    elif fnp.iscomplexobj(in1):
        conv = fnp.fft.ifftn(fnp.fft.fftn(in1, full_shape) * fnp.fft.fftn(in2, full_shape), full_shape)
    else:
        conv = fnp.fft.irfftn(fnp.fft.rfftn(in1, full_shape) * fnp.fft.rfftn(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    start = tuple((full - out) // 2 for full, out in zip(full_shape, out_shape))
    return lax.dynamic_slice(conv, start, out_shape)


def _convolve_nd(in1: ArrayLike, in2: ArrayLike, mode: str, *, precision: Precision, name: str) -> Array:
    if mode not in ["full", "same", "valid"]:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    a, b = asarray(in1, name, 0), asarray(in2, name, 1)
    if a.ndim != b.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if a.size == 0 or b.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {a.shape} and {b.shape}.")
    a, b = _inexact(name, a, b)
    no_swap = all(s1 >= s2 for s1, s2 in zip(a.shape, b.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(a.shape, b.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = b.shape
    if swap:
        a, b = b, a
    shape = b.shape
    b = fnp.flip(b)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2) for s, s_o in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    result = lax.conv_general_dilated(a[None, None], b[None, None], tuple(1 for _ in shape), padding, precision=precision)
    return result[0, 0]


def convolve(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", method: str = "auto",
             precision: Precision = None) -> Array:
    """Convolution of two N-dimensional arrays (``method``: ``"auto"`` and ``"direct"`` use
    ``lax.conv_general_dilated``, ``"fft"`` uses :func:`fftconvolve`)."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision, name="convolve")
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def _check_2d(name: str, in1: ArrayLike, in2: ArrayLike, boundary: str, fillvalue: float) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:  # type: ignore[arg-type]
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", boundary: str = "fill", fillvalue: float = 0,
               precision: Precision = None) -> Array:
    """Convolution of two 2-dimensional arrays (only ``boundary="fill"`` with ``fillvalue=0``)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision=precision, name="convolve2d")


def correlate(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", method: str = "auto",
              precision: Precision = None) -> Array:
    """Cross-correlation of two N-dimensional arrays: :func:`convolve` with ``in2`` reversed
    and conjugated."""
    return convolve(in1, fnp.flip(asarray(in2, "correlate", 1).conj()), mode, precision=precision, method=method)


def correlate2d(in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", boundary: str = "fill", fillvalue: float = 0,
                precision: Precision = None) -> Array:
    """Cross-correlation of two 2-dimensional arrays (only ``boundary="fill"``, ``fillvalue=0``)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    a, b = asarray(in1, "correlate2d", 0), asarray(in2, "correlate2d", 1)
    swap = all(s1 <= s2 for s1, s2 in zip(a.shape, b.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(a.shape, b.shape))

    def conv(x: Array, y: Array) -> Array:
        return _convolve_nd(x, y, mode, precision=precision, name="correlate2d")

    if mode == "same":
        return fnp.flip(conv(fnp.flip(a), b.conj()))
    if mode == "valid":
        if swap and not same_shape:
            return conv(fnp.flip(b), a.conj())
        return fnp.flip(conv(fnp.flip(a), b.conj()))
    if swap:
        return conv(fnp.flip(b), a.conj()).conj()
    return fnp.flip(conv(fnp.flip(a), b.conj()))


def detrend(data: ArrayLike, axis: int = -1, type: str = "linear", bp: int | Sequence[int] | np.ndarray = 0,
            overwrite_data: None = None) -> Array:
    """Remove the mean (``type="constant"``) or the least-squares line of each piece between
    the breakpoints ``bp`` (``type="linear"``) along ``axis``."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _inexact("detrend", fnp.asarray(data))
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    bp_arr = np.sort(np.unique(np.r_[0, bp, n]))
    if bp_arr[0] < 0 or bp_arr[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    x = fnp.moveaxis(x, axis, 0)
    shape = x.shape
    x = x.reshape(n, -1)
    for m in range(len(bp_arr) - 1):
        npts = operator.index(bp_arr[m + 1] - bp_arr[m])
        a = fnp.vstack([fnp.ones(npts, dtype=x.dtype), fnp.arange(1, npts + 1, dtype=x.dtype) / fnp.asarray(npts, dtype=x.dtype)]).T
        sl = slice(int(bp_arr[m]), int(bp_arr[m + 1]))
        coef = np_linalg.lstsq(a, x[sl])[0]
        x = x.at[sl].add(-fnp.matmul(a, coef, precision=lax.Precision.HIGHEST))
    return fnp.moveaxis(x.reshape(shape), 0, axis)

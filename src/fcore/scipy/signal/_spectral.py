"""Windowed-FFT spectral estimates (``jax.scipy.signal``'s ``stft``, ``istft``, ``csd``,
``welch``): segments cut with a mapped ``dynamic_slice``, detrended, windowed and
transformed, as JAX computes them. Windows other than ``"hann"`` come from SciPy's
``get_window`` where SciPy is installed, as in JAX."""

from __future__ import annotations

import importlib
import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, normalize_axis
from fcore.scipy._util import promote_args_complex, promote_dtypes_inexact
from fcore.scipy.signal._convolve import detrend

__all__ = ["stft", "istft", "csd", "welch"]

Window = str | tuple[Any, ...] | ArrayLike


def _complex_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    if dtypes.is_complex(dt):
        return dt
    return np.dtype(np.complex128) if np.dtype(dt).itemsize >= 8 else np.dtype(np.complex64)


def _hann(n: int) -> Array:
    return fnp.array([1.0]) if n == 1 else fnp.sin(fnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _scipy_window(window: str | tuple[Any, ...], n: int) -> Any:
    try:
        scipy_signal = importlib.import_module("scipy.signal")
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return scipy_signal.get_window(window, n)


def _triage_segments(window: Window, nperseg: int | None, input_length: int, dtype: np.dtype[Any]) -> tuple[Array, int]:
    """The window as an array, and the segment length (SciPy's ``_triage_segments``)."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, using nperseg={input_length}")
            n = input_length
        win = _hann(n) if window == "hann" else fnp.asarray(np.asarray(_scipy_window(window, n)))
        return fnp.array(win, dtype=dtype), n
    win = fnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _over(value: float, fs: ArrayLike) -> float | Array:
    """``value / fs`` as Python computes it for a Python ``fs``, as ``jnp`` does otherwise."""
    if isinstance(fs, (int, float)):
        return value / fs
    return fnp.true_divide(value, fs)


def _median_bias(n: int) -> Array:
    """The bias of the median of ``n`` periodograms relative to their mean."""
    ii_2 = fnp.arange(2.0, n, 2)
    return 1 + fnp.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def _fft_helper(x: Array, win: Array, detrend_func: Callable[[Array], Array], nperseg: int, noverlap: int,
                nfft: int | None, sides: str) -> Array:
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    *batch_shape, signal_length = x.shape
    if nperseg == 1 and noverlap == 0:
        result = x[..., None]
    else:
        starts = fnp.arange(signal_length - nperseg + 1, step=nperseg - noverlap)
        result = vmap(lambda s: lax.dynamic_slice_in_dim(x, s, nperseg, axis=-1), out_axes=-2)(starts)
    result = detrend_func(result)
    if fnp.iscomplexobj(win):
        (result,) = promote_args_complex("stft", result)
    result = win.reshape((1,) * len(batch_shape) + (1, nperseg)) * result
    if sides == "twosided":
        return fnp.fft.fft(result, n=nfft)
    return fnp.fft.rfft(result.real, n=nfft)


def _odd_ext(x: Array, n: int, axis: int = -1) -> Array:
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, which is {x.shape[axis] - 1}.")
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = fnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right_ext = fnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return fnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _padder(mode: str, **kwargs: Any) -> Callable[[Array, int, int], Array]:
    def pad(x: Array, n: int, axis: int = -1) -> Array:
        width = [(0, 0) for _ in range(x.ndim)]
        width[axis] = (n, n)
        return fnp.pad(x, width, mode, **kwargs)
    return pad


_BOUNDARIES: dict[str | None, Callable[[Array, int, int], Array]] = {
    "even": _padder("reflect"),
    "odd": _odd_ext,
    "constant": _padder("edge"),
    "zeros": _padder("constant", constant_values=0.0),
    None: lambda x, n, axis: x,
}


def _spectral_helper(x_in: ArrayLike, y: ArrayLike | None, fs: ArrayLike = 1.0, window: Window = "hann",
                     nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
                     detrend_type: bool | str | Callable[[Array], Array] = "constant", return_onesided: bool = True,
                     scaling: str = "density", axis: int = -1, mode: str = "psd", boundary: str | None = None,
                     padded: bool = False) -> tuple[Array, Array, Array]:
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES.keys())}")
    x = asarray(x_in, "spectral_helper", 0)
    axis = normalize_axis(operator.index(axis), x.ndim)
    y_arr: Array
    if y is None:
        (x,) = promote_dtypes_inexact(x)
        y_arr = x
        outershape = tuple(s for i, s in enumerate(x.shape) if i != axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, y_arr = promote_dtypes_inexact(x, asarray(y, "spectral_helper", 1))
        if x.ndim != y_arr.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = fnp.broadcast_shapes(tuple(s for i, s in enumerate(x.shape) if i != axis),
                                              tuple(s for i, s in enumerate(y_arr.shape) if i != axis))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    nperseg_int: int | None = None
    if nperseg is not None:
        nperseg_int = int(nperseg)
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nper = _triage_segments(window, nperseg_int, input_length=x.shape[axis], dtype=x.dtype)
    nover = nper // 2 if noverlap is None else int(noverlap)
    nfft_int = nper if nfft is None else int(nfft)

    if y is None:
        if x.size == 0:
            return fnp.zeros(x.shape, freq_dtype), fnp.zeros(x.shape, freq_dtype), fnp.zeros(x.shape, result_dtype)
    elif x.size == 0 or y_arr.size == 0:
        shape = (*outershape[:axis], min(x.shape[axis], y_arr.shape[axis]), *outershape[axis:])
        return fnp.zeros(shape, freq_dtype), fnp.zeros(shape, freq_dtype), fnp.zeros(shape, result_dtype)

    x = fnp.moveaxis(x, axis, -1)
    if y is not None and y_arr.ndim > 1:
        y_arr = fnp.moveaxis(y_arr, axis, -1)
    if y is not None and x.shape[-1] != y_arr.shape[-1]:
        if x.shape[-1] < y_arr.shape[-1]:
            x = fnp.concatenate((x, fnp.zeros((*x.shape[:-1], y_arr.shape[-1] - x.shape[-1]), x.dtype)), -1)
        else:
            y_arr = fnp.concatenate((y_arr, fnp.zeros((*y_arr.shape[:-1], x.shape[-1] - y_arr.shape[-1]), x.dtype)), -1)

    if nfft_int < nper:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if nover >= nper:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nper - nover
    if boundary is not None:
        ext = _BOUNDARIES[boundary]
        x = ext(x, nper // 2, -1)
        if y is not None:
            y_arr = ext(y_arr, nper // 2, -1)
    if padded:
        nadd = (-(x.shape[-1] - nper) % nstep) % nper
        x = fnp.concatenate((x, fnp.zeros((*x.shape[:-1], nadd), x.dtype)), axis=-1)
        if y is not None:
            y_arr = fnp.concatenate((y_arr, fnp.zeros((*y_arr.shape[:-1], nadd), x.dtype)), axis=-1)

    detrend_func: Callable[[Array], Array]
    if isinstance(detrend_type, str):
        kind = detrend_type
        detrend_func = lambda d: detrend(d, type=kind, axis=-1)  # noqa: E731
    elif callable(detrend_type):
        user = detrend_type
        if axis != -1:
            detrend_func = lambda d: fnp.moveaxis(user(fnp.moveaxis(d, axis, -1)), -1, axis)  # noqa: E731
        else:
            detrend_func = user
    elif not detrend_type:
        detrend_func = lambda d: d  # noqa: E731
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = fnp.sqrt(scale)
    (scale,) = promote_args_complex("spectral_helper", scale)

    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (fnp.iscomplexobj(x) or (y is not None and fnp.iscomplexobj(y))):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False")
    if sides == "twosided":
        freqs = fnp.fft.fftfreq(nfft_int, _over(1, fs), dtype=freq_dtype)
    else:
        freqs = fnp.fft.rfftfreq(nfft_int, _over(1, fs), dtype=freq_dtype)

    result = _fft_helper(x, win, detrend_func, nper, nover, nfft_int, sides)
    if y is not None:
        result = fnp.conjugate(result) * _fft_helper(y_arr, win, detrend_func, nper, nover, nfft_int, sides)
    elif mode == "psd":
        result = fnp.conjugate(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        result = result.at[..., 1:None if nfft_int % 2 else -1].mul(2)

    time = fnp.arange(nper / 2, x.shape[-1] - nper / 2 + 1, nper - nover, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - _over(nper / 2, fs)
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    return freqs, time, fnp.moveaxis(result, -1, axis)


def stft(x: ArrayLike, fs: ArrayLike = 1.0, window: Window = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: bool = False, return_onesided: bool = True, boundary: str | None = "zeros",
         padded: bool = True, axis: int = -1) -> tuple[Array, Array, Array]:
    """Short-time Fourier transform: ``(frequencies, segment times, Zxx)``."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling="spectrum",
                            axis=axis, mode="stft", boundary=boundary, padded=padded)


def csd(x: ArrayLike, y: ArrayLike | None, fs: ArrayLike = 1.0, window: Window = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple[Array, Array]:
    """Cross power spectral density by Welch's method: ``(frequencies, Pxy)``."""
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                                     mode="psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1]).astype(pxy.dtype)
                if fnp.iscomplexobj(pxy):
                    pxy = fnp.median(fnp.real(pxy), axis=-1) + 1j * fnp.median(fnp.imag(pxy), axis=-1)
                else:
                    pxy = fnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = fnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x: ArrayLike, fs: ArrayLike = 1.0, window: Window = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean") -> tuple[Array, Array]:
    """Power spectral density by Welch's method: ``(frequencies, Pxx)``."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft, detrend=detrend,
                     return_onesided=return_onesided, scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_and_add(x: Array, step_size: int) -> Array:
    """Sum frames ``(..., frames, frame_length)`` placed ``step_size`` apart."""
    if x.ndim < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, segment_len = x.shape
    batch = math.prod(batch_shape)
    x = x.reshape((batch, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size
    x = fnp.pad(x, ((0, 0), (0, 0), (0, nstep_per_segment * step_size - segment_len)))
    x = x.reshape((batch, nframes, nstep_per_segment, step_size)).transpose((0, 2, 1, 3))
    x = fnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shrunken = x.shape[2] - 1
    x = x.reshape((batch, -1))[:, : nstep_per_segment * shrunken * step_size]
    x = x.reshape((batch, nstep_per_segment, shrunken * step_size))
    return x.sum(axis=1)[:, :output_size].reshape((*batch_shape, -1))


def istft(Zxx: ArrayLike, fs: ArrayLike = 1.0, window: Window = "hann", nperseg: int | None = None,  # noqa: N803 - SciPy's name
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True, boundary: bool = True,
          time_axis: int = -1, freq_axis: int = -2) -> tuple[Array, Array]:
    """Inverse short-time Fourier transform: ``(times, x)``."""
    z = asarray(Zxx, "istft", 0)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = normalize_axis(freq_axis, z.ndim)
    time_axis = normalize_axis(time_axis, z.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = fnp.asarray(z, dtype=_complex_dtype(z.dtype))
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nper = int(nperseg or n_default)
    if nper < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default + 1 if input_onesided and nper == n_default + 1 else n_default
    else:
        nfft_int = int(nfft)
    if nfft_int < nper:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nper}).")
    nover = int(noverlap or nper // 2)
    if nover >= nper:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nper - nover
    if time_axis != z.ndim - 1 or freq_axis != z.ndim - 2:
        outer = tuple(i for i in range(z.ndim) if i not in {time_axis, freq_axis})
        z = fnp.transpose(z, outer + (freq_axis, time_axis))

    xsubs = (fnp.fft.irfft if input_onesided else fnp.fft.ifft)(z, axis=-2, n=nfft)[..., :nper, :]
    if isinstance(window, str) and window == "hann":
        win = _hann(nper).astype(xsubs.dtype)
    elif isinstance(window, (str, tuple)):
        win = fnp.array(np.asarray(_scipy_window(window, nper)), dtype=xsubs.dtype)
    else:
        win = fnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nper:
            raise ValueError(f"window must have length of {nper}")
    xsubs = xsubs * win.sum()  # the 'spectrum' scaling
    win = lax.expand_dims(win, (*range(xsubs.ndim - 2), -1))
    x = _overlap_and_add((xsubs * win).swapaxes(-2, -1), nstep)
    norm = _overlap_and_add(fnp.repeat(win * win, xsubs.shape[-1], axis=-1).swapaxes(-2, -1), nstep)
    if boundary:
        x = x[..., nper // 2: -(nper // 2)]
        norm = norm[..., nper // 2: -(nper // 2)]
    x = x / fnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = fnp.moveaxis(x, -1, time_axis)
    time = fnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x

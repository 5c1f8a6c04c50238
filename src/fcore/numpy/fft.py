"""``fcore.numpy.fft``: ``jnp.fft``'s transforms on the ``lax.fft`` primitive.

The n-dimensional transforms move the transformed axes last, crop or zero-pad them to the
requested sizes ``s`` and call ``lax.fft`` (XLA transforms at most three axes at once; more
are done in two passes, as JAX does). ``norm`` scales by ``1``, ``1/sqrt(n)`` or ``1/n``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax.fft import FftType
from fcore.lax.fft import fft as lax_fft
from fcore.numpy._promotion import asarray

__all__ = [
    "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn",
    "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]


def _norm_scale(s: Sequence[int], func_name: str, norm: str) -> float:
    """The factor ``norm`` multiplies the transform by (``"backward"`` is 1)."""
    n = float(np.prod(s)) if len(s) else 1.0
    if norm == "backward":
        return 1.0
    if norm == "ortho":
        return float(np.sqrt(n)) if func_name.startswith("i") else 1 / float(np.sqrt(n))
    if norm == "forward":
        return n if func_name.startswith("i") else 1 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name: str, fft_type: FftType, a: Any, s: Sequence[int] | None, axes: Sequence[int] | None,
              norm: str | None) -> Array:
    full_name = f"fcore.numpy.fft.{func_name}"
    arr = asarray(a, full_name)
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = None if axes is None else tuple(operator.index(ax) for ax in axes)
    axes_t: tuple[int, ...]
    if orig_axes is None:
        axes_t = tuple(range(arr.ndim)) if s is None else tuple(range(arr.ndim - len(s), arr.ndim))
    else:
        axes_t = orig_axes
    if len(axes_t) != len(set(axes_t)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {list(axes_t)}.")
    if orig_axes is not None:
        axes_t = tuple(range(arr.ndim - len(axes_t), arr.ndim))
        arr = fnp.moveaxis(arr, orig_axes, axes_t)
    if s is not None:
        in_s = list(arr.shape)
        for axis, n in zip(axes_t, s):
            in_s[axis] = n
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = fnp.pad(arr, [(0, x - y) for x, y in zip(in_s, arr.shape)])
        lengths = list(s)
    elif fft_type == FftType.IRFFT:
        lengths = [arr.shape[axis] for axis in axes_t[:-1]]
        if axes_t:
            lengths.append(max(0, 2 * (arr.shape[axes_t[-1]] - 1)))
    else:
        lengths = [arr.shape[axis] for axis in axes_t]
    out = _fft_core_nd(arr, fft_type, lengths)
    if norm is not None:
        scale = _norm_scale(lengths, func_name, norm)
        if scale != 1.0:
            out = out * fnp.asarray(scale, dtype=out.dtype)
    if orig_axes is not None:
        out = fnp.moveaxis(out, axes_t, orig_axes)
    return out


def _fft_core_nd(arr: Array, fft_type: FftType, s: Sequence[int]) -> Array:
    """XLA transforms at most 3 axes: the inner 2 or 3 first, then the rest as complex FFTs."""
    if len(s) <= 3:
        return lax_fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = lax_fft(arr, fft_type, tuple(s)[-n:])
        arr = fnp.moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
        return fnp.moveaxis(arr, dst, src)
    arr = fnp.moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
    arr = fnp.moveaxis(arr, dst, src)
    return lax_fft(arr, fft_type, tuple(s)[-n:])


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """N-dimensional discrete Fourier transform (``jnp.fft.fftn``)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """N-dimensional inverse discrete Fourier transform (``jnp.fft.ifftn``)."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """N-dimensional transform of a real array; the last axis keeps ``n // 2 + 1`` bins."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """Inverse of ``rfftn``: a real array (last axis ``2 * (m - 1)`` long unless ``s`` says)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _axis_check_1d(func_name: str, axis: object) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"fcore.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. Got axis = {axis!r}.")


def _fft_core_1d(func_name: str, fft_type: FftType, a: Any, n: int | None, axis: int | None, norm: str | None) -> Array:
    _axis_check_1d(func_name, axis)
    axes = None if axis is None else [axis]
    s = None if n is None else [n]
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional discrete Fourier transform along ``axis`` (``jnp.fft.fft``)."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional inverse discrete Fourier transform (``jnp.fft.ifft``)."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional transform of a real signal: ``n // 2 + 1`` bins (``jnp.fft.rfft``)."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of ``rfft``: a real signal of length ``n`` (``2 * (m - 1)`` by default)."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    conj_a = fnp.conj(a)
    _axis_check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    out = _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return out * fnp.asarray(nn, dtype=out.dtype)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of ``hfft``: the half spectrum of a real signal, conjugated and scaled."""
    _axis_check_1d("ihfft", axis)
    arr = asarray(a, "ihfft")
    nn = arr.shape[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return fnp.conj(out) * fnp.asarray(1 / nn, dtype=out.dtype)


def _fft_core_2d(func_name: str, fft_type: FftType, a: Any, s: Sequence[int] | None, axes: Sequence[int],
                 norm: str | None) -> Array:
    if len(axes) != 2:
        raise ValueError(f"fcore.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional discrete Fourier transform (``jnp.fft.fft2``)."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional inverse discrete Fourier transform (``jnp.fft.ifft2``)."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional transform of a real array (``jnp.fft.rfft2``)."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Array:
    """Inverse of ``rfft2`` (``jnp.fft.irfft2``)."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(name: str, n: object, d: object) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of fcore.numpy.fft.{name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of fcore.numpy.fft.{name} only takes a single value. Got d = {list(d)}.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """Sample frequencies of an ``n``-point FFT with sample spacing ``d``."""
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    work = out_dtype if dtypes.is_floating(out_dtype) else dtypes.default_float_dtype()
    if dtypes.is_complex(out_dtype):
        work = dtypes.to_dtype(np.float64) if out_dtype == np.complex128 else dtypes.to_dtype(np.float32)
    i = fnp.arange(n, dtype=work)
    k = (i + n // 2) % n - n // 2
    result = k.astype(work) / fnp.asarray(d * n, dtype=work)
    return result.astype(out_dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """Sample frequencies of an ``n``-point ``rfft``: ``n // 2 + 1`` non-negative ones."""
    _check_freq_args("rfftfreq", n, d)
    dt = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))
    k = fnp.arange(0, n // 2 + 1, dtype=dt)
    return k / fnp.asarray(d * n, dtype=dt)


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """Move the zero-frequency bin to the centre (a roll by half of each axis)."""
    arr = asarray(x, "fftshift")
    if axes is None:
        axes_t: int | tuple[int, ...] = tuple(range(arr.ndim))
        shift: int | list[int] = [dim // 2 for dim in arr.shape]
    elif isinstance(axes, int):
        axes_t, shift = axes, arr.shape[axes] // 2
    else:
        axes_t = tuple(axes)
        shift = [arr.shape[ax] // 2 for ax in axes_t]
    return fnp.roll(arr, shift, axes_t)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """Inverse of ``fftshift``."""
    arr = asarray(x, "ifftshift")
    if axes is None:
        axes_t: int | tuple[int, ...] = tuple(range(arr.ndim))
        shift: int | list[int] = [-(dim // 2) for dim in arr.shape]
    elif isinstance(axes, int):
        axes_t, shift = axes, -(arr.shape[axes] // 2)
    else:
        axes_t = tuple(axes)
        shift = [-(arr.shape[ax] // 2) for ax in axes_t]
    return fnp.roll(arr, shift, axes_t)

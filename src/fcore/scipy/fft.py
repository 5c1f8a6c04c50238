"""``fcore.scipy.fft``: the type-2 discrete cosine transform and its inverse (``dct``,
``dctn``, ``idct``, ``idctn``), computed as JAX does, through an FFT of the interleaved input
(Makhoul's method), so ``grad`` and ``vmap`` go through ``lax.fft``."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, normalize_axis
from fcore.scipy._util import promote_args_complex, promote_dtypes_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def _w4(n: int, k: Array) -> Array:
    n_arr, k = promote_args_complex("dct", n, k)
    return fnp.exp(-0.5j * np.pi * k / n_arr)


def _others(ndim: int, axis: int) -> list[int]:
    return [a for a in range(ndim) if a != axis]


def _interleave(x: Array, axis: int) -> Array:
    v0 = lax.slice_in_dim(x, None, None, 2, axis)
    v1 = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([v0, v1], axis)


def _deinterleave(x: Array, axis: int) -> Array:
    full = slice(None)
    half = math.ceil(x.shape[axis] / 2)
    v0 = x[tuple(slice(None, half) if i == axis else full for i in range(x.ndim))]
    v1 = lax.rev(x[tuple(slice(half, None) if i == axis else full for i in range(x.ndim))], (axis,))
    out = fnp.zeros(x.shape, dtype=x.dtype)
    out = out.at[tuple(slice(None, None, 2) if i == axis else full for i in range(x.ndim))].set(v0)
    result: Array = out.at[tuple(slice(1, None, 2) if i == axis else full for i in range(x.ndim))].set(v1)
    return result


def _ortho_norm(out: Array, axis: int) -> Array:
    factor = lax.concatenate([lax.full((1,), 4, out.dtype), lax.full((out.shape[axis] - 1,), 2, out.dtype)], 0)
    factor = lax.expand_dims(factor, _others(out.ndim, axis))
    return out / lax.sqrt(factor * fnp.asarray(out.shape[axis], dtype=out.dtype))


def _check(name: str, x: ArrayLike, type: int, norm: str | None) -> Array:
    arr = asarray(x, name, 0)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ["backward", "ortho"]:
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")
    return arr


def _pad_to(x: Array, sizes: dict[int, int]) -> Array:
    pads = [(0, sizes[a] - x.shape[a] if a in sizes else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, fnp.array(0, x.dtype), pads)


def dct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """Discrete cosine transform of type 2 along ``axis`` (zero-padded or cut to ``n``)."""
    arr = _check("dct", x, type, norm)
    if dtypes.is_complex(arr.dtype):
        return lax.complex(dct(arr.real, type, n, axis, norm), dct(arr.imag, type, n, axis, norm))
    axis = normalize_axis(axis, arr.ndim)
    if n is not None:
        arr = _pad_to(arr, {axis: n})
    size = arr.shape[axis]
    spectrum = fnp.fft.fft(_interleave(arr, axis), axis=axis)
    k = lax.expand_dims(fnp.arange(size, dtype=spectrum.real.dtype), _others(arr.ndim, axis))
    out = 2 * (spectrum * _w4(size, k)).real
    return _ortho_norm(out, axis) if norm == "ortho" else out


def _dct2(x: Array, axes: Sequence[int], norm: str | None) -> Array:
    axis1, axis2 = (normalize_axis(a, x.ndim) for a in axes)
    n1, n2 = x.shape[axis1], x.shape[axis2]
    spectrum = fnp.fft.fftn(_interleave(_interleave(x, axis1), axis2), axes=axes)
    k1 = lax.expand_dims(fnp.arange(n1, dtype=spectrum.dtype), _others(x.ndim, axis1))
    k2 = lax.expand_dims(fnp.arange(n2, dtype=spectrum.dtype), _others(x.ndim, axis2))
    out = _w4(n1, k1) * (_w4(n2, k2) * spectrum + _w4(n2, -k2) * fnp.roll(fnp.flip(spectrum, axis=axis2), shift=1, axis=axis2))
    out = 2 * out.real
    return _ortho_norm(_ortho_norm(out, axis1), axis2) if norm == "ortho" else out


def _sizes_and_axes(x: Array, s: Sequence[int] | int | None, axes: Sequence[int] | None) -> tuple[list[int] | None, tuple[int, ...]]:
    sizes: list[int] | None = None
    if s is not None:
        sizes = [operator.index(s)] if isinstance(s, int) else list(s)
        if len(sizes) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(sizes)}")
    if axes is None:
        return sizes, tuple(range(x.ndim - len(sizes), x.ndim)) if sizes is not None else tuple(range(x.ndim))
    canon = tuple(normalize_axis(a, x.ndim) for a in axes)
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis: {axes}")
    return sizes, canon


def dctn(x: ArrayLike, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """Multidimensional discrete cosine transform of type 2 over ``axes`` (sizes ``s``)."""
    arr = _check("dctn", x, type, norm)
    if dtypes.is_complex(arr.dtype):
        return lax.complex(dctn(arr.real, type, s, axes, norm), dctn(arr.imag, type, s, axes, norm))
    sizes, axes_t = _sizes_and_axes(arr, s, axes)
    if len(axes_t) == 1:
        return dct(arr, n=sizes[0] if sizes is not None else None, axis=axes_t[0], norm=norm)
    if sizes is not None:
        arr = _pad_to(arr, dict(zip(axes_t, sizes)))
    if len(axes_t) == 2:
        return _dct2(arr, axes_t, norm)
    for block in [axes_t[i:i + 2] for i in range(0, len(axes_t), 2)]:
        arr = dctn(arr, axes=block, norm=norm)
    return arr


def idct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of the type-2 discrete cosine transform along ``axis``."""
    arr = _check("idct", x, type, norm)
    if dtypes.is_complex(arr.dtype):
        return lax.complex(idct(arr.real, type, n, axis, norm), idct(arr.imag, type, n, axis, norm))
    axis = normalize_axis(axis, arr.ndim)
    if n is not None:
        arr = _pad_to(arr, {axis: n})
    size = arr.shape[axis]
    (arr,) = promote_dtypes_inexact(arr)
    if norm is None or norm == "backward":
        arr = _ortho_norm(arr, axis)
    arr = _ortho_norm(arr, axis)
    k = lax.expand_dims(fnp.arange(size, dtype=arr.dtype), _others(arr.ndim, axis))
    w4 = _w4(size, k)
    arr = arr.astype(w4.dtype) / w4 * 2 * size
    return _deinterleave(fnp.fft.ifft(arr, axis=axis).real, axis)


def idctn(x: ArrayLike, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """Inverse of the multidimensional type-2 discrete cosine transform."""
    arr = _check("idctn", x, type, norm)
    if dtypes.is_complex(arr.dtype):
        return lax.complex(idctn(arr.real, type, s, axes, norm), idctn(arr.imag, type, s, axes, norm))
    sizes, axes_t = _sizes_and_axes(arr, s, axes)
    if len(axes_t) == 1:
        return idct(arr, n=sizes[0] if sizes is not None else None, axis=axes_t[0], norm=norm)
    if sizes is not None:
        arr = _pad_to(arr, dict(zip(axes_t, sizes)))
    for axis in axes_t:
        arr = idct(arr, axis=axis, norm=norm)
    return arr

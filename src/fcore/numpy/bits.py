"""Bit packing in ``fcore.numpy``: ``packbits`` (eight booleans per uint8, big- or little-endian
within each byte) and its inverse ``unpackbits``."""

from __future__ import annotations

from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray
from fcore.numpy.creation import arange
from fcore.numpy.padding import pad
from fcore.numpy.reductions import sum as _sum
from fcore.numpy.shape_ops import expand_dims, ravel, swapaxes
from fcore.numpy.ufuncs_logic import bitwise_and, greater, left_shift


def _check_bitorder(bitorder: str) -> None:
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Array:
    """The nonzero-ness of ``a``'s elements packed eight to a uint8 along ``axis`` (the
    flattened array when ``None``), the last byte padded with zeros."""
    arr = asarray(a, "packbits")
    if not (dtypes.is_integer(arr.dtype) or dtypes.is_bool(arr.dtype)):
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_bitorder(bitorder)
    arr = lax.convert_element_type(lax.ne(arr, lax.full((), 0, arr.dtype)), dtypes.uint8)
    bits = arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = lax.pad(arr, lax.full((), 0, dtypes.uint8), [(0, 0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder, 0)])
    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    bits = expand_dims(bits, tuple(range(arr.ndim - 1)))
    packed = _sum(left_shift(arr, bits), axis=-1).astype("uint8")
    return swapaxes(packed, axis, -1)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Array:
    """The bits of a uint8 array as uint8 zeros and ones along ``axis``; ``count`` keeps that
    many (padding with zeros when it is larger)."""
    arr = asarray(a, "unpackbits")
    if arr.dtype != dtypes.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_bitorder(bitorder)
    bits = left_shift(asarray(1), arange(8, dtype="uint8"))
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    unpacked = greater(bitwise_and(arr[..., None], expand_dims(bits, tuple(range(arr.ndim)))), 0).astype("uint8")
    unpacked = unpacked.reshape(unpacked.shape[:-2] + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = pad(unpacked, [(0, 0)] * (unpacked.ndim - 1) + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)

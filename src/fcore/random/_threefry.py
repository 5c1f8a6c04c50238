"""Threefry-2x32 key derivation on raw key data (``uint32[2]``), as JAX 0.10 does it with
``jax_threefry_partitionable`` on (its default): seeding, splitting, folding in data and
drawing random bits, each from one ``threefry2x32`` of the key over ``iota_2x32_shape``
counters, so every output element is computed independently of the others.

The ``_threefry_*`` functions are ``jit``-compiled as JAX's are: an eager call runs one
XLA executable (fast, and the same operations JAX runs); under a transformation they stage
a ``jit`` equation.
"""

from __future__ import annotations

import math

import numpy as np
from typing_extensions import TypeGuard

from fcore import lax
from fcore import numpy as fnp
from fcore.api.jit import jit
from fcore.config import numpy_dtype_promotion
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import current_trace
from fcore.ir import dtypes
from fcore.lax.prng import (
    KS_PARITY, ROTATIONS, iota_2x32_shape, iota_2x32_shape_host, threefry2x32, threefry2x32_host,
)
from fcore.random._compiled import specialize

__all__ = ["threefry_seed", "threefry_split", "threefry_fold_in", "threefry_random_bits", "threefry_2x32",
           "seed_keys", "split_keys", "fold_in_keys", "random_bits"]

_UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def _words(key: Array) -> tuple[Array, Array]:
    """The two ``uint32`` words of one key."""
    return lax.index_in_dim(key, 0, keepdims=False), lax.index_in_dim(key, 1, keepdims=False)


def _counters(shape: tuple[int, ...]) -> tuple[Array, Array]:
    if not shape:
        zero = fnp.zeros((), dtypes.uint32)
        return zero, zero
    return iota_2x32_shape(shape)


def threefry_seed(seed: Array) -> Array:
    """The key of an integer seed: its 64 bits as two ``uint32`` words (high word first; a
    32-bit seed has a zero high word)."""
    if seed.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if not (dtypes.is_integer(seed.dtype) or dtypes.is_bool(seed.dtype)):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")

    def word(k: Array) -> Array:
        return lax.expand_dims(lax.convert_element_type(k, dtypes.uint32), (0,))

    high = word(lax.shift_right_logical(seed, np.asarray(32, seed.dtype)))  # 0 for seeds of 32 bits or less
    with numpy_dtype_promotion("standard"):
        low = word(fnp.bitwise_and(seed, np.uint32(0xFFFFFFFF)))
    return lax.concatenate([high, low], 0)


def threefry_split(key: Array, shape: tuple[int, ...]) -> Array:
    """``shape`` new keys: key ``i`` is the encryption of counter ``i``."""
    k1, k2 = _words(key)
    c1, c2 = _counters(shape)
    b1, b2 = threefry2x32(k1, k2, c1, c2)
    return fnp.stack([b1, b2], axis=b1.ndim)


def threefry_2x32(keypair: Array, count: Array) -> Array:
    """JAX's ``threefry_2x32``: the counts (any shape) encrypted in two halves under one key."""
    key1, key2 = _words(keypair)
    if not key1.dtype == key2.dtype == count.dtype == dtypes.uint32:
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {[key1.dtype, key2.dtype, count.dtype]}")
    flat = fnp.ravel(count)
    odd = flat.shape[0] % 2
    if odd:
        flat = fnp.concatenate([flat, fnp.zeros((1,), dtypes.uint32)])
    half = flat.shape[0] // 2
    y1, y2 = threefry2x32(key1, key2, flat[:half], flat[half:])
    out = fnp.concatenate([y1, y2])
    return fnp.reshape(out[:-1] if odd else out, count.shape)


def threefry_fold_in(key: Array, data: Array) -> Array:
    """A new key from ``key`` and a ``uint32`` scalar: the key encrypts the seed of ``data``."""
    return threefry_2x32(key, threefry_seed(data))


def threefry_random_bits(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    """Uniform bits of ``bit_width`` (8, 16, 32 or 64) for each element of ``shape``: the two
    cipher words of its counter, XORed (or, for 64 bits, side by side)."""
    if bit_width not in _UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    if math.prod(shape) > 2**64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    k1, k2 = _words(key)
    c1, c2 = _counters(shape)
    b1, b2 = threefry2x32(k1, k2, c1, c2)
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(b1, dtype)
        low = lax.convert_element_type(b2, dtype)
        return lax.bitwise_or(lax.shift_left(high, np.asarray(32, dtype)), low)
    mixed = lax.bitwise_xor(b1, b2)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, dtype)


def _threefry_seed(seed: Array) -> Array:
    return threefry_seed(seed)


def _threefry_split(key: Array, shape: tuple[int, ...]) -> Array:
    return threefry_split(key, shape)


def _threefry_fold_in(key: Array, data: Array) -> Array:
    return threefry_fold_in(key, data)


def _random_bits(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    return threefry_random_bits(key, bit_width, shape)


seed_keys = jit(_threefry_seed)
_fold_in_compiled = jit(_threefry_fold_in)


def _eager(key: object) -> TypeGuard[ArrayImpl]:
    """Key derivation on a concrete key that lives on the host only, outside any
    transformation, runs on the host (exact, and without a device round trip for a handful of
    words); a key already on the device stays there."""
    return type(key) is ArrayImpl and key.device_buffer() is None and current_trace() is EVAL_TRACE


_MASK = 0xFFFFFFFF
_FEW = 8  # up to this many keys, Python integers beat NumPy's per-operation overhead


def _threefry_words(k1: int, k2: int, x1: int, x2: int) -> tuple[int, int]:
    """One Threefry-2x32 block on Python integers (the eager path for a few keys)."""
    ks = (k1, k2, k1 ^ k2 ^ KS_PARITY)
    v0, v1 = (x1 + k1) & _MASK, (x2 + k2) & _MASK
    for i in range(5):
        for r in ROTATIONS[i % 2]:
            v0 = (v0 + v1) & _MASK
            v1 = (((v1 << r) | (v1 >> (32 - r))) & _MASK) ^ v0
        v0 = (v0 + ks[(i + 1) % 3]) & _MASK
        v1 = (v1 + ks[(i + 2) % 3] + i + 1) & _MASK
    return v0, v1


def split_keys(key: Array, shape: tuple[int, ...]) -> Array:
    """``threefry_split``, compiled once per ``shape`` (on the host, eagerly)."""
    if _eager(key):
        host = key.host()
        n = math.prod(shape)
        if n <= _FEW:  # counters 0..n-1 (their high words are 0)
            k1, k2 = int(host[0]), int(host[1])
            words = [_threefry_words(k1, k2, 0, i) for i in range(n)]
            return ArrayImpl(np.array(words, dtype=np.uint32).reshape(*shape, 2))
        c1, c2 = iota_2x32_shape_host(shape=shape)
        b1, b2 = threefry2x32_host(host[:1], host[1:], c1, c2)
        return ArrayImpl(np.stack([b1, b2], axis=-1))
    out: Array = specialize(_threefry_split, shape)(key)
    return out


def fold_in_keys(key: Array, data: Array) -> Array:
    """``threefry_fold_in``, compiled (on the host, eagerly)."""
    if _eager(key) and type(data) is ArrayImpl:
        host = key.host()
        words = _threefry_words(int(host[0]), int(host[1]), 0, int(data.host()))
        return ArrayImpl(np.array(words, dtype=np.uint32))
    out: Array = _fold_in_compiled(key, data)
    return out


def random_bits(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    """``threefry_random_bits``, compiled once per width and shape."""
    out: Array = specialize(_random_bits, bit_width, shape)(key)
    return out

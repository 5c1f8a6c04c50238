"""Making and deriving keys: ``key``/``PRNGKey``, ``split``, ``fold_in``, ``bits``, and the
conversions between typed keys and their key data. A function given a raw key returns raw
keys, given a typed key returns typed keys, as in JAX."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import numpy as fnp
from fcore.config import x64_enabled
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.random._checks import canonicalize_shape, user_dtype
from fcore.random._keys import KeyTy, PRNGImpl, PRNGKeyArray, PRNGSpec, PRNGS, check_prng_key, resolve_impl
from fcore.random._threefry import fold_in_keys, random_bits, seed_keys, split_keys

__all__ = ["PRNGKey", "key", "split", "fold_in", "bits", "key_data", "wrap_key_data", "key_impl", "key_dtype",
           "clone", "KeyArrayLike"]

#: A key argument: a typed key array or raw ``uint32[..., 2]`` key data.
KeyArrayLike = PRNGKeyArray | Array | np.ndarray[Any, Any]


def _is_key(x: object) -> bool:
    return isinstance(x, PRNGKeyArray)


def _seed(ctor_name: str, seed: int | Any, impl: PRNGImpl) -> Array:
    if _is_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape {np.shape(seed)} != (). "
            "Use fcore.vmap for batching"
        )
    # A Python int goes through int64 first, so that large seeds (hashes) work without x64.
    seeds = fnp.asarray(np.int64(seed)) if isinstance(seed, int) else fnp.asarray(seed)
    result: Array = seed_keys(seeds)
    return result


def key(seed: int | Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed PRNG key (shape ``()``, dtype ``key<fry>``) from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    chosen = resolve_impl(impl)
    return PRNGKeyArray(chosen, _seed("key", seed, chosen))


def PRNGKey(seed: int | Any, *, impl: Any = None) -> Array:  # noqa: N802  (JAX's name)
    """A raw (legacy) PRNG key, ``uint32[2]``, from an integer seed: the seed's 64 bits."""
    return _seed("PRNGKey", seed, resolve_impl(impl))


def _like_input(raw: bool, data: Array, impl: PRNGImpl) -> Any:
    return data if raw else PRNGKeyArray._unchecked(impl, data)


def split(key: KeyArrayLike, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (or an array of keys of shape ``num``) derived from one key."""
    data, raw = check_prng_key("split", key)
    shape = tuple(operator.index(n) for n in num) if isinstance(num, Sequence) else (operator.index(num),)
    return _like_input(raw, split_keys(data, shape), _impl_of(key))


def fold_in(key: KeyArrayLike, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer (e.g. a step number)."""
    key_data_, raw = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array of shape {np.shape(data)} != (). "
            "Use fcore.vmap for batching."
        )
    if type(data) is int and not 0 <= data < 2**32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    return _like_input(raw, fold_in_keys(key_data_, fnp.asarray(data, dtype=dtypes.uint32)), _impl_of(key))


def bits(key: KeyArrayLike, shape: Any = (), dtype: Any = None) -> Array:
    """Uniformly random unsigned integers (default ``uint32``, ``uint64`` with x64)."""
    data, _ = check_prng_key("bits", key)
    dt = user_dtype(dtype, np.uint64 if x64_enabled() else np.uint32)
    if not dtypes.is_unsigned_int(dt):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return random_bits(data, dt.itemsize * 8, canonicalize_shape(shape))


def _impl_of(keys: object) -> PRNGImpl:
    return keys._impl if isinstance(keys, PRNGKeyArray) else resolve_impl(None)


def key_data(keys: KeyArrayLike) -> Array:
    """The ``uint32`` key data under a key array (raw keys are returned as they are)."""
    data, _ = check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """Typed keys over ``uint32`` key data of shape ``(..., 2)``."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
        impl = dtype
    return PRNGKeyArray(resolve_impl(impl), key_bits_array)


def key_impl(keys: KeyArrayLike) -> str | PRNGSpec:
    """The name of the keys' PRNG implementation (``'threefry2x32'``)."""
    check_prng_key("key_impl", keys, allow_batched=True)
    impl = _impl_of(keys)
    return impl.name if impl.name in PRNGS else PRNGSpec(impl)


def key_dtype(impl: Any = None) -> KeyTy:
    """The key dtype of an implementation (default: threefry2x32's ``key<fry>``)."""
    return KeyTy(resolve_impl(impl))


def clone(key: KeyArrayLike) -> Any:
    """The same key (JAX marks it as reusable for its key-reuse checker, which fcore lacks)."""
    return key

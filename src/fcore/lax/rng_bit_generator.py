"""``lax.rng_bit_generator``: XLA's stateless ``RngBitGenerator`` (``RandomAlgorithm``:
the platform default, Threefry or Philox): a new key and random bits from a key. As in JAX
the primitive has no derivative or batching rule; eagerly it runs its own one-op program,
since the bits are XLA's."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType, DTypeLike
from fcore.ir.parser import register_param_enum
from fcore.lax._primitive import Primitive

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p"]


@register_param_enum
class RandomAlgorithm(enum.IntEnum):
    """Which PRNG algorithm ``rng_bit_generator`` uses."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_HLO_ALGORITHM = {
    RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
    RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
    RandomAlgorithm.RNG_PHILOX: "PHILOX",
}
_BIT_DTYPES = tuple(dtypes.to_dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_U32, _U64 = dtypes.to_dtype(np.uint32), dtypes.to_dtype(np.uint64)


@attrs.frozen(kw_only=True)
class RngBitGeneratorParams:
    """``rng_bit_generator[shape, dtype, algorithm]``: the bits' shape and unsigned dtype."""

    shape: tuple[int, ...]
    dtype: DType
    algorithm: RandomAlgorithm


rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True, params=RngBitGeneratorParams)
rng_bit_generator_p.impl_takes_arrays = True


@rng_bit_generator_p.def_abstract_eval
def _rbg_abstract_eval(
    key: ShapedArray, *, shape: tuple[int, ...], dtype: DType, algorithm: RandomAlgorithm
) -> list[ShapedArray]:
    if not ((key.shape == (4,) and key.dtype == _U32) or (key.shape == (2,) and key.dtype == _U64)):
        raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], got {key.str_short()}")
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtypes.dtype_name(dtype)}")
    return [ShapedArray(key.shape, key.dtype, key.weak_type), ShapedArray(shape, dtype, False)]


@functools.lru_cache(maxsize=64)
def _one_op_program(shape: tuple[int, ...], dtype: DType, algorithm: RandomAlgorithm) -> Callable[[Any], Any]:
    from fcore.api.jit import jit  # the api layer sits above lax

    return jit(lambda key: tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=algorithm)))


@rng_bit_generator_p.def_impl
def _rbg_impl(key: Any, *, shape: tuple[int, ...], dtype: DType, algorithm: RandomAlgorithm) -> list[Any]:
    return list(_one_op_program(shape, dtype, algorithm)(key))


@lowering_rules.register(rng_bit_generator_p)
def _rbg_lowering(
    ctx: LoweringRuleContext, key: str, *, shape: tuple[int, ...], dtype: DType, algorithm: RandomAlgorithm
) -> list[str]:
    key_aval, bits_aval = ctx.avals_out
    u64_key, square = ShapedArray((2,), _U64), ShapedArray((2, 2), _U32)
    if key_aval.dtype == _U32:  # XLA takes the state as u64[2]
        key = ctx.op_typed("stablehlo.reshape", [key], [key_aval], square)
        key = ctx.op_typed("stablehlo.bitcast_convert", [key], [square], u64_key)
    out = ctx.emit(
        f"stablehlo.rng_bit_generator {key}, algorithm = {_HLO_ALGORITHM[algorithm]} : "
        f"({tensor_type(u64_key)}) -> ({tensor_type(u64_key)}, {tensor_type(bits_aval)})",
        n_results=2,
    )
    new_key, bits = f"{out}#0", f"{out}#1"
    if key_aval.dtype == _U32:
        new_key = ctx.op_typed("stablehlo.bitcast_convert", [new_key], [u64_key], square)
        new_key = ctx.op_typed("stablehlo.reshape", [new_key], [square], key_aval)
    return [new_key, bits]


def rng_bit_generator(
    key: Any, shape: Sequence[int], dtype: DTypeLike = np.uint32,
    algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT, *, out_sharding: Any = None,
) -> tuple[Array, Array]:
    """``(new_key, bits)``: uniformly random bits of ``shape`` and unsigned ``dtype`` from
    ``key`` (uint32[4] or uint64[2]) by XLA's ``RngBitGenerator``. Prefer ``fcore.random``."""
    if out_sharding is not None:
        raise NotImplementedError("fcore's rng_bit_generator does not take out_sharding")
    dims = tuple(int(d) for d in shape)
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(dtype))  # uint64 is uint32 without x64, as in JAX
    if dt not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtypes.dtype_name(dt)}")
    new_key, bits = rng_bit_generator_p.bind(key, shape=dims, dtype=dt, algorithm=RandomAlgorithm(algorithm))
    return new_key, bits

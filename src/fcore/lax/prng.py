"""The counter-based PRNG's primitives: ``threefry2x32`` (the Threefry-2x32 block cipher,
20 rounds, of Salmon et al. 2011) and ``iota_2x32_shape`` (the counters it encrypts).

``fcore.random`` builds keys, splitting and random bits from these two, as JAX's
``jax._src.random.threefry2x32`` does with ``jax_threefry_partitionable`` on (JAX 0.10's
default): the counter of element ``i`` of a sample of shape ``s`` is the 64-bit index ``i``
as two 32-bit words, so every element is computed independently (docs/guide.md, "Random
numbers"). Both lower to plain StableHLO; the eager impls are vectorised NumPy (``uint32``
arithmetic wraps as XLA's does).
"""

from __future__ import annotations

import math
import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.params import NoParams
from fcore.lax._base import ArrayLike, NpArray, broadcast_shapes_scalar, checked_impl
from fcore.lax._primitive import Primitive
from fcore.lax.shapes import broadcast_in_dim
from fcore.transforms.batching import Dim, batching_rules, bdim_at
from fcore.transforms.jvp import defjvp_zero

__all__ = ["threefry2x32_p", "threefry2x32", "threefry2x32_host", "iota_2x32_shape_p", "iota_2x32_shape",
           "iota_2x32_shape_host"]

#: Threefry-2x32's rotation distances: rounds alternate between the two groups of four.
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
#: The key-schedule parity constant of Threefry.
KS_PARITY = 0x1BD11BDA


# -- threefry2x32 ---------------------------------------------------------------------------
threefry2x32_p = Primitive("threefry2x32", multiple_results=True, params=NoParams)


@threefry2x32_p.def_abstract_eval
def _threefry2x32_abstract_eval(*args: ShapedArray) -> list[ShapedArray]:
    if len(args) != 4:
        raise TypeError(f"threefry2x32 takes 4 operands (key1, key2, count1, count2), got {len(args)}")
    if any(a.dtype != dtypes.uint32 for a in args):
        raise TypeError(
            "Arguments to threefry2x32 must have uint32 type, got " + ", ".join(a.str_short() for a in args)
        )
    shape = broadcast_shapes_scalar("threefry2x32", args)
    out = ShapedArray(shape, dtypes.uint32)
    return [out, out]


def _rotate_left_np(v: NpArray, d: int) -> NpArray:
    out: NpArray = (v << np.uint32(d)) | (v >> np.uint32(32 - d))
    return out


@checked_impl(threefry2x32_p)
def threefry2x32_host(k1: NpArray, k2: NpArray, x1: NpArray, x2: NpArray) -> list[NpArray]:
    """The eager impl, vectorised NumPy (also ``fcore.random``'s eager key derivation)."""
    shape = np.broadcast_shapes(k1.shape, k2.shape, x1.shape, x2.shape)
    # 1-d copies: in-place wrapping arithmetic, and no NumPy scalar overflow warnings
    flat = [np.broadcast_to(a, shape).astype(np.uint32).reshape(-1) for a in (k1, k2, x1, x2)]
    ks = [flat[0], flat[1], flat[0] ^ flat[1] ^ np.uint32(KS_PARITY)]
    v0, v1 = flat[2] + ks[0], flat[3] + ks[1]
    for i in range(5):
        for r in ROTATIONS[i % 2]:
            v0 += v1
            v1 = _rotate_left_np(v1, r)
            v1 ^= v0
        v0 += ks[(i + 1) % 3]
        v1 += ks[(i + 2) % 3] + np.uint32(i + 1)
    return [v0.reshape(shape), v1.reshape(shape)]


defjvp_zero(threefry2x32_p)


@batching_rules.register(threefry2x32_p)
def _threefry2x32_batching(axis_size: int, vals: list[Array], dims: list[Dim]) -> tuple[list[Array], list[Dim]]:
    """Batch axes go to the front; unbatched scalars keep broadcasting, other operands are
    broadcast along the batch axis (the shape rule wants equal shapes or scalars)."""
    logical = [get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims)]
    rank = max(logical)
    args = []
    for v, d, r in zip(vals, dims, logical):
        if d is None and r == 0:
            args.append(v)
            continue
        v = bdim_at(v, d, axis_size, 0)
        if r < rank:  # a batched scalar among operands of rank > 0
            full = (axis_size, *next(get_aval(w).shape[-rank:] for w, s in zip(vals, logical) if s == rank))
            v = broadcast_in_dim(v, full, (0,))
        args.append(v)
    outs = threefry2x32_p.bind(*args)
    return list(outs), [0, 0]


@lowering_rules.register(threefry2x32_p)
def _threefry2x32_lowering(ctx: LoweringRuleContext, k1: str, k2: str, x1: str, x2: str) -> list[str]:
    """The 20 rounds unrolled, as JAX's generic lowering (``_threefry2x32_lowering``) writes them."""
    out = ctx.avals_out[0]
    k1, k2, x1, x2 = [ctx.broadcast(v, a, out.shape) for v, a in zip((k1, k2, x1, x2), ctx.avals_in)]
    consts: dict[int, str] = {}

    def const(value: int) -> str:
        if value not in consts:
            consts[value] = ctx.constant(value, dtypes.uint32, out.shape)
        return consts[value]

    def op(name: str, a: str, b: str) -> str:
        return ctx.op(f"stablehlo.{name}", [a, b], out)

    ks = [k1, k2, op("xor", op("xor", k1, k2), const(KS_PARITY))]
    v0, v1 = op("add", x1, ks[0]), op("add", x2, ks[1])
    for i in range(5):
        for r in ROTATIONS[i % 2]:
            v0 = op("add", v0, v1)
            v1 = op("or", op("shift_left", v1, const(r)), op("shift_right_logical", v1, const(32 - r)))
            v1 = op("xor", v0, v1)
        v0 = op("add", v0, ks[(i + 1) % 3])
        v1 = op("add", op("add", v1, ks[(i + 2) % 3]), const(i + 1))
    return [v0, v1]


def threefry2x32(k1: ArrayLike, k2: ArrayLike, x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:
    """Encrypt the counter words ``(x1, x2)`` under the key ``(k1, k2)`` (all ``uint32``, of one
    shape or scalars): the two ``uint32`` words of the cipher text."""
    y1, y2 = threefry2x32_p.bind(k1, k2, x1, x2)
    return y1, y2


# -- iota_2x32_shape ------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class IotaShapeParams:
    """``iota_2x32_shape[shape]``: the row-major index of each element of an array of ``shape``."""

    shape: tuple[int, ...]


iota_2x32_shape_p = Primitive("iota_2x32_shape", multiple_results=True, params=IotaShapeParams)


@iota_2x32_shape_p.def_abstract_eval
def _iota_2x32_shape_abstract_eval(*args: ShapedArray, shape: tuple[int, ...]) -> list[ShapedArray]:
    if args:
        raise TypeError(f"iota_2x32_shape takes no operands, got {len(args)}")
    if any(not isinstance(d, int) or d < 0 for d in shape):
        raise TypeError(f"iota_2x32_shape: shape must be a tuple of non-negative ints, got {shape}")
    out = ShapedArray(shape, dtypes.uint32)
    return [out, out]


@checked_impl(iota_2x32_shape_p)
def iota_2x32_shape_host(*, shape: tuple[int, ...]) -> list[NpArray]:
    """The eager impl (also ``fcore.random``'s eager key derivation)."""
    counts = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return [(counts >> np.uint64(32)).astype(np.uint32), counts.astype(np.uint32)]


@lowering_rules.register(iota_2x32_shape_p)
def _iota_2x32_shape_lowering(ctx: LoweringRuleContext, *, shape: tuple[int, ...]) -> list[str]:
    """A ``uint64`` iota per dimension, scaled by its row-major stride and summed; the high and
    low words converted to ``uint32`` (as JAX's lowering)."""
    out = ctx.avals_out[0]
    if not shape:
        zero = ctx.constant(0, dtypes.uint32)
        return [zero, zero]
    wide = ShapedArray(shape, dtypes.uint64)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    counts = ""
    for d, stride in enumerate(strides):
        term = ctx.emit(f"stablehlo.iota dim = {d} : {tensor_type(wide)}")
        if stride != 1:
            term = ctx.op("stablehlo.multiply", [term, ctx.constant(stride, dtypes.uint64, shape)], wide)
        counts = term if not counts else ctx.op("stablehlo.add", [counts, term], wide)
    high = ctx.op("stablehlo.shift_right_logical", [counts, ctx.constant(32, dtypes.uint64, shape)], wide)
    return [ctx.convert(high, wide, out.dtype), ctx.convert(counts, wide, out.dtype)]


def iota_2x32_shape(shape: tuple[int, ...]) -> tuple[Array, Array]:
    """The 64-bit row-major index of each element of an array of ``shape`` as two ``uint32``
    arrays ``(high, low)``, under either setting of ``enable_x64``."""
    hi, lo = iota_2x32_shape_p.bind(shape=tuple(int(d) for d in shape))
    return hi, lo


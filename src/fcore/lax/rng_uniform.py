"""``lax.rng_uniform``: XLA's stateful uniform random numbers in ``[a, b)`` (JAX: experimental,
its use discouraged; ``fcore.random`` is the reproducible way). Eagerly the one equation is
compiled and run by XLA, as JAX does; as in JAX there is no jvp or batching rule."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.ir.avals import ShapedArray
from fcore.lax._base import ArrayLike
from fcore.lax._decomposed import xla_impl
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, bind, index_tuple

__all__ = ["rng_uniform", "rng_uniform_p"]


@attrs.frozen(kw_only=True)
class RngUniformParams:
    """``rng_uniform[shape]``: the shape of the result."""

    shape: Shape


rng_uniform_p = Primitive("rng_uniform", params=RngUniformParams)


@rng_uniform_p.def_abstract_eval
def _rng_uniform_abstract_eval(a: ShapedArray, b: ShapedArray, *, shape: Shape) -> ShapedArray:
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} and {b.dtype}.")
    if a.shape != () or b.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and {b.shape}.")
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


rng_uniform_p.def_impl(xla_impl(rng_uniform_p))


@lowering_rules.register(rng_uniform_p)
def _rng_uniform_lowering(ctx: LoweringRuleContext, a: str, b: str, *, shape: Shape) -> str:
    out = ctx.avals_out[0]
    shape_aval = ShapedArray((len(shape),), np.dtype(np.int64))
    dims = ctx.constant(np.array(shape, np.int64), shape_aval.dtype, shape_aval.shape)
    ins = ", ".join(tensor_type(x) for x in (*ctx.avals_in, shape_aval))
    return ctx.emit(f"stablehlo.rng {a}, {b}, {dims}, distribution = UNIFORM : ({ins}) -> {tensor_type(out)}")


def rng_uniform(a: ArrayLike, b: ArrayLike, shape: Sequence[int]) -> Array:
    """Uniform random numbers in ``[a, b)`` of ``shape`` from XLA's stateful generator
    (``lax.rng_uniform``; undefined when ``b <= a``)."""
    return bind(rng_uniform_p, a, b, shape=index_tuple(shape))

"""JAX's PRNG primitives in: typed keys as their key data, key operations as fcore.random's.

fcore's IR has no key dtype (fcore.random: a typed key is a pytree over its ``uint32[..., 2]``
data), so ``from_jax`` types a ``key<fry>[s]`` value as ``u32[s, 2]``: ``random_wrap`` and
``random_unwrap`` are the identity, and ``random_seed``, ``random_bits``, ``random_split``
and ``random_fold_in`` are fcore.random's threefry functions (bit-exact with JAX), traced
and inlined, mapped over leading key axes with ``vmap``. ``threefry2x32`` has fcore's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fcore.api.staging import ShapeDtypeStruct, make_jaxpr
from fcore.api.vectorize import vmap
from fcore.interop._from_jax import SPECIAL, Converter
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr
from fcore.random._threefry import threefry_fold_in, threefry_random_bits, threefry_seed, threefry_split

__all__: list[str] = []

Params = Mapping[str, object]


def _check_impl(params: Params) -> None:
    impl = params.get("impl")
    if impl is not None and str(impl) not in ("fry", "threefry2x32", "PRNGImpl(threefry2x32)"):
        raise NotImplementedError(f"PRNG implementation {impl} (fcore.random implements threefry2x32 only)")


def _mapped(fun: Callable[..., Any], batch_dims: int) -> Callable[..., Any]:
    """``fun`` mapped over ``batch_dims`` leading axes of every operand."""
    for _ in range(batch_dims):
        fun = vmap(fun)
    return fun


def _inline(conv: Converter, fun: Callable[..., Any], ins: list[Atom], batch_dims: int) -> list[Atom]:
    specs = [ShapeDtypeStruct(a.aval.shape, a.aval.dtype) for a in ins]
    closed: ClosedJaxpr = make_jaxpr(_mapped(fun, batch_dims))(*specs)
    return conv.inline(closed, ins)


def _key_batch(key: Atom) -> int:
    return key.aval.ndim - 1  # the last axis holds the two key words


def _shape(params: Params) -> tuple[int, ...]:
    shape = params.get("shape")
    if not isinstance(shape, (tuple, list)):
        raise NotImplementedError(f"expected a shape, got {shape!r}")
    return tuple(int(d) for d in shape)


def _identity(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    _check_impl(params)
    return list(ins)


def _seed(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    _check_impl(params)
    return _inline(conv, threefry_seed, ins, ins[0].aval.ndim)


def _bits(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    width, shape = int(params["bit_width"]), _shape(params)  # type: ignore[call-overload]
    return _inline(conv, lambda k: threefry_random_bits(k, width, shape), ins, _key_batch(ins[0]))


def _split(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    shape = _shape(params)
    return _inline(conv, lambda k: threefry_split(k, shape), ins, _key_batch(ins[0]))


def _fold_in(conv: Converter, ins: list[Atom], params: Params, outs: list[ShapedArray]) -> list[Atom]:
    return _inline(conv, threefry_fold_in, ins, _key_batch(ins[0]))


SPECIAL.update({
    "random_wrap": _identity,
    "random_unwrap": _identity,
    "random_seed": _seed,
    "random_bits": _bits,
    "random_split": _split,
    "random_fold_in": _fold_in,
})

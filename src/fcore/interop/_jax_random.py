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
from fcore.interop._from_jax import KEY_DATA_PARAMS, SPECIAL, Converter
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Atom, ClosedJaxpr
from fcore.ir.params import ParamValue
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


# -- structural operations on key arrays: the same on the key data, whose last axis is the words --
def _tuple(value: ParamValue) -> tuple[ParamValue, ...]:
    if not isinstance(value, tuple):
        raise NotImplementedError(f"expected a tuple parameter, got {value!r}")
    return value


def _words_axis(params: dict[str, ParamValue], avals: list[ShapedArray]) -> dict[str, ParamValue]:
    return params  # axes counted from the front are the same; the words axis is last


def _slice(params: dict[str, ParamValue], avals: list[ShapedArray]) -> dict[str, ParamValue]:
    strides = params.get("strides")
    return {**params, "start_indices": (*_tuple(params["start_indices"]), 0),
            "limit_indices": (*_tuple(params["limit_indices"]), 2),
            "strides": None if strides is None else (*_tuple(strides), 1)}


def _reshape(params: dict[str, ParamValue], avals: list[ShapedArray]) -> dict[str, ParamValue]:
    if params.get("dimensions") is not None:
        raise NotImplementedError("reshape of typed keys with 'dimensions'")
    return {**params, "new_sizes": (*_tuple(params["new_sizes"]), 2)}


def _broadcast(params: dict[str, ParamValue], avals: list[ShapedArray]) -> dict[str, ParamValue]:
    shape = _tuple(params["shape"])
    return {**params, "shape": (*shape, 2), "broadcast_dimensions": (*_tuple(params["broadcast_dimensions"]), len(shape))}


def _transpose(params: dict[str, ParamValue], avals: list[ShapedArray]) -> dict[str, ParamValue]:
    perm = _tuple(params["permutation"])
    return {**params, "permutation": (*perm, len(perm))}


def _dynamic_slice(params: dict[str, ParamValue], avals: list[ShapedArray]) -> dict[str, ParamValue]:
    raise NotImplementedError("dynamic_slice of typed keys")  # the start index operands would need a zero


KEY_DATA_PARAMS.update({
    "slice": _slice, "reshape": _reshape, "broadcast_in_dim": _broadcast, "transpose": _transpose,
    "squeeze": _words_axis, "concatenate": _words_axis, "rev": _words_axis, "dynamic_slice": _dynamic_slice,
})


SPECIAL.update({
    "random_wrap": _identity,
    "random_unwrap": _identity,
    "random_seed": _seed,
    "random_bits": _bits,
    "random_split": _split,
    "random_fold_in": _fold_in,
})

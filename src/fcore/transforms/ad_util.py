"""Values the transformations pass around: symbolic zeros, undefined primals, and the
few array operations the passes need (supplied by ``fcore.lax``, which sits above).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import attrs
from typing_extensions import TypeAlias

from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray


@attrs.frozen(slots=True, repr=False)
class Zero:
    """A symbolic zero tangent/cotangent: no equations are emitted for it."""

    aval: ShapedArray

    def __repr__(self) -> str:
        return f"Zero({self.aval})"  # as JAX prints it: ``Zero(~float32[])``

    def instantiate(self) -> Any:
        """An array of zeros of this aval (JAX's ``Zero.instantiate``)."""
        return vspace().zeros_like_aval(self.aval)


@attrs.frozen(slots=True, repr=False)
class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""

    aval: ShapedArray

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"  # as JAX prints it


#: A tangent or cotangent: a value, or a symbolic zero.
Tangent: TypeAlias = Union[Array, Zero]


#: One ``Zero`` / ``UndefinedPrimal`` per aval object: they are immutable, and the per-operation
#: paths (a constant operand under ``jvp``, a linear operand under transposition) make many.
#: Keyed by ``id`` (an aval hashes in Python); each entry keeps its aval, so the id stays its own.
_zeros: dict[int, Zero] = {}
_undefined: dict[int, UndefinedPrimal] = {}
#: The shared ``UndefinedPrimal`` s, for the eager backward pass's lookup without a call.
UNDEFINED_BY_AVAL_ID = _undefined


def zero_of(aval: ShapedArray) -> Zero:
    """``Zero(aval)``, shared."""
    z = _zeros.get(id(aval))
    if z is None:
        if len(_zeros) > 4096:
            _zeros.clear()
        z = _zeros[id(aval)] = Zero(aval)
    return z


def undefined_of(aval: ShapedArray) -> UndefinedPrimal:
    """``UndefinedPrimal(aval)``, shared."""
    u = _undefined.get(id(aval))
    if u is None:
        if len(_undefined) > 4096:
            _undefined.clear()
        u = _undefined[id(aval)] = UndefinedPrimal(aval)
    return u


def is_undefined(x: object) -> bool:
    return type(x) is UndefinedPrimal


def has_tangent(aval: ShapedArray) -> bool:
    """Integer and boolean values have no tangent space (always a symbolic zero)."""
    return dtypes.is_inexact(aval.dtype)


@attrs.frozen(slots=True)
class VSpaceOps:
    """The array operations the passes need; ``fcore.lax`` provides them at import."""

    zeros_like_aval: Callable[[ShapedArray], Any]
    add: Callable[[Any, Any], Any]
    #: ``broadcast_batched(x, axis_size, dim)``: insert a batch axis of ``axis_size`` at ``dim``.
    broadcast_batched: Callable[[Any, int, int], Any]
    #: ``moveaxis(x, src, dst)``.
    moveaxis: Callable[[Any, int, int], Any]
    #: ``broadcast_in_dim(x, shape, broadcast_dimensions)``.
    broadcast_in_dim: Callable[[Any, tuple[int, ...], tuple[int, ...]], Any]


_ops: list[VSpaceOps] = []


def register_vspace_ops(ops: VSpaceOps) -> None:
    _ops[:] = [ops]


def vspace() -> VSpaceOps:
    if not _ops:
        raise RuntimeError("fcore.lax must be imported before transformations run")
    return _ops[0]


def instantiate(t: Any) -> Any:
    """A materialized value for a possibly-symbolic zero."""
    if type(t) is Zero:
        return vspace().zeros_like_aval(t.aval)
    return t


def add_tangents(a: Any, b: Any) -> Any:
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return vspace().add(a, b)

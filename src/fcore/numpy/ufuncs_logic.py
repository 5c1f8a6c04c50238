"""Bitwise, logical and comparison ufuncs of ``fcore.numpy``, the float predicates
(``isnan``, ``isinf``, ...) and ``where``: the elementwise functions whose results are bools or
bit patterns."""

from __future__ import annotations

from typing import overload

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import broadcast_shapes, broadcast_to, convert, promote2, promote_n, result_of
from fcore.numpy._ufunc_helpers import (
    BinaryLax,
    _bool,
    _cmp,
    _const,
    _full_bool,
    _promote1,
    _promote2_numeric,
    _strong_const,
    _to_bool,
)


def invert(x: ArrayLike, /) -> Array:
    """Bitwise NOT of an integer or bool array (``~x``)."""
    return lax.not_(_promote1(x, "invert"))


bitwise_not = bitwise_invert = invert


def logical_not(x: ArrayLike, /) -> Array:
    """Elementwise logical NOT."""
    return lax.not_(_to_bool(_promote1(x, "logical_not")))



def isfinite(x: ArrayLike, /) -> Array:
    """Elementwise finiteness test."""
    a = _promote1(x, "isfinite")
    dt = a.dtype
    if dtypes.is_floating(dt):
        out = lax.is_finite(a)
        return lax.convert_element_type(out, _bool, True) if a.weak_type else out
    if dtypes.is_complex(dt):
        out = lax.and_(lax.is_finite(lax.real(a)), lax.is_finite(lax.imag(a)))
        return lax.convert_element_type(out, _bool, True) if a.weak_type else out
    return _full_bool(a, True)


def isinf(x: ArrayLike, /) -> Array:
    """Elementwise test for positive or negative infinity."""
    a = _promote1(x, "isinf")
    dt = a.dtype
    if dtypes.is_floating(dt):
        return lax.eq(lax.abs(a), _strong_const(a, np.inf))
    if dtypes.is_complex(dt):
        re, im = lax.real(a), lax.imag(a)
        return lax.or_(lax.eq(lax.abs(re), _strong_const(re, np.inf)), lax.eq(lax.abs(im), _strong_const(im, np.inf)))
    return _full_bool(a, False)


def _isposneginf(x: ArrayLike, value: float, name: str) -> Array:
    a = _promote1(x, name)
    if dtypes.is_floating(a.dtype):
        return lax.eq(a, _strong_const(a, value))
    if dtypes.is_complex(a.dtype):
        raise ValueError(f"{name} is not well defined for complex input")
    return _full_bool(a, False)


def isposinf(x: ArrayLike, /, out: None = None) -> Array:
    """Elementwise test for positive infinity."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to isposinf is not supported.")
    return _isposneginf(x, np.inf, "isposinf")


def isneginf(x: ArrayLike, /, out: None = None) -> Array:
    """Elementwise test for negative infinity."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf is not supported.")
    return _isposneginf(x, -np.inf, "isneginf")


def isnan(x: ArrayLike, /) -> Array:
    """Elementwise NaN test (``x != x``)."""
    a = _promote1(x, "isnan")
    return _cmp(lax.ne, a, a)


def _bitwise(fn: BinaryLax, name: str) -> BinaryLax:
    def f(x: ArrayLike, y: ArrayLike, /) -> Array:
        a, b, _ = promote2(x, y, name)
        return fn(a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` of integer or bool arrays."
    return f


bitwise_and = _bitwise(lax.and_, "bitwise_and")
bitwise_or = _bitwise(lax.or_, "bitwise_or")
bitwise_xor = _bitwise(lax.xor, "bitwise_xor")


def left_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x << y`` elementwise; bools count as integers (``jnp.left_shift``)."""
    a, b = _promote2_numeric(x, y, "left_shift")
    return lax.shift_left(a, b)


def right_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x >> y`` elementwise: arithmetic for signed integers, logical for unsigned ones."""
    a, b = _promote2_numeric(x, y, "right_shift")
    if dtypes.is_unsigned_int(a.dtype):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def _logical(fn: BinaryLax, name: str) -> BinaryLax:
    def f(x: ArrayLike, y: ArrayLike, /) -> Array:
        a, b, _ = promote2(x, y, name)
        return fn(_to_bool(a), _to_bool(b))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (operands are compared with zero)."
    return f


logical_and = _logical(lax.and_, "logical_and")
logical_or = _logical(lax.or_, "logical_or")
logical_xor = _logical(lax.xor, "logical_xor")


def _comparison(fn: BinaryLax, name: str) -> BinaryLax:
    def f(x: ArrayLike, y: ArrayLike, /) -> Array:
        a, b, dt = promote2(x, y, name)
        if dtypes.is_complex(dt):
            # Lexicographic on (real, imag), as jnp.
            ra, rb = lax.real(a), lax.real(b)
            out = lax.select_n(lax.eq(ra, rb), fn(ra, rb), fn(lax.imag(a), lax.imag(b)))
            if a.weak_type and b.weak_type:
                out = lax.convert_element_type(out, _bool, True)
            return out
        return _cmp(fn, a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (bool result)."
    return f


def equal(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise ``x == y``."""
    a, b, _ = promote2(x, y, "equal")
    return _cmp(lax.eq, a, b)


def not_equal(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise ``x != y``."""
    a, b, _ = promote2(x, y, "not_equal")
    return _cmp(lax.ne, a, b)


less = _comparison(lax.lt, "less")
less_equal = _comparison(lax.le, "less_equal")
greater = _comparison(lax.gt, "greater")
greater_equal = _comparison(lax.ge, "greater_equal")


# -- selection ----------------------------------------------------------------------------
@overload
def where(condition: ArrayLike, x: None = None, y: None = None, /, *, size: int | None = None,
          fill_value: ArrayLike | None = None) -> tuple[Array, ...]: ...


@overload
def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /, *, size: int | None = None,
          fill_value: ArrayLike | None = None) -> Array: ...


def where(condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None, /, *,
          size: int | None = None, fill_value: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """``x`` where ``condition`` holds, else ``y``; with ``condition`` alone, ``nonzero`` of it
    (which needs a concrete condition or a static ``size``)."""
    if x is None and y is None:
        from fcore.numpy.searching import nonzero
        from fcore.numpy.shape_ops import atleast_1d

        return nonzero(atleast_1d(condition), size=size, fill_value=fill_value)
    if x is None or y is None:
        pos = 1 if x is None else 2
        raise TypeError(f"where requires ndarray or scalar arguments, got {type(None)} at position {pos}.")
    c = _promote1(condition, "where")
    if c.dtype != _bool:
        c = lax.ne(c, _const(c, 0))
    dt, weak = result_of(x, y, name="where")
    if c.shape == ():
        a, b = promote_n("where", x, y, dt=dt, weak=weak, full=True)
        return lax.select_n(c, b, a)
    c, a, b = _where_args(c, x, y, dt, weak)
    return lax.select_n(c, b, a)


def _where_args(c: Array, x: ArrayLike, y: ArrayLike, dt: DType, weak: bool) -> tuple[Array, Array, Array]:
    a, b = convert(x, dt, weak), convert(y, dt, weak)
    shape = broadcast_shapes(c.shape, a.shape, b.shape)
    return broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape)



def bitwise_count(x: ArrayLike, /) -> Array:
    """The number of 1 bits in ``abs(x)``, as uint8 (a SWAR population count on the unsigned
    integer of the same width)."""
    a = convert(x, *_numeric_operand(x, "bitwise_count"))
    if not (dtypes.is_integer(a.dtype) or dtypes.is_bool(a.dtype)):
        raise TypeError(f"population_count does not accept dtype {a.dtype.name}. Accepted dtypes are subtypes of integer.")
    if dtypes.is_signed_int(a.dtype):
        a = lax.abs(a)
        a = lax.convert_element_type(a, _UNSIGNED_OF[a.dtype])
    bits = dtypes.bit_width(a.dtype)
    u = a if a.dtype.itemsize * 8 == bits else lax.convert_element_type(a, dtypes.uint8)  # uint1/2/4: zero-extend
    width = u.dtype.itemsize * 8
    ones = (1 << width) - 1

    def mask(pattern: int) -> Array:
        return _strong_const(u, pattern & ones)

    def shr(v: Array, n: int) -> Array:
        return lax.shift_right_logical(v, _strong_const(v, n))

    u = lax.sub(u, lax.and_(shr(u, 1), mask(0x5555555555555555)))
    u = lax.add(lax.and_(u, mask(0x3333333333333333)), lax.and_(shr(u, 2), mask(0x3333333333333333)))
    u = lax.and_(lax.add(u, shr(u, 4)), mask(0x0F0F0F0F0F0F0F0F))
    if width > 8:
        u = shr(lax.mul(u, mask(0x0101010101010101)), width - 8)
    return lax.convert_element_type(u, dtypes.uint8)


def _numeric_operand(x: ArrayLike, name: str) -> tuple[DType, bool]:
    from fcore.numpy._promotion import operand, to_numeric

    dt, weak = operand(x, name)
    return to_numeric(dt), weak


_UNSIGNED_OF: dict[DType, DType] = {
    dtypes.int1: dtypes.uint1, dtypes.int2: dtypes.uint2, dtypes.int4: dtypes.uint4, dtypes.int8: dtypes.uint8,
    dtypes.int16: dtypes.uint16, dtypes.int32: dtypes.uint32, dtypes.int64: dtypes.uint64,
}

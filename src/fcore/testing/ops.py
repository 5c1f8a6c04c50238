"""The op table of ``fcore.testing``'s program generator.

Each op is written once against JAX's API (``lib.numpy``, ``lib.lax``), so the same program
runs under fcore and under a reference library. ``kinds`` names the dtype kinds an op takes
(``f`` float, ``i`` signed, ``u`` unsigned, ``b`` bool); the generator picks operands of those
kinds and keeps a step only when fcore's ``eval_shape`` accepts it, so every program is well
typed. Float ops are smooth where the values live (bounded inputs, no poles), so grad and jvp
compare across libraries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

Fn = Callable[..., Any]

FLOAT, SIGNED, UNSIGNED, BOOL = "f", "i", "u", "b"
INTS = SIGNED + UNSIGNED
NUMBERS = FLOAT + INTS


@attrs.frozen
class Op:
    """``fn(lib, *operands)``; ``kinds[k]`` the dtype kinds operand ``k`` may have;
    ``linear`` when the op is linear in its (float) operands jointly, for the adjoint check."""

    name: str
    kinds: tuple[str, ...]
    fn: Fn
    linear: bool = False

    @property
    def arity(self) -> int:
        return len(self.kinds)


def _if_array(lib: Any, x: Any, fn: Fn) -> Any:
    """``fn(x)`` for an array of rank >= 1; a rank-0 value (or Python scalar) as an array."""
    return fn(x) if lib.numpy.ndim(x) else lib.numpy.asarray(x)


def _sum_last(m: Any, x: Any) -> Any:
    return m.sum(x, axis=-1, keepdims=True) if m.ndim(x) else m.asarray(x)


def _take_rows(m: Any, x: Any) -> Any:
    return x[np.array([0, -1, 0])] if m.ndim(x) else m.asarray(x)


def _einsum_self(m: Any, x: Any, y: Any) -> Any:
    return m.einsum("...i,...i->...", x, y) if m.ndim(x) and m.ndim(y) else m.multiply(x, y)


def _matmul_t(m: Any, x: Any) -> Any:
    return x @ m.swapaxes(x, -1, -2) if m.ndim(x) >= 2 else m.asarray(x)


OPS: tuple[Op, ...] = (
    # float, smooth on the values the generator makes
    Op("sin", (FLOAT,), lambda lib, x: lib.numpy.sin(x)),
    Op("cos", (FLOAT,), lambda lib, x: lib.numpy.cos(x)),
    Op("tanh", (FLOAT,), lambda lib, x: lib.numpy.tanh(x)),
    Op("exp_neg_square", (FLOAT,), lambda lib, x: lib.numpy.exp(-(x * x))),
    Op("log1p_square", (FLOAT,), lambda lib, x: lib.numpy.log1p(x * x)),
    Op("lax_logistic", (FLOAT,), lambda lib, x: lib.lax.logistic(x)),
    Op("lax_rsqrt_1p_square", (FLOAT,), lambda lib, x: lib.lax.rsqrt(1 + x * x)),
    Op("lax_integer_pow", (FLOAT,), lambda lib, x: lib.lax.integer_pow(lib.numpy.tanh(x), 3)),
    Op("divide_1p_square", (FLOAT, FLOAT), lambda lib, x, y: x / (1 + y * y)),
    Op("arctan2_1p", (FLOAT, FLOAT), lambda lib, x, y: lib.numpy.arctan2(x, 2 + lib.numpy.tanh(y))),
    # linear (float)
    Op("negative", (NUMBERS,), lambda lib, x: lib.numpy.negative(x), linear=True),
    Op("add", (NUMBERS, NUMBERS), lambda lib, x, y: lib.numpy.add(x, y), linear=True),
    Op("subtract", (NUMBERS, NUMBERS), lambda lib, x, y: x - y, linear=True),
    Op("lax_add", (NUMBERS, NUMBERS), lambda lib, x, y: lib.lax.add(x, y), linear=True),
    Op("lax_sub", (NUMBERS, NUMBERS), lambda lib, x, y: lib.lax.sub(x, y), linear=True),
    Op("scale_weak_float", (FLOAT,), lambda lib, x: 0.5 * x, linear=True),
    Op("sum_keepdims", (NUMBERS,), lambda lib, x: _sum_last(lib.numpy, x), linear=True),
    Op("mean_axis0", (FLOAT,), lambda lib, x: _if_array(lib, x, lambda v: lib.numpy.mean(v, axis=0)), linear=True),
    Op("transpose", (NUMBERS + BOOL,), lambda lib, x: lib.numpy.transpose(x), linear=True),
    Op("reverse", (NUMBERS + BOOL,), lambda lib, x: _if_array(lib, x, lambda v: v[..., ::-1]), linear=True),
    Op("ravel", (NUMBERS + BOOL,), lambda lib, x: lib.numpy.ravel(x), linear=True),
    Op("take_rows", (NUMBERS + BOOL,), lambda lib, x: _take_rows(lib.numpy, x), linear=True),
    Op("slice_first", (NUMBERS + BOOL,), lambda lib, x: _if_array(lib, x, lambda v: v[..., :1]), linear=True),
    Op("expand_dims", (NUMBERS + BOOL,), lambda lib, x: x[None], linear=True),
    Op("lax_reduce_sum", (NUMBERS,), lambda lib, x: lib.lax.reduce_sum(x, tuple(range(lib.numpy.ndim(x)))),
       linear=True),
    Op("cumsum", (NUMBERS,), lambda lib, x: _if_array(lib, x, lambda v: lib.numpy.cumsum(v, axis=-1)), linear=True),
    # bilinear / nonlinear numeric
    Op("multiply", (NUMBERS, NUMBERS), lambda lib, x, y: x * y),
    Op("lax_mul", (NUMBERS, NUMBERS), lambda lib, x, y: lib.lax.mul(x, y)),
    Op("maximum", (NUMBERS, NUMBERS), lambda lib, x, y: lib.numpy.maximum(x, y)),
    Op("lax_min", (NUMBERS, NUMBERS), lambda lib, x, y: lib.lax.min(x, y)),
    Op("einsum_dot", (NUMBERS, NUMBERS), lambda lib, x, y: _einsum_self(lib.numpy, x, y)),
    Op("matmul_t", (NUMBERS,), lambda lib, x: _matmul_t(lib.numpy, x)),
    Op("max_reduce", (NUMBERS,), lambda lib, x: _if_array(lib, x, lambda v: lib.numpy.max(v, axis=-1))),
    Op("add_weak_int", (NUMBERS,), lambda lib, x: x + 2),
    Op("mul_weak_int", (NUMBERS,), lambda lib, x: 3 * x),
    Op("square", (NUMBERS,), lambda lib, x: lib.numpy.square(x)),
    Op("abs", (FLOAT + SIGNED,), lambda lib, x: lib.numpy.abs(x)),
    Op("clip", (NUMBERS,), lambda lib, x: lib.numpy.clip(x, 0, 5)),
    # integer
    Op("floor_divide", (INTS, INTS), lambda lib, x, y: x // y),
    Op("remainder", (INTS, INTS), lambda lib, x, y: x % y),
    Op("lax_div", (INTS, INTS), lambda lib, x, y: lib.lax.div(x, y)),
    Op("lax_rem", (INTS, INTS), lambda lib, x, y: lib.lax.rem(x, y)),
    Op("bitwise_and", (INTS + BOOL, INTS + BOOL), lambda lib, x, y: x & y),
    Op("bitwise_or", (INTS + BOOL, INTS + BOOL), lambda lib, x, y: x | y),
    Op("bitwise_xor", (INTS + BOOL, INTS + BOOL), lambda lib, x, y: x ^ y),
    Op("invert", (INTS + BOOL,), lambda lib, x: ~x),
    Op("shift_right_small", (INTS,), lambda lib, x: x >> 1),
    Op("lax_shift_left", (INTS, INTS), lambda lib, x, y: lib.lax.shift_left(x, y)),
    Op("sign", (NUMBERS,), lambda lib, x: lib.numpy.sign(x)),
    Op("argmax", (NUMBERS,), lambda lib, x: _if_array(lib, x, lambda v: lib.numpy.argmax(v, axis=-1))),
    # comparisons and bool (integer and bool operands only: float comparisons flip on rounding)
    Op("less", (INTS + BOOL, INTS + BOOL), lambda lib, x, y: x < y),
    Op("equal", (INTS + BOOL, INTS + BOOL), lambda lib, x, y: lib.numpy.equal(x, y)),
    Op("logical_not", (BOOL,), lambda lib, x: lib.numpy.logical_not(x)),
    Op("any", (BOOL,), lambda lib, x: _if_array(lib, x, lambda v: lib.numpy.any(v, axis=-1))),
    Op("where", (BOOL, NUMBERS + BOOL, NUMBERS + BOOL), lambda lib, c, x, y: lib.numpy.where(c, x, y)),
    Op("lax_select", (BOOL, NUMBERS + BOOL, NUMBERS + BOOL), lambda lib, c, x, y: lib.lax.select(c, x, y)),
    # conversions (exact directions only)
    Op("to_float32", (INTS + BOOL,), lambda lib, x: lib.numpy.asarray(x).astype(np.float32)),
    Op("to_int32", (INTS + BOOL,), lambda lib, x: lib.numpy.asarray(x).astype(np.int32)),
    Op("lax_convert_f32", (NUMBERS + BOOL,), lambda lib, x: lib.lax.convert_element_type(x, np.float32)),
)

OPS_BY_NAME: dict[str, Op] = {op.name: op for op in OPS}

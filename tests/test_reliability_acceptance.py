"""Issue 23, classes 2 and 5: every elementwise lax function accepts exactly the dtypes JAX
accepts, eagerly and under jit, and never hands XLA an invalid program (``stablehlo.sign``
on unsigned integers failed to compile; ``lax.abs`` on uint32 and eager ``lax.round`` on
ints were accepted; ``grad`` of ``nextafter`` was zero where JAX has no rule)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.config import verify_each

UNARY = [
    "abs", "sign", "neg", "round", "floor", "ceil", "is_finite", "exp", "exp2", "log", "sqrt", "rsqrt", "cbrt",
    "tanh", "logistic", "sin", "asin", "acosh", "population_count", "clz", "bitwise_not", "square",
    "reciprocal", "real", "imag", "erf", "lgamma",  # conj: JAX's also takes float32 (see docs)
]
BINARY = [
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "nextafter",  # atan2: JAX's takes complex "eq", "lt",
    "bitwise_and", "shift_left", "shift_right_logical", "complex",
]
DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16, ml_dtypes.bfloat16, np.float32, np.complex64]


def _outcome(f: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "ok", np.asarray(f(*args))
    except TypeError:
        return "TypeError", None


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_dtype_acceptance_matches_jax(name: str) -> None:
    arity = 2 if name in BINARY else 1
    for dt in DTYPES:
        x = np.array([1, 0, 3]).astype(dt)
        args = (x,) * arity
        want = _outcome(getattr(jax.lax, name), args)
        f: Callable[..., Any] = getattr(lax, name)
        with verify_each(False):  # users run without the verifier: eager must check types itself
            eager = _outcome(f, args)
        jitted = _outcome(fcore.jit(f), args)  # a CompileError (invalid program) fails the test
        assert (eager[0], jitted[0]) == (want[0], want[0]), (name, np.dtype(dt).name)
        if want[0] == "ok":
            for got in (eager[1], jitted[1]):
                assert got.dtype == want[1].dtype
                np.testing.assert_allclose(got.astype(np.float64) if dt == ml_dtypes.bfloat16 else got,
                                           want[1].astype(np.float64) if dt == ml_dtypes.bfloat16 else want[1],
                                           rtol=1e-2, atol=1e-3)


def test_sign_of_unsigned_compiles() -> None:
    u = np.array([3, 0, 7], np.uint32)
    np.testing.assert_array_equal(np.asarray(fcore.jit(fcore.numpy.sign)(u)), np.array([1, 0, 1], np.uint32))
    np.testing.assert_array_equal(np.asarray(fcore.jit(lax.sign)(u.astype(np.uint8))), np.array([1, 0, 1], np.uint8))


def test_abs_of_unsigned_is_rejected_as_in_jax() -> None:
    with pytest.raises(TypeError, match="abs does not accept dtype uint32"):
        lax.abs(np.array([1], np.uint32))
    with pytest.raises(TypeError, match="abs does not accept dtype uint32"):
        fcore.jit(lax.abs)(np.array([1], np.uint32))
    np.testing.assert_array_equal(np.asarray(fcore.numpy.abs(np.array([1], np.uint32))), [1])  # jnp.abs: identity


def test_nextafter_has_no_derivative_as_in_jax() -> None:
    with pytest.raises(NotImplementedError) as want:
        jax.grad(lambda x: jax.lax.nextafter(x, 2.0))(1.0)
    with pytest.raises(NotImplementedError) as got:
        fcore.grad(lambda x: lax.nextafter(x, 2.0))(1.0)
    assert str(got.value) == str(want.value)
    # not differentiated: fine, in both
    assert float(fcore.grad(lambda x, y: lax.nextafter(x, 2.0) * y, argnums=1)(1.0, 2.0)) == float(
        jax.grad(lambda x, y: jax.lax.nextafter(x, 2.0) * y, argnums=1)(1.0, 2.0)
    )

"""Corner cases where ``fcore.numpy`` once differed from ``jax.numpy``, found by probing the two
side by side: exception types for bad input, and dtypes/values at the edges (integer ``dtype``
arguments, integer division by zero, Array API cumulative functions)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import jax.nn as jnn
import numpy as np
import pytest

import fcore.nn as fnn
import fcore.numpy as fnp
from test_numpy_common import DTYPES, check, check_raises, modes, sample

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize(
    "name, args, exc",
    [
        ("reshape", (X, (4, -1)), ValueError),
        ("reshape", (np.float32(1), (2, 12)), ValueError),
        ("transpose", (X, (0,)), TypeError),
        ("moveaxis", (np.ones((2, 3, 4)), (0, 0), (1, 2)), TypeError),
        ("swapaxes", (X, 0, 5), IndexError),
        ("mean", (X, 3), IndexError),
        ("var", (X, 3), IndexError),
        ("argmax", (X, 3), IndexError),
        ("sum", (X, 3), ValueError),
        ("zeros", (-1,), TypeError),
        ("array", (None,), ValueError),
        ("where", (X > 0, X), TypeError),
        ("cumulative_sum", (3.0,), ValueError),
        ("cumulative_prod", (np.ones((2, 2)),), ValueError),
    ],
)
def test_exception_types(name: str, args: tuple[Any, ...], exc: type[BaseException]) -> None:
    with modes():
        check_raises(getattr(fnp, name), getattr(jnp, name), *args, exc=exc)


def test_nn_exception_types() -> None:
    with modes():
        check_raises(fnn.standardize, jnn.standardize, 2.0, exc=IndexError)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_var_with_integer_dtype_is_weak_float(dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (3, 4), seed=1)
    for x64 in (False, True):
        with modes(x64=x64):
            for odt in (np.int32, np.uint8):
                check(lambda v, o=odt: fnp.var(v, axis=0, dtype=o), lambda v, o=odt: jnp.var(v, axis=0, dtype=o), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_array_api_cumulative(name: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (2, 3), seed=2)
    f, g = getattr(fnp, name), getattr(jnp, name)
    for x64 in (False, True):
        with modes(x64=x64):
            for kw in ({"axis": 0}, {"axis": -1}, {"axis": 1, "include_initial": True}, {"axis": 0, "dtype": np.float32}):
                check(lambda v, k=kw: f(v, **k), lambda v, k=kw: g(v, **k), x)
            check(f, g, x[0])


def test_fmod_integer_by_zero() -> None:
    with modes():
        check(fnp.fmod, jnp.fmod, np.array([2, 3, -7]), np.array([0, 2, 0]))
        check(fnp.fmod, jnp.fmod, 2, False)
        check(fnp.fmod, jnp.fmod, np.array([2.0, 3.0]), np.array([0.0, 2.0], np.float32))

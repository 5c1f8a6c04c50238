"""Corner cases where ``fcore.numpy`` once differed from ``jax.numpy``, found by probing the two
side by side: exception types for bad input, and dtypes/values at the edges (integer ``dtype``
arguments, integer division by zero, Array API cumulative functions)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.nn as jnn
import numpy as np
import pytest

import fcore
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
        ("power", (np.arange(3, dtype=np.uint8), -1), TypeError),
        ("power", (np.arange(3), -2), TypeError),
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


METHOD_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("sort", (), {}), ("argsort", (0,), {"descending": True}), ("cumprod", (1,), {"dtype": np.float16}),
    ("cumsum", (0,), {"dtype": np.int32}), ("var", (0,), {"dtype": np.float16, "ddof": 1}), ("std", (1,), {"correction": 1}),
    ("max", (), {"initial": 0.5, "axis": 1}), ("min", (1,), {"where": X > 1, "initial": 9.0}), ("sum", (), {"where": X > 0}),
    ("prod", (0,), {"initial": 2.0}), ("mean", (), {"where": X > 1}), ("all", (), {"where": X > 1}), ("any", (0,), {}),
    ("nonzero", (), {"size": 3}), ("ptp", (1,), {}), ("take", (np.array([0, 9]),), {}), ("repeat", (2,), {}),
    ("repeat", (np.array([1, 0]),), {"axis": 0, "total_repeat_length": 3}), ("diagonal", (), {}), ("trace", (), {}),
    ("conjugate", (), {}), ("argpartition", (1,), {}), ("compress", (np.array([1, 0]),), {"axis": 0}),
    ("searchsorted", (2.5,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", METHOD_CALLS, ids=lambda v: repr(v)[:30])
def test_array_methods(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    x = X[0] if name == "searchsorted" else X
    with modes():
        check(lambda: getattr(fnp.asarray(x), name)(*args, **kwargs), lambda: getattr(jnp.asarray(x), name)(*args, **kwargs),
              staged=name != "compress")  # compress without size needs a concrete condition


def test_setitem_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        fnp.asarray(X)[0] = 1.0


@pytest.mark.parametrize("total", [None, 0, 1, 3, 5, 9])
def test_repeat(total: int | None) -> None:
    x = sample(np.dtype(np.float32), (2, 3, 4), seed=3)
    with modes():
        kw: dict[str, Any] = {"total_repeat_length": total}
        check(lambda v: fnp.repeat(v, np.array([1, 2, 0]), axis=1, **kw), lambda v: jnp.repeat(v, np.array([1, 2, 0]), axis=1, **kw), x)
        check(lambda v: fnp.repeat(v, 2, axis=2, **kw), lambda v: jnp.repeat(v, 2, axis=2, **kw), x)
        check(lambda: fnp.repeat(3.0, 2, axis=0, **kw), lambda: jnp.repeat(3.0, 2, axis=0, **kw))
        check(lambda v: fnp.repeat(v, 2, **kw), lambda v: jnp.repeat(v, 2, **kw), x)
    with modes():
        r = np.array([2, 1, 1])
        check(fcore.jit(lambda v, r: fnp.repeat(v, r, axis=1, total_repeat_length=4)),
              jax.jit(lambda v, r: jnp.repeat(v, r, axis=1, total_repeat_length=4)), x, r, staged=False)
        check(fcore.grad(lambda v: (fnp.repeat(v, r, axis=1, total_repeat_length=5) ** 2).sum()),
              jax.grad(lambda v: (jnp.repeat(v, r, axis=1, total_repeat_length=5) ** 2).sum()), x, staged=False)
        reps: Any = [1, 2, 0]  # a list is not array-like for jnp.repeat
        check_raises(lambda v: fnp.repeat(v, reps, axis=1), lambda v: jnp.repeat(v, reps, axis=1), x)
    with pytest.raises(fcore.ConcretizationError, match="total_repeat_length"):
        fcore.jit(lambda v, r: fnp.repeat(v, r, axis=1))(x, np.array([2, 1, 1]))

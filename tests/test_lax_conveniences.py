"""``fcore.lax`` functions built from the primitives (``full``, ``full_like``, ``broadcast_like``, ``index_take``,
``broadcast_to_rank``, ``collapse``, ``split``, ``tile``, ``stack``, ``unstack``,
``batch_matmul``, ``reduce``, ``associative_scan``) against ``jax.lax``."""

from __future__ import annotations

from typing import Any

import jax
import jax.lax as jlax
import numpy as np
import pytest

import fcore
from fcore import lax
from test_numpy_common import check, check_raises, modes, sample

X = sample(np.dtype(np.float32), (2, 3, 4), seed=61)
XI = sample(np.dtype(np.int32), (2, 3, 4), seed=62)

CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("full", ((2, 3), 1.5)), ("full", ((2, 3), 2)), ("full", ((2,), True)), ("full", ((2, 3), np.float16(1))),
    ("full", ((2, 3), 2, np.int8)), ("full", ((2, 3), 2.5, np.int32)), ("full", (4, 1.0)),
    ("full_like", (X, 1.5)), ("full_like", (XI, 7)), ("full_like", (X, 2, np.int8)), ("full_like", (XI, 1, None, (5,))),
    ("full_like", (2.0, 1)), ("full_like", (np.float16(1), 3)),
    ("broadcast_to_rank", (X[0], 4)), ("broadcast_to_rank", (X, 3)), ("broadcast_to_rank", (2.0, 2)),
    ("collapse", (X, 0, 2)), ("collapse", (X, 1)), ("collapse", (X, 0, -1)),
    ("split", (X, (1, 2), 1)), ("split", (X, (2, 2), -1)), ("tile", (X, (1, 2, 3))),
    ("stack", ([X, X], 1)), ("stack", ([X, X], -1)), ("unstack", (X, 1)), ("unstack", (X, -1)),
    ("batch_matmul", (X, np.transpose(X, (0, 2, 1)))), ("batch_matmul", (XI, np.transpose(XI, (0, 2, 1)))),
    ("broadcast_like", (X[0, 0], X)), ("broadcast_like", (2.0, X)), ("broadcast_like", (X[:1, :, :1], X)),
    ("broadcast_like", (XI, X)),
    ("index_take", (X, (np.array([0, 1, -1]), np.array([2, -1, 0])), (0, 2))), ("index_take", (XI, [np.array([0, 2])], [1])),
]


@pytest.mark.parametrize("name, args", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_against_jax(name: str, args: tuple[Any, ...]) -> None:
    with modes():
        check(lambda: getattr(lax, name)(*args), lambda: getattr(jlax, name)(*args), staged=False)


@pytest.mark.parametrize(
    "name, args, exc",
    [("full", ((2,), np.array([1, 2])), TypeError), ("split", (X, (1, 1), 1), ValueError), ("tile", (X, (2,)), TypeError),
     ("stack", ([X, XI], 0), TypeError), ("batch_matmul", (X, X), TypeError),
     ("broadcast_like", (X, X[0]), ValueError), ("broadcast_like", (X[0, :2], X), ValueError),
     ("index_take", (X, (np.array([0.5]),), (0,)), ValueError), ("index_take", (X, (), ()), ValueError)],
)
def test_errors(name: str, args: tuple[Any, ...], exc: type[Exception]) -> None:
    with modes():
        check_raises(getattr(lax, name), getattr(jlax, name), *args, exc=exc)


def test_index_take_grad() -> None:
    idx = (np.array([0, 0, 2]),)
    jax_take: Any = jlax.index_take  # typed for jax.Array operands; NumPy ones work at run time
    with modes():
        check(fcore.grad(lambda v: (lax.index_take(v, idx, (1,)) ** 2).sum()),
              jax.grad(lambda v: (jax_take(v, idx, (1,)) ** 2).sum()), X, staged=False)


@pytest.mark.parametrize("op, init", [("add", 0.0), ("mul", 1.0), ("max", -np.inf), ("min", np.inf), ("add", 2.5), ("max", 0.0)])
def test_reduce(op: str, init: float) -> None:
    with modes():
        check(lambda v: lax.reduce(v, np.float32(init), getattr(lax, op), (0, 2)),
              lambda v: jlax.reduce(v, np.float32(init), getattr(jlax, op), (0, 2)), X)
        if (op, init) in {("add", 0.0), ("mul", 1.0), ("max", -np.inf), ("min", np.inf)}:  # JAX's generic reduce calls op on tuples
            check(lambda v: lax.reduce((v,), (np.float32(init),), getattr(lax, op), (1,)),
                  lambda v: jlax.reduce((v,), (np.float32(init),), getattr(jlax, op), (1,)), X)
    with modes():
        check(lambda v: lax.reduce(v > 0, False, lax.bitwise_or, (1,)), lambda v: jlax.reduce(v > 0, False, jlax.bitwise_or, (1,)), X)
    # Any other computation is one general ``reduce`` equation, as in JAX (both computed by XLA).
    np.testing.assert_array_equal(lax.reduce(X, np.float32(0), lambda a, b: a - b, (0,)),
                                  jlax.reduce(X, np.float32(0), lambda a, b: a - b, (0,)))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("op", ["add", "max", "mul"])
def test_associative_scan(op: str, axis: int, reverse: bool) -> None:
    with modes():
        check(lambda v: lax.associative_scan(getattr(lax, op), v, reverse, axis),
              lambda v: jlax.associative_scan(getattr(jlax, op), v, reverse, axis), X)


def test_associative_scan_trees_and_transforms() -> None:
    def pair(lib: Any) -> Any:
        return lambda v: lib.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]), (v, v), axis=1)

    with modes():
        check(pair(lax), pair(jlax), X)
        check(fcore.grad(lambda v: lax.associative_scan(lax.mul, v).sum()), jax.grad(lambda v: jlax.associative_scan(jlax.mul, v).sum()),
              X, staged=False)
        check(fcore.jit(lambda v: lax.associative_scan(lax.add, v, axis=2)), jax.jit(lambda v: jlax.associative_scan(jlax.add, v, axis=2)),
              XI, staged=False)
        check(lambda v: lax.associative_scan(lax.add, v), lambda v: jlax.associative_scan(jlax.add, v), np.ones(1, np.float32))
    with pytest.raises(ValueError):
        lax.associative_scan(lax.add, (np.ones(2), np.ones(3)))


SHIFTS = ["shift_left", "shift_right_arithmetic", "shift_right_logical"]


@pytest.mark.parametrize("name", SHIFTS)
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint32])
def test_shifts_against_jax_eager_and_jitted(name: str, dtype: type[np.generic]) -> None:
    """Amounts cover in-range, past-the-width and negative (huge when read unsigned) shifts."""
    bits = np.dtype(dtype).itemsize * 8
    x = np.array([-8, 5, 1, 7, 0, 100, -1, 3], np.int64).astype(dtype)
    y = np.array([1, bits - 1, bits, bits + 3, 0, 2, -1, 5], np.int64).astype(dtype)
    with modes():
        check(getattr(lax, name), getattr(jlax, name), x, y)
        check(fcore.jit(getattr(lax, name)), jax.jit(getattr(jlax, name)), x, y, staged=False)
        check(fcore.vmap(getattr(lax, name), (0, None)), jax.vmap(getattr(jlax, name), (0, None)), x, y[1], staged=False)
        check(fcore.grad(lambda v: (lax.convert_element_type(getattr(lax, name)(x, y), np.float32) * v).sum()),
              jax.grad(lambda v: (jlax.convert_element_type(getattr(jlax, name)(x, y), np.float32) * v).sum()),
              np.ones(8, np.float32), staged=False)
    with pytest.raises(TypeError, match=name):
        getattr(lax, name)(np.float32(1), np.float32(2))

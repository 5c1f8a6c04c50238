"""Issue 23, class 1: lax's binary ops broadcast size-1 dimensions as JAX 0.10's do
(``lax.add(np.ones(1), np.ones(4))`` is ``(4,)``), in eager, jit, grad, jvp and vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import fcore
from fcore import lax

OPS = ["add", "sub", "mul", "div", "max", "min", "rem", "atan2", "nextafter", "pow", "eq", "lt", "complex"]
INT_OPS = ["shift_left", "shift_right_logical", "shift_right_arithmetic", "bitwise_and", "bitwise_xor", "div", "rem"]

SHAPE_PAIRS = [((1,), (4,)), ((4,), (1,)), ((1, 3), (4, 3)), ((4, 1), (1, 3)), ((1, 1), (2, 3)), ((), (2, 1))]


def _args(sa: tuple[int, ...], sb: tuple[int, ...], dtype: Any = np.float32) -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    x = (rng.uniform(0.5, 2.0, sa)).astype(dtype)
    y = (rng.uniform(0.5, 2.0, sb)).astype(dtype)
    return x, y


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS)
def test_size_one_dims_broadcast_as_jax(name: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    x, y = _args(sa, sb)
    f: Callable[..., Any] = getattr(lax, name)
    want = np.asarray(getattr(jax.lax, name)(x, y))
    for got in (f(x, y), fcore.jit(f)(x, y)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("name", INT_OPS)
def test_integer_ops_broadcast_size_one(name: str) -> None:
    x = np.array([3], np.int32)
    y = np.array([0, 1, 2, 5], np.int32)
    want = np.asarray(getattr(jax.lax, name)(x, y))
    for f in (getattr(lax, name), fcore.jit(getattr(lax, name))):
        np.testing.assert_array_equal(np.asarray(f(x, y)), want)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "max", "atan2", "pow", "complex"])
def test_grad_sums_over_broadcast_dims(name: str) -> None:
    x, y = _args((1, 3), (4, 1))

    def loss(lib: Any) -> Callable[[Any, Any], Any]:
        def f(a: Any, b: Any) -> Any:
            out = getattr(lib.lax, name)(a, b)
            return lib.numpy.real(out).sum() if name == "complex" else out.sum()

        return f

    import jax.numpy  # noqa: F401  (jax.numpy as lib.numpy)

    import fcore.numpy  # noqa: F401

    want = jax.grad(loss(jax), argnums=(0, 1))(x, y)
    got = fcore.grad(loss(fcore), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)
    tx, ty = np.ones_like(x), np.ones_like(y)
    _, jw = jax.jvp(getattr(jax.lax, name), (x, y), (tx, ty))
    _, jg = fcore.jvp(getattr(lax, name), (x, y), (tx, ty))
    np.testing.assert_allclose(np.asarray(jg), np.asarray(jw), rtol=1e-5)


@pytest.mark.parametrize(
    "sa,sb,axes",
    [((3,), (4,), (0, None)), ((3,), (3, 4), (0, 0)), ((3, 1), (4,), (0, None)), ((2, 3), (3, 1), (1, 0)),
     ((1,), (3, 4), (None, 0)), ((3, 1, 4), (1, 1), (0, None))],
)
def test_vmap_operands_of_different_rank(sa: tuple[int, ...], sb: tuple[int, ...], axes: tuple[Any, Any]) -> None:
    x, y = _args(sa, sb)
    want = jax.vmap(jax.lax.mul, in_axes=axes)(x, y)
    got = fcore.vmap(lax.mul, in_axes=axes)(x, y)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    jitted = fcore.jit(fcore.vmap(lax.mul, in_axes=axes))(x, y)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((1,), (4, 3)), ((2, 3), (2, 4))])
def test_incompatible_shapes_raise_as_jax(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    x, y = _args(sa, sb)
    with pytest.raises(TypeError) as want:
        jax.lax.add(x, y)
    for f in (lax.add, fcore.jit(lax.add)):
        with pytest.raises(TypeError) as got:
            f(x, y)
        assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match="same number of dimensions|incompatible shapes"):
        fcore.vmap(lax.add, in_axes=(0, None))(np.ones((5,) + sa, np.float32), y)

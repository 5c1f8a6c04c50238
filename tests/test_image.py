"""fcore.image against jax.image: every resize method (up and down, with and without
antialiasing), scale_and_translate, dtypes, errors, and resize under jit, grad and vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import image as fimage

X = np.random.RandomState(0).randn(2, 5, 7, 3).astype(np.float32)
METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]


def _close(ours: fcore.Array, theirs: jax.Array) -> None:
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_resize_matches_jax(method: str) -> None:
    # One shape that shrinks one dimension and grows another; antialiasing on and off.
    for antialias in (True, False):
        shape = (2, 3, 11, 3)
        _close(fimage.resize(X, shape, method, antialias=antialias), jax.image.resize(X, shape, method, antialias=antialias))


def test_resize_method_enum_and_dtypes() -> None:
    ints = np.arange(20, dtype=np.int32).reshape(4, 5)
    _close(fimage.resize(ints, (8, 3), fimage.ResizeMethod.NEAREST), jax.image.resize(ints, (8, 3), jax.image.ResizeMethod.NEAREST))
    _close(fimage.resize(ints, (8, 3), fimage.ResizeMethod.LINEAR), jax.image.resize(ints, (8, 3), jax.image.ResizeMethod.LINEAR))
    assert [m.name for m in fimage.ResizeMethod] == [m.name for m in jax.image.ResizeMethod]
    for name in ("bilinear", "trilinear", "bicubic", "tricubic", "bicubic-pytorch", "triangle"):
        assert fimage.ResizeMethod.from_string(name).name == jax.image.ResizeMethod.from_string(name).name


def test_scale_and_translate_matches_jax() -> None:
    scale, trans = np.array([1.5, 0.6], np.float32), np.array([0.3, -0.2], np.float32)
    for method, antialias in (("linear", True), ("lanczos3", False), ("cubic-pytorch", False)):
        ours = fimage.scale_and_translate(X, (2, 8, 4, 3), (1, 2), fnp.asarray(scale), fnp.asarray(trans), method, antialias)
        theirs = jax.image.scale_and_translate(X, (2, 8, 4, 3), (1, 2), jnp.asarray(scale), jnp.asarray(trans), method, antialias)
        _close(ours, theirs)


def test_errors_match_jax() -> None:
    cases: list[Callable[[Any], object]] = [
        lambda m: m.resize(X, (2, 3), "linear"),
        lambda m: m.resize(X, (2, 5, 7, 3), "nonsense"),
        lambda m: m.scale_and_translate(X, (2, 5, 7, 3), (1,), np.ones(1), np.zeros(1), "nearest"),
    ]
    for case in cases:
        with pytest.raises(ValueError) as theirs:
            case(jax.image)
        with pytest.raises(ValueError) as ours:
            case(fimage)
        assert str(ours.value) == str(theirs.value)


def test_resize_under_jit_grad_and_vmap() -> None:
    def loss(m: Any) -> Callable[[Any], Any]:
        return lambda x: (m.resize(x, (2, 3, 9, 3), "bicubic") ** 2).sum()

    _close(fcore.jit(fcore.grad(loss(fimage)))(X), jax.jit(jax.grad(loss(jax.image)))(X))
    _close(fcore.vmap(lambda x: fimage.resize(x, (4, 9, 3), "lanczos3"))(X), jax.vmap(lambda x: jax.image.resize(x, (4, 9, 3), "lanczos3"))(X))
    scale = np.array([0.7, 1.3], np.float32)
    trans = np.zeros(2, np.float32)

    def by_scale(m: Any, s: Any) -> Any:
        return m.scale_and_translate(X, (2, 4, 9, 3), (1, 2), s, trans, "linear").sum()

    _close(fcore.grad(lambda s: by_scale(fimage, s))(scale), jax.grad(lambda s: by_scale(jax.image, s))(scale))

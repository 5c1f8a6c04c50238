"""Reductions of ``fcore.numpy`` against ``jax.numpy`` (dtype rules included), plus
hypothesis properties over random shapes and axes."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from test_numpy_common import DTYPES, DTYPES_C, check, check_or_raises, modes, sample

REDUCTIONS = ["sum", "prod", "mean", "max", "min", "amax", "amin", "all", "any", "var", "std", "count_nonzero"]
AXES: list[Any] = [None, 0, -1, (0, 2), ()]


@pytest.mark.parametrize("dtype", DTYPES_C, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction(name: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (2, 3, 4), seed=11)
    f, g = getattr(fnp, name), getattr(jnp, name)
    # keepdims is a shape rule of each reduction, not of the dtype: each dtype takes one keepdims
    # per axis, alternating, so every (reduction, axis, keepdims) meets several dtypes.
    shift = DTYPES_C.index(np.dtype(dtype))
    with modes():
        for i, axis in enumerate(AXES):
            if name == "count_nonzero" and axis == ():
                continue
            keepdims = (i + shift) % 2 == 1
            check_or_raises(lambda v, a=axis, k=keepdims: f(v, axis=a, keepdims=k),
                            lambda v, a=axis, k=keepdims: g(v, axis=a, keepdims=k), x)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "var", "std", "argmax", "argmin", "cumsum", "cumprod"])
def test_reduction_of_weak_and_python_scalars(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    with modes():
        for v in (2.0, 3, True):
            check_or_raises(f, g, v)
        check(lambda: f(fnp.full((3,), 2.0)), lambda: g(jnp.full((3,), 2.0)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
def test_axis_reduction(name: str, dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (2, 3, 4), seed=12)
    f, g = getattr(fnp, name), getattr(jnp, name)
    with modes():
        for axis in (None, 0, 1, -1):
            check_or_raises(lambda v, a=axis: f(v, axis=a), lambda v, a=axis: g(v, axis=a), x)
        if name in ("argmax", "argmin"):
            check(lambda v: f(v, axis=1, keepdims=True), lambda v: g(v, axis=1, keepdims=True), x)
            check(lambda v: f(v, keepdims=True), lambda v: g(v, keepdims=True), x)


def test_argmax_nan_and_ties() -> None:
    with modes():
        x = np.array([[1.0, np.nan, 3.0, 3.0], [2.0, 2.0, -1.0, 0.0]], np.float32)
        for name in ("argmax", "argmin"):
            check(lambda v, n=name: getattr(fnp, n)(v, axis=1), lambda v, n=name: getattr(jnp, n)(v, axis=1), x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float16, np.float32, np.bool_])
def test_dtype_arguments(dtype: type) -> None:
    x = sample(np.dtype(dtype), (3, 4), seed=13)
    with modes():
        for out in (np.float32, np.int32, np.int16, np.float16):
            for name in ("sum", "prod", "mean", "cumsum", "cumprod"):
                check_or_raises(lambda v, n=name, o=out: getattr(fnp, n)(v, axis=-1, dtype=o),
                                lambda v, n=name, o=out: getattr(jnp, n)(v, axis=-1, dtype=o), x)
        check_or_raises(lambda v: fnp.cumsum(v, axis=1, dtype=bool), lambda v: jnp.cumsum(v, axis=1, dtype=bool), x)
        check(lambda v: fnp.sum(v, promote_integers=False), lambda v: jnp.sum(v, promote_integers=False), x)
        check_or_raises(lambda v: fnp.var(v, dtype=np.float32), lambda v: jnp.var(v, dtype=np.float32), x)


def test_where_initial_ddof() -> None:
    with modes():
        for dt in (np.int8, np.float16, np.float32):
            x = sample(np.dtype(dt), (3, 4), seed=14)
            w = sample(np.dtype(np.bool_), (3, 4), seed=15)
            check(lambda v: fnp.sum(v, axis=1, where=w), lambda v: jnp.sum(v, axis=1, where=w), x)
            check(lambda v: fnp.sum(v, axis=1, initial=3), lambda v: jnp.sum(v, axis=1, initial=3), x)
            check(lambda v: fnp.prod(v, initial=2, where=w), lambda v: jnp.prod(v, initial=2, where=w), x)
            check(lambda v: fnp.max(v, axis=0, initial=-1), lambda v: jnp.max(v, axis=0, initial=-1), x)
            check(lambda v: fnp.min(v, axis=1, where=w, initial=5), lambda v: jnp.min(v, axis=1, where=w, initial=5), x)
            check(lambda v: fnp.mean(v, axis=1, where=w), lambda v: jnp.mean(v, axis=1, where=w), x)
            check(lambda v: fnp.var(v, axis=0, ddof=1), lambda v: jnp.var(v, axis=0, ddof=1), x)
            check(lambda v: fnp.std(v, ddof=2, keepdims=True), lambda v: jnp.std(v, ddof=2, keepdims=True), x)
            check(lambda v: fnp.var(v, axis=1, where=w), lambda v: jnp.var(v, axis=1, where=w), x)
            check(lambda v: fnp.any(v, axis=1, where=w), lambda v: jnp.any(v, axis=1, where=w), x)
            check(lambda v: fnp.all(v, where=w), lambda v: jnp.all(v, where=w), x)
        check(lambda v: fnp.var(v, ddof=5), lambda v: jnp.var(v, ddof=5), np.ones(3, np.float32))
        check(lambda v: fnp.var(v, axis=0, correction=1), lambda v: jnp.var(v, axis=0, correction=1), np.ones((3, 2), np.float32))


def test_errors() -> None:
    with modes():
        with pytest.raises(ValueError):
            fnp.max(np.zeros((0, 3), np.float32), axis=0)
        with pytest.raises(ValueError):
            fnp.max(np.ones(3), where=np.ones(3, bool))
        with pytest.raises(ValueError):
            fnp.sum(np.ones((2, 3)), axis=2)
        with pytest.raises(ValueError):
            fnp.sum(np.ones((2, 3)), axis=(0, 0))
        with pytest.raises(ValueError):
            fnp.argmax(np.zeros((0,)))
        with pytest.raises(NotImplementedError):
            fnp.sum(np.ones(3), out=np.ones(()))  # type: ignore[arg-type]
        check(lambda v: fnp.max(v, axis=0, initial=1.0), lambda v: jnp.max(v, axis=0, initial=1.0), np.zeros((0, 3), np.float32))
        check(fnp.sum, jnp.sum, np.zeros((0, 3), np.int8))


def test_methods_match_functions() -> None:
    with modes():
        x = sample(np.dtype(np.float32), (3, 4), seed=16)
        a, j = fnp.asarray(x), jnp.asarray(x)
        from test_numpy_common import assert_same

        assert_same(a.sum(axis=0), j.sum(axis=0))
        assert_same(a.prod(keepdims=True), j.prod(keepdims=True))
        assert_same(a.mean(1), j.mean(1))
        assert_same(a.max(), j.max())
        assert_same(a.min(axis=1), j.min(axis=1))
        assert_same(a.all(), j.all())
        assert_same(a.any(axis=0), j.any(axis=0))
        assert_same(a.argmax(axis=1), j.argmax(axis=1))
        assert_same(a.argmin(), j.argmin())
        assert_same(a.var(ddof=1), j.var(ddof=1))
        assert_same(a.std(axis=0), j.std(axis=0))
        assert_same(a.cumsum(axis=1), j.cumsum(axis=1))
        assert_same(a.sum(dtype=np.float16), j.sum(dtype=np.float16))


def test_x64_reductions() -> None:
    with modes(x64=True):
        for dt in (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.float32, np.float64):
            x = sample(np.dtype(dt), (3, 4), seed=17)
            for name in ("sum", "prod", "mean", "var", "argmax", "cumsum", "max"):
                check_or_raises(lambda v, n=name: getattr(fnp, n)(v, axis=0), lambda v, n=name: getattr(jnp, n)(v, axis=0), x)


@st.composite
def array_and_axes(draw: st.DrawFn) -> tuple[np.ndarray[Any, Any], Any, bool]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)))
    nd = len(shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.normal(size=shape).astype(np.float32)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    axes: Any
    if kind == "none" or nd == 0:
        axes = None
    elif kind == "int":
        axes = draw(st.integers(-nd, nd - 1))
    else:
        axes = tuple(draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)))
        axes = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    return x, axes, draw(st.booleans())


@settings(max_examples=80, deadline=None)
@given(array_and_axes(), st.sampled_from(["sum", "mean", "max", "min", "prod", "var", "any"]))
def test_reduction_property(case: tuple[np.ndarray[Any, Any], Any, bool], name: str) -> None:
    x, axes, keepdims = case
    with modes():
        got = getattr(fnp, name)(x, axis=axes, keepdims=keepdims)
        want = getattr(np, name)(x, axis=axes, keepdims=keepdims)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=2e-5, atol=2e-5)
        staged = fcore.make_jaxpr(lambda v: getattr(fnp, name)(v, axis=axes, keepdims=keepdims))(x)
        assert staged.out_avals[0].shape == np.shape(want)


@settings(max_examples=40, deadline=None)
@given(array_and_axes())
def test_cumsum_argmax_property(case: tuple[np.ndarray[Any, Any], Any, bool]) -> None:
    x, axes, _ = case
    axis = axes if isinstance(axes, int) else None
    with modes():
        np.testing.assert_allclose(np.asarray(fnp.cumsum(x, axis=axis)), np.cumsum(x, axis=axis), rtol=1e-5, atol=1e-5)
        if x.size:
            np.testing.assert_array_equal(np.asarray(fnp.argmax(x, axis=axis)), np.argmax(x, axis=axis))


def test_isclose_allclose_array_equal_average() -> None:
    with modes():
        a = np.array([1.0, np.nan, np.inf, 2.0, -np.inf], np.float32)
        b = np.array([1.0 + 1e-7, np.nan, np.inf, 2.1, np.inf], np.float32)
        for eq_nan in (False, True):
            check(lambda u, v, e=eq_nan: fnp.isclose(u, v, equal_nan=e), lambda u, v, e=eq_nan: jnp.isclose(u, v, equal_nan=e), a, b)
            check(lambda u, v, e=eq_nan: fnp.allclose(u, v, equal_nan=e), lambda u, v, e=eq_nan: jnp.allclose(u, v, equal_nan=e), a, a)
            check(lambda u, v, e=eq_nan: fnp.array_equal(u, v, equal_nan=e), lambda u, v, e=eq_nan: jnp.array_equal(u, v, equal_nan=e), a, a)
        check(fnp.isclose, jnp.isclose, np.arange(3), np.arange(3.0) + 1e-9)
        check(fnp.isclose, jnp.isclose, sample(np.dtype(np.complex64), (3,)), 0.5)
        check(lambda: fnp.array_equal(np.ones(2), np.ones(3)), lambda: jnp.array_equal(np.ones(2), np.ones(3)))
        x = sample(np.dtype(np.float32), (3, 4), seed=18)
        w = np.arange(1.0, 5.0, dtype=np.float32)
        check(lambda u: fnp.average(u), lambda u: jnp.average(u), x)
        check(lambda u: fnp.average(u, axis=1, weights=w), lambda u: jnp.average(u, axis=1, weights=w), x)
        check(lambda u: fnp.average(u, axis=1, weights=w, returned=True), lambda u: jnp.average(u, axis=1, weights=w, returned=True), x)
        check(lambda u: fnp.average(u, weights=np.ones((3, 4), np.int8)), lambda u: jnp.average(u, weights=np.ones((3, 4), np.int8)), np.arange(12).reshape(3, 4))

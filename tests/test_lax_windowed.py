"""``reduce_window`` and the windowed-reduction primitives, differentially against ``jax.lax``.

Operands hold small integers (distinct where a max/min gradient depends on which element wins),
so values compare exactly; gradients compare to a tight tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jax_lax

import fcore
import fcore.numpy as fnp
from fcore import lax as flax
from fcore.core import typecheck

jlax: Any = jax_lax  # called with NumPy operands, which jax's stubs do not list
Arr = np.ndarray[Any, Any]
DT = np.dtype[Any]
F32 = np.dtype(np.float32)


def rand(shape: tuple[int, ...], dtype: Any = F32, seed: int = 0) -> Arr:
    return np.random.default_rng(seed).integers(-5, 6, shape).astype(dtype)


def distinct(shape: tuple[int, ...], seed: int = 0) -> Arr:
    """Distinct values (no ties), so max/min gradients do not depend on tie-breaking."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape) - n // 2).astype(np.float32) / 4


def assert_same(got: object, want: object, exact: bool = True) -> None:
    assert isinstance(got, fcore.Array), type(got)
    assert isinstance(want, jax.Array), type(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.aval.weak_type
    g, w = np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64)
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6 * max(1.0, float(np.abs(w).max(initial=0))))


#: (id, operand shape, keyword arguments of reduce_window after the computation)
WINDOWS: list[tuple[str, tuple[int, ...], dict[str, Any]]] = [
    ("pool_valid", (2, 6, 6, 3), dict(window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1), padding="VALID")),
    ("pool_same", (2, 5, 7, 1), dict(window_dimensions=(1, 3, 3, 1), window_strides=(1, 2, 2, 1), padding="SAME")),
    ("same_lower", (7,), dict(window_dimensions=(4,), window_strides=(2,), padding="SAME_LOWER")),
    ("explicit_negative", (6, 5), dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=[(1, -1), (2, 0)])),
    ("overlapping_default_strides", (5, 4), dict(window_dimensions=(3, 2))),
    ("window_dilation", (9, 8), dict(window_dimensions=(2, 3), window_strides=(2, 1), window_dilation=(3, 2))),
    ("base_dilation", (4, 5), dict(window_dimensions=(2, 2), padding=[(1, 1), (0, 2)], base_dilation=(2, 3))),
    ("scalar", (), dict(window_dimensions=())),
    ("empty_output", (1, 3), dict(window_dimensions=(1, 4))),
]
MONOIDS: list[tuple[str, float]] = [("add", 0.0), ("max", -np.inf), ("min", np.inf)]


def _call(lib: Any, name: str, init: float | Arr, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
    return lambda x: lib.reduce_window(x, init, getattr(lib, name), **kwargs)


@pytest.mark.parametrize(("name", "init"), MONOIDS, ids=[m[0] for m in MONOIDS])
@pytest.mark.parametrize(("shape", "kwargs"), [w[1:] for w in WINDOWS], ids=[w[0] for w in WINDOWS])
def test_monoid_reduce_window_matches_jax(shape: tuple[int, ...], kwargs: dict[str, Any], name: str, init: float) -> None:
    x = rand(shape)
    want = _call(jlax, name, init, kwargs)(x)
    assert_same(_call(flax, name, init, kwargs)(x), want)
    assert_same(fcore.jit(_call(flax, name, init, kwargs))(x), want)
    closed = fcore.make_jaxpr(_call(flax, name, init, kwargs))(x)
    typecheck(closed)
    jclosed = jax.make_jaxpr(_call(jlax, name, init, kwargs))(x)
    assert [e.primitive.name for e in closed.eqns] == [e.primitive.name for e in jclosed.eqns]
    for e, je in zip(closed.eqns, jclosed.eqns):
        for p in ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation"):
            assert e.params[p] == je.params[p], p


@pytest.mark.parametrize(
    ("dtype", "name", "init"),
    [(np.int32, "add", 0), (np.int8, "max", -128), (np.uint8, "min", 255), (ml_dtypes.bfloat16, "add", 0.0),
     (np.float16, "max", -np.inf), (np.int32, "max", np.iinfo(np.int32).min)],
    ids=str,
)
def test_dtypes(dtype: Any, name: str, init: float) -> None:
    x = np.abs(rand((4, 6))).astype(dtype)
    kwargs: dict[str, Any] = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding="SAME")
    want = _call(jlax, name, np.asarray(init, dtype), kwargs)(x)
    assert_same(_call(flax, name, np.asarray(init, dtype), kwargs)(x), want)
    assert_same(fcore.jit(_call(flax, name, np.asarray(init, dtype), kwargs))(x), want)


GENERIC: list[tuple[str, Callable[[Any, Any], Any], float]] = [
    ("mul", lambda a, b: a * b, 1.0),
    ("add_nonidentity_init", lambda a, b: a + b, 1.5),
    ("max_with_finite_init", lambda a, b: jnp.maximum(a, b) if isinstance(a, jax.Array) else fnp.maximum(a, b), 0.0),
]


@pytest.mark.parametrize(("name", "fn", "init"), GENERIC, ids=[g[0] for g in GENERIC])
@pytest.mark.parametrize(("shape", "kwargs"), [w[1:] for w in WINDOWS[:6]], ids=[w[0] for w in WINDOWS[:6]])
def test_generic_reduce_window_matches_jax(
    shape: tuple[int, ...], kwargs: dict[str, Any], name: str, fn: Callable[[Any, Any], Any], init: float
) -> None:
    x = rand(shape) / 4
    want = jlax.reduce_window(x, init, fn, **kwargs)
    got = flax.reduce_window(x, init, fn, **kwargs)
    assert_same(got, want)
    assert_same(fcore.jit(lambda v: flax.reduce_window(v, init, fn, **kwargs))(x), want)
    closed = fcore.make_jaxpr(lambda v: flax.reduce_window(v, init, fn, **kwargs))(x)
    typecheck(closed)
    assert "reduce_window[" in str(closed)
    t = rand(shape, seed=3)
    jt = jax.jvp(lambda v: jlax.reduce_window(v, init, fn, **kwargs), (x,), (t,))[1]
    assert_same(fcore.jvp(lambda v: flax.reduce_window(v, init, fn, **kwargs), (x,), (t,))[1], jt, exact=False)
    xs = np.stack([x, -x, 2 * x])
    jv = jax.vmap(lambda v: jlax.reduce_window(v, init, fn, **kwargs))(xs)
    assert_same(fcore.vmap(lambda v: flax.reduce_window(v, init, fn, **kwargs))(xs), jv)


def test_variadic_reduce_window_argmax_pairs() -> None:
    """Two operands reduced together: the max of each window and the index where it sits."""
    x = distinct((6, 5))
    idx = np.arange(30, dtype=np.int32).reshape(6, 5)

    def reducer(lib: Any) -> Callable[[Any, Any], Any]:
        def fn(a: Any, b: Any) -> Any:
            pick = lib.ge(a[0], b[0])
            return (lib.select(pick, a[0], b[0]), lib.select(pick, a[1], b[1]))

        return fn

    kwargs: dict[str, Any] = dict(window_dimensions=(2, 2), window_strides=(2, 1), padding="SAME")
    inits = (np.float32(-np.inf), np.int32(-1))
    want = jlax.reduce_window((x, idx), inits, reducer(jlax), **kwargs)
    got = flax.reduce_window((x, idx), inits, reducer(flax), **kwargs)
    jitted = fcore.jit(lambda a, b: flax.reduce_window((a, b), inits, reducer(flax), **kwargs))(x, idx)
    for g, j, w in zip(got, jitted, want):
        assert_same(g, w)
        assert_same(j, w)


GRAD_WINDOWS = [w for w in WINDOWS if w[0] not in ("scalar", "empty_output")]


def _loss(lib: Any, numpy: Any, name: str, init: float, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
    def loss(x: Any) -> Any:
        out = _call(lib, name, init, kwargs)(x)
        out = numpy.where(numpy.isinf(out), 0.0, out)  # windows of holes only hold the init value
        return numpy.sum(numpy.sin(out) * numpy.arange(out.size, dtype=np.float32).reshape(out.shape))

    return loss


@pytest.mark.parametrize(("name", "init"), MONOIDS, ids=[m[0] for m in MONOIDS])
@pytest.mark.parametrize(("shape", "kwargs"), [w[1:] for w in GRAD_WINDOWS], ids=[w[0] for w in GRAD_WINDOWS])
def test_grad_matches_jax(shape: tuple[int, ...], kwargs: dict[str, Any], name: str, init: float) -> None:
    if name != "add" and kwargs.get("padding") == [(1, -1), (2, 0)]:
        return  # jax.grad itself fails on max/min pooling with negative padding
    if name != "add" and "window_dilation" in kwargs:
        with pytest.raises(NotImplementedError, match="window dilation"):
            fcore.grad(_loss(flax, fnp, name, init, kwargs))(distinct(shape))
        return
    x = distinct(shape)
    want = jax.grad(_loss(jlax, jnp, name, init, kwargs))(x)
    assert_same(fcore.grad(_loss(flax, fnp, name, init, kwargs))(x), want, exact=False)
    assert_same(fcore.jit(fcore.grad(_loss(flax, fnp, name, init, kwargs)))(x), want, exact=False)


@pytest.mark.parametrize(("name", "init"), MONOIDS, ids=[m[0] for m in MONOIDS])
def test_second_order_and_vmap_of_grad(name: str, init: float) -> None:
    kwargs: dict[str, Any] = dict(window_dimensions=(1, 2, 2), window_strides=(1, 2, 2), padding="SAME")
    xs = distinct((3, 2, 5, 5))
    want = jax.vmap(jax.grad(_loss(jlax, jnp, name, init, kwargs)))(xs)
    assert_same(fcore.vmap(fcore.grad(_loss(flax, fnp, name, init, kwargs)))(xs), want, exact=False)
    assert_same(fcore.jit(fcore.vmap(fcore.grad(_loss(flax, fnp, name, init, kwargs))))(xs), want, exact=False)
    x, t = xs[0], distinct((2, 5, 5), seed=4)
    jh = jax.jvp(jax.grad(_loss(jlax, jnp, name, init, kwargs)), (x,), (t,))[1]
    fh = fcore.jvp(fcore.grad(_loss(flax, fnp, name, init, kwargs)), (x,), (t,))[1]
    assert_same(fh, jh, exact=False)


@pytest.mark.parametrize(("name", "init"), MONOIDS, ids=[m[0] for m in MONOIDS])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_jax(name: str, init: float, axis: int) -> None:
    kwargs: dict[str, Any] = dict(window_dimensions=(2, 3), window_strides=(2, 1), padding=[(1, 0), (0, 1)])
    x = rand((3, 4, 5) if axis == 0 else (4, 3, 5) if axis == 1 else (4, 5, 3))
    want = jax.vmap(_call(jlax, name, init, kwargs), in_axes=axis)(x)
    assert_same(fcore.vmap(_call(flax, name, init, kwargs), in_axes=axis)(x), want)


def test_max_pool_and_avg_pool_differentiate() -> None:
    """Pooling written with reduce_window, as a CNN uses it, under jit(grad)."""

    def pools(lib: Any, numpy: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            m = lib.reduce_window(x, -numpy.inf, lib.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            a = lib.reduce_window(m, 0.0, lib.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4
            return numpy.sum(a * a)

        return f

    x = distinct((2, 8, 8, 3))
    want = jax.grad(pools(jlax, jnp))(x)
    assert_same(fcore.jit(fcore.grad(pools(flax, fnp)))(x), want, exact=False)


def _cropping_oracle(name: str, init: float, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
    """JAX's result for negative padding, computed with the cropping done by ``lax.pad`` first:
    ``jax.lax.reduce_window`` itself aborts the process inside XLA's algebraic simplifier on some
    of these (e.g. a one-element window over ``f32[2]`` with padding ``(-1, 0)``)."""
    (lo, hi), (base,) = kwargs["padding"][0], kwargs["base_dilation"]
    window = dict(window_dimensions=kwargs["window_dimensions"], window_strides=kwargs["window_strides"])
    return lambda x: jlax.reduce_window(jlax.pad(x, jnp.float32(init), [(lo, hi, base - 1)]), init, getattr(jlax, name), **window)


def _jax_loss(call: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def loss(x: Any) -> Any:
        out = call(x)
        out = jnp.where(jnp.isinf(out), 0.0, out)
        return jnp.sum(jnp.sin(out) * jnp.arange(out.size, dtype=np.float32).reshape(out.shape))

    return loss


@settings(max_examples=15, deadline=None)
@given(
    size=st.integers(1, 7), window=st.integers(1, 3), stride=st.integers(1, 3), lo=st.integers(-1, 2),
    hi=st.integers(-1, 2), base=st.integers(1, 2), monoid=st.sampled_from(MONOIDS),
)
def test_random_1d_windows(size: int, window: int, stride: int, lo: int, hi: int, base: int, monoid: tuple[str, float]) -> None:
    name, init = monoid
    kwargs: dict[str, Any] = dict(
        window_dimensions=(window,), window_strides=(stride,), padding=[(lo, hi)], base_dilation=(base,)
    )
    x = distinct((size,))
    oracle = _call(jlax, name, init, kwargs) if min(lo, hi) >= 0 else _cropping_oracle(name, init, kwargs)
    want = oracle(x)
    assert_same(_call(flax, name, init, kwargs)(x), want)
    assert_same(fcore.jit(_call(flax, name, init, kwargs))(x), want)
    if want.size:
        jg = jax.grad(_jax_loss(oracle))(x)
        assert_same(fcore.grad(_loss(flax, fnp, name, init, kwargs))(x), jg, exact=False)
        assert_same(fcore.jit(fcore.grad(_loss(flax, fnp, name, init, kwargs)))(x), jg, exact=False)


def test_negative_padding_that_crashes_xla_simplifier() -> None:
    """Regression: this program, lowered as one ``reduce_window`` with negative padding, aborted the
    process in XLA's algebraic simplifier (a hypothesis example found it in CI)."""
    kwargs: dict[str, Any] = dict(window_dimensions=(1,), window_strides=(1,), padding=[(-1, 0)], base_dilation=(1,))
    x = distinct((2,))
    want = _cropping_oracle("add", 0.0, kwargs)(x)
    assert_same(fcore.jit(_call(flax, "add", 0.0, kwargs))(x), want)
    assert_same(_call(flax, "add", 0.0, kwargs)(x), want)


ERRORS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    ("rank", dict(window_dimensions=(2,)), TypeError, "wrong number of window_dimensions"),
    ("strides_rank", dict(window_dimensions=(2, 2), window_strides=(1,)), TypeError, "inconsistent window_strides"),
    ("zero_window", dict(window_dimensions=(0, 2)), TypeError, "strictly positive"),
    ("zero_stride", dict(window_dimensions=(1, 2), window_strides=(0, 1)), TypeError, "strictly positive"),
    ("bad_padding_string", dict(window_dimensions=(1, 2), padding="FULL"), RuntimeError, "Unrecognized padding"),
    ("dilation_rank", dict(window_dimensions=(1, 2), base_dilation=(1,)), TypeError, "inconsistent base_dilation"),
]


@pytest.mark.parametrize(("kwargs", "exc", "match"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_jax(kwargs: dict[str, Any], exc: type[Exception], match: str) -> None:
    x = rand((4, 5))
    with pytest.raises(exc, match=match):
        jlax.reduce_window(x, 0.0, jlax.add, **kwargs)
    with pytest.raises(exc, match=match):
        flax.reduce_window(x, 0.0, flax.add, **kwargs)
    with pytest.raises(exc, match=match):
        fcore.jit(lambda v: flax.reduce_window(v, 0.0, flax.add, **kwargs))(x)


def test_structure_and_dtype_errors() -> None:
    x = rand((4, 5))
    with pytest.raises(ValueError, match="same tree structure"):
        flax.reduce_window((x, x), (0.0,), flax.add, (2, 2))
    with pytest.raises(TypeError, match="number dtype"):
        flax.reduce_window(x > 0, False, flax.add, (2, 2))
    with pytest.raises(TypeError, match="inconsistent dtypes"):
        flax.reduce_window(x, np.int32(1), lambda a, b: a, (2, 2))


@pytest.mark.parametrize(("name", "init"), MONOIDS[1:], ids=[m[0] for m in MONOIDS[1:]])
def test_pooling_grad_with_negative_padding(name: str, init: float) -> None:
    """jax.grad fails here (a slice out of bounds); fcore's eager and compiled gradients agree and
    match finite differences (the cropped elements get zero)."""
    from fcore.test_util import check_grads

    kwargs: dict[str, Any] = dict(window_dimensions=(2, 2), window_strides=(1, 2), padding=[(1, -1), (-1, 2)])
    x = distinct((4, 5))
    loss = _loss(flax, fnp, name, init, kwargs)
    np.testing.assert_allclose(np.asarray(fcore.grad(loss)(x)), np.asarray(fcore.jit(fcore.grad(loss))(x)), rtol=1e-6)
    check_grads(loss, (x,), order=1, modes=("rev",))

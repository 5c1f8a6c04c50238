"""Transformation rules of the reductions (jvp, transpose, batching, lowering), checked
against JAX, finite differences, the adjoint identity, and jit-vs-eager."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import fcore
import fcore.numpy  # noqa: F401  (array operators)
from fcore import lax
from fcore.config import enable_x64
from fcore.core import eval_jaxpr
from fcore.transforms import batch_jaxpr, jvp_jaxpr, transpose_jaxpr

NpArray = np.ndarray[Any, Any]
# A case applies the same primitive through either ``fcore.lax`` or ``jax.lax`` (same names
# and signatures): ``fn(lax_module, x)``.
Fn = Callable[[Any, Any], Any]

RNG = np.random.default_rng(0)
SHAPE = (2, 3, 4)
X = RNG.standard_normal(SHAPE).astype(np.float32)
T = RNG.standard_normal(SHAPE).astype(np.float32)

DIFFERENTIABLE: dict[str, Fn] = {
    "reduce_sum_0": lambda L, x: L.reduce_sum(x, (0,)),
    "reduce_sum_12": lambda L, x: L.reduce_sum(x, (1, 2)),
    "reduce_sum_all": lambda L, x: L.reduce_sum(x, (0, 1, 2)),
    "reduce_sum_none": lambda L, x: L.reduce_sum(x, ()),
    "reduce_prod_1": lambda L, x: L.reduce_prod(x, (1,)),
    "reduce_prod_02": lambda L, x: L.reduce_prod(x, (0, 2)),
    "reduce_prod_all": lambda L, x: L.reduce_prod(x, (0, 1, 2)),
    "reduce_max_2": lambda L, x: L.reduce_max(x, (2,)),
    "reduce_max_01": lambda L, x: L.reduce_max(x, (0, 1)),
    "reduce_min_1": lambda L, x: L.reduce_min(x, (1,)),
    "reduce_min_all": lambda L, x: L.reduce_min(x, (0, 1, 2)),
    "cumsum_1": lambda L, x: L.cumsum(x, axis=1),
    "cumsum_2_rev": lambda L, x: L.cumsum(x, axis=2, reverse=True),
    "cumprod_2": lambda L, x: L.cumprod(x, axis=2),
    "cumprod_0_rev": lambda L, x: L.cumprod(x, axis=0, reverse=True),
    "cummax_2": lambda L, x: L.cummax(x, axis=2),
    "cummax_1_rev": lambda L, x: L.cummax(x, axis=1, reverse=True),
    "cummin_2": lambda L, x: L.cummin(x, axis=2),
    "cummin_0_rev": lambda L, x: L.cummin(x, axis=0, reverse=True),
    "cumlogsumexp_2": lambda L, x: L.cumlogsumexp(x, axis=2),
    "cumlogsumexp_1_rev": lambda L, x: L.cumlogsumexp(x, axis=1, reverse=True),
}
LINEAR = ["reduce_sum_0", "reduce_sum_12", "reduce_sum_all", "reduce_sum_none", "cumsum_1", "cumsum_2_rev"]
NONDIFF: dict[str, Fn] = {
    "argmax_1": lambda L, x: L.argmax(x, 1, np.int32),
    "argmin_2": lambda L, x: L.argmin(x, 2, np.int32),
    "reduce_and_1": lambda L, x: L.reduce_and(L.gt(x, 0.0), (1,)),
    "reduce_or_02": lambda L, x: L.reduce_or(L.gt(x, 0.0), (0, 2)),
    "reduce_xor_2": lambda L, x: L.reduce_xor(L.gt(x, 0.0), (2,)),
}
ALL_FNS: dict[str, Fn] = {**DIFFERENTIABLE, **NONDIFF}


def close(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.dtype in (ml_dtypes.bfloat16,) or b.dtype in (ml_dtypes.bfloat16,):
        a, b = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def jref(f: Callable[..., Any], *args: Any) -> Any:
    """A JAX reference value, jitted (JAX's op-by-op dispatch compiles every op: slow)."""
    return jax.jit(f)(*args)


def jjvp(f: Callable[[Any], Any], x: Any, t: Any) -> Any:
    return jref(lambda a, b: jax.jvp(f, (a,), (b,)), x, t)


def total(L: Any, y: Any) -> Any:
    """Sum of all elements (via reduce_sum, in fcore and in JAX alike)."""
    return L.reduce_sum(y, tuple(range(np.ndim(y))))


# -- jvp / grad against JAX --------------------------------------------------------------
@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_jvp_matches_jax(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    out, tan = fcore.jvp(lambda x: fn(lax, x), (X,), (T,))
    jout, jtan = jjvp(lambda x: fn(jlax, x), X, T)
    close(out, jout)
    close(tan, jtan, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_grad_matches_jax(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    w = RNG.standard_normal(np.shape(fn(jlax, X))).astype(np.float32)
    g = fcore.grad(lambda x: total(lax, lax.mul(lax.sin(fn(lax, x)), w)))(X)
    jg = jref(jax.grad(lambda x: total(jlax, jlax.mul(jlax.sin(fn(jlax, x)), w))), X)
    close(g, jg, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_jvp_matches_finite_differences_f64(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    x, t = X.astype(np.float64), T.astype(np.float64)
    eps = 1e-6
    with enable_x64():
        _, tan = fcore.jvp(lambda v: fn(lax, v), (x,), (t,))
        plus, minus = np.asarray(fn(lax, x + eps * t)), np.asarray(fn(lax, x - eps * t))
        assert np.asarray(tan).dtype == np.float64
    close(tan, (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", LINEAR)
def test_transpose_is_adjoint(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    x = X.astype(np.float64)
    with enable_x64():
        y, f_vjp = fcore.vjp(lambda v: fn(lax, v), x)
        ybar = RNG.standard_normal(np.shape(y))
        (xbar,) = f_vjp(ybar)
        lhs = float(np.sum(ybar * np.asarray(y)))
        rhs = float(np.sum(np.asarray(xbar) * x))
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs))


def test_reduce_max_ties_average_like_jax() -> None:
    x = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5]], np.float32)
    fns: list[Fn] = [lambda L, v: L.reduce_max(v, (1,)), lambda L, v: L.reduce_min(v, (0, 1))]
    for f in fns:
        g = fcore.grad(lambda v: total(lax, f(lax, v)))(x)
        jg = jref(jax.grad(lambda v: total(jlax, f(jlax, v))), x)
        close(g, jg)
    g = fcore.grad(lambda v: total(lax, lax.reduce_max(v, (1,))))(x)
    close(g, [[0, 0.5, 0.5, 0], [0.25, 0.25, 0.25, 0.25]])


def test_cummax_ties_like_jax() -> None:
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 5.0, 5.0], np.float32)
    fns: list[Fn] = [lambda L, v: L.cummax(v, 0), lambda L, v: L.cummin(L.neg(v), 0, reverse=True)]
    for f in fns:
        t = np.arange(1.0, 8.0, dtype=np.float32)
        _, tan = fcore.jvp(lambda v: f(lax, v), (x,), (t,))
        _, jtan = jjvp(lambda v: f(jlax, v), x, t)
        close(tan, jtan)


@pytest.mark.parametrize("zeros", [[1], [0, 3]])
def test_reduce_prod_grad_with_zeros(zeros: list[int]) -> None:
    """Exact through zeros: no division by the operand (one zero: only its own gradient is
    nonzero, the product of the others; two zeros: the gradient vanishes)."""
    x = np.array([2.0, -1.5, 3.0, 0.5, 4.0], np.float32)
    x[zeros] = 0.0
    g = fcore.grad(lambda v: lax.reduce_prod(v, (0,)))(x)
    jg = jref(jax.grad(lambda v: jlax.reduce_prod(v, (0,))), x)
    close(g, jg)
    others = [np.prod(np.delete(x, i)) for i in range(len(x))]
    close(g, others)


def test_cumprod_grad_with_zeros() -> None:
    x = np.array([[2.0, 0.0, 3.0, -1.0, 0.5], [0.0, 0.0, 1.0, 2.0, 3.0]], np.float32)
    g = fcore.grad(lambda v: total(lax, lax.cumprod(v, 1)))(x)
    jg = jref(jax.grad(lambda v: total(jlax, jlax.cumprod(v, 1))), x)
    close(g, jg)


@pytest.mark.parametrize("name", list(NONDIFF))
def test_nondifferentiable_have_zero_tangents(name: str) -> None:
    fn = NONDIFF[name]
    out, tan = fcore.jvp(lambda x: lax.convert_element_type(fn(lax, x), np.float32), (X,), (T,))
    close(out, np.asarray(jref(lambda v: fn(jlax, v), X)).astype(np.float32))
    close(tan, np.zeros(np.shape(out), np.float32))


def test_second_order() -> None:
    f = DIFFERENTIABLE["reduce_prod_02"]
    h = fcore.grad(lambda x: total(lax, fcore.grad(lambda v: total(lax, lax.sin(f(lax, v))))(x)))(X)
    jh = jref(jax.grad(lambda x: total(jlax, jax.grad(lambda v: total(jlax, jlax.sin(f(jlax, v))))(x))), X)
    close(h, jh, rtol=1e-4, atol=1e-4)


# -- vmap against JAX --------------------------------------------------------------------
IN_AXES: list[tuple[int | None, int | None]] = [(0, None), (1, None), (2, 2), (None, 0), (1, 1)]


def batched_input(axis: int | None, size: int = 5) -> NpArray:
    if axis is None:
        return X
    shape = list(SHAPE)
    shape.insert(axis, size)
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("in_axes", IN_AXES)
@pytest.mark.parametrize("name", list(ALL_FNS))
def test_vmap_matches_jax(name: str, in_axes: tuple[int | None, int | None]) -> None:
    fn = ALL_FNS[name]
    x, w = batched_input(in_axes[0]), batched_input(in_axes[1])
    out = fcore.vmap(lambda a, b: fn(lax, lax.add(a, b)), in_axes=in_axes)(x, w)
    jout = jref(jax.vmap(lambda a, b: fn(jlax, jlax.add(a, b)), in_axes=in_axes), x, w)
    close(out, jout)


@pytest.mark.parametrize("axis", [0, 1, 3])
@pytest.mark.parametrize("name", ["reduce_sum_12", "reduce_max_01", "cumsum_2_rev", "cummax_2", "argmax_1"])
def test_vmap_at_every_position(name: str, axis: int) -> None:
    """The batch axis before, between and after the reduced/scanned axes."""
    fn = ALL_FNS[name]
    x = batched_input(axis)
    close(fcore.vmap(lambda a: fn(lax, a), in_axes=axis)(x), jref(jax.vmap(lambda a: fn(jlax, a), in_axes=axis), x))
    close(fcore.vmap(lambda a: fn(lax, a), in_axes=axis, out_axes=1)(x),
          jref(jax.vmap(lambda a: fn(jlax, a), in_axes=axis, out_axes=1), x))


@pytest.mark.parametrize("name", ["reduce_prod_02", "reduce_max_2", "cumprod_2", "cumlogsumexp_1_rev", "cummin_2"])
def test_vmap_of_grad_matches_jax(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    x = batched_input(1)
    g = fcore.vmap(fcore.grad(lambda v: total(lax, lax.sin(fn(lax, v)))), in_axes=1)(x)
    jg = jref(jax.vmap(jax.grad(lambda v: total(jlax, jlax.sin(fn(jlax, v)))), in_axes=1), x)
    close(g, jg, rtol=1e-4, atol=1e-5)


# -- lowering: jit against eager ------------------------------------------------------------
def sample(dtype: Any, shape: tuple[int, ...] = SHAPE) -> NpArray:
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


BF16 = np.dtype(ml_dtypes.bfloat16)
LOWERED: list[tuple[str, Fn, list[Any]]] = [
    ("reduce_sum", lambda L, x: L.reduce_sum(x, (0, 2)), [np.float32, np.int32, BF16]),
    ("reduce_sum_none", lambda L, x: L.reduce_sum(x, ()), [np.float32]),
    ("reduce_prod", lambda L, x: L.reduce_prod(x, (1,)), [np.float32, np.int32, BF16]),
    ("reduce_max", lambda L, x: L.reduce_max(x, (1, 2)), [np.float32, np.int32, np.bool_, BF16]),
    ("reduce_min", lambda L, x: L.reduce_min(x, (0,)), [np.float32, np.int32, np.bool_, BF16]),
    ("reduce_and", lambda L, x: L.reduce_and(x, (2,)), [np.int32, np.bool_]),
    ("reduce_or", lambda L, x: L.reduce_or(x, (0, 1)), [np.int32, np.bool_]),
    ("reduce_xor", lambda L, x: L.reduce_xor(x, (1,)), [np.int32, np.bool_]),
    ("argmax", lambda L, x: L.argmax(x, 2, np.int32), [np.float32, np.int32, np.bool_, BF16]),
    ("argmin", lambda L, x: L.argmin(x, 0, np.int32), [np.float32, np.int32, np.bool_, BF16]),
    ("argmax_i8", lambda L, x: L.argmax(x, 1, np.int8), [np.float32]),
    ("cumsum", lambda L, x: L.cumsum(x, 2), [np.float32, np.int32, BF16]),
    ("cumsum_rev", lambda L, x: L.cumsum(x, 0, reverse=True), [np.float32, np.int32]),
    ("cumprod", lambda L, x: L.cumprod(x, 1), [np.float32, np.int32, BF16]),
    ("cummax", lambda L, x: L.cummax(x, 2), [np.float32, np.int32, BF16]),
    ("cummin_rev", lambda L, x: L.cummin(x, 1, reverse=True), [np.float32, np.int32, BF16]),
    ("cumlogsumexp", lambda L, x: L.cumlogsumexp(x, 2), [np.float32, BF16]),
    ("cumlogsumexp_rev", lambda L, x: L.cumlogsumexp(x, 0, reverse=True), [np.float32]),
]
JIT_CASES = [(name, fn, dt) for name, fn, dts in LOWERED for dt in dts]


@pytest.mark.parametrize(("name", "fn", "dtype"), JIT_CASES, ids=[f"{n}-{np.dtype(d).name}" for n, _, d in JIT_CASES])
def test_jit_matches_eager(name: str, fn: Fn, dtype: Any) -> None:
    x = sample(dtype)
    out = fcore.jit(lambda v: fn(lax, v))(x)
    eager = fn(lax, x)
    assert np.asarray(out).dtype == np.asarray(eager).dtype
    tol = 2e-2 if dtype == BF16 else 1e-6
    close(out, eager, rtol=tol, atol=tol)
    close(out, jref(lambda v: fn(jlax, v), x), rtol=tol, atol=tol)


def test_jit_complex_max_min() -> None:
    x = (sample(np.float32) + 1j * sample(np.float32)).astype(np.complex64)
    x[0, 0, :2] = [1 + 2j, 1 + 3j]  # equal real parts: the imaginary parts decide
    fns: list[Callable[[Any], Any]] = [
        lambda v: lax.reduce_max(v, (2,)), lambda v: lax.reduce_min(v, (0, 1)), lambda v: lax.cummax(v, 2),
        lambda v: lax.cummin(v, 1), lambda v: lax.reduce_sum(v, (0,)), lambda v: lax.cumprod(v, 2),
    ]
    for fn in fns:
        close(fcore.jit(fn)(x), fn(x), rtol=1e-6)


def test_jit_float_semantics() -> None:
    """NaN propagation, the sign of zero in max/min, and first-NaN argmax, as eager and JAX."""
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-0.0, 0.0, -1.0, -0.0], [2.0, 5.0, 5.0, -np.inf]], np.float32)
    fns: list[Fn] = [
        lambda L, v: L.argmax(v, 1, np.int32), lambda L, v: L.argmin(v, 1, np.int32),
        lambda L, v: L.reduce_max(v, (1,)), lambda L, v: L.reduce_min(v, (1,)),
        lambda L, v: L.cummax(v, 1), lambda L, v: L.cummin(v, 1),
    ]
    for fn in fns:
        out = np.asarray(fcore.jit(lambda v: fn(lax, v))(x))
        np.testing.assert_array_equal(out, np.asarray(fn(lax, x)))
        np.testing.assert_array_equal(out, np.asarray(jref(lambda v: fn(jlax, v), x)))
        np.testing.assert_array_equal(np.signbit(out), np.signbit(np.asarray(fn(lax, x))))


def test_jit_empty_axis() -> None:
    x = np.zeros((3, 0), np.float32)
    fns: list[Callable[[Any], Any]] = [
        lambda v: lax.reduce_sum(v, (1,)), lambda v: lax.reduce_max(v, (1,)), lambda v: lax.cumsum(v, 1),
        lambda v: lax.reduce_prod(v, (1,)),
    ]
    for fn in fns:
        close(fcore.jit(fn)(x), fn(x))


@pytest.mark.parametrize("name", ["reduce_prod_02", "reduce_max_01", "cumsum_2_rev", "cumprod_2", "cummax_1_rev",
                                  "cumlogsumexp_2"])
def test_jit_of_grad_and_jvp(name: str) -> None:
    fn = DIFFERENTIABLE[name]

    def loss(v: Any) -> Any:
        return total(lax, lax.sin(fn(lax, v)))

    close(fcore.jit(fcore.grad(loss))(X), fcore.grad(loss)(X), rtol=1e-5)
    def jvp(x: Any, t: Any) -> Any:
        return fcore.jvp(lambda v: fn(lax, v), (x,), (t,))

    close(fcore.jit(jvp)(X, T)[1], jvp(X, T)[1], rtol=1e-5)


# -- the pure jaxpr passes use the same rules ----------------------------------------------
@pytest.mark.parametrize("name", ["reduce_sum_12", "reduce_max_2", "reduce_prod_1", "cumsum_1", "cummax_2"])
def test_jaxpr_passes(name: str) -> None:
    fn = DIFFERENTIABLE[name]
    closed = fcore.make_jaxpr(lambda v: fn(lax, v))(X)
    jclosed, _ = jvp_jaxpr(closed, [True], True)
    out, tan = eval_jaxpr(jclosed.jaxpr, jclosed.consts, X, T)
    _, ftan = fcore.jvp(lambda v: fn(lax, v), (X,), (T,))
    close(tan, ftan)
    bclosed, dims = batch_jaxpr(closed, 5, [1])
    xb = batched_input(1)
    (bout,) = eval_jaxpr(bclosed.jaxpr, bclosed.consts, xb)
    close(np.moveaxis(np.asarray(bout), dims[0], 0) if dims[0] is not None else bout,
          jref(jax.vmap(lambda a: fn(jlax, a), in_axes=1), xb))
    if name in LINEAR:
        tclosed = transpose_jaxpr(closed, [True])
        ybar = np.asarray(fn(lax, T))
        (xbar,) = eval_jaxpr(tclosed.jaxpr, tclosed.consts, ybar)
        (jxbar,) = jref(jax.linear_transpose(lambda a: fn(jlax, a), X), ybar)
        close(xbar, jxbar)


# -- random shapes and axes --------------------------------------------------------------
@st.composite
def shapes_and_axes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), max_size=len(shape)))))
    return shape, axes


REDUCERS = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]


@settings(max_examples=15, deadline=None)
@given(shapes_and_axes(), st.sampled_from(REDUCERS), st.integers(0, 2**31 - 1))
def test_random_reductions(sa: tuple[tuple[int, ...], tuple[int, ...]], op: str, seed: int) -> None:
    shape, axes = sa
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, shape).astype(np.float32) * rng.choice([-1, 1], shape).astype(np.float32)
    t = rng.standard_normal(shape).astype(np.float32)
    def f(v: Any) -> Any:
        return getattr(lax, op)(v, axes)

    def jf(v: Any) -> Any:
        return getattr(jlax, op)(v, axes)

    out, tan = fcore.jvp(f, (x,), (t,))
    jout, jtan = jjvp(jf, x, t)
    close(out, jout)
    close(tan, jtan, rtol=1e-4)
    close(fcore.jit(f)(x), out, rtol=1e-6)
    bdim = int(rng.integers(0, len(shape) + 1))
    xb = np.stack([x, 2 * x], axis=bdim)
    close(fcore.vmap(f, in_axes=bdim)(xb), jref(jax.vmap(jf, in_axes=bdim), xb))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.sampled_from(["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_random_cumulative(n: int, m: int, op: str, reverse: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, (m, n)).astype(np.float32) * rng.choice([-1, 1], (m, n)).astype(np.float32)
    t = rng.standard_normal((m, n)).astype(np.float32)
    def f(v: Any) -> Any:
        return getattr(lax, op)(v, 1, reverse)

    def jf(v: Any) -> Any:
        return getattr(jlax, op)(v, 1, reverse)

    _, tan = fcore.jvp(f, (x,), (t,))
    _, jtan = jjvp(jf, x, t)
    close(tan, jtan, rtol=1e-4)
    close(fcore.jit(f)(x), f(x), rtol=1e-5)

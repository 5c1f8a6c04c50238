"""Reductions, arg-reductions and cumulative reductions of ``fcore.lax``, differentially against ``jax.lax``.

Data are small dyadic numbers, so sums and products are exact in every float dtype and results
can be compared exactly (NaN-aware, including the sign of zero where it is the point).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import fcore
from fcore import lax as flax
from fcore.core import typecheck
from fcore.lax import reductions

Case = Callable[..., Any]
DT = np.dtype[Any]

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
C64 = np.dtype(np.complex64)
DTYPES = (F32, I32, BOOL, BF16, F16)
NUMERIC = (F32, I32, BF16, F16, I8, U8, C64)


def rand(shape: Sequence[int], dtype: DT, seed: int = 0) -> np.ndarray[Any, Any]:
    """Values whose sums and products are exact in ``dtype``: small ints or ±{0.5, 1, 2}."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype in (I32, I8, np.dtype(np.int16)):
        return rng.integers(-3, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 4, shape).astype(dtype)
    vals = rng.choice(np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]), shape)
    if dtype == C64:
        return (vals + 1j * rng.choice(np.array([-1.0, 0.0, 1.0]), shape)).astype(dtype)
    return vals.astype(dtype)


def assert_same(got: object, want: object, *, signed_zeros: bool = False) -> None:
    assert isinstance(got, fcore.Array), type(got)
    assert isinstance(want, jax.Array), type(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.aval.weak_type, (got.weak_type, want.aval.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype in (BF16, F16):
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)
    if signed_zeros and np.issubdtype(g.dtype, np.floating):
        zero = w == 0
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))


def check(case: Case, *args: Any, signed_zeros: bool = False) -> None:
    """Eager results equal JAX's; the staged jaxpr typechecks and has JAX's output avals."""
    assert_same(case(flax, *args), case(jlax, *args), signed_zeros=signed_zeros)
    closed = fcore.make_jaxpr(lambda *a: case(flax, *a))(*args)
    typecheck(closed)
    jclosed = jax.make_jaxpr(lambda *a: case(jlax, *a))(*args)
    assert [(a.shape, a.dtype, a.weak_type) for a in closed.out_avals] == [
        (a.shape, a.dtype, a.weak_type) for a in jclosed.out_avals
    ]


SHAPE_AXES: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((2, 3), (0,)),
    ((2, 3), (1,)),
    ((2, 3), (0, 1)),
    ((2, 3, 4), (2, 0)),
    ((2, 3), ()),
    ((), ()),
    ((0, 3), (0,)),
    ((0, 3), (1,)),
    ((4, 0, 2), (0, 2)),
]
ARITH = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min")
LOGICAL = ("reduce_and", "reduce_or", "reduce_xor")


_REDUCED_DTYPES = NUMERIC + (BOOL,)


# Each (reduction, shape) with three dtypes, rotating: per reduction every dtype meets several
# shapes (accepted or rejected), without the full 7 x 9 x 8 product.
@pytest.mark.parametrize(
    ("op", "shape", "axes", "dtype"),
    [(op, shape, axes, _REDUCED_DTYPES[(i + k + 3 * j) % len(_REDUCED_DTYPES)])
     for k, op in enumerate(ARITH + LOGICAL) for i, (shape, axes) in enumerate(SHAPE_AXES) for j in range(3)],
    ids=str,
)
def test_reductions_match_jax(op: str, shape: tuple[int, ...], axes: tuple[int, ...], dtype: DT) -> None:
    x = rand(shape, dtype)
    accepted = {
        "reduce_sum": dtype != BOOL,
        "reduce_prod": dtype != BOOL,
        "reduce_and": dtype in (BOOL, I32, I8, U8),
        "reduce_or": dtype in (BOOL, I32, I8, U8),
        "reduce_xor": dtype in (BOOL, I32, I8, U8),
    }.get(op, True)
    case: Case = lambda L, x: getattr(L, op)(x, axes)  # noqa: E731
    if accepted:
        check(case, x)
    else:
        with pytest.raises(TypeError, match=op):
            case(flax, x)
        with pytest.raises(TypeError):
            case(jlax, x)


def test_integer_reductions_wrap() -> None:
    x = np.array([100, 100, 100], np.int8)
    check(lambda L, x: L.reduce_sum(x, (0,)), x)
    check(lambda L, x: L.cumsum(x, 0), x)
    check(lambda L: L.reduce_prod(np.array([200, 3], np.uint8), (0,)))
    check(lambda L, x: L.cumprod(x, 0), x)


def test_max_min_nan_and_signed_zero() -> None:
    n = np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -0.0]], np.float32)
    for op in ("reduce_max", "reduce_min"):
        check(lambda L, x: getattr(L, op)(x, (1,)), n, signed_zeros=True)
    zeros = np.array([[-0.0, 0.0], [0.0, -0.0], [-0.0, -0.0], [0.0, 0.0]], np.float32)
    for dt in (F32, BF16, F16):
        for op in ("reduce_max", "reduce_min"):
            check(lambda L, x: getattr(L, op)(x, (1,)), zeros.astype(dt), signed_zeros=True)
        for op in ("cummax", "cummin"):
            for rev in (False, True):
                check(lambda L, x: getattr(L, op)(x, 1, rev), zeros.astype(dt), signed_zeros=True)
                check(
                    lambda L, x: getattr(L, op)(x, 0, rev),
                    np.array([0.0, -0.0, -0.0, 1.0, np.nan, 2.0], dt),
                    signed_zeros=True,
                )


def test_complex_max_min_are_lexicographic() -> None:
    c = np.array([1 + 2j, 1 + 3j, 0 + 5j, 2 - 1j, 2 - 2j], np.complex64)
    for op in ("reduce_max", "reduce_min"):
        check(lambda L, x: getattr(L, op)(x, (0,)), c)
    for op in ("cummax", "cummin"):
        check(lambda L, x: getattr(L, op)(x, 0), c)


ARG_DATA: list[np.ndarray[Any, Any]] = [
    np.array([1.0, np.nan, 3.0, np.nan, 5.0], np.float32),
    np.array([1, 3, 3, 1], np.int32),
    np.array([1, 0, 3, 0], np.int8),
    np.array([-0.0, 0.0], np.float32),
    np.array([-np.inf, -np.inf, np.inf], np.float32),
    np.array([True, False, False, True]),
    np.array([2.0, np.nan, -1.0], ml_dtypes.bfloat16),
    np.array([2.0, 5.0, np.nan], np.float16),
]


@pytest.mark.parametrize("op", ("argmax", "argmin"))
@pytest.mark.parametrize("x", ARG_DATA, ids=lambda a: str(a.dtype))
def test_arg_reductions_first_nan_and_first_extremum(op: str, x: np.ndarray[Any, Any]) -> None:
    check(lambda L, x: getattr(L, op)(x, 0, np.int32), x)


@pytest.mark.parametrize("op", ("argmax", "argmin"))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("index_dtype", (np.int32, np.uint8, np.int16, np.int64), ids=str)
def test_arg_reductions_match_jax(op: str, dtype: DT, index_dtype: type) -> None:
    x = rand((3, 4, 2), dtype)
    for axis in range(3):
        check(lambda L, x: getattr(L, op)(x, axis, index_dtype), x)
    check(lambda L, x: getattr(L, op)(x, 0, index_dtype), rand((3, 0), dtype))


CUM_OPS = ("cumsum", "cumprod", "cummax", "cummin")


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("op", CUM_OPS)
def test_cumulative_match_jax(op: str, dtype: DT) -> None:
    for shape in ((5,), (2, 3), (3, 0), (0,)):
        x = rand(shape, dtype)
        for axis in range(len(shape)):
            for rev in (False, True):
                check(lambda L, x: getattr(L, op)(x, axis, reverse=rev), x)


@pytest.mark.parametrize("dtype", (F32, BF16, F16), ids=str)
def test_cumlogsumexp_matches_jax(dtype: DT) -> None:
    x = rand((3, 4), dtype)
    for rev in (False, True):
        got = flax.cumlogsumexp(x, 1, rev)
        want = jlax.cumlogsumexp(jnp.asarray(x), 1, reverse=rev)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=1e-2)


def test_float_sums_close_to_jax_on_random_data() -> None:
    x = np.random.default_rng(1).standard_normal((7, 50)).astype(np.float32)
    for op in ("reduce_sum", "reduce_prod", "reduce_max"):
        got, want = getattr(flax, op)(x, (1,)), getattr(jlax, op)(x, (1,))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(flax.cumsum(x, 1)), np.asarray(jlax.cumsum(jnp.asarray(x), 1)), rtol=1e-4, atol=1e-5)


def _weak(L: types.ModuleType) -> Any:
    return L.broadcast_in_dim(2.0, (2, 3), ())


WEAK_CASES: list[tuple[str, Case]] = [
    ("reduce_sum", lambda L: L.reduce_sum(_weak(L), (0,))),
    ("reduce_max", lambda L: L.reduce_max(_weak(L), (0, 1))),
    ("reduce_prod", lambda L: L.reduce_prod(_weak(L), ())),
    ("reduce_or", lambda L: L.reduce_or(L.broadcast_in_dim(3, (2,), ()), (0,))),
    ("reduce_and_no_axes", lambda L: L.reduce_and(L.broadcast_in_dim(3, (2,), ()), ())),
    ("reduce_xor_bool", lambda L: L.reduce_xor(L.broadcast_in_dim(True, (2,), ()), (0,))),
    ("reduce_min_int", lambda L: L.reduce_min(L.broadcast_in_dim(3, (2,), ()), (0,))),
    ("argmax", lambda L: L.argmax(_weak(L), 1, np.int32)),
    ("cumsum", lambda L: L.cumsum(_weak(L), 1)),
    ("cummin", lambda L: L.cummin(_weak(L), 0, True)),
    ("python_scalar", lambda L: L.reduce_sum(3, ())),
]


@pytest.mark.parametrize("case", [c for _, c in WEAK_CASES], ids=[n for n, _ in WEAK_CASES])
def test_weak_types_match_jax(case: Case) -> None:
    check(case)


def test_staged_params_match_jax() -> None:
    x = np.ones((2, 3), np.float32)

    def f(L: types.ModuleType, x: Any) -> Any:
        return [
            L.reduce_sum(x, (0,)), L.reduce_max(x, (1, 0)), L.reduce_min(x, ()), L.reduce_prod(x, (1,)),
            L.argmax(x, 1, np.int64), L.argmin(x, 0, np.uint8), L.cumsum(x, 1, reverse=True), L.cumprod(x, 0),
            L.cummax(x, 1), L.cummin(x, 0, True), L.cumlogsumexp(x, 1),
        ]

    mine = fcore.make_jaxpr(lambda x: f(flax, x))(x)
    theirs = jax.make_jaxpr(lambda x: f(jlax, x))(x)
    assert [e.primitive.name for e in mine.eqns] == [e.primitive.name for e in theirs.eqns]
    for a, b in zip(mine.eqns, theirs.eqns):
        assert dict(a.params) == {k: v for k, v in b.params.items() if k != "out_sharding"}, a.primitive.name


ERRORS: list[tuple[str, Case]] = [
    ("reduce_sum", lambda L, x: L.reduce_sum(x, (-1,))),
    ("reduce_sum", lambda L, x: L.reduce_sum(x, (0, 0))),
    ("reduce_max", lambda L, x: L.reduce_max(x, (2,))),
    ("reduce_sum", lambda L, x: L.reduce_sum(np.ones(3, np.bool_), (0,))),
    ("reduce_and", lambda L, x: L.reduce_and(x, (0,))),
    ("argmax", lambda L, x: L.argmax(x, -1, np.int32)),
    ("argmax", lambda L, x: L.argmax(x, 2, np.int32)),
    ("argmin", lambda L, x: L.argmin(np.zeros((0, 3), np.float32), 0, np.int32)),
    ("argmax", lambda L, x: L.argmax(x, 0, np.float32)),
    ("argmax", lambda L, x: L.argmax(x, 0, np.bool_)),
    ("argmax", lambda L, x: L.argmax(np.ones(3, np.complex64), 0, np.int32)),
    ("argmax", lambda L, x: L.argmax(np.float32(1), 0, np.int32)),
    ("cumsum", lambda L, x: L.cumsum(x, -1)),
    ("cummax", lambda L, x: L.cummax(x, 2)),
    ("cumprod", lambda L, x: L.cumprod(np.ones(3, np.bool_), 0)),
    ("cummin", lambda L, x: L.cummin(np.float32(1), 0)),
]


@pytest.mark.parametrize(("name", "case"), ERRORS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ERRORS)])
def test_errors_name_the_primitive(name: str, case: Case) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises((TypeError, ValueError), match=name):
        case(flax, x)
    with pytest.raises((TypeError, ValueError)):
        case(jlax, x)
    with pytest.raises((TypeError, ValueError), match=name):
        fcore.make_jaxpr(lambda x: case(flax, x))(x)


# -- properties ---------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple), data=st.data())
def test_reduction_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    axes = tuple(data.draw(st.permutations(range(len(shape))))[: data.draw(st.integers(0, len(shape)))])
    op = data.draw(st.sampled_from(ARITH + ("reduce_or",)))
    x = rand(shape, I32, seed=data.draw(st.integers(0, 3)))
    got = getattr(flax, op)(x, axes)
    assert_same(got, getattr(jlax, op)(x, axes))
    if op == "reduce_sum":
        np.testing.assert_array_equal(np.asarray(got), np.sum(x, axis=axes, dtype=np.int32))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_cumulative_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1))
    reverse = data.draw(st.booleans())
    op = data.draw(st.sampled_from(CUM_OPS))
    dtype = data.draw(st.sampled_from((F32, I32, BF16)))
    x = rand(shape, dtype, seed=data.draw(st.integers(0, 3)))
    assert_same(getattr(flax, op)(x, axis, reverse), getattr(jlax, op)(x, axis, reverse=reverse))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_arg_reduction_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = rand(shape, F32, seed=data.draw(st.integers(0, 3)))
    if data.draw(st.booleans()):
        x.flat[data.draw(st.integers(0, x.size - 1))] = np.nan
    for op in ("argmax", "argmin"):
        assert_same(getattr(flax, op)(x, axis, np.int32), getattr(jlax, op)(x, axis, np.int32))


def test_primitives_are_exported() -> None:
    for name in reductions.__all__:
        if not name.endswith("_p"):
            assert getattr(flax, name) is getattr(reductions, name)

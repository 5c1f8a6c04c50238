"""Structural ``fcore.lax`` primitives, differentially against ``jax.lax``.

Every case runs the same function with ``fcore.lax`` and with ``jax.lax`` and compares values,
dtypes and weak types of the eager results, then stages both with ``make_jaxpr`` and compares
the output avals (the fcore jaxpr is type-checked too).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import fcore
from fcore import lax as flax
from fcore.core import typecheck
from fcore.ir import dtypes
from fcore.lax import gather_scatter, shapes, slicing

Case = Callable[..., Any]
DT = np.dtype[Any]

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
DTYPES = (F32, I32, BOOL, BF16, F16)


def with_dtypes(cases: Sequence[Any], per_case: int = 2) -> list[tuple[Any, DT]]:
    """Each case with ``per_case`` of ``DTYPES``, rotating: data movement does not depend on
    the dtype, so every dtype meets many cases without the full cross product."""
    return [(c, DTYPES[(i + 2 * j) % len(DTYPES)]) for i, c in enumerate(cases) for j in range(per_case)]


def rand(shape: Sequence[int], dtype: DT, seed: int = 0) -> np.ndarray[Any, Any]:
    """Small, exactly representable values of ``dtype`` (so comparisons can be exact)."""
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.random(tuple(shape)) < 0.5
    return rng.integers(-8, 9, tuple(shape)).astype(dtype)


def scalar(value: float, dtype: DT) -> np.ndarray[Any, Any]:
    """A 0-d array (not a NumPy scalar: ``np.float64`` would pass for a Python float)."""
    return np.array(value).astype(dtype)


def assert_same(got: object, want: object) -> None:
    """Same values (NaN-aware), shape, dtype and weak type."""
    assert isinstance(got, fcore.Array), type(got)
    assert isinstance(want, jax.Array), type(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.aval.weak_type, (got.weak_type, want.aval.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype in (BF16, F16):
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)


def assert_staged(case: Case, *args: Any) -> None:
    """``make_jaxpr`` of the case: fcore's jaxpr typechecks and has JAX's output avals."""
    closed = fcore.make_jaxpr(lambda *a: case(flax, *a))(*args)
    typecheck(closed)
    jclosed = jax.make_jaxpr(lambda *a: case(jlax, *a))(*args)
    got = [(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
    want = [(a.shape, a.dtype, a.weak_type) for a in jclosed.out_avals]
    assert got == want


def check(case: Case, *args: Any) -> None:
    assert_same(case(flax, *args), case(jlax, *args))
    assert_staged(case, *args)


# -- cases: (id, operand shape, function of (lax module, operand)) ----------------------------
CASES: list[tuple[str, tuple[int, ...], Case]] = [
    ("bid_new_axis", (3,), lambda L, x: L.broadcast_in_dim(x, (2, 3), (1,))),
    ("bid_scalar", (), lambda L, x: L.broadcast_in_dim(x, (2, 3), ())),
    ("bid_size1", (1, 3), lambda L, x: L.broadcast_in_dim(x, (4, 3), (0, 1))),
    ("bid_zero_size", (0, 3), lambda L, x: L.broadcast_in_dim(x, (2, 0, 3), (1, 2))),
    ("bid_to_zero", (1,), lambda L, x: L.broadcast_in_dim(x, (0, 5), (0,))),
    ("bid_permuted", (2, 3), lambda L, x: L.broadcast_in_dim(x, (3, 4, 2), (2, 0))),
    ("bid_identity", (2, 3), lambda L, x: L.broadcast_in_dim(x, (2, 3), (0, 1))),
    ("broadcast", (2, 3), lambda L, x: L.broadcast(x, (4,))),
    ("broadcast_scalar", (), lambda L, x: L.broadcast(x, (2, 2))),
    ("broadcast_none", (2,), lambda L, x: L.broadcast(x, ())),
    ("reshape", (2, 3), lambda L, x: L.reshape(x, (3, 2))),
    ("reshape_dims", (2, 3), lambda L, x: L.reshape(x, (6,), (1, 0))),
    ("reshape_scalar", (), lambda L, x: L.reshape(x, (1, 1))),
    ("reshape_to_scalar", (1, 1), lambda L, x: L.reshape(x, ())),
    ("reshape_zero", (0, 3), lambda L, x: L.reshape(x, (3, 0, 2))),
    ("reshape_same", (2, 3), lambda L, x: L.reshape(x, (2, 3))),
    ("squeeze", (1, 3, 1), lambda L, x: L.squeeze(x, (0, 2))),
    ("squeeze_negative", (2, 1), lambda L, x: L.squeeze(x, (-1,))),
    ("squeeze_to_scalar", (1,), lambda L, x: L.squeeze(x, (0,))),
    ("squeeze_zero_size", (1, 0), lambda L, x: L.squeeze(x, (0,))),
    ("squeeze_none", (2,), lambda L, x: L.squeeze(x, ())),
    ("expand_dims", (2, 3), lambda L, x: L.expand_dims(x, (0, 3))),
    ("expand_dims_negative", (2, 3), lambda L, x: L.expand_dims(x, (-1,))),
    ("expand_dims_scalar", (), lambda L, x: L.expand_dims(x, (0, 1))),
    ("expand_dims_zero", (0,), lambda L, x: L.expand_dims(x, (0,))),
    ("transpose", (2, 3, 4), lambda L, x: L.transpose(x, (2, 0, 1))),
    ("transpose_zero", (0, 2), lambda L, x: L.transpose(x, (1, 0))),
    ("transpose_scalar", (), lambda L, x: L.transpose(x, ())),
    ("transpose_identity", (2, 3), lambda L, x: L.transpose(x, (0, 1))),
    ("concatenate0", (2, 3), lambda L, x: L.concatenate([x, L.rev(x, (0,)), x], 0)),
    ("concatenate1", (2, 3), lambda L, x: L.concatenate([x, L.slice(x, (0, 0), (2, 1))], 1)),
    ("concatenate_empty_part", (2, 3), lambda L, x: L.concatenate([L.slice(x, (0, 0), (0, 3)), x], 0)),
    ("concatenate_single", (2,), lambda L, x: L.concatenate([x], 0)),
    ("rev", (2, 3), lambda L, x: L.rev(x, (0, 1))),
    ("rev_one", (2, 3, 2), lambda L, x: L.rev(x, (1,))),
    ("rev_none", (3,), lambda L, x: L.rev(x, ())),
    ("rev_scalar", (), lambda L, x: L.rev(x, ())),
    ("rev_zero", (0, 2), lambda L, x: L.rev(x, (0, 1))),
    ("slice", (5, 6), lambda L, x: L.slice(x, (1, 0), (4, 6))),
    ("slice_strides", (5, 6), lambda L, x: L.slice(x, (1, 0), (5, 6), (2, 4))),
    ("slice_empty", (5, 6), lambda L, x: L.slice(x, (2, 3), (2, 6), (3, 1))),
    ("slice_scalar", (), lambda L, x: L.slice(x, (), ())),
    ("slice_in_dim", (4, 5), lambda L, x: L.slice_in_dim(x, 1, -1, 2, axis=1)),
    ("slice_in_dim_none", (4, 5), lambda L, x: L.slice_in_dim(x, None, None)),
    ("index_in_dim", (4, 5), lambda L, x: L.index_in_dim(x, -1, 0, keepdims=False)),
]


@pytest.mark.parametrize(("named", "dtype"), with_dtypes(CASES), ids=lambda v: v[0] if isinstance(v, tuple) else str(v))
def test_structural_matches_jax(named: tuple[str, tuple[int, ...], Case], dtype: DT) -> None:
    _, shape, case = named
    check(case, rand(shape, dtype))


PAD_CONFIGS: list[tuple[tuple[int, ...], tuple[tuple[int, int, int], ...]]] = [
    ((2, 3), ((1, 2, 0), (0, 1, 0))),
    ((2, 3), ((1, -1, 1), (2, 0, 2))),
    ((4, 3), ((-2, -1, 2), (-1, -1, 0))),
    ((2, 3), ((-1, -1, 0), (0, 0, 0))),
    ((3,), ((-2, -2, 1),)),
    ((0, 2), ((1, 1, 3), (0, 0, 0))),
    ((), ()),
    ((2, 2), ((0, 0, 0), (0, 0, 0))),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(("shape", "config"), PAD_CONFIGS, ids=str)
def test_pad_matches_jax(shape: tuple[int, ...], config: tuple[tuple[int, int, int], ...], dtype: DT) -> None:
    check(lambda L, x, v: L.pad(x, v, config), rand(shape, dtype), scalar(1, dtype))


DSLICE_INDICES: list[tuple[Any, ...]] = [(0, 0), (1, 2), (5, -9), (-1, -2), (-7, 100), (np.int16(1), np.int16(-1))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("indices", DSLICE_INDICES, ids=str)
def test_dynamic_slice_matches_jax(indices: tuple[Any, ...], dtype: DT) -> None:
    x = rand((4, 5), dtype)
    check(lambda L, x: L.dynamic_slice(x, indices, (2, 3)), x)
    check(lambda L, x: L.dynamic_update_slice(x, L.rev(L.slice(x, (0, 0), (3, 2)), (0,)), indices), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dynamic_slice_traced_and_array_indices(dtype: DT) -> None:
    x = rand((4, 5), dtype)
    for i in (np.int32(-1), np.int32(2), np.int32(-9), np.int32(7)):
        check(lambda L, x, i: L.dynamic_slice(x, (i, 1), (2, 2)), x, i)
        check(lambda L, x, i: L.dynamic_update_slice(x, L.slice(x, (0, 0), (1, 2)), (1, i)), x, i)
        check(lambda L, x, i: L.dynamic_index_in_dim(x, i, 1, keepdims=False), x, i)
        check(lambda L, x, i: L.dynamic_slice_in_dim(x, i, 2, 0), x, i)
        check(lambda L, x, i: L.dynamic_update_index_in_dim(x, L.index_in_dim(x, 0, 1, False), i, 1), x, i)
    idx = np.array([3, -2], np.int32)
    check(lambda L, x, idx: L.dynamic_slice(x, idx, (1, 3)), x, idx)
    check(lambda L, x, idx: L.dynamic_update_slice(x, L.slice(x, (0, 0), (1, 3)), idx), x, idx)
    # Unsigned indices are never wrapped; a weakly typed traced index is made strong first.
    check(lambda L, x: L.dynamic_slice(x, (np.uint8(3), np.uint8(200)), (2, 2)), x)
    closed = fcore.make_jaxpr(lambda x, i: flax.dynamic_slice(x, (i, 0), (1, 1)))(x, 1)
    assert closed.in_avals[1].weak_type and closed.out_avals[0].shape == (1, 1)


@pytest.mark.parametrize("dtype", [F32, I32, BF16, F16, np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.complex64)], ids=str)
def test_iota_matches_jax(dtype: DT) -> None:
    check(lambda L: L.iota(dtype, 5))
    check(lambda L: L.iota(dtype, 0))
    check(lambda L: L.broadcasted_iota(dtype, (3, 4), 1))
    check(lambda L: L.broadcasted_iota(dtype, (300, 2), 0))
    check(lambda L: L.broadcasted_iota(dtype, (2, 0, 3), 2))


def test_iota_canonicalizes_64_bit_dtypes() -> None:
    r = flax.iota(np.int64, 3)
    assert r.dtype == np.int32
    with fcore.enable_x64(), jax.enable_x64(True):
        check(lambda L: L.iota(np.int64, 3))
        check(lambda L: L.dynamic_slice(np.arange(5), (np.int64(-2),), (2,)))
        check(lambda L: L.dynamic_slice(np.arange(5), (-2,), (2,)))


def _weak(L: types.ModuleType) -> Any:
    return L.broadcast_in_dim(2.0, (2, 3), ())


WEAK_CASES: list[tuple[str, Case]] = [
    ("bid", lambda L: L.broadcast_in_dim(_weak(L), (4, 2, 3), (1, 2))),
    ("reshape", lambda L: L.reshape(_weak(L), (3, 2))),
    ("squeeze", lambda L: L.squeeze(L.expand_dims(_weak(L), (0,)), (0,))),
    ("transpose", lambda L: L.transpose(_weak(L), (1, 0))),
    ("concatenate_weak", lambda L: L.concatenate([_weak(L), _weak(L)], 0)),
    ("concatenate_mixed", lambda L: L.concatenate([_weak(L), np.ones((2, 3), np.float32)], 0)),
    ("pad_weak", lambda L: L.pad(_weak(L), 0.0, ((1, 0, 0), (0, 0, 1)))),
    ("pad_strong_value", lambda L: L.pad(_weak(L), np.float32(0), ((1, 0, 0), (0, 0, 1)))),
    ("slice", lambda L: L.slice(_weak(L), (0, 1), (2, 3))),
    ("rev", lambda L: L.rev(_weak(L), (1,))),
    ("dynamic_slice", lambda L: L.dynamic_slice(_weak(L), (1, 1), (1, 2))),
    ("dynamic_update_slice", lambda L: L.dynamic_update_slice(_weak(L), _weak(L), (0, 0))),
    ("python_scalar", lambda L: L.broadcast(3, (2,))),
    ("bool_scalar", lambda L: L.broadcast(True, (2,))),
]


@pytest.mark.parametrize("case", [c for _, c in WEAK_CASES], ids=[n for n, _ in WEAK_CASES])
def test_weak_types_match_jax(case: Case) -> None:
    check(case)


def test_shortcuts_return_operand_and_stage_nothing() -> None:
    x = flax.iota(np.float32, 3)
    for same in (
        flax.reshape(x, (3,)), flax.transpose(x, (0,)), flax.squeeze(x, ()), flax.expand_dims(x, ()),
        flax.broadcast(x, ()), flax.broadcast_in_dim(x, (3,), (0,)), flax.concatenate([x], 0),
    ):
        assert same is x
    closed = fcore.make_jaxpr(lambda x: flax.expand_dims(flax.transpose(x, (0, 1)), ()))(np.ones((2, 2), np.float32))
    assert not closed.eqns


def test_staged_params_match_jax() -> None:
    x = np.ones((2, 3), np.float32)

    def f(L: types.ModuleType, x: Any) -> Any:
        return [
            L.broadcast_in_dim(x, (4, 2, 3), (1, 2)), L.reshape(x, (3, 2), (1, 0)), L.squeeze(L.expand_dims(x, (1,)), (-2,)),
            L.transpose(x, (1, 0)), L.concatenate([x, x], 1), L.pad(x, np.float32(0), [(1, -1, 1), (0, 0, 0)]),
            L.slice(x, (0, 1), (2, 3), (1, 2)), L.slice(x, (0, 1), (2, 3)), L.dynamic_slice(x, (0, 1), (2, 2)),
            L.dynamic_update_slice(x, x, (0, 0)), L.broadcasted_iota(np.int32, (2, 5), 1), L.rev(x, (0,)),
        ]

    mine = fcore.make_jaxpr(lambda x: f(flax, x))(x)
    theirs = jax.make_jaxpr(lambda x: f(jlax, x))(x)
    assert [e.primitive.name for e in mine.eqns] == [e.primitive.name for e in theirs.eqns]
    for a, b in zip(mine.eqns, theirs.eqns):
        expected = {k: v for k, v in b.params.items() if k != "sharding"}
        assert dict(a.params) == expected, a.primitive.name
        values: list[object] = list(a.params.values())
        assert not any(isinstance(v, list) for v in values)


ERRORS: list[tuple[str, Case]] = [
    ("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, 3), (0,))),
    ("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, 4), (0, 1))),
    ("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, 3), (0, 2))),
    ("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, -3), (0, 1))),
    ("reshape", lambda L, x: L.reshape(x, (4,))),
    ("reshape", lambda L, x: L.reshape(x, (-1, 6))),
    ("reshape", lambda L, x: L.reshape(x, (6,), (0, 0))),
    ("squeeze", lambda L, x: L.squeeze(x, (0,))),
    ("squeeze", lambda L, x: L.squeeze(x, (5,))),
    ("expand_dims", lambda L, x: L.expand_dims(x, (0, 0))),
    ("expand_dims", lambda L, x: L.expand_dims(x, (0, -4))),
    ("expand_dims", lambda L, x: L.expand_dims(x, (4,))),
    ("transpose", lambda L, x: L.transpose(x, (0, 0))),
    ("transpose", lambda L, x: L.transpose(x, (0,))),
    ("transpose", lambda L, x: L.transpose(x, (-1, 0))),
    ("concatenate", lambda L, x: L.concatenate([x, x.astype(np.int32)], 0)),
    ("concatenate", lambda L, x: L.concatenate([x, L.transpose(x, (1, 0))], 0)),
    ("concatenate", lambda L, x: L.concatenate([x, L.reshape(L.slice(x, (0, 0), (1, 3)), (3,))], 0)),
    ("concatenate", lambda L, x: L.concatenate([x, x], 2)),
    ("concatenate", lambda L, x: L.concatenate([x, x], -1)),
    ("concatenate", lambda L, x: L.concatenate([], 0)),
    ("pad", lambda L, x: L.pad(x, np.float32(0), [(0, 0, 0)])),
    ("pad", lambda L, x: L.pad(x, np.float32(0), [(0, 0, -1), (0, 0, 0)])),
    ("pad", lambda L, x: L.pad(x, np.float32(0), [(-2, -1, 0), (0, 0, 0)])),
    ("pad", lambda L, x: L.pad(x, np.int32(0), [(0, 0, 0), (0, 0, 0)])),
    ("pad", lambda L, x: L.pad(x, np.zeros(2, np.float32), [(0, 0, 0), (0, 0, 0)])),
    ("slice", lambda L, x: L.slice(x, (0, 0), (3, 3))),
    ("slice", lambda L, x: L.slice(x, (-1, 0), (2, 3))),
    ("slice", lambda L, x: L.slice(x, (2, 0), (1, 3))),
    ("slice", lambda L, x: L.slice(x, (0,), (1,))),
    ("slice", lambda L, x: L.slice(x, (0, 0), (2, 3), (1, 0))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (0, 0), (3, 3))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (0, 0), (-1, 3))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (0,), (1,))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (0, 0), (1,))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (0.0, 0), (1, 1))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (np.int16(0), 0), (1, 1))),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (-1, 0), (1, 1), allow_negative_indices=False)),
    ("dynamic_update_slice", lambda L, x: L.dynamic_update_slice(x, L.transpose(x, (1, 0)), (0, 0))),
    ("dynamic_update_slice", lambda L, x: L.dynamic_update_slice(x, L.reshape(x, (6,)), (0, 0))),
    ("dynamic_update_slice", lambda L, x: L.dynamic_update_slice(x, x.astype(np.int32), (0, 0))),
    ("iota", lambda L, x: L.iota(np.bool_, 3)),
    ("iota", lambda L, x: L.iota(np.int32, -1)),
    ("iota", lambda L, x: L.broadcasted_iota(np.int32, (2, 3), 2)),
    ("iota", lambda L, x: L.broadcasted_iota(np.int32, (2, 3), -1)),
    ("rev", lambda L, x: L.rev(x, (2,))),
    ("rev", lambda L, x: L.rev(x, (0, 0))),
    ("rev", lambda L, x: L.rev(x, (-1,))),
]


@pytest.mark.parametrize(("name", "case"), ERRORS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ERRORS)])
def test_errors_name_the_primitive(name: str, case: Case) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises((TypeError, ValueError), match=name):
        case(flax, x)
    with pytest.raises(Exception):  # JAX rejects the same program
        case(jlax, x)


def test_typecheck_rejects_ill_typed_equation() -> None:
    closed = fcore.make_jaxpr(lambda x: flax.transpose(x, (1, 0)))(np.ones((2, 3), np.float32))
    eqn = closed.eqns[0]
    bad = closed.jaxpr.replace(eqns=(eqn.replace(params=eqn.params.replace(permutation=(0, 0))),))
    with pytest.raises(fcore.JaxprTypeError, match="transpose"):
        typecheck(bad)


def test_impls_are_consistent_with_abstract_eval_for_every_dtype() -> None:
    """Eager results under verify-each (abstract eval checked) for all supported dtypes."""
    for dt in dtypes.SUPPORTED_DTYPES:
        x = rand((2, 3), dt)
        results = [
            flax.pad(x, scalar(0, dt), [(1, 1, 1), (-1, 0, 0)]),
            flax.concatenate([x, x], 1),
            flax.dynamic_update_slice(x, x[:1], (1, 0)),
            flax.broadcast_in_dim(x, (3, 2, 4, 3), (1, 3)),
            flax.rev(flax.transpose(x, (1, 0)), (0,)),
        ]
        for r in results:
            assert r.dtype == dtypes.canonicalize_dtype(dt)


# -- properties ---------------------------------------------------------------------------------
small_shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
dtype_st = st.sampled_from(DTYPES)


@settings(max_examples=20, deadline=None)
@given(shape=small_shapes, dtype=dtype_st, data=st.data())
def test_transpose_property(shape: tuple[int, ...], dtype: DT, data: st.DataObject) -> None:
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = rand(shape, dtype)
    got = flax.transpose(x, perm)
    np.testing.assert_array_equal(np.asarray(got), np.transpose(x, perm))
    assert_same(got, jlax.transpose(x, perm))


@settings(max_examples=20, deadline=None)
@given(shape=small_shapes, data=st.data())
def test_slice_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    starts, limits, strides = [], [], []
    for d in shape:
        a = data.draw(st.integers(0, d))
        b = data.draw(st.integers(a, d))
        starts.append(a)
        limits.append(b)
        strides.append(data.draw(st.integers(1, 3)))
    x = rand(shape, I32)
    got = flax.slice(x, starts, limits, strides)
    np.testing.assert_array_equal(np.asarray(got), x[tuple(np.s_[a:b:s] for a, b, s in zip(starts, limits, strides))])
    assert_same(got, jlax.slice(x, starts, limits, strides))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple), data=st.data())
def test_pad_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    config = tuple(
        (data.draw(st.integers(-3, 3)), data.draw(st.integers(-3, 3)), data.draw(st.integers(0, 2))) for _ in shape
    )
    x = rand(shape, F32)
    v = np.float32(-100)
    try:
        want = jlax.pad(x, v, config)
    except (TypeError, ValueError):
        with pytest.raises(ValueError, match="pad"):
            flax.pad(x, v, config)
        return
    assert_same(flax.pad(x, v, config), want)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple), data=st.data())
def test_dynamic_slice_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    sizes = tuple(data.draw(st.integers(0, d)) for d in shape)
    starts = tuple(data.draw(st.integers(-8, 8)) for _ in shape)
    x = rand(shape, I32)
    assert_same(flax.dynamic_slice(x, starts, sizes), jlax.dynamic_slice(x, starts, sizes))
    update = rand(sizes, I32, seed=1)
    assert_same(flax.dynamic_update_slice(x, update, starts), jlax.dynamic_update_slice(x, update, starts))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple), data=st.data())
def test_broadcast_in_dim_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    extra = data.draw(st.lists(st.integers(0, 3), max_size=2))
    out_rank = len(shape) + len(extra)
    dims = tuple(sorted(data.draw(st.permutations(range(out_rank)))[: len(shape)]))
    out_shape = [0] * out_rank
    it = iter(extra)
    for k in range(out_rank):
        if k in dims:
            s = shape[dims.index(k)]
            out_shape[k] = data.draw(st.integers(0, 3)) if s == 1 else s
        else:
            out_shape[k] = next(it)
    x = rand(shape, F32)
    assert_same(flax.broadcast_in_dim(x, out_shape, dims), jlax.broadcast_in_dim(x, out_shape, dims))


def test_primitives_are_exported() -> None:
    for module in (shapes, slicing, gather_scatter):
        for name in module.__all__:
            assert getattr(flax, name) is getattr(module, name)


# -- gather / scatter ---------------------------------------------------------------------------
def _gdn(L: types.ModuleType, **kw: tuple[int, ...]) -> Any:
    return L.GatherDimensionNumbers(**kw)


def _sdn(L: types.ModuleType, **kw: tuple[int, ...]) -> Any:
    return L.ScatterDimensionNumbers(**kw)


GATHERS: list[tuple[str, tuple[int, ...], list[Any], dict[str, tuple[int, ...]], tuple[int, ...]]] = [
    # x[idx]: rows, as jnp indexing stages it (indices out of range on purpose)
    ("rows", (5, 4), [[4], [0], [-1], [7]], dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4)),
    ("rows_offset_first", (5, 4), [[3], [1]], dict(offset_dims=(0,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4)),
    ("cols", (3, 5), [[4], [9]], dict(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,)), (3, 1)),
    ("points", (3, 4), [[2, 3], [0, 0], [-1, 2], [1, 5]], dict(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)), (1, 1)),
    ("points_swapped", (3, 4), [[3, 2], [0, 1]], dict(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(1, 0)), (1, 1)),
    ("idx_2d", (5, 3), [[[1], [2], [4]], [[0], [0], [3]]], dict(offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 3)),
    ("windows", (6,), [[0], [4], [5]], dict(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,)), (2,)),
    ("batching", (2, 5, 3), [[[1], [4], [0], [2]], [[3], [3], [6], [0]]],
     dict(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1, 3)),
    ("empty_indices", (5, 4), np.zeros((0, 1), np.int32).tolist(), dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4)),
    ("scalar_index", (5,), [3], dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (1,)),
]


@pytest.mark.parametrize(
    ("case", "dtype"), with_dtypes([(g, m) for g in GATHERS for m in (None, "clip", "fill", "promise_in_bounds")]),
    ids=lambda v: f"{v[0][0]}-{v[1]}" if isinstance(v, tuple) else str(v),
)
def test_gather_matches_jax(case: tuple[Any, str | None], dtype: DT) -> None:
    (_, shape, idx, dn, sizes), mode = case
    indices = np.array(idx, np.int32).reshape(np.shape(idx) if np.size(idx) else (0, 1))
    check(lambda L, x, i: L.gather(x, i, _gdn(L, **dn), sizes, mode=mode), rand(shape, dtype), indices)


def test_gather_fill_value_and_params_match_jax() -> None:
    x, i = rand((5, 4), I32), np.array([[4], [9]], np.int32)
    dn = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    check(lambda L, x, i: L.gather(x, i, _gdn(L, **dn), (1, 4), mode="fill", fill_value=-7), x, i)
    for dt in (F32, I32, BOOL, np.dtype(np.uint8)):
        mine = fcore.make_jaxpr(lambda x, i: flax.gather(x, i, _gdn(flax, **dn), (1, 4), mode="fill"))(rand((5, 4), dt), i)
        theirs = jax.make_jaxpr(lambda x, i: jlax.gather(x, i, _gdn(jlax, **dn), (1, 4), mode="fill"))(rand((5, 4), dt), i)
        a, b = mine.eqns[0].params, theirs.eqns[0].params
        assert repr(a["dimension_numbers"]) == repr(b["dimension_numbers"])
        assert a["mode"] is flax.GatherScatterMode[b["mode"].name] and a["slice_sizes"] == b["slice_sizes"]
        assert np.array_equal(np.array(a["fill_value"]), np.array(b["fill_value"]), equal_nan=True)
        assert type(a["fill_value"]) is type(b["fill_value"])


SCATTERS: list[tuple[str, tuple[int, ...], list[Any], tuple[int, ...], dict[str, tuple[int, ...]]]] = [
    ("rows", (5, 4), [[2], [0], [7], [-2]], (4, 4), dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))),
    ("cols", (3, 5), [[4], [1], [8]], (3, 3), dict(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))),
    ("points", (3, 4), [[2, 3], [0, 0], [-1, 2], [1, 5]], (4,), dict(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))),
    ("windows", (6,), [[0], [2], [5]], (3, 2), dict(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))),
    ("batching", (2, 5, 3), [[[1], [4]], [[3], [6]]], (2, 2, 3),
     dict(update_window_dims=(2,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))),
    ("empty_indices", (5, 4), [], (0, 4), dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))),
]


@pytest.mark.parametrize(
    ("case", "dtype"), with_dtypes([(c, m) for c in SCATTERS for m in (None, "clip", "promise_in_bounds")]),
    ids=lambda v: f"{v[0][0]}-{v[1]}" if isinstance(v, tuple) else str(v),
)
def test_scatter_matches_jax(case: tuple[Any, str | None], dtype: DT) -> None:
    (_, shape, idx, ushape, dn), mode = case
    indices = np.array(idx, np.int32).reshape(np.shape(idx) if np.size(idx) else (0, 1))
    x, u = rand(shape, dtype), rand(ushape, dtype, seed=1)
    check(lambda L, x, i, u: L.scatter(x, i, u, _sdn(L, **dn), mode=mode), x, indices, u)
    if dtype != BOOL:
        check(lambda L, x, i, u: L.scatter_add(x, i, u, _sdn(L, **dn), mode=mode), x, indices, u)


def test_scatter_add_accumulates_repeated_indices() -> None:
    dn = dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    x, i, u = rand((4, 3), I32), np.array([[1], [1], [3], [1]], np.int32), rand((4, 3), I32, seed=2)
    check(lambda L, x, i, u: L.scatter_add(x, i, u, _sdn(L, **dn)), x, i, u)
    i8 = np.full((4, 3), 100, np.int8)
    check(lambda L, x, i, u: L.scatter_add(x, i, u, _sdn(L, **dn)), i8[:4], i, i8)  # wraps like XLA
    mine = fcore.make_jaxpr(lambda x, i, u: flax.scatter_add(x, i, u, _sdn(flax, **dn)))(x, i, u)
    (eqn,) = mine.eqns
    assert eqn.primitive.name == "scatter-add" and eqn.params["update_consts"] == ()
    assert str(eqn.params["update_jaxpr"]) == "{ lambda ; a:i32[] b:i32[]. let c:i32[] = add a b in (c,) }"


GS_WEAK: list[tuple[str, Case]] = [
    ("gather", lambda L: L.gather(
        _weak(L), np.array([[1]], np.int32), _gdn(L, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 3))),
    ("scatter_weak_operand", lambda L: L.scatter(
        _weak(L), np.array([[1]], np.int32), np.ones((1, 3), np.float32),
        _sdn(L, update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
    ("scatter_add_weak_updates", lambda L: L.scatter_add(
        np.ones((2, 3), np.float32), np.array([[1]], np.int32), L.broadcast_in_dim(1.0, (1, 3), ()),
        _sdn(L, update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
]


@pytest.mark.parametrize("case", [c for _, c in GS_WEAK], ids=[n for n, _ in GS_WEAK])
def test_gather_scatter_weak_types_match_jax(case: Case) -> None:
    check(case)


GS_ERRORS: list[tuple[str, Case]] = [
    ("gather", lambda L, x: L.gather(x, np.zeros((2, 1), np.float32), _gdn(L, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 3))),
    ("gather", lambda L, x: L.gather(x, np.zeros((2, 2), np.int32), _gdn(L, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 3))),
    ("gather", lambda L, x: L.gather(x, np.zeros((2, 1), np.int32), _gdn(L, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (2, 3))),
    ("gather", lambda L, x: L.gather(x, np.zeros((2, 1), np.int32), _gdn(L, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 4))),
    ("gather", lambda L, x: L.gather(x, np.zeros((2, 1), np.int32), _gdn(L, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(2,)), (1, 3))),
    ("scatter", lambda L, x: L.scatter(x, np.zeros((2, 1), np.int32), np.ones((2, 3), np.int32), _sdn(L, update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
    ("scatter", lambda L, x: L.scatter(x, np.zeros((2, 1), np.int32), np.ones((3, 3), np.float32), _sdn(L, update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
    ("scatter", lambda L, x: L.scatter(x, np.zeros((2, 1), np.int32), np.ones((2, 4), np.float32), _sdn(L, update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
    ("scatter-add", lambda L, x: L.scatter_add(np.ones(3, np.bool_), np.zeros((1, 1), np.int32), np.ones(1, np.bool_), _sdn(L, update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
]


@pytest.mark.parametrize(("name", "case"), GS_ERRORS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(GS_ERRORS)])
def test_gather_scatter_errors_name_the_primitive(name: str, case: Case) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises((TypeError, ValueError), match=name):
        case(flax, x)
    with pytest.raises(Exception):
        case(jlax, x)


def test_gather_scatter_struct_params() -> None:
    dn = flax.GatherDimensionNumbers(offset_dims=[1], collapsed_slice_dims=(0,), start_index_map=np.zeros(1, np.int64))
    assert dn.offset_dims == (1,) and type(dn.start_index_map[0]) is int
    assert dn == flax.GatherDimensionNumbers((1,), (0,), (0,)) and hash(dn) == hash(flax.GatherDimensionNumbers((1,), (0,), (0,)))
    assert repr(dn) == repr(jlax.GatherDimensionNumbers((1,), (0,), (0,)))
    sdn = flax.ScatterDimensionNumbers((1,), (0,), (0,))
    assert repr(sdn) == repr(jlax.ScatterDimensionNumbers((1,), (0,), (0,)))
    assert flax.GatherScatterMode.from_any("fill") is flax.GatherScatterMode.FILL_OR_DROP
    with pytest.raises(ValueError, match="mode"):
        flax.GatherScatterMode.from_any("nonsense")


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_take_along_axis_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    """``x[..., idx, ...]`` along a random axis with random (partly out-of-range) indices, any mode."""
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-3, n + 2), max_size=5)), np.int32).reshape(-1, 1)
    mode = data.draw(st.sampled_from([None, "clip", "fill"]))
    offset = tuple(d for d in range(len(shape)) if d != axis)
    out_offset = tuple(range(len(shape))) [:axis] + tuple(d + 1 for d in range(axis, len(shape) - 1))
    sizes = tuple(1 if d == axis else s for d, s in enumerate(shape))
    x = rand(shape, F32, seed=data.draw(st.integers(0, 3)))
    dn = dict(offset_dims=out_offset, collapsed_slice_dims=(axis,), start_index_map=(axis,))
    assert len(offset) == len(out_offset)
    got = flax.gather(x, idx, _gdn(flax, **dn), sizes, mode=mode)
    assert_same(got, jlax.gather(x, idx, _gdn(jlax, **dn), sizes, mode=mode))
    if mode == "clip":
        np.testing.assert_array_equal(np.asarray(got), np.moveaxis(np.take(x, np.clip(idx[:, 0], 0, n - 1), axis), axis, axis))
    update = rand(got.shape, F32, seed=5)
    sdn = dict(update_window_dims=out_offset, inserted_window_dims=(axis,), scatter_dims_to_operand_dims=(axis,))
    assert_same(
        flax.scatter_add(x, idx, update, _sdn(flax, **sdn), mode=mode),
        jlax.scatter_add(x, idx, update, _sdn(jlax, **sdn), mode=mode),
    )


# -- scatter_mul / scatter_min / scatter_max / scatter_sub ------------------------------------
_ROWS = jlax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_FROWS = flax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_COMBINING = ["scatter_mul", "scatter_min", "scatter_max", "scatter_sub"]


def _combined(lib: Any, dn: Any, name: str, idx: Any, unique: bool, mode: Any) -> Callable[[Any, Any], Any]:
    return lambda x, u: getattr(lib, name)(x, idx, u, dn, unique_indices=unique, mode=mode)


@pytest.mark.parametrize("name", _COMBINING)
@pytest.mark.parametrize("mode", [None, "clip", "drop"])
def test_combining_scatters(name: str, mode: Any) -> None:
    x, u = rand((5, 4), F32, 1), rand((3, 4), F32, 2)
    for idx, unique in ((np.array([[0], [2], [0]], np.int32), False), (np.array([[1], [4], [0]], np.int32), True),
                        (np.array([[1], [7], [-1]], np.int32), False)):
        f, g = _combined(flax, _FROWS, name, idx, unique, mode), _combined(jlax, _ROWS, name, idx, unique, mode)
        for dt in (F32, I32, BF16):
            xa, ua = x.astype(dt), u.astype(dt)
            np.testing.assert_array_equal(np.asarray(f(xa, ua)).astype(np.float32), np.asarray(g(xa, ua)).astype(np.float32))
            np.testing.assert_array_equal(np.asarray(fcore.jit(f)(xa, ua)).astype(np.float32),
                                          np.asarray(g(xa, ua)).astype(np.float32))
        if idx.min() < 0 or idx.max() >= 5:
            continue  # XLA's tangents of clipped/dropped extremal scatters are NaN-laden; not compared
        ones_x, twos_u = np.ones_like(x), 2 * np.ones_like(u)
        if unique or name != "scatter_mul":  # scatter_mul's updates are differentiable only with unique indices
            pairs = zip(fcore.jvp(f, (x, u), (ones_x, twos_u)), jax.jvp(g, (x, u), (ones_x, twos_u)))
        else:
            pairs = zip(fcore.jvp(lambda a: f(a, u), (x,), (ones_x,)), jax.jvp(lambda a: g(a, u), (x,), (ones_x,)))
        for a, b in pairs:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(fcore.grad(lambda a, b: (f(a, b) ** 2).sum())(x, u)),
                                   np.asarray(jax.grad(lambda a, b: (g(a, b) ** 2).sum())(x, u)), rtol=1e-6)
        if unique or name != "scatter_mul":
            np.testing.assert_allclose(np.asarray(fcore.grad(lambda a, b: (f(a, b) ** 2).sum(), 1)(x, u)),
                                       np.asarray(jax.grad(lambda a, b: (g(a, b) ** 2).sum(), 1)(x, u)), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(fcore.vmap(f, in_axes=(None, 0))(x, np.stack([u, u + 1]))),
                                   np.asarray(jax.vmap(g, in_axes=(None, 0))(x, np.stack([u, u + 1]))), rtol=1e-6)


def test_scatter_extremal_ties_and_mul_errors() -> None:
    idx = np.array([[0], [0], [1]], np.int32)
    x, u = np.zeros((3, 2), np.float32), np.zeros((3, 2), np.float32)
    for name in ("scatter_min", "scatter_max"):
        f, g = _combined(flax, _FROWS, name, idx, False, None), _combined(jlax, _ROWS, name, idx, False, None)
        tangents = (np.ones_like(x), 2 * np.ones_like(u))
        np.testing.assert_allclose(np.asarray(fcore.jvp(f, (x, u), tangents)[1]), np.asarray(jax.jvp(g, (x, u), tangents)[1]))
    f = _combined(flax, _FROWS, "scatter_mul", idx, False, None)
    with pytest.raises(NotImplementedError, match="unique_indices"):
        fcore.grad(lambda b: f(x, b).sum())(u)
    with pytest.raises(TypeError):
        f(x > 0, u > 0)
    jaxpr = fcore.make_jaxpr(f)(x, u)
    typecheck(jaxpr)
    assert "scatter-mul" in str(jaxpr)

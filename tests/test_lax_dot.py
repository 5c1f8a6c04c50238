"""``dot_general`` / ``dot`` of ``fcore.lax``, differentially against ``jax.lax``.

Operands hold small integers, so every product is exact in every dtype (bfloat16 and float16
accumulate in float32, like XLA's CPU backend) and results compare exactly.
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
from fcore.lax.dot import Precision, canonicalize_precision

Case = Callable[..., Any]
DT = np.dtype[Any]
DN = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
C64 = np.dtype(np.complex64)
DTYPES = (F32, I32, BOOL, BF16, F16, I8, U8, C64)


def rand(shape: Sequence[int], dtype: DT, seed: int = 0) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype == U8:
        return rng.integers(0, 4, shape).astype(dtype)
    if dtype == C64:
        return (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dtype)
    return rng.integers(-3, 4, shape).astype(dtype)


def assert_same(got: object, want: object) -> None:
    assert isinstance(got, fcore.Array), type(got)
    assert isinstance(want, jax.Array), type(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.weak_type == want.aval.weak_type, (got.weak_type, want.aval.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype in (BF16, F16):
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)


def check(case: Case, *args: Any) -> None:
    """Eager results equal JAX's; the staged jaxprs typecheck and agree on avals and params."""
    assert_same(case(flax, *args), case(jlax, *args))
    closed = fcore.make_jaxpr(lambda *a: case(flax, *a))(*args)
    typecheck(closed)
    jclosed = jax.make_jaxpr(lambda *a: case(jlax, *a))(*args)
    assert [(a.shape, a.dtype, a.weak_type) for a in closed.out_avals] == [
        (a.shape, a.dtype, a.weak_type) for a in jclosed.out_avals
    ]
    mine = [e for e in closed.eqns if e.primitive.name == "dot_general"]
    theirs = [e for e in jclosed.eqns if e.primitive.name == "dot_general"]
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert a.params["dimension_numbers"] == b.params["dimension_numbers"]
        assert a.params["preferred_element_type"] == b.params["preferred_element_type"]
        assert _precision_names(a.params["precision"]) == _precision_names(b.params["precision"])


def _precision_names(p: object) -> object:
    return None if p is None else tuple(getattr(q, "name") for q in p) if isinstance(p, tuple) else p


CONTRACTIONS: list[tuple[str, tuple[int, ...], tuple[int, ...], DN]] = [
    ("matmul", (2, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ("matmul_rhs_t", (2, 3), (4, 3), (((1,), (1,)), ((), ()))),
    ("matvec", (2, 3), (3,), (((1,), (0,)), ((), ()))),
    ("vecvec", (3,), (3,), (((0,), (0,)), ((), ()))),
    ("outer", (2,), (3,), (((), ()), ((), ()))),
    ("scalars", (), (), (((), ()), ((), ()))),
    ("scalar_times_matrix", (), (2, 3), (((), ()), ((), ()))),
    ("batch", (2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ("batch_last", (3, 4, 2), (4, 5, 2), (((1,), (0,)), ((2,), (2,)))),
    ("two_contracting", (2, 3, 4), (4, 3, 5), (((1, 2), (1, 0)), ((), ()))),
    ("contract_and_batch_mixed", (2, 3, 4), (4, 3, 2), (((1, 0), (1, 2)), ((2,), (0,)))),
    ("zero_contracting", (2, 0), (0, 3), (((1,), (0,)), ((), ()))),
    ("zero_free", (0, 3), (3, 2), (((1,), (0,)), ((), ()))),
    ("zero_batch", (0, 2, 3), (0, 3, 1), (((2,), (1,)), ((0,), (0,)))),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    ("lshape", "rshape", "dn"), [c[1:] for c in CONTRACTIONS], ids=[c[0] for c in CONTRACTIONS]
)
def test_dot_general_matches_jax(lshape: tuple[int, ...], rshape: tuple[int, ...], dn: DN, dtype: DT) -> None:
    check(lambda L, a, b: L.dot_general(a, b, dn), rand(lshape, dtype), rand(rshape, dtype, seed=1))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dot_matches_jax(dtype: DT) -> None:
    a, b, v = rand((2, 3), dtype), rand((3, 4), dtype, 1), rand((3,), dtype, 2)
    check(lambda L, a, b: L.dot(a, b), a, b)
    check(lambda L, a, v: L.dot(a, v), a, v)
    check(lambda L, v: L.dot(v, v), v)
    check(lambda L, v, a: L.dot(v, L.transpose(a, (1, 0))), v, a)
    check(lambda L, a, b: L.dot(a, b, dimension_numbers=(((1,), (0,)), ((), ()))), a, b)


MIXED: list[tuple[DT, DT]] = [(U8, I8), (F32, I8), (BF16, F16), (I32, F16), (C64, F32), (BOOL, I32), (I32, U8)]


@pytest.mark.parametrize(("ldt", "rdt"), MIXED, ids=str)
def test_mixed_dtypes_follow_xla_precision_order(ldt: DT, rdt: DT) -> None:
    a, b = rand((2, 3), ldt), rand((3, 2), rdt, 1)
    check(lambda L, a, b: L.dot(a, b), a, b)
    check(lambda L, a, b: L.dot(b, a), a, b)


PREFERRED: list[tuple[DT, Any]] = [
    (F32, np.float32),
    (BF16, np.float32),
    (F16, np.float32),
    (F32, ml_dtypes.bfloat16),
    (I8, np.int32),
    (I8, np.int8),
    (I8, np.float32),
    (I32, np.float32),
    (F32, np.int32),
    (BOOL, np.int32),
    (U8, np.uint32),
    (I32, np.int64),
]


@pytest.mark.parametrize(("dtype", "preferred"), PREFERRED, ids=str)
def test_preferred_element_type_matches_jax(dtype: DT, preferred: Any) -> None:
    a, b = rand((2, 3), dtype), rand((3, 2), dtype, 1)
    check(lambda L, a, b: L.dot(a, b, preferred_element_type=preferred), a, b)
    check(lambda L, a, b: L.dot_general(a, b, (((1,), (0,)), ((), ())), None, preferred), a, b)


def test_preferred_element_type_is_recorded_as_given() -> None:
    a = np.ones((2, 3), np.float32)
    closed = fcore.make_jaxpr(lambda a: flax.dot(a, flax.transpose(a, (1, 0))))(a)
    assert closed.eqns[-1].params["preferred_element_type"] is None
    closed = fcore.make_jaxpr(lambda a: flax.dot(a, flax.transpose(a, (1, 0)), preferred_element_type=np.float32))(a)
    assert closed.eqns[-1].params["preferred_element_type"] == np.float32


def test_accumulation_matches_jax() -> None:
    """bfloat16/float16 dots accumulate in float32 (XLA CPU); integer dots wrap."""
    check(lambda L: L.dot(np.array([256, 1, 1, 1, 1], ml_dtypes.bfloat16), np.ones(5, ml_dtypes.bfloat16)))
    check(lambda L: L.dot(np.array([60000, 60000, -60000], np.float16), np.ones(3, np.float16)))
    check(lambda L: L.dot(np.full(4, 100, np.int8), np.full(4, 3, np.int8)))
    check(lambda L: L.dot(np.array([1.5, 2.5], np.float32), np.array([1, 2], np.float32), preferred_element_type=np.int32))


def test_float_dot_close_to_jax_on_random_data() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5, 7)).astype(np.float32)
    b = rng.standard_normal((3, 7, 4)).astype(np.float32)
    dn: DN = (((2,), (1,)), ((0,), (0,)))
    got, want = flax.dot_general(a, b, dn), jlax.dot_general(a, b, dn, precision=jlax.Precision.HIGHEST)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got), np.einsum("bij,bjk->bik", a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "precision",
    [None, "highest", "float32", "bfloat16", "tensorfloat32", "default", ("high", "highest")],
    ids=str,
)
def test_precision_is_canonicalized_like_jax(precision: Any) -> None:
    a = rand((2, 3), F32)
    check(lambda L, a: L.dot(a, L.transpose(a, (1, 0)), precision=precision), a)
    jax_precision: Any = None if precision is None else (
        tuple(jlax.Precision(p) for p in precision) if isinstance(precision, tuple) else jlax.Precision(precision)
    )
    mine = fcore.make_jaxpr(lambda a: flax.dot(a, a, dimension_numbers=(((1,), (1,)), ((), ())), precision=precision))(a)
    theirs = jax.make_jaxpr(lambda a: jlax.dot(a, a, dimension_numbers=(((1,), (1,)), ((), ())), precision=jax_precision))(a)
    assert _precision_names(mine.eqns[0].params["precision"]) == _precision_names(theirs.eqns[0].params["precision"])


def test_precision_enum() -> None:
    assert Precision("highest") is Precision.HIGHEST
    assert canonicalize_precision(Precision.HIGH) == (Precision.HIGH, Precision.HIGH)
    assert canonicalize_precision(None) is None
    with pytest.raises(ValueError, match="precision"):
        canonicalize_precision("nonsense")
    closed = fcore.make_jaxpr(lambda a: flax.dot(a, a, precision=Precision.HIGHEST))(np.ones((2, 2), np.float32))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in str(closed)


def _weak(L: types.ModuleType, shape: tuple[int, ...]) -> Any:
    return L.broadcast_in_dim(2.0, shape, ())


WEAK_CASES: list[tuple[str, Case]] = [
    ("both_weak", lambda L: L.dot(_weak(L, (2, 3)), _weak(L, (3,)))),
    ("one_weak", lambda L: L.dot(_weak(L, (2, 3)), np.ones(3, np.float32))),
    ("weak_preferred", lambda L: L.dot(_weak(L, (3,)), _weak(L, (3,)), preferred_element_type=np.float32)),
    ("python_scalars", lambda L: L.dot_general(2.0, 3.0, (((), ()), ((), ())))),
    ("weak_int", lambda L: L.dot(L.broadcast_in_dim(2, (3,), ()), L.broadcast_in_dim(2, (3,), ()))),
]


@pytest.mark.parametrize("case", [c for _, c in WEAK_CASES], ids=[n for n, _ in WEAK_CASES])
def test_weak_types_match_jax(case: Case) -> None:
    check(case)


ERRORS: list[tuple[str, Case]] = [
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((1,), (1,)), ((), ())))),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((2,), (0,)), ((), ())))),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((1,), (-1,)), ((), ())))),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((1, 1), (0, 0)), ((), ())))),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((1,), (0,)), ((0,), ())))),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((1,), (0,)), ((1,), (1,))))),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((1,), (0,)), ((0,), (1,))))),
    ("dot_general", lambda L, a, b: L.dot_general(a, a, (((0, 1), (0, 1)), ((0,), (0,))))),
    ("dot_general", lambda L, a, b: L.dot(a, b, preferred_element_type=np.int8)),
    ("dot", lambda L, a, b: L.dot(np.ones((2, 2, 2), np.int32), b)),
    ("dot", lambda L, a, b: L.dot(a, a)),
    ("dot", lambda L, a, b: L.dot(np.int32(1), b)),
]


@pytest.mark.parametrize(("name", "case"), ERRORS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ERRORS)])
def test_errors_name_the_primitive(name: str, case: Case) -> None:
    a = np.ones((2, 3), np.int32)
    b = np.ones((3, 4), np.int32)
    with pytest.raises((TypeError, ValueError), match=name):
        case(flax, a, b)
    with pytest.raises((TypeError, ValueError)):
        case(jlax, a, b)
    with pytest.raises((TypeError, ValueError), match=name):
        fcore.make_jaxpr(lambda a, b: case(flax, a, b))(a, b)


# -- properties ---------------------------------------------------------------------------------
@st.composite
def contractions(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], DN]:
    """Random operand shapes and dimension numbers: batch, contracting and free axes, shuffled."""
    size = st.integers(0, 3)
    batch = draw(st.lists(size, max_size=2))
    contract = draw(st.lists(size, max_size=2))
    lfree = draw(st.lists(size, max_size=2))
    rfree = draw(st.lists(size, max_size=2))
    lroles = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))] + [("f", i) for i in range(len(lfree))]
    rroles = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))] + [("f", i) for i in range(len(rfree))]
    lroles = draw(st.permutations(lroles))
    rroles = draw(st.permutations(rroles))
    sizes = {"b": batch, "c": contract}
    lshape = tuple((sizes.get(k) or lfree)[i] for k, i in lroles)
    rshape = tuple((sizes.get(k) or rfree)[i] for k, i in rroles)
    # The contracting pairs may be listed in any order, as long as both sides agree.
    corder = draw(st.permutations(range(len(contract))))
    lc = tuple(lroles.index(("c", i)) for i in corder)
    rc = tuple(rroles.index(("c", i)) for i in corder)
    lb = tuple(lroles.index(("b", i)) for i in range(len(batch)))
    rb = tuple(rroles.index(("b", i)) for i in range(len(batch)))
    return lshape, rshape, ((lc, rc), (lb, rb))


@settings(max_examples=30, deadline=None)
@given(spec=contractions(), dtype=st.sampled_from((I32, F32, BF16)), seed=st.integers(0, 3))
def test_dot_general_property(spec: tuple[tuple[int, ...], tuple[int, ...], DN], dtype: DT, seed: int) -> None:
    lshape, rshape, dn = spec
    a, b = rand(lshape, dtype, seed), rand(rshape, dtype, seed + 1)
    got = flax.dot_general(a, b, dn)
    assert_same(got, jlax.dot_general(jnp.asarray(a), jnp.asarray(b), dn))
    # Against einsum: batch, then lhs free, then rhs free.
    (lc, rc), (lb, rb) = dn
    letters = iter("abcdefghijklmnop")
    lsub = [""] * len(lshape)
    rsub = [""] * len(rshape)
    for i, j in zip(lb, rb):
        lsub[i] = rsub[j] = next(letters)
    for i, j in zip(lc, rc):
        lsub[i] = rsub[j] = next(letters)
    for k in range(len(lshape)):
        lsub[k] = lsub[k] or next(letters)
    for k in range(len(rshape)):
        rsub[k] = rsub[k] or next(letters)
    out = "".join(lsub[i] for i in lb)
    out += "".join(lsub[k] for k in range(len(lshape)) if k not in lc and k not in lb)
    out += "".join(rsub[k] for k in range(len(rshape)) if k not in rc and k not in rb)
    expected = np.einsum(f"{''.join(lsub)},{''.join(rsub)}->{out}", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64), expected)

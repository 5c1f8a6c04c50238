"""Products (dot, matmul, einsum...), norms and an MLP loss, against ``jax.numpy``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore.core import jaxpr_as_fun
from test_numpy_common import BF16, assert_same, check, check_or_raises, modes, sample

DTYPE_PAIRS: list[tuple[Any, Any]] = [
    (np.float32, np.float32), (np.int8, np.float16), (np.bool_, np.bool_), (np.int8, np.int32),
    (np.float32, np.complex64), (BF16, np.float32), (np.uint8, np.int8), (np.int16, np.int16),
]


@pytest.mark.parametrize(("da", "db"), DTYPE_PAIRS, ids=str)
def test_products(da: Any, db: Any) -> None:
    a, b = sample(np.dtype(da), (3, 4), seed=41), sample(np.dtype(db), (4, 5), seed=42)
    with modes():
        cases: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("dot", (a, b), {}), ("matmul", (a, b), {}), ("dot", (a[0], b[:, 0]), {}), ("dot", (2.0, b), {}),
            ("dot", (a, 3), {}), ("matmul", (a, b[:, 0]), {}), ("matmul", (a[0], b), {}), ("inner", (a, b.T), {}),
            ("outer", (a, b), {}), ("vdot", (a, b.T), {}), ("tensordot", (a, b), {"axes": 1}),
            ("tensordot", (a, b), {"axes": ((1,), (0,))}), ("tensordot", (a, b.T), {"axes": ([1, 0], [0, 1])}),
            ("kron", (a, b), {}), ("dot", (a, b), {"preferred_element_type": np.float32}),
        ]
        for name, args, kw in cases:
            check_or_raises(lambda *v, n=name, k=kw: getattr(fnp, n)(*v, **k), lambda *v, n=name, k=kw: getattr(jnp, n)(*v, **k), *args)


EINSUMS: list[tuple[str, list[tuple[int, ...]]]] = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(5, 1, 3, 4), (2, 4, 6)]),
    ("i,i", [(4,), (4,)]), ("ij,j->i", [(3, 4), (4,)]), ("ijk->kji", [(2, 3, 4)]), ("ijk->j", [(2, 3, 4)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 1)]), ("i...->...", [(3, 2, 2)]), ("ij,kl->ijkl", [(2, 2), (3, 1)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("i,i->i", [(4,), (1,)]),
]


@pytest.mark.parametrize(("spec", "shapes"), EINSUMS, ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("dtype", [np.float32, np.int8, BF16], ids=str)
def test_einsum(spec: str, shapes: list[tuple[int, ...]], dtype: Any) -> None:
    ops = [sample(np.dtype(dtype), s, seed=43 + k) for k, s in enumerate(shapes)]
    with modes():
        check(lambda *v: fnp.einsum(spec, *v), lambda *v: jnp.einsum(spec, *v), *ops)


def test_einsum_mixed_dtypes_and_preferred() -> None:
    with modes():
        a, b = sample(np.dtype(np.int8), (3, 4), seed=1), sample(np.dtype(np.float16), (4, 2), seed=2)
        check(lambda x, y: fnp.einsum("ij,jk->ik", x, y), lambda x, y: jnp.einsum("ij,jk->ik", x, y), a, b)
        check(lambda x, y: fnp.einsum("ij,jk->ik", x, y, preferred_element_type=np.float32),
              lambda x, y: jnp.einsum("ij,jk->ik", x, y, preferred_element_type=np.float32), a, b)
        check(lambda x: fnp.einsum("->", x), lambda x: jnp.einsum("->", x), 2.0)
        check_or_raises(lambda x: fnp.einsum("i->", x), lambda x: jnp.einsum("i->", x), 2.0)


def test_batched_matmul_broadcasting() -> None:
    with modes():
        for sa, sb in [((5, 1, 3, 4), (2, 4, 6)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((1, 3, 4), (7, 4, 2)), ((3, 1, 2, 4), (1, 5, 4, 3))]:
            a, b = sample(np.dtype(np.float32), sa, seed=3), sample(np.dtype(np.float32), sb, seed=4)
            check(fnp.matmul, jnp.matmul, a, b)
            check(lambda x, y: fnp.asarray(x) @ y, lambda x, y: jnp.asarray(x) @ y, a, b)
        check(fnp.dot, jnp.dot, sample(np.dtype(np.float32), (2, 3, 4)), sample(np.dtype(np.float32), (5, 4, 2)))
        with pytest.raises(ValueError):
            fnp.matmul(np.ones((2, 3)), 2.0)
        with pytest.raises((TypeError, ValueError)):
            fnp.matmul(np.ones((2, 3)), np.ones((4, 2)))


def test_weak_products() -> None:
    with modes():
        check(lambda: fnp.dot(fnp.asarray(2.0), fnp.asarray(3.0)), lambda: jnp.dot(jnp.asarray(2.0), jnp.asarray(3.0)))
        check(lambda: fnp.full((2, 2), 2.0) @ fnp.full((2,), 1.0), lambda: jnp.full((2, 2), 2.0) @ jnp.full((2,), 1.0))
        check(lambda v: fnp.matmul(v, fnp.full((3, 2), 0.5)), lambda v: jnp.matmul(v, jnp.full((3, 2), 0.5)), np.ones((2, 3), np.float16))


@pytest.mark.parametrize("ord_", [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5])
def test_vector_norm(ord_: Any) -> None:
    with modes():
        for v in (np.arange(-3, 4.0, dtype=np.float32), np.arange(-3, 4), sample(np.dtype(np.complex64), (5,))):
            check(lambda u: fnp.linalg.norm(u, ord_), lambda u: jnp.linalg.norm(u, ord_), v)


@pytest.mark.parametrize("ord_", [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
def test_matrix_norm(ord_: Any) -> None:
    with modes():
        m = np.arange(-6, 6.0, dtype=np.float32).reshape(3, 4)
        check(lambda u: fnp.linalg.norm(u, ord_), lambda u: jnp.linalg.norm(u, ord_), m)
        check(lambda u: fnp.linalg.norm(u, ord_, axis=(1, 0), keepdims=True), lambda u: jnp.linalg.norm(u, ord_, axis=(1, 0), keepdims=True), m)
        check(lambda u: fnp.linalg.norm(u, None, 1), lambda u: jnp.linalg.norm(u, None, 1), m)


def _mlp_fcore(params: Any, x: Any, y: Any) -> Any:
    w1, b1, w2 = params
    h = fnp.tanh(x @ w1 + b1)
    pred = h @ w2
    return fnp.mean((pred - y) ** 2)


def _mlp_jax(params: Any, x: Any, y: Any) -> Any:
    w1, b1, w2 = params
    h = jnp.tanh(x @ w1 + b1)
    pred = h @ w2
    return jnp.mean((pred - y) ** 2)


def test_mlp_loss() -> None:
    rng = np.random.default_rng(0)
    params = (
        rng.normal(size=(8, 16)).astype(np.float32) * 0.3,
        rng.normal(size=(16,)).astype(np.float32) * 0.1,
        rng.normal(size=(16, 3)).astype(np.float32) * 0.3,
    )
    x = rng.normal(size=(32, 8)).astype(np.float32)
    y = rng.normal(size=(32, 3)).astype(np.float32)
    with modes():
        fparams = tuple(fnp.asarray(p) for p in params)
        got = _mlp_fcore(fparams, fnp.asarray(x), y)
        want = _mlp_jax(tuple(jnp.asarray(p) for p in params), jnp.asarray(x), y)
        assert_same(got, want, "mlp")
        closed = fcore.make_jaxpr(_mlp_fcore)(params, x, y)
        theirs = jax.make_jaxpr(_mlp_jax)(params, x, y)
        assert [(a.shape, a.dtype, a.weak_type) for a in closed.out_avals] == [(a.shape, a.dtype, a.weak_type) for a in theirs.out_avals]
        (staged,) = jaxpr_as_fun(closed)(*params, x, y)
        assert_same(staged, jax.jit(_mlp_jax)(params, x, y), "mlp staged")
        prims = {e.primitive.name for e in closed.eqns}
        assert "dot_general" in prims and "tanh" in prims and "reduce_sum" in prims


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=2), st.lists(st.integers(1, 3), min_size=0, max_size=2),
       st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))
def test_matmul_property(ba: list[int], bb: list[int], n: int, k: int, m: int) -> None:
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    a = rng.normal(size=(*ba, n, k)).astype(np.float32)
    bb2 = bb[-len(ba):] if ba and len(bb) >= len(ba) else bb
    b = rng.normal(size=(*[1 if i % 2 else d for i, d in enumerate(bb2)], k, m)).astype(np.float32)
    try:
        want = np.matmul(a, b)
    except ValueError:
        with pytest.raises(ValueError):
            fnp.matmul(a, b)
        return
    with modes():
        got = fnp.matmul(a, b)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        e = fnp.einsum("...nk,...km->...nm", a, b)
        np.testing.assert_allclose(np.asarray(e), want, rtol=1e-5, atol=1e-5)

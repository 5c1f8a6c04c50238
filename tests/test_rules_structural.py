"""Transformation and lowering rules of the structural primitives (``fcore.lax.shapes``,
``fcore.lax.slicing``, ``fcore.lax.gather_scatter``).

For every primitive: jvp against central differences (float64) and against ``jax.jvp``; the
transpose is the adjoint of the jvp (``<ybar, J t> == <J^T ybar, t>`` through ``fcore.vjp``) and
matches ``jax.vjp``; ``vmap`` equals stacking and ``jax.vmap`` for batch axes at several
positions; ``jit`` equals eager for several dtypes; the pure passes typecheck (the suite runs
with the verifier on, see ``conftest.py``).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Sequence
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import fcore
from fcore import lax as flax
from fcore.core import eval_jaxpr, typecheck
from fcore.lax import gather_scatter, slicing, stacking
from fcore.lax import shapes as shape_ops
from fcore.transforms import batch_jaxpr, jvp_jaxpr, linearize_jaxpr, transpose_jaxpr, vjp_jaxpr
from fcore.transforms.batching import batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules
from fcore.backend.lowering import lowering_rules

NpArray = np.ndarray[Any, Any]
DT = np.dtype[Any]
Rng = np.random.Generator

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)
BF16 = np.dtype(ml_dtypes.bfloat16)


def data(rng: Rng, shape: Sequence[int], dtype: DT) -> NpArray:
    """Small integers as ``dtype`` (exact in every dtype used here), or random booleans."""
    if dtype == BOOL:
        return rng.random(tuple(shape)) < 0.5
    return rng.integers(-8, 9, tuple(shape)).astype(dtype)


def ints(rng: Rng, lo: int, hi: int, shape: Sequence[int] = ()) -> NpArray:
    return np.asarray(rng.integers(lo, hi, tuple(shape)), np.int32)


def unique_rows(rng: Rng, n: int, k: int) -> NpArray:
    """``k`` distinct row indices of an axis of size ``n``, as a ``(k, 1)`` index array."""
    return np.asarray(rng.permutation(n)[:k], np.int32).reshape(k, 1)


@dataclasses.dataclass(frozen=True)
class Case:
    """``fn(L, *args)`` for ``L`` in (fcore.lax, jax.lax); ``make(rng, dtype)`` builds the args;
    ``linear`` lists the (floating) data arguments, the others are integer indices."""

    name: str
    fn: Callable[..., Any]
    make: Callable[[Rng, DT], list[NpArray]]
    linear: tuple[int, ...] = (0,)
    jax_vjp: bool = True  # False where JAX's own transpose rule fails (unsorted broadcast_dimensions)

    def f(self, L: types.ModuleType) -> Callable[..., Any]:
        return lambda *args: self.fn(L, *args)


def _gdn(L: types.ModuleType, *dims: tuple[int, ...]) -> Any:
    return L.GatherDimensionNumbers(*dims)


def _sdn(L: types.ModuleType, *dims: tuple[int, ...]) -> Any:
    return L.ScatterDimensionNumbers(*dims)


ROWS = ((1,), (0,), (0,))
BATCHED_G = ((2,), (1,), (1,), (0,), (0,))
BATCHED_S = ((2,), (1,), (1,), (0,), (0,))

CASES: list[Case] = [
    Case("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (2, 3, 4), (1, 2)), lambda r, dt: [data(r, (3, 1), dt)]),
    Case("broadcast_in_dim_permuted", lambda L, x: L.broadcast_in_dim(x, (3, 4, 2), (2, 0)),
         lambda r, dt: [data(r, (2, 3), dt)], jax_vjp=False),
    Case("broadcast_in_dim_scalar", lambda L, x: L.broadcast_in_dim(x, (2, 3), ()), lambda r, dt: [data(r, (), dt)]),
    Case("reshape", lambda L, x: L.reshape(x, (4, 6)), lambda r, dt: [data(r, (2, 3, 4), dt)]),
    Case("reshape_dimensions", lambda L, x: L.reshape(x, (6,), (1, 0)), lambda r, dt: [data(r, (2, 3), dt)]),
    Case("squeeze", lambda L, x: L.squeeze(x, (0, 2)), lambda r, dt: [data(r, (1, 3, 1), dt)]),
    Case("transpose", lambda L, x: L.transpose(x, (2, 0, 1)), lambda r, dt: [data(r, (2, 3, 4), dt)]),
    Case("concatenate", lambda L, x, y, z: L.concatenate([x, y, z], 1),
         lambda r, dt: [data(r, (2, 3), dt), data(r, (2, 1), dt), data(r, (2, 2), dt)], (0, 1, 2)),
    Case("pad", lambda L, x, v: L.pad(x, v, ((1, -1, 1), (-2, 2, 0))),
         lambda r, dt: [data(r, (3, 4), dt), data(r, (), dt)], (0, 1)),
    Case("pad_interior", lambda L, x, v: L.pad(x, v, ((0, 0, 2), (2, 1, 1))),
         lambda r, dt: [data(r, (2, 3), dt), data(r, (), dt)], (0, 1)),
    Case("slice", lambda L, x: L.slice(x, (1, 0), (4, 6)), lambda r, dt: [data(r, (5, 6), dt)]),
    Case("slice_strided", lambda L, x: L.slice(x, (1, 0), (5, 6), (2, 4)), lambda r, dt: [data(r, (5, 6), dt)]),
    Case("dynamic_slice", lambda L, x, i, j: L.dynamic_slice(x, (i, j), (2, 3)),
         lambda r, dt: [data(r, (5, 6), dt), ints(r, -6, 8), ints(r, -7, 9)]),
    Case("dynamic_update_slice", lambda L, x, u, i, j: L.dynamic_update_slice(x, u, (i, j)),
         lambda r, dt: [data(r, (5, 6), dt), data(r, (2, 3), dt), ints(r, -6, 8), ints(r, -7, 9)], (0, 1)),
    Case("rev", lambda L, x: L.rev(x, (0, 2)), lambda r, dt: [data(r, (2, 3, 4), dt)]),
    Case("gather_rows_clip", lambda L, x, i: L.gather(x, i, _gdn(L, *ROWS), (1, 4), mode="clip"),
         lambda r, dt: [data(r, (5, 4), dt), ints(r, -2, 7, (3, 1))]),
    Case("gather_rows_fill", lambda L, x, i: L.gather(x, i, _gdn(L, *ROWS), (1, 4), mode="fill", fill_value=3),
         lambda r, dt: [data(r, (5, 4), dt), ints(r, -2, 7, (3, 1))]),
    Case("gather_points", lambda L, x, i: L.gather(x, i, _gdn(L, (), (0, 1), (0, 1)), (1, 1), mode="clip"),
         lambda r, dt: [data(r, (3, 4), dt), ints(r, 0, 3, (4, 2))]),
    Case("gather_windows", lambda L, x, i: L.gather(x, i, _gdn(L, (1,), (), (0,)), (2,), mode="clip"),
         lambda r, dt: [data(r, (6,), dt), ints(r, 0, 5, (3, 1))]),
    Case("gather_batching_dims", lambda L, x, i: L.gather(x, i, _gdn(L, *BATCHED_G), (1, 1, 3), mode="clip"),
         lambda r, dt: [data(r, (2, 5, 3), dt), ints(r, 0, 5, (2, 4, 1))]),
    Case("scatter_add", lambda L, x, i, u: L.scatter_add(x, i, u, _sdn(L, *ROWS)),
         lambda r, dt: [data(r, (5, 4), dt), ints(r, 0, 5, (3, 1)), data(r, (3, 4), dt)], (0, 2)),
    Case("scatter_add_clip", lambda L, x, i, u: L.scatter_add(x, i, u, _sdn(L, *ROWS), mode="clip"),
         lambda r, dt: [data(r, (5, 4), dt), ints(r, -2, 7, (3, 1)), data(r, (3, 4), dt)], (0, 2)),
    Case("scatter_add_batching_dims", lambda L, x, i, u: L.scatter_add(x, i, u, _sdn(L, *BATCHED_S)),
         lambda r, dt: [data(r, (2, 5, 3), dt), ints(r, 0, 5, (2, 2, 1)), data(r, (2, 2, 3), dt)], (0, 2)),
    Case("scatter", lambda L, x, i, u: L.scatter(x, i, u, _sdn(L, *ROWS)),
         lambda r, dt: [data(r, (5, 4), dt), unique_rows(r, 5, 3), data(r, (3, 4), dt)], (0, 2)),
    Case("scatter_unique", lambda L, x, i, u: L.scatter(x, i, u, _sdn(L, *ROWS), unique_indices=True),
         lambda r, dt: [data(r, (5, 4), dt), unique_rows(r, 5, 3), data(r, (3, 4), dt)], (0, 2)),
    Case("scatter_points", lambda L, x, i, u: L.scatter(x, i, u, _sdn(L, (), (0, 1), (0, 1)), mode="clip"),
         lambda r, dt: [data(r, (3, 4), dt), np.array([[0, 1], [2, 3], [1, 0]], np.int32), data(r, (3,), dt)], (0, 2)),
]
CASE_IDS = [c.name for c in CASES]
NO_BOOL = {"scatter_add", "scatter_add_clip", "scatter_add_batching_dims"}


def args_for(case: Case, dtype: DT, seed: int = 0) -> list[NpArray]:
    return case.make(np.random.default_rng(seed), dtype)


def split(case: Case, args: list[NpArray]) -> tuple[Callable[..., Any], list[NpArray]]:
    """``case`` as a function of its linear arguments only (the indices closed over)."""

    def f(L: types.ModuleType) -> Callable[..., Any]:
        def g(*lin: Any) -> Any:
            full: list[Any] = list(args)
            for k, v in zip(case.linear, lin):
                full[k] = v
            return case.fn(L, *full)

        return g

    return f, [args[k] for k in case.linear]


def close(got: Any, want: Any, tol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype == BF16:
        g, w = g.astype(np.float32), w.astype(np.float32)
    if tol:
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(g, w)


# -- (1) jvp ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_jvp_matches_central_differences_and_jax(case: Case) -> None:
    with fcore.enable_x64(), jax.enable_x64(True):
        rng = np.random.default_rng(1)
        args = [a.astype(F64) if k in case.linear else a for k, a in enumerate(args_for(case, F64))]
        fn, lin = split(case, args)
        tangents = [rng.normal(size=a.shape) for a in lin]
        out, t_out = fcore.jvp(fn(flax), lin, tangents)
        assert np.asarray(t_out).dtype == F64
        eps = 1e-3  # every case is affine in its data arguments: differences are exact up to rounding
        plus = np.asarray(fn(flax)(*[a + eps * t for a, t in zip(lin, tangents)]))
        minus = np.asarray(fn(flax)(*[a - eps * t for a, t in zip(lin, tangents)]))
        close(out, fn(flax)(*lin))
        close(t_out, (plus - minus) / (2 * eps), 1e-9)
        j_out, j_t = jax.jvp(fn(jlax), lin, tangents)
        close(out, j_out)
        close(t_out, j_t, 1e-12)


# -- (2) transpose: the adjoint of the jvp; grad as JAX ---------------------------------------
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_vjp_is_adjoint_of_jvp_and_matches_jax(case: Case) -> None:
    with fcore.enable_x64(), jax.enable_x64(True):
        rng = np.random.default_rng(2)
        args = [a.astype(F64) if k in case.linear else a for k, a in enumerate(args_for(case, F64))]
        fn, lin = split(case, args)
        tangents = [rng.normal(size=a.shape) for a in lin]
        _, t_out = fcore.jvp(fn(flax), lin, tangents)
        out, pullback = fcore.vjp(fn(flax), *lin)
        ybar = rng.normal(size=np.shape(out))
        cts = pullback(ybar)
        assert len(cts) == len(lin)
        for ct, a in zip(cts, lin):
            assert np.shape(ct) == a.shape and np.asarray(ct).dtype == F64
        lhs = float(np.sum(ybar * np.asarray(t_out)))
        rhs = sum(float(np.sum(np.asarray(ct) * t)) for ct, t in zip(cts, tangents))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)
        if case.jax_vjp:
            _, j_pullback = jax.vjp(fn(jlax), *lin)
            for ct, jct in zip(cts, j_pullback(ybar)):
                close(ct, jct, 1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c.name in ("pad", "transpose", "gather_rows_fill", "scatter")],
                         ids=lambda c: c.name)
def test_grad_matches_jax_grad(case: Case) -> None:
    args = args_for(case, F32)
    fn, lin = split(case, args)
    w = data(np.random.default_rng(3), np.shape(fn(flax)(*lin)), F32)

    def loss(L: types.ModuleType) -> Callable[..., Any]:
        def g(*xs: Any) -> Any:
            y = L.mul(fn(L)(*xs), w)
            return L.reduce_sum(y, tuple(range(y.ndim)))

        return g

    argnums = tuple(range(len(lin)))
    for got, want in zip(fcore.grad(loss(flax), argnums)(*lin), jax.grad(loss(jlax), argnums)(*lin)):
        close(got, want)


# -- (3) vmap --------------------------------------------------------------------------------
def axes_variants(case: Case) -> list[tuple[int | None, ...]]:
    """Batch axes at 0, 1, -1 and None over the arguments (a few combinations per case)."""
    ranks = [np.ndim(a) for a in args_for(case, F32)]
    n = len(ranks)
    out: list[tuple[int | None, ...]] = [(0,) * n, (-1,) * n]
    out.append(tuple(1 if k == 0 and r >= 1 else (None if k else 0) for k, r in enumerate(ranks)))
    if n > 1:
        out.append((None,) + tuple(min(1, r) for r in ranks[1:]))
        out.append(tuple(0 if k == n - 1 else None for k in range(n)))
    return list(dict.fromkeys(out))


VMAP_PARAMS = [(c, ax) for c in CASES for ax in axes_variants(c)]


def stacked(case: Case, axes: Sequence[int | None], size: int) -> list[NpArray]:
    per = [args_for(case, F32, seed) for seed in range(size)]
    return [
        per[0][k] if ax is None else np.stack([p[k] for p in per], axis=ax) for k, ax in enumerate(axes)
    ]


@pytest.mark.parametrize(("case", "axes"), VMAP_PARAMS, ids=[f"{c.name}-{ax}" for c, ax in VMAP_PARAMS])
def test_vmap_equals_stacking_and_jax(case: Case, axes: tuple[int | None, ...]) -> None:
    size = 3
    batched = stacked(case, axes, size)
    got = fcore.vmap(case.f(flax), in_axes=axes)(*batched)
    examples = [
        [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(batched, axes)] for b in range(size)
    ]
    close(got, np.stack([np.asarray(case.fn(flax, *ex)) for ex in examples]))
    close(got, jax.vmap(case.f(jlax), in_axes=axes)(*batched))
    # the pure pass agrees with the front end (and its output typechecks)
    closed = fcore.make_jaxpr(case.f(flax))(*args_for(case, F32))
    out, (out_dim,) = batch_jaxpr(closed, size, list(axes), out_dims=[0])
    typecheck(out)
    close(eval_jaxpr(out.jaxpr, out.consts, *batched)[0], got)


def test_vmap_out_axes_and_nested() -> None:
    x = data(np.random.default_rng(0), (2, 3, 4, 5), F32)
    f: Callable[..., Any] = lambda L, x: L.pad(L.transpose(L.rev(x, (0,)), (1, 0)), 0.0, ((1, 0, 1), (0, -1, 0)))  # noqa: E731
    got = fcore.vmap(fcore.vmap(lambda x: f(flax, x), in_axes=1, out_axes=-1), in_axes=3)(x)
    want = jax.vmap(jax.vmap(lambda x: f(jlax, x), in_axes=1, out_axes=-1), in_axes=3)(x)
    close(got, want)


def test_vmap_batched_padding_value_and_index_only_batching() -> None:
    rng = np.random.default_rng(4)
    x, vs = data(rng, (2, 3), F32), data(rng, (4,), F32)
    f: Callable[..., Any] = lambda L, x, v: L.pad(x, v, ((1, -1, 1), (0, 2, 0)))  # noqa: E731
    close(fcore.vmap(lambda v: f(flax, x, v))(vs), jax.vmap(lambda v: f(jlax, x, v))(vs))
    # dynamic_update_slice with only the update batched (operand broadcast), and only indices batched
    u = data(rng, (4, 1, 2), F32)
    i = np.array([0, 1, -1, 5], np.int32)
    g: Callable[..., Any] = lambda L, u, i: L.dynamic_update_slice(x, u, (i, np.int32(1)))  # noqa: E731
    close(fcore.vmap(lambda u: g(flax, u, np.int32(1)))(u), jax.vmap(lambda u: g(jlax, u, np.int32(1)))(u))
    close(fcore.vmap(lambda i: g(flax, u[0], i))(i), jax.vmap(lambda i: g(jlax, u[0], i))(i))
    close(fcore.vmap(lambda i: flax.dynamic_slice(x, (0, i), (2, 2)))(i), jax.vmap(lambda i: jlax.dynamic_slice(x, (0, i), (2, 2)))(i))


def test_vmap_of_grad_and_grad_of_vmap() -> None:
    rng = np.random.default_rng(5)
    xs, idx = data(rng, (3, 5, 4), F32), ints(rng, 0, 5, (3, 2, 1))

    def loss(L: types.ModuleType) -> Callable[[Any, Any], Any]:
        def g(x: Any, i: Any) -> Any:
            y = L.gather(L.rev(x, (1,)), i, _gdn(L, *ROWS), (1, 4), mode="clip")
            first = L.reshape(L.slice(i, (0, 0), (1, 1)), ())
            z = L.dynamic_slice(L.concatenate([y, y], 0), (first, np.int32(1)), (2, 3))
            return L.reduce_sum(L.mul(z, z), (0, 1))

        return g

    close(fcore.vmap(fcore.grad(loss(flax)))(xs, idx), jax.vmap(jax.grad(loss(jlax)))(xs, idx))
    close(
        fcore.grad(lambda x: flax.reduce_sum(fcore.vmap(loss(flax))(x, idx), (0,)))(xs),
        jax.grad(lambda x: jlax.reduce_sum(jax.vmap(loss(jlax))(x, idx), (0,)))(xs),
    )


def test_vmap_with_empty_batch() -> None:
    x, i = np.zeros((0, 5, 4), np.float32), np.zeros((0, 2, 1), np.int32)
    out = fcore.vmap(lambda x, i: flax.gather(x, i, _gdn(flax, *ROWS), (1, 4), mode="clip"))(x, i)
    assert out.shape == (0, 2, 4)
    out = fcore.vmap(lambda x, i: flax.dynamic_slice(x, (flax.reshape(flax.slice(i, (0, 0), (1, 1)), ()), np.int32(0)), (2, 3)))(x, i)
    assert out.shape == (0, 2, 3)


# -- (4) jit ---------------------------------------------------------------------------------
JIT_PARAMS = [(c, dt) for c in CASES for dt in (F32, I32, BOOL, BF16) if not (dt == BOOL and c.name in NO_BOOL)]


@pytest.mark.parametrize(("case", "dtype"), JIT_PARAMS, ids=[f"{c.name}-{dt}" for c, dt in JIT_PARAMS])
def test_jit_equals_eager(case: Case, dtype: DT) -> None:
    args = args_for(case, dtype)
    got = fcore.jit(case.f(flax))(*args)
    want = case.fn(flax, *args)
    assert got.dtype == want.dtype and got.shape == want.shape
    close(got, want)


JIT_EDGE: list[tuple[str, Callable[..., Any], list[NpArray]]] = [
    ("scalar_ops", lambda x: flax.rev(flax.slice(flax.pad(flax.dynamic_slice(x, (), ()), 0.0, ()), (), ()), ()),
     [np.float32(2.5) * np.ones((), np.float32)]),
    ("empty", lambda x: (
        flax.concatenate([flax.pad(x, 1.0, ((1, 1, 2), (0, 0, 0))), flax.reshape(flax.transpose(x, (1, 0)), (0, 3))], 0),
        flax.rev(flax.broadcast_in_dim(x, (2, 0, 3), (1, 2)), (0, 1)),
    ), [np.zeros((0, 3), np.float32)]),
    ("iota", lambda: (flax.iota(np.int32, 5), flax.broadcasted_iota(BF16, (2, 3), 1), flax.broadcasted_iota(np.float32, (2, 0), 0)), []),
    ("uint8_indices", lambda x, i: (flax.dynamic_slice(x, (i, i), (2, 2)),
                                     flax.gather(x, flax.reshape(flax.broadcast_in_dim(i, (2,), ()), (1, 2)),
                                                 _gdn(flax, (), (0, 1), (0, 1)), (1, 1), mode="fill")),
     [np.arange(20, dtype=np.float32).reshape(4, 5), np.array(3, np.uint8)]),
    ("gather_fill_default", lambda x, i: flax.gather(x, i, _gdn(flax, *ROWS), (1, 4), mode="fill"),
     [np.arange(20, dtype=np.int32).reshape(5, 4), np.array([[4], [5], [-1]], np.int32)]),
    ("scatter_bool", lambda x, i, u: flax.scatter(x, i, u, _sdn(flax, *ROWS), mode="clip"),
     [np.zeros((5, 4), np.bool_), np.array([[9], [-3]], np.int32), np.ones((2, 4), np.bool_)]),
]


@pytest.mark.parametrize(("name", "f", "args"), JIT_EDGE, ids=[e[0] for e in JIT_EDGE])
def test_jit_edge_cases(name: str, f: Callable[..., Any], args: list[NpArray]) -> None:
    got, want = fcore.jit(f)(*args), f(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype
        close(g, w)


def test_jit_of_vmap_and_grad() -> None:
    """The batched forms (gather/scatter with batching dims, pad by select) and transposes lower."""
    rng = np.random.default_rng(6)
    x, u, i, j = data(rng, (3, 5, 6), F32), data(rng, (3, 2, 3), F32), ints(rng, -6, 8, (3,)), ints(rng, 0, 5, (3,))
    vs = data(rng, (3,), F32)

    def f(L: types.ModuleType, x: Any, u: Any, i: Any, j: Any, v: Any) -> Any:
        a = L.dynamic_update_slice(x, u, (i, j))
        b = L.dynamic_slice(a, (j, i), (2, 3))
        return L.pad(b, v, ((1, 0, 1), (0, -1, 0)))

    got = fcore.jit(fcore.vmap(lambda *a: f(flax, *a)))(x, u, i, j, vs)
    close(got, jax.vmap(lambda *a: f(jlax, *a))(x, u, i, j, vs))
    close(got, fcore.vmap(lambda *a: f(flax, *a))(x, u, i, j, vs))

    rows_idx = np.array([[0], [5], [7], [-1]], np.int32)  # two out of bounds: filled

    def g(L: types.ModuleType, x: Any, u: Any, v: Any) -> Any:
        rows = L.gather(L.transpose(x, (1, 0)), rows_idx, _gdn(L, *ROWS), (1, 5), mode="fill", fill_value=0)
        y = L.scatter(L.rev(x, (0,)), np.array([[1], [3]], np.int32), L.slice(u, (0, 0), (2, 6)), _sdn(L, *ROWS),
                      unique_indices=True)
        z = L.add(L.pad(rows, v, ((0, 1, 0), (1, 0, 0))), L.broadcast_in_dim(L.reduce_sum(u, (0,)), (5, 6), (1,)))
        return L.slice(L.mul(y, z), (0, 1), (5, 6), (2, 2))

    x2, u2, v2 = data(rng, (5, 6), F32), data(rng, (3, 6), F32), np.array(2, np.float32)
    _, pullback = fcore.vjp(fcore.jit(lambda x, u, v: g(flax, x, u, v)), x2, u2, v2)
    _, j_pullback = jax.vjp(lambda x, u, v: g(jlax, x, u, v), x2, u2, v2)
    ybar = data(rng, (3, 3), F32)
    for a, b in zip(pullback(ybar), j_pullback(ybar)):
        close(a, b)
    # a boolean batched padding value, under jit
    bx, bv = np.array([[True, False], [False, True]]), np.array([True, False, True])
    h: Callable[..., Any] = lambda L: lambda v: L.pad(bx, v, ((1, 0, 1), (0, -1, 0)))  # noqa: E731
    close(fcore.jit(fcore.vmap(h(flax)))(bv), jax.vmap(h(jlax))(bv))


# -- (5) the pure passes ---------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_passes_typecheck_and_agree(case: Case) -> None:
    args = args_for(case, F32)
    fn, lin = split(case, args)
    closed = fcore.make_jaxpr(fn(flax))(*lin)
    n = len(lin)
    jvp, out_nz = jvp_jaxpr(closed, [True] * n, True)
    typecheck(jvp)
    rng = np.random.default_rng(7)
    tangents = [data(rng, a.shape, F32) for a in lin]
    primal, tangent = eval_jaxpr(jvp.jaxpr, jvp.consts, *lin, *tangents)
    close(tangent, fcore.jvp(fn(flax), lin, tangents)[1])
    primal_j, linear, num_res = linearize_jaxpr(closed)
    typecheck(linear)
    res = eval_jaxpr(primal_j.jaxpr, primal_j.consts, *lin)[1:]
    transposed = transpose_jaxpr(linear, [False] * num_res + [True] * n)
    typecheck(transposed)
    ybar = data(rng, np.shape(primal), F32)
    cts = eval_jaxpr(transposed.jaxpr, transposed.consts, *res, ybar)
    for ct, want in zip(cts, fcore.vjp(fn(flax), *lin)[1](ybar)):
        close(ct, want)
    typecheck(vjp_jaxpr(closed)[1])
    typecheck(batch_jaxpr(closed, 2, [0] * n)[0])


def test_transpose_jaxpr_of_each_linear_primitive_directly() -> None:
    """``transpose_jaxpr`` on jaxprs whose only equation is the primitive (indices non-linear)."""
    rng = np.random.default_rng(8)
    for case in CASES:
        args = args_for(case, F32)
        closed = fcore.make_jaxpr(case.f(flax))(*args)
        linear_mask = [k in case.linear for k in range(len(args))]
        transposed = transpose_jaxpr(closed, linear_mask)
        typecheck(transposed)
        # <ybar, f(x)> == <f^T ybar, x> (f is linear in its data arguments, except the fill value)
        if case.name == "gather_rows_fill":
            continue
        out = np.asarray(case.fn(flax, *args), np.float64)
        ybar = data(rng, out.shape, F32)
        nonlin = [a for k, a in enumerate(args) if k not in case.linear]
        cts = eval_jaxpr(transposed.jaxpr, transposed.consts, *nonlin, ybar)
        lhs = float(np.sum(ybar * out))
        rhs = sum(float(np.sum(np.asarray(ct, np.float64) * args[k])) for ct, k in zip(cts, case.linear))
        assert lhs == rhs, case.name


def test_scatter_jvp_with_repeated_indices() -> None:
    """Repeated indices: the tangent follows the update that wins (ids scattered and read back)."""
    with fcore.enable_x64():
        rng = np.random.default_rng(9)
        x, u = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
        idx = np.array([[1], [3], [1], [7]], np.int32)
        f: Callable[..., Any] = lambda x, u: flax.scatter(x, idx, u, _sdn(flax, *ROWS))  # noqa: E731
        tx, tu = rng.normal(size=x.shape), rng.normal(size=u.shape)
        out, t = fcore.jvp(f, (x, u), (tx, tu))
        close(out, f(x, u))
        close(t, f(tx, tu), 1e-12)  # scatter is linear in (operand, updates) for fixed indices
        _, pullback = fcore.vjp(f, x, u)
        ybar = rng.normal(size=out.shape)
        ct_x, ct_u = pullback(ybar)
        np.testing.assert_allclose(np.sum(ybar * np.asarray(t)), np.sum(np.asarray(ct_x) * tx) + np.sum(np.asarray(ct_u) * tu))
        assert np.all(np.asarray(ct_u)[0] == 0) and np.all(np.asarray(ct_u)[3] == 0)  # lost / dropped updates


def test_gather_fill_tangent_is_zero_where_filled() -> None:
    x, i = np.ones((5, 4), np.float32), np.array([[1], [9]], np.int32)
    f: Callable[..., Any] = lambda x: flax.gather(x, i, _gdn(flax, *ROWS), (1, 4), mode="fill")  # noqa: E731
    out, t = fcore.jvp(f, (x,), (np.ones_like(x),))
    assert np.isnan(np.asarray(out)[1]).all()
    close(t, np.array([[1] * 4, [0] * 4], np.float32))
    close(fcore.grad(lambda x: flax.reduce_sum(flax.mul(f(x), 0.0 + np.array([[1.0] * 4, [0.0] * 4], np.float32)), (0, 1)))(x),
          np.array([[0] * 4, [1] * 4, [0] * 4, [0] * 4, [0] * 4], np.float32))


def test_out_of_bounds_transposes_are_exact_adjoints() -> None:
    """Broken promises: a PROMISE_IN_BOUNDS gather clamps (as XLA) and a scatter drops; the
    transposes do the same, eagerly and under jit."""
    x = data(np.random.default_rng(10), (5, 4), F32)
    i = np.array([[7], [-2], [1]], np.int32)
    fs: list[Callable[..., Any]] = [
        lambda x: flax.gather(x, i, _gdn(flax, *ROWS), (1, 4), mode="promise_in_bounds"),
        lambda x: flax.scatter_add(x, i, flax.slice(x, (0, 0), (3, 4)), _sdn(flax, *ROWS), mode="promise_in_bounds"),
        lambda x: flax.scatter(x, i, flax.slice(x, (0, 0), (3, 4)), _sdn(flax, *ROWS), mode="promise_in_bounds"),
    ]
    for f in fs:
        out, pullback = fcore.vjp(f, x)
        ybar = data(np.random.default_rng(11), out.shape, F32)
        (ct,) = pullback(ybar)
        assert float(np.sum(ybar * np.asarray(out))) == float(np.sum(np.asarray(ct) * x))
        close(fcore.jit(lambda x, y: fcore.vjp(f, x)[1](y)[0])(x, ybar), ct)


def test_iota_rules() -> None:
    f: Callable[..., Any] = lambda x: flax.mul(x, flax.convert_element_type(flax.iota(np.int32, 3), np.float32))  # noqa: E731
    x = np.ones(3, np.float32)
    close(fcore.jvp(f, (x,), (x,))[1], np.arange(3, dtype=np.float32))
    close(fcore.vmap(f)(np.ones((2, 3), np.float32)), np.tile(np.arange(3, dtype=np.float32), (2, 1)))
    closed = fcore.make_jaxpr(lambda: flax.broadcasted_iota(np.float32, (2, 3), 1))()
    typecheck(jvp_jaxpr(closed, [], True)[0])
    assert shape_ops.iota_p in batching_rules and shape_ops.iota_p in lowering_rules


def test_every_primitive_has_its_rules() -> None:
    prims = [getattr(m, n) for m in (shape_ops, slicing, gather_scatter, stacking) for n in m.__all__ if n.endswith("_p")]
    assert len(prims) == 22
    for p in prims:
        assert p in jvp_rules and p in batching_rules and p in lowering_rules, p
        if p not in (shape_ops.iota_p, gather_scatter.scatter_min_p, gather_scatter.scatter_max_p):  # not linear in anything
            assert p in transpose_rules, p


def test_gather_scatter_params_parse_back() -> None:
    from fcore.core import parse_jaxpr

    x, i = np.ones((5, 4), np.float32), np.zeros((2, 1), np.int32)
    closed = fcore.make_jaxpr(
        lambda x, i: flax.scatter(x, i, flax.gather(x, i, _gdn(flax, *ROWS), (1, 4), mode="clip"), _sdn(flax, *ROWS))
    )(x, i)
    assert parse_jaxpr(str(closed.jaxpr)) == closed.jaxpr


# -- hypothesis: random shapes, permutations, slices and paddings -----------------------------
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, data_=st.data())
def test_random_transpose_reshape_vmap_and_adjoint(shape: tuple[int, ...], data_: st.DataObject) -> None:
    perm = tuple(data_.draw(st.permutations(range(len(shape)))))
    axis = data_.draw(st.integers(-len(shape) - 1, len(shape)))
    x = data(np.random.default_rng(len(shape)), shape, F32)
    g: Callable[..., Any] = lambda x: flax.reshape(flax.transpose(x, perm), (int(np.prod(shape)),))  # noqa: E731
    xs = np.stack([x, x + 1, -x], axis=axis)
    got = fcore.vmap(g, in_axes=axis)(xs)
    close(got, np.stack([np.transpose(np.take(xs, b, axis=axis), perm).reshape(-1) for b in range(3)]))
    _, pullback = fcore.vjp(g, x)
    ybar = data(np.random.default_rng(1), (x.size,), F32)
    (ct,) = pullback(ybar)
    assert float(np.sum(ybar * np.asarray(g(x)))) == float(np.sum(np.asarray(ct) * x))


@st.composite
def slices(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    shape = draw(shapes)
    starts, limits, strides = [], [], []
    for d in shape:
        s = draw(st.integers(0, d))
        starts.append(s)
        limits.append(draw(st.integers(s, d)))
        strides.append(draw(st.integers(1, 3)))
    return shape, tuple(starts), tuple(limits), tuple(strides)


@settings(max_examples=30, deadline=None)
@given(spec=slices())
def test_random_slice_adjoint_and_vmap(spec: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]) -> None:
    shape, starts, limits, strides = spec
    x = data(np.random.default_rng(0), shape, F32)
    f: Callable[..., Any] = lambda x: flax.slice(x, starts, limits, strides)  # noqa: E731
    out, pullback = fcore.vjp(f, x)
    ybar = data(np.random.default_rng(1), out.shape, F32)
    (ct,) = pullback(ybar)
    assert float(np.sum(ybar * np.asarray(out))) == float(np.sum(np.asarray(ct) * x))
    xs = np.stack([x, 2 * x], axis=-1)
    close(fcore.vmap(f, in_axes=-1)(xs), np.stack([np.asarray(f(x)), np.asarray(f(2 * x))]))


pad_configs = st.lists(st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(0, 2)), min_size=1, max_size=2)


@settings(max_examples=30, deadline=None)
@given(config=pad_configs, data_=st.data())
def test_random_pad_adjoint_and_vmap(config: list[tuple[int, int, int]], data_: st.DataObject) -> None:
    shape = tuple(data_.draw(st.integers(1, 4)) for _ in config)
    cfg = tuple(config)
    assume(all(lo + hi + d + (d - 1) * i >= 0 for d, (lo, hi, i) in zip(shape, cfg)))
    f: Callable[..., Any] = lambda x, v: flax.pad(x, v, cfg)  # noqa: E731
    x = data(np.random.default_rng(0), shape, F32)
    v = np.float32(3) * np.ones((), np.float32)
    out, pullback = fcore.vjp(f, x, v)
    ybar = data(np.random.default_rng(1), out.shape, F32)
    ct_x, ct_v = pullback(ybar)
    lhs = float(np.sum(ybar * np.asarray(out)))
    assert lhs == float(np.sum(np.asarray(ct_x) * x)) + float(np.asarray(ct_v) * v)
    vs = np.array([1, -2], np.float32)
    close(fcore.vmap(f, in_axes=(None, 0))(x, vs), np.stack([np.asarray(f(x, vv)) for vv in vs]))

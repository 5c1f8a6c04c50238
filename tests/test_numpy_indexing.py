"""``x[idx]`` and ``x.at[idx]`` of fcore arrays against ``jax.numpy``, eagerly and traced."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore.config import numpy_dtype_promotion
from fcore.core import jaxpr_as_fun
from fcore.errors import TypePromotionError
from test_numpy_common import DTYPES, assert_same, check, modes, sample

I = np.array
X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

INDICES: list[Any] = [
    0, -1, 5, -7, (1, 2), (slice(None), 1), slice(1, None), slice(None, None, -1), slice(3, 0, -2),
    (Ellipsis, 1), (None, 0, None), (0, Ellipsis, None), (slice(0, 2), None, slice(None, None, 2)),
    I([0, 1, 1]), I([[0, -1], [1, 0]]), (I([0, 1]), I([1, 2])), (0, slice(None), I([1, 2])),
    (I([0, 1]), slice(None), I([1, 2])), (slice(None), I([0, 2]), I([[1], [3]])), (Ellipsis, I([0, 4, -1])),
    (I([1]), None, I([0])), (I([5, -9]),), (slice(None), I([0, 1]), None, I([1, 2])),
    (1, I([0, 1]), slice(None), I([1, 0])), (), (slice(10, 20),), (slice(-100, 100, 3),), (Ellipsis,),
    (slice(None, None, -1), Ellipsis, slice(None, None, -2)), (1, 2, 3, 4), (-1, -1, -1, -1),
    (I(1),), (np.int8(1), I([2])), (I([0, 1], np.uint8), 0),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem(idx: Any) -> None:
    with modes():
        check(lambda v: fnp.asarray(v)[idx], lambda v: jnp.asarray(v)[idx], X)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_at_get(idx: Any) -> None:
    with modes():
        check(lambda v: fnp.asarray(v).at[idx].get(), lambda v: jnp.asarray(v).at[idx].get(), X)
        check(lambda v: fnp.asarray(v).at[idx].get(mode="fill", fill_value=-1),
              lambda v: jnp.asarray(v).at[idx].get(mode="fill", fill_value=-1), X)


SCALAR_UPDATES = ["set", "add", "mul", "multiply", "min", "max", "subtract", "divide", "power"]


# The index is lowered once for every update: each index meets three of the updates, rotating,
# and each update about a third of the indices (not the full cross product).
@pytest.mark.parametrize(
    ("idx", "op"),
    [(idx, SCALAR_UPDATES[(i + 3 * j) % len(SCALAR_UPDATES)]) for i, idx in enumerate(INDICES) for j in range(3)],
    ids=repr,
)
def test_at_update_scalar(idx: Any, op: str) -> None:
    if op == "power" and any(isinstance(i, np.ndarray) and i.ndim for i in (idx if isinstance(idx, tuple) else (idx,))):
        pytest.skip("x.at[idx].power with repeated indices applies the power once in fcore (JAX: once per repeat)")
    with modes():
        check(lambda v: getattr(fnp.asarray(v).at[idx], op)(2.0), lambda v: getattr(jnp.asarray(v).at[idx], op)(2.0), X)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
@pytest.mark.parametrize("op", ["set", "add", "min"])
def test_at_update_array(idx: Any, op: str) -> None:
    shape = jnp.asarray(X)[idx].shape
    upd = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3
    with modes():
        check(lambda v, u: getattr(fnp.asarray(v).at[idx], op)(u), lambda v, u: getattr(jnp.asarray(v).at[idx], op)(u), X, upd)


@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
def test_at_repeated_indices(op: str) -> None:
    with modes():
        idx = I([1, 1, 3, 1])
        check(lambda v, u: getattr(fnp.asarray(v).at[idx], op)(u), lambda v, u: getattr(jnp.asarray(v).at[idx], op)(u),
              np.arange(5.0, dtype=np.float32), np.array([2.0, 3.0, 4.0, 0.5], np.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dtypes(dtype: np.dtype[Any]) -> None:
    v = sample(dtype, (2, 3), seed=31)
    with modes():
        idx = (0, I([0, 2]))
        check(lambda a: fnp.asarray(a)[idx], lambda a: jnp.asarray(a)[idx], v)
        check(lambda a: fnp.asarray(a)[::-1, 1:], lambda a: jnp.asarray(a)[::-1, 1:], v)
        for op in ("set", "add", "min", "max"):
            if dtype == np.bool_ and op == "add":
                continue
            check(lambda a, o=op: getattr(fnp.asarray(a).at[idx], o)(1), lambda a, o=op: getattr(jnp.asarray(a).at[idx], o)(1), v)
        check(lambda a: fnp.asarray(a).at[1].set(True), lambda a: jnp.asarray(a).at[1].set(True), v)


def test_weak_types() -> None:
    with modes():
        check(lambda: fnp.full((3,), 2.0)[1:], lambda: jnp.full((3,), 2.0)[1:])
        check(lambda: fnp.full((3,), 2.0)[I([0, 2])], lambda: jnp.full((3,), 2.0)[I([0, 2])])
        check(lambda: fnp.full((3,), 2.0).at[1].set(5), lambda: jnp.full((3,), 2.0).at[1].set(5))
        check(lambda: fnp.full((3,), 2.0).at[1].add(np.float32(5)), lambda: jnp.full((3,), 2.0).at[1].add(np.float32(5)))
        check(lambda v: fnp.asarray(v).at[0].set(2.5), lambda v: jnp.asarray(v).at[0].set(2.5), np.arange(3, dtype=np.int8))


def _traced_pair() -> tuple[Any, Any]:
    def f(a: Any, i: Any, j: Any) -> Any:
        a, i, j = fnp.asarray(a), fnp.asarray(i), fnp.asarray(j)
        return (a[i], a[i, 1:], a[:, i, ::-1], a.at[i].set(0.0), a.at[i, j].add(1.0), a[fnp.array([0, 1]) + i],
                a[j, i], a[fnp.stack([i, j])], a.at[fnp.stack([i, j]), 1].max(100.0), a.at[i].get(mode="fill", fill_value=-2))

    def g(a: Any, i: Any, j: Any) -> Any:
        a, i, j = jnp.asarray(a), jnp.asarray(i), jnp.asarray(j)
        return (a[i], a[i, 1:], a[:, i, ::-1], a.at[i].set(0.0), a.at[i, j].add(1.0), a[jnp.array([0, 1]) + i],
                a[j, i], a[jnp.stack([i, j])], a.at[jnp.stack([i, j]), 1].max(100.0), a.at[i].get(mode="fill", fill_value=-2))

    return f, g


@pytest.mark.parametrize("i", [0, 1, -1, 2, 5, -9])
@pytest.mark.parametrize("j", [0, -2, 7])
def test_traced_indices(i: int, j: int) -> None:
    f, g = _traced_pair()
    x = X[0]
    with modes():
        check(f, g, x, np.int32(i), np.int32(j), evaluate_staged=True)
        closed = fcore.make_jaxpr(f)(x, np.int32(i), np.int32(j))
        outs = jaxpr_as_fun(closed)(x, np.int32(i), np.int32(j))
        assert_same(list(outs), list(jax.jit(g)(x, np.int32(i), np.int32(j))), "jit")


def test_traced_index_arrays() -> None:
    with modes():
        def f(a: Any, idx: Any) -> Any:
            a, idx = fnp.asarray(a), fnp.asarray(idx)
            return a[idx], a[:, idx], a.at[idx].add(1.0), a.at[idx, 0].set(-1.0)

        def g(a: Any, idx: Any) -> Any:
            a, idx = jnp.asarray(a), jnp.asarray(idx)
            return a[idx], a[:, idx], a.at[idx].add(1.0), a.at[idx, 0].set(-1.0)

        for idx in (I([0, 2, 2]), I([-1, 0, 5]), I([[1], [0]])):
            check(f, g, X[0, :, :3], idx.astype(np.int32), evaluate_staged=True)


def test_basic_indexing_uses_slices() -> None:
    jaxpr = fcore.make_jaxpr(lambda a: a[1, ::2, None, ::-1])(X[0])
    assert {e.primitive.name for e in jaxpr.eqns} <= {"slice", "rev", "squeeze", "expand_dims", "reshape", "broadcast_in_dim"}
    jaxpr = fcore.make_jaxpr(lambda a, i: a[i])(X[0], np.int32(1))
    assert "dynamic_slice" in {e.primitive.name for e in jaxpr.eqns}


def test_index_errors() -> None:
    a = fnp.asarray(X)
    with pytest.raises(IndexError):
        a[0, 0, 0, 0, 0]
    with pytest.raises(IndexError):
        a[..., 0, ...]
    with pytest.raises(TypeError):
        a[[0, 1]]
    with pytest.raises(IndexError):
        a[np.ones(X.shape[0] + 1, bool)]  # a mask of the wrong shape
    with pytest.raises(IndexError):
        fcore.jit(lambda v: v[v > 0])(X)  # a traced mask
    with pytest.raises(TypeError):
        a[1.5]
    with pytest.raises(IndexError):
        fnp.zeros((0,))[0]
    with pytest.raises(IndexError):
        fcore.make_jaxpr(lambda v, s: v[s:])(X, 1)


def test_take_and_take_along_axis() -> None:
    with modes():
        x = sample(np.dtype(np.float32), (3, 4), seed=32)
        idx = I([0, 2, -1])
        check(lambda v: fnp.take(v, idx, axis=1), lambda v: jnp.take(v, idx, axis=1), x)
        check(lambda v: fnp.take(v, idx), lambda v: jnp.take(v, idx), x)
        ind = np.argsort(x, axis=1)
        check(lambda v: fnp.take_along_axis(v, ind, axis=1), lambda v: jnp.take_along_axis(v, ind, axis=1), x)
        ind0 = np.argsort(x, axis=0)[:2]
        check(lambda v: fnp.take_along_axis(v, ind0, axis=0), lambda v: jnp.take_along_axis(v, ind0, axis=0), x)


def test_iteration_and_len() -> None:
    a = fnp.asarray(X[0])
    rows = list(a)
    assert len(rows) == len(a) == 3
    for r, want in zip(rows, X[0]):
        np.testing.assert_array_equal(np.asarray(r), want)


@st.composite
def basic_index(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    n_adv = draw(st.integers(1, 3))  # one length for all index arrays, so they broadcast
    idx: list[Any] = []
    for d in shape[: draw(st.integers(0, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "none", "array"]))
        if kind == "int":
            idx.append(draw(st.integers(-d, d - 1)))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-d - 2, d + 2))
            stop = draw(st.none() | st.integers(-d - 2, d + 2))
            step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
            idx.append(slice(start, stop, step))
        elif kind == "none":
            idx.append(None)
            idx.append(slice(None))
        else:
            idx.append(np.array(draw(st.lists(st.integers(-d, d - 1), min_size=n_adv, max_size=n_adv))))
    return shape, tuple(idx)


@settings(max_examples=120, deadline=None)
@given(basic_index())
def test_indexing_property(case: tuple[tuple[int, ...], tuple[Any, ...]]) -> None:
    shape, idx = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    with modes():
        got = fnp.asarray(x)[idx]
        np.testing.assert_array_equal(np.asarray(got), x[idx])
        want = x.copy()
        want[idx] = -1.0
        np.testing.assert_array_equal(np.asarray(fnp.asarray(x).at[idx].set(-1.0)), want)
        staged = fcore.make_jaxpr(lambda v: v[idx])(x)
        assert staged.out_avals[0].shape == x[idx].shape


@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
def test_block_updates_touch_only_the_block(op: str) -> None:
    """Static in-bounds ints and unit-step slices update a block: no positions over the whole
    array (an iota of x.size) and no scatter; values, vmap, jit and grad agree with jax."""
    big = np.zeros((100, 200), np.float32)
    closed = fcore.make_jaxpr(lambda v: getattr(fnp.asarray(v).at[-3, 10:20], op)(np.ones(10, np.float32)))(big)
    names = [e.primitive.name for e in closed.eqns]
    assert "iota" not in names and not any(n.startswith("scatter") for n in names), names
    assert names[-1] == "dynamic_update_slice"
    u = np.arange(4, dtype=np.float32) + 0.5

    def upd(lib: Any) -> Any:
        return lambda v, w: getattr(lib.asarray(v).at[1, ..., 1:3, 0], op)(w[:2]) * 2

    with modes():
        check(upd(fnp), upd(jnp), X, u)
        check(fcore.jit(upd(fnp)), jax.jit(upd(jnp)), X, u, staged=False)
        check(fcore.vmap(upd(fnp), (None, 0)), jax.vmap(upd(jnp), (None, 0)), X, np.stack([u, -u]), staged=False)
        check(fcore.grad(lambda v, w: (upd(fnp)(v, w) ** 2).sum(), argnums=(0, 1)),
              jax.grad(lambda v, w: (upd(jnp)(v, w) ** 2).sum(), argnums=(0, 1)), X, u, staged=False)


def test_gather_and_scatter_paths() -> None:
    from fcore.numpy import indexing

    rng = np.random.default_rng(7)
    x2 = fnp.asarray(rng.normal(size=(6, 3)).astype(np.float32))
    lin = fnp.asarray(rng.integers(0, 6, (4, 2)).astype(np.int32))
    np.testing.assert_array_equal(np.asarray(indexing._take_rows(x2, lin)), np.asarray(indexing._take_rows_onehot(x2, lin)))
    x0 = rng.normal(size=(5,)).astype(np.float32)
    positions = np.array([1, 3, 1, -1], np.int32)
    updates = np.array([2.0, 3.0, 4.0, 5.0], np.float32)
    reference = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}
    for kind in ("set", "add", "mul", "min", "max"):
        want = x0.copy()
        keep = positions >= 0  # -1 marks a dropped update
        if kind == "set":
            want[positions[keep]] = updates[keep]  # the last of repeated positions wins
        else:
            reference[kind].at(want, positions[keep], updates[keep])
        def scatter(x: Any, p: Any, u: Any, k: str = kind) -> Any:
            return indexing._scatter_flat(x, p, u, k, False)

        for run in (scatter, fcore.jit(scatter)):
            got = run(fnp.asarray(x0), fnp.asarray(positions), fnp.asarray(updates))
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=kind)


MASK = X[0, :, :, 0] > 30  # shape (3, 4)
BOOL_INDICES: list[Any] = [
    (X[:, 0, 0, 0] > 50,), (slice(None), MASK), (0, MASK), (Ellipsis, X[0, 0, 0] > 2), (slice(None), MASK, I([1])),
    True, False, (Ellipsis, True), (1, True), (slice(None), [True, False, True]), (slice(None), []),
]


@pytest.mark.parametrize("idx", BOOL_INDICES, ids=repr)
def test_boolean_masks(idx: Any) -> None:
    """Concrete masks index like their ``nonzero`` arrays; scalar booleans add a unit axis."""
    with modes():
        check(lambda v: fnp.asarray(v)[idx], lambda v: jnp.asarray(v)[idx], X, staged=False)
        check(lambda v: fcore.jit(lambda u: u[idx])(v), lambda v: jnp.asarray(v)[idx], X, staged=False)
        for op in ("set", "add", "max"):
            check(lambda v, o=op: getattr(fnp.asarray(v).at[idx], o)(-1.0),
                  lambda v, o=op: getattr(jnp.asarray(v).at[idx], o)(-1.0), X, staged=False)


def test_boolean_mask_errors() -> None:
    with pytest.raises(IndexError):
        fnp.asarray(X)[np.ones(3, bool)]
    with pytest.raises(fcore.ConcretizationError):
        fcore.jit(lambda v: v.at[v > 0].set(0.0))(X)
    # Under grad the mask is concrete, as in JAX.
    with modes():
        check(fcore.grad(lambda v: (v[v > 60.0] ** 2).sum()), jax.grad(lambda v: (v[v > 60.0] ** 2).sum()), X, staged=False)


@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
def test_take_modes(mode: str | None) -> None:
    x = sample(np.dtype(np.float32), (3, 4), seed=33)
    with modes():
        for idx in (I([10, -1, -4, 2]), 7, I([[1, -5]])):
            for axis in (None, 0, 1):
                check(lambda v, i=idx, a=axis: fnp.take(v, i, a, mode=mode), lambda v, i=idx, a=axis: jnp.take(v, i, a, mode=mode), x)
        check(lambda v: fnp.take(v, I([9]), 1, mode=mode, fill_value=-1.0),
              lambda v: jnp.take(v, I([9]), 1, mode=mode, fill_value=-1.0), x)
    with pytest.raises(NotImplementedError):
        fnp.take(x, I([0]), mode="raise")


UPDATE_OPS = ["set", "add", "multiply", "subtract", "divide", "power", "min", "max"]


@pytest.mark.parametrize("dtype", [np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.bool_), np.dtype("bfloat16")], ids=str)
@pytest.mark.parametrize("op", UPDATE_OPS)
def test_update_promotes_then_casts_back(op: str, dtype: np.dtype[Any]) -> None:
    """As jnp: the update runs in the promoted dtype and is cast back (an int array accumulates
    float updates before truncating); unsafe casts warn; bool add/multiply are TypeErrors."""
    x = np.arange(6).astype(dtype)
    for v in (2, 2.5, np.float32(2), np.int8(3), I([1.5, 2.5]), -3, True):
        for mode in (None, "clip"):
            for idx in (I([1, 9]), 1, I([0, 0])):
                def ours(v: Any = v, mode: Any = mode, idx: Any = idx) -> Any:
                    return getattr(fnp.asarray(x).at[idx], op)(v, mode=mode)

                def theirs(v: Any = v, mode: Any = mode, idx: Any = idx) -> Any:
                    return getattr(jnp.asarray(x).at[idx], op)(v, mode=mode)

                with modes():
                    try:
                        want = theirs()
                    except (TypeError, ValueError) as e:
                        with pytest.raises(TypeError if isinstance(e, TypeError) else ValueError):
                            ours()
                        continue
                    assert_same(ours(), want, f"{op} {v!r} {mode} {idx!r}")


def test_update_warnings_and_strict_mode() -> None:
    x = fnp.arange(4)
    with pytest.warns(FutureWarning, match="cannot safely cast"):
        x.at[0].set(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.at[0].set(7)  # a Python int that fits converts silently, as in JAX
        fnp.arange(4.0).at[0].add(1)
    with numpy_dtype_promotion("strict"), pytest.raises(TypePromotionError):
        x.at[0].add(np.float32(1))

"""Array creation and shape manipulation of ``fcore.numpy`` against ``jax.numpy``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from test_numpy_common import BF16, DTYPES, assert_same, check, check_or_raises, check_raises, modes, sample

ASARRAY_INPUTS: list[Any] = [
    2, 2.5, True, 1j, [1, 2], [1, 2.0], [[1, 2], [3, 4]], (1, 2), [True, 1], [], [np.float16(1), 2],
    np.float64(1), np.arange(3.0), np.arange(3), np.array(2, np.uint8), np.ones((2, 2), BF16), [1, 2**40],
]


@pytest.mark.parametrize("value", ASARRAY_INPUTS, ids=repr)
@pytest.mark.parametrize("dtype", [None, np.int8, np.float32, bool, BF16, np.uint32], ids=str)
def test_asarray_and_array(value: Any, dtype: Any) -> None:
    with modes():
        check_or_raises(lambda: fnp.asarray(value, dtype=dtype), lambda: jnp.asarray(value, dtype=dtype))
        check_or_raises(lambda: fnp.array(value, dtype=dtype), lambda: jnp.array(value, dtype=dtype))


def test_asarray_x64_and_canonicalization() -> None:
    with modes():
        a = fnp.asarray(2)
        assert a.dtype == np.int32 and a.weak_type
        b = fnp.asarray(np.arange(3.0))
        assert b.dtype == np.float32 and not b.weak_type
        assert fnp.asarray(2.0, dtype=np.float32).weak_type is False
    with modes(x64=True):
        for v in (2, 2.5, np.arange(3.0), [1, 2], np.uint64(3)):
            check(lambda u=v: fnp.asarray(u), lambda u=v: jnp.asarray(u), staged=False)


def test_array_of_traced_values_stacks() -> None:
    with modes():
        def f(x: Any, y: Any) -> Any:
            return fnp.array([[x, y], [y, 1.0]])

        def g(x: Any, y: Any) -> Any:
            return jnp.array([[x, y], [y, 1.0]])

        check(f, g, np.float32(2), np.float32(3), evaluate_staged=True)
        check(lambda: fnp.array([fnp.asarray(1.0), 2]), lambda: jnp.array([jnp.asarray(1.0), 2]))
        assert fnp.array(np.ones(3), ndmin=3).shape == (1, 1, 3)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_zeros_ones(name: str) -> None:
    with modes():
        for shape in (3, (2, 3), (), (0, 2), np.int64(2)):
            for dtype in (None, np.int8, bool, BF16, jnp.float16, fnp.uint8, float, int):
                dt = jnp.float16 if dtype is fnp.uint8 else dtype
                if dtype is fnp.uint8:
                    dt = jnp.uint8
                check(lambda: getattr(fnp, name)(shape, dtype=dtype), lambda: getattr(jnp, name)(shape, dtype=dt))
    check_raises(lambda: fnp.zeros((-1, 2)), lambda: jnp.zeros((-1, 2)), exc=TypeError)


@pytest.mark.parametrize("fill", [3, 3.5, True, np.int8(2), np.float64(2), 1j, np.arange(3, dtype=np.int16)], ids=repr)
def test_full_and_like(fill: Any) -> None:
    with modes():
        shape = (2, 3)
        check_or_raises(lambda: fnp.full(shape, fill), lambda: jnp.full(shape, fill))
        check_or_raises(lambda: fnp.full(shape, fill, dtype=np.int8), lambda: jnp.full(shape, fill, dtype=np.int8))
        for like in (np.ones((2, 3), np.int16), 2.0, np.float32(1), np.ones(3, BF16)):
            check_or_raises(lambda u=like: fnp.full_like(u, fill), lambda u=like: jnp.full_like(u, fill))
            check(lambda u=like: fnp.zeros_like(u), lambda u=like: jnp.zeros_like(u))
            check(lambda u=like: fnp.ones_like(u, dtype=np.float16), lambda u=like: jnp.ones_like(u, dtype=np.float16))
            check(lambda u=like: fnp.empty_like(u, shape=(4,)), lambda u=like: jnp.empty_like(u, shape=(4,)))
        check(lambda: fnp.zeros_like(fnp.full((3,), 2.0)), lambda: jnp.zeros_like(jnp.full((3,), 2.0)))


ARANGE_ARGS: list[tuple[Any, ...]] = [
    (5,), (5.0,), (1, 5), (1, 5, 2), (1.0, 5, 0.5), (5, 1, -1), (0, 1, 0.1), (np.int8(5),), (2, 7.5), (0,), (-3,),
]


@pytest.mark.parametrize("args", ARANGE_ARGS, ids=repr)
@pytest.mark.parametrize("dtype", [None, np.int8, np.float16, np.float32, BF16, np.uint8], ids=str)
def test_arange(args: tuple[Any, ...], dtype: Any) -> None:
    with modes():
        f: Any = fnp.arange
        g: Any = jnp.arange
        check_or_raises(lambda: f(*args, dtype=dtype), lambda: g(*args, dtype=dtype))


def test_arange_x64_and_errors() -> None:
    with modes(x64=True):
        for args in ((5,), (5.0,), (1, 5, 2)):
            check(lambda a=args: fnp.arange(*a), lambda a=args: jnp.arange(*a))
    with pytest.raises(fcore.ConcretizationError):
        fcore.make_jaxpr(lambda n: fnp.arange(n))(3)


LINSPACE: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((0, 1, 5), {}), ((0, 1, 5), {"endpoint": False}), ((0, 10, 5), {"dtype": np.int32}),
    ((np.zeros(2), np.ones(2), 4), {}), ((0, 1, 5), {"retstep": True}), ((0.0, 1.0, 1), {}),
    ((0, 1, 0), {}), ((0, 1, 4), {"axis": -1}), ((np.zeros(2), np.ones(2), 4), {"axis": 1}),
    ((np.float16(0), 3, 7), {}), ((-2, 2, 6), {"dtype": BF16}),
]


@pytest.mark.parametrize(("args", "kw"), LINSPACE, ids=repr)
def test_linspace(args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    with modes():
        check(lambda: fnp.linspace(*args, **kw), lambda: jnp.linspace(*args, **kw))


@pytest.mark.parametrize(("args", "kw"), [((3,), {}), ((3, 4), {}), ((3, 4, 1), {}), ((3,), {"k": -1, "dtype": np.int8}), ((4, 3, -2), {})], ids=repr)
def test_eye_tri(args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    with modes():
        check(lambda: fnp.eye(*args, **kw), lambda: jnp.eye(*args, **kw))
        check(lambda: fnp.tri(*args, **kw), lambda: jnp.tri(*args, **kw))
        check(lambda: fnp.identity(args[0], dtype=bool), lambda: jnp.identity(args[0], dtype=bool))


@pytest.mark.parametrize("k", [-2, 0, 1, 7])
def test_tril_triu_diag(k: int) -> None:
    x = sample(np.dtype(np.float32), (4, 5), seed=21)
    with modes():
        for name in ("tril", "triu", "diag", "diagonal", "trace"):
            check(lambda v, n=name: getattr(fnp, n)(v, k), lambda v, n=name: getattr(jnp, n)(v, k), x)
        check(lambda v: fnp.diag(v, k), lambda v: jnp.diag(v, k), x[0])
        check(lambda v: fnp.tril(v, k), lambda v: jnp.tril(v, k), sample(np.dtype(np.int8), (2, 3, 3)))
        check(lambda v: fnp.diagonal(v, k, 0, 2), lambda v: jnp.diagonal(v, k, 0, 2), sample(np.dtype(np.int8), (3, 2, 4)))


def test_meshgrid() -> None:
    with modes():
        a, b = np.arange(3.0), np.arange(4, dtype=np.int8)
        check(lambda: fnp.meshgrid(a, b), lambda: jnp.meshgrid(a, b))
        check(lambda: fnp.meshgrid(a, b, indexing="ij"), lambda: jnp.meshgrid(a, b, indexing="ij"))
        check(lambda: fnp.meshgrid(a, b, sparse=True), lambda: jnp.meshgrid(a, b, sparse=True))


X = sample(np.dtype(np.float32), (2, 3, 4), seed=22)
SHAPE_CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("reshape", (X, (4, -1)), {}), ("reshape", (X, (4, -1)), {"order": "F"}), ("reshape", (X, 24), {}),
    ("ravel", (X,), {}), ("ravel", (X,), {"order": "F"}), ("transpose", (X,), {}), ("transpose", (X, (1, 0, 2)), {}),
    ("swapaxes", (X, 0, -1), {}), ("moveaxis", (X, 0, -1), {}), ("moveaxis", (X, (0, 1), (-1, 0)), {}),
    ("rollaxis", (X, 2), {}), ("squeeze", (X[:, :1], 1), {}), ("squeeze", (X[:1, :1],), {}),
    ("expand_dims", (X, (0, -1)), {}), ("expand_dims", (X, 1), {}),
    ("concatenate", ([X, X[:1]], 0), {}), ("concatenate", ([np.ones(2, np.int8), np.ones(3, np.float16)],), {}),
    ("concatenate", ([X, X], None), {}), ("concatenate", ([X, 2 * X], -1), {}), ("concatenate", ([X, X],), {"dtype": np.float16}),
    ("stack", ([X, X], -1), {}), ("stack", ([np.ones(3, np.int8), np.zeros(3, np.uint8)],), {}),
    ("hstack", ([X, X],), {}), ("vstack", ([np.ones(3), np.zeros(3)],), {}), ("hstack", ([np.ones(3), np.zeros(2)],), {}),
    ("dstack", ([np.ones(3), np.zeros(3)],), {}), ("column_stack", ([np.ones(3), np.zeros((3, 2))],), {}),
    ("broadcast_to", (X[:, :1], (5, 2, 3, 4)), {}), ("broadcast_to", (2.0, (3,)), {}),
    ("broadcast_arrays", (X[:, :1], np.ones(4, np.int8)), {}), ("flip", (X,), {}), ("flip", (X, 1), {}),
    ("flip", (X, (0, 2)), {}), ("fliplr", (X,), {}), ("flipud", (X,), {}),
    ("tile", (X, (2, 1, 1, 2)), {}), ("tile", (np.arange(3), 2), {}), ("tile", (X, (2,)), {}),
    ("repeat", (X, 2), {"axis": 1}), ("repeat", (X, 2), {}), ("repeat", (np.arange(3), np.array([1, 0, 2])), {}),
    ("split", (X, 2), {}), ("split", (X, [1, 3]), {"axis": 2}), ("array_split", (np.arange(7), 3), {}),
    ("hsplit", (X, 3), {}), ("vsplit", (X, 2), {}), ("roll", (X, 2), {"axis": 2}), ("roll", (X, -3), {}),
    ("roll", (X, (1, 2), (0, 1)), {}), ("atleast_1d", (2.0,), {}), ("atleast_2d", (np.ones(3),), {}),
    ("atleast_3d", (np.ones((2, 3)),), {}), ("pad", (X, ((1, 0), (0, 2), (1, 1))), {}),
    ("pad", (X, 1), {"constant_values": 3}), ("shape", (X,), {}), ("ndim", (X,), {}), ("size", (X,), {}),
    ("size", (X, 1), {}), ("broadcast_shapes", ((2, 1), (3,)), {}), ("permute_dims", (X, (2, 0, 1)), {}),
    ("matrix_transpose", (X,), {}),
]


@pytest.mark.parametrize(("name", "args", "kw"), SHAPE_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_shape_ops(name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    with modes():
        got = getattr(fnp, name)(*args, **kw)
        want = getattr(jnp, name)(*args, **kw)
        if name in ("shape", "ndim", "size", "broadcast_shapes"):
            assert got == want
            return
        assert_same(got, want, name)


def test_shape_ops_staged_and_weak() -> None:
    with modes():
        check(lambda v: fnp.reshape(v, (3, -1)) * 2, lambda v: jnp.reshape(v, (3, -1)) * 2, np.arange(6.0, dtype=np.float32))
        check(lambda v: fnp.transpose(fnp.expand_dims(v, 0)), lambda v: jnp.transpose(jnp.expand_dims(v, 0)), X)
        check(lambda v: fnp.concatenate([v, v], 1), lambda v: jnp.concatenate([v, v], 1), X)
        check(lambda: fnp.reshape(fnp.full((2, 2), 1.5), (4,)), lambda: jnp.reshape(jnp.full((2, 2), 1.5), (4,)))
        check(lambda v: fnp.stack([v, 1.0]), lambda v: jnp.stack([v, 1.0]), np.float32(2))
        a = fnp.asarray(X)
        assert_same(a.reshape(4, 6), jnp.asarray(X).reshape(4, 6))
        assert_same(a.reshape((-1,)), jnp.asarray(X).reshape((-1,)))
        assert_same(a.T, jnp.asarray(X).T)
        assert_same(a.transpose(2, 0, 1), jnp.asarray(X).transpose(2, 0, 1))
        assert_same(a.flatten(), jnp.asarray(X).flatten())
        assert_same(a[:, :1].squeeze(), jnp.asarray(X)[:, :1].squeeze())
        assert_same(a.swapaxes(0, 1), jnp.asarray(X).swapaxes(0, 1))


def test_shape_errors() -> None:
    """The exception types are jnp's (a TypeError where jnp's comes from a lax shape rule)."""
    cases: list[tuple[str, tuple[Any, ...], type[Exception]]] = [
        ("reshape", (X, (5, -1)), ValueError), ("reshape", (X, (-1, -1)), ValueError), ("squeeze", (X, 0), ValueError),
        ("concatenate", ([X, X[0]],), TypeError), ("stack", ([X, X[0]],), ValueError),
        ("broadcast_to", (X, (3, 4)), ValueError), ("transpose", (X, (0, 1)), TypeError),
        ("split", (np.arange(7), 2), ValueError),
    ]
    with modes():
        for name, args, exc in cases:
            check_raises(getattr(fnp, name), getattr(jnp, name), *args, exc=exc)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_reshape_transpose_property(shape: list[int], data: st.DataObject) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    perm = data.draw(st.permutations(list(range(len(shape)))))
    with modes():
        np.testing.assert_array_equal(np.asarray(fnp.transpose(x, perm)), np.transpose(x, perm))
        flat = fnp.reshape(x, (-1,))
        np.testing.assert_array_equal(np.asarray(flat), x.reshape(-1))
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        np.testing.assert_array_equal(np.asarray(fnp.flip(x, axis)), np.flip(x, axis))
        np.testing.assert_array_equal(np.asarray(fnp.concatenate([x, x], axis)), np.concatenate([x, x], axis))
        np.testing.assert_array_equal(np.asarray(fnp.stack([x, x], axis)), np.stack([x, x], axis))


def test_dtypes_preserved_by_shape_ops() -> None:
    with modes():
        for dt in DTYPES:
            v = sample(dt, (2, 3), seed=23)
            pairs: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
                (fnp.ravel, jnp.ravel), (fnp.transpose, jnp.transpose), (fnp.flip, jnp.flip)]
            for f, g in pairs:
                check(f, g, v)

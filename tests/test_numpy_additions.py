"""The rest of ``jax.numpy``'s surface in ``fcore.numpy``, against ``jax.numpy``: window
functions, ``i0``, ``bitwise_count``, bit packing, ``put``/``place``/``put_along_axis``,
``r_``/``c_``/``mask_indices``, arrays from buffers, strings, files, DLPack and functions,
``matvec``/``vecmat``/``cross``/``einsum_path``, ``gradient``, 2-D and N-D histograms,
``poly``/``polydiv``, printing options and the Array API namespace info."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, cast

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from test_numpy_common import BF16, check, check_raises, modes

X = (np.arange(12, dtype=np.float32).reshape(3, 4) ** 1.3).astype(np.float32)
P = np.random.default_rng(0).normal(size=(40, 2)).astype(np.float32)

Case = tuple[str, Callable[..., Any], Callable[..., Any], tuple[Any, ...]]


def case(name: str, ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> Case:
    return (name, ours, theirs, args)


def same(name: str, *args: Any, **kwargs: Any) -> Case:
    """The function of that name in both libraries, called with these arguments."""
    return case(f"{name}{args!r:.40}{kwargs!r:.40}", lambda *a: getattr(fnp, name)(*a, **kwargs),
                lambda *a: getattr(jnp, name)(*a, **kwargs), *args)


CASES: list[Case] = [
    *[same(w, m) for w in ("bartlett", "blackman", "hamming", "hanning") for m in (0, 1, 2, 7)],
    *[case(f"kaiser{m}", lambda m=m: fnp.kaiser(m, 3.0), lambda m=m: jnp.kaiser(m, 3.0)) for m in (0, 1, 6)],
    same("i0", np.array([0, 1e-3, 1, 7.9, 8, 8.1, 30, 100, -5.5], np.float32)),
    same("i0", np.array([0, 1, 3, -2], np.float16)), same("i0", np.array([0, 1, 3, -2], BF16)), same("i0", 3),
    same("bitwise_count", np.array([-1, 5, 0, 2**31 - 1, -(2**31)], np.int32)), same("bitwise_count", True),
    same("bitwise_count", np.array([255, 7], np.uint8)), same("bitwise_count", np.array([-3, 300], np.int16)),
    same("bitwise_count", 3), same("bitwise_count", np.uint64(2**64 - 1)),
    *[same("packbits", np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 0, 0, 1]]), **kw)
      for kw in ({}, {"axis": 1}, {"axis": 0, "bitorder": "little"})],
    same("packbits", np.array([True, False, True])),
    *[same("unpackbits", np.array([[3, 255], [128, 7]], np.uint8), **kw)
      for kw in ({}, {"axis": 1}, {"axis": 0, "bitorder": "little"}, {"count": 5}, {"count": 20, "axis": 1}, {"axis": 1, "count": -3})],
    *[same("put", X, np.array([0, 5, 20, -1]), np.array([9.0, 8.0]), inplace=False, **kw)
      for kw in ({}, {"mode": "clip"}, {"mode": "wrap"})],
    same("put", X, 3, 1, inplace=False),
    case("place", lambda a: fnp.place(a, a > 5, np.array([-1.0, -2.0]), inplace=False),
         lambda a: jnp.place(a, a > 5, np.array([-1.0, -2.0]), inplace=False), X),
    same("put_along_axis", X, np.array([[0, 3], [1, 1], [2, 0]]), -5.0, axis=1, inplace=False),
    same("put_along_axis", X, np.array([[0, 2, 1, 0]]), np.array([[7.0, 8.0, 9.0, 10.0]]), axis=0, inplace=False),
    same("put_along_axis", X, np.array([1, 7]), np.array([1.0, 2.0]), axis=None, inplace=False),
    *[case(f"r_{i}", lambda k=key: fnp.r_[k], lambda k=key: jnp.r_[k])
      for i, key in enumerate([(np.array([1, 2]), 0, np.array([4, 5])), slice(0, 5, 2), ("0,2", [1, 2], [3, 4]),
                               ("r", [1, 2], [3]), ("c", [1, 2]), (slice(0, 1, 5j), [7]), ("1", np.ones((2, 2)), np.zeros((2, 1))),
                               ("0,2,0", [1, 2], [3, 4]), (np.array([1.5]), 2)])],
    *[case(f"c_{i}", lambda k=key: fnp.c_[k], lambda k=key: jnp.c_[k])
      for i, key in enumerate([(np.array([1, 2]), np.array([4, 5])), (np.ones((2, 2)), np.array([7, 8]))])],
    case("mask_indices", lambda: fnp.mask_indices(3, fnp.triu, 1), lambda: jnp.mask_indices(3, jnp.triu, 1)),
    case("mask_indices size", lambda: fnp.mask_indices(3, fnp.tril, size=4), lambda: jnp.mask_indices(3, jnp.tril, size=4)),
    case("fromfunction", lambda: fnp.fromfunction(lambda i, j: i * 10 + j, (3, 4)), lambda: jnp.fromfunction(lambda i, j: i * 10 + j, (3, 4))),
    case("fromfunction int", lambda: fnp.fromfunction(lambda i: i * 2, 4, dtype=int), lambda: jnp.fromfunction(lambda i: i * 2, 4, dtype=int)),
    same("frombuffer", b"\x01\x02\x03\x04", dtype=np.uint8), same("frombuffer", np.arange(3.0).tobytes()),
    same("frombuffer", np.arange(6, dtype=np.int16).tobytes(), dtype=np.int16, count=2, offset=4),
    same("fromstring", "1 2 3.5", sep=" "), same("fromstring", "1,2", dtype=int, sep=","),
    same("from_dlpack", np.arange(3)), same("from_dlpack", np.ones((2, 2), np.float32)),
    same("matvec", np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.arange(4, dtype=np.float32)),
    same("vecmat", np.arange(3, dtype=np.float32), np.arange(24, dtype=np.float32).reshape(2, 3, 4)),
    same("vecmat", np.arange(3, dtype=np.float32) + 1j, np.arange(24, dtype=np.float32).reshape(2, 3, 4)),
    same("cross", X[:, :3], np.array([7.0, -8.0, 9.0], np.float32)), same("cross", X[:, :2], X[0, 1:3]),
    same("cross", X[:, :2], X[0, :3]), same("cross", X[:3, :3].T, X[:3, :3], axisa=0, axisb=0, axisc=0),
    same("cross", np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)[::-1], axis=1),
    same("gradient", X), same("gradient", X[0]), same("gradient", X, 2.0), same("gradient", X, axis=1),
    same("gradient", X, np.array([0.0, 1.0, 3.0]), np.array([0.0, 0.5, 1.0, 4.0])), same("gradient", np.array([1, 4, 9, 16])),
    same("gradient", X, axis=(0,)), same("gradient", X, 1.0, 0.5),
    same("histogram2d", P[:, 0], P[:, 1]), same("histogram2d", P[:, 0], P[:, 1], bins=[3, 4], density=True),
    same("histogram2d", P[:, 0], P[:, 1], bins=np.array([-2.0, 0.0, 2.0]), weights=np.arange(40.0)),
    same("histogram2d", P[:, 0], P[:, 1], bins=5, range=[(-1, 1), (0, 2)]),
    same("histogramdd", P, bins=3, range=[(-1, 1), None]), same("histogramdd", P, bins=(2, 3), density=True),
    same("histogramdd", np.concatenate([P, P[:, :1]], 1), bins=2, weights=np.ones(40)),
    same("poly", np.array([1.0, 2.0, -3.0])), same("poly", np.array([1, 2])), same("poly", np.zeros(0)), same("poly", 2.0),
    same("polydiv", np.array([1.0, -3.0, 2.0, 5.0]), np.array([1.0, -1.0])),
    same("polydiv", np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]), trim_leading_zeros=True),
    same("polydiv", np.array([4, 2]), np.array([2, 0, 1])),
]


@pytest.mark.parametrize("name, ours, theirs, args", CASES, ids=[c[0] for c in CASES])
def test_against_jnp(name: str, ours: Callable[..., Any], theirs: Callable[..., Any], args: tuple[Any, ...]) -> None:
    with modes():
        # Window lengths, strings, buffers and the index-trick keys are static: only array
        # arguments are staged.
        static = ("from", "r_", "c_", "polydiv", "mask", "kaiser", "bartlett", "blackman", "hamming", "hanning")
        check(ours, theirs, *args, staged=not name.startswith(static))


@pytest.mark.parametrize("name", ["i0", "bitwise_count", "gradient", "cross", "matvec"])
def test_x64(name: str) -> None:
    args = {"i0": (np.array([0, 1e-3, 1, 7.9, 8, 8.1, 30, 700, -5.5]),),
            "bitwise_count": (np.array([2**64 - 1, 12345678901234], np.uint64),),
            "gradient": (X.astype(np.float64),), "cross": (X[:, :3].astype(np.float64), X[0, :3]),
            "matvec": (X.astype(np.float64), X[0])}[name]
    with modes(x64=True):
        check(getattr(fnp, name), getattr(jnp, name), *args)


BAD: list[Case] = [
    same("put", X, 0, 1.0), same("put", X, 0, 1.0, mode="raise", inplace=False), same("put", X, 0, 1.0, mode="bad", inplace=False),
    same("place", X, X > 1, 1.0), same("place", X, X[0] > 1, 1.0, inplace=False), same("place", X, X > 1, np.zeros(0), inplace=False),
    same("put_along_axis", X, np.array([[0]]), 1.0, axis=1),
    same("put_along_axis", X, np.array([0]), 1.0, axis=1, inplace=False),
    same("packbits", X), same("packbits", np.ones(3, int), bitorder="middle"), same("unpackbits", np.ones(3, np.int32)),
    same("bitwise_count", 1.5), same("i0", 1j), same("cross", X, X), same("matvec", X, X[0, :3]),
    same("gradient", np.array([1.0])), same("gradient", X, 1.0, 2.0, 3.0), same("gradient", X, np.ones((2, 2))),
    same("gradient", X, edge_order=2), same("fromfile", "x"), same("fromiter", [1]),
    case("r_ str", lambda: fnp.r_[[1], "r"], lambda: cast(Any, jnp.r_)[[1], "r"]),
    case("r_ dir", lambda: fnp.r_["x", [1]], lambda: cast(Any, jnp.r_)["x", [1]]),
    same("histogramdd", P, weights=np.ones(3)), same("histogramdd", P, bins=[2, 3, 4]), same("histogramdd", P, range=[(0, 1)]),
    same("piecewise", X, [X > 0], [1, 2, 3]),
]


@pytest.mark.parametrize("name, ours, theirs, args", BAD, ids=[c[0] for c in BAD])
def test_rejected_as_jnp_rejects(name: str, ours: Callable[..., Any], theirs: Callable[..., Any], args: tuple[Any, ...]) -> None:
    with modes():
        check_raises(ours, theirs, *args, exc=(TypeError, ValueError, NotImplementedError))


def test_put_and_place_say_why_inplace_is_refused() -> None:
    calls: list[Callable[[], Any]] = [lambda: fnp.put(X, 0, 1.0), lambda: fnp.place(X, X > 1, 1.0),
                                      lambda: fnp.put_along_axis(X, np.zeros((3, 1), int), 1.0, 1)]
    for fn in calls:
        with pytest.raises(ValueError, match="inplace=False"):
            fn()


def test_grad_and_jit() -> None:
    with modes():
        check(fcore.grad(lambda v: fnp.i0(v).sum()), jax.grad(lambda v: jnp.i0(v).sum()), np.array([0.0, 1.5, -9.0], np.float32))
        check(fcore.jit(lambda v: fnp.gradient(v, axis=0)), jax.jit(lambda v: jnp.gradient(v, axis=0)), X, staged=False)
        check(fcore.grad(lambda v: fnp.cross(v, X[0, :3]).sum()), jax.grad(lambda v: jnp.cross(v, X[0, :3]).sum()), X[1, :3])
        check(fcore.jit(lambda v: fnp.put(v, np.array([1, 2]), 0.0, inplace=False)),
              jax.jit(lambda v: jnp.put(v, np.array([1, 2]), 0.0, inplace=False)), X, staged=False)
        check(fcore.jit(lambda v: fnp.histogram2d(v[:, 0], v[:, 1], bins=4)), jax.jit(lambda v: jnp.histogram2d(v[:, 0], v[:, 1], bins=4)), P, staged=False)


def test_load_and_save_round_trip() -> None:
    for data in (np.arange(4, dtype=ml_dtypes.bfloat16), np.arange(6.0).reshape(2, 3)):
        buf = io.BytesIO()
        fnp.save(buf, data)
        with modes():
            check(lambda: fnp.load(io.BytesIO(buf.getvalue())), lambda: jnp.load(io.BytesIO(buf.getvalue())), staged=False)


def test_einsum_path() -> None:
    ops = (np.ones((20, 3)), np.ones((3, 40)), np.ones((40, 5)))
    for opt in ("auto", True, False, "greedy", "optimal"):
        ours, theirs = fnp.einsum_path("ij,jk,kl->il", *ops, optimize=opt), jnp.einsum_path("ij,jk,kl->il", *ops, optimize=opt)
        assert ours[0] == list(theirs[0]), opt
        assert isinstance(ours[1], str)
    assert fnp.einsum_path("i->", np.ones(3))[0] == jnp.einsum_path("i->", np.ones(3))[0]
    assert fnp.einsum_path("ij,jk,kl->il", *ops)[0] == [(1, 2), (0, 1)]  # the small product first


def test_printoptions_apply_to_arrays() -> None:
    assert fnp.get_printoptions() == np.get_printoptions()
    with fnp.printoptions(precision=2):
        assert repr(fnp.asarray([1.23456], np.float32)) == repr(jnp.asarray([1.23456], np.float32))
        assert "1.23]" in repr(fnp.asarray([1.23456], np.float32))
    assert fnp.array_str is np.array_str and fnp.save is np.save and fnp.object_ is np.object_
    assert issubclass(fnp.ComplexWarning, RuntimeWarning) and fnp.iterable([1]) and not fnp.iterable(1)


@pytest.mark.parametrize("x64", [False, True])
def test_array_namespace_info(x64: bool) -> None:
    assert fnp.__array_api_version__ == jnp.__array_api_version__
    with modes(x64=x64):
        ours, theirs = fnp.__array_namespace_info__(), jnp.__array_namespace_info__()
        assert ours.default_dtypes() == theirs.default_dtypes()
        assert ours.capabilities() == cast(Any, theirs).capabilities()
        for kind in (None, "bool", "integral", "real floating", ("signed integer", "complex floating"), "numeric"):
            assert ours.dtypes(kind=kind) == theirs.dtypes(kind=kind), kind
        assert ours.devices()[0] is None

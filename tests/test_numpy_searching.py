"""Data-dependent selection (``nonzero``/``argwhere``/``flatnonzero``/one-argument ``where``,
``bincount``, ``compress``/``extract``) and ``select``/``digitize``/``isin`` against
``jax.numpy``: concrete inputs eagerly, a static ``size`` under jit, and a clear
``ConcretizationError`` for a traced input without one."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from test_numpy_common import check, check_raises, modes

X = np.array([[0, 1, 0, 3], [2, 0, 0, -1]], np.int32)
XF = np.array([0.0, np.nan, -0.0, 2.5], np.float32)
Y = np.arange(12.0, dtype=np.float32).reshape(3, 4)
ARRAYS: list[Any] = [X, XF, X > 0, np.zeros((0, 2), np.float32), np.array([5])]


@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero"])
def test_nonzero_family(name: str, a: Any) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    with modes():
        check(f, g, a, staged=False)
        for size, fill in ((3, None), (10, None), (10, -1), (0, None), (2, 7)):
            check(lambda v, s=size, fv=fill: f(v, size=s, fill_value=fv), lambda v, s=size, fv=fill: g(v, size=s, fill_value=fv), a)
            check(fcore.jit(lambda v, s=size, fv=fill: f(v, size=s, fill_value=fv)),
                  jax.jit(lambda v, s=size, fv=fill: g(v, size=s, fill_value=fv)), a, staged=False)
        check(lambda v: fnp.where(v), lambda v: jnp.where(v), a, staged=False)


def test_nonzero_edge_cases() -> None:
    with modes():
        check_raises(fnp.nonzero, jnp.nonzero, 3)
        check(fnp.argwhere, jnp.argwhere, 3, staged=False)
        check(fnp.argwhere, jnp.argwhere, 0, staged=False)
        check(lambda v: fnp.nonzero(v, size=6, fill_value=(-1, -2)), lambda v: jnp.nonzero(v, size=6, fill_value=(-1, -2)), X)
        check_raises(lambda v: fnp.nonzero(v, size=2, fill_value=(1, 2, 3)), lambda v: jnp.nonzero(v, size=2, fill_value=(1, 2, 3)), X)
    with pytest.raises(fcore.ConcretizationError, match="size"):
        fcore.jit(fnp.nonzero)(X)
    with pytest.raises(fcore.ConcretizationError, match="length"):
        fcore.jit(fnp.bincount)(np.array([0, 1]))


@pytest.mark.parametrize("xs", [np.array([0, 1, 1, 3, 2, 1, 7]), np.array([True, False, True]), np.array([], np.int32),
                                np.array([-1, 2])], ids=repr)
def test_bincount(xs: Any) -> None:
    w = np.linspace(0, 1, len(xs)).astype(np.float32)
    with modes():
        check(fnp.bincount, jnp.bincount, xs, staged=False)
        check(lambda v: fnp.bincount(v, length=4), lambda v: jnp.bincount(v, length=4), xs)
        check(lambda v: fnp.bincount(v, minlength=9), lambda v: jnp.bincount(v, minlength=9), xs, staged=False)
        check(lambda v: fnp.bincount(v, w), lambda v: jnp.bincount(v, w), xs, staged=False)
        check(fcore.jit(lambda v: fnp.bincount(v, length=5)), jax.jit(lambda v: jnp.bincount(v, length=5)), xs, staged=False)
    with modes():
        check_raises(fnp.bincount, jnp.bincount, np.array([1.0]))
        check_raises(fnp.bincount, jnp.bincount, np.ones((2, 2), np.int32))


def test_compress_extract() -> None:
    c = np.array([True, False, True])
    with modes():
        for kw in ({}, {"axis": 0}, {"axis": 1}, {"axis": 0, "size": 2}, {"axis": 0, "size": 3, "fill_value": -1},
                   {"axis": 1, "size": 1}):
            check(lambda c, y, k=kw: fnp.compress(c, y, **k), lambda c, y, k=kw: jnp.compress(c, y, **k), c, Y, staged="size" in kw)
        check(fnp.compress, jnp.compress, np.array([1, 0, 1, 0, 0]), Y, 0, staged=False)
        check_raises(fnp.compress, jnp.compress, np.array([1, 0, 1, 1, 1]), Y, 0)
        check(fnp.extract, jnp.extract, Y > 4, Y, staged=False)
        check(lambda c, y: fnp.extract(c, y, size=9, fill_value=-5), lambda c, y: jnp.extract(c, y, size=9, fill_value=-5), Y > 4, Y)


@pytest.mark.parametrize(
    "args",
    [([Y > 3, Y < 2], [Y, -Y]), ([Y > 3, Y < 2], [Y, -Y], 7.5), ([Y > 3], [1]), ([np.array([1, 0, 1])], [np.arange(3)]),
     ([Y > 3, Y < 2], [np.int8(1), 2.5], np.float16(0))],
)
def test_select(args: tuple[Any, ...]) -> None:
    with modes():
        check(fnp.select, jnp.select, *args)
    with modes():
        check_raises(fnp.select, jnp.select, [], [])
        check_raises(fnp.select, jnp.select, [Y > 1], [Y, Y])


@pytest.mark.parametrize("right", [False, True])
def test_digitize(right: bool) -> None:
    bins = np.array([0.0, 1.0, 2.5, 4.0])
    with modes():
        for v in (np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 4.0, 5.0, np.nan]), 2, np.array([[1, 3]])):
            check(lambda v, b: fnp.digitize(v, b, right), lambda v, b: jnp.digitize(v, b, right), v, bins)
            check(lambda v, b: fnp.digitize(v, b, right), lambda v, b: jnp.digitize(v, b, right), v, bins[::-1].copy())
        check(fnp.digitize, jnp.digitize, np.array([1.0, 2.0]), np.zeros(0))
        check_raises(fnp.digitize, jnp.digitize, np.array([1.0, 2.0]), np.zeros((2, 2)))


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert: bool) -> None:
    cases: list[tuple[Any, Any]] = [(Y, np.array([1.0, 5.0, 7.0])), (np.array([1, 2, 3]), np.array([2.5, 3.0])), (3, np.array([1, 3])),
                                    (np.zeros(0), np.ones(2)), (Y, np.zeros(0)), (np.array([np.nan]), np.array([np.nan]))]
    with modes():
        for el, te in cases:
            check(lambda a, b: fnp.isin(a, b, invert=invert), lambda a, b: jnp.isin(a, b, invert=invert), el, te)

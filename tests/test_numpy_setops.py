"""``unique``, the Array API ``unique_*`` functions and the 1-D set operations against
``jax.numpy``: values, dtypes, the named-tuple fields, the static ``size``/``fill_value`` forms
under ``jit`` and ``vmap``, and the concretization error without ``size``."""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from test_numpy_common import assert_same, check, check_or_raises, check_raises, modes

XI = np.array([3, 1, 2, 3, 1, 5, 2, 2], np.int32)
XF = np.array([3.0, np.nan, 1.0, np.nan, 2.0, 1.0, -0.0, 0.0], np.float32)
XB = np.array([True, False, True], bool)
XC = np.array([1 + 1j, 1 - 1j, 1 + 1j, np.nan], np.complex64)
X2 = np.array([[1, 2], [3, 4], [1, 2], [0, 9]], np.int32)
Y = np.array([2, 7, 3, 9], np.int32)

UNIQUE_KWARGS: list[dict[str, Any]] = [
    {}, {"return_index": True}, {"return_inverse": True}, {"return_counts": True},
    {"return_index": True, "return_inverse": True, "return_counts": True}, {"equal_nan": False},
    {"size": 7, "fill_value": -1}, {"size": 3}, {"size": 9, "return_index": True, "return_inverse": True, "return_counts": True},
]


@pytest.mark.parametrize("kwargs", UNIQUE_KWARGS, ids=repr)
@pytest.mark.parametrize("x", [XI, XF, XB, XC, np.zeros(0, np.float32), np.float32(2.5)], ids=["int", "float", "bool", "complex", "empty", "scalar"])
def test_unique(x: np.ndarray[Any, Any], kwargs: dict[str, Any]) -> None:
    with modes():
        if x.size == 0 and kwargs.get("size") and "fill_value" not in kwargs:
            check_raises(lambda v: fnp.unique(v, **kwargs), lambda v: jnp.unique(v, **kwargs), x)
            return
        check(lambda v: fnp.unique(v, **kwargs), lambda v: jnp.unique(v, **kwargs), x, staged="size" in kwargs)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_axis(axis: int) -> None:
    with modes():
        for kw in ({}, {"return_index": True, "return_inverse": True, "return_counts": True}, {"size": 5, "fill_value": 0}):
            check(lambda v: fnp.unique(v, axis=axis, **kw), lambda v: jnp.unique(v, axis=axis, **kw), X2, staged="size" in kw)


@pytest.mark.parametrize("name, fields", [
    ("unique_all", ("values", "indices", "inverse_indices", "counts")),
    ("unique_counts", ("values", "counts")),
    ("unique_inverse", ("values", "inverse_indices")),
    ("unique_values", None),
])
def test_array_api_unique(name: str, fields: tuple[str, ...] | None) -> None:
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    with modes():
        for x in (XI, XF, X2):
            check(ours, theirs, x, staged=False)
            check(lambda v: ours(v, size=6, fill_value=0), lambda v: theirs(v, size=6, fill_value=0), x)
        result = ours(XI)
        if fields is None:
            assert isinstance(result, fcore.Array)
        else:
            assert result._fields == fields == theirs(XI)._fields
            for f in fields:
                assert_same(getattr(result, f), getattr(theirs(XI), f), f)


SET_OPS = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]
PAIRS = [(XI, Y), (XI, Y.astype(np.float32)), (XF, XF[::-1]), (np.zeros(0, np.int32), Y), (Y, np.zeros(0, np.int32)), (XB, XB)]


@pytest.mark.parametrize("name", SET_OPS)
@pytest.mark.parametrize("pair", PAIRS, ids=["int", "mixed", "nan", "empty1", "empty2", "bool"])
def test_set_operations(name: str, pair: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]) -> None:
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    a, b = pair
    with modes():
        check(ours, theirs, a, b, staged=False)
        for kw in ({"size": 6}, {"size": 6, "fill_value": -9}, {"size": 1}):
            check(lambda u, v: ours(u, v, **kw), lambda u, v: theirs(u, v, **kw), a, b)
        if name != "union1d":
            uniq_a, uniq_b = np.unique(a), np.unique(b)
            check(lambda u, v: ours(u, v, assume_unique=True), lambda u, v: theirs(u, v, assume_unique=True), uniq_a, uniq_b, staged=False)
            check(lambda u, v: ours(u, v, assume_unique=True, size=5), lambda u, v: theirs(u, v, assume_unique=True, size=5),
                  uniq_a, uniq_b)


@pytest.mark.parametrize("assume_unique", [False, True])
def test_intersect1d_indices(assume_unique: bool) -> None:
    a, b = (np.array([3, 1, 2]), np.array([2, 5, 3])) if assume_unique else (XI, Y)
    with modes():
        kw: dict[str, Any] = {"return_indices": True, "assume_unique": assume_unique}
        check(lambda u, v: fnp.intersect1d(u, v, **kw), lambda u, v: jnp.intersect1d(u, v, **kw), a, b, staged=False)
        check(lambda u, v: fnp.intersect1d(u, v, size=4, **kw), lambda u, v: jnp.intersect1d(u, v, size=4, **kw), a, b)


def test_size_forms_work_under_jit_and_vmap() -> None:
    with modes():
        check(fcore.jit(lambda v: fnp.unique(v, size=5, fill_value=0, return_counts=True)),
              jax.jit(lambda v: jnp.unique(v, size=5, fill_value=0, return_counts=True)), XI, staged=False)
        batch = XI.reshape(2, 4)
        for name in SET_OPS:
            ours, theirs = getattr(fnp, name), getattr(jnp, name)
            # jax's side jitted: one compile instead of one per batched eager op (fcore's side is the test)
            check(fcore.vmap(lambda u, o=ours: o(u, u[:2] + 1, size=6)),
                  jax.jit(jax.vmap(lambda u, t=theirs: t(u, u[:2] + 1, size=6))), batch, staged=False)
        check(fcore.jit(lambda u, v: fnp.intersect1d(u, v, size=3, return_indices=True)),
              jax.jit(lambda u, v: jnp.intersect1d(u, v, size=3, return_indices=True)), XI, Y, staged=False)


@pytest.mark.parametrize("name", ["unique", "union1d", "intersect1d", "setdiff1d", "setxor1d", "unique_values"])
def test_without_size_a_traced_input_is_a_concretization_error(name: str) -> None:
    fn = getattr(fnp, name)
    args = (XI,) if name.startswith("unique") else (XI, Y)
    with pytest.raises(fcore.ConcretizationError, match="size"):
        fcore.jit(fn)(*args)


def test_bad_size_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        jnp.unique(XI, size=cast(Any, 2.5))
    with pytest.raises(TypeError):
        fnp.unique(XI, size=cast(Any, 2.5))


@settings(max_examples=12, deadline=None)
@given(values=st.lists(st.integers(-3, 3), min_size=0, max_size=9), other=st.lists(st.integers(-3, 3), max_size=5),
       size=st.integers(1, 8))
def test_set_operations_property(values: list[int], other: list[int], size: int) -> None:
    """Random small integer arrays: every set operation, with and without ``size``, as jnp's."""
    a, b = np.array(values, np.int32), np.array(other, np.int32)
    with modes():
        if a.size:
            check(lambda v: fnp.unique(v, return_counts=True, return_inverse=True),
                  lambda v: jnp.unique(v, return_counts=True, return_inverse=True), a, staged=False)
            check(lambda v: fnp.unique(v, size=size, fill_value=7), lambda v: jnp.unique(v, size=size, fill_value=7), a, staged=False)
        for name in SET_OPS:
            ours, theirs = getattr(fnp, name), getattr(jnp, name)
            check(ours, theirs, a, b, staged=False)
            check_or_raises(lambda u, v, o=ours: o(u, v, size=size), lambda u, v, t=theirs: t(u, v, size=size), a, b)

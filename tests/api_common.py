"""Shared helpers of the transformation front-end tests (``test_api_*.py``), differential against JAX.

A test writes ``run(L)`` once against a ``Lib`` (``L.ad`` is ``fcore`` or ``jax``, ``L.np`` its
NumPy module) and calls ``check(run)``: both libraries run it in the same 64-bit mode and the
results must agree in pytree structure and, leaf by leaf, in type of value (array or not),
shape, dtype, weak type and values (``float0`` leaves: shape only). ``check_error(run, ...)``
requires both to raise the same kind of exception, each message containing the fragments.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import tree_util as ftu

FLOAT0 = jax.dtypes.float0


@dataclass(frozen=True)
class Lib:
    """One library: its numpy and lax modules and its transformations."""

    name: str
    np: Any
    lax: Any
    ad: Any


FC = Lib("fcore", fnp, fcore.lax, fcore)
JX = Lib("jax", jnp, jax.lax, jax)


@contextlib.contextmanager
def modes(x64: bool = False) -> Iterator[None]:
    with jax.enable_x64(x64), fcore.enable_x64(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, fcore.Array, jax.Array))


def assert_same(got: Any, want: Any, what: str = "result") -> None:
    """Same structure; leaf by leaf the same kind, shape, dtype, weak type and values."""
    g_leaves, g_tree = ftu.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree), f"{what}: tree {g_tree} != jax's {w_tree}"
    for k, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        where = f"{what}, leaf {k}"
        assert _is_array(g) == _is_array(w), f"{where}: {type(g).__name__} where jax has {type(w).__name__}"
        if not isinstance(w, (bool, int, float, complex)) and not _is_array(w):
            assert type(g) is type(w) and g == w, f"{where}: {g!r} != jax's {w!r}"
            continue
        g_np, w_np = np.asarray(g), np.asarray(w)
        assert g_np.dtype == w_np.dtype, f"{where}: dtype {g_np.dtype} != jax's {w_np.dtype}"
        assert g_np.shape == w_np.shape, f"{where}: shape {g_np.shape} != jax's {w_np.shape}"
        if w_np.dtype == FLOAT0:
            assert isinstance(g, np.ndarray), f"{where}: a float0 value is a NumPy array, got {type(g).__name__}"
            continue
        g_weak, w_weak = getattr(g, "weak_type", False), getattr(w, "weak_type", False)
        assert g_weak == w_weak, f"{where}: weak_type {g_weak} != jax's {w_weak}"
        if w_np.dtype.kind in "biu":
            np.testing.assert_array_equal(g_np, w_np, err_msg=where)
        else:
            wide = np.complex128 if w_np.dtype.kind == "c" else np.float64
            tol = 1e-12 if w_np.dtype.itemsize >= 8 and w_np.dtype.kind == "f" else 1e-5 if w_np.dtype.itemsize >= 4 else 1e-2
            np.testing.assert_allclose(g_np.astype(wide), w_np.astype(wide), rtol=tol, atol=tol, err_msg=where)


def check(run: Callable[[Lib], Any], x64: bool = False) -> Any:
    """``run`` gives the same result with fcore and with jax; returns fcore's."""
    with modes(x64):
        want = run(JX)
        got = run(FC)
    assert_same(got, want)
    return got


def _raised(fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def _expected_type(want: BaseException) -> type[BaseException]:
    """The fcore exception class for a jax exception (JAX's own classes map to builtins or fcore's)."""
    if isinstance(want, jax.errors.ConcretizationTypeError):
        return fcore.ConcretizationError
    for builtin in (NotImplementedError, TypeError, ValueError):
        if isinstance(want, builtin):
            return builtin
    return type(want)


def check_error(run: Callable[[Lib], Any], *fragments: str, x64: bool = False) -> BaseException:
    """Both raise; fcore's exception has the class jax's maps to (``_expected_type``, exactly
    for builtins) and both messages contain every fragment. Returns fcore's exception."""
    with modes(x64):
        want = _raised(lambda: run(JX))
        got = _raised(lambda: run(FC))
    expected = _expected_type(want)
    if expected in (NotImplementedError, TypeError, ValueError):
        assert type(got) is expected, f"fcore raised {type(got).__name__}: {got}; jax raised {type(want).__name__}: {want}"
    else:
        assert isinstance(got, expected), f"fcore raised {type(got).__name__}: {got}; jax raised {type(want).__name__}"
    for fragment in fragments:
        assert fragment in str(want), f"the fragment {fragment!r} is not in jax's message: {want}"
        assert fragment in str(got), f"the fragment {fragment!r} is not in fcore's message: {got}"
    return got

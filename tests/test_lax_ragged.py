"""``fcore.lax.ragged_dot`` / ``ragged_dot_general`` against ``jax.lax``: values and dtypes
(eagerly and under ``jit``), the three ragged modes, jvp/grad w.r.t. lhs and rhs, vmap, and
JAX's errors for bad shapes and dtypes."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import fcore
from fcore import lax
from test_numpy_common import assert_same, check, check_raises, modes, sample

# jax types ragged_dot's operands as jax.Array (NumPy operands work at run time) and leaves
# RaggedDotDimensionNumbers' __init__ untyped.
jlax: Any = jax.lax
F32 = np.dtype(np.float32)
X = sample(F32, (7, 3), seed=1)
W = sample(F32, (3, 3, 4), seed=2)
GS = np.array([2, 0, 4], np.int32)  # an empty group, and a last row in no group


def test_ragged_dot_values_and_dtypes() -> None:
    with modes():
        check(lambda a, b, g: lax.ragged_dot(a, b, g), lambda a, b, g: jlax.ragged_dot(a, b, g), X, W, GS)
        check(fcore.jit(lax.ragged_dot), jax.jit(jlax.ragged_dot), X, W, np.array([-1, 5, 3], np.int8))
        bf = X.astype(jax.numpy.bfloat16)
        check(lambda a: lax.ragged_dot(a, W, GS, preferred_element_type=np.float32),
              lambda a: jlax.ragged_dot(a, W, GS, preferred_element_type=np.float32), bf)
        check(lambda a: lax.ragged_dot(a, W, GS), lambda a: jlax.ragged_dot(a, W, GS), bf)
        xi, wi = (X * 4).astype(np.int8), (W * 4).astype(np.int8)
        check(lambda a, b: lax.ragged_dot(a, b, GS), lambda a, b: jlax.ragged_dot(a, b, GS), xi, wi)
        check(lambda a, b: lax.ragged_dot(a, b, GS), lambda a, b: jlax.ragged_dot(a, b, GS), X, wi)


def _dims(dn: Any, ragged: list[int], group: list[int]) -> tuple[Any, Any]:
    return lax.RaggedDotDimensionNumbers(dn, ragged, group), jlax.RaggedDotDimensionNumbers(dn, ragged, group)


# (lhs, rhs, group_sizes, dot dimension numbers, lhs ragged dims, rhs group dims): the three modes,
# with a batch axis and group sizes per batch row.
B_L = sample(F32, (2, 5, 3), seed=3)
GENERAL: list[tuple[Any, ...]] = [
    (B_L, sample(F32, (2, 2, 3, 4), seed=4), np.array([[1, 4], [3, 1]], np.int32), (([2], [2]), ([0], [1])), [1], [0]),
    (sample(F32, (5, 6), seed=5), sample(F32, (6, 4), seed=6), np.array([2, 3, 1], np.int32), (([1], [0]), ([], [])), [1], []),
    (B_L, sample(F32, (2, 3, 4), seed=7), np.array([1, 1], np.int32), (([2], [1]), ([0], [0])), [0], []),
]


@pytest.mark.parametrize("case", range(len(GENERAL)))
def test_ragged_dot_general_modes(case: int) -> None:
    lhs, rhs, gs, dn, ragged, group = GENERAL[case]
    mine, theirs = _dims(dn, ragged, group)
    with modes():
        check(lambda a, b: lax.ragged_dot_general(a, b, gs, mine), lambda a, b: jlax.ragged_dot_general(a, b, gs, theirs),
              lhs, rhs)


def test_ragged_dot_grad_jvp_vmap() -> None:
    with modes():
        for argnums in (0, 1, (0, 1)):
            check(fcore.grad(lambda a, b: (lax.ragged_dot(a, b, GS) ** 2).sum(), argnums=argnums),
                  jax.grad(lambda a, b: (jlax.ragged_dot(a, b, GS) ** 2).sum(), argnums=argnums), X, W, staged=False)
        tx, tw = sample(F32, X.shape, seed=8), sample(F32, W.shape, seed=9)
        check(lambda: fcore.jvp(lambda a, b: lax.ragged_dot(a, b, GS), (X, W), (tx, tw)),
              lambda: jax.jvp(lambda a, b: jlax.ragged_dot(a, b, GS), (X, W), (tx, tw)), staged=False)
        xs, ws, gss = np.stack([X, -X]), np.stack([W, 2 * W]), np.stack([GS, np.array([4, 3, 0], np.int32)])
        check(fcore.vmap(lax.ragged_dot), jax.vmap(jlax.ragged_dot), xs, ws, gss)


def test_ragged_dot_general_grad() -> None:
    lhs, rhs, gs, dn, ragged, group = GENERAL[0]
    mine, theirs = _dims(dn, ragged, group)
    with modes():
        check(fcore.grad(lambda a, b: lax.ragged_dot_general(a, b, gs, mine).sum(), argnums=(0, 1)),
              jax.grad(lambda a, b: jlax.ragged_dot_general(a, b, gs, theirs).sum(), argnums=(0, 1)), lhs, rhs,
              staged=False)


@pytest.mark.parametrize("args", [
    (X, W, GS[:2]), (X, W[:, :1], GS), (X, W, GS.astype(np.float32)), (X[0], W, GS), (X, W[0], GS), (X, W, GS[None]),
])
def test_ragged_dot_errors(args: tuple[Any, ...]) -> None:
    with modes():
        check_raises(lax.ragged_dot, jlax.ragged_dot, *args, exc=TypeError)


def test_ragged_dot_error_messages_and_group_offset() -> None:
    with modes():
        for args in [(X, W, GS[:2]), (X, W, GS[None]), (X, W, GS.astype(np.float32))]:
            with pytest.raises(TypeError) as theirs:
                jlax.ragged_dot(*args)
            with pytest.raises(TypeError, match=f"^{__import__('re').escape(str(theirs.value))}$"):
                lax.ragged_dot(*args)
        mine, theirs_dims = _dims((([1], [0]), ([], [])), [0], [])  # the ragged dim among the free dims, no group dim
        with pytest.raises(TypeError, match="exactly one rhs group dimension"):
            jlax.ragged_dot_general(X, W[0], GS, theirs_dims)
        with pytest.raises(TypeError, match="exactly one rhs group dimension"):
            lax.ragged_dot_general(X, W[0], GS, mine)
        with pytest.raises((NotImplementedError, TypeError)):  # JAX: an array offset is an unhashable parameter
            jlax.ragged_dot(X, W, GS, group_offset=np.array([1], np.int32))
        with pytest.raises(NotImplementedError, match="group_offset"):
            lax.ragged_dot(X, W, GS, group_offset=np.array([1], np.int32))
        assert_same(lax.ragged_dot(X, W, np.array([7, 0, 0], np.int32)), jax.numpy.einsum("mk,kn->mn", X, W[0]))

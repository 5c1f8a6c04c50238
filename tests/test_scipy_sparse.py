"""``fcore.scipy.sparse.linalg`` against ``jax.scipy.sparse.linalg``: ``cg``, ``bicgstab`` and
``gmres`` (both solve methods) with matrices, functions and preconditioners, real and complex,
on pytrees, in one ``jit`` program per library; ``grad`` (through ``custom_linear_solve``) and
``vmap``; staged types in 64-bit mode; the errors JAX raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest

import fcore
from fcore.scipy.sparse import linalg as fsl
from test_numpy_common import modes

RNG = np.random.default_rng(0)
_A = RNG.standard_normal((5, 5)).astype(np.float32)
SPD = (_A @ _A.T + 5 * np.eye(5)).astype(np.float32)
GEN = (_A + 4 * np.eye(5)).astype(np.float32)
B = RNG.standard_normal(5).astype(np.float32)
HPD = (SPD + 1j * (_A - _A.T)).astype(np.complex64)
BC = (B + 1j * B[::-1]).astype(np.complex64)


def _all(m: Any) -> Callable[[Any, Any, Any, Any, Any], list[Any]]:
    """Every case as one function of the inputs (one program under ``jit``)."""
    def run(spd: Any, gen: Any, b: Any, hpd: Any, bc: Any) -> list[Any]:
        jacobi = np.diag(1 / np.diag(SPD)).astype(np.float32)
        return [
            m.cg(spd, b), m.cg(lambda x: spd @ x, b, tol=1e-6), m.cg(spd, b, M=jacobi, maxiter=3),
            m.cg(hpd, bc), m.cg(lambda t: {"u": spd @ t["u"], "v": 2.0 * t["v"]}, {"u": b, "v": b[:2]}),
            m.bicgstab(gen, b), m.bicgstab(gen, b, x0=b, atol=1e-3), m.bicgstab(hpd, bc, M=lambda x: x / 5),
            m.gmres(gen, b), m.gmres(gen, b, restart=2, maxiter=4), m.gmres(gen, b, solve_method="incremental", restart=3),
            m.gmres(hpd, bc, solve_method="incremental"), m.gmres(lambda x: gen @ x, b, M=jacobi),
        ]
    return run


ARGS = (SPD, GEN, B, HPD, BC)


def _compare(got: Any, want: Any, what: str, tol: float = 1e-4) -> None:
    g_leaves, w_leaves = fcore.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert str(fcore.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want)), what
    for g, w in zip(g_leaves, w_leaves):
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type), what
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol, err_msg=what)


def test_solvers_match_jax_under_jit() -> None:
    with modes():
        got, want = fcore.jit(_all(fsl))(*ARGS), jax.jit(_all(jsl))(*ARGS)
    for i, (g, w) in enumerate(zip(got, want)):
        _compare(g, w, f"case {i}")


def test_solvers_eager_and_x64_types() -> None:
    with modes():
        theirs_cg: Any = jsl.cg
        _compare(fsl.cg(SPD, B), theirs_cg(SPD, B), "eager cg")
    args = tuple(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) for a in ARGS)
    with modes(x64=True):
        mine = fcore.make_jaxpr(_all(fsl))(*args).out_avals
        theirs = jax.make_jaxpr(_all(jsl))(*args).out_avals
        assert [(a.shape, a.dtype, a.weak_type) for a in mine] == [(a.shape, a.dtype, a.weak_type) for a in theirs]


def test_solvers_grad_and_vmap() -> None:
    """The derivative is a solve with the transposed operator (``custom_linear_solve``)."""
    def loss(m: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: (m.cg(a, b)[0] ** 2).sum() + m.gmres(a, b)[0].sum()

    def batched(m: Any) -> Callable[[Any], Any]:
        return lambda b: m.bicgstab(GEN, b)[0]

    bs = np.stack([B, 2 * B, B[::-1]])
    with modes():
        _compare(fcore.jit(fcore.grad(loss(fsl), argnums=(0, 1)))(SPD, B),
                 jax.jit(jax.grad(loss(jsl), argnums=(0, 1)))(SPD, B), "grad", tol=1e-3)
        _compare(fcore.jit(fcore.vmap(batched(fsl)))(bs), jax.jit(jax.vmap(batched(jsl)))(bs), "vmap")


@pytest.mark.parametrize(("call", "exc"), [
    (lambda m: m.cg(GEN[:, :3], B), ValueError),
    (lambda m: m.cg("matrix", B), TypeError),
    (lambda m: m.cg(SPD, B, x0=B[:3]), ValueError),
    (lambda m: m.bicgstab(SPD, B, x0=(B,)), ValueError),
    (lambda m: m.gmres(SPD, B, x0=(B,)), ValueError),
    (lambda m: m.gmres(SPD, B, solve_method="qr"), ValueError),
])
def test_solver_errors_match_jax(call: Callable[[Any], Any], exc: type[Exception]) -> None:
    with pytest.raises(exc) as theirs:
        call(jsl)
    with pytest.raises(exc) as mine:
        call(fsl)
    assert str(mine.value).split(":")[0] == str(theirs.value).split(":")[0]


def test_public_names() -> None:
    assert sorted(fsl.__all__) == sorted(n for n in dir(jsl) if not n.startswith("_"))

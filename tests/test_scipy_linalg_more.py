"""``fcore.scipy.linalg``'s ``invhilbert``, ``invpascal``, ``fiedler_companion``,
``qr_multiply`` and ``eigh_tridiagonal`` against ``jax.scipy.linalg`` (and ``lax.linalg.ormqr``,
which ``qr_multiply`` applies Q with): values, dtypes, shapes and errors."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import fcore
import fcore.scipy.linalg as fsl
from test_numpy_common import assert_same, check, check_raises, modes, sample

jsl: Any = jax.scipy.linalg  # typed for jax.Array operands; NumPy ones work at run time
F32 = np.dtype(np.float32)
A = sample(F32, (5, 3), seed=11)
B = sample(F32, (4, 5), seed=12)
W = sample(F32, (3, 5), seed=13)
C = (sample(F32, (5, 3), seed=14) + 1j * sample(F32, (5, 3), seed=15)).astype(np.complex64)
D = sample(F32, (6,), seed=16)
E = sample(F32, (5,), seed=17)


def test_special_matrices() -> None:
    with modes():
        check(lambda: fsl.invhilbert(5), lambda: jsl.invhilbert(5), staged=False)
        for kind in (None, "upper"):
            check(lambda: fsl.invpascal(5, kind), lambda: jsl.invpascal(5, kind), staged=False)
        # jax's fiedler_companion runs op by op (about a second eagerly): compared with it jitted
        for a in (np.array([1.0, -10, 31, -30, 2]), np.array([2.0]), np.array([1, 2]), np.arange(1.0, 7.0).reshape(2, 3)):
            check(fsl.fiedler_companion, jax.jit(jsl.fiedler_companion), a, staged=False)
    with modes(x64=True):
        check(lambda: fsl.invhilbert(4), lambda: jsl.invhilbert(4), staged=False)
    check_raises(fsl.invpascal, jsl.invpascal, 3, "diagonal", exc=ValueError)
    check_raises(fsl.fiedler_companion, jsl.fiedler_companion, np.zeros((2, 0)), exc=ValueError)


@pytest.mark.parametrize("a, c, kw", [
    (A, B, {}), (A, B[0, :3], {"mode": "left"}), (A, B, {"pivoting": True}), (W, B[:3, :4], {"mode": "left"}),
    (C, B[:, :3].T.astype(np.complex64), {"mode": "left", "conjugate": True}),
    (np.stack([np.arange(6).reshape(3, 2)] * 2), np.ones(3, np.int32), {}),
])
def test_qr_multiply(a: Any, c: Any, kw: dict[str, Any]) -> None:
    with modes():
        check(lambda x, y: fsl.qr_multiply(x, y, **kw), lambda x, y: jsl.qr_multiply(x, y, **kw), a, c, staged=False)


def test_lax_linalg_ormqr() -> None:
    """``lax.linalg.ormqr`` (LAPACK's, as JAX calls it) on geqrf's reflectors."""
    h, taus = (np.asarray(t) for t in fcore.lax.linalg.geqrf(A))
    c = sample(F32, (5, 4), seed=18)
    jl: Any = jax.lax.linalg
    with modes():
        for left, transpose, operand in [(True, False, c), (True, True, c), (False, False, c.T)]:
            check(lambda x: fcore.lax.linalg.ormqr(h, taus, x, left=left, transpose=transpose),
                  lambda x: jl.ormqr(h, taus, x, left=left, transpose=transpose), operand)
        check(fcore.vmap(lambda x: fcore.lax.linalg.ormqr(h, taus, x)), jax.vmap(lambda x: jl.ormqr(h, taus, x)),
              np.stack([c, 2 * c]))
        check_raises(fcore.lax.linalg.ormqr, jl.ormqr, h, taus, c.T, exc=ValueError)


def test_qr_multiply_errors() -> None:
    cases: list[tuple[Any, ...]] = [(A, B, "middle"), (A, B[:, :3]), (A, B[:, :4].T, "left")]
    for args in cases:
        with pytest.raises(ValueError) as theirs:
            jsl.qr_multiply(*args)
        with pytest.raises(ValueError, match=f"^{__import__('re').escape(str(theirs.value))}$"):
            fsl.qr_multiply(*args)


def test_eigh_tridiagonal() -> None:
    dc, ec = D.astype(np.complex64), (E + 1j * E[::-1]).astype(np.complex64)
    with modes():
        want = jsl.eigh_tridiagonal(D, E, eigvals_only=True)
        assert_same(fsl.eigh_tridiagonal(D, E, eigvals_only=True), want)
        assert_same(fcore.jit(lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True))(D, E), want)
        assert_same(fsl.eigh_tridiagonal(D, E, eigvals_only=True, select="i", select_range=(1, 3)), want[1:4])
        # eigenvectors from the same random starts as JAX's: the same vectors, signs included
        check(lambda d, e: fsl.eigh_tridiagonal(d, e, select="i", select_range=(2, 4)),
              lambda d, e: jsl.eigh_tridiagonal(d, e, select="i", select_range=(2, 4)), dc, ec, staged=False)
        check(lambda d: fsl.eigh_tridiagonal(d, E[:0]), lambda d: jsl.eigh_tridiagonal(d, E[:0]), D[:1], staged=False)


@pytest.mark.parametrize("args, kw, exc", [
    ((D, E), {"select": "v"}, NotImplementedError), ((D, E), {"select": "x"}, ValueError),
    ((D, E), {"select": "i"}, ValueError), ((D, E), {"select": "i", "select_range": (3, 1)}, ValueError),
    ((D.astype(np.float16), E.astype(np.float16)), {}, TypeError), ((np.arange(3), np.arange(2)), {}, TypeError),
    ((D, E.astype(np.complex64)), {}, TypeError),
])
def test_eigh_tridiagonal_errors(args: tuple[Any, ...], kw: dict[str, Any], exc: type[Exception]) -> None:
    with modes():
        with pytest.raises(exc) as theirs:
            jsl.eigh_tridiagonal(*args, eigvals_only=True, **kw)
        with pytest.raises(exc, match=f"^{__import__('re').escape(str(theirs.value))}$"):
            fsl.eigh_tridiagonal(*args, eigvals_only=True, **kw)

"""``jvp``, ``linearize`` and ``vjp`` against JAX: ``has_aux``, pytrees, dtypes and weak types, errors.

(``float0`` tangents and cotangents are in ``test_api_float0.py``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from api_common import Lib, check, check_error

X3 = np.array([0.5, -1.0, 2.0], np.float32)
Z = np.complex64(1 + 1j)


def aux_fun(L: Lib) -> Any:
    return lambda x: (L.np.sin(x) * 2, {"cos": L.np.cos(x), "n": 3, "tag": "aux"})


# -- has_aux: the aux output is returned as primal values ----------------------------------------
def test_jvp_has_aux() -> None:
    check(lambda L: L.ad.jvp(aux_fun(L), (X3,), (X3,), has_aux=True))


def test_linearize_has_aux() -> None:
    def run(L: Lib) -> Any:
        out, f_jvp, aux = L.ad.linearize(aux_fun(L), X3, has_aux=True)
        return out, f_jvp(X3), aux

    check(run)


def test_vjp_has_aux() -> None:
    def run(L: Lib) -> Any:
        out, f_vjp, aux = L.ad.vjp(aux_fun(L), X3, has_aux=True)
        return out, f_vjp(X3), aux

    check(run)


def test_fwd_and_bwd() -> None:
    """``fwd_and_bwd``: vjp as two jitted functions; an int argnums gives one cotangent, not a tuple."""
    W = np.ones((3, 3), np.float32)

    def run(L: Lib) -> Any:
        fwd, bwd = L.ad.fwd_and_bwd(lambda w, x: L.np.tanh(x @ w), argnums=(0, 1))
        y, res = fwd(W, X3[None])
        fwd1, bwd1 = L.ad.fwd_and_bwd(lambda w, x: (L.np.sin(x @ w), 2), argnums=1, has_aux=True, jitted=False)
        y1, res1, aux = fwd1(W, X3[None])
        return y, bwd(res, y), y1, bwd1(res1, y1), aux

    check(run)


def test_has_aux_errors() -> None:
    check_error(lambda L: L.ad.vjp(lambda x: x, X3, has_aux=True), "two-element tuple")
    check_error(lambda L: L.ad.linearize(lambda x: (x, x, x), X3, has_aux=True), "two-element tuple")


# -- dtypes and weak types of outputs ------------------------------------------------------------
PRIMALS: dict[str, Any] = {
    "python_float": 2.0,
    "np_float32": np.float32(2.0),
    "float16": np.float16(2.0),
    "array": X3,
    "float64": X3.astype(np.float64),
    "complex": Z,
}


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", list(PRIMALS))
def test_output_types(name: str, x64: bool) -> None:
    x = PRIMALS[name]

    def f(L: Lib) -> Any:
        return lambda v: (L.np.sin(v) * v, v * 2, 1.0)

    def run(L: Lib) -> Any:
        t = L.np.ones_like(x) if name != "python_float" else 1.0
        lin_out, f_jvp = L.ad.linearize(f(L), x)
        vjp_out, f_vjp = L.ad.vjp(f(L), x)
        return L.ad.jvp(f(L), (x,), (t,)), lin_out, f_jvp(t), vjp_out, f_vjp(vjp_out)

    check(run, x64=x64)


def test_pytree_primals_and_outputs() -> None:
    primals = ({"a": X3, "b": [np.float32(1.0), None]}, np.float32(2.0))

    def f(L: Lib) -> Any:
        return lambda p, s: {"y": p["a"] * p["b"][0] * s, "z": (s * s, None)}

    check(lambda L: L.ad.jvp(f(L), primals, primals))

    def run(L: Lib) -> Any:
        out, f_vjp = L.ad.vjp(f(L), *primals)
        return out, f_vjp(out)

    check(run)


def test_concrete_control_flow() -> None:
    def f(x: Any) -> Any:
        return x**2 if x > 0 else -x

    for x in (3.0, -3.0):
        check(lambda L: L.ad.jvp(f, (x,), (1.0,)))
        check(lambda L: L.ad.linearize(f, x)[1](1.0))
        check(lambda L: L.ad.vjp(f, x)[1](1.0))


# -- errors ----------------------------------------------------------------------------------------
def test_jvp_argument_errors() -> None:
    check_error(lambda L: L.ad.jvp(L.np.sin, X3, X3), "must be tuples or lists")
    check_error(lambda L: L.ad.jvp(lambda x, y: x, (X3, X3), (X3,)), "same tree structure")
    check_error(lambda L: L.ad.jvp(lambda x: x, [X3], (X3,)), "same tree structure", "PyTreeDef([*])")
    check_error(lambda L: L.ad.jvp(lambda x: x, (X3,), (None,)), "same tree structure")
    check_error(lambda L: L.ad.jvp(lambda x: x, (X3,), (np.ones(4, np.float32),)), "different primal and tangent shapes")
    check_error(lambda L: L.ad.jvp(lambda x: x, (X3,), (1.0,)), "different primal and tangent shapes")
    check_error(lambda L: L.ad.jvp(lambda x: x, (1.0,), (Z,)), "dtypes must be equal", "complex64")
    check_error(lambda L: L.ad.jvp(3, (1.0,), (1.0,)), "Expected a callable value")


def test_linearize_argument_errors() -> None:
    check_error(lambda L: L.ad.linearize(lambda x: x, X3)[1](X3, X3), "PyTreeDef((*,))")
    check_error(lambda L: L.ad.linearize(L.np.sin, X3)[1](X3.astype(np.float16)), "float16[3]", "float32[3]")
    check_error(lambda L: L.ad.linearize(L.np.sin, X3)[1](np.ones(4, np.float32)), "float32[4]")


def test_vjp_argument_errors() -> None:
    def two(L: Lib) -> Any:
        return L.ad.vjp(lambda x: (x, x), X3)[1]

    check_error(lambda L: two(L)((X3, None)), "unexpected tree structure")
    check_error(lambda L: two(L)([X3, X3]), "unexpected tree structure")
    check_error(lambda L: two(L)((X3,)), "unexpected tree structure")
    check_error(lambda L: L.ad.vjp(lambda x: x, 1.0)[1](1.0, 2.0), "was called with 2 arguments")
    check_error(lambda L: L.ad.vjp(L.np.sin, X3)[1](X3.astype(np.int32)), "got int32[3], but expected float32[3]")
    check_error(lambda L: L.ad.vjp(L.np.sin, X3)[1](np.ones(4, np.float32)), "got float32[4], but expected float32[3]")
    check_error(lambda L: L.ad.vjp(lambda z: z * z, Z)[1](1.0), "got float32[], but expected complex64[]")
    check_error(lambda L: L.ad.vjp(lambda x: x, 1.0, reduce_axes=("i",)), "reduce_axes")
    check_error(lambda L: L.ad.vjp(lambda x: 1.0, "a"), "of type <class 'str'> is not a valid JAX type")
    check_error(lambda L: L.ad.vjp(None, 1.0), "Expected a callable value")

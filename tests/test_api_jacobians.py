"""``jacfwd``, ``jacrev`` and ``hessian`` against JAX: structure of pytree Jacobians, dtypes and
weak types of each block, ``argnums``, ``has_aux``, ``holomorphic``, keyword arguments, errors.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from api_common import Lib, check, check_error

X3 = np.array([0.5, -1.0, 2.0], np.float32)
X23 = np.arange(1, 7, dtype=np.float32).reshape(2, 3) / 4
Z2 = np.array([1 + 1j, -0.5 + 2j], np.complex64)
JACOBIANS = ["jacfwd", "jacrev", "jacobian", "hessian"]


def jac(L: Lib, name: str) -> Any:
    return getattr(L.ad, name)


def smooth(L: Lib) -> Any:
    return lambda x: L.np.sin(x) * L.np.sum(x**2)


CASES: dict[str, tuple[Any, Any]] = {
    # name: (fun(L) -> f, args)
    "python_scalar": (lambda L: lambda x: x**3, (1.5,)),
    "np_scalar": (lambda L: lambda x: x**3, (np.float32(1.5),)),
    "vector": (smooth, (X3,)),
    "matrix_to_matrix": (lambda L: lambda x: x.T @ x, (X23,)),
    "vector_to_scalar": (lambda L: lambda x: L.np.sum(x**3), (X3,)),
    "pytree_in": (lambda L: lambda p: p["a"] * L.np.sum(p["b"]), ({"a": X3, "b": X23},)),
    "pytree_out": (lambda L: lambda x: {"s": L.np.sum(x), "v": [x * 2, x[:2] ** 2]}, (X3,)),
    "float16": (smooth, (X3.astype(np.float16),)),
    "bfloat16": (smooth, (X3.astype(ml_dtypes.bfloat16),)),
    "mixed_dtype_outputs": (lambda L: lambda x: (x**2, (x**2).astype(L.np.float16)), (X3,)),
    "constant_outputs": (lambda L: lambda x: (L.np.ones(2), 2.0), (X3,)),
    "empty_input": (lambda L: lambda x: L.np.sum(x) + 1.0, (np.zeros(0, np.float32),)),
    "concrete_control_flow": (lambda L: lambda x: x**2 if x > 0 else -x, (1.5,)),
}


@pytest.mark.parametrize("name", JACOBIANS)
@pytest.mark.parametrize("case", list(CASES))
def test_jacobian(case: str, name: str) -> None:
    make, args = CASES[case]
    check(lambda L: jac(L, name)(make(L))(*args))


@pytest.mark.parametrize("name", JACOBIANS)
def test_float64(name: str) -> None:
    check(lambda L: jac(L, name)(smooth(L))(X3.astype(np.float64)), x64=True)


@pytest.mark.parametrize("name", JACOBIANS)
@pytest.mark.parametrize("argnums", [(0, 1), -1, (1,), [0]])
def test_argnums_and_mixed_weak_types(name: str, argnums: Any) -> None:
    check(lambda L: jac(L, name)(lambda x, y: x * L.np.sum(y**2), argnums=argnums)(1.5, X3))
    check(lambda L: jac(L, name)(lambda x, y: x * y, argnums=argnums)(1.5, np.float32(2.0)))


@pytest.mark.parametrize("name", JACOBIANS)
def test_keyword_arguments_pass_through(name: str) -> None:
    check(lambda L: jac(L, name)(lambda x, y: L.np.sin(x) * y)(X3, y=2.0))


@pytest.mark.parametrize("name", JACOBIANS)
def test_has_aux(name: str) -> None:
    check(lambda L: jac(L, name)(lambda x: (L.np.sum(x**3), {"x": x, "n": 2}), has_aux=True)(X3))


@pytest.mark.parametrize("name", JACOBIANS)
def test_holomorphic(name: str) -> None:
    check(lambda L: jac(L, name)(lambda z: z * z + L.np.sin(z), holomorphic=True)(Z2))
    check_error(lambda L: jac(L, name)(lambda x: x * x, holomorphic=True)(X3), "holomorphic=True requires inputs with complex dtype")


def test_complex_inputs_and_outputs() -> None:
    check(lambda L: L.ad.jacrev(lambda z: (z * z).real)(Z2))
    check(lambda L: L.ad.jacfwd(lambda x: x * 1j)(X3))
    for name in ("jacfwd", "hessian"):
        check_error(lambda L: jac(L, name)(lambda z: (z * z).real)(Z2), "jacfwd requires real-valued inputs", "complex64")
    for name in ("jacrev", "hessian"):
        check_error(lambda L: jac(L, name)(lambda x: x * 1j)(X3), "jacrev requires real-valued outputs", "complex64")


def test_integer_inputs_and_outputs() -> None:
    n3 = np.arange(3, dtype=np.int32)
    check_error(lambda L: L.ad.jacfwd(lambda n: n * 2.0)(n3), "jacfwd requires real-valued inputs", "int32")
    check_error(lambda L: L.ad.jacrev(lambda n: n * 2.0)(n3), "int32", "allow_int")
    check(lambda L: L.ad.jacfwd(lambda x: (x > 1).astype(L.np.int32))(X3))
    check_error(lambda L: L.ad.jacrev(lambda x: (x > 1).astype(L.np.int32))(X3), "jacrev requires real-valued outputs", "int32")


@pytest.mark.parametrize("name", JACOBIANS)
def test_argument_errors(name: str) -> None:
    check_error(lambda L: jac(L, name)(lambda x, y: x * y, argnums=2)(X3, X3), "Positional argument indices")
    check_error(lambda L: jac(L, name)(3), "Expected a callable value")


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_under_vmap_and_jit(name: str) -> None:
    check(lambda L: L.ad.vmap(jac(L, name)(smooth(L)))(X23))
    check(lambda L: L.ad.jit(jac(L, name)(smooth(L)))(X3))

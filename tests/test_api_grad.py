"""``grad`` and ``value_and_grad`` against JAX: options, argument kinds, dtypes and weak types, errors.

Every test runs the same code with fcore and with jax (``api_common.check``/``check_error``).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from api_common import FC, JX, Lib, check, check_error

X3 = np.array([0.5, -1.0, 2.0], np.float32)
N3 = np.array([1, -2, 3], np.int32)
Point = namedtuple("Point", ["x", "y"])


def cube_sum(L: Lib) -> Any:
    return lambda x: L.np.sum(x**3)


# -- argument kinds: dtypes and weak types of the gradient follow the input ----------------------
SCALARS: dict[str, Any] = {
    "python_float": 1.5,
    "np_float32": np.float32(1.5),
    "np_float16": np.float16(1.5),
    "bfloat16": ml_dtypes.bfloat16(1.5),
    "np_float64": np.float64(1.5),
    "array_f32": X3,
    "array_f16": X3.astype(np.float16),
    "array_f64": X3.astype(np.float64),
}


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", list(SCALARS))
def test_value_and_grad_dtypes_and_weak_types(name: str, x64: bool) -> None:
    x = SCALARS[name]
    check(lambda L: L.ad.value_and_grad(lambda v: L.np.sum(L.np.sin(v) * v))(x), x64=x64)


def test_grad_of_weak_constant_and_independent_outputs() -> None:
    check(lambda L: L.ad.value_and_grad(lambda x: 1.0)(3.0))
    check(lambda L: L.ad.value_and_grad(lambda x, y: y, argnums=0)(3.0, np.float32(2.0)))
    check(lambda L: L.ad.grad(lambda x: x * 2)(3.0))
    check(lambda L: L.ad.grad(lambda x: (x * x).sum())(L.np.ones(3)))


def test_cotangent_of_a_weak_input_that_meets_a_strong_array() -> None:
    check(lambda L: L.ad.grad(lambda x: L.np.sum(x * np.ones(3, np.float32)))(3.0))
    check(lambda L: L.ad.grad(lambda x, y: L.np.sum(x * y), argnums=(0, 1))(3.0, np.ones(3, np.float32)))
    check(lambda L: L.ad.vjp(lambda x: x * np.ones(3, np.float32), 3.0)[1](np.ones(3, np.float32)))


def test_grad_of_complex_input_with_real_output() -> None:
    check(lambda L: L.ad.grad(lambda z: (z * z).real)(np.complex64(1 + 2j)))


def test_grad_pytree_arguments() -> None:
    params = {"w": X3, "b": [np.float32(1.0), None], "p": Point(np.float32(2.0), X3)}

    def loss(L: Lib) -> Any:
        return lambda p: L.np.sum(p["w"] * p["b"][0]) + p["p"].x * L.np.sum(p["p"].y)

    check(lambda L: L.ad.value_and_grad(loss(L))(params))
    check(lambda L: L.ad.grad(lambda xs: xs[0] * xs[1])([1.0, 2.0]))


def test_grad_passes_keyword_arguments_through() -> None:
    check(lambda L: L.ad.grad(lambda x, y: x * y)(3.0, y=2.0))
    check(lambda L: L.ad.grad(lambda x, y: x * y)(np.float32(3.0), y=np.float32(2.0)))


# -- argnums ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, -1, -2, (0, 1), (1, 0), [1], (np.int64(1),), np.int32(1)])
def test_argnums(argnums: Any) -> None:
    check(lambda L: L.ad.value_and_grad(lambda x, y: x * L.np.sum(y**2), argnums=argnums)(np.float32(3.0), X3))


def test_argnums_beyond_the_arguments_is_a_type_error() -> None:
    check_error(lambda L: L.ad.grad(lambda x, y: x * y, argnums=2)(3.0, 2.0), "argnums=2", "requires at least 3")
    check_error(lambda L: L.ad.grad(lambda x, y: x * y)(x=3.0, y=2.0), "requires at least 1")


def test_negative_argnums_out_of_range_is_a_value_error() -> None:
    check_error(lambda L: L.ad.grad(lambda x, y: x * y, argnums=-3)(3.0, 2.0), "-3")


# -- has_aux ---------------------------------------------------------------------------------------
def test_has_aux_returns_primal_values() -> None:
    def f(L: Lib) -> Any:
        return lambda x: (L.np.sum(x**2), {"x": x, "sin": L.np.sin(x), "n": 2, "s": "label"})

    got = check(lambda L: L.ad.grad(f(L), has_aux=True)(X3))
    np.testing.assert_allclose(np.asarray(got[1]["sin"]), np.sin(X3), rtol=1e-6)  # not a leaked tracer
    check(lambda L: L.ad.value_and_grad(f(L), has_aux=True)(X3))
    check(lambda L: L.ad.grad(lambda x: [x * x, x + 1], has_aux=True)(3.0))


def test_has_aux_under_an_outer_transformation() -> None:
    def per_example(L: Lib) -> Any:
        return L.ad.grad(lambda x: (x**2, x * 3), has_aux=True)

    check(lambda L: L.ad.vmap(per_example(L))(X3))
    check(lambda L: L.ad.jit(per_example(L))(np.float32(2.0)))


@pytest.mark.parametrize("out", ["scalar", "triple"])
def test_has_aux_needs_a_pair(out: str) -> None:
    def f(L: Lib) -> Any:
        return (lambda x: x * x) if out == "scalar" else (lambda x: (x * x, 1, 2))

    check_error(lambda L: L.ad.grad(f(L), has_aux=True)(3.0), "expected function with aux output to return a two-element tuple")


# -- integer inputs: allow_int and float0 ---------------------------------------------------------
@pytest.mark.parametrize("n", [2, True, N3, N3.astype(np.uint8), np.bool_(True)])
def test_allow_int_gives_float0(n: Any) -> None:
    check(lambda L: L.ad.grad(lambda x, m: L.np.sum(x * m), argnums=(0, 1), allow_int=True)(X3, n))
    check(lambda L: L.ad.value_and_grad(lambda m: L.np.sum(m * 1.0), allow_int=True)(n))


@pytest.mark.parametrize("n", [3, True, N3])
def test_integer_input_without_allow_int(n: Any) -> None:
    check_error(lambda L: L.ad.grad(lambda m: L.np.sum(m * 1.0))(n), "grad requires real- or complex-valued inputs", "allow_int")


def test_integer_leaf_in_a_pytree() -> None:
    check_error(lambda L: L.ad.grad(lambda p: L.np.sum(p["w"] * p["n"]))({"w": X3, "n": np.int32(2)}), "int32", "allow_int")


# -- holomorphic -----------------------------------------------------------------------------------
Z2 = np.array([1 + 1j, -0.5 + 2j], np.complex64)


def test_holomorphic_grad() -> None:
    check(lambda L: L.ad.grad(lambda z: z * z + L.np.sin(z), holomorphic=True)(np.complex64(1 + 2j)))
    check(lambda L: L.ad.value_and_grad(lambda z: L.np.sum(z**3), holomorphic=True)(Z2))


def test_holomorphic_errors() -> None:
    check_error(lambda L: L.ad.grad(lambda x: x * x, holomorphic=True)(1.0), "holomorphic=True requires inputs with complex dtype")
    check_error(lambda L: L.ad.grad(lambda z: (z * z).real, holomorphic=True)(np.complex64(1j)),
                "holomorphic=True requires outputs with complex dtype")
    check_error(lambda L: L.ad.grad(lambda x: x * 1j)(1.0), "complex64", "holomorphic=True")


# -- output errors ---------------------------------------------------------------------------------
def test_non_scalar_outputs() -> None:
    check_error(lambda L: L.ad.grad(lambda x: x)(X3), "Gradient only defined for scalar-output functions", "(3,)")
    check_error(lambda L: L.ad.grad(lambda x: x[None])(3.0), "Output had shape: (1,)")
    check_error(lambda L: L.ad.grad(lambda x: (x,))(3.0), "Output was (")
    check_error(lambda L: L.ad.grad(lambda x: [x])(3.0), "Output was [")
    check_error(lambda L: L.ad.grad(lambda x: None)(3.0), "Output was None")


def test_integer_output() -> None:
    check_error(lambda L: L.ad.grad(lambda x: (x > 0).astype(L.np.int32))(3.0), "real-valued outputs", "int32")


def test_reduce_axes_and_non_callables() -> None:
    check_error(lambda L: L.ad.grad(lambda x: x, reduce_axes=("i",)), "reduce_axes")
    check_error(lambda L: L.ad.grad(3), "Expected a callable value, got 3")
    check_error(lambda L: L.ad.value_and_grad(None), "Expected a callable value")


def test_string_argument() -> None:
    check_error(lambda L: L.ad.grad(lambda x: 1.0)("a"), "of type <class 'str'> is not a valid JAX type")


# -- Python control flow on concrete values (SPEC §3.1) --------------------------------------------
def relu_sq(x: Any) -> Any:
    return x**2 if x > 0 else 0.0


@pytest.mark.parametrize("x", [3.0, -3.0, np.float32(2.0)])
def test_concrete_control_flow(x: Any) -> None:
    check(lambda L: L.ad.value_and_grad(relu_sq)(x))
    check(lambda L: L.ad.grad(L.ad.grad(lambda y: y**3 if y > 1 else y))(x))
    check(lambda L: L.ad.grad(lambda y: y * 3 if int(y) else y)(x))


def test_grad_keeps_the_function_name() -> None:
    def loss(x: Any) -> Any:
        """The loss."""
        return x * x

    for L in (FC, JX):
        assert L.ad.grad(loss).__name__ == L.ad.value_and_grad(loss).__name__ == "loss"

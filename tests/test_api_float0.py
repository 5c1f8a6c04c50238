"""``float0``: the tangents and cotangents of integer and boolean values, produced and accepted
exactly where JAX produces and accepts them; ``fcore.dtypes`` against ``jax.dtypes``.
"""

from __future__ import annotations

from typing import Any, cast

import jax
import ml_dtypes
import numpy as np
import pytest

import fcore
from api_common import FLOAT0, Lib, check, check_error, modes

X3 = np.array([0.5, -1.0, 2.0], np.float32)
N3 = np.array([1, -2, 3], np.int32)


def scale(L: Lib) -> Any:
    return lambda x, n: L.np.sin(x) * n


def with_int_output(L: Lib) -> Any:
    return lambda x: (L.np.sin(x), L.np.floor(x * 3).astype(L.np.int32), x > 0, 2)


def test_float0_is_jax_float0() -> None:
    assert fcore.dtypes.float0 == fcore.float0 == jax.dtypes.float0
    assert np.zeros(3, fcore.float0).dtype == jax.dtypes.float0


@pytest.mark.parametrize("n", [3, True, N3, N3.astype(np.uint8), np.zeros((2, 0), bool)])
def test_vjp_cotangent_of_integer_input(n: Any) -> None:
    def run(L: Lib) -> Any:
        out, f_vjp = L.ad.vjp(lambda x, m: L.np.sum(L.np.sin(x)) * L.np.sum(m), X3, n)
        return out, f_vjp(np.float32(1.0))

    check(run)


def test_vjp_integer_outputs_take_any_cotangent_of_their_shape() -> None:
    def run(L: Lib, ct_int: Any, ct_bool: Any) -> Any:
        return L.ad.vjp(with_int_output(L), X3)[1]((X3, ct_int, ct_bool, np.zeros((), FLOAT0)))

    check(lambda L: run(L, np.zeros(3, FLOAT0), np.zeros(3, FLOAT0)))
    check(lambda L: run(L, np.ones(3, np.int32), np.ones(3, np.float32)))
    check_error(lambda L: run(L, np.zeros(4, FLOAT0), np.zeros(3, FLOAT0)), "float0[4]", "float0[3]")


def test_float0_cotangent_for_a_float_output_is_rejected() -> None:
    check_error(lambda L: L.ad.vjp(L.np.sin, X3)[1](np.zeros(3, FLOAT0)), "float0[3]", "float32[3]")


def test_jvp_tangent_of_integer_outputs() -> None:
    check(lambda L: L.ad.jvp(with_int_output(L), (X3,), (X3,)))


def test_jvp_takes_float0_tangents_for_integer_primals_only() -> None:
    check(lambda L: L.ad.jvp(scale(L), (X3, N3), (X3, np.zeros(3, FLOAT0))))
    check(lambda L: L.ad.jvp(scale(L), (X3, True), (X3, np.zeros((), FLOAT0))))
    check_error(lambda L: L.ad.jvp(scale(L), (X3, N3), (X3, np.ones(3, np.int32))), "float0", "int32")
    check_error(lambda L: L.ad.jvp(scale(L), (X3, N3), (X3, np.ones(3, np.float32))), "float0", "float32")
    check_error(lambda L: L.ad.jvp(scale(L), (X3, N3), (np.zeros(3, FLOAT0), np.zeros(3, FLOAT0))), "float0")


def test_linearize_with_integer_inputs_and_outputs() -> None:
    def run(L: Lib) -> Any:
        out, f_jvp = L.ad.linearize(lambda x, n: (scale(L)(x, n), n * 2), X3, N3)
        return out, f_jvp(X3, np.zeros(3, FLOAT0)), f_jvp(2 * X3, np.zeros(3, FLOAT0))

    check(run)
    for t in (np.ones(3, np.int32), np.ones(3, np.float32)):
        check_error(lambda L: L.ad.linearize(scale(L), X3, N3)[1](X3, t), "inconsistent with the original primal values",
                    "float0[3]")


def test_grad_and_jacrev_with_allow_int() -> None:
    check(lambda L: L.ad.grad(lambda x, n: L.np.sum(x * n), argnums=(0, 1), allow_int=True)(X3, N3))
    check(lambda L: L.ad.jacrev(scale(L), argnums=(0, 1), allow_int=True)(X3, N3))
    check(lambda L: L.ad.jacrev(lambda n: n * 2.0, allow_int=True)(3))


def test_vmap_carries_float0_values() -> None:
    def per_example(L: Lib) -> Any:
        return L.ad.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)

    check(lambda L: L.ad.vmap(per_example(L))(X3, N3))
    check(lambda L: L.ad.vmap(per_example(L), in_axes=(0, None), out_axes=(0, None))(X3, 2))
    batched_tangents = np.zeros((2, 3), FLOAT0)
    check(lambda L: L.ad.vmap(lambda t: L.ad.jvp(scale(L), (X3, N3), (X3, t)))(batched_tangents))
    check(lambda L: L.ad.vmap(lambda t: L.ad.jvp(scale(L), (X3, N3), (X3, t)), in_axes=1)(np.zeros((3, 2), FLOAT0)))


def test_grad_of_a_float0_input() -> None:
    check_error(lambda L: L.ad.grad(lambda t: 1.0)(np.zeros(3, FLOAT0)), "numerical-valued inputs")


# -- fcore.dtypes against jax.dtypes --------------------------------------------------------------
@pytest.mark.parametrize("x64", [False, True])
def test_dtypes_module(x64: bool) -> None:
    with modes(x64):
        for dt in (np.float64, np.int64, np.complex128, np.uint64, np.float16, ml_dtypes.bfloat16, bool):
            assert fcore.dtypes.canonicalize_dtype(dt) == jax.dtypes.canonicalize_dtype(dt)
        assert fcore.dtypes.result_type(np.int8, 2.0) == jax.dtypes.result_type(np.int8, 2.0)
        assert fcore.dtypes.result_type(np.float16, ml_dtypes.bfloat16) == jax.dtypes.result_type(
            np.float16, ml_dtypes.bfloat16
        )
    assert fcore.dtypes.issubdtype(fcore.dtypes.bfloat16, np.floating)
    assert fcore.dtypes.finfo(fcore.dtypes.bfloat16).eps == cast(Any, ml_dtypes).finfo(ml_dtypes.bfloat16).eps
    assert fcore.dtypes.iinfo(np.int16).max == np.iinfo(np.int16).max


def _jit_jvp_int_output(L: Lib) -> Any:
    return L.ad.jit(lambda x: L.ad.jvp(lambda a: (a > 1).astype(L.np.int32), (x,), (x,)))(X3)


def _jit_grad_allow_int(L: Lib) -> Any:
    return L.ad.jit(L.ad.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True))(3.0, 2)


def _jit_only_float0(L: Lib) -> Any:
    return L.ad.jit(lambda n: L.ad.jvp(lambda a: a * 2, (n,), (np.zeros((), L.ad.dtypes.float0),))[1])(np.int32(1))


@pytest.mark.parametrize("run", [_jit_jvp_int_output, _jit_grad_allow_int, _jit_only_float0])
def test_jit_returns_float0_results(run: Any) -> None:
    """A jitted function may return float0 tangents; they come back as float0 arrays, as jax's."""
    check(run)
    check(run)  # the cached specialization too


def test_jit_stages_describe_float0_results() -> None:
    f = fcore.jit(fcore.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True))
    assert f.eval_shape(3.0, 2)[1] == fcore.ShapeDtypeStruct((), fcore.float0)
    assert repr(f.trace(3.0, 2).out_info[1]) == "ShapeDtypeStruct(shape=(), dtype=float0)"
    got = f.lower(3.0, 2).compile()(3.0, 2)
    assert got[1].dtype == fcore.float0 and got[1].shape == ()


def _jit_takes_float0(L: Lib) -> Any:
    f0 = np.zeros((2,), L.ad.dtypes.float0)
    f = L.ad.jit(lambda x, t, y: (x * 2 + y, t, t.shape, {"t": t}), donate_argnums=2)
    return f(X3, f0, X3), f(X3, np.zeros((3,), L.ad.dtypes.float0), X3)


def _jit_of_vjp_with_float0_cotangent(L: Lib) -> Any:
    def pullback(x: Any, n: Any, ct_n: Any) -> Any:
        _, f_vjp = L.ad.vjp(lambda a, m: (L.np.sin(a), m * 2), x, n)
        return f_vjp((np.float32(1.0), ct_n))

    return L.ad.jit(pullback)(np.float32(0.5), np.int32(3), np.zeros((), L.ad.dtypes.float0))


@pytest.mark.parametrize("run", [_jit_takes_float0, _jit_of_vjp_with_float0_cotangent])
def test_jit_accepts_float0_arguments(run: Any) -> None:
    """float0 arguments carry no data: the program does not take them, the function sees
    float0 zeros of their shapes, and a new shape is a new specialization (as in jax)."""
    check(run)
    check(run)


def test_float0_arguments_are_not_program_inputs() -> None:
    f = fcore.jit(lambda x, t: x * 2)
    closed = f.trace(X3, np.zeros((2,), fcore.float0)).jaxpr
    assert [v.aval.shape for v in closed.jaxpr.invars] == [(3,)]
    with pytest.raises(TypeError, match="abstract array"):
        f(X3, object())

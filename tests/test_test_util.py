"""``fcore.test_util`` against ``jax.test_util``: the same checks pass, and a wrong derivative
fails with the same ``AssertionError`` text (what was compared, tolerances, values)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import jax.test_util
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
import fcore.test_util as ftu
from test_numpy_common import modes


class jtu:
    """``jax.test_util``'s functions, typed for the comparisons here (JAX leaves them untyped)."""

    check_grads: Callable[..., None] = jax.test_util.check_grads
    check_jvp: Callable[..., None] = jax.test_util.check_jvp
    check_vjp: Callable[..., None] = jax.test_util.check_vjp


def _pair(wrong_factor: float) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``sin`` in both libraries with a custom jvp scaled by ``wrong_factor`` (1 is right)."""

    @jax.custom_jvp
    def j(x: Any) -> Any:
        return jnp.sin(x)

    j.defjvps(lambda g, ans, x: g * wrong_factor * jnp.cos(x))

    @fcore.custom_jvp
    def f(x: Any) -> Any:
        return fnp.sin(x)

    f.defjvps(lambda g, ans, x: g * wrong_factor * fnp.cos(x))
    return f, j


def _message(check: Callable[[], None]) -> str:
    with pytest.raises(AssertionError) as info:
        check()
    return str(info.value)


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("mode_set", [("fwd",), ("rev",), ("fwd", "rev"), ("lin",)])
def test_check_grads_passes_where_jax_does(order: int, mode_set: tuple[str, ...]) -> None:
    x = np.array([0.3, -1.2, 2.0], np.float32)
    with modes():
        jtu.check_grads(lambda v, w: jnp.tanh(v) * w ** 2, (x, 1.5), order, modes=mode_set)
        ftu.check_grads(lambda v, w: fnp.tanh(v) * w ** 2, (x, 1.5), order, modes=mode_set)


def test_check_grads_pytrees_and_x64() -> None:
    args = ({"a": np.arange(3.0), "b": (np.float64(0.5),)},)
    with modes(x64=True):
        jtu.check_grads(lambda t: jnp.sum(jnp.exp(t["a"]) * t["b"][0]), args, 2)
        ftu.check_grads(lambda t: fnp.sum(fnp.exp(t["a"]) * t["b"][0]), args, 2)


@pytest.mark.parametrize("mode_set", [("fwd",), ("rev",), ("lin",)])
@pytest.mark.parametrize("order", [1, 2])
def test_wrong_derivative_fails_with_jaxs_message(mode_set: tuple[str, ...], order: int) -> None:
    f, j = _pair(2.0)
    x = (np.float32(0.5),)
    with modes():
        want = _message(lambda: jtu.check_grads(j, x, order, modes=mode_set))
        got = _message(lambda: ftu.check_grads(f, x, order, modes=mode_set))
    assert got == want
    assert "Not equal to tolerance rtol=0.002, atol=0.002" in got


def _sin_with_wrong_second_derivative(lib: Any, custom_jvp: Callable[[Callable[..., Any]], Any]) -> Callable[..., Any]:
    """``sin`` whose first derivative is right and whose second is scaled by 3."""

    @custom_jvp
    def cos_bad(x: Any) -> Any:
        return lib.cos(x)

    cos_bad.defjvps(lambda g, ans, x: g * -3.0 * lib.sin(x))

    @custom_jvp
    def sin(x: Any) -> Any:
        return lib.sin(x)

    sin.defjvps(lambda g, ans, x: g * cos_bad(x))
    return sin  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode_set", [("fwd",), ("rev",)])
def test_second_order_error_names_the_nesting(mode_set: tuple[str, ...]) -> None:
    f = _sin_with_wrong_second_derivative(fnp, fcore.custom_jvp)
    j = _sin_with_wrong_second_derivative(jnp, jax.custom_jvp)
    x = (np.float32(0.5),)
    with modes():
        ftu.check_grads(f, x, 1, modes=mode_set)
        want = _message(lambda: jtu.check_grads(j, x, 2, modes=mode_set))
        got = _message(lambda: ftu.check_grads(f, x, 2, modes=mode_set))
    assert got == want
    assert ("JVP of JVP" if mode_set == ("fwd",) else "VJP of VJP") in got


@pytest.mark.parametrize("tol", [1e-9, {np.float32: 1e-9}])
def test_tolerances_as_number_or_per_dtype(tol: Any) -> None:
    x = (np.float32(0.7),)
    with modes():
        want = _message(lambda: jtu.check_grads(jnp.exp, x, 1, atol=tol, rtol=tol))
        got = _message(lambda: ftu.check_grads(fnp.exp, x, 1, atol=tol, rtol=tol))
    # the finite differences' last float32 bits differ with the libraries' exp; the check is the same
    assert got.split("Max absolute")[0] == want.split("Max absolute")[0]
    assert "rtol=1e-09, atol=1e-09\nJVP tangent" in got


def test_check_jvp_and_check_vjp_directly() -> None:
    x = (np.array([0.2, 0.4], np.float32),)
    with modes():
        ftu.check_jvp(fnp.sin, partial(fcore.jvp, fnp.sin), x)
        ftu.check_vjp(fnp.sin, partial(fcore.vjp, fnp.sin), x)
        f, j = _pair(-1.0)
        want = _message(lambda: jtu.check_vjp(j, partial(jax.vjp, j), x, err_msg="mine"))
        got = _message(lambda: ftu.check_vjp(f, partial(fcore.vjp, f), x, err_msg="mine"))
        assert got == want and "mine cotangent projection" in got
        want = _message(lambda: jtu.check_jvp(j, partial(jax.jvp, j), x, eps=1e-3))
        got = _message(lambda: ftu.check_jvp(f, partial(fcore.jvp, f), x, eps=1e-3))
        assert got == want


def test_complex_arguments() -> None:
    z = (np.array([0.5 + 0.25j, -1.0 + 1.0j], np.complex64),)
    with modes():
        jtu.check_grads(lambda v: jnp.sum(v * v), z, 2)
        ftu.check_grads(lambda v: fnp.sum(v * v), z, 2)

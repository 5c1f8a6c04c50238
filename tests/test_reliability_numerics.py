"""Issue 23, classes 3 and 4: the jvp of ``x ** n`` with an integer-array exponent is 0 at
``x = 0, n = 0`` (``lax.pow`` takes integer exponents, as JAX 0.10's); eager float->int and
float->bool conversions agree with jit and JAX (inf, NaN, out of range, denormals)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import lax

X = np.array([0.0, 0.0, 2.0, 0.0, -1.5, 3.0], np.float32)
N = np.array([0, 1, 2, 3, -1, 0], np.int32)


def test_power_with_integer_exponent_jvp_at_zero() -> None:
    t = np.ones_like(X)
    want = jax.jvp(lambda x: x ** N, (X,), (t,))
    got = fcore.jvp(lambda x: x ** N, (X,), (t,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert np.isfinite(np.asarray(got[1])[[0, 5]]).all()
    np.testing.assert_allclose(np.asarray(fcore.grad(lambda x: (x ** N).sum())(X)),
                               np.asarray(jax.grad(lambda x: (x ** N).sum())(X)), rtol=1e-6)
    jitted = fcore.jit(lambda x: fcore.jvp(lambda v: v ** N, (x,), (t,)))(X)
    np.testing.assert_allclose(np.asarray(jitted[1]), np.asarray(want[1]), rtol=1e-6)


@pytest.mark.parametrize("xdt,ndt", [(np.float32, np.int32), (np.float32, np.uint8), (np.float16, np.int32),
                                     (np.complex64, np.int32)])
def test_lax_pow_takes_integer_exponents(xdt: Any, ndt: Any) -> None:
    x = np.array([0.5, 2.0, 0.0, 3.0]).astype(xdt)
    n = np.array([0, 3, 0, 2]).astype(ndt)
    want = jax.lax.pow(x, n)
    for got in (lax.pow(x, n), fcore.jit(lax.pow)(x, n)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3)
    # broadcasting size-1 dims and vmap over the exponent
    nb = n.reshape(4, 1)
    np.testing.assert_allclose(np.asarray(lax.pow(x.reshape(1, 4), nb)), np.asarray(jax.lax.pow(x.reshape(1, 4), nb)),
                               rtol=1e-3)
    np.testing.assert_allclose(np.asarray(fcore.vmap(lax.pow, in_axes=(None, 0))(x, nb)),
                               np.asarray(jax.vmap(jax.lax.pow, in_axes=(None, 0))(x, nb)), rtol=1e-3)


def test_lax_pow_rejects_what_jax_rejects() -> None:
    for x, n in [(np.ones(2, np.int32), np.ones(2, np.int32)), (np.ones(2, np.float32), np.ones(2, np.bool_)),
                 (np.ones(2, np.float32), np.ones(2, np.float16))]:
        with pytest.raises(TypeError):
            jax.lax.pow(x, n)
        with pytest.raises(TypeError):
            lax.pow(x, n)
    assert fnp.power(np.float32(2), np.int32(3)).dtype == jnp.power(np.float32(2), np.int32(3)).dtype


SPECIAL = np.array([np.inf, -np.inf, np.nan, 1e20, -1e20, 3.7, -3.7, 1e-45, -1e-45, 2.5e9, 300.0, -129.0], np.float32)


@pytest.mark.parametrize("dt", ["int32", "uint32", "int8", "uint8", "int16", "bool"])
def test_eager_conversions_agree_with_jit_and_jax(dt: str) -> None:
    want = np.asarray(jax.lax.convert_element_type(SPECIAL, dt))
    eager = np.asarray(lax.convert_element_type(SPECIAL, dt))
    jitted = np.asarray(fcore.jit(lambda v: lax.convert_element_type(v, dt))(SPECIAL))
    np.testing.assert_array_equal(eager, want)
    np.testing.assert_array_equal(jitted, want)
    with np.errstate(all="ignore"):
        half = SPECIAL.astype(np.float16)
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(half, dt)),
                                  np.asarray(jax.lax.convert_element_type(half, dt)))

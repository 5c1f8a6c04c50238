"""Bessel functions of ``fcore.scipy.special``: ``i0``, ``i0e``, ``i1``, ``i1e`` (through the
``lax.bessel_i0e``/``bessel_i1e`` primitives) and ``bessel_jn`` (Miller's backward recurrence)."""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

from fcore import lax
import fcore.numpy as fnp
from fcore.api.jit import jit
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.scipy._util import const, promote_args_inexact

__all__ = ["i0", "i0e", "i1", "i1e", "bessel_jn"]


def i0e(x: ArrayLike) -> Array:
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    (x_,) = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x_)


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 0."""
    (x_,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x_)), lax.bessel_i0e(x_))


def i1e(x: ArrayLike) -> Array:
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    (x_,) = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x_)


def i1(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 1."""
    (x_,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x_)), lax.bessel_i1e(x_))


def _jn_step(carry: tuple[Array, Array, Array, Array], k: Array) -> tuple[tuple[Array, Array, Array, Array], Array]:
    f0, f1, bs, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0
    bs = lax.cond(fnp.mod(k, 2) == 0, lambda u: u[0] + 2.0 * u[1], lambda u: u[0], (bs, f))
    return (f1, f, bs, z), f


def _bessel_jn(z: Array, *, v: int, n_iter: int = 50) -> Array:
    carry = (const(z, 0.0), const(z, 1e-16), const(z, 0.0), z)
    (_, _, bs, _), j_vals = lax.scan(_jn_step, carry, lax.iota(z.dtype, n_iter + 1), reverse=True)
    f = j_vals[0]
    out: Array = j_vals[: v + 1] / (bs - f)
    return out


def _bessel_jn_jitted(z: Array, v: int, n_iter: int) -> Array:
    fun: Any = partial(_bessel_jn, v=v, n_iter=n_iter)
    for _ in range(z.ndim):
        fun = vmap(fun)
    out: Array = fnp.moveaxis(fun(z), -1, 0)
    return out


_bessel_jn_compiled = jit(_bessel_jn_jitted, static_argnums=(1, 2))


def bessel_jn(z: ArrayLike, *, v: int, n_iter: int = 50) -> Array:
    """Bessel functions of the first kind of orders ``0..v`` at ``z`` (stacked on a new first
    axis), by Miller's backward recurrence with ``n_iter`` terms."""
    (z_,) = promote_args_inexact("bessel_jn", fnp.asarray(z))
    if dtypes.is_complex(z_.dtype):
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = int(n_iter)
    out: Array = _bessel_jn_compiled(z_, v, n_iter)
    return out

"""Polynomials of ``fcore.numpy`` as coefficient arrays, highest degree first: evaluation
(``polyval``), arithmetic (``polyadd``, ``polysub``, ``polymul``, ``polydiv``), calculus
(``polyder``, ``polyint``), ``poly`` (from roots) and ``vander`` — ``jnp``'s formulas.
``roots`` and ``polyfit`` need ``fnp.linalg.eigvals``/``lstsq`` and come with them.
"""

from __future__ import annotations

import operator

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, promote_dtypes
from fcore.numpy.numerical import convolve
from fcore.numpy.ufuncs_binary import add, multiply, power, true_divide
from fcore.numpy.ufuncs_unary import negative


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Array:
    """The polynomial with coefficients ``p`` (highest degree first) at ``x`` (Horner)."""
    from fcore.numpy.shape_ops import broadcast_shapes

    pa, xa = promote_dtypes(p, x, name="polyval")
    shape = broadcast_shapes(pa.shape[1:], xa.shape)
    y: Array = lax.broadcast_in_dim(ArrayImpl(np.zeros((), xa.dtype), xa.weak_type), shape, ())
    for i in range(pa.shape[0]):
        y = add(multiply(y, xa), lax.index_in_dim(pa, i, keepdims=False))
    return y


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Sum of two polynomials."""
    x, y = promote_dtypes(a1, a2, name="polyadd")
    if y.shape[0] <= x.shape[0]:
        out: Array = x.at[-y.shape[0]:].add(y)
    else:
        out = y.at[-x.shape[0]:].add(x)
    return out


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Difference of two polynomials."""
    x, y = promote_dtypes(a1, a2, name="polysub")
    return polyadd(x, negative(y))


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Array:
    """Product of two polynomials."""
    from fcore.numpy.creation import zeros
    from fcore.numpy.manipulation import trim_zeros

    x, y = promote_dtypes(a1, a2, name="polymul", inexact=True)
    if trim_leading_zeros and (x.shape[0] > 1 or y.shape[0] > 1):
        x, y = trim_zeros(x, trim="f"), trim_zeros(y, trim="f")
    if x.shape[0] == 0:
        x = zeros(1, dtype=y.dtype)
    if y.shape[0] == 0:
        y = zeros(1, dtype=x.dtype)
    return convolve(x, y, mode="full")


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The ``m``-th derivative of a polynomial."""
    (pa,) = promote_dtypes(p, name="polyder", inexact=True)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return pa
    n = pa.shape[0]
    coeff = (np.arange(m, n)[None] - np.arange(m)[:, None]).prod(0)
    return multiply(lax.slice_in_dim(pa, 0, max(n - m, 0)), ArrayImpl(coeff[::-1].astype(pa.dtype), False))


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """The ``m``-th antiderivative, with integration constants ``k``."""
    from fcore.numpy.creation import full
    from fcore.numpy.shape_ops import atleast_1d, concatenate

    m = operator.index(m)
    pa, ka = promote_dtypes(p, 0 if k is None else k, name="polyint", inexact=True)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ka = atleast_1d(ka)
    if ka.shape[0] == 1:
        ka = full((m,), ka[0])
    if ka.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return pa
    grid = np.arange(pa.shape[0] + m)[None] - np.arange(m)[:, None]
    coeff = np.maximum(1, grid).prod(0)[::-1]
    return true_divide(concatenate((pa, ka)), ArrayImpl(coeff.astype(pa.dtype), False))


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of ``x`` (powers decreasing unless ``increasing``)."""
    xa = asarray(x, "vander")
    if xa.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = xa.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = np.arange(n) if increasing else (n - 1) - np.arange(n)
    iota = ArrayImpl(powers.astype(xa.dtype), False)
    return power(lax.expand_dims(xa, (1,)), lax.expand_dims(iota, (0,)))


def poly(seq_of_zeros: ArrayLike) -> Array:
    """The coefficients of the monic polynomial with the given roots."""
    from fcore.numpy.creation import array, ones
    from fcore.numpy.shape_ops import atleast_1d

    (zeros_arr,) = promote_dtypes(asarray(seq_of_zeros, "poly"), name="poly", inexact=True)
    z = atleast_1d(zeros_arr)
    sh = z.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        raise NotImplementedError("jnp.poly of a square matrix needs fnp.linalg.eigvals, which fcore does not have yet")
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = z.dtype
    if z.shape[0] == 0:
        return ones((), dtype=dt)
    a = ones((1,), dtype=dt)
    for k in range(z.shape[0]):
        a = convolve(a, array([1, negative(z[k])], dtype=dt), mode="full")
    return a


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """Quotient and remainder of dividing polynomial ``u`` by ``v`` (the remainder keeps ``u``'s
    length unless ``trim_leading_zeros``, which needs a concrete result)."""
    from fcore.numpy._dtypes import finfo
    from fcore.numpy.creation import zeros
    from fcore.numpy.indexing import at
    from fcore.numpy.searching import concrete

    u_arr, v_arr = promote_dtypes(asarray(u, "polydiv"), asarray(v, "polydiv", 1), name="polydiv", inexact=True)
    m, n = u_arr.shape[0] - 1, v_arr.shape[0] - 1
    scale = true_divide(1.0, v_arr[0])
    q = zeros(max(m - n + 1, 1), dtype=u_arr.dtype)
    for k in range(m - n + 1):
        d = multiply(scale, u_arr[k])
        q = at(q)[k].set(d)
        u_arr = at(u_arr)[k:k + n + 1].add(negative(multiply(d, v_arr)))
    if trim_leading_zeros:
        host = concrete(u_arr, "Error arose in the `filt` argument of trim_zeros_tol()")
        tol = np.sqrt(float(finfo(u_arr.dtype).eps))
        nz = np.abs(host) < tol
        if nz.all():
            return q, zeros(0, u_arr.dtype)
        u_arr = u_arr[int(np.argmin(nz)):]
    return q, u_arr

"""Associated Legendre functions and spherical harmonics of ``fcore.scipy.special``:
``lpmn``, ``lpmn_values`` (deprecated in JAX, kept with its warning) and ``sph_harm_y``."""

from __future__ import annotations

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike

__all__ = ["lpmn", "lpmn_values", "sph_harm_y"]


def _recurrence_mask(l_max: int, is_normalized: bool, dtype: DType) -> tuple[Array, Array]:
    """The coefficients of the three-term recurrence in ``l``, on the plane ``i + j = k``."""
    m_mat, l_mat = fnp.meshgrid(fnp.arange(l_max + 1, dtype=dtype), fnp.arange(l_max + 1, dtype=dtype), indexing="ij")
    if is_normalized:
        c0 = l_mat * l_mat
        c1 = m_mat * m_mat
        c2 = 2.0 * l_mat
        c3 = (l_mat - 1.0) * (l_mat - 1.0)
        d0 = fnp.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
        d1 = fnp.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1)))
    else:
        d0 = (2.0 * l_mat - 1.0) / (l_mat - m_mat)
        d1 = (l_mat + m_mat - 1.0) / (l_mat - m_mat)
    d0_idx = fnp.triu_indices(l_max + 1, 1)
    d1_idx = fnp.triu_indices(l_max + 1, 2)
    zeros = fnp.zeros((l_max + 1, l_max + 1), dtype=dtype)
    d0_mask = zeros.at[d0_idx].set(d0[d0_idx])
    d1_mask = zeros.at[d1_idx].set(d1[d1_idx])
    i, j, k = np.ogrid[: l_max + 1, : l_max + 1, : l_max + 1]
    plane = fnp.asarray((i + j - k == 0).astype(dtype))
    return fnp.einsum("jk,ijk->ijk", d0_mask, plane), fnp.einsum("jk,ijk->ijk", d1_mask, plane)


def _derivatives(p: Array, x: Array, is_normalized: bool) -> Array:
    """The derivatives of the unnormalized associated Legendre functions ``p``."""
    num_m, num_l, _ = p.shape
    p_m_lm1 = fnp.pad(p, ((0, 0), (1, 0), (0, 0)))[:, :num_l, :]  # p_{l-1}^m
    p_mp2_lm1 = fnp.pad(p_m_lm1, ((0, 2), (0, 0), (0, 0)))[2 : num_m + 2, :, :]  # p_{l-1}^{m+2}
    p_mm2_lm1 = fnp.pad(p_m_lm1, ((2, 0), (0, 0), (0, 0)))[:num_m, :, :]  # p_{l-1}^{m-2}
    if is_normalized:  # the derivative needs negative orders
        raise NotImplementedError("Negative orders for normalization is not implemented yet.")
    if num_l > 1:
        l_vec = fnp.arange(1, num_l - 1, dtype=x.dtype)
        coeff = -1.0 / ((l_vec + 1) * l_vec)
        p_mm2_lm1 = p_mm2_lm1.at[1, 2:num_l, :].set(fnp.einsum("i,ij->ij", coeff, p[1, 1 : num_l - 1, :]))
    if num_l > 2:
        l_vec = fnp.arange(2, num_l - 1, dtype=x.dtype)
        coeff = 1.0 / ((l_vec + 2) * (l_vec + 1) * l_vec * (l_vec - 1))
        p_mm2_lm1 = p_mm2_lm1.at[0, 3:num_l, :].set(fnp.einsum("i,ij->ij", coeff, p[2, 2 : num_l - 1, :]))
    m_mat, l_mat = fnp.meshgrid(fnp.arange(num_m, dtype=x.dtype), fnp.arange(num_l, dtype=x.dtype), indexing="ij")
    coeff_zeros = fnp.zeros((num_m, num_l), dtype=x.dtype)
    upper = fnp.triu_indices(num_m, 0, num_l)
    zero_vec = fnp.zeros((num_l,), dtype=x.dtype)

    def masked(c: Array) -> Array:
        out: Array = coeff_zeros.at[upper].set(c[upper])
        return out

    a0 = -0.5 / (m_mat - 1.0)
    a0_masked = masked(a0).at[1, :].set(zero_vec)
    b0 = l_mat + m_mat
    c0 = a0 * (b0 - 2.0) * (b0 - 1.0)
    c0_masked = masked(c0).at[1, :].set(zero_vec)
    p_mm1_l = fnp.einsum("ij,ijk->ijk", a0_masked, p_m_lm1) + fnp.einsum("ij,ijk->ijk", c0_masked, p_mm2_lm1)
    d0 = -0.5 / (m_mat + 1.0)
    e0 = d0 * b0 * (b0 + 1.0)
    p_mp1_l = fnp.einsum("ij,ijk->ijk", masked(d0), p_mp2_lm1) + fnp.einsum("ij,ijk->ijk", masked(e0), p_m_lm1)
    f0 = b0 * (l_mat - m_mat + 1.0) / 2.0
    p_derivative = fnp.einsum("ij,ijk->ijk", masked(f0), p_mm1_l) - 0.5 * p_mp1_l
    if num_m > 1:  # the singularity at m = 1
        l_vec = fnp.arange(num_l, dtype=p.dtype)
        g0 = fnp.einsum("i,ij->ij", (l_vec + 1) * l_vec, p[0, :, :])
        if num_l > 2:
            g0 = g0 - p[2, :, :]
        p_derivative_m0 = fnp.einsum("j,ij->ij", 0.5 / fnp.sqrt(1 - x * x), g0)
        p_derivative = p_derivative.at[1, :, :].set(p_derivative_m0)
        p_derivative = p_derivative.at[1, 0, :].set(0)
    return p_derivative


def _associated_legendre(l_max: int, x: Array, is_normalized: bool) -> Array:
    """``p[m, l, i]``: the associated Legendre function of degree ``l`` and order ``m`` at ``x[i]``."""
    p = fnp.zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=x.dtype)
    a_idx = fnp.arange(1, l_max + 1, dtype=x.dtype)
    b_idx = fnp.arange(l_max, dtype=x.dtype)
    if is_normalized:
        initial: Array | float = 0.5 / fnp.sqrt(np.pi)  # p(0, 0)
        f_a = fnp.cumprod(-1 * fnp.sqrt(1.0 + 0.5 / a_idx))
        f_b = fnp.sqrt(2.0 * b_idx + 3.0)
    else:
        initial = 1.0
        f_a = fnp.cumprod(1.0 - 2.0 * a_idx)
        f_b = 2.0 * b_idx + 1.0
    p = p.at[(0, 0)].set(initial)
    # the diagonal p(l, l), then the first off-diagonal, by recurrence
    y = fnp.cumprod(fnp.broadcast_to(fnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    p_diag = initial * fnp.einsum("i,ij->ij", f_a, y)
    diag = fnp.diag_indices(l_max + 1)
    p = p.at[(diag[0][1:], diag[1][1:])].set(p_diag)
    p_offdiag = fnp.einsum("ij,ij->ij", fnp.einsum("i,j->ij", f_b, x), p[fnp.diag_indices(l_max)])
    p = p.at[(diag[0][:l_max], diag[1][:l_max] + 1)].set(p_offdiag)
    d0_mask, d1_mask = _recurrence_mask(l_max, is_normalized, x.dtype)

    def body(i: Array, p_val: Array) -> Array:
        h = (fnp.einsum("ij,ijk->ijk", d0_mask[i], fnp.einsum("ijk,k->ijk", fnp.roll(p_val, shift=1, axis=1), x))
             - fnp.einsum("ij,ijk->ijk", d1_mask[i], fnp.roll(p_val, shift=2, axis=1)))
        return p_val + h

    p = p.astype(fnp.result_type(p, x, d0_mask))
    if l_max > 1:
        p = lax.fori_loop(2, l_max + 1, body, p)
    out: Array = p
    return out


_associated_legendre_jit = jit(_associated_legendre, static_argnums=(0, 2))
_derivatives_jit = jit(_derivatives, static_argnums=(2,))


def _check_z(z: Array, m: int, n: int) -> tuple[int, int]:
    if z.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"z.dtype={z.dtype} is not supported, see docstring for supported types.")
    if z.ndim != 1:
        raise ValueError("z must be a 1D array.")
    m, n = int(m), int(n)
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    return m, n


def lpmn(m: int, n: int, z: ArrayLike) -> tuple[Array, Array]:
    """The associated Legendre functions ``P_n^m(z)`` for all orders and degrees up to ``m = n``,
    and their derivatives, each of shape ``(m + 1, n + 1, len(z))``."""
    z = fnp.asarray(z)
    _, n = _check_z(z, m, n)
    p_vals: Array = _associated_legendre_jit(n, z, False)
    derivatives: Array = _derivatives_jit(p_vals, z, False)
    return p_vals, derivatives


def lpmn_values(m: int, n: int, z: ArrayLike, is_normalized: bool) -> Array:
    """The associated Legendre functions (optionally normalized) without derivatives."""
    z = fnp.asarray(z)
    _, n = _check_z(z, m, n)
    out: Array = _associated_legendre_jit(n, z, bool(is_normalized))
    return out


def _sph_harm(n: Array, m: Array, theta: Array, phi: Array, n_max: int) -> Array:
    legendre = _associated_legendre(n_max, fnp.cos(theta), True)
    legendre_val = legendre.at[abs(m), n, fnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    vandermonde = lax.complex(fnp.cos(angle), fnp.sin(angle))
    harmonics = lax.complex(legendre_val * fnp.real(vandermonde), legendre_val * fnp.imag(vandermonde))
    return fnp.where(m < 0, (-1.0) ** abs(m) * fnp.conjugate(harmonics), harmonics)  # negative orders


_sph_harm_jit = jit(_sph_harm, static_argnums=(4,))


def sph_harm_y(n: ArrayLike, m: ArrayLike, theta: ArrayLike, phi: ArrayLike, diff_n: int | None = None,
               n_max: int | None = None) -> Array:
    """The spherical harmonics ``Y_n^m(theta, phi)`` (``theta`` the polar angle, as scipy's
    ``sph_harm_y``); ``n_max`` must be static under transformations."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if fnp.isscalar(theta):
        theta = fnp.array([theta])
    if n_max is None:
        n_max = int(np.max(np.asarray(n)))
    out: Array = _sph_harm_jit(fnp.asarray(n), fnp.asarray(m), fnp.asarray(theta), fnp.asarray(phi), int(n_max))
    return out

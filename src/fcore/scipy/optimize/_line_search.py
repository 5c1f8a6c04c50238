"""The strong-Wolfe line search of JAX's BFGS and L-BFGS (Wright and Nocedal, *Numerical
Optimization*, 1999, algorithms 3.5 and 3.6): loops of ``lax.while_loop`` that choose between
branches with ``where`` (no ``cond``), so one program serves every outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.autodiff import value_and_grad
from fcore.interpreters.array import Array
from fcore.scipy._util import promote_dtypes_inexact

__all__ = ["LineSearchResults", "line_search"]

Objective = Callable[[Array], Array]


def _dot(a: Array, b: Array) -> Array:
    return fnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _float_bits(x: Array) -> int:
    return np.dtype(x.dtype).itemsize * 8


def _weak(value: bool | int | float) -> Array:
    """A Python scalar as the weakly typed array ``while_loop`` would make of it."""
    return fnp.asarray(value)


def _cubicmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array, c: Array, fc: Array) -> Array:
    dtype = fnp.result_type(a, fa, fpa, b, fb, c, fc)
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = fnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = fnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    coef = _dot(d1, d2) / denom
    big_a, big_b = coef[0], coef[1]
    radical = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + fnp.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array) -> Array:
    db = b - a
    big_b = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * big_b)


class _ZoomState(NamedTuple):
    done: Array
    failed: Array
    j: Array
    a_lo: Array
    phi_lo: Array
    dphi_lo: Array
    a_hi: Array
    phi_hi: Array
    dphi_hi: Array
    a_rec: Array
    phi_rec: Array
    a_star: Array
    phi_star: Array
    dphi_star: Array
    g_star: Array
    nfev: Array
    ngev: Array


def _replace_where(bit: Array, state: _ZoomState, **new: Array) -> _ZoomState:
    return state._replace(**{k: fnp.where(bit, v, getattr(state, k)) for k, v in new.items()})


Restricted = Callable[[Array], tuple[Array, Array, Array]]


def _zoom(restricted: Restricted, wolfe_one: Callable[[Array, Array], Array], wolfe_two: Callable[[Array], Array],
          a_lo: Array, phi_lo: Array, dphi_lo: Array, a_hi: Array, phi_hi: Array, dphi_hi: Array, g_0: Array,
          pass_through: Array) -> _ZoomState:
    """Shrink ``[a_lo, a_hi]`` by cubic, quadratic or bisection steps until a point satisfies
    the strong Wolfe conditions (skipped when ``pass_through``)."""
    state = _ZoomState(
        done=_weak(False), failed=_weak(False), j=_weak(0),
        a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=_weak(1.0), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0, nfev=_weak(0), ngev=_weak(0),
    )
    delta1, delta2 = 0.2, 0.1

    def body(state: _ZoomState) -> _ZoomState:
        dalpha = state.a_hi - state.a_lo
        a = fnp.minimum(state.a_hi, state.a_lo)
        b = fnp.maximum(state.a_hi, state.a_lo)
        cchk = delta1 * dalpha
        qchk = delta2 * dalpha
        threshold = 1e-5 if _float_bits(dalpha) < 64 else 1e-10
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi, state.a_rec, state.phi_rec)
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.0
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = fnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = fnp.where(use_quad, a_j_quad, a_j)
        a_j = fnp.where(use_bisection, a_j_bisection, a_j)

        phi_j, dphi_j, g_j = restricted(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = _replace_where(hi_to_j, state, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi, phi_rec=state.phi_hi)
        state = _replace_where(star_to_j, state._replace(done=star_to_j | state.done),
                               a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        state = _replace_where(hi_to_lo, state, a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo,
                               a_rec=state.a_hi, phi_rec=state.phi_hi)
        state = _replace_where(lo_to_j & ~hi_to_lo, state, a_rec=state.a_lo, phi_rec=state.phi_lo)
        state = _replace_where(lo_to_j, state, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        state = state._replace(j=state.j + 1)
        # JAX allows more zoom steps than SciPy (30).
        return state._replace(failed=state.failed | (state.j >= 30))

    result: _ZoomState = lax.while_loop(lambda s: (~s.done) & (~pass_through) & (~s.failed), body, state)
    return result


class _LineSearchState(NamedTuple):
    done: Array
    failed: Array
    i: Array
    a_i1: Array
    phi_i1: Array
    dphi_i1: Array
    nfev: Array
    ngev: Array
    a_star: Array
    phi_star: Array
    dphi_star: Array
    g_star: Array


class LineSearchResults(NamedTuple):
    """What :func:`line_search` found: ``failed`` (the strong Wolfe conditions were not met),
    iteration and evaluation counts, the step ``a_k``, the value ``f_k`` and gradient ``g_k``
    there, and ``status`` (0 passed, 1 zoom failed, 3 ``maxiter`` reached)."""

    failed: Array
    nit: Array
    nfev: Array
    ngev: Array
    k: Array
    a_k: Array
    f_k: Array
    g_k: Array
    status: Array


def _select(bit: Array, state: _LineSearchState, zoom: _ZoomState) -> dict[str, Array]:
    return {k: fnp.where(bit, getattr(zoom, k), getattr(state, k)) for k in ("a_star", "phi_star", "dphi_star", "g_star")}


def line_search(f: Objective, xk: Array, pk: Array, old_fval: Array | None = None, old_old_fval: Array | None = None,
                gfk: Array | None = None, c1: float = 1e-4, c2: float = 0.9, maxiter: int = 20) -> LineSearchResults:
    """An inexact line search from ``xk`` along the descent direction ``pk`` that satisfies the
    strong Wolfe conditions with constants ``c1`` and ``c2`` (JAX's ``line_search``)."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def restricted(t: Array | float) -> tuple[Array, Array, Array]:
        t = fnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, fnp.real(_dot(g, pk)), g

    evaluated_start = old_fval is None or gfk is None
    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted(0)
    else:
        phi_0 = old_fval
        dphi_0 = fnp.real(_dot(gfk, pk))
    start_value: Array | float
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = fnp.where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i: Array, phi_i: Array) -> Array:
        """The negation of the sufficient-decrease condition."""
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i: Array) -> Array:
        return fnp.abs(dphi_i) <= -c2 * dphi_0

    state = _LineSearchState(
        done=fnp.array(False, dtype=bool), failed=fnp.array(False, dtype=bool),
        # Wright and Nocedal start at 1 (SciPy at 0, https://github.com/scipy/scipy/issues/12157).
        i=_weak(1), a_i1=_weak(0.0), phi_i1=phi_0, dphi_i1=dphi_0,
        nfev=_weak(1 if evaluated_start else 0), ngev=_weak(1 if evaluated_start else 0),
        a_star=_weak(0.0), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk,
    )

    def body(state: _LineSearchState) -> _LineSearchState:
        a_i = fnp.where(state.i == 1, start_value, state.a_i1 * 2.0)
        phi_i, dphi_i, g_i = restricted(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.0) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted, wolfe_one, wolfe_two, state.a_i1, state.phi_i1, state.dphi_i1,
                      a_i, phi_i, dphi_i, gfk, ~star_to_zoom1)
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(restricted, wolfe_one, wolfe_two, a_i, phi_i, dphi_i,
                      state.a_i1, state.phi_i1, state.dphi_i1, gfk, ~star_to_zoom2)
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        state = state._replace(done=star_to_zoom1 | state.done, failed=(star_to_zoom1 & zoom1.failed) | state.failed,
                               **_select(star_to_zoom1, state, zoom1))
        state = state._replace(
            done=star_to_i | state.done,
            a_star=fnp.where(star_to_i, a_i, state.a_star), phi_star=fnp.where(star_to_i, phi_i, state.phi_star),
            dphi_star=fnp.where(star_to_i, dphi_i, state.dphi_star), g_star=fnp.where(star_to_i, g_i, state.g_star))
        state = state._replace(done=star_to_zoom2 | state.done, failed=(star_to_zoom2 & zoom2.failed) | state.failed,
                               **_select(star_to_zoom2, state, zoom2))
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), body, state)

    status = fnp.where(state.failed, fnp.array(1), fnp.where(state.i > maxiter, fnp.array(3), fnp.array(0)))
    # Too small a step leaves the optimizer stuck below 64 bits: JAX floors it at 1e-8.
    alpha_k = fnp.asarray(state.a_star)
    if _float_bits(alpha_k) != 64:
        alpha_k = fnp.where(fnp.abs(alpha_k) < 1e-8, fnp.sign(alpha_k) * 1e-8, alpha_k)
    return LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1, nfev=state.nfev, ngev=state.ngev,
                             k=state.i, a_k=alpha_k, f_k=state.phi_star, g_k=state.g_star, status=status)

"""L-BFGS (Wright and Nocedal, algorithm 7.5; complex variables after Sorber, Van Barel and De
Lathauwer, 2012) as JAX's experimental method writes it: the last ``maxcor`` steps kept in
rolled history buffers, the direction from the two-loop recursion."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.autodiff import value_and_grad
from fcore.interpreters.array import Array
from fcore.numpy import linalg as np_linalg
from fcore.scipy.optimize._line_search import Objective, line_search

__all__ = ["LBFGSResults", "minimize_lbfgs"]


def _dot(a: Array, b: Array) -> Array:
    return fnp.dot(a, b, precision=lax.Precision.HIGHEST)


class LBFGSResults(NamedTuple):
    """The loop state, and the result; ``status`` is 0 nominal, 1 ``maxiter``, 2 ``maxfun``,
    3 ``maxgrad``, 4 insufficient progress (``ftol``), 5 line search failed."""

    converged: Array
    failed: Array
    k: Array
    nfev: Array
    ngev: Array
    x_k: Array
    f_k: Array
    g_k: Array
    s_history: Array
    y_history: Array
    rho_history: Array
    gamma: Array
    status: Array
    ls_status: Array


def minimize_lbfgs(fun: Objective, x0: Array, maxiter: float | None = None, norm: float = np.inf, maxcor: int = 10,
                   ftol: float = 2.220446049250313e-09, gtol: float = 1e-05, maxfun: float | None = None,
                   maxgrad: float | None = None, maxls: int = 20) -> LBFGSResults:
    """Minimize ``fun`` from ``x0`` by L-BFGS; without any of ``maxiter``, ``maxfun`` and
    ``maxgrad``, ``maxiter`` is ``200 * len(x0)``."""
    d = len(x0)
    dtype = fnp.asarray(x0).dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    max_iter = np.inf if maxiter is None else maxiter
    max_fun = np.inf if maxfun is None else maxfun
    max_grad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    initial = LBFGSResults(
        converged=fnp.array(False, dtype=bool), failed=fnp.array(False, dtype=bool), k=fnp.asarray(0),
        nfev=fnp.asarray(1), ngev=fnp.asarray(1), x_k=x0, f_k=f_0, g_k=g_0,
        s_history=fnp.zeros((maxcor, d), dtype=dtype), y_history=fnp.zeros((maxcor, d), dtype=dtype),
        rho_history=fnp.zeros((maxcor,), dtype=dtype), gamma=fnp.asarray(1.0), status=fnp.asarray(0),
        ls_status=fnp.asarray(0),
    )

    def body_fun(state: LBFGSResults) -> LBFGSResults:
        p_k = _two_loop_recursion(state)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k, gfk=state.g_k, maxiter=maxls)
        s_k = fnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        x_kp1 = state.x_k + s_k
        y_k = ls.g_k - state.g_k
        rho_k_inv = fnp.real(_dot(y_k, s_k))
        rho_k = fnp.reciprocal(rho_k_inv).astype(y_k.dtype)
        gamma = rho_k_inv / fnp.real(_dot(fnp.conj(y_k), y_k))

        status = fnp.array(0)
        status = fnp.where(state.f_k - ls.f_k < ftol, 4, status)
        status = fnp.where(state.ngev >= max_grad, 3, status)
        status = fnp.where(state.nfev >= max_fun, 2, status)
        status = fnp.where(state.k >= max_iter, 1, status)
        status = fnp.where(ls.failed, 5, status)
        converged = np_linalg.norm(ls.g_k, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & (~converged), k=state.k + 1,
            nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
            x_k=x_kp1.astype(state.x_k.dtype), f_k=ls.f_k.astype(state.f_k.dtype), g_k=ls.g_k.astype(state.g_k.dtype),
            s_history=_push(state.s_history, s_k), y_history=_push(state.y_history, y_k),
            rho_history=_push(state.rho_history, rho_k), gamma=gamma.astype(state.g_k.dtype),
            status=fnp.where(converged, 0, status), ls_status=ls.status,
        )

    result: LBFGSResults = lax.while_loop(lambda s: (~s.converged) & (~s.failed), body_fun, initial)
    return result


def _two_loop_recursion(state: LBFGSResults) -> Array:
    """The search direction ``-H g`` from the stored steps (Nocedal and Wright, algorithm 7.4)."""
    dtype = state.rho_history.dtype
    his_size = len(state.rho_history)
    curr_size = fnp.where(state.k < his_size, state.k, his_size)

    def body_fun1(j: Array, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        i = his_size - 1 - j
        q, a_his = carry
        a_i = state.rho_history[i] * _dot(fnp.conj(state.s_history[i]), q).real.astype(dtype)
        return q - a_i * fnp.conj(state.y_history[i]), a_his.at[i].set(a_i)

    q, a_his = lax.fori_loop(0, curr_size, body_fun1, (-fnp.conj(state.g_k), fnp.zeros_like(state.rho_history)))
    q = state.gamma * q

    def body_fun2(j: Array, q: Array) -> Array:
        i = his_size - curr_size + j
        b_i = state.rho_history[i] * _dot(state.y_history[i], q).real.astype(dtype)
        return q + (a_his[i] - b_i) * state.s_history[i]

    result: Array = lax.fori_loop(0, curr_size, body_fun2, q)
    return result


def _push(history: Array, new: Array) -> Array:
    """``history`` with its oldest entry dropped and ``new`` appended."""
    pushed: Array = fnp.roll(history, -1, axis=0).at[-1].set(new)
    return pushed

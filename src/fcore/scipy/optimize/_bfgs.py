"""BFGS (Wright and Nocedal, *Numerical Optimization*, 1999, algorithm 6.1) as JAX writes it:
one ``lax.while_loop`` over the iterates, the inverse Hessian estimate updated in full."""

from __future__ import annotations

from typing import NamedTuple

import math

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.autodiff import value_and_grad
from fcore.interpreters.array import Array
from fcore.numpy import linalg as np_linalg
from fcore.scipy.optimize._line_search import Objective, line_search

__all__ = ["BFGSResults", "minimize_bfgs"]


class BFGSResults(NamedTuple):
    """The loop state, and the result: ``converged``, ``failed`` (the line search failed),
    iteration and evaluation counts, the iterate ``x_k`` with its value ``f_k``, gradient ``g_k``
    and inverse Hessian estimate ``H_k``, and ``status``."""

    converged: Array
    failed: Array
    k: Array
    nfev: Array
    ngev: Array
    nhev: Array
    x_k: Array
    f_k: Array
    g_k: Array
    H_k: Array
    old_old_fval: Array
    status: Array
    line_search_status: Array


def minimize_bfgs(fun: Objective, x0: Array, maxiter: int | None = None, norm: float = np.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 10) -> BFGSResults:
    """Minimize ``fun`` from ``x0`` by BFGS until ``|grad|_norm < gtol`` or ``maxiter`` steps
    (default ``200 * x0.size``)."""
    if maxiter is None:
        maxiter = math.prod(x0.shape) * 200
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(
        converged=np_linalg.norm(g_0, ord=norm) < gtol, failed=fnp.asarray(False), k=fnp.asarray(0),
        nfev=fnp.asarray(1), ngev=fnp.asarray(1), nhev=fnp.asarray(0), x_k=x0, f_k=f_0, g_k=g_0,
        H_k=fnp.eye(d, dtype=x0.dtype), old_old_fval=f_0 + np_linalg.norm(g_0) / 2,
        status=fnp.asarray(0), line_search_status=fnp.asarray(0),
    )

    def cond_fun(state: BFGSResults) -> Array:
        return fnp.logical_not(state.converged) & fnp.logical_not(state.failed) & (state.k < maxiter)

    def body_fun(state: BFGSResults) -> BFGSResults:
        p_k = -fnp.dot(state.H_k, state.g_k, precision=lax.Precision.HIGHEST)
        ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k, old_old_fval=state.old_old_fval, gfk=state.g_k,
                         maxiter=line_search_maxiter)
        state = state._replace(nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev, failed=ls.failed,
                               line_search_status=ls.status)
        s_k = ls.a_k * p_k
        x_kp1 = state.x_k + s_k
        y_k = ls.g_k - state.g_k
        rho_k = fnp.reciprocal(fnp.dot(y_k, s_k, precision=lax.Precision.HIGHEST))
        sy_k = s_k[:, None] * y_k[None, :]
        w = fnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        h_kp1 = fnp.einsum("ij,jk,lk", w, state.H_k, w, precision=lax.Precision.HIGHEST) + rho_k * s_k[:, None] * s_k[None, :]
        h_kp1 = fnp.where(fnp.isfinite(rho_k), h_kp1, state.H_k)
        return state._replace(converged=np_linalg.norm(ls.g_k, ord=norm) < gtol, k=state.k + 1, x_k=x_kp1, f_k=ls.f_k,
                              g_k=ls.g_k, H_k=h_kp1, old_old_fval=state.f_k)

    state = lax.while_loop(cond_fun, body_fun, state)
    status = fnp.where(state.converged, 0,
                       fnp.where(state.k == maxiter, 1, fnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)

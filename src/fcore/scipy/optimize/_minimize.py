"""``minimize``: SciPy's entry point over JAX's two methods, gradients by ``value_and_grad``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.scipy.optimize._bfgs import minimize_bfgs
from fcore.scipy.optimize._lbfgs import minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """Object holding optimization results.

    ``x`` the solution, ``success``, ``status`` (0 converged, 1 ``maxiter`` reached, 3 zoom
    failed, 4 saddle point, 5 line search ``maxiter`` reached, -1 undefined), ``fun`` and
    ``jac`` at ``x``, ``hess_inv`` (BFGS's inverse Hessian estimate; ``None`` for L-BFGS), and
    the counts ``nfev``, ``njev`` and ``nit``.
    """

    x: Array
    success: bool | Array
    status: int | Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: int | Array
    njev: int | Array
    nit: int | Array


def minimize(fun: Callable[..., Any], x0: Array, args: tuple[Any, ...] = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimization of scalar function of one or more variables (``jax.scipy.optimize.minimize``).

    ``fun(x, *args)`` takes a 1-D ``x`` and returns a real scalar; its gradient comes from
    autodiff. ``method`` is required: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"``;
    ``options`` are the method's keyword arguments (``maxiter``, ``gtol``, ``norm``, ...). As in
    JAX, ``tol`` is accepted and unused. Works under ``jit`` and ``vmap``.
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x: Array) -> Array:
        result: Array = fun(x, *args)
        return result

    if method.lower() == "bfgs":
        bfgs = minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=bfgs.x_k, success=bfgs.converged & fnp.logical_not(bfgs.failed), status=bfgs.status,
                               fun=bfgs.f_k, jac=bfgs.g_k, hess_inv=bfgs.H_k, nfev=bfgs.nfev, njev=bfgs.ngev, nit=bfgs.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        lbfgs = minimize_lbfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=lbfgs.x_k, success=lbfgs.converged & fnp.logical_not(lbfgs.failed),
                               status=lbfgs.status, fun=lbfgs.f_k, jac=lbfgs.g_k, hess_inv=None, nfev=lbfgs.nfev,
                               njev=lbfgs.ngev, nit=lbfgs.k)
    raise ValueError(f"Method {method} not recognized")

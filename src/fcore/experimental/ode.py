"""``fcore.experimental.ode.odeint``: adaptive Dormand-Prince (RK45) integration with JAX's
adjoint gradients (``jax.experimental.ode``). The solver is a ``scan`` over output times of a
``while_loop`` of Runge-Kutta steps; its ``custom_vjp`` integrates the adjoint system backwards
in time with ``odeint`` itself, as JAX does, so memory does not grow with the number of steps."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.autodiff import vjp
from fcore.api.closures import closure_convert
from fcore.api.custom import custom_vjp
from fcore.api.jit import jit
from fcore.api.vectorize import vmap
from fcore.flatten_util import ravel_pytree
from fcore.interpreters.array import Array
from fcore.scipy._util import promote_dtypes_inexact
from fcore.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

_HIGHEST = lax.Precision.HIGHEST


def _dot(a: Any, b: Any) -> Array:
    return fnp.dot(a, b, precision=_HIGHEST)


def _ravel_first_arg(f: Callable[..., Any], unravel: Callable[[Any], Any]) -> Callable[..., Array]:
    def flat(y_flat: Array, *args: Any) -> Array:
        return ravel_pytree(f(unravel(y_flat), *args))[0]

    return flat


def interp_fit_dopri(y0: Array, y1: Array, k: Array, dt: Array) -> Array:
    """The 4th-order polynomial through a step, for dense output (Dormand-Prince midpoint)."""
    dps_c_mid = fnp.array(
        [6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
         187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2],
        dtype=y0.dtype,
    )
    y_mid = y0 + dt.astype(y0.dtype) * _dot(dps_c_mid, k)
    return fnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def fit_4th_order_polynomial(
    y0: Array, y1: Array, y_mid: Array, dy0: Array, dy1: Array, dt: Array
) -> tuple[Array, Array, Array, Array, Array]:
    dt = dt.astype(y0.dtype)
    a = -2.0 * dt * dy0 + 2.0 * dt * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dt * dy0 - 3.0 * dt * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dt * dy0 + dt * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return a, b, c, dt * dy0, y0


def initial_step_size(
    fun: Callable[[Array, Any], Array], t0: Any, y0: Array, order: int, rtol: float, atol: float, f0: Array
) -> Array:
    """Hairer, Norsett and Wanner's starting step (Solving ODEs I, II.4)."""
    y0, f0 = promote_dtypes_inexact(y0, f0)
    dtype = y0.dtype
    scale = atol + fnp.abs(y0) * rtol
    d0 = fnp.linalg.norm(y0 / scale.astype(dtype))
    d1 = fnp.linalg.norm(f0 / scale.astype(dtype))
    h0 = fnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = fnp.linalg.norm((f1 - f0) / scale.astype(dtype)) / h0
    h1 = fnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15), fnp.maximum(1e-6, h0 * 1e-3), (0.01 / fnp.maximum(d1, d2)) ** (1.0 / (order + 1.0))
    )
    return fnp.minimum(100.0 * h0, h1)


def runge_kutta_step(
    func: Callable[[Array, Any], Array], y0: Array, f0: Array, t0: Array, dt: Array
) -> tuple[Array, Array, Array, Array]:
    """One Dormand-Prince step: the new state, its derivative, the error estimate, the stages."""
    alpha = fnp.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0], dtype=dt.dtype)
    beta = fnp.array(
        [[1 / 5, 0, 0, 0, 0, 0, 0], [3 / 40, 9 / 40, 0, 0, 0, 0, 0], [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
         [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]],
        dtype=f0.dtype,
    )
    c_sol = fnp.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0], dtype=f0.dtype)
    c_error = fnp.array(
        [35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
         -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0],
        dtype=f0.dtype,
    )

    def body_fun(i: Array, k: Array) -> Array:
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + dt.astype(f0.dtype) * _dot(beta[i - 1, :], k)
        updated: Array = k.at[i, :].set(func(yi, ti))
        return updated

    k = fnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, body_fun, k)
    y1 = dt.astype(f0.dtype) * _dot(c_sol, k) + y0
    y1_error = dt.astype(f0.dtype) * _dot(c_error, k)
    return y1, k[-1], y1_error, k


def _abs2(x: Array) -> Array:
    if fnp.iscomplexobj(x):
        return x.real**2 + x.imag**2
    return x**2


def mean_error_ratio(error_estimate: Array, rtol: float, atol: float, y0: Array, y1: Array) -> Array:
    err_tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return fnp.sqrt(fnp.mean(_abs2(err_ratio)))


def optimal_step_size(
    last_step: Array, mean_error_ratio: Array, safety: float = 0.9, ifactor: float = 10.0, dfactor: float = 0.2,
    order: float = 5.0,
) -> Array:
    """The next step size from the last one and its error ratio."""
    dfactor_ = fnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = fnp.minimum(ifactor, fnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor_))
    return fnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def _valid_jaxtype(x: object) -> bool:
    if isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex)):
        return True
    return False


def odeint(
    func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8, atol: float = 1.4e-8,
    mxstep: float = math.inf, hmax: float = math.inf,
) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` and return ``y`` at each of
    the strictly increasing times ``t`` (a new leading axis on every leaf of ``y0``).

    ``rtol``/``atol`` bound the local error, ``mxstep`` the steps per output time, ``hmax``
    the step size. Differentiable in ``y0``, ``t`` and ``args`` by the adjoint method.
    """
    for arg in tree_leaves(args):
        if not _valid_jaxtype(arg):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    if not fnp.issubdtype(t.dtype, fnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_wrapper(
    func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Array, *args: Any
) -> Any:
    y0_flat, unravel = ravel_pytree(y0)
    out = _odeint(_ravel_first_arg(func, unravel), rtol, atol, mxstep, hmax, y0_flat, ts, *args)
    return vmap(unravel)(out)


def _odeint_impl(
    func: Callable[..., Array], rtol: float, atol: float, mxstep: float, hmax: float, y0: Array, ts: Array, *args: Any
) -> Array:
    def func_(y: Array, t: Any) -> Array:
        return func(y, t, *args)

    def scan_fun(carry: list[Array], target_t: Array) -> tuple[list[Array], Array]:
        def cond_fun(state: list[Array]) -> Array:
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state: list[Array]) -> list[Array]:
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = runge_kutta_step(func_, y, f, t, dt)
            next_t = t + dt
            error_ratio = mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = interp_fit_dopri(y, next_y, k, dt)
            dt = fnp.clip(optimal_step_size(dt, error_ratio), min=0.0, max=hmax)
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, f, t, dt, last_t, interp_coeff]
            accept = error_ratio <= 1.0
            return [fnp.where(accept, n, o) for n, o in zip(new, old, strict=True)]

        _, *carry = lax.while_loop(cond_fun, body_fun, [fnp.asarray(0)] + carry)
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = fnp.polyval(interp_coeff, relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = fnp.clip(initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    interp_coeff = fnp.array([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = lax.scan(scan_fun, init_carry, ts[1:])
    return fnp.concatenate((y0[None], ys))


_odeint = custom_vjp(_odeint_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(
    func: Callable[..., Array], rtol: float, atol: float, mxstep: float, hmax: float, y0: Array, ts: Array, *args: Any
) -> tuple[Array, tuple[Array, Array, tuple[Any, ...]]]:
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(
    func: Callable[..., Array], rtol: float, atol: float, mxstep: float, hmax: float,
    res: tuple[Array, Array, tuple[Any, ...]], g: Array,
) -> tuple[Any, ...]:
    ys, ts, args = res

    def aug_dynamics(augmented_state: Any, t: Any, *args: Any) -> Any:
        """The system augmented with the adjoints of y, t and args (run backwards in time)."""
        y, y_bar, *_ = augmented_state
        y_dot, vjpfun = vjp(func, y, -t, *args)
        return (-y_dot, *vjpfun(y_bar))

    def scan_fun(carry: tuple[Array, Any, Any], i: Array) -> tuple[tuple[Array, Any, Any], Array]:
        y_bar, t0_bar, args_bar = carry
        t_bar = _dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, args_bar), fnp.array([-ts[i], -ts[i - 1]]), *args,
            rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax,
        )
        y_bar, t0_bar, args_bar = tree_map(operator.itemgetter(1), (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init_carry = (g[-1], 0.0, tree_map(fnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(scan_fun, init_carry, fnp.arange(len(ts) - 1, 0, -1))
    ts_bar = fnp.concatenate([fnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)

"""``scipy.linalg.eigh_tridiagonal`` written as JAX writes it: eigenvalues by bisection on
Sturm sequence counts, eigenvectors by inverse iteration from random starting vectors (a
fixed key by default, fcore's random bits being JAX's), clusters of close eigenvalues
re-orthogonalized by QR. The same operations in the same order give JAX's numbers, signs of
the eigenvectors included; like JAX's, it is not reverse-differentiable (``while_loop``)."""

from __future__ import annotations

from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax, random
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax import linalg as lax_linalg
from fcore.lax._base import ArrayLike
from fcore.random import PRNGKeyArray

__all__ = ["eigh_tridiagonal"]


def _sturm(alpha: Array, beta_sq: Array, pivmin: Array, alpha0_perturbation: Array, x: Array) -> Array:
    """How many eigenvalues lie below each ``x`` (the Sturm sequence recurrence, 16 steps per
    loop iteration after a peeled remainder, as JAX unrolls it)."""
    n = alpha.shape[0]
    zeros = fnp.zeros(x.shape, dtype=np.int32)
    ones = fnp.ones(x.shape, dtype=np.int32)
    q = alpha[0] - x
    count = fnp.where(q < 0, ones, zeros)
    q = fnp.where(alpha[0] == x, alpha0_perturbation, q)

    def sturm_step(i: Any, q: Array, count: Array) -> tuple[Array, Array]:
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = fnp.where(q <= pivmin, count + 1, count)
        q = fnp.where(q <= pivmin, fnp.minimum(q, -pivmin), q)
        return q, count

    def steps(unroll: int) -> Any:
        def run(args: tuple[Any, Array, Array]) -> tuple[Any, Array, Array]:
            start, q, count = args
            for j in range(unroll):
                q, count = sturm_step(start + j, q, count)
            return start + unroll, q, count

        return run

    blocksize = 16
    i, q, count = steps((n - 1) % blocksize)((1, q, count))
    _, _, final = lax.while_loop(lambda iqc: fnp.less(iqc[0], n), steps(blocksize), (i, q, count))
    result: Array = final
    return result


def _eigenvectors(alpha: Array, beta: Array, eigvals: Array, key: Array | PRNGKeyArray) -> Array:
    """Inverse iteration (at most 5 steps, LAPACK's ``xSTEIN``), rows re-orthogonalized within
    each cluster of eigenvalues closer than ``sqrt(eps) * |lambda|_max``."""
    n = alpha.shape[0]
    k = eigvals.shape[0]
    dl = fnp.pad(fnp.conj(beta), (1, 0))
    du = fnp.pad(beta, (0, 1))
    gap = eigvals[1:] - eigvals[:-1]
    eps = np.finfo(eigvals.dtype).eps
    t_norm = fnp.maximum(fnp.abs(eigvals[0]), fnp.abs(eigvals[-1]))
    close = gap < np.sqrt(eps) * t_norm
    left_close = fnp.pad(close, (1, 0), constant_values=False)
    right_close = fnp.pad(close, (0, 1), constant_values=False)
    starts = fnp.nonzero(fnp.logical_and(fnp.logical_not(left_close), right_close), size=k // 2 + 1)[0]
    ends = fnp.nonzero(fnp.logical_and(left_close, fnp.logical_not(right_close)), size=k // 2 + 1)[0] + 1
    num_clusters = fnp.sum(fnp.logical_and(fnp.logical_not(left_close), right_close))
    arange_k = fnp.arange(k)
    solve_dtype = np.result_type(alpha.dtype, beta.dtype)
    base_dtype = np.finfo(solve_dtype).dtype
    v = random.normal(key, (k, n), dtype=base_dtype).astype(solve_dtype)
    v = v / fnp.linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

    def orthogonalize_cluster(i: Array, ev: Array) -> Array:
        start, end = starts[i], ends[i]
        v_block = lax.dynamic_slice(fnp.pad(ev, ((0, k), (0, 0))), (start, 0), (k, n))
        mask = (arange_k < end - start).astype(ev.dtype)
        q, _ = fnp.linalg.qr((v_block * mask[:, None]).T)
        update = lax.dynamic_update_slice(fnp.zeros((2 * k, n), dtype=ev.dtype), q.T * mask[:, None], (start, 0))[:k, :]
        in_cluster = (arange_k >= start) & (arange_k < end)
        return fnp.where(in_cluster[:, None], update, ev)

    shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)
    dl_k = fnp.broadcast_to(dl[None, :], (k, n)).astype(solve_dtype)
    du_k = fnp.broadcast_to(du[None, :], (k, n)).astype(solve_dtype)

    def step(state: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, v, nrm_v, _ = state
        v_new = lax_linalg.tridiagonal_solve(dl_k, shifted, du_k, v[:, :, None].astype(solve_dtype),
                                             perturb_singular=True)
        v_new = fnp.squeeze(v_new, axis=-1)
        nrm_new = fnp.linalg.norm(v_new, axis=-1, keepdims=True)
        v_new = v_new / nrm_new.astype(v_new.dtype)
        v_new = lax.fori_loop(0, num_clusters, orthogonalize_cluster, v_new)
        return i + 1, v_new, fnp.squeeze(nrm_new, axis=-1), nrm_v

    def more(state: tuple[Any, Array, Array, Array]) -> Array:
        i, _, nrm_v, nrm_v_old = state
        return fnp.logical_and(i < 5, fnp.any(nrm_v >= 1.1 * nrm_v_old))

    init = (0, v, fnp.ones(k, dtype=eigvals.dtype), fnp.zeros(k, dtype=eigvals.dtype))
    _, v_final, _, _ = lax.while_loop(more, step, init)
    result: Array = v_final
    return result


def _eigh_tridiagonal(d: ArrayLike, e: ArrayLike, *, eigvals_only: bool, select: str,
                      select_range: tuple[float, float] | None, tol: ArrayLike | None,
                      key: Array | PRNGKeyArray | None) -> Any:
    if not eigvals_only and key is None:
        key = random.key(42)
    alpha, beta = fnp.asarray(d), fnp.asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported or beta.dtype not in supported:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to jax.scipy.linalg.eigh_tridiagonal, "
                        f"got {alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        return fnp.real(alpha) if eigvals_only else (fnp.real(alpha), fnp.eye(n, dtype=alpha.dtype))
    if dtypes.is_complex(alpha.dtype):
        alpha = fnp.real(alpha)
        beta_sq = fnp.real(beta * fnp.conj(beta))
        beta_abs = fnp.sqrt(beta_sq)
    else:
        beta_abs = fnp.abs(beta)
        beta_sq = fnp.square(beta)
    # Gershgorin bounds on the spectrum, and the tolerances bisection works to.
    row_sum = fnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]], axis=0)
    est_max = fnp.amax(alpha + row_sum)
    est_min = fnp.amin(alpha - row_sum)
    t_norm = fnp.maximum(fnp.abs(est_min), fnp.abs(est_max))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * fnp.maximum(1, fnp.amax(beta_sq))
    alpha0_perturbation = fnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = fnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    if select == "a":
        target_counts = fnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        target_counts = fnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    fudge = 2.1
    norm_slack = fnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = target_counts.shape
    lower = fnp.broadcast_to(est_min - norm_slack - 2 * fudge * pivmin, shape)
    upper = fnp.broadcast_to(est_max + norm_slack + fudge * pivmin, shape)
    mid = 0.5 * (upper + lower)
    pivmin = fnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = fnp.broadcast_to(alpha0_perturbation, shape)

    def unconverged(args: tuple[Any, Array, Array, Array]) -> Array:
        i, lower, _, upper = args
        return fnp.logical_and(fnp.less(i, max_it), fnp.less(abs_tol, fnp.amax(upper - lower)))

    def bisect(args: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, lower, mid, upper = args
        counts = _sturm(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = fnp.where(counts <= target_counts, mid, lower)
        upper = fnp.where(counts > target_counts, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    _, _, mid, _ = lax.while_loop(unconverged, bisect, (0, lower, mid, upper))
    if eigvals_only:
        return mid
    assert key is not None
    return mid, _eigenvectors(alpha, beta, mid, key).T


eigh_tridiagonal = jit(_eigh_tridiagonal, static_argnames=("eigvals_only", "select", "select_range"))

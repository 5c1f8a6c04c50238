"""``fcore.scipy.sparse.linalg``: the iterative solvers ``cg``, ``bicgstab`` and ``gmres`` of
``jax.scipy.sparse.linalg``, on pytrees of arrays and a matrix or a function for the linear
operator. Each solve is a ``lax.custom_linear_solve``, so its derivative is another solve
rather than a derivative through the iterations, as in JAX; the loops are ``lax.while_loop`` loops."""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.jit import device_put
from fcore.interpreters.array import Array
from fcore.numpy._promotion import result_of
from fcore.scipy import linalg as sp_linalg
from fcore.tree_util import Partial, tree_leaves, tree_map, tree_reduce, tree_structure

__all__ = ["cg", "bicgstab", "gmres"]

Tree = Any
LinearOperator = Callable[[Tree], Tree]
_HIGHEST = lax.Precision.HIGHEST


def _dot(a: Array, b: Array) -> Array:
    return fnp.dot(a, b, precision=_HIGHEST)


def _vdot(a: Array, b: Array) -> Array:
    return fnp.vdot(a, b, precision=_HIGHEST)


def _vdot_real_part(x: Array, y: Array) -> Array:
    """``vdot(x, y).real`` without computing the imaginary part."""
    result = _vdot(x.real, y.real)
    if fnp.iscomplexobj(x) or fnp.iscomplexobj(y):
        result = result + _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x: Tree, y: Tree) -> Array:
    total: Array = sum(tree_leaves(tree_map(_vdot_real_part, x, y)))
    return total


def _vdot_tree(x: Tree, y: Tree) -> Array:
    total: Array = sum(tree_leaves(tree_map(_vdot, x, y)))
    return total


def _norm(x: Tree) -> Array:
    xs = tree_leaves(x)
    return fnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar: Array, tree: Tree) -> Tree:
    return tree_map(partial(operator.mul, scalar), tree)


def _add(x: Tree, y: Tree) -> Tree:
    return tree_map(operator.add, x, y)


def _sub(x: Tree, y: Tree) -> Tree:
    return tree_map(operator.sub, x, y)


def _identity_fn(x: Tree) -> Tree:
    return x


_identity = Partial(_identity_fn)


def _lattice_type(tree: Tree) -> tuple[np.dtype[Any], bool]:
    dt, weak = result_of(*tree_leaves(tree), name="sparse.linalg")
    return np.dtype(dt), weak


def _normalize_matvec(f: Any) -> LinearOperator:
    """The linear operator as a function: a callable as is, a square matrix as its product."""
    if callable(f):
        result: LinearOperator = f
        return result
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(_dot, fnp.asarray(f))
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _cg_solve(A: LinearOperator, b: Tree, x0: Tree = None, *, maxiter: int, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
              M: LinearOperator = _identity) -> Tree:  # noqa: N803
    bs = _vdot_real_tree(b, b)
    atol2 = fnp.maximum(fnp.square(tol) * bs, fnp.square(atol))
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = fnp.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

    def cond_fun(value: tuple[Tree, Tree, Array, Tree, Array]) -> Array:
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value: tuple[Tree, Tree, Array, Tree, Array]) -> tuple[Tree, Tree, Array, Tree, Array]:
        x, r, gamma, p, k = value
        ap = A(p)
        alpha = gamma / _vdot_real_tree(p, ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        return x_, r_, gamma_, _add(z_, _mul(gamma_ / gamma, p)), k + 1

    x_final: Tree = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, fnp.asarray(0)))[0]
    return x_final


def _bicgstab_solve(A: LinearOperator, b: Tree, x0: Tree = None, *, maxiter: int, tol: float = 1e-5,  # noqa: N803
                    atol: float = 0.0, M: LinearOperator = _identity) -> Tree:  # noqa: N803
    bs = _vdot_real_tree(b, b)
    atol2 = fnp.maximum(fnp.square(tol) * bs, fnp.square(atol))

    def cond_fun(value: tuple[Any, ...]) -> Array:
        r, k = value[1], fnp.asarray(value[-1])
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(partial(fnp.where, exit_early), _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(partial(fnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = fnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = fnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    dt, weak = _lattice_type(b)
    one = lax.convert_element_type(1, dt, weak)
    return lax.while_loop(cond_fun, body_fun, (x0, r0, r0, one, one, one, r0, r0, fnp.asarray(0)))[0]


def _shapes(tree: Tree) -> list[tuple[int, ...]]:
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _isolve(solver: Callable[..., Tree], A: Any, b: Tree, x0: Tree = None, *, tol: float = 1e-5,  # noqa: N803
            atol: float = 0.0, maxiter: int | None = None, M: Any = None, check_symmetric: bool = False  # noqa: N803
            ) -> tuple[Tree, None]:
    if x0 is None:
        x0 = tree_map(fnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(bi.size for bi in tree_leaves(b))  # SciPy's default
    matvec = _normalize_matvec(A)
    precond = _normalize_matvec(_identity if M is None else M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    isolve_solve = partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=precond)
    symmetric = all(not fnp.iscomplexobj(leaf) for leaf in tree_leaves(b)) if check_symmetric else False
    x = lax.custom_linear_solve(matvec, b, solve=isolve_solve, transpose_solve=isolve_solve, symmetric=symmetric)
    return x, None


def cg(A: Any, b: Tree, x0: Tree = None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,  # noqa: N803
       M: Any = None) -> tuple[Tree, None]:  # noqa: N803
    """Solve ``A x = b`` for a symmetric (Hermitian) positive definite ``A`` by conjugate
    gradients, to ``norm(residual) <= max(tol * norm(b), atol)``; ``M`` preconditions. Returns
    ``(x, None)``: as in JAX, convergence is not reported."""
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=True)


def bicgstab(A: Any, b: Tree, x0: Tree = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
             maxiter: int | None = None, M: Any = None) -> tuple[Tree, None]:  # noqa: N803
    """Solve ``A x = b`` for a general ``A`` by the biconjugate gradient stabilized method.
    Returns ``(x, None)``."""
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# --------------------------------------------------------------------------------- GMRES


def _safe_normalize(x: Tree, thresh: Array | None = None) -> tuple[Tree, Array]:
    """``x / norm(x)`` and the norm, both zero where the norm is at most ``thresh``."""
    norm = _norm(x)
    dtype, weak_type = _lattice_type(x)
    threshold = fnp.asarray(fnp.finfo(norm.dtype).eps) if thresh is None else thresh
    threshold = threshold.astype(dtype).real
    use_norm = norm > threshold
    norm_cast = lax.convert_element_type(norm, dtype, weak_type)
    normalized = tree_map(lambda y: fnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized, fnp.where(use_norm, norm, 0.0)


def _project_on_columns(A: Tree, v: Tree) -> Array:  # noqa: N803
    projected = tree_map(lambda X, y: fnp.einsum("...n,...->n", X.conj(), y, precision=_HIGHEST), A, v)  # noqa: N803
    result: Array = tree_reduce(operator.add, projected)
    return result


def _iterative_classical_gram_schmidt(Q: Tree, x: Tree, xnorm: Array, max_iterations: int = 2) -> tuple[Tree, Array]:  # noqa: N803
    """Orthogonalize ``x`` against the columns of ``Q``, repeating while that loses too much of
    its norm: ``x - Q r`` and ``r``."""
    q0 = tree_leaves(Q)[0]
    r = fnp.zeros(q0.shape[-1], dtype=q0.dtype)
    xnorm_scaled = xnorm / fnp.sqrt(2.0)

    def body_function(carry: tuple[Any, Tree, Array, Array]) -> tuple[Any, Tree, Array, Array]:
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, tree_map(lambda X: _dot(X, h), Q))  # noqa: N803
        r = _add(r, h)

        def qnorm_cond(carry: tuple[Any, Any, Tree, Array]) -> Array:
            k, not_done, _, _ = carry
            return fnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry: tuple[Any, Any, Tree, Array]) -> tuple[Any, Any, Tree, Array]:
            k, _, q, _ = carry
            _, norm = _safe_normalize(q)
            return (k, False, q, norm / fnp.sqrt(2.0))

        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, (k, True, q, qnorm_scaled))
        return (k + 1, q, r, qnorm_scaled)

    def cond_function(carry: tuple[Any, Tree, Array, Array]) -> Array:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return fnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body_function((0, x, r, xnorm_scaled))
    _, q, r, _ = lax.while_loop(cond_function, body_function, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(k: Array, A: LinearOperator, M: LinearOperator, V: Tree, H: Array  # noqa: N803
                           ) -> tuple[Tree, Array, Array]:
    dtype, _ = _lattice_type(V)
    eps = fnp.finfo(dtype).eps
    v = M(A(tree_map(lambda x: x[..., k], V)))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)  # noqa: N803, N806
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    return V, H.at[k, :].set(h), v_norm_1 == 0.0


def _rotate_vectors(H: Array, i: Any, cs: Array, sn: Array) -> Array:  # noqa: N803
    x1, y1 = H[i], H[i + 1]
    H = H.at[i].set(cs.conj() * x1 - sn.conj() * y1)  # noqa: N806
    rotated: Array = H.at[i + 1].set(sn * x1 + cs * y1)
    return rotated


def _givens_rotation(a: Array, b: Array) -> tuple[Array, Array]:
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -fnp.where(a_lt_b, a, b) / fnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = fnp.where(b_zero, 1, fnp.where(a_lt_b, r * t, r))
    sn = fnp.where(b_zero, 0, fnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(h_row: Array, givens: Array, k: Array) -> tuple[Array, Array]:
    r_row: Array = lax.fori_loop(0, k, lambda i, row: _rotate_vectors(row, i, *givens[i, :]), h_row)
    factors = _givens_rotation(r_row[k], r_row[k + 1])
    return _rotate_vectors(r_row, k, *factors), givens.at[k, :].set(fnp.array(factors))


def _start_basis(unit_residual: Tree, restart: int) -> Tree:
    return tree_map(lambda x: fnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


GmresStep = Callable[..., tuple[Tree, Tree, Array]]


def _gmres_incremental(A: LinearOperator, b: Tree, x0: Tree, unit_residual: Tree, residual_norm: Array,  # noqa: N803
                       ptol: Array, restart: int, M: LinearOperator) -> tuple[Tree, Tree, Array]:  # noqa: N803
    V = _start_basis(unit_residual, restart)  # noqa: N806
    dtype = fnp.result_type(*tree_leaves(b))
    R = fnp.eye(restart, restart + 1, dtype=dtype)  # noqa: N806
    givens = fnp.zeros((restart, 2), dtype=dtype)
    beta_vec = fnp.zeros((restart + 1), dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry: tuple[Any, ...]) -> Array:
        k, err, _, _, _, _ = carry
        return fnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        k, _, V, R, beta_vec, givens = carry  # noqa: N806
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)  # noqa: N806
        r_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(r_row)  # noqa: N806
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        return k + 1, abs(beta_vec[k + 1]), V, R, beta_vec, givens

    _, residual_norm, V, R, beta_vec, _ = lax.while_loop(loop_cond, arnoldi_qr_step,  # noqa: N806
                                                         (0, residual_norm, V, R, beta_vec, givens))
    y = sp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))  # noqa: N803
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _lstsq(a: Array, b: Array) -> Array:
    return sp_linalg.solve(_dot(a.T.conj(), a), _dot(a.T.conj(), b), assume_a="pos")


def _gmres_batched(A: LinearOperator, b: Tree, x0: Tree, unit_residual: Tree, residual_norm: Array,  # noqa: N803
                   ptol: Array, restart: int, M: LinearOperator) -> tuple[Tree, Tree, Array]:  # noqa: N803
    del ptol
    V = _start_basis(unit_residual, restart)  # noqa: N806
    dtype, weak_type = _lattice_type(b)
    H = lax.convert_element_type(fnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type)  # noqa: N806

    def loop_cond(carry: tuple[Any, ...]) -> Array:
        _, _, breakdown, k = carry
        return fnp.logical_and(k < restart, fnp.logical_not(breakdown))

    def arnoldi_process(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        V, H, _, k = carry  # noqa: N806
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)  # noqa: N806
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, (V, H, False, 0))  # noqa: N806
    beta_vec = fnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))  # noqa: N803
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_solve(A: LinearOperator, b: Tree, x0: Tree, atol: Array, ptol: Array, restart: int, maxiter: int,  # noqa: N803
                 M: LinearOperator, gmres_func: GmresStep) -> Tree:  # noqa: N803
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond_fun(value: tuple[Any, ...]) -> Array:
        _, k, _, residual_norm = value
        return fnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value: tuple[Any, ...]) -> tuple[Any, ...]:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm, ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    return lax.while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))[0]


def gmres(A: Any, b: Tree, x0: Tree = None, *, tol: float = 1e-5, atol: float = 0.0, restart: int = 20,  # noqa: N803
          maxiter: int | None = None, M: Any = None, solve_method: str = "batched") -> tuple[Tree, Array]:  # noqa: N803
    """Solve ``A x = b`` by restarted GMRES (Krylov subspaces of size ``restart``, at most
    ``maxiter`` restarts; ``solve_method`` ``"batched"`` or ``"incremental"``). Returns
    ``(x, info)``, ``info`` -1 where ``x`` has NaNs, else 0."""
    if x0 is None:
        x0 = tree_map(fnp.zeros_like, b)
    matvec = _normalize_matvec(A)
    precond = _normalize_matvec(_identity if M is None else M)
    b, x0 = device_put((b, x0))
    size = sum(bi.size for bi in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = _norm(b)
    atol_arr = fnp.maximum(tol * b_norm, atol)
    ptol = _norm(precond(b)) * fnp.minimum(1.0, atol_arr / b_norm)
    gmres_func: GmresStep
    if solve_method == "incremental":
        gmres_func = _gmres_incremental
    elif solve_method == "batched":
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")
    steps = maxiter

    def solve(matvec_: LinearOperator, b_: Tree) -> Tree:
        return _gmres_solve(matvec_, b_, x0, atol_arr, ptol, restart, steps, precond, gmres_func)

    x = lax.custom_linear_solve(matvec, b, solve=solve, transpose_solve=solve)
    return x, fnp.where(fnp.isnan(_norm(x)), -1, 0)

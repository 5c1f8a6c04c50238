"""``fcore.lax.custom_linear_solve`` and ``custom_root`` against ``jax.lax``: values and
implicit derivatives under jit, grad, jvp and vmap, pytrees with aux, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.25, 0.5, 2.0]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)


def _close(ours: Any, theirs: Any) -> None:
    lo, to = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(lo) == len(to)
    for o, t in zip(lo, to):
        assert np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-5, atol=1e-6)


def _jacobi(lib: Any, np_: Any) -> Callable[[Callable[[Any], Any], Any], Any]:
    """An iterative solver with a data-dependent while loop: not reverse-differentiable itself."""

    def solve(matvec: Callable[[Any], Any], b: Any) -> Any:
        diag = matvec(np_.ones_like(b)) * 0 + np_.diagonal(A)

        def body(state: Any) -> Any:
            x, i = state
            return x + (b - matvec(x)) / diag, i + 1

        x, _ = lib.lax.while_loop(lambda s: s[1] < 200, body, (np_.zeros_like(b), 0))
        return x

    return solve


def _linear_program(lib: Any, np_: Any) -> Callable[..., Any]:
    """Values, both reverse-mode gradients, a jvp, vmaps over b and over the matrix, has_aux."""
    jacobi = _jacobi(lib, np_)

    def solve_with(a: Any, b: Any) -> Any:
        return lib.lax.custom_linear_solve(lambda v: a @ v, b, jacobi, jacobi)

    def program(a: Any, b: Any) -> Any:
        x = solve_with(a, b)
        grads = lib.grad(lambda a, b: (solve_with(a, b) ** 2).sum(), argnums=(0, 1))(a, b)
        tangent = lib.jvp(solve_with, (a, b), (np_.ones_like(a), np_.ones_like(b)))[1]
        over_b = lib.vmap(solve_with, in_axes=(None, 0))(a, np_.stack([b, 2 * b]))
        over_a = lib.vmap(solve_with, in_axes=(0, None))(np_.stack([a, a + np_.eye(3)]), b)
        sym = lib.lax.custom_linear_solve(
            lambda v: {"u": (a + a.T) @ v["u"]}, {"u": b}, lambda mv, r: ({"u": np_.linalg.solve(a + a.T, r["u"])}, r["u"].sum()),
            symmetric=True, has_aux=True,
        )
        sym_grad = lib.grad(lambda b: lib.lax.custom_linear_solve(
            lambda v: (a + a.T) @ v, b, lambda mv, r: np_.linalg.solve(a + a.T, r), symmetric=True).sum())(b)
        return x, grads, tangent, over_b, over_a, sym, sym_grad

    return program


def test_custom_linear_solve_matches_jax() -> None:
    ours = fcore.jit(_linear_program(fcore, fnp))(A, B)
    theirs = jax.jit(_linear_program(jax, jnp))(A, B)
    _close(ours, theirs)
    np.testing.assert_allclose(A @ np.asarray(ours[0]), B, atol=1e-5)


def test_custom_linear_solve_eager_and_staged() -> None:
    solve = lambda mv, r: fnp.linalg.solve(A, r)  # noqa: E731
    x = fcore.lax.custom_linear_solve(lambda v: A @ v, B, solve)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, B), rtol=1e-5)
    jaxpr = fcore.make_jaxpr(lambda b: fcore.lax.custom_linear_solve(lambda v: A @ v, b, solve))(B)
    assert "custom_linear_solve[" in str(jaxpr)
    # forward mode needs no transpose_solve; reverse mode does, with JAX's error
    _, t = fcore.jvp(lambda b: fcore.lax.custom_linear_solve(lambda v: A @ v, b, solve), (B,), (B,))
    np.testing.assert_allclose(np.asarray(t), np.asarray(x), rtol=1e-5)
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        fcore.grad(lambda b: fcore.lax.custom_linear_solve(lambda v: A @ v, b, solve).sum())(B)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda lax, s: lax.custom_linear_solve(lambda v: (A @ v, 1), B, s), ValueError, r"matvec\(\) output shapes"),
        (lambda lax, s: lax.custom_linear_solve(lambda v: A @ v, B, lambda mv, r: r[:1]), ValueError,
         r"solve\(\) output shapes must match b, got \[\(1,\)\] and \[\(3,\)\]"),
        (lambda lax, s: lax.custom_linear_solve(lambda v: A @ v, B, s, has_aux=True), ValueError,
         "too many values to unpack"),
        (lambda lax, s: lax.custom_linear_solve(lambda v: [A @ v], B, s), TypeError,
         r"matvec\(\) output pytree structure must match b"),
        (lambda lax, s: lax.custom_root(lambda u: (u, u), 1.0, lambda f, u: u, lambda g, y: y), TypeError,
         r"f\(\) output pytree structure must match initial_guess"),
        (lambda lax, s: lax.custom_root(lambda u: u, 1.0, lambda f, u: u, lambda g, y: y, has_aux=True), ValueError,
         "auxiliary output was expected because has_aux was set to True"),
    ],
)
def test_errors_match_jax(call: Callable[[Any, Any], Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call(fcore.lax, lambda mv, r: fnp.linalg.solve(A, r))
    with pytest.raises(error, match=match):
        call(jax.lax, lambda mv, r: jnp.linalg.solve(A, r))


def _root_program(lib: Any, np_: Any) -> Callable[..., Any]:
    def cube_root(c: Any) -> Any:
        """Per element, u**3 = c by Newton's method, with aux output (pytree guess)."""
        f = lambda u: {"x": u["x"] ** 3 - c, "y": u["y"] - 2 * c}  # noqa: E731

        def newton(f: Callable[[Any], Any], u0: Any) -> Any:
            step = lambda i, u: {"x": u["x"] - f(u)["x"] / (3 * u["x"] ** 2), "y": u["y"] - f(u)["y"]}  # noqa: E731
            return lib.lax.fori_loop(0, 30, step, u0), np_.float32(7)

        def tangent_solve(g: Callable[[Any], Any], y: Any) -> Any:
            d = g({"x": np_.ones_like(c), "y": np_.zeros_like(c)})["x"]  # g is diagonal in x
            return {"x": y["x"] / d, "y": y["y"]}

        guess = {"x": np_.ones_like(c), "y": np_.ones_like(c)}
        return lib.lax.custom_root(f, guess, newton, tangent_solve, has_aux=True)

    def sqrt(c: Any) -> Any:
        f = lambda u: u * u - c  # noqa: E731
        newton = lambda f, u0: lib.lax.fori_loop(0, 20, lambda i, u: u - f(u) / (2 * u), u0)  # noqa: E731
        return lib.lax.custom_root(f, np_.float32(1.0), newton, lambda g, y: y / g(1.0))

    def program(c: Any) -> Any:
        return (cube_root(c), lib.jacobian(lambda c: cube_root(c)[0])(c), lib.vmap(sqrt)(c),
                lib.vmap(lib.grad(sqrt))(c), lib.jvp(sqrt, (c[0],), (c[1],)))

    return program


def test_custom_root_matches_jax() -> None:
    c = np.array([2.0, 3.0], np.float32)
    ours = fcore.jit(_root_program(fcore, fnp))(c)
    theirs = jax.jit(_root_program(jax, jnp))(c)
    _close(ours, theirs)
    np.testing.assert_allclose(np.asarray(ours[2]), np.sqrt(c), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ours[3]), 0.5 / np.sqrt(c), rtol=1e-5)


def test_custom_root_eager_grad() -> None:
    def sqrt(c: Any) -> Any:
        f = lambda u: u * u - c  # noqa: E731
        newton = lambda f, u0: fcore.lax.fori_loop(0, 20, lambda i, u: u - f(u) / (2 * u), u0)  # noqa: E731
        return fcore.lax.custom_root(f, np.float32(1.0), newton, lambda g, y: y / g(1.0))

    np.testing.assert_allclose(float(fcore.grad(sqrt)(4.0)), 0.25, rtol=1e-6)

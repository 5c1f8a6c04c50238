"""The primitives JAX 0.10 binds where fcore used to compose others: ``square``, ``stack``,
``unstack``, ``split`` and ``tile``, against jax: values, printed jaxprs, derivatives, batching,
compiled results and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax import lax as jl

import fcore
import fcore.numpy as fnp
from fcore import lax as fl

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
XS = np.arange(24.0, dtype=np.float32).reshape(2, 4, 3)


def program(lax: Any, x: Any) -> Any:
    """Every new primitive once, each result used (weights make each piece's cotangent differ)."""
    a = lax.stack([x, lax.square(x)], axis=1)
    pieces = lax.unstack(x, axis=1)
    left, right = lax.split(x, (1, 2), axis=1)
    tiled = lax.tile(x, (2, 1))
    total = a.sum() + sum(p.sum() * (i + 1) for i, p in enumerate(pieces))
    return total + (left * 3).sum() + right.sum() + (tiled * tiled).sum()


def test_jaxprs_print_as_jax_s() -> None:
    ours = str(fcore.make_jaxpr(lambda x: [fl.stack([x, x], 1), *fl.unstack(x, 1), *fl.split(x, (1, 2), 1),
                                           fl.tile(x, (2, 1)), fl.square(x)])(X))
    theirs = str(jax.make_jaxpr(lambda x: [jl.stack([x, x], 1), *jl.unstack(x, 1), *jl.split(x, (1, 2), 1),
                                           jl.tile(x, (2, 1)), jl.square(x)])(X))
    assert ours == theirs
    assert fcore.make_jaxpr(fnp.square)(X).eqns[0].primitive is fl.square_p


def test_values_gradients_batching_and_jit_match_jax() -> None:
    f: Callable[[Any], Any] = lambda x: program(fl, x)  # noqa: E731
    g: Callable[[Any], Any] = lambda x: program(jl, x)  # noqa: E731
    assert float(f(X)) == float(jax.jit(g)(X))
    want_grad = jax.jit(jax.grad(g))(X)
    np.testing.assert_array_equal(fcore.grad(f)(X), want_grad)
    np.testing.assert_array_equal(fcore.jit(fcore.grad(f))(X), want_grad)
    np.testing.assert_array_equal(fcore.jit(fcore.vmap(f, in_axes=1))(XS), jax.jit(jax.vmap(g, in_axes=1))(XS))
    np.testing.assert_array_equal(fcore.vmap(fcore.grad(f), in_axes=1)(XS),
                                  jax.jit(jax.vmap(jax.grad(g), in_axes=1))(XS))


def test_stack_batches_operands_at_different_axes() -> None:
    y = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    ours = fcore.vmap(lambda a, b: fl.stack([a, b, a], axis=0), in_axes=(0, 1))(X.T[:2, :2], y[:, :2])
    theirs = jax.vmap(lambda a, b: jl.stack([a, b, a], axis=0), in_axes=(0, 1))(X.T[:2, :2], y[:, :2])
    np.testing.assert_array_equal(ours, theirs)
    ours = fcore.vmap(lambda a: fl.stack([a, X[0]], axis=1))(X)
    np.testing.assert_array_equal(ours, jax.vmap(lambda a: jl.stack([a, X[0]], axis=1))(X))


def test_square_dtypes_and_jvp() -> None:
    for x in (np.arange(3, dtype=np.int8), np.array([1 + 2j], np.complex64), np.array([1.5], np.float16)):
        ours, theirs = fl.square(x), jl.square(x)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
    primal, tangent = fcore.jvp(fl.square, (np.float32(3.0),), (np.float32(1.0),))
    assert (float(primal), float(tangent)) == (9.0, 6.0)
    with pytest.raises(TypeError, match="square does not accept dtype bool"):
        fl.square(np.array([True]))


@pytest.mark.parametrize("case", [
    lambda lax: lax.split(X, (1, 1), axis=1),
    lambda lax: lax.split(X, (4, -1), axis=1),
    lambda lax: lax.stack([X, X[:1]]),
    lambda lax: lax.unstack(np.float32(1.0)),
    lambda lax: lax.tile(X, (2,)),
])
def test_errors_match_jax(case: Callable[[Any], Any]) -> None:
    with pytest.raises((TypeError, ValueError)) as want:
        case(jl)
    with pytest.raises(want.type) as got:
        case(fl)
    assert str(got.value) == str(want.value)


def test_jaxprs_with_them_convert_to_jax() -> None:
    from fcore.interop import to_jax_callable

    closed = fcore.make_jaxpr(lambda x: program(fl, x))(X)
    (out,) = to_jax_callable(closed)(X)
    assert float(out) == float(program(jl, X))


def test_copy_is_one_equation_and_linear() -> None:
    x = np.arange(3.0, dtype=np.float32)
    assert str(fcore.make_jaxpr(fnp.copy)(x)) == str(jax.make_jaxpr(jax.numpy.copy)(x))
    np.testing.assert_array_equal(fcore.grad(lambda v: (fnp.copy(v) * v).sum())(x), 2 * x)
    np.testing.assert_array_equal(fcore.jit(fcore.vmap(fnp.copy))(X), X)
    (ct,) = fcore.linear_transpose(fnp.copy, x)(x)
    np.testing.assert_array_equal(ct, x)


def test_scatter_sub_matches_jax() -> None:
    idx = np.array([[1], [1], [2]])
    x, u = np.arange(3.0, dtype=np.float32), np.array([1.0, 2.0, 3.0], np.float32)

    def ours(x: Any, u: Any) -> Any:
        return (fl.scatter_sub(x, idx, u, fl.ScatterDimensionNumbers((), (0,), (0,))) ** 2).sum()

    def theirs(x: Any, u: Any) -> Any:
        return (jl.scatter_sub(x, idx, u, jl.ScatterDimensionNumbers((), (0,), (0,))) ** 2).sum()

    ours_text = fcore.make_jaxpr(lambda x, u: fl.scatter_sub(x, idx, u, fl.ScatterDimensionNumbers((), (0,), (0,))))
    theirs_text = jax.make_jaxpr(lambda x, u: jl.scatter_sub(x, idx, u, jl.ScatterDimensionNumbers((), (0,), (0,))))
    assert str(ours_text(x, u)) == str(theirs_text(x, u))
    for got, want in zip(fcore.grad(ours, (0, 1))(x, u), jax.grad(theirs, (0, 1))(x, u)):
        np.testing.assert_array_equal(got, want)
    xs, us = np.stack([x, x + 1]), np.stack([u, u])
    np.testing.assert_array_equal(fcore.jit(fcore.vmap(ours))(xs, us), jax.vmap(theirs)(xs, us))
    with pytest.raises(TypeError, match="sub does not accept dtype bool"):
        fl.scatter_sub(np.ones(3, bool), idx, np.ones(3, bool), fl.ScatterDimensionNumbers((), (0,), (0,)))


def test_rng_uniform() -> None:
    a, b = np.float32(2.0), np.float32(3.0)
    for out in (fl.rng_uniform(a, b, (2, 3)), fcore.jit(lambda a, b: fl.rng_uniform(a, b, (2, 3)))(a, b)):
        assert out.shape == (2, 3) and out.dtype == np.float32
        assert ((np.asarray(out) >= 2.0) & (np.asarray(out) < 3.0)).all()
    ints = fl.rng_uniform(np.int32(0), np.int32(10), (50,))
    assert ints.dtype == np.int32 and 0 <= int(ints.min()) and int(ints.max()) < 10
    assert str(fcore.make_jaxpr(lambda a, b: fl.rng_uniform(a, b, (2,)))(a, b)) == str(
        jax.make_jaxpr(lambda a, b: jl.rng_uniform(a, b, (2,)))(a, b))  # type: ignore[no-untyped-call]
    cases: list[tuple[Any, Any]] = [(a, np.int32(1)), (np.zeros(2, np.float32), np.ones(2, np.float32))]
    for args in cases:
        with pytest.raises(ValueError) as want:
            jl.rng_uniform(*args, (2,))  # type: ignore[no-untyped-call]
        with pytest.raises(ValueError) as got:
            fl.rng_uniform(*args, (2,))
        assert str(got.value) == str(want.value)


def test_general_reduce_matches_jax() -> None:
    def affine(a: Any, b: Any) -> Any:
        return a * b + 1

    init = np.float32(0.0)
    for dims in ((0,), (1,), (0, 1)):
        np.testing.assert_array_equal(fl.reduce(X, init, affine, dims), jl.reduce(X, init, affine, dims))
    np.testing.assert_array_equal(fcore.jit(lambda x: fl.reduce(x, init, affine, (1,)))(X), jl.reduce(X, init, affine, (1,)))
    (eqn,) = fcore.make_jaxpr(lambda x: fl.reduce(x, init, affine, (0,)))(X).eqns
    assert eqn.primitive is fl.reduce_p and eqn.params["dimensions"] == (0,)
    pair_init = (np.float32(0.0), np.float32(-np.inf))
    ours = fl.reduce((X, X * 2), pair_init, lambda a, b: (a[0] + b[0], fl.max(a[1], b[1])), (1,))
    theirs = jl.reduce((X, X * 2), pair_init, lambda a, b: (a[0] + b[0], jl.max(a[1], b[1])), (1,))
    for got, want in zip(ours, theirs):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fcore.vmap(lambda x: fl.reduce(x, init, affine, (0,)), in_axes=1)(XS),
                                  jax.vmap(lambda x: jl.reduce(x, init, affine, (0,)), in_axes=1)(XS))
    with pytest.raises(NotImplementedError, match="cannot differentiate lax.reduce"):
        fcore.grad(lambda x: fl.reduce(x, init, affine, (0,)).sum())(X)


def test_select_and_scatter_matches_jax() -> None:
    from jax._src.lax import windowed_reductions

    from fcore.lax.select_and_scatter import select_and_scatter

    _select_and_scatter: Any = windowed_reductions._select_and_scatter  # JAX's private binder of the primitive

    x = np.array([[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 7.0, 1.0]], np.float32)
    s = np.array([[10.0, 20.0]], np.float32)

    def ours(x: Any, s: Any) -> Any:
        return select_and_scatter(x, fl.ge, (2, 2), (2, 2), ((0, 0), (0, 0)), s, np.float32(0), fl.add)

    def theirs(x: Any, s: Any) -> Any:
        return _select_and_scatter(x, jl.ge, (2, 2), (2, 2), ((0, 0), (0, 0)), s, np.float32(0), jl.add)

    np.testing.assert_array_equal(ours(x, s), theirs(x, s))
    assert str(fcore.make_jaxpr(ours)(x, s)) == str(jax.make_jaxpr(theirs)(x, s))
    ones = np.full((2, 4), 2.0, np.float32)
    padded = fcore.jit(lambda x, s: select_and_scatter(x, fl.le, (2, 2), (1, 1), ((1, 0), (0, 1)), s, np.float32(1), fl.mul))
    want = jax.jit(lambda x, s: _select_and_scatter(x, jl.le, (2, 2), (1, 1), ((1, 0), (0, 1)), s, np.float32(1), jl.mul))
    np.testing.assert_array_equal(padded(x, ones), want(x, ones))
    with pytest.raises(TypeError, match="inconsistent window_strides"):
        select_and_scatter(x, fl.ge, (2, 2), (2,), ((0, 0), (0, 0)), s, np.float32(0), fl.add)

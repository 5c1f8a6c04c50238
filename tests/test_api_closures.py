"""Top-level API that JAX programs reach for, against jax: ``linear_transpose``,
``custom_gradient``, ``closure_convert``, ``flatten_util.ravel_pytree``, ``device_get``,
``default_backend``, and ``fcore.extend.core``."""

from __future__ import annotations

from typing import Any

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fcore
import fcore.numpy as fnp
from fcore.flatten_util import ravel_pytree

F32 = np.float32


def test_linear_transpose_matches_jax() -> None:
    m = np.arange(6, dtype=F32).reshape(2, 3)

    def f(np_: Any) -> Any:
        return lambda x, y: (np_.dot(m, x) * 2.0, {"s": np_.sum(y) - x[0]})

    args = (np.ones(3, F32), np.ones((2, 2), F32))
    ct = (np.array([1.0, -2.0], F32), {"s": F32(3.0)})
    ours = fcore.linear_transpose(f(fnp), *args)(ct)
    theirs = jax.linear_transpose(f(jnp), *args)(ct)
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t))
        assert np.asarray(o).dtype == np.asarray(t).dtype


@given(st.integers(1, 4), st.integers(1, 4))
@settings(max_examples=10, deadline=None)
def test_linear_transpose_is_the_adjoint(n: int, k: int) -> None:
    """<f(x), y> == <x, f^T(y)> for a random linear map."""
    rng = np.random.default_rng(n * 10 + k)
    a = rng.normal(size=(k, n)).astype(F32)
    x, y = rng.normal(size=n).astype(F32), rng.normal(size=k).astype(F32)
    (xt,) = fcore.linear_transpose(lambda v: fnp.dot(a, v), x)(y)
    np.testing.assert_allclose(np.dot(np.dot(a, x), y), np.dot(x, np.asarray(xt)), rtol=1e-4, atol=1e-5)


def test_linear_transpose_errors_as_jax() -> None:
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        fcore.linear_transpose(lambda x: x.astype(F32), np.int32(1))
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        jax.linear_transpose(lambda x: x.astype(F32), np.int32(1))
    t = fcore.linear_transpose(lambda x: x * 2.0, np.ones(2, F32))
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        t((np.ones(2, F32),))
    with pytest.raises(TypeError, match="cotangent type does not match"):
        t(np.ones(3, F32))


def test_linear_transpose_is_a_partial_through_jit() -> None:
    t = fcore.linear_transpose(lambda x: x * 3.0, np.ones(2, F32))
    assert isinstance(t, fcore.tree_util.Partial)
    np.testing.assert_allclose(np.asarray(fcore.jit(lambda f, c: f(c))(t, np.ones(2, F32))[0]), [3.0, 3.0])


def test_custom_gradient_matches_jax() -> None:
    def make(np_: Any, cg: Any) -> Any:
        def f(x: Any) -> Any:
            y = np_.sin(x)
            return y * x, lambda g: (g * 3.0 * y,)

        return cg(f)

    ours, theirs = make(fnp, fcore.custom_gradient), make(jnp, jax.custom_gradient)
    x = np.linspace(0.1, 1.0, 4).astype(F32)
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-6)
    g_ours = fcore.grad(lambda v: fnp.sum(ours(v)))(x)
    g_theirs = jax.grad(lambda v: jnp.sum(theirs(v)))(x)
    np.testing.assert_allclose(np.asarray(g_ours), np.asarray(g_theirs), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fcore.jit(fcore.grad(lambda v: fnp.sum(ours(v))))(x)),
                               np.asarray(g_theirs), rtol=1e-6)


def test_closure_convert_hoists_traced_values_only() -> None:
    def outer(np_: Any, cc: Any) -> Any:
        def run(x: Any) -> Any:
            g = lambda y: y * x + np_.float32(2.0)  # noqa: E731
            converted, consts = cc(g, np_.float32(1.0))
            return converted(np_.float32(2.0), *consts), len(consts)

        return run

    for x in (F32(3.0),):
        (ours, n_ours), (theirs, n_theirs) = outer(fnp, fcore.closure_convert)(x), outer(jnp, jax.closure_convert)(x)
        assert n_ours == n_theirs == 0
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))
    grad_ours = fcore.grad(lambda x: outer(fnp, fcore.closure_convert)(x)[0])(F32(3.0))
    grad_theirs = jax.grad(lambda x: outer(jnp, jax.closure_convert)(x)[0])(F32(3.0))
    np.testing.assert_allclose(np.asarray(grad_ours), np.asarray(grad_theirs))
    counts: list[int] = []

    def count_hoisted(x: Any) -> Any:
        value, n = outer(fnp, fcore.closure_convert)(x)
        counts.append(n)
        return value

    fcore.grad(count_hoisted)(F32(3.0))
    assert counts == [1]  # under grad, x is a tracer: hoisted


def test_closure_convert_checks_the_argument_tree() -> None:
    converted, _ = fcore.closure_convert(lambda a: a[0] * 2.0, (F32(1.0),))
    with pytest.raises(TypeError, match="same Pytree structure"):
        converted([F32(1.0)])


TREES = [
    {"a": np.ones((2, 3), F32), "b": (np.arange(3, dtype=np.int32), 2.0)},
    [np.float16(1.5), np.ones(2, F32)],
    {},
    (np.arange(4, dtype=F32),),
]


@pytest.mark.parametrize("i", range(len(TREES)))
def test_ravel_pytree_matches_jax(i: int) -> None:
    tree = TREES[i]
    flat, unravel = ravel_pytree(tree)
    jflat, junravel = jax.flatten_util.ravel_pytree(tree)
    assert flat.shape == jflat.shape and flat.dtype == jflat.dtype
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    back, jback = unravel(flat), junravel(jflat)
    assert fcore.tree_util.tree_structure(back) == fcore.tree_util.tree_structure(tree)
    for o, t in zip(jax.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jback)):
        assert np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


def test_ravel_pytree_under_grad_and_errors() -> None:
    params = {"w": np.ones((2, 2), F32), "b": np.zeros(2, F32)}
    flat, unravel = ravel_pytree(params)
    g = fcore.grad(lambda v: fnp.sum(unravel(v)["w"] ** 2))(flat)
    np.testing.assert_allclose(np.asarray(g), [0.0] * 2 + [2.0] * 4)  # keys in sorted order: b, then w
    with pytest.raises(ValueError, match="expected an array of shape"):
        unravel(np.ones(5, F32))
    _, mixed = ravel_pytree([np.float16(1.0), np.ones(1, F32)])
    with pytest.raises(TypeError, match="but expected dtype float32"):
        mixed(np.ones(2, np.float16))


def test_device_get_and_default_backend() -> None:
    tree = {"a": fnp.ones(2), "b": 3, "c": np.zeros(1)}
    out = fcore.device_get(tree)
    assert type(out["a"]) is np.ndarray and out["b"] == 3
    assert fcore.default_backend() == jax.default_backend() == "cpu"


def test_extend_core_names() -> None:
    from fcore.extend.core import ClosedJaxpr, JaxprTypeError, Primitive, check_jaxpr, jaxpr_as_fun, primitives

    closed = fcore.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(F32(1.0))
    assert isinstance(closed, ClosedJaxpr)
    check_jaxpr(closed)
    assert closed.eqns[0].primitive is primitives.sin_p is fcore.lax.sin_p
    np.testing.assert_allclose(np.asarray(jaxpr_as_fun(closed)(F32(0.5))[0]), 2 * np.sin(0.5), rtol=1e-6)
    assert issubclass(Primitive, fcore.core.Primitive) and issubclass(JaxprTypeError, TypeError)
    import jax.extend.core.primitives as jprims

    ours = {n for n in dir(primitives) if n.endswith("_p")}
    assert ours <= {n for n in dir(jprims) if n.endswith("_p")}

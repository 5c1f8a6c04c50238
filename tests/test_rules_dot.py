"""Transformation rules of ``dot_general`` (jvp, transpose, batching, lowering), checked
against JAX, finite differences, the adjoint identity and jit-vs-eager; and an MLP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import fcore
import fcore.numpy as fnp
from fcore import lax
from fcore.config import enable_x64

NpArray = np.ndarray[Any, Any]
DN = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]
BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(1)

CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], DN]] = {
    "matmul": ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    "matvec": ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    "vecmat": ((4,), (4, 2), (((0,), (0,)), ((), ()))),
    "vecvec": ((4,), (4,), (((0,), (0,)), ((), ()))),
    "outer": ((3,), (2,), (((), ()), ((), ()))),
    "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    "batch_not_leading": ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    "contract_permuted": ((3, 4, 5), (5, 2, 4), (((1, 2), (2, 0)), ((), ()))),
    "two_batch": ((2, 3, 4, 5), (3, 2, 5), (((3,), (2,)), ((0, 1), (1, 0)))),
}


def sample(shape: tuple[int, ...], dtype: Any = np.float32) -> NpArray:
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def close(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    if BF16 in (a.dtype, b.dtype):
        a, b = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def jref(f: Callable[..., Any], *args: Any) -> Any:
    """A JAX reference value, jitted (JAX's op-by-op dispatch compiles every op: slow)."""
    return jax.jit(f)(*args)


def total(L: Any, y: Any) -> Any:
    return L.reduce_sum(y, tuple(range(np.ndim(y))))


def dot(L: Any, dn: DN, **kw: Any) -> Callable[[Any, Any], Any]:
    return lambda x, y: L.dot_general(x, y, dn, **kw)


# -- jvp / grad ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(CASES))
def test_jvp_matches_jax(name: str) -> None:
    ls, rs, dn = CASES[name]
    x, y, tx, ty = sample(ls), sample(rs), sample(ls), sample(rs)
    out, tan = fcore.jvp(dot(lax, dn), (x, y), (tx, ty))
    jout, jtan = jref(lambda *a: jax.jvp(dot(jlax, dn), a[:2], a[2:]), x, y, tx, ty)
    close(out, jout)
    close(tan, jtan)


@pytest.mark.parametrize("name", list(CASES))
def test_grad_matches_jax(name: str) -> None:
    ls, rs, dn = CASES[name]
    x, y = sample(ls), sample(rs)

    def loss(L: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: total(L, L.sin(dot(L, dn)(a, b)))

    gx, gy = fcore.grad(loss(lax), argnums=(0, 1))(x, y)
    jgx, jgy = jref(jax.grad(loss(jlax), argnums=(0, 1)), x, y)
    close(gx, jgx)
    close(gy, jgy)


@pytest.mark.parametrize("name", list(CASES))
def test_jvp_matches_finite_differences_f64(name: str) -> None:
    ls, rs, dn = CASES[name]
    x, y, tx, ty = (sample(s).astype(np.float64) for s in (ls, rs, ls, rs))
    eps = 1e-6
    with enable_x64():
        f = dot(lax, dn)
        _, tan = fcore.jvp(lambda a, b: lax.sin(f(a, b)), (x, y), (tx, ty))
        fd = (np.sin(np.asarray(f(x + eps * tx, y + eps * ty))) - np.sin(np.asarray(f(x - eps * tx, y - eps * ty))))
        assert np.asarray(tan).dtype == np.float64
    close(tan, fd / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(CASES))
def test_transpose_is_adjoint(name: str) -> None:
    """``<ybar, f(x)> == <f^T ybar, x>`` for the linear maps ``x -> dot(x, y)`` and ``y -> dot(x, y)``."""
    ls, rs, dn = CASES[name]
    x, y = sample(ls).astype(np.float64), sample(rs).astype(np.float64)
    with enable_x64():
        f = dot(lax, dn)
        for lin, arg in ((lambda a: f(a, y), x), (lambda b: f(x, b), y)):
            out, f_vjp = fcore.vjp(lin, arg)
            ybar = RNG.standard_normal(np.shape(out))
            (abar,) = f_vjp(ybar)
            assert np.shape(abar) == np.shape(arg)
            lhs, rhs = float(np.sum(ybar * np.asarray(out))), float(np.sum(np.asarray(abar) * arg))
            assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs))


@pytest.mark.parametrize(
    ("ldt", "rdt", "pref"),
    [(BF16, BF16, np.float32), (np.float32, BF16, None), (BF16, np.float32, np.float32), (np.float32, np.float32, BF16)],
)
def test_grad_dtypes_with_preferred_element_type(ldt: Any, rdt: Any, pref: Any) -> None:
    """Cotangents come back in each operand's dtype (the transpose casts), as in JAX."""
    dn: DN = (((1,), (0,)), ((), ()))
    x, y = sample((3, 4), ldt), sample((4, 2), rdt)

    def loss(L: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: total(L, L.convert_element_type(dot(L, dn, preferred_element_type=pref)(a, b), np.float32))

    gx, gy = fcore.grad(loss(lax), argnums=(0, 1))(x, y)
    jgx, jgy = jref(jax.grad(loss(jlax), argnums=(0, 1)), x, y)
    assert np.asarray(gx).dtype == np.dtype(ldt) and np.asarray(gy).dtype == np.dtype(rdt)
    assert np.asarray(jgx).dtype == np.dtype(ldt) and np.asarray(jgy).dtype == np.dtype(rdt)
    close(gx, jgx, rtol=2e-2, atol=2e-2)
    close(gy, jgy, rtol=2e-2, atol=2e-2)
    close(fcore.jit(fcore.grad(loss(lax), argnums=(0, 1)))(x, y)[0], gx, rtol=2e-2, atol=2e-2)


def test_second_order() -> None:
    ls, rs, dn = CASES["batch_not_leading"]
    x, y = sample(ls), sample(rs)

    def inner(L: Any, g: Any) -> Callable[[Any], Any]:
        return lambda a: total(L, g(lambda b: total(L, L.tanh(dot(L, dn)(b, y))))(a))

    close(fcore.grad(inner(lax, fcore.grad))(x), jref(jax.grad(inner(jlax, jax.grad)), x), rtol=1e-4)


# -- vmap ------------------------------------------------------------------------------------
def batched(shape: tuple[int, ...], axis: int | None, size: int = 3) -> NpArray:
    if axis is None:
        return sample(shape)
    s = list(shape)
    s.insert(axis, size)
    return sample(tuple(s))


IN_AXES: list[tuple[int | None, int | None]] = [(0, None), (None, 0), (0, 0), (1, None), (None, 1), (1, 0), (None, -1)]


@pytest.mark.parametrize("in_axes", IN_AXES)
@pytest.mark.parametrize("name", list(CASES))
def test_vmap_matches_jax(name: str, in_axes: tuple[int | None, int | None]) -> None:
    ls, rs, dn = CASES[name]
    if any(a is not None and a > len(s) for a, s in zip(in_axes, (ls, rs))):
        pytest.skip("batch axis out of range for this rank")
    x = batched(ls, None if in_axes[0] is None else in_axes[0] % (len(ls) + 1))
    y = batched(rs, None if in_axes[1] is None else in_axes[1] % (len(rs) + 1))
    out = fcore.vmap(dot(lax, dn), in_axes=in_axes)(x, y)
    close(out, jref(jax.vmap(dot(jlax, dn), in_axes=in_axes), x, y))
    close(fcore.vmap(dot(lax, dn), in_axes=in_axes, out_axes=-1)(x, y),
          jref(jax.vmap(dot(jlax, dn), in_axes=in_axes, out_axes=-1), x, y))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (1, 0)])
def test_vmap_of_grad_and_grad_of_vmap(in_axes: tuple[int | None, int | None]) -> None:
    ls, rs, dn = CASES["batched"]
    x, y = batched(ls, in_axes[0]), batched(rs, in_axes[1])

    def loss(L: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: total(L, L.sin(dot(L, dn)(a, b)))

    g = fcore.vmap(fcore.grad(loss(lax), argnums=(0, 1)), in_axes=in_axes)(x, y)
    jg = jref(jax.vmap(jax.grad(loss(jlax), argnums=(0, 1)), in_axes=in_axes), x, y)
    close(g[0], jg[0])
    close(g[1], jg[1])

    def batched_loss(L: Any, v: Callable[..., Any]) -> Callable[[Any, Any], Any]:
        return lambda a, b: total(L, v(dot(L, dn), in_axes=in_axes)(a, b))

    g2 = fcore.grad(batched_loss(lax, fcore.vmap), argnums=(0, 1))(x, y)
    jg2 = jref(jax.grad(batched_loss(jlax, jax.vmap), argnums=(0, 1)), x, y)
    close(g2[0], jg2[0])
    close(g2[1], jg2[1])


# -- lowering --------------------------------------------------------------------------------
JIT_DTYPES: list[tuple[Any, Any, Any]] = [
    (np.float32, np.float32, None), (np.int32, np.int32, None), (np.bool_, np.bool_, None), (BF16, BF16, None),
    (BF16, BF16, np.float32), (np.int8, np.int8, np.int32), (np.float32, BF16, None), (np.int32, np.float32, None),
    (np.float32, np.float32, BF16),
]


@pytest.mark.parametrize(("ldt", "rdt", "pref"), JIT_DTYPES, ids=[f"{np.dtype(a).name}-{np.dtype(b).name}-{c}" for a, b, c in JIT_DTYPES])
@pytest.mark.parametrize("name", ["matmul", "batch_not_leading", "outer", "two_batch"])
def test_jit_matches_eager(name: str, ldt: Any, rdt: Any, pref: Any) -> None:
    ls, rs, dn = CASES[name]
    x, y = sample(ls, ldt), sample(rs, rdt)
    f = dot(lax, dn, preferred_element_type=pref)
    out, eager = fcore.jit(f)(x, y), f(x, y)
    assert np.asarray(out).dtype == np.asarray(eager).dtype
    tol = 2e-2 if BF16 in (np.dtype(ldt), np.dtype(rdt), np.dtype(pref or np.float32)) else 1e-5
    close(out, eager, rtol=tol, atol=tol)
    ref = jref(dot(jlax, dn, preferred_element_type=pref), x, y)
    assert np.asarray(ref).dtype == np.asarray(out).dtype
    close(out, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("precision", [None, "highest", lax.Precision.HIGH, ("highest", "default")])
def test_jit_precision(precision: Any) -> None:
    ls, rs, dn = CASES["batched"]
    x, y = sample(ls), sample(rs)
    f = dot(lax, dn, precision=precision)
    close(fcore.jit(f)(x, y), f(x, y))


@pytest.mark.parametrize("name", ["contract_permuted", "two_batch"])
def test_jit_of_grad_and_vmap(name: str) -> None:
    ls, rs, dn = CASES[name]
    x, y = sample(ls), sample(rs)
    def loss(a: Any, b: Any) -> Any:
        return total(lax, lax.sin(dot(lax, dn)(a, b)))

    g, jg = fcore.grad(loss, argnums=(0, 1))(x, y), fcore.jit(fcore.grad(loss, argnums=(0, 1)))(x, y)
    close(g[0], jg[0])
    close(g[1], jg[1])
    xb = batched(ls, 1)
    close(fcore.jit(fcore.vmap(dot(lax, dn), in_axes=(1, None)))(xb, y), fcore.vmap(dot(lax, dn), in_axes=(1, None))(xb, y))


# -- random dimension numbers ------------------------------------------------------------------
@st.composite
def dot_problems(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], DN]:
    """Random batch/contracting/free axes of both operands, in random orders and positions."""
    nb, nc = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    nl, nr = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    sizes = st.integers(1, 3)
    b = [draw(sizes) for _ in range(nb)]
    c = [draw(sizes) for _ in range(nc)]
    lf = [draw(sizes) for _ in range(nl)]
    rf = [draw(sizes) for _ in range(nr)]
    lroles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nl)]
    rroles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nr)]
    lperm, rperm = draw(st.permutations(lroles)), draw(st.permutations(rroles))
    size = {"b": b, "c": c}
    lshape = tuple(size[k][i] if k in size else lf[i] for k, i in lperm)
    rshape = tuple(size[k][i] if k in size else rf[i] for k, i in rperm)
    corder = draw(st.permutations(list(range(nc))))  # contracting pairs in a random order
    border = draw(st.permutations(list(range(nb))))
    lc = tuple(lperm.index(("c", i)) for i in corder)
    rc = tuple(rperm.index(("c", i)) for i in corder)
    lb = tuple(lperm.index(("b", i)) for i in border)
    rb = tuple(rperm.index(("b", i)) for i in border)
    return lshape, rshape, ((lc, rc), (lb, rb))


@settings(max_examples=12, deadline=None)
@given(dot_problems(), st.integers(0, 2**31 - 1), st.data())
def test_random_dimension_numbers(problem: tuple[tuple[int, ...], tuple[int, ...], DN], seed: int, data: st.DataObject) -> None:
    ls, rs, dn = problem
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(ls).astype(np.float32), rng.standard_normal(rs).astype(np.float32)
    tx, ty = rng.standard_normal(ls).astype(np.float32), rng.standard_normal(rs).astype(np.float32)
    out, tan = fcore.jvp(dot(lax, dn), (x, y), (tx, ty))
    jout, jtan = jref(lambda *a: jax.jvp(dot(jlax, dn), a[:2], a[2:]), x, y, tx, ty)
    close(out, jout)
    close(tan, jtan)
    w = rng.standard_normal(np.shape(out)).astype(np.float32)
    def loss(L: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: total(L, L.mul(dot(L, dn)(a, b), w))

    g = fcore.grad(loss(lax), argnums=(0, 1))(x, y)
    jg = jref(jax.grad(loss(jlax), argnums=(0, 1)), x, y)
    close(g[0], jg[0])
    close(g[1], jg[1])
    close(fcore.jit(dot(lax, dn))(x, y), out)
    lbd = data.draw(st.one_of(st.none(), st.integers(0, len(ls))))
    rbd = data.draw(st.integers(0, len(rs))) if lbd is None else data.draw(st.one_of(st.none(), st.integers(0, len(rs))))
    xb = x if lbd is None else np.stack([x, 2 * x, -x], axis=lbd)
    yb = y if rbd is None else np.stack([y, y + 1, 3 * y], axis=rbd)
    close(fcore.vmap(dot(lax, dn), in_axes=(lbd, rbd))(xb, yb),
          jref(jax.vmap(dot(jlax, dn), in_axes=(lbd, rbd)), xb, yb))


# -- an MLP, end to end --------------------------------------------------------------------------
def mlp_params() -> tuple[NpArray, ...]:
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((3, 8)).astype(np.float32) / 2
    b1 = rng.standard_normal((8,)).astype(np.float32) / 4
    w2 = rng.standard_normal((8, 2)).astype(np.float32) / 3
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    return w1, b1, w2, x, y


def fcore_loss(params: tuple[Any, Any, Any], x: Any, y: Any) -> Any:
    w1, b1, w2 = params
    return fnp.mean((fnp.tanh(x @ w1 + b1) @ w2 - y) ** 2)


def jax_loss(params: tuple[Any, Any, Any], x: Any, y: Any) -> Any:
    w1, b1, w2 = params
    return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 - y) ** 2)


def test_mlp_grad_matches_jax() -> None:
    w1, b1, w2, x, y = mlp_params()
    params = (w1, b1, w2)
    g = fcore.grad(fcore_loss)(params, x, y)
    jg = jref(jax.grad(jax_loss), params, x, y)
    for a, b in zip(g, jg):
        close(a, b, rtol=1e-5, atol=1e-6)
    gj = fcore.jit(fcore.grad(fcore_loss))(params, x, y)
    for a, b in zip(gj, jg):
        close(a, b, rtol=1e-5, atol=1e-6)
    value, g2 = fcore.value_and_grad(fcore_loss)(params, x, y)
    close(value, jref(jax_loss, params, x, y), rtol=1e-6)
    for a, b in zip(g2, jg):
        close(a, b, rtol=1e-5, atol=1e-6)


def test_mlp_per_example_grads_match_jax() -> None:
    w1, b1, w2, x, y = mlp_params()
    params = (w1, b1, w2)
    per = fcore.vmap(fcore.grad(fcore_loss), in_axes=(None, 0, 0))(params, x, y)
    jper = jref(jax.vmap(jax.grad(jax_loss), in_axes=(None, 0, 0)), params, x, y)
    for a, b in zip(per, jper):
        assert np.shape(a)[0] == x.shape[0]
        close(a, b, rtol=1e-5, atol=1e-6)
    perj = fcore.jit(fcore.vmap(fcore.grad(fcore_loss), in_axes=(None, 0, 0)))(params, x, y)
    for a, b in zip(perj, jper):
        close(a, b, rtol=1e-5, atol=1e-6)
    # The mean of the per-example gradients is the full-batch gradient.
    full = fcore.grad(fcore_loss)(params, x, y)
    for a, b in zip(per, full):
        close(np.mean(np.asarray(a), axis=0), b, rtol=1e-5, atol=1e-6)

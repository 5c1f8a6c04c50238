"""Control flow (``cond``/``switch``, ``while_loop``/``fori_loop``, ``scan``): differential
checks against JAX for values, derivatives, vectorization and compilation, plus the
jaxpr-level rules (partial evaluation, DCE, printing and parsing) and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import fcore
from fcore import lax, tree_util
from fcore.core import ClosedJaxpr, eval_jaxpr, parse_jaxpr, typecheck
from fcore.lax.control_flow import cond_p, scan_p, while_p
from fcore.transforms import batch_jaxpr, dce_jaxpr, jvp_jaxpr, linearize_jaxpr, partial_eval_jaxpr, vjp_jaxpr

F32 = np.float32
X = F32(0.7)
XS = np.array([0.5, 1.2, -0.3, 2.0], F32)
YS = np.array([[0.1, -0.4, 0.9], [1.3, 0.2, -0.7], [0.6, 0.5, 0.4], [-1.1, 0.8, 0.3]], F32)
PREDS = np.array([True, False, True, False])
INDICES = np.array([0, 2, 1, 7], np.int32)

# Programs are written once against a lax-like module ``L`` (``fcore.lax`` or ``jax.lax``).
Program = Callable[[Any], Callable[..., Any]]


def assert_trees_close(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    g_leaves, g_tree = tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert len(g_leaves) == len(w_leaves), (got, want)
    for g, w in zip(g_leaves, w_leaves):
        g_arr, w_arr = np.asarray(g), np.asarray(w)
        assert g_arr.shape == w_arr.shape, (g_arr.shape, w_arr.shape)
        assert g_arr.dtype == w_arr.dtype, (g_arr.dtype, w_arr.dtype)
        np.testing.assert_allclose(g_arr, w_arr, rtol=rtol, atol=atol)


def check(program: Program, *args: Any) -> None:
    assert_trees_close(program(lax)(*args), program(jlax)(*args))


# -- programs ------------------------------------------------------------------------------
def cond_sin_cos(L: Any) -> Callable[..., Any]:
    return lambda p, x: L.cond(p, L.sin, L.cos, x)


def cond_pytree(L: Any) -> Callable[..., Any]:
    def f(p: Any, x: Any, y: Any) -> Any:
        return L.cond(
            p,
            lambda a: {"s": L.mul(L.sin(a[0]), a[1]), "t": (a[1], L.neg(a[0]))},
            lambda a: {"s": L.cos(L.add(a[0], a[1])), "t": (L.exp(a[1]), a[0])},
            (x, y),
        )

    return f


def cond_closure(L: Any) -> Callable[..., Any]:
    """Branches without operands that close over the (traced) argument."""
    return lambda x: L.cond(L.gt(x, F32(0.5)), lambda: L.mul(L.sin(x), x), lambda: L.mul(x, x))


def cond_int_pred(L: Any) -> Callable[..., Any]:
    return lambda n, x: L.cond(n, lambda v: L.sub(v, F32(1.0)), lambda v: L.tanh(v), x)


def switch3(L: Any) -> Callable[..., Any]:
    return lambda i, x: L.switch(i, [L.sin, L.cos, lambda v: L.mul(v, v)], x)


def while_count(L: Any) -> Callable[..., Any]:
    """Iterate ``x <- 1.5 sin(x)`` ``n`` times; the trip count depends on an argument."""
    return lambda n, x: L.while_loop(
        lambda c: L.lt(c[0], n), lambda c: (L.add(c[0], 1), L.mul(L.sin(c[1]), F32(1.5))), (0, x)
    )


def while_until(L: Any) -> Callable[..., Any]:
    """Halve until below a threshold: the predicate depends on the float carry."""
    return lambda x: L.while_loop(lambda v: L.gt(v, F32(0.1)), lambda v: L.mul(v, F32(0.5)), x)


def while_pytree(L: Any) -> Callable[..., Any]:
    def f(x: Any, w: Any) -> Any:
        def body(c: dict[str, Any]) -> dict[str, Any]:
            return {"i": L.add(c["i"], 1), "acc": (L.add(c["acc"][0], L.mul(w, c["acc"][1])), L.cos(c["acc"][1]))}

        return L.while_loop(lambda c: L.lt(c["i"], 4), body, {"i": 0, "acc": (x, x)})

    return f


def fori_static(L: Any) -> Callable[..., Any]:
    return lambda x: L.fori_loop(0, 5, lambda i, c: L.add(L.mul(L.sin(c), c), L.convert_element_type(i, np.float32)), x)


def fori_dynamic(L: Any) -> Callable[..., Any]:
    return lambda n, x: L.fori_loop(1, n, lambda i, c: L.mul(L.cos(c), L.convert_element_type(i, np.float32)), x)


def scan_cumsum(L: Any) -> Callable[..., Any]:
    return lambda xs: L.scan(lambda c, a: (L.add(c, a), c), F32(0.0), xs)


def scan_cumprod(L: Any) -> Callable[..., Any]:
    return lambda x0, xs: L.scan(lambda c, a: (L.mul(c, a), L.sin(c)), x0, xs)


def scan_rnn(L: Any) -> Callable[..., Any]:
    """An elementwise RNN cell: ``h <- tanh(w h + u x + b)``, emitting ``h`` and ``h^2``."""

    def f(w: Any, u: Any, b: Any, h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h2 = L.tanh(L.add(L.add(L.mul(w, h), L.mul(u, x)), b))
            return h2, (h2, L.mul(h2, h2))

        return L.scan(step, h0, xs)

    return f


def scan_reverse_pytree(L: Any) -> Callable[..., Any]:
    def f(x: Any, ys: Any) -> Any:
        def step(c: Any, a: Any) -> Any:
            s, p = c
            return (L.add(s, a["u"]), L.mul(p, L.cos(a["v"]))), {"gt": L.gt(a["u"], F32(0.0)), "s": s}

        return L.scan(step, (x, x), {"u": ys, "v": L.neg(ys)}, reverse=True)

    return f


def scan_no_xs(L: Any) -> Callable[..., Any]:
    return lambda x: L.scan(lambda c, _: (L.mul(c, F32(1.1)), L.sin(c)), x, None, length=3)


def scan_with_cond(L: Any) -> Callable[..., Any]:
    """A scan whose body branches on the current element."""

    def f(x: Any, xs: Any) -> Any:
        def body(c: Any, a: Any) -> Any:
            c2 = L.cond(L.gt(a, F32(0.0)), lambda v: L.mul(L.sin(v), a), lambda v: L.cos(v), c)
            return c2, L.mul(c2, c)

        return L.scan(body, x, xs)

    return f


# -- values ----------------------------------------------------------------------------------
@pytest.mark.parametrize("pred", [True, False, np.bool_(True), 0, 3])
def test_cond_values(pred: Any) -> None:
    check(cond_sin_cos, pred, X)
    check(cond_sin_cos, pred, XS)
    check(cond_pytree, pred, X, XS)


def test_cond_closure_and_int_pred_values() -> None:
    check(cond_closure, X)
    check(cond_closure, F32(0.2))
    check(cond_int_pred, np.int32(2), XS)
    check(cond_int_pred, np.int32(0), XS)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 9])
def test_switch_values(index: int) -> None:
    check(switch3, index, XS)
    check(switch3, np.int32(index), X)
    assert_trees_close(lax.switch(index, [lax.neg], X), jlax.switch(index, [jnp.negative], X))


def test_while_loop_values() -> None:
    check(while_count, 0, X)
    check(while_count, 4, XS)
    check(while_until, F32(3.0))
    check(while_pytree, X, F32(0.3))


def test_fori_loop_values() -> None:
    check(fori_static, X)
    check(fori_dynamic, 4, XS)
    check(fori_dynamic, 0, XS)
    staged = fcore.make_jaxpr(fori_static(lax))(X)
    assert [e.primitive for e in staged.eqns] == [scan_p]  # concrete bounds: a scan
    dynamic = fcore.make_jaxpr(fori_dynamic(lax))(4, X)
    assert while_p in [e.primitive for e in dynamic.eqns]


def test_scan_values() -> None:
    check(scan_cumsum, XS)
    check(scan_cumprod, F32(1.0), XS)
    check(scan_cumprod, XS[:3], YS)
    check(scan_rnn, XS[:3], F32(0.5), F32(-0.1), XS[1:], YS)
    check(scan_reverse_pytree, XS[:3], YS)
    check(scan_no_xs, X)
    check(scan_with_cond, X, XS)
    empty = np.zeros((0, 3), F32)
    check(scan_cumprod, XS[:3], empty)


def test_staged_primitives_match_jax_names_and_params() -> None:
    j = fcore.make_jaxpr(cond_sin_cos(lax))(True, X)
    names = [e.primitive.name for e in j.eqns]
    assert names == ["convert_element_type", "cond"]
    assert set(j.eqns[1].params) == {"branches"}
    # JAX orders the branches (false, true).
    assert [b.eqns[0].primitive.name for b in j.eqns[1].params["branches"]] == ["cos", "sin"]  # type: ignore[union-attr]
    w = fcore.make_jaxpr(while_count(lax))(3, X)
    assert set(w.eqns[0].params) == {"cond_jaxpr", "body_jaxpr", "cond_nconsts", "body_nconsts"}
    assert w.eqns[0].params["cond_nconsts"] == 1
    s = fcore.make_jaxpr(scan_rnn(lax))(XS[:3], F32(0.5), F32(-0.1), XS[1:], YS)
    (eqn,) = s.eqns
    assert eqn.params["num_consts"] == 3 and eqn.params["num_carry"] == 1 and eqn.params["length"] == 4
    assert eqn.params["reverse"] is False and eqn.params["unroll"] == 1


# -- derivatives -----------------------------------------------------------------------------
def test_grad_through_cond() -> None:
    f: Program = lambda L: (lambda x: L.cond(L.gt(x, F32(0.5)), lambda y: L.mul(L.sin(y), y), L.cos, x))  # noqa: E731
    for x in (X, F32(0.1)):
        assert_trees_close(fcore.grad(f(lax))(x), jax.grad(f(jlax))(x))
        assert_trees_close(fcore.grad(fcore.grad(f(lax)))(x), jax.grad(jax.grad(f(jlax)))(x))
    assert_trees_close(fcore.grad(cond_closure(lax))(X), jax.grad(cond_closure(jlax))(X))
    g: Program = lambda L: (lambda i, x: L.switch(i, [L.sin, L.cos, lambda v: L.mul(v, v)], x))  # noqa: E731
    for i in (0, 1, 2):
        assert_trees_close(fcore.grad(g(lax), 1)(i, X), jax.grad(g(jlax), 1)(i, X))


def test_grad_through_fori_loop_with_static_bounds() -> None:
    assert_trees_close(fcore.grad(fori_static(lax))(X), jax.grad(fori_static(jlax))(X), rtol=1e-5)
    assert_trees_close(
        fcore.grad(fcore.grad(fori_static(lax)))(X), jax.grad(jax.grad(fori_static(jlax)))(X), rtol=1e-5
    )


def test_grad_through_scan() -> None:
    cumprod_last: Program = lambda L: (lambda x0: scan_cumprod(L)(x0, XS)[0])  # noqa: E731
    assert_trees_close(fcore.grad(cumprod_last(lax))(F32(1.3)), jax.grad(cumprod_last(jlax))(F32(1.3)))
    # Gradient with respect to the scanned-over values, through the carry and the ys.
    cts = (F32(1.0), np.array([1.0, -2.0, 0.5, 3.0], F32))
    got = fcore.vjp(lambda xs: scan_cumprod(lax)(F32(1.0), xs), XS)[1](cts)
    want = jax.vjp(lambda xs: scan_cumprod(jlax)(F32(1.0), xs), XS)[1](cts)
    assert_trees_close(got, want)
    cs = (F32(2.0), np.ones(4, F32))
    assert_trees_close(fcore.vjp(scan_cumsum(lax), XS)[1](cs), jax.vjp(scan_cumsum(jlax), XS)[1](cs))


def test_cotangent_of_a_weak_scan_const_is_weak_as_in_jax() -> None:
    """A Python-float ``a`` closed over by the body meets strong values there."""

    def make(L: Any) -> Callable[[Any], Any]:
        return lambda a: L.scan(lambda c, x: (c * x + a, None), 1.0, XS)[0]

    for a in (0.5, F32(0.5)):
        got, want = fcore.grad(make(lax))(a), jax.grad(make(jlax))(a)
        assert_trees_close(got, want)
        assert got.weak_type == want.weak_type
        got = fcore.grad(lambda a: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + a * F32(1), 1.0))(a)
        want = jax.grad(lambda a: jlax.fori_loop(0, 3, lambda i, c: c * 2.0 + a * F32(1), 1.0))(a)
        assert_trees_close(got, want)
        assert got.weak_type == want.weak_type


def test_grad_through_rnn_scan() -> None:
    args = (XS[:3], F32(0.5), F32(-0.1), XS[1:], YS)
    cts = (np.array([1.0, 0.5, -1.0], F32), (np.ones((4, 3), F32), np.full((4, 3), 0.25, F32)))
    got = fcore.vjp(scan_rnn(lax), *args)[1](cts)
    want = jax.vjp(scan_rnn(jlax), *args)[1](cts)
    assert_trees_close(got, want, rtol=1e-5)

    def loss(L: Any) -> Callable[..., Any]:
        return lambda u: scan_rnn(L)(F32(0.8), u, F32(0.1), F32(0.0), XS)[0]

    assert_trees_close(fcore.grad(loss(lax))(F32(0.5)), jax.grad(loss(jlax))(F32(0.5)), rtol=1e-5)


def test_grad_through_scan_with_cond_and_higher_order() -> None:
    f: Program = lambda L: (lambda x: scan_with_cond(L)(x, XS)[0])  # noqa: E731
    assert_trees_close(fcore.grad(f(lax))(F32(0.3)), jax.grad(f(jlax))(F32(0.3)))
    assert_trees_close(fcore.grad(fcore.grad(f(lax)))(F32(0.3)), jax.grad(jax.grad(f(jlax)))(F32(0.3)), rtol=1e-5)
    got = fcore.jvp(fcore.grad(f(lax)), (F32(0.3),), (F32(1.0),))
    want = jax.jvp(jax.grad(f(jlax)), (F32(0.3),), (F32(1.0),))
    assert_trees_close(got, want, rtol=1e-5)


def test_jvp_through_while_loop() -> None:
    for n in (0, 3):
        # (Only the float output: JAX gives the integer counter a float0 tangent.)
        got = fcore.jvp(lambda x: while_count(lax)(n, x)[1], (XS,), (np.ones(4, F32),))
        want = jax.jvp(lambda x: while_count(jlax)(n, x)[1], (XS,), (np.ones(4, F32),))
        assert_trees_close(got, want, rtol=1e-5)
    assert_trees_close(
        fcore.jvp(while_until(lax), (F32(3.0),), (F32(1.0),)), jax.jvp(while_until(jlax), (F32(3.0),), (F32(1.0),))
    )
    tangents = (F32(1.0), F32(-0.5))
    assert_trees_close(
        fcore.jvp(lambda x, w: while_pytree(lax)(x, w)["acc"], (X, F32(0.3)), tangents),
        jax.jvp(lambda x, w: while_pytree(jlax)(x, w)["acc"], (X, F32(0.3)), tangents),
    )
    assert_trees_close(
        fcore.jvp(lambda x: fori_dynamic(lax)(4, x), (X,), (F32(1.0),)),
        jax.jvp(lambda x: fori_dynamic(jlax)(4, x), (X,), (F32(1.0),)),
    )


def test_linearize_through_while_loop() -> None:
    primal, f_jvp = fcore.linearize(lambda x: while_count(lax)(3, x)[1], X)
    want_primal, want_jvp = jax.linearize(lambda x: while_count(jlax)(3, x)[1], X)
    assert_trees_close(primal, want_primal)
    assert_trees_close(f_jvp(F32(2.0)), want_jvp(F32(2.0)), rtol=1e-5)


def test_jvp_through_cond_and_scan() -> None:
    assert_trees_close(
        fcore.jvp(lambda x, y: cond_pytree(lax)(True, x, y), (X, XS), (F32(1.0), np.ones(4, F32))),
        jax.jvp(lambda x, y: cond_pytree(jlax)(True, x, y), (X, XS), (F32(1.0), np.ones(4, F32))),
    )
    args = (XS[:3], F32(0.5), F32(-0.1), XS[1:], YS)
    tangents = (np.ones(3, F32), F32(1.0), F32(0.0), np.zeros(3, F32), np.full((4, 3), 0.5, F32))
    assert_trees_close(fcore.jvp(scan_rnn(lax), args, tangents), jax.jvp(scan_rnn(jlax), args, tangents), rtol=1e-5)


def test_reverse_mode_through_while_loop_is_an_error() -> None:
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        fcore.grad(lambda x: while_count(lax)(3, x)[1])(X)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        fcore.grad(lambda x: fcore.jit(fori_dynamic(lax))(4, x))(X)


def nested_scans(L: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        def outer(c: Any, a: Any) -> Any:
            inner = L.scan(lambda d, b: (L.add(L.mul(d, b), L.sin(c)), d), c, L.mul(np.ones(2, F32), a))
            return inner[0], c

        return L.scan(outer, x, np.array([1.0, -0.5, 2.0], F32))

    return f


def while_with_cond(L: Any) -> Callable[..., Any]:
    return lambda x: L.while_loop(
        lambda c: L.lt(c[0], 3),
        lambda c: (L.add(c[0], 1), L.cond(L.gt(c[1], F32(1.0)), L.sin, lambda v: L.mul(v, F32(2.0)), c[1])),
        (0, x),
    )[1]


def test_nested_control_flow() -> None:
    x, xs = F32(0.4), np.array([0.3, 2.0, -0.6], F32)
    last: Program = lambda L: (lambda v: nested_scans(L)(v)[0])  # noqa: E731
    assert_trees_close(fcore.grad(last(lax))(x), jax.grad(last(jlax))(x), rtol=1e-5)
    assert_trees_close(fcore.grad(fcore.grad(last(lax)))(x), jax.grad(jax.grad(last(jlax)))(x), rtol=1e-5)
    assert_trees_close(fcore.vmap(nested_scans(lax))(xs), jax.vmap(nested_scans(jlax))(xs), rtol=1e-5)
    assert_trees_close(fcore.jit(fcore.vmap(nested_scans(lax)))(xs), jax.vmap(nested_scans(jlax))(xs), rtol=1e-5)
    assert_trees_close(fcore.jit(fcore.grad(last(lax)))(x), jax.grad(last(jlax))(x), rtol=1e-5)
    assert_trees_close(
        fcore.jvp(while_with_cond(lax), (x,), (F32(1.0),)), jax.jvp(while_with_cond(jlax), (x,), (F32(1.0),))
    )
    assert_trees_close(fcore.vmap(while_with_cond(lax))(xs), jax.vmap(while_with_cond(jlax))(xs))
    assert_trees_close(fcore.jit(fcore.vmap(while_with_cond(lax)))(xs), jax.vmap(while_with_cond(jlax))(xs))


def test_pure_passes_on_control_flow() -> None:
    closed = fcore.make_jaxpr(cond_sin_cos(lax))(True, X)
    batched, out_dims = batch_jaxpr(closed, 4, [0, 0])
    assert out_dims == [0]
    assert_trees_close(run(batched, PREDS, XS)[0], jax.vmap(cond_sin_cos(jlax))(PREDS, XS))
    closed = fcore.make_jaxpr(while_with_cond(lax))(X)
    jvp, out_nz = jvp_jaxpr(closed, [True], False)
    assert out_nz == [True]
    assert_trees_close(run(jvp, X, F32(1.0)), list(jax.jvp(while_with_cond(jlax), (X,), (F32(1.0),))))
    closed = fcore.make_jaxpr(scan_cumprod(lax))(F32(1.0), XS)
    batched, out_dims = batch_jaxpr(closed, 3, [None, 1])
    assert out_dims == [0, 1]  # the carry is batched by the xs; the ys are stacked in front of the batch
    assert_trees_close(run(batched, F32(1.0), YS), list(jax.vmap(scan_cumprod(jlax), (None, 1), (0, 1))(F32(1.0), YS)))


# -- vectorization ---------------------------------------------------------------------------
def check_vmap(program: Program, in_axes: Any, *args: Any, rtol: float = 2e-6) -> None:
    assert_trees_close(fcore.vmap(program(lax), in_axes)(*args), jax.vmap(program(jlax), in_axes)(*args), rtol=rtol)


def test_vmap_cond() -> None:
    check_vmap(cond_sin_cos, (0, 0), PREDS, XS)  # batched predicate: select over both branches
    check_vmap(cond_sin_cos, (None, 0), True, XS)  # unbatched predicate: batched branches
    check_vmap(cond_pytree, (0, None, 0), PREDS, X, YS)
    check_vmap(cond_closure, 0, XS)
    check_vmap(switch3, (0, 0), INDICES, XS)
    check_vmap(switch3, (0, None), INDICES, X)
    check_vmap(switch3, (None, 0), 1, XS)


def test_vmap_while_loop() -> None:
    ns = np.array([1, 3, 0, 5], np.int32)
    check_vmap(while_count, (0, 0), ns, XS)  # batched predicate
    check_vmap(while_count, (0, None), ns, X)
    check_vmap(while_count, (None, 0), 3, XS)  # unbatched predicate, batched carry
    check_vmap(while_until, 0, np.array([3.0, 0.05, 1.0, 40.0], F32))
    check_vmap(fori_dynamic, (0, 0), ns, XS)
    check_vmap(while_pytree, (0, None), XS, F32(0.3))


def test_vmap_scan() -> None:
    check_vmap(scan_cumprod, (0, None), XS, XS[:3])  # batched carry
    check_vmap(scan_cumprod, (None, 1), F32(1.0), YS)  # batched xs (on a non-leading axis)
    check_vmap(scan_rnn, (0, None, None, 0, 1), XS[:3], F32(0.5), F32(-0.1), XS[1:], YS)
    check_vmap(scan_reverse_pytree, (0, 1), XS[:3], YS)
    check_vmap(fori_static, 0, XS)
    check_vmap(scan_with_cond, (None, 0), X, YS)


def test_vmap_of_grad() -> None:
    f: Program = lambda L: (lambda x: scan_with_cond(L)(x, XS)[0])  # noqa: E731
    assert_trees_close(fcore.vmap(fcore.grad(f(lax)))(XS), jax.vmap(jax.grad(f(jlax)))(XS), rtol=1e-5)
    assert_trees_close(fcore.vmap(fcore.grad(cond_closure(lax)))(XS), jax.vmap(jax.grad(cond_closure(jlax)))(XS))


# -- compilation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "program,args",
    [
        (cond_sin_cos, (True, XS)),
        (cond_sin_cos, (False, X)),
        (cond_pytree, (True, X, XS)),
        (switch3, (2, XS)),
        (switch3, (-1, XS)),
        (while_count, (3, XS)),
        (while_pytree, (X, F32(0.3))),
        (fori_static, (X,)),
        (fori_dynamic, (4, XS)),
        (scan_rnn, (XS[:3], F32(0.5), F32(-0.1), XS[1:], YS)),
        (scan_reverse_pytree, (XS[:3], YS)),
        (scan_no_xs, (X,)),
        (scan_with_cond, (X, XS)),
        (scan_cumprod, (XS[:3], np.zeros((0, 3), F32))),
    ],
)
def test_jit_matches_eager(program: Program, args: tuple[Any, ...]) -> None:
    eager = program(lax)(*args)
    assert_trees_close(fcore.jit(program(lax))(*args), eager, rtol=1e-5)
    assert_trees_close(eager, program(jlax)(*args), rtol=1e-5)


def test_jit_of_transformed_control_flow() -> None:
    f: Program = lambda L: (lambda x: scan_with_cond(L)(x, XS)[0])  # noqa: E731
    assert_trees_close(fcore.jit(fcore.grad(f(lax)))(X), jax.grad(f(jlax))(X), rtol=1e-5)
    assert_trees_close(fcore.jit(fcore.grad(fori_static(lax)))(X), jax.grad(fori_static(jlax))(X), rtol=1e-5)
    def jvp_while(L: Any, jvp: Any) -> Callable[..., Any]:
        return lambda x, t: jvp(lambda y: while_count(L)(3, y)[1], (x,), (t,))

    assert_trees_close(fcore.jit(jvp_while(lax, fcore.jvp))(X, F32(1.0)), jvp_while(jlax, jax.jvp)(X, F32(1.0)))
    ns = np.array([1, 3, 0, 5], np.int32)
    assert_trees_close(fcore.jit(fcore.vmap(while_count(lax)))(ns, XS), jax.vmap(while_count(jlax))(ns, XS))
    assert_trees_close(fcore.jit(fcore.vmap(cond_sin_cos(lax)))(PREDS, XS), jax.vmap(cond_sin_cos(jlax))(PREDS, XS))


def test_lowering_uses_stablehlo_control_flow() -> None:
    assert '"stablehlo.case"' in fcore.jit(switch3(lax)).trace(1, XS).lower().as_text()
    assert "stablehlo.while" in fcore.jit(while_count(lax)).trace(3, XS).lower().as_text()
    text = fcore.jit(scan_cumprod(lax)).trace(F32(1.0), XS).lower().as_text()
    assert "stablehlo.while" in text and "stablehlo.dynamic_update_slice" in text


# -- the IR: printing, parsing and the jaxpr passes --------------------------------------------
def roundtrip(closed: ClosedJaxpr) -> None:
    typecheck(closed)
    assert parse_jaxpr(str(closed)) == closed.jaxpr


def test_print_parse_roundtrip() -> None:
    roundtrip(fcore.make_jaxpr(cond_pytree(lax))(True, X, XS))
    roundtrip(fcore.make_jaxpr(switch3(lax))(1, XS))
    roundtrip(fcore.make_jaxpr(while_pytree(lax))(X, F32(0.3)))
    roundtrip(fcore.make_jaxpr(fori_dynamic(lax))(4, X))
    roundtrip(fcore.make_jaxpr(scan_reverse_pytree(lax))(XS[:3], YS))
    roundtrip(fcore.make_jaxpr(scan_with_cond(lax))(X, XS))
    roundtrip(fcore.make_jaxpr(fcore.grad(lambda x: scan_with_cond(lax)(x, XS)[0]))(X))
    roundtrip(fcore.make_jaxpr(fcore.vmap(while_count(lax)))(np.array([1, 2], np.int32), XS[:2]))
    roundtrip(fcore.make_jaxpr(fcore.vmap(cond_sin_cos(lax)))(PREDS, XS))


def run(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def test_dce_of_control_flow() -> None:
    f: Callable[..., Any] = lambda x: lax.while_loop(  # noqa: E731
        lambda c: lax.lt(c[0], 5), lambda c: (lax.add(c[0], 1), lax.sin(c[1]), lax.cos(c[2])), (0, x, x)
    )[1]
    closed = fcore.make_jaxpr(f)(X)
    pruned, _ = dce_jaxpr(closed, [True])
    (eqn,) = pruned.eqns
    assert len(eqn.outvars) == 2  # the counter (used by the predicate) and the used carry
    assert_trees_close(run(pruned, X)[0], f(X))
    g: Callable[..., Any] = lambda x: scan_rnn(lax)(F32(0.8), x, F32(0.1), F32(0.0), XS)[1][0]  # noqa: E731
    pruned, _ = dce_jaxpr(fcore.make_jaxpr(g)(F32(0.5)), [True])
    (eqn,) = [e for e in pruned.eqns if e.primitive is scan_p]
    assert len(eqn.outvars) == 2  # the carry (needed by the ys) and one of the two ys
    assert_trees_close(run(pruned, F32(0.5))[0], g(F32(0.5)))
    h: Callable[..., Any] = lambda i, x: lax.switch(  # noqa: E731
        i, [lambda a, b: (lax.sin(a), b), lambda a, b: (lax.cos(a), lax.mul(b, b))], x, x
    )[0]
    pruned, _ = dce_jaxpr(fcore.make_jaxpr(h)(1, X), [True])
    (eqn,) = [e for e in pruned.eqns if e.primitive is cond_p]
    assert len(eqn.invars) == 2 and len(eqn.outvars) == 1
    assert_trees_close(run(pruned, 1, X)[0], h(1, X))

    def k(i: Any, x: Any) -> Any:  # the first operand is computed by an equation that DCE removes
        a, b = lax.exp(x), lax.cos(x)
        return lax.switch(i, [lambda a, b: (lax.sin(a), b), lambda a, b: (lax.cos(a), lax.mul(b, b))], a, b)[1]

    pruned, _ = dce_jaxpr(fcore.make_jaxpr(k)(1, X), [True])
    assert "exp" not in [e.primitive.name for e in pruned.eqns]
    assert_trees_close(run(pruned, 1, X)[0], k(1, X))
    assert_trees_close(run(pruned, 0, X)[0], k(0, X))

    def m(x: Any) -> Any:  # a scan const used only by an unused ys output
        e = lax.exp(x)
        return lax.scan(lambda c, a: (lax.add(c, a), lax.mul(e, a)), lax.sin(x), XS)[0]

    pruned, _ = dce_jaxpr(fcore.make_jaxpr(m)(X), [True])
    assert "exp" not in [e.primitive.name for e in pruned.eqns]
    assert_trees_close(run(pruned, X)[0], m(X))


def test_partial_eval_of_control_flow() -> None:
    def h(i: Any, x: Any) -> Any:
        return lax.switch(i, [lambda a: (lax.sin(a), a), lambda a: (lax.cos(a), lax.mul(a, a))], x)

    closed = fcore.make_jaxpr(h)(1, X)
    for unknowns in ([True, False], [False, True], [True, True]):
        known, unknown, out_uk, num_res = partial_eval_jaxpr(closed, unknowns, False)
        ins = [1, X]
        k_outs = run(known, *[a for a, u in zip(ins, unknowns) if not u])
        n_known = len(k_outs) - num_res
        u_outs = run(unknown, *k_outs[n_known:], *[a for a, u in zip(ins, unknowns) if u])
        k_it, u_it = iter(k_outs[:n_known]), iter(u_outs)
        outs = [next(u_it) if u else next(k_it) for u in out_uk]
        assert_trees_close(outs, h(1, X))
        roundtrip(known)
        roundtrip(unknown)
    # Known carries of a while loop are computed by a loop over the known part of the body.
    w = fcore.make_jaxpr(lambda x, y: while_count(lax)(3, lax.add(x, y)))(X, F32(0.1))
    known, unknown, out_uk, num_res = partial_eval_jaxpr(w, [False, True], False)
    assert out_uk == [False, True]
    assert_trees_close(run(known, X)[0], np.int32(3))


def test_linearize_and_vjp_jaxpr_of_scan() -> None:
    closed = fcore.make_jaxpr(lambda x0, xs: scan_cumprod(lax)(x0, xs))(F32(1.0), XS)
    primal, linear, num_res = linearize_jaxpr(closed)
    outs = run(primal, F32(1.0), XS)
    assert_trees_close(outs[:2], scan_cumprod(jlax)(F32(1.0), XS))
    tangents = run(linear, *outs[2:], F32(1.0), np.ones(4, F32))
    _, want = jax.jvp(lambda a, b: scan_cumprod(jlax)(a, b), (F32(1.0), XS), (F32(1.0), np.ones(4, F32)))
    assert_trees_close(tangents, want, rtol=1e-5)
    primal, backward, num_res = vjp_jaxpr(closed)
    outs = run(primal, F32(1.0), XS)
    cts = (F32(1.0), np.ones(4, F32))
    got = run(backward, *outs[2:], *cts)
    _, pullback = jax.vjp(lambda a, b: scan_cumprod(jlax)(a, b), F32(1.0), XS)
    assert_trees_close(got, list(pullback(cts)), rtol=1e-5)
    roundtrip(backward)


# -- errors ------------------------------------------------------------------------------------
def test_mismatched_branch_outputs() -> None:
    with pytest.raises(TypeError, match=r"true_fun and false_fun output must have identical types.*\n.*false_fun"):
        lax.cond(True, lambda x: x, lambda x: lax.convert_element_type(x, np.int32), X)
    with pytest.raises(TypeError, match="must have same type structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, X)
    with pytest.raises(TypeError, match=r"branch outputs must have identical types(.|\n)*branch 1 output: \(f32\[4\],\)"):
        lax.switch(0, [lambda x: x, lambda x: XS], X)


def test_bad_predicates_and_indices() -> None:
    with pytest.raises(TypeError, match="Pred type must be either boolean or integer"):
        lax.cond(F32(1.0), lax.sin, lax.cos, X)
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(PREDS, lax.sin, lax.cos, X)
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(0.5, [lax.sin, lax.cos], X)
    with pytest.raises(TypeError, match="Branch index must be scalar"):
        lax.switch(INDICES, [lax.sin, lax.cos], X)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], X)


def test_bad_loops() -> None:
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c, X)
    with pytest.raises(TypeError, match="body_fun output and input must have identical types"):
        lax.while_loop(lambda c: lax.lt(c, F32(1.0)), lambda c: lax.convert_element_type(c, np.int32), X)
    with pytest.raises(TypeError, match="same type structure"):
        lax.while_loop(lambda c: lax.lt(c[0], 1), lambda c: c[0], (0, X))
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, a: (c, a), X, (XS, YS[:2]))
    with pytest.raises(ValueError, match="disagrees with leading axis sizes"):
        lax.scan(lambda c, a: (c, a), X, XS, length=3)
    with pytest.raises(ValueError, match="no values to scan over"):
        lax.scan(lambda c, a: (c, a), X, None)
    with pytest.raises(TypeError, match="must be a pair"):
        lax.scan(lambda c, a: c, X, XS)
    with pytest.raises(TypeError, match="carry input and carry output must have identical types"):
        lax.scan(lambda c, a: (XS, a), X, XS)
    with pytest.raises(ValueError, match="Can only use `unroll`"):
        fcore.jit(lambda n, x: lax.fori_loop(0, n, lambda i, c: c, x, unroll=2))(3, X)


def test_weak_typed_carries_are_promoted() -> None:
    # A Python-scalar init meeting a strongly typed body output becomes strongly typed.
    out = lax.while_loop(lambda c: lax.lt(c, F32(5.0)), lambda c: lax.add(c, F32(1.0)), 0.0)
    init: Any = 0.0
    want = jlax.while_loop(lambda c: c < F32(5.0), lambda c: c + F32(1.0), init)
    assert_trees_close(out, want)
    carry, ys = lax.scan(lambda c, a: (lax.add(c, a), c), 0.0, XS)
    assert_trees_close((carry, ys), jlax.scan(lambda c, a: (c + a, c), 0.0, XS))

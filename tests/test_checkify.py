"""fcore.experimental.checkify against jax.experimental.checkify: the same messages from
``Error.get()``, the same exception types and texts, the same outputs.

Each case is written once over a namespace of the library under test (``fcore`` or ``jax``)
and run on both."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify as jck

import fcore
import fcore.numpy as fnp
from fcore import custom_batching
from fcore.experimental import checkify as fck

JAX = SimpleNamespace(lib=jax, np=jnp, ck=jck, lax=jax.lax)
FCORE = SimpleNamespace(lib=fcore, np=fnp, ck=fck, lax=fcore.lax)

Case = Callable[[SimpleNamespace], Any]


def _outcome(case: Case, ns: SimpleNamespace) -> tuple[str | None, Any]:
    """``(err.get(), outputs as NumPy)`` of a case returning ``(err, out)``."""
    err, out = case(ns)
    return err.get(), [np.asarray(x) for x in ns.lib.tree_util.tree_leaves(out)]


def _same(case: Case) -> str | None:
    """Run ``case`` on both libraries; the messages and outputs must agree. Returns the message."""
    ours, theirs = _outcome(case, FCORE), _outcome(case, JAX)
    assert ours[0] == theirs[0]
    assert len(ours[1]) == len(theirs[1])
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        assert a.dtype == b.dtype
    return ours[0]


def _two_checks(ns: SimpleNamespace) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        ns.ck.check(x > 0, "x={x} must be positive", x=x)
        ns.ck.check(x > -5, "second: {} and {}", x, 2 * x)
        return x + 1

    return f


@pytest.mark.parametrize("x", [3.0, -1.0])
def test_user_checks_eager_first_failure_wins(x: float) -> None:
    msg = _same(lambda ns: ns.ck.checkify(_two_checks(ns))(ns.np.float32(x)))
    assert (msg is None) == (x > 0)


def test_user_checks_under_jit_outside_and_inside() -> None:
    assert _same(lambda ns: ns.lib.jit(ns.ck.checkify(_two_checks(ns)))(ns.np.float32(-7.0))) is not None
    assert _same(lambda ns: ns.ck.checkify(ns.lib.jit(_two_checks(ns)))(ns.np.float32(-2.0))) is not None


def test_pytree_format_arguments() -> None:
    def case(ns: SimpleNamespace) -> Any:
        def f(d: Any) -> Any:
            ns.ck.check(d["a"].sum() > 0, "sum of {a} with {b}", a=d["a"], b=d["b"])
            return d["a"] * 2

        return ns.ck.checkify(f)({"a": ns.np.array([1.0, -3.0]), "b": ns.np.arange(3)})

    assert _same(case) == "sum of [ 1. -3.] with [0 1 2] (`check` failed)"


def test_throw_get_exception_and_check_outside_checkify() -> None:
    err, _ = fck.checkify(_two_checks(FCORE))(fnp.float32(-1.0))
    jerr, _ = jck.checkify(_two_checks(JAX))(jnp.float32(-1.0))
    assert type(err.get_exception()).__name__ == type(jerr.get_exception()).__name__ == "FailedCheckError"
    with pytest.raises(jck.JaxRuntimeError) as theirs:
        jerr.throw()  # type: ignore[no-untyped-call]  # jax's method is unannotated
    with pytest.raises(fck.JaxRuntimeError, match="must be positive") as ours:
        err.throw()
    assert isinstance(ours.value, ValueError) and str(ours.value) == str(theirs.value)
    fck.checkify(_two_checks(FCORE))(fnp.float32(1.0))[0].throw()  # nothing failed: no exception
    # Eagerly, an unfunctionalized check raises at once; staged, it cannot compile.
    with pytest.raises(fck.JaxRuntimeError, match=r"x=-1.0 must be positive \(`check` failed\)"):
        _two_checks(FCORE)(fnp.float32(-1.0))
    with pytest.raises(ValueError) as j:
        jax.jit(_two_checks(JAX))(jnp.float32(-1.0))
    with pytest.raises(ValueError) as f:
        fcore.jit(_two_checks(FCORE))(fnp.float32(-1.0))
    assert str(f.value) == str(j.value)


def test_check_argument_errors_match_jax() -> None:
    for ns in (JAX, FCORE):
        with pytest.raises(TypeError, match=r"check takes a scalar pred as argument, got \[ True False\]"):
            ns.ck.check(ns.np.array([True, False]), "m")
        with pytest.raises(TypeError, match="debug_check takes a scalar pred as argument, got True"):
            ns.ck.debug_check(np.bool_(True), "m")
        with pytest.raises(TypeError, match="Formatting arguments to checkify.check need to be PyTrees of arrays"):
            ns.ck.check(True, "m {}", 3)
        with pytest.raises(TypeError, match="check_error takes an Error as argument"):
            ns.ck.check_error(3)


def test_check_error_and_debug_check() -> None:
    def with_check_error(ns: SimpleNamespace) -> Any:
        def g(x: Any) -> Any:
            err, y = ns.ck.checkify(_two_checks(ns))(x)
            ns.ck.check_error(err)
            return y

        return ns.lib.jit(ns.ck.checkify(g))(ns.np.float32(-9.0))

    assert _same(with_check_error) == "x=-9.0 must be positive (`check` failed)"

    def debug(ns: SimpleNamespace) -> Any:
        f = lambda x: (ns.ck.debug_check(x > 0, "dbg {}", x), x)[1]  # noqa: E731
        assert float(ns.lib.jit(f)(ns.np.float32(-1.0))) == -1.0  # a no-op outside checkify
        return ns.ck.checkify(f)(ns.np.float32(-1.0))

    assert _same(debug) == "dbg -1.0 (`check` failed)"


# -- automatic checks -------------------------------------------------------------------------
def _eager_here(ns: SimpleNamespace) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """fcore runs eagerly; jax compiles every eager op on first use, and one ``jit`` per case
    costs it less (the results are the same)."""
    return ns.lib.jit if ns is JAX else lambda f: f


def _automatic(ns: SimpleNamespace) -> dict[str, tuple[Callable[..., Any], Any]]:
    lax = ns.lax
    return {
        "nan": (ns.np.sin, ns.np.float32(np.inf)),
        "int_div": (lambda x: x // x, ns.np.int32(0)),
        "float_div": (lambda x: 1.0 / x, ns.np.float32(0.0)),
        "gather": (lambda i: ns.np.arange(3)[i], ns.np.int32(5)),
        "gather_negative": (lambda i: ns.np.arange(3)[i], ns.np.int32(-5)),
        "scatter": (lambda i: ns.np.arange(3).at[i].set(1), ns.np.int32(5)),
        "scatter_add": (lambda i: ns.np.zeros(3).at[i].add(1.0), ns.np.int32(3)),
        "dynamic_slice": (lambda i: lax.dynamic_slice(ns.np.arange(3), (i,), (2,)), ns.np.int32(5)),
        "dynamic_update_slice": (lambda i: lax.dynamic_update_slice(ns.np.arange(3), ns.np.arange(2), (i,)), ns.np.int32(2)),
        "nothing_fails": (lambda x: ns.np.sin(x) + ns.np.arange(3)[1], ns.np.float32(1.0)),
    }


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_automatic_checks_match_jax() -> None:
    for name in _automatic(FCORE):
        def case(ns: SimpleNamespace, name: str = name) -> Any:
            fun, arg = _automatic(ns)[name]
            return _eager_here(ns)(ns.ck.checkify(fun, errors=ns.ck.automatic_checks))(arg)

        msg = _same(case)
        assert (msg is None) == (name == "nothing_fails"), name


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_error_sets_select_checks() -> None:
    def case(ns: SimpleNamespace, errors: str) -> Any:
        def f(x: Any) -> Any:
            ns.ck.check(x > 1, "user")
            return ns.np.log(x - 1) / 0 + ns.np.arange(2)[3 * x.astype(int)]

        return ns.ck.checkify(f, errors=getattr(ns.ck, errors))(ns.np.float32(0.0))

    sets = ("user_checks", "nan_checks", "div_checks", "index_checks", "all_checks")
    got = {e: _same(functools.partial(case, errors=e)) for e in sets}
    assert got["user_checks"] == got["all_checks"] == "user (`check` failed)"  # the first check wins
    assert got["nan_checks"] == "nan generated by primitive: log."
    assert got["div_checks"] == "division by zero"
    assert got["index_checks"] is None  # index 0 is in bounds
    _same(lambda ns: ns.lib.jit(ns.ck.checkify(ns.np.log, errors=ns.ck.float_checks))(ns.np.float32(-1.0)))


# -- control flow and transformations ----------------------------------------------------------
def _check_small(ns: SimpleNamespace, tag: str) -> Callable[[Any], Any]:
    def f(y: Any) -> Any:
        ns.ck.check(y < 5, tag + " {}", y)
        return y

    return f


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("x", [7.0, -1.0])
def test_cond_and_switch(x: float) -> None:
    def case(ns: SimpleNamespace) -> Any:
        def f(i: Any, y: Any) -> Any:
            a = ns.lax.cond(y > 0, _check_small(ns, "cond"), ns.np.sin, y)
            return ns.lax.switch(i, [lambda v: v, _check_small(ns, "switch"), ns.np.log], a - 3)

        return ns.ck.checkify(f, errors=ns.ck.all_checks)(ns.np.int32(2 if x < 0 else 1), ns.np.float32(x * 2))

    _same(case)


@pytest.mark.parametrize("x", [1.0, 0.5])
def test_while_fori_and_scan(x: float) -> None:
    def case(ns: SimpleNamespace) -> Any:
        def body(c: Any) -> Any:
            i, v = c
            ns.ck.check(v < 10, "while: v={} at {}", v, i)
            return i + 1, v * 2

        def step(c: Any, y: Any) -> Any:
            ns.ck.check(y != 3, "scan: y={y} carry={c}", y=y, c=c)
            return c + y, ns.np.log(y)

        def f(v: Any) -> Any:
            w = ns.lax.while_loop(lambda c: c[0] < 6, body, (0, v))
            r = ns.lax.fori_loop(0, 5, lambda i, u: (ns.ck.check(u < 3, "fori {}", u), u * 3)[1], v)
            s = ns.lax.scan(step, ns.np.float32(0.0), ns.np.array([1.0, 2.0, 3.0, -1.0]) * v)
            return w, r, s

        return ns.lib.jit(ns.ck.checkify(f, errors=ns.ck.all_checks))(ns.np.float32(x))

    assert _same(case) is not None


def test_nested_jit_remat_and_grad_inside_checkify() -> None:
    assert _same(lambda ns: ns.ck.checkify(ns.lib.checkpoint(_two_checks(ns)))(ns.np.float32(-2.0))) is not None

    def grad_case(ns: SimpleNamespace) -> Any:
        def f(x: Any) -> Any:
            ns.ck.check(x > 0, "g {}", x)
            return ns.np.sin(x) * x

        return ns.ck.checkify(ns.lib.grad(f))(ns.np.float32(-1.0))

    assert _same(grad_case) == "g -1.0 (`check` failed)"


def _custom(ns: SimpleNamespace) -> tuple[Any, Any]:
    def body(tag: str) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            ns.ck.check(x > 0, tag + " {}", x)
            return ns.np.sin(x)

        return f

    cj = ns.lib.custom_jvp(body("cj"))
    cj.defjvp(lambda p, t: (ns.np.sin(p[0]), t[0] * 2))
    cv = ns.lib.custom_vjp(body("cv"))
    cv.defvjp(lambda x: (ns.np.sin(x), x), lambda r, g: (g * 3,))
    return cj, cv


def test_custom_derivative_functions() -> None:
    for i in range(2):
        def case(ns: SimpleNamespace, i: int = i) -> Any:
            custom = _custom(ns)[i]

            def fn(x: Any) -> Any:
                ns.ck.check(x < 5, "before {}", x)  # the error entering the call carries x
                return custom(x)

            err, out = ns.ck.checkify(fn)(ns.np.float32(-1.0))
            # The custom rule still differentiates the checkified function (and, as in JAX, its
            # error passes through the rule unchecked).
            (y, grad_err), g = ns.lib.value_and_grad(
                lambda v: (lambda eo: (eo[1], eo[0]))(ns.ck.checkify(fn)(v)), has_aux=True
            )(ns.np.float32(-1.0))
            assert grad_err.get() is None
            return err, (out, g)

        assert _same(case) is not None


def test_vmap_of_checkify_and_checkify_of_vmap() -> None:
    xs = [1.0, -1.0, -6.0]
    assert _same(lambda ns: _eager_here(ns)(ns.lib.vmap(ns.ck.checkify(_two_checks(ns))))(ns.np.array(xs))) == (
        "at mapped index 1: x=-1.0 must be positive (`check` failed)\n"
        "at mapped index 2: x=-6.0 must be positive (`check` failed)"
    )
    assert _same(lambda ns: _eager_here(ns)(ns.ck.checkify(ns.lib.vmap(_two_checks(ns))))(ns.np.array(xs))) is not None

    def oob(ns: SimpleNamespace) -> Any:
        take = ns.ck.checkify(lambda i: ns.np.arange(4)[i], errors=ns.ck.index_checks)
        return _eager_here(ns)(ns.lib.vmap(take))(ns.np.array([0, 7, 2, -9]))

    assert _same(oob) is not None


def test_unsupported_higher_order_primitive_is_refused() -> None:
    @custom_batching.custom_vmap
    def f(x: Any) -> Any:
        fck.check(x > 0, "inside {}", x)
        return x

    f.def_vmap(lambda axis_size, in_batched, x: (x, in_batched[0]))
    with pytest.raises(NotImplementedError, match="custom_vmap_call"):
        fck.checkify(f)(fnp.float32(1.0))


def test_error_is_a_pytree_through_jit() -> None:
    err, _ = fck.checkify(_two_checks(FCORE))(fnp.float32(-1.0))
    jerr, _ = jck.checkify(_two_checks(JAX))(jnp.float32(-1.0))
    again = fcore.jit(lambda e: e)(err)
    assert again.get() == err.get() == "x=-1.0 must be positive (`check` failed)"
    # Per effect a pred, a code and the payload: the two checks' payloads differ in shape.
    assert len(fcore.tree_util.tree_leaves(err)) == len(jax.tree_util.tree_leaves(jerr)) == 7
    assert str(fck.init_error) == "Error(None)"


def _loop_to(ns: SimpleNamespace) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        def body(v: Any) -> Any:
            ns.ck.check(v < 2, "v={} is big", v)
            return v * 2

        return ns.lax.while_loop(lambda v: v < x, body, x / 8)

    return f


def test_batched_while_loops() -> None:
    """vmap of a checkified loop reports each element's own failure (jax 0.10.2 fails inside
    its batching rule here, so the reference is checkify of each element); checkify of a vmapped
    loop whose predicate is batched is refused as in JAX (the body also runs on the elements
    that are done, where a check would fail spuriously)."""
    xs = [1.0, 20.0, 3.0]
    err, out = fcore.vmap(fck.checkify(_loop_to(FCORE)))(fnp.array(xs))
    each = [jck.checkify(_loop_to(JAX))(jnp.float32(x)) for x in xs]
    assert err.get() == "\n".join(f"at mapped index {i}: {e.get()}" for i, (e, _) in enumerate(each) if e.get())
    np.testing.assert_array_equal(out, [o for _, o in each])
    with pytest.raises(ValueError) as theirs:
        jck.checkify(jax.vmap(_loop_to(JAX)))(jnp.array(xs))
    with pytest.raises(ValueError) as ours:
        fck.checkify(fcore.vmap(_loop_to(FCORE)))(fnp.array(xs))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_failed_check_is_reported_before_automatic_checks() -> None:
    """JAX numbers a ``check`` when it traces it and an automatic check when checkify runs, so a
    failed ``check`` wins over an earlier NaN; and a check_error re-raised under an outer
    checkify keeps its place among the checks."""

    def late(ns: SimpleNamespace) -> Any:
        def f(x: Any) -> Any:
            y = ns.np.log(x)
            ns.ck.check(x > -5, "late check {}", x)
            return y

        return ns.ck.checkify(f, errors=ns.ck.all_checks)(ns.np.float32(-7.0))

    def nested(ns: SimpleNamespace) -> Any:
        def f(x: Any) -> Any:
            inner = lambda z: (ns.ck.check(z < 3, "inner {}", z), ns.np.log(z))[1]  # noqa: E731
            err, y = ns.ck.checkify(inner, errors=ns.ck.all_checks)(x)
            ns.ck.check_error(err)
            ns.ck.check(x > -10, "outer {}", x)
            return y

        return ns.ck.checkify(f, errors=ns.ck.all_checks)(ns.np.float32(-20.0))

    assert _same(late) == "late check -7.0 (`check` failed)"
    assert _same(nested) == "outer -20.0 (`check` failed)"

"""custom_jvp / custom_vjp, differentially against jax under every composition.

Each program is written once against a ``Lib`` and run with fcore and with jax; every
composition's result must agree in values, dtypes, weak types and pytree structure, and
where jax raises, fcore must raise an exception of the same builtin class. The rules are
deliberately *not* the true derivatives of the bodies, so a transformation that
differentiated the body instead of applying the rule cannot pass. ``test_custom_jaxprs.py``
checks the staged equations and the jaxpr passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import tree_util as ftu


@dataclass(frozen=True)
class Lib:
    """One library: its numpy and its transformations (``fcore`` or ``jax``)."""

    name: str
    np: Any
    ad: Any


FC = Lib("fcore", fnp, fcore)
JX = Lib("jax", jnp, jax)


def assert_same(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    """Equal pytree structure, and per leaf equal values, dtype, shape and weak type."""
    g_leaves, g_tree = ftu.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree)
    for g, w in zip(g_leaves, w_leaves):
        if not isinstance(w, jax.Array):  # a rule's own Python or NumPy scalar, passed through as is
            assert type(g) is type(w)
        else:
            assert isinstance(g, fcore.Array), f"expected an fcore array, got {type(g).__name__}"
            assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def run_both(make: Callable[[Lib], Callable[..., Any]], *args: Any) -> None:
    """``make(lib)(*args)`` with fcore and jax: equal results, or errors of one builtin class."""
    try:
        want = make(JX)(*args)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        base = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        with pytest.raises(base):
            make(FC)(*args)
        return
    assert_same(make(FC)(*args), want)


def scalar_compositions(L: Lib, f: Callable[[Any], Any]) -> dict[str, Callable[[Any], Any]]:
    """Every way of transforming a scalar -> scalar ``f`` the tests compare."""
    ad, np_ = L.ad, L.np

    def batch(x: Any) -> Any:
        return np_.stack([x, x + 1.0, x - 0.5])

    return {
        "eager": f,
        "jit": ad.jit(f),
        "grad": ad.grad(f),
        "jit(grad)": ad.jit(ad.grad(f)),
        "grad(jit)": ad.grad(ad.jit(f)),
        "grad(grad)": ad.grad(ad.grad(f)),
        "jvp": lambda x: ad.jvp(f, (x,), (x * 0 + 2.0,)),
        "jvp(jit)": lambda x: ad.jvp(ad.jit(f), (x,), (x * 0 + 2.0,)),
        "linearize": lambda x: ad.linearize(f, x)[1](x * 0 + 3.0),
        "vjp": lambda x: ad.vjp(f, x)[1](np_.ones_like(f(x)) * 2.0),
        "jacfwd": ad.jacfwd(f),
        "jacrev": ad.jacrev(f),
        "hessian": ad.hessian(f),
        "vmap": lambda x: ad.vmap(f)(batch(x)),
        "vmap(grad)": lambda x: ad.vmap(ad.grad(f))(batch(x)),
        "grad(vmap)": ad.grad(lambda x: ad.vmap(f)(batch(x)).sum()),
        "jit(vmap(grad))": lambda x: ad.jit(ad.vmap(ad.grad(f)))(batch(x)),
        "grad(jit(vmap))": ad.grad(lambda x: ad.jit(ad.vmap(f))(batch(x)).sum()),
        "vmap(jvp)": lambda x: ad.vmap(lambda y: ad.jvp(f, (y,), (y,)))(batch(x)),
        "jvp(vmap)": lambda x: ad.jvp(ad.vmap(f), (batch(x),), (batch(x),)),
    }


COMPOSITIONS = list(scalar_compositions(FC, lambda x: x))
ARGS = {"python float": 0.7, "np.float32": np.float32(0.7)}


def with_args(programs: Sequence[str]) -> list[tuple[str, str, str]]:
    """Each (program, composition) with one argument kind, alternating: every program and every
    composition meets both a weak Python float and a float32 (not the full cross product)."""
    kinds = list(ARGS)
    return [(p, c, kinds[(i + j) % 2]) for i, p in enumerate(programs) for j, c in enumerate(COMPOSITIONS)]


# -- custom_jvp programs: (Lib) -> scalar function ------------------------------------------
def softplus(L: Lib) -> Callable[[Any], Any]:
    """The brief's example: the body's derivative is nan at large x, the rule's is not."""
    f = L.ad.custom_jvp(lambda x: L.np.log1p(L.np.exp(x)))
    f.defjvp(lambda p, t: (f(p[0]), t[0] * (1 - 1 / (1 + L.np.exp(p[0])))))
    return lambda x: f(x + 100.0) + f(x)


def wrong_rule(L: Lib) -> Any:
    """A rule that is not the body's derivative (sin, with tangent t * x**2)."""
    f = L.ad.custom_jvp(L.np.sin)

    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), t * x * x

    f.defjvp(f_jvp)
    return f


def nested(L: Lib) -> Callable[[Any], Any]:
    """A custom function whose body and rule call another custom function."""
    inner = wrong_rule(L)
    g = L.ad.custom_jvp(lambda x: inner(x) * 2.0)
    g.defjvp(lambda p, t: (g(p[0]), inner(p[0]) * t[0] * 5.0))
    return lambda x: g(L.np.cos(x)) + inner(x)


def nondiff(L: Lib) -> Callable[[Any], Any]:
    """``nondiff_argnums``: a function-valued first argument, passed to the rule first."""

    def body(fn: Callable[[Any], Any], x: Any) -> Any:
        return fn(x) * L.np.sin(x)

    f = L.ad.custom_jvp(body, nondiff_argnums=(0,))

    def f_jvp(fn: Callable[[Any], Any], primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(fn, x), fn(t) * 7.0

    f.defjvp(f_jvp)

    g = L.ad.custom_jvp(body, nondiff_argnames=("fn",))
    g.defjvp(f_jvp)
    return lambda x: f(lambda v: v * 3.0, x) + g(lambda v: v * 2.0, x)


def pytree_io(L: Lib) -> Callable[[Any], Any]:
    """Dict/list arguments and tuple/dict outputs (the rule works on whole trees)."""

    def body(d: Any) -> Any:
        return d["a"] * d["b"][0], {"c": L.np.sin(d["a"])}

    f = L.ad.custom_jvp(body)

    def f_jvp(primals: Any, tangents: Any) -> Any:
        (d,), (t,) = primals, tangents
        return f(d), (t["a"] * 2.0 + t["b"][0], {"c": t["a"] * 4.0})

    f.defjvp(f_jvp)

    def prog(x: Any) -> Any:
        p, q = f({"a": x, "b": [x * x]})
        return p + q["c"]

    return prog


def defjvps(L: Lib) -> Callable[[Any], Any]:
    f = L.ad.custom_jvp(lambda x, y: L.np.sin(x) * y)
    f.defjvps(lambda t, ans, x, y: 9.0 * t * y, lambda t, ans, x, y: L.np.cos(x) * t)
    return lambda x: f(x, x * 3.0)


def keyword_args(L: Lib) -> Callable[[Any], Any]:
    """Keyword arguments and defaults are resolved to positions, as in JAX."""

    def body(x: Any, y: Any = 2.0, *, z: Any = None) -> Any:
        return x * y

    f = L.ad.custom_jvp(body)
    f.defjvp(lambda p, t: (f(*p), t[0] * 11.0 + t[1]))
    return lambda x: f(x, y=x + 1.0) + f(x)


JVP_PROGRAMS = {f.__name__: f for f in (softplus, wrong_rule, nested, nondiff, pytree_io, defjvps)}


def python_branches(L: Lib) -> Any:
    """Python control flow on the argument's value, in the body and the rule."""

    def body(x: Any) -> Any:
        return L.np.sin(x) if x > 0 else -x

    f = L.ad.custom_jvp(body)
    f.defjvp(lambda p, t: (f(p[0]), t[0] * 4.0 if p[0] > 0 else t[0]))
    return f


@pytest.mark.parametrize("composition", ["eager", "grad", "grad(grad)", "jvp", "linearize", "vjp", "jacrev"])
@pytest.mark.parametrize("x", [0.7, -0.7])
def test_custom_jvp_python_control_flow_on_concrete_values(composition: str, x: float) -> None:
    """Outside jit, the rule and the function it calls see concrete values, as in JAX.
    (Not under ``vmap``: fcore stages a batched call's body, so ``jacfwd``/``hessian`` of
    this function raise ConcretizationError where jax's work.)"""
    run_both(lambda L: scalar_compositions(L, python_branches(L))[composition], x)
    with pytest.raises(fcore.ConcretizationError):
        fcore.jit(fcore.grad(python_branches(FC)))(x)


@pytest.mark.parametrize(("program", "composition", "arg"), with_args(list(JVP_PROGRAMS)))
def test_custom_jvp_matches_jax(program: str, composition: str, arg: str) -> None:
    run_both(lambda L: scalar_compositions(L, JVP_PROGRAMS[program](L))[composition], ARGS[arg])


@pytest.mark.parametrize("composition", ["eager", "grad", "jit(grad)", "vmap(grad)", "hessian"])
def test_custom_jvp_keyword_arguments(composition: str) -> None:
    run_both(lambda L: scalar_compositions(L, keyword_args(L))[composition], 0.3)


def test_custom_jvp_keyword_only_argument_is_an_error() -> None:
    def make(L: Lib) -> Any:
        f = L.ad.custom_jvp(lambda x, *, z: x * z)
        f.defjvp(lambda p, t: (f(*p), t[0]))
        return L.ad.grad(lambda x: f(x, z=2.0))

    run_both(make, 0.3)


def test_custom_jvp_rule_replaces_the_body_derivative() -> None:
    """The brief's repros: nan (the body's derivative) without the rule under jit and vmap."""
    f = softplus_fn = fcore.custom_jvp(lambda x: fnp.log1p(fnp.exp(x)))
    softplus_fn.defjvp(lambda p, t: (f(p[0]), t[0] * (1 - 1 / (1 + fnp.exp(p[0])))))
    assert float(fcore.grad(fcore.jit(f))(100.0)) == 1.0
    got = fcore.grad(lambda x: fcore.vmap(f)(x).sum())(fnp.array([100.0, 1.0]))
    np.testing.assert_allclose(np.asarray(got), [1.0, 0.7310586], rtol=1e-6)


# -- closures over tracers of outer transformations ---------------------------------------
def closure_jvp(L: Lib, y: Any) -> Any:
    """A custom function (body and rule) closing over ``y``."""
    f = L.ad.custom_jvp(lambda x: L.np.sin(x) * y)
    f.defjvp(lambda p, t: (f(p[0]), t[0] * y * 10.0))
    return f


# (Strongly typed arguments: fcore's grad keeps a weakly typed input's cotangent strong
# when it meets a strong value, where jax's makes it weak again; not a custom-rule matter.)
HALF = np.float32(0.5)
CLOSURES: dict[str, Callable[[Lib], Callable[[Any], Any]]] = {
    "vmap over the closure": lambda L: lambda ys: L.ad.vmap(lambda y: L.ad.grad(closure_jvp(L, y))(HALF))(ys),
    "jit over the closure": lambda L: lambda ys: L.ad.jit(lambda y: L.ad.grad(closure_jvp(L, y))(HALF))(ys),
    "vmap, staged call": lambda L: lambda ys: L.ad.vmap(lambda y: closure_jvp(L, y)(L.np.cos(y)))(ys),
    "grad(vmap) with a batched closure": lambda L: lambda ys: L.ad.grad(
        lambda x: L.ad.vmap(lambda y: closure_jvp(L, y)(x))(ys).sum())(HALF),
}


@pytest.mark.parametrize("case", list(CLOSURES))
def test_custom_jvp_closures(case: str) -> None:
    run_both(lambda L: CLOSURES[case](L), np.arange(1.0, 4.0, dtype=np.float32))


def test_custom_jvp_rule_closing_over_a_finished_jit_trace_is_an_error() -> None:
    """grad(jit(...)) of a custom function closing over a value staged inside the jit: the
    rule is traced after that trace has finished (jax fails on this too, with a TypeError)."""
    ys = np.arange(1.0, 4.0, dtype=np.float32)
    with pytest.raises(fcore.UnexpectedTracerError):
        fcore.grad(lambda x: fcore.jit(lambda z: closure_jvp(FC, fnp.sum(ys) * 1.0)(z))(x))(2.0)
    with pytest.raises(fcore.UnexpectedTracerError):  # a vmap traced inside the jit: the same
        fcore.grad(lambda x: fcore.jit(fcore.vmap(lambda y: closure_jvp(FC, y)(x)))(ys).sum())(HALF)


def test_custom_jvp_differentiated_closure_is_an_error() -> None:
    """Directly under grad the call goes to the parent trace, where the closed-over tracer is
    foreign (jax raises its UnexpectedTracerError, a TypeError; fcore's is a RuntimeError)."""
    with pytest.raises(fcore.UnexpectedTracerError):
        fcore.grad(lambda y: closure_jvp(FC, y)(1.0))(2.0)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jax.grad(lambda y: closure_jvp(JX, y)(1.0))(2.0)


def test_custom_jvp_differentiated_closure_error_names_the_function() -> None:
    """Under jit (the primitive's rule) the error names the function and says what to do."""

    def outer(y: Any) -> Any:
        f = fcore.custom_jvp(lambda x: x * y)
        f.defjvp(lambda p, t: (f(p[0]), t[0]))
        return fcore.jit(lambda x: f(x) + 0.0 * y)(1.0)

    with pytest.raises(TypeError, match="closed-over value"):
        fcore.grad(fcore.jit(outer))(2.0)


def test_custom_jvp_errors() -> None:
    f = fcore.custom_jvp(fnp.sin)
    with pytest.raises(AttributeError, match="No JVP defined"):
        f(1.0)
    f.defjvp(lambda p, t: (f(p[0]), fnp.ones(3)))
    with pytest.raises(TypeError, match="corresponding shapes and dtypes"):
        fcore.grad(f)(1.0)
    g = fcore.custom_jvp(fnp.sin)
    g.defjvp(lambda p, t: (g(p[0]),))
    with pytest.raises(TypeError, match="must produce a pair"):
        fcore.jvp(g, (1.0,), (1.0,))
    h = fcore.custom_jvp(fnp.sin)
    h.defjvp(lambda p, t: ((fnp.sin(p[0]), 1.0), t[0]))
    with pytest.raises(TypeError, match="equal container"):
        fcore.grad(fcore.jit(h))(1.0)
    with pytest.raises(TypeError, match="nondiff_argnums"):
        fcore.custom_jvp(fnp.sin, nondiff_argnums=(0,)).defjvps(None)


# -- custom_vjp programs --------------------------------------------------------------------
def clipped(L: Lib) -> Callable[[Any], Any]:
    """A bwd that is not the body's derivative (it squashes and scales)."""

    f = L.ad.custom_vjp(lambda x, y: L.np.sin(x) * y)

    def fwd(x: Any, y: Any) -> Any:
        return f(x, y), (L.np.cos(x), L.np.sin(x), y)

    def bwd(res: Any, ct: Any) -> Any:
        cos_x, sin_x, y = res
        return L.np.tanh(cos_x * y * ct) * 3.0, sin_x * ct * 5.0

    f.defvjp(fwd, bwd)
    return lambda x: f(x, x * 2.0) + f(x, 3.0)


def vjp_nondiff(L: Lib) -> Callable[[Any], Any]:
    """``nondiff_argnums`` for custom_vjp: fwd takes every argument, bwd gets the static ones first."""

    def body(fn: Callable[[Any], Any], x: Any) -> Any:
        return fn(L.np.sin(x))

    f = L.ad.custom_vjp(body, nondiff_argnums=(0,))
    f.defvjp(lambda fn, x: (f(fn, x), L.np.cos(x)), lambda fn, res, ct: (fn(res * ct) * 4.0,))
    return lambda x: f(lambda v: v * 3.0, x)


def vjp_pytrees(L: Lib) -> Callable[[Any], Any]:
    """Tree arguments and outputs; ``None`` as the cotangent of a whole argument."""

    def body(d: Any, s: Any) -> Any:
        return {"p": d["a"] * s, "q": (L.np.sin(d["b"]),)}

    f = L.ad.custom_vjp(body)

    def fwd(d: Any, s: Any) -> Any:
        return f(d, s), (d["a"], L.np.cos(d["b"]))

    def bwd(res: Any, ct: Any) -> Any:
        a, cos_b = res
        return {"a": ct["p"] * 6.0, "b": cos_b * ct["q"][0] + a}, None

    f.defvjp(fwd, bwd)

    def prog(x: Any) -> Any:
        out = f({"a": x, "b": x * x}, 2.0)
        return out["p"] + out["q"][0]

    return prog


def vjp_nested(L: Lib) -> Callable[[Any], Any]:
    """A custom_vjp function whose fwd and bwd call a custom_jvp function."""
    inner = wrong_rule(L)
    f = L.ad.custom_vjp(lambda x: inner(x) * 2.0)
    f.defvjp(lambda x: (f(x), inner(x)), lambda r, ct: (r * ct * 3.0 + inner(ct),))
    return lambda x: f(L.np.cos(x)) * inner(x)


VJP_PROGRAMS = {f.__name__: f for f in (clipped, vjp_nondiff, vjp_pytrees, vjp_nested)}


@pytest.mark.parametrize(("program", "composition", "arg"), with_args(list(VJP_PROGRAMS)))
def test_custom_vjp_matches_jax(program: str, composition: str, arg: str) -> None:
    """Forward-mode compositions are a TypeError in both (jvp of custom_vjp is an error)."""
    run_both(lambda L: scalar_compositions(L, VJP_PROGRAMS[program](L))[composition], ARGS[arg])


def closure_vjp(L: Lib, y: Any) -> Any:
    f = L.ad.custom_vjp(lambda x: L.np.sin(x) * y)
    f.defvjp(lambda x: (f(x), L.np.cos(x) * y), lambda r, ct: (r * ct * 10.0,))
    return f


def closure_in_bwd(L: Lib, y: Any) -> Any:
    """The bwd too closes over ``y`` (which may be batched, or gone, by the time it runs)."""
    f = L.ad.custom_vjp(lambda x: L.np.sin(x) * y)
    f.defvjp(lambda x: (f(x), L.np.cos(x)), lambda r, ct: (r * ct * y * 10.0,))
    return f


def explicit_y(L: Lib) -> Any:
    """``closure_in_bwd`` with ``y`` an argument instead (what jax can differentiate under vmap)."""
    f = L.ad.custom_vjp(lambda x, y: L.np.sin(x) * y)
    f.defvjp(lambda x, y: (f(x, y), (L.np.cos(x), y)), lambda r, ct: (r[0] * ct * r[1] * 10.0, None))
    return f


BWD_CLOSURES: dict[str, Callable[[Lib, Callable[[Any, Any], Any]], Callable[[Any], Any]]] = {
    "grad(vmap)": lambda L, f: lambda ys: L.ad.grad(lambda x: L.ad.vmap(lambda y: f(x, y))(ys).sum())(HALF),
    "jacrev(vmap)": lambda L, f: lambda ys: L.ad.jacrev(lambda xs: L.ad.vmap(f)(xs, ys))(ys * 0.5),
}


@pytest.mark.parametrize("case", list(BWD_CLOSURES))
def test_custom_vjp_bwd_closing_over_batched_values(case: str) -> None:
    """The bwd runs after vmap returned, its closure standing for the batched operand (jax
    fails on these with UnexpectedTracerError); compared with jax on ``y`` passed explicitly."""
    ys = np.arange(1.0, 4.0, dtype=np.float32)
    got = BWD_CLOSURES[case](FC, lambda x, y: closure_in_bwd(FC, y)(x))(ys)
    assert_same(got, BWD_CLOSURES[case](JX, explicit_y(JX))(ys))


def test_custom_vjp_bwd_closing_over_a_finished_jit_trace_is_an_error() -> None:
    """A jit inside vmap closed over: the staged body is retraced by the fwd after the jit
    trace finished (jax fails on this too)."""
    ys = np.arange(1.0, 4.0, dtype=np.float32)
    with pytest.raises(fcore.UnexpectedTracerError):
        fcore.grad(lambda x: fcore.vmap(fcore.jit(lambda y: closure_in_bwd(FC, y)(x)))(ys).sum())(HALF)


VJP_CLOSURES: dict[str, Callable[[Lib], Callable[[Any], Any]]] = {
    "bwd closure, vmap(grad)": lambda L: lambda ys: L.ad.vmap(lambda y: L.ad.grad(closure_in_bwd(L, y))(HALF))(ys),
    "vmap over the closure": lambda L: lambda ys: L.ad.vmap(lambda y: L.ad.grad(closure_vjp(L, y))(HALF))(ys),
    "jit over the closure": lambda L: lambda ys: L.ad.jit(lambda y: L.ad.grad(closure_vjp(L, y))(HALF))(ys),
    "grad(vmap) with a batched closure": lambda L: lambda ys: L.ad.grad(
        lambda x: L.ad.vmap(lambda y: closure_vjp(L, y)(x))(ys).sum())(HALF),
    "closure differentiated (an error)": lambda L: lambda ys: L.ad.grad(
        lambda y: L.ad.jit(lambda x: closure_vjp(L, y)(x))(1.0))(2.0),
}


@pytest.mark.parametrize("case", list(VJP_CLOSURES))
def test_custom_vjp_closures(case: str) -> None:
    run_both(lambda L: VJP_CLOSURES[case](L), np.arange(1.0, 4.0, dtype=np.float32))


def test_custom_vjp_batched_bwd_sums_unbatched_cotangents() -> None:
    """grad(vmap(f, in_axes=(0, None))): the bwd is vmapped and y's cotangent summed."""

    def make(L: Lib) -> Any:
        f = clipped_pair(L)
        return L.ad.grad(lambda x, y: L.ad.vmap(f, in_axes=(0, None))(x, y).sum(), argnums=(0, 1))

    run_both(make, np.linspace(-1, 1, 4).astype(np.float32), np.float32(1.5))
    run_both(make, np.linspace(-1, 1, 4).astype(np.float32), 1.5)
    run_both(lambda L: L.ad.jit(make(L)), np.linspace(-1, 1, 4).astype(np.float32), np.float32(1.5))


def clipped_pair(L: Lib) -> Any:
    f = L.ad.custom_vjp(lambda x, y: L.np.sin(x) * y)
    f.defvjp(lambda x, y: (f(x, y), (L.np.cos(x), y)), lambda r, ct: (r[0] * r[1] * ct * 2.0, ct * 3.0))
    return f


def test_custom_vjp_errors() -> None:
    f = fcore.custom_vjp(fnp.sin)
    with pytest.raises(AttributeError, match="No VJP defined"):
        f(1.0)
    f.defvjp(lambda x: (f(x), x), lambda r, ct: (ct, ct))
    with pytest.raises(TypeError, match="same container"):
        fcore.grad(f)(1.0)
    g = fcore.custom_vjp(fnp.sin)
    g.defvjp(lambda x: (g(x), x), lambda r, ct: (fnp.ones(3),))
    with pytest.raises(ValueError, match="same shape"):
        fcore.grad(fcore.jit(g))(1.0)
    h = fcore.custom_vjp(lambda a, x: a * x, nondiff_argnums=(0,))
    h.defvjp(lambda a, x: (h(a, x), None), lambda a, r, ct: (ct,))
    with pytest.raises(fcore.UnexpectedTracerError, match="nondiff_argnums"):
        fcore.grad(lambda x: h(x, 2.0))(1.0)
    with pytest.raises(TypeError, match="forward-mode"):
        fcore.jvp(clipped(FC), (1.0,), (1.0,))


def test_custom_vjp_bwd_returning_a_list_and_none() -> None:
    def make(L: Lib) -> Any:
        f = L.ad.custom_vjp(lambda x, y: x * y)
        f.defvjp(lambda x, y: (f(x, y), y), lambda r, ct: [r * ct * 2.0, None])
        return L.ad.grad(f, argnums=(0, 1))

    run_both(make, 2.0, 3.0)

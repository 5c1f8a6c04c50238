"""Primitives defined outside the package (SPEC §3.5), under every transformation, against jax.

Three user primitives, declared only through the public API (``core.Primitive`` and the
``def_*`` decorators), with rule signatures exactly as SPEC §3.5 gives them:

* ``softplus`` (single result, nonlinear, a parameter ``beta``);
* ``scale`` (single result, linear: has a transpose rule, a parameter ``factor``);
* ``sincos`` (``multiple_results``: two outputs).

Each program that uses them is run eagerly and under ``make_jaxpr``, ``jit``, ``grad``, ``jvp``,
``vjp``, ``vmap``, ``linearize`` and compositions, and compared with jax running the same program
written with ``jax.numpy``. The rules record how they were called, so the tests also check the
calling conventions (lists for primals/tangents, ``UndefinedPrimal`` for linear inputs, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import core
from fcore.backend.lowering import LoweringRuleContext
from fcore.core import ShapedArray, UndefinedPrimal

calls: dict[str, list[tuple[Any, ...]]] = {}


def _record(rule: str, *facts: Any) -> None:
    calls.setdefault(rule, []).append(facts)


# -- softplus: log(1 + exp(beta x)) / beta ------------------------------------------------
softplus_p = core.Primitive("test_user_softplus", param_names=("beta",))


def softplus(x: Any, beta: float = 1.0) -> Any:
    return softplus_p.bind(x, beta=float(beta))


@softplus_p.def_impl
def _softplus_impl(x: np.ndarray[Any, Any], *, beta: float) -> np.ndarray[Any, Any]:
    return (np.logaddexp(0.0, beta * x) / beta).astype(x.dtype)


@softplus_p.def_abstract_eval
def _softplus_abstract_eval(x: ShapedArray, *, beta: float) -> ShapedArray:
    if x.dtype.kind != "f":
        raise TypeError(f"test_user_softplus takes floating-point arrays, got {x.str_short()}")
    return x


@softplus_p.def_jvp
def _softplus_jvp(primals: Any, tangents: Any, *, beta: float) -> tuple[Any, Any]:
    _record("softplus.jvp", type(primals), type(tangents), len(primals), len(tangents))
    (x,), (t,) = primals, tangents
    return softplus(x, beta), t * fcore.lax.logistic(beta * x)


@softplus_p.def_batching
def _softplus_batching(axis_size: int, vals: Any, dims: Any, *, beta: float) -> tuple[Any, Any]:
    _record("softplus.batching", type(axis_size), len(vals), tuple(dims))
    return softplus(vals[0], beta), dims[0]


@softplus_p.def_lowering
def _softplus_lowering(ctx: LoweringRuleContext, x: str, *, beta: float) -> str:
    out = ctx.avals_out[0]
    k = ctx.constant(beta, out.dtype, out.shape)
    bx = ctx.op("stablehlo.multiply", [x, k], out)
    e = ctx.op("stablehlo.exponential", [bx], out)
    lg = ctx.op("stablehlo.log_plus_one", [e], out)
    return ctx.op("stablehlo.divide", [lg, k], out)


# -- scale: factor * x (linear) -----------------------------------------------------------
scale_p = core.Primitive("test_user_scale", param_names=("factor",))


def scale(x: Any, factor: float) -> Any:
    return scale_p.bind(x, factor=float(factor))


scale_p.def_impl(lambda x, *, factor: (x * np.asarray(factor, x.dtype)).astype(x.dtype))
scale_p.def_abstract_eval(lambda x, *, factor: x)


@scale_p.def_jvp
def _scale_jvp(primals: Any, tangents: Any, *, factor: float) -> tuple[Any, Any]:
    return scale(primals[0], factor), scale(tangents[0], factor)


@scale_p.def_transpose
def _scale_transpose(ct: Any, x: Any, *, factor: float) -> list[Any]:
    _record("scale.transpose", type(x), getattr(x, "aval", None), core.is_undefined_primal(x))
    assert isinstance(x, UndefinedPrimal)
    return [scale(ct, factor)]


@scale_p.def_batching
def _scale_batching(axis_size: int, vals: Any, dims: Any, *, factor: float) -> tuple[Any, Any]:
    return scale(vals[0], factor), dims[0]


@scale_p.def_lowering
def _scale_lowering(ctx: LoweringRuleContext, x: str, *, factor: float) -> str:
    out = ctx.avals_out[0]
    return ctx.op("stablehlo.multiply", [x, ctx.constant(factor, out.dtype, out.shape)], out)


# -- sincos: two results ------------------------------------------------------------------
sincos_p = core.Primitive("test_user_sincos", multiple_results=True, param_names=())


def sincos(x: Any) -> Any:
    return sincos_p.bind(x)


sincos_p.def_impl(lambda x: [np.sin(x), np.cos(x)])


@sincos_p.def_abstract_eval
def _sincos_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    return [x, x]


@sincos_p.def_jvp
def _sincos_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    _record("sincos.jvp", type(primals), type(tangents))
    (x,), (t,) = primals, tangents
    s, c = sincos(x)
    return [s, c], [t * c, -t * s]


@sincos_p.def_batching
def _sincos_batching(axis_size: int, vals: Any, dims: Any) -> tuple[Any, Any]:
    _record("sincos.batching", axis_size, tuple(dims))
    return sincos(vals[0]), [dims[0], dims[0]]


@sincos_p.def_lowering
def _sincos_lowering(ctx: LoweringRuleContext, x: str) -> list[str]:
    out = ctx.avals_out[0]
    return [ctx.op("stablehlo.sine", [x], out), ctx.op("stablehlo.cosine", [x], out)]


# -- programs, written once for fcore (user primitives) and once for jax (jnp) -------------
class _F:
    np = fnp
    softplus = staticmethod(softplus)
    scale = staticmethod(scale)
    sincos = staticmethod(sincos)


class _J:
    np = jnp
    softplus = staticmethod(lambda x, beta=1.0: jnp.logaddexp(0.0, beta * x) / beta)
    scale = staticmethod(lambda x, factor: x * factor)
    sincos = staticmethod(lambda x: [jnp.sin(x), jnp.cos(x)])


def prog_softplus(L: Any) -> Callable[[Any], Any]:
    return lambda x: L.np.sum(L.softplus(x * x, 2.0))


def prog_scale(L: Any) -> Callable[[Any], Any]:
    return lambda x: L.np.sum(L.np.sin(L.scale(x, 3.0)) * L.scale(x, -0.5))


def prog_sincos(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        s, c = L.sincos(x)
        return L.np.sum(s * c + L.softplus(c))

    return f


def prog_all(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        s, c = L.sincos(L.scale(x, 0.5))
        return L.np.sum(L.softplus(s, 1.5) * L.scale(c, 2.0))

    return f


PROGRAMS = {f.__name__: f for f in (prog_softplus, prog_scale, prog_sincos, prog_all)}
X = np.array([0.3, -1.2, 0.7], np.float32)
XS = np.stack([X, 2 * X, -X])


def _close(got: Any, want: Any) -> None:
    g, w = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


TRANSFORMS: dict[str, Callable[[Any, Callable[[Any], Any]], Any]] = {
    "eager": lambda m, f: f(X),
    "jit": lambda m, f: m.jit(f)(X),
    "grad": lambda m, f: m.grad(f)(X),
    "jit_grad": lambda m, f: m.jit(m.grad(f))(X),
    "grad_jit": lambda m, f: m.grad(m.jit(f))(X),
    "jvp": lambda m, f: m.jvp(f, (X,), (np.ones_like(X),)),
    "vjp": lambda m, f: m.vjp(f, X)[1](np.float32(1.0)),
    "linearize": lambda m, f: m.linearize(f, X)[1](X),
    "vmap": lambda m, f: m.vmap(f)(XS),
    "vmap_grad": lambda m, f: m.vmap(m.grad(f))(XS),
    "jit_vmap_grad": lambda m, f: m.jit(m.vmap(m.grad(f)))(XS),
    "grad_vmap": lambda m, f: m.grad(lambda xs: m.numpy.sum(m.vmap(f)(xs)))(XS),
    "hessian": lambda m, f: m.hessian(f)(X),
    "jacfwd_of_grad": lambda m, f: m.jacfwd(m.grad(f))(X),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_user_primitives_match_jax(program: str, transform: str) -> None:
    mk, apply = PROGRAMS[program], TRANSFORMS[transform]
    _close(apply(fcore, mk(_F)), apply(jax, mk(_J)))


def test_staged_equations_name_the_user_primitives() -> None:
    closed = fcore.make_jaxpr(prog_all(_F))(X)
    names = [e.primitive.name for e in closed.eqns]
    assert names.count("test_user_scale") == 2 and "test_user_sincos" in names and "test_user_softplus" in names
    sincos_eqn = closed.eqns[names.index("test_user_sincos")]
    assert sincos_eqn.primitive is sincos_p and len(sincos_eqn.outvars) == 2
    assert core.parse_jaxpr(str(closed)) == closed.jaxpr
    core.typecheck(closed)
    # grad's backward pass applies the user transpose rule: scale appears on the cotangents too
    grad_names = [e.primitive.name for e in fcore.make_jaxpr(fcore.grad(prog_scale(_F)))(X).eqns]
    assert grad_names.count("test_user_scale") == 4


def test_rules_are_called_with_spec_signatures() -> None:
    calls.clear()
    fcore.jvp(prog_softplus(_F), (X,), (X,))
    fcore.vmap(prog_softplus(_F))(XS)
    fcore.grad(prog_scale(_F))(X)
    fcore.vmap(prog_sincos(_F))(XS)
    fcore.grad(prog_sincos(_F))(X)
    # jvp: (primals, tangents, **params), both sequences with one entry per operand
    ptype, ttype, np_, nt = calls["softplus.jvp"][0]
    assert issubclass(ptype, (list, tuple)) and issubclass(ttype, (list, tuple)) and (np_, nt) == (1, 1)
    # batching: (axis_size, vals, dims, **params) with an int axis size
    size_type, nvals, dims = calls["softplus.batching"][0]
    assert size_type is int and nvals == 1 and dims == (0,)
    assert calls["sincos.batching"][0] == (3, (0,))
    # transpose: (cts, *invals, **params), linear inputs marked by UndefinedPrimal with their aval
    utype, aval, undefined = calls["scale.transpose"][0]
    assert utype is UndefinedPrimal and undefined and aval == ShapedArray((3,), np.float32)
    assert all(issubclass(p, (list, tuple)) for p, _ in calls["sincos.jvp"])


def test_missing_rules_are_named() -> None:
    bare = core.Primitive("test_user_bare")
    bare.def_abstract_eval(lambda x: x)
    assert "test_user_bare" in str(fcore.make_jaxpr(bare.bind)(X))
    with pytest.raises(NotImplementedError, match="test_user_bare"):
        bare.bind(X)
    with pytest.raises(NotImplementedError, match="test_user_bare"):
        fcore.grad(lambda x: fnp.sum(bare.bind(x)))(X)
    with pytest.raises(NotImplementedError, match="test_user_bare"):
        fcore.vmap(bare.bind)(XS)
    with pytest.raises(Exception, match="test_user_bare"):
        fcore.jit(bare.bind)(X)


def test_an_impl_alone_runs_eagerly_as_in_jax() -> None:
    # jax's "How primitives work" tutorial binds a primitive with only def_impl, on Python floats.
    ours, theirs = core.Primitive("test_user_impl_only"), jax.extend.core.Primitive("test_user_impl_only")
    ours.def_impl(lambda x, y: np.add(np.multiply(x, y), y))
    theirs.def_impl(lambda x, y: np.add(np.multiply(x, y), y))  # type: ignore[no-untyped-call]
    assert float(ours.bind(2.0, 10.0)) == float(theirs.bind(2.0, 10.0)) == 30.0  # type: ignore[no-untyped-call]


def test_def_rules_return_the_rule_for_decorator_use() -> None:
    p = core.Primitive("test_user_decorators")

    def rule(*args: Any, **params: Any) -> Any:
        return args

    for register in (p.def_impl, p.def_abstract_eval, p.def_jvp, p.def_transpose, p.def_batching, p.def_lowering):
        assert register(rule) is rule
    assert p.name == "test_user_decorators" and p.multiple_results is False

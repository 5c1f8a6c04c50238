"""The per-operation fast paths of eager ``grad`` (issue 21) keep its semantics: values, dtypes
and weak types as jax's, and the source info of every equation that something can still read
(``vjp``'s and ``linearize``'s staged linear maps, which eager ``grad`` does not keep)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import fcore
import fcore.numpy as fnp
from fcore.transforms.jvp import _self_contained, _tangent_halves, defjvp, jvp_rules


def program(np_mod: Any, x: Any) -> Any:
    """Unary, binary with a weak constant, binary with a broadcast operand, and an integer."""
    v = np_mod.ones((3,), np.float32)
    y = np_mod.sin(x) * 0.9 + 0.1
    z = -np_mod.cos(y) * (v + 2) + y
    k = np_mod.arange(3) * 2  # integer work inside the differentiated function
    return (z * k.astype(np.float32)).sum()


def test_eager_grad_matches_jax_values_dtypes_and_weak_types() -> None:
    for x in (np.float32(0.3), 0.3):
        ours = fcore.grad(lambda a: program(fnp, a))(x)
        theirs = jax.grad(lambda a: program(jnp, a))(x)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
        assert ours.dtype == theirs.dtype
        assert ours.aval.weak_type == theirs.aval.weak_type


def _lines(closed: fcore.core.ClosedJaxpr) -> set[int]:
    lines = set()
    for e in closed.eqns:
        assert e.source_info is not None and e.source_info.frame is not None, e
        lines.add(e.source_info.frame.start_line)
    return lines


def chain(x: Any) -> Any:
    y = fnp.sin(x)  # line A
    return y * 0.5  # line B


def test_eager_linearize_and_vjp_keep_the_users_lines() -> None:
    """Their linear maps outlive the call, so their equations carry the lines that bound them."""
    first = chain.__code__.co_firstlineno
    want = {first + 1, first + 2}
    _, f_jvp = fcore.linearize(chain, np.float32(0.3))
    assert _lines(fcore.make_jaxpr(f_jvp)(np.float32(1.0))) <= want
    _, f_vjp = fcore.vjp(chain, np.float32(0.3))
    assert _lines(fcore.make_jaxpr(f_vjp)(np.float32(1.0))) <= want
    # Under staging, grad's equations carry them too.
    assert _lines(fcore.make_jaxpr(fcore.grad(chain))(np.float32(0.3))) <= want


def test_only_fcore_own_def_rules_share_the_binds_source_info() -> None:
    """A jvp rule registered through the table, or built by ``defjvp`` from a user's tangent
    function, may run code of its own: its staged equations find their own lines."""
    from fcore.lax.elementwise import sin_p

    assert sin_p in _self_contained
    rule, half = jvp_rules[sin_p], _tangent_halves[sin_p]
    try:
        jvp_rules.register(sin_p, symbolic_zeros=True)(rule)
        assert sin_p not in _self_contained
        defjvp(sin_p, lambda t, x: t * fnp.cos(x))  # this module's lambda, not fcore's
        assert sin_p not in _self_contained
        _, f_jvp = fcore.linearize(chain, np.float32(0.3))
        assert len(fcore.make_jaxpr(f_jvp)(np.float32(1.0)).eqns) == 2
    finally:
        jvp_rules.register(sin_p, symbolic_zeros=True)(rule)
        _self_contained.add(sin_p)
        _tangent_halves[sin_p] = half


def test_a_rule_registered_over_a_def_rule_is_the_one_applied() -> None:
    """``JVPTrace`` applies a ``def*`` rule in its two halves itself (the primal bound directly,
    then the tangent half); registering another rule for the primitive drops the halves, so
    eager ``grad`` and ``jvp`` apply the registered rule."""
    from fcore.lax.elementwise import sin_p

    rule, half = jvp_rules[sin_p], _tangent_halves[sin_p]

    def doubled(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
        out, t = rule(primals, tangents, **params)
        return out, t * 2.0

    x = np.float32(0.3)
    try:
        jvp_rules.register(sin_p, symbolic_zeros=True)(doubled)
        assert sin_p not in _tangent_halves
        np.testing.assert_allclose(np.asarray(fcore.grad(fnp.sin)(x)), 2 * np.cos(x), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(fcore.jvp(fnp.sin, (x,), (np.float32(1.0),))[1]), 2 * np.cos(x), rtol=1e-6)
    finally:
        jvp_rules.register(sin_p, symbolic_zeros=True)(rule)
        _self_contained.add(sin_p)
        _tangent_halves[sin_p] = half
    np.testing.assert_allclose(np.asarray(fcore.grad(fnp.sin)(x)), np.cos(x), rtol=1e-6)


def _fan_out(np_mod: Any, x: Any) -> Any:
    return np_mod.sin(x) * x + x  # x feeds three equations: cotangents accumulate


def _with_a_reduction(np_mod: Any, x: Any) -> Any:
    y = np_mod.cos(x) * 2.0  # on the tape, then ``sum`` (a parameter) writes it out as equations
    return (y * np_mod.sin(y)).sum() * 0.5


TAPE_PROGRAMS = {
    "chain": lambda m, x: -m.cos(m.sin(x) * 0.9 + 0.1),
    "fan_out": _fan_out,
    "identity": lambda m, x: x,
    "constant": lambda m, x: m.float32(3.0),
    "reduction": _with_a_reduction,
}


def test_eager_grad_on_the_tape_and_written_out_matches_jax() -> None:
    """Eager ``grad`` records its linear map on a tape while it has only parameterless
    operations, and writes the tape out as equations at the first other one: both agree with
    jax (values, dtypes, weak types), for strong and weak (Python) inputs."""
    for name, prog in TAPE_PROGRAMS.items():
        for x in (np.float32(0.3), 0.3, np.linspace(0, 1, 3, dtype=np.float32)):
            if name != "reduction" and np.ndim(x):
                continue
            ours = fcore.grad(lambda a: prog(fnp, a))(x)
            theirs = jax.grad(lambda a: prog(jnp, a))(x)
            np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, err_msg=name)
            assert ours.dtype == theirs.dtype, name
            assert ours.aval.weak_type == theirs.aval.weak_type, name


def test_two_inputs_one_unused_get_their_cotangents() -> None:
    f = lambda a, b, c: fnp.sin(a) * b  # noqa: E731 - c never used: a zero cotangent
    g = lambda a, b, c: jnp.sin(a) * b  # noqa: E731
    args = (np.float32(0.3), np.float32(2.0), np.float32(5.0))
    ours = fcore.grad(f, argnums=(0, 1, 2))(*args)
    theirs = jax.grad(g, argnums=(0, 1, 2))(*args)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)
        assert o.dtype == t.dtype


def test_the_transient_map_is_a_tape_until_something_else_is_staged() -> None:
    from fcore.ir.core import ClosedJaxpr, Jaxpr
    from fcore.ir.typecheck import typecheck
    from fcore.transforms.autodiff import Tape, linearize_flat

    x = np.float32(0.3)
    lin = linearize_flat(lambda a: [TAPE_PROGRAMS["chain"](fnp, a)], [x], "t", transient=True)
    assert type(lin.linear) is Tape and len(lin.linear.entries) >= 3 and lin.residuals == []
    lin = linearize_flat(lambda a: [_with_a_reduction(fnp, a)], [x], "t", transient=True)
    assert type(lin.linear) is Jaxpr  # written out: the tape's equations, then the rest
    typecheck(ClosedJaxpr(lin.linear, tuple(lin.residuals)))
    names = [e.primitive.name for e in lin.linear.eqns]
    assert names[0] == "mul" and "reduce_sum" in names  # ``cos(x) * 2.0``'s tangent first
    kept = linearize_flat(lambda a: [TAPE_PROGRAMS["chain"](fnp, a)], [x], "t")  # not transient
    assert type(kept.linear) is Jaxpr

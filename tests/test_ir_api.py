"""The IR's public surface (SPEC §3.5): field names, ``replace``, frozenness, hashing,
structural equality, ``typecheck`` and its rejections, evaluation and printing helpers.

Field names are checked against jax's own classes where jax has the same ones.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore import core, lax
from fcore.core import ClosedJaxpr, Jaxpr, JaxprEqn, JaxprType, Literal, Params, ShapedArray, Var, typecheck
from fcore.errors import JaxprParseError, JaxprTypeError
from fcore.lax.elementwise import add_p, sin_p

F3 = ShapedArray((3,), np.float32)
X3 = np.arange(3, dtype=np.float32)
C3 = np.array([1.0, -2.0, 0.5], np.float32)  # closed over: a constvar


def _program(x: Any, p: Any) -> Any:
    y = lax.cond(p, lambda v: fnp.sin(v) + 1.0, lambda v: v * 2.0, x)
    return fnp.sum(y * x + C3) * 2.0


def _closed() -> ClosedJaxpr:
    return fcore.make_jaxpr(_program)(X3, True)


def test_field_names_follow_jax() -> None:
    ours, theirs = _closed(), jax.make_jaxpr(lambda x: x * 2.0 + 1.0)(X3)
    for obj, ref, fields in [
        (ours, theirs, ("jaxpr", "consts", "in_avals", "out_avals")),
        (ours.jaxpr, theirs.jaxpr, ("constvars", "invars", "outvars", "eqns")),
        (ours.eqns[0], theirs.eqns[0], ("primitive", "invars", "outvars", "params")),
        (ours.jaxpr.invars[0], theirs.jaxpr.invars[0], ("aval",)),
        (ours.eqns[0].primitive, theirs.eqns[0].primitive, ("name", "multiple_results")),
    ]:
        for field in fields:
            assert hasattr(ref, field), field  # the name is jax's
            getattr(obj, field)
    lit = next(a for e in ours.eqns for a in e.invars if isinstance(a, Literal))
    assert isinstance(lit.val, np.generic) and isinstance(lit.aval, ShapedArray)
    assert ours.in_avals == [F3, ShapedArray((), np.bool_)] and ours.out_avals == [ShapedArray((), np.float32)]


def _ir_values() -> list[Any]:
    closed = _closed()
    eqn = closed.eqns[0]
    lit = Literal.of(2.0, ShapedArray((), np.float32, True))
    return [F3, closed.jaxpr.invars[0], lit, eqn, closed.jaxpr, closed, typecheck(closed)]


@pytest.mark.parametrize("value", _ir_values(), ids=lambda v: type(v).__name__)
def test_every_ir_value_is_frozen_hashable_and_has_replace(value: Any) -> None:
    hash(value)
    field = attrs.fields(type(value))[0].name
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(value, field, getattr(value, field))
    same = value.replace()
    assert same is not value
    if isinstance(value, Var):  # variables have identity: a copy is another variable
        assert same != value and same.aval == value.aval
    else:
        assert same == value and hash(same) == hash(value)


def test_replace_changes_one_field() -> None:
    closed = _closed()
    eqn = closed.eqns[0]
    assert F3.replace(weak_type=True) == ShapedArray((3,), np.float32, True)
    assert closed.jaxpr.invars[0].replace(aval=F3.replace(shape=(4,))).aval.shape == (4,)
    assert Literal.of(1.0, ShapedArray((), np.float32)).replace(val=np.float32(3)).val == 3
    assert eqn.replace(params={"x": 1}).params == Params({"x": 1})  # dicts become Params
    assert closed.jaxpr.replace(eqns=list(closed.eqns)).eqns == closed.eqns  # lists become tuples
    assert closed.replace(consts=list(closed.consts)).consts == closed.consts
    assert typecheck(closed).replace(out_avals=()).out_avals == ()


def test_sequences_are_stored_as_tuples() -> None:
    a, b = Var(F3), Var(F3)
    j = Jaxpr([], [a], [b], [JaxprEqn(sin_p, (a,), (b,), Params())])
    assert all(type(f) is tuple for f in (j.constvars, j.invars, j.outvars, j.eqns))
    assert type(ClosedJaxpr(j, []).consts) is tuple
    hash(j)


def test_closed_jaxpr_literals_and_private_util_helpers_as_jax() -> None:
    """``ClosedJaxpr.literals`` and ``jax._src.util.safe_map``: the custom-interpreter tutorial uses both."""
    from jax._src import util as jutil

    from fcore._src import util

    c = np.arange(3.0, dtype=np.float32)
    closed = fcore.make_jaxpr(lambda x: x + c)(c)
    jclosed = jax.make_jaxpr(lambda x: x + c)(c)
    assert len(closed.literals) == len(jclosed.literals) == 1 and closed.literals is closed.consts
    assert util.safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == jutil.safe_map(lambda a, b: a + b, [1, 2], (3, 4))
    assert util.safe_zip([1], [2]) == jutil.safe_zip([1], [2]) and util.unzip2([(1, 2)]) == jutil.unzip2([(1, 2)])
    for ours, theirs, args in ((util.safe_map, jutil.safe_map, (print, [1, 2], [1])),
                               (util.safe_zip, jutil.safe_zip, ([1, 2], [1]))):
        with pytest.raises(ValueError) as want:
            theirs(*args)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            ours(*args)


def test_literal_of_a_python_scalar_is_stored_in_its_dtype() -> None:
    aval = ShapedArray((), np.float32)
    lit = Literal(1.5, aval)  # type: ignore[arg-type]  # jax accepts Python scalars too
    assert type(lit.val) is np.float32 and lit == Literal.of(1.5, aval) and hash(lit) == hash(Literal.of(1.5, aval))
    assert str(lit) == "1.5:f32[]"


def _renamed_copy(j: Jaxpr) -> Jaxpr:
    """The same program with fresh variables: alpha-equivalent to ``j``."""
    fresh: dict[int, Var] = {}

    def new(v: Var) -> Var:
        fresh[id(v)] = Var(v.aval)
        return fresh[id(v)]

    def use(a: Any) -> Any:
        return fresh[id(a)] if isinstance(a, Var) else Literal.of(a.val, a.aval)

    constvars = [new(v) for v in j.constvars]
    invars = [new(v) for v in j.invars]
    eqns = []
    for e in j.eqns:
        ins = [use(a) for a in e.invars]
        eqns.append(JaxprEqn(e.primitive, tuple(ins), tuple(new(v) for v in e.outvars), e.params))
    return Jaxpr(constvars, invars, [use(a) for a in j.outvars], eqns)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["sin", "cos", "add", "mul", "neg"]), min_size=1, max_size=8), st.booleans())
def test_alpha_equivalent_jaxprs_are_equal_and_hash_equal(ops: list[str], swap: bool) -> None:
    def f(x: Any, y: Any) -> Any:
        for op in ops:
            x = getattr(lax, op)(x, y) if op in ("add", "mul") else getattr(lax, op)(x)
            x, y = (y, x) if swap else (x, y)
        return x, y

    j = fcore.make_jaxpr(f)(X3, X3).jaxpr
    copy = _renamed_copy(j)
    assert copy == j and hash(copy) == hash(j) and copy.fingerprint() == j.fingerprint()
    changed = copy.replace(outvars=copy.outvars[::-1])
    assert (changed == j) == (j.outvars[0] is j.outvars[1])


# -- typecheck --------------------------------------------------------------------------------
def test_typecheck_returns_a_jaxpr_type() -> None:
    t = typecheck(_closed())
    assert isinstance(t, JaxprType)
    assert str(t) == "(f32[3], bool[]) -> (f32[],)"
    assert typecheck(_closed().jaxpr) == t
    b = core.JaxprBuilder()
    x, i = b.invar(F3), b.invar(ShapedArray((), np.int32))
    assert str(typecheck(b.build([x, i]))) == "(f32[3], i32[]) -> (f32[3], i32[])"


def _bad(mutate: str) -> Jaxpr:
    """``_closed().jaxpr`` broken one way."""
    j = _closed().jaxpr
    eqns = list(j.eqns)
    k = next(i for i, e in enumerate(eqns) if e.primitive.name == "reduce_sum")
    e = eqns[k]
    if mutate == "unbound":
        eqns[k] = e.replace(invars=(Var(e.invars[0].aval),))
    elif mutate == "bound_twice":
        eqns[k + 1] = eqns[k + 1].replace(outvars=e.outvars)
    elif mutate == "binder_aval":
        eqns[k] = e.replace(outvars=(Var(ShapedArray((), np.int32)),))
    elif mutate == "arity":
        eqns[k] = e.replace(invars=e.invars * 2)
    elif mutate == "unknown_param":
        eqns[k] = e.replace(params=e.params.replace(bogus=1))
    elif mutate == "missing_param":
        eqns[k] = e.replace(params={})
    elif mutate == "nested":
        c = next(i for i, q in enumerate(eqns) if q.primitive.name == "cond")
        branches = eqns[c].params["branches"]
        assert isinstance(branches, tuple) and isinstance(branches[0], ClosedJaxpr)
        broken = branches[0].replace(jaxpr=branches[0].jaxpr.replace(outvars=(Var(F3),)))
        eqns[c] = eqns[c].replace(params=eqns[c].params.replace(branches=(broken, branches[1])))
    elif mutate == "params_not_params":
        eqns[k] = JaxprEqn(e.primitive, e.invars, e.outvars, dict(e.params))  # type: ignore[arg-type]
    return j.replace(eqns=eqns)


@pytest.mark.parametrize(
    ("mutate", "reason", "eqn"),
    [
        ("unbound", "not bound", "reduce_sum"),
        ("bound_twice", "bound twice", "mul"),
        ("binder_aval", r"produces f32\[\] but the binder is typed i32\[\]", "reduce_sum"),
        ("arity", "reduce_sum", "reduce_sum"),
        ("unknown_param", r"does not accept params \['bogus'\]", "reduce_sum"),
        ("missing_param", r"missing params \['axes'\]", "reduce_sum"),
        ("nested", "not bound", "cond"),
        ("params_not_params", "not Params", "reduce_sum"),
    ],
)
def test_typecheck_rejects_with_the_equation_named(mutate: str, reason: str, eqn: str) -> None:
    with pytest.raises(JaxprTypeError, match=reason) as info:
        typecheck(_bad(mutate))
    named = re.match(r"in equation \d+ `([^`\n]*)`: ", str(info.value))  # the equation, on one line
    assert named is not None and f"= {eqn}" in named.group(1), str(info.value)


def test_typecheck_checks_consts() -> None:
    closed = _closed()
    assert len(closed.consts) == 1
    with pytest.raises(JaxprTypeError, match="1 constvars but 0 consts"):
        typecheck(closed.replace(consts=()))
    with pytest.raises(JaxprTypeError, match="dtype int32"):
        typecheck(closed.replace(consts=(np.zeros(3, np.int32),)))


# -- evaluation, printing, parsing ------------------------------------------------------------
def test_eval_jaxpr_and_jaxpr_as_fun() -> None:
    closed = _closed()
    want = float(_program(X3, True))
    (got,) = core.eval_jaxpr(closed.jaxpr, closed.consts, X3, True)
    assert float(got) == pytest.approx(want)
    assert float(core.jaxpr_as_fun(closed)(X3, True)[0]) == pytest.approx(want)
    with pytest.raises(TypeError, match="takes 1 consts and 2 args"):
        core.eval_jaxpr(closed.jaxpr, closed.consts, X3)
    # eval_jaxpr binds, so it composes with transformations
    g = fcore.grad(lambda x: core.jaxpr_as_fun(closed)(x, True)[0])(X3)
    np.testing.assert_allclose(g, fcore.grad(lambda x: _program(x, True))(X3), rtol=1e-6)


def test_pretty_print_and_parse() -> None:
    closed = _closed()
    assert core.pretty_print(closed) == str(closed) == str(closed.jaxpr) == core.pretty_print(closed.jaxpr)
    assert core.parse_jaxpr(str(closed)) == closed.jaxpr
    assert str(core.parse_jaxpr(str(closed))) == str(closed)
    with pytest.raises(JaxprParseError, match=r"line 2, column \d+: .*'q'") as info:
        core.parse_jaxpr("{ lambda ; a:f32[]. let\n    b:f32[] = sin q\n  in (b,) }")
    assert isinstance(info.value, ValueError)


def test_unused_results_print_as_underscore_and_parse_back() -> None:
    a = Var(F3)
    used, unused = Var(F3), Var(F3)
    j = Jaxpr((), (a,), (used,), (JaxprEqn(sin_p, (a,), (unused,), Params()), JaxprEqn(add_p, (a, a), (used,), Params())))
    text = str(j)
    assert text == "{ lambda ; a:f32[3]. let _:f32[3] = sin a; b:f32[3] = add a a in (b,) }"
    assert core.parse_jaxpr(text) == j
    twice = core.parse_jaxpr("{ lambda ; a:f32[]. let _:f32[] = sin a; _:f32[] = cos a in (a,) }")
    assert len(twice.eqns) == 2 and twice.eqns[0].outvars[0] is not twice.eqns[1].outvars[0]
    with pytest.raises(JaxprParseError, match="'_' used before it is bound"):
        core.parse_jaxpr("{ lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos _ in (b,) }")


def test_undefined_primal_is_public() -> None:
    u = core.UndefinedPrimal(F3)
    assert u.aval == F3 and core.is_undefined_primal(u) and not core.is_undefined_primal(X3)

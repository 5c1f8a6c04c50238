"""The IR: frozen values, structural equality, printing, typecheck errors."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Var, typecheck
from fcore.errors import JaxprTypeError
from fcore.ir import dtypes
from fcore.ir.params import Params
from fcore.lax.elementwise import add_p, integer_pow_p, sin_p

F32 = ShapedArray((3,), dtypes.float32)


def _sin_jaxpr() -> Jaxpr:
    a = Var(F32)
    b = Var(F32)
    return Jaxpr((), (a,), (b,), (JaxprEqn(sin_p, (a,), (b,), Params()),))


def test_ir_values_are_frozen() -> None:
    j = _sin_jaxpr()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        j.eqns = ()  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        j.eqns[0].primitive = add_p  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        F32.shape = (4,)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Params({"y": 2}).x = 1


def test_print_matches_jax_format() -> None:
    assert str(_sin_jaxpr()) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
    x = np.ones(3, np.float32)
    closed = fcore.make_jaxpr(lambda a, b: lax.reduce_sum(lax.mul(a, b), (0,)))(np.float32(2), x)
    assert str(closed) == (
        "{ lambda ; a:f32[] b:f32[3]. let\n"
        "    c:f32[3] = mul a b\n"
        "    d:f32[] = reduce_sum[axes=(0,)] c\n"
        "  in (d,) }"
    )


def test_closed_jaxpr_prints_constvars() -> None:
    c = np.arange(3, dtype=np.float32)
    closed = fcore.make_jaxpr(lambda x: lax.add(x, c))(np.ones(3, np.float32))
    assert str(closed) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }"
    assert len(closed.consts) == 1


def test_structural_equality_and_hash() -> None:
    j1, j2 = _sin_jaxpr(), _sin_jaxpr()
    assert j1 is not j2 and j1 == j2 and hash(j1) == hash(j2)
    assert j1.fingerprint() == j2.fingerprint()
    f = lambda x: lax.add(lax.sin(x), 1.0)  # noqa: E731
    t1 = fcore.make_jaxpr(f)(np.ones(3, np.float32))
    t2 = fcore.make_jaxpr(f)(np.ones(3, np.float32))
    assert t1 == t2 and hash(t1) == hash(t2)
    t3 = fcore.make_jaxpr(lambda x: lax.add(lax.cos(x), 1.0))(np.ones(3, np.float32))
    assert t1 != t3


def test_replace_returns_new_value() -> None:
    j = _sin_jaxpr()
    eqn = j.eqns[0]
    new = eqn.replace(params={"y": 2}, primitive=integer_pow_p)
    assert new.params == Params({"y": 2}) and eqn.params == Params()
    j2 = j.replace(eqns=(new,))
    assert j2 is not j and j.eqns[0] is eqn
    assert F32.replace(shape=(4,)).shape == (4,)


def test_typecheck_returns_type() -> None:
    t = typecheck(_sin_jaxpr())
    assert str(t) == "(f32[3],) -> (f32[3],)"


def test_typecheck_rejects_unbound_var() -> None:
    a, b, c = Var(F32), Var(F32), Var(F32)
    bad = Jaxpr((), (a,), (b,), (JaxprEqn(add_p, (a, c), (b,), Params()),))
    with pytest.raises(JaxprTypeError, match=r"equation 0 .*not bound"):
        typecheck(bad)


def test_typecheck_rejects_double_binding() -> None:
    a = Var(F32)
    bad = Jaxpr((), (a,), (a,), (JaxprEqn(sin_p, (a,), (a,), Params()),))
    with pytest.raises(JaxprTypeError, match="bound twice"):
        typecheck(bad)


def test_typecheck_rejects_wrong_aval_and_arity_and_params() -> None:
    a = Var(F32)
    wrong = Var(ShapedArray((3,), dtypes.int32))
    with pytest.raises(JaxprTypeError, match="produces f32\\[3\\] but the binder is typed i32\\[3\\]"):
        typecheck(Jaxpr((), (a,), (wrong,), (JaxprEqn(sin_p, (a,), (wrong,), Params()),)))
    b = Var(F32)
    with pytest.raises(JaxprTypeError, match="sin"):
        typecheck(Jaxpr((), (a,), (b,), (JaxprEqn(sin_p, (a, a), (b,), Params()),)))
    with pytest.raises(JaxprTypeError, match="does not accept params"):
        typecheck(Jaxpr((), (a,), (b,), (JaxprEqn(sin_p, (a,), (b,), Params({"bogus": 1})),)))


def test_literals_print_and_compare() -> None:
    lit = Literal.of(2.0, ShapedArray((), dtypes.float32, True))
    assert str(lit) == "2.0:f32[]{weak}"
    assert lit == Literal.of(2.0, ShapedArray((), dtypes.float32, True))
    nan = Literal.of(float("nan"), ShapedArray((), dtypes.float32))
    assert nan == Literal.of(float("nan"), ShapedArray((), dtypes.float32))
    assert str(nan) == "nan:f32[]"


def test_printing_is_iterative_for_long_programs() -> None:
    x = Var(F32)
    eqns = []
    cur = x
    for _ in range(100_000):
        nxt = Var(F32)
        eqns.append(JaxprEqn(sin_p, (cur,), (nxt,), Params()))
        cur = nxt
    j = Jaxpr((), (x,), (cur,), tuple(eqns))
    text = str(j)
    assert text.count("\n") == 100_001
    assert typecheck(j).out_avals == (F32,)
    assert hash(j) == hash(j)


def test_closed_jaxpr_equality_compares_consts() -> None:
    j = _sin_jaxpr()
    assert ClosedJaxpr(j, ()) == ClosedJaxpr(_sin_jaxpr(), ())

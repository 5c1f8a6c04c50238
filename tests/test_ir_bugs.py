"""Regressions of issue 19, item 6: argument checks in ``eval_jaxpr``, iterative structural
equality of deeply nested jaxprs, duplicate primitive names, and shape validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.core import ClosedJaxpr, Jaxpr, Literal, Primitive, Var, eval_jaxpr, lookup_primitive, new_eqn, parse_jaxpr
from fcore.errors import InvalidShapeError, JaxprArgumentError, JaxprParseError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.lax import elementwise as ew
from fcore.lax.call import jit_p
from fcore.lax.control_flow.conditionals import cond_p

F32 = dtypes.float32
SCALAR = shaped_array((), F32)


# -- eval_jaxpr checks its arguments -------------------------------------------------------------
def _sin_jaxpr() -> ClosedJaxpr:
    return fcore.make_jaxpr(fnp.sin)(np.zeros(3, np.float32))


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (np.zeros(5, np.float32), r"argument 0 has type f32\[5\] but the jaxpr's input 0 is typed f32\[3\]"),
        (np.zeros(3, np.int32), r"argument 0 has type i32\[3\] but the jaxpr's input 0 is typed f32\[3\]"),
        (np.zeros((3, 1), np.float32), r"argument 0 has type f32\[3,1\]"),
        (2.0, r"argument 0 has type f32\[\] but"),
    ],
)
def test_eval_jaxpr_rejects_wrong_argument_types(arg: Any, message: str) -> None:
    closed = _sin_jaxpr()
    with pytest.raises(JaxprArgumentError, match=message):
        eval_jaxpr(closed.jaxpr, closed.consts, arg)


def test_eval_jaxpr_rejects_wrong_count_as_value_and_type_error() -> None:
    closed = _sin_jaxpr()
    for error in (ValueError, TypeError):  # JAX raises ValueError; fcore raised TypeError before
        with pytest.raises(error, match="takes 0 consts and 1 args, got 0 and 2"):
            eval_jaxpr(closed.jaxpr, closed.consts, np.zeros(3, np.float32), np.zeros(3, np.float32))


def test_eval_jaxpr_accepts_weak_type_differences_and_canonical_dtypes() -> None:
    weak = fcore.make_jaxpr(lambda x: x * 2)(1.0)  # a weakly typed f32[] input
    assert weak.jaxpr.invars[0].aval.weak_type
    (out,) = eval_jaxpr(weak.jaxpr, weak.consts, np.float32(3.0))
    assert float(out) == 6.0
    closed = _sin_jaxpr()
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, np.zeros(3, np.float64))  # canonicalized to f32
    assert out.shape == (3,)


# -- structural equality and hashing do not recurse --------------------------------------------
def _nested_calls(depth: int, innermost: Primitive = ew.sin_p) -> Jaxpr:
    """``depth`` calls nested inside each other around one equation: jit calls, and every tenth
    level a cond whose two branches are the level below (a tuple of jaxprs in the params)."""
    x, y = Var(SCALAR), Var(SCALAR)
    jaxpr = Jaxpr((), (x,), (y,), (new_eqn(innermost, [x], [y]),))
    for level in range(depth):
        x, y = Var(SCALAR), Var(SCALAR)
        body = ClosedJaxpr(jaxpr)
        if level % 10 == 0:
            index = Literal.of(0, shaped_array((), dtypes.int32))
            eqn = new_eqn(cond_p, [index, x], [y], {"branches": (body, body)})
        else:
            eqn = new_eqn(jit_p, [x], [y], {"jaxpr": body, "name": f"f{level}"})
        jaxpr = Jaxpr((), (x,), (y,), (eqn,))
    return jaxpr


def test_equality_and_hash_of_deeply_nested_jaxprs() -> None:
    a, b = _nested_calls(2000), _nested_calls(2000)
    assert a == b
    assert hash(a) == hash(b)
    assert ClosedJaxpr(a) == ClosedJaxpr(b)
    assert a != _nested_calls(1999)
    assert a != _nested_calls(2000, innermost=ew.cos_p)  # differs only at the bottom
    assert a.effects == frozenset()


def test_nested_keys_keep_alpha_equivalence_and_constants() -> None:
    x, y = Var(SCALAR), Var(SCALAR)
    inner = Jaxpr((), (x,), (y,), (new_eqn(ew.sin_p, [x], [y]),))
    x2, y2 = Var(SCALAR), Var(SCALAR)
    renamed = Jaxpr((), (x2,), (y2,), (new_eqn(ew.sin_p, [x2], [y2]),))

    def call(body: ClosedJaxpr) -> Jaxpr:
        a, b = Var(SCALAR), Var(SCALAR)
        return Jaxpr((), (a,), (b,), (new_eqn(jit_p, [a], [b], {"jaxpr": body, "name": "f"}),))

    assert call(ClosedJaxpr(inner)) == call(ClosedJaxpr(renamed))
    assert {call(ClosedJaxpr(inner)), call(ClosedJaxpr(renamed))} == {call(ClosedJaxpr(inner))}
    # Constants of a nested closed jaxpr take part in equality, as in ClosedJaxpr.__eq__.
    c = Var(SCALAR)
    with_const = Jaxpr((c,), (x,), (y,), (new_eqn(ew.add_p, [x, c], [y]),))
    one, two = ClosedJaxpr(with_const, (np.float32(1),)), ClosedJaxpr(with_const, (np.float32(2),))
    assert call(one) == call(ClosedJaxpr(with_const, (np.float32(1),)))
    assert call(one) != call(two)


def test_printed_nested_jaxpr_parses_back_equal() -> None:
    nested = _nested_calls(30)
    assert parse_jaxpr(str(nested)) == nested


# -- duplicate primitive names --------------------------------------------------------------------
def test_user_primitive_may_not_take_a_builtin_name() -> None:
    with pytest.raises(ValueError, match="a primitive named 'sin' is already defined by fcore"):
        Primitive("sin")
    assert lookup_primitive("sin") is ew.sin_p


def test_user_primitive_defined_again_replaces_the_earlier_one() -> None:
    first = Primitive("test_ir_bugs_redefined")
    second = Primitive("test_ir_bugs_redefined")
    assert first is not second
    assert lookup_primitive("test_ir_bugs_redefined") is second


# -- shapes are validated ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((-1,), r"dimensions must be non-negative, got shape \(-1,\)"),
        ((3, -2), "non-negative"),
        ((10**20,), "more than int64 can index"),
        ((2**32, 2**32), "more than int64 can index"),
        ((2, 2, 2, 2**62), "more than int64 can index"),
    ],
)
def test_bad_shapes_are_rejected(shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(InvalidShapeError, match=message):
        ShapedArray(shape, F32)
    with pytest.raises(InvalidShapeError, match=message):
        shaped_array(shape, F32)


def test_largest_shapes_are_accepted() -> None:
    assert ShapedArray((2**63 - 1,), F32).size == 2**63 - 1
    assert ShapedArray((2**31, 2**31), F32).size == 2**62
    assert ShapedArray((0, 10**30), F32).size == 0  # no elements, whatever the other dimension


def test_parse_rejects_enormous_shape() -> None:
    with pytest.raises(JaxprParseError, match="line 1, column .*more than int64 can index"):
        parse_jaxpr("{ lambda ; a:f32[100000000000000000000]. let  in (a,) }")

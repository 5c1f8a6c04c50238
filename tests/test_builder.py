"""Tests of ``fcore.ir.builder.JaxprBuilder``: jaxprs built without tracing.

Built jaxprs must equal the ones tracing produces for the same program, pass
``typecheck``, and every mistake must be rejected when the equation is added,
with a ``JaxprTypeError`` naming the equation index and the primitive.
"""

from __future__ import annotations

import enum

import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.errors import JaxprTypeError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.builder import JaxprBuilder
from fcore.ir.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.ir.typecheck import typecheck
from fcore.lax import elementwise as ew
from fcore.lax import reductions, shapes

F32 = dtypes.float32
V3 = shaped_array((3,), F32)
S = shaped_array((), F32)

call_p = Primitive("test_builder_call", multiple_results=True, param_names=("jaxpr",))


@call_p.def_abstract_eval
def _call_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr) -> list[ShapedArray]:
    if list(avals) != jaxpr.in_avals:
        raise TypeError(f"test_builder_call: arguments {list(avals)} do not match the jaxpr inputs {jaxpr.in_avals}")
    return jaxpr.out_avals


pair_p = Primitive("test_builder_pair", multiple_results=True, param_names=())


@pair_p.def_abstract_eval
def _pair_abstract_eval(x: ShapedArray, y: ShapedArray) -> list[ShapedArray]:
    return [x, y]


no_rule_p = Primitive("test_builder_no_rule")


def sin_plus_one() -> Jaxpr:
    b = JaxprBuilder()
    x = b.invar(V3)
    (y,) = b.eqn(ew.sin_p, [x])
    (z,) = b.eqn(ew.add_p, [y, b.literal(1.0, F32, weak_type=True)])
    return b.build([z])


def test_build_equals_traced_jaxpr() -> None:
    traced = fcore.make_jaxpr(lambda x: lax.add(lax.sin(x), 1.0))(np.ones(3, np.float32))
    built = sin_plus_one()
    assert built == traced.jaxpr
    assert str(built) == str(traced)
    assert str(typecheck(built)) == "(f32[3],) -> (f32[3],)"


def test_build_with_params_equals_traced() -> None:
    x = np.ones((2, 3), np.float32)
    traced = fcore.make_jaxpr(lambda a: lax.reduce_sum(lax.integer_pow(lax.transpose(a, (1, 0)), 2), (0,)))(x)
    b = JaxprBuilder()
    a = b.invar(shaped_array((2, 3), F32))
    (t,) = b.eqn(shapes.transpose_p, [a], permutation=(1, 0))
    (p,) = b.eqn(ew.integer_pow_p, [t], y=2)
    (r,) = b.eqn(reductions.reduce_sum_p, [p], axes=(0,))
    assert b.build([r]) == traced.jaxpr


def test_equation_without_inputs() -> None:
    b = JaxprBuilder()
    (i,) = b.eqn(shapes.iota_p, [], dtype=dtypes.int32, shape=(4,), dimension=0)
    assert i.aval == shaped_array((4,), dtypes.int32)
    j = b.build([i])
    assert str(j) == "{ lambda ; . let a:i32[4] = iota[dimension=0 dtype=int32 shape=(4,)] in (a,) }"


def test_multiple_results_and_literal_and_invar_outputs() -> None:
    b = JaxprBuilder()
    x = b.invar(V3)
    n = b.invar(shaped_array((), dtypes.int32))
    outs = b.eqn(pair_p, [x, n])
    assert [o.aval for o in outs] == [V3, n.aval]
    lit = b.literal(7, dtypes.int32)
    j = b.build([outs[1], x, lit])
    assert j.outvars == (outs[1], x, lit)
    assert str(typecheck(j)) == "(f32[3], i32[]) -> (i32[], f32[3], i32[])"


def test_constvars_and_build_closed() -> None:
    b = JaxprBuilder()
    c = b.constvar(V3)
    x = b.invar(V3)
    (y,) = b.eqn(ew.mul_p, [x, c])
    const = np.arange(3, dtype=np.float32)
    closed = b.build_closed([y], [const])
    assert closed.consts == (const,)
    assert str(closed) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }"
    typecheck(closed)
    with pytest.raises(JaxprTypeError, match="1 constvars but 0 consts"):
        b.build_closed([y])
    with pytest.raises(JaxprTypeError, match=r"const 0 has shape \(4,\)"):
        b.build_closed([y], [np.zeros(4, np.float32)])
    with pytest.raises(JaxprTypeError, match="dtype int32"):
        b.build_closed([y], [np.zeros(3, np.int32)])


def test_build_is_a_snapshot() -> None:
    b = JaxprBuilder()
    x = b.invar(S)
    (y,) = b.eqn(ew.sin_p, [x])
    first = b.build([y])
    (z,) = b.eqn(ew.cos_p, [y])
    second = b.build([z])
    assert len(first.eqns) == 1 and len(second.eqns) == 2 and b.num_eqns == 2


def test_literals() -> None:
    lit = JaxprBuilder.literal(2, F32)
    assert isinstance(lit, Literal) and lit.aval == S and lit.val == np.float32(2.0)
    assert JaxprBuilder.literal(np.float32(1.5), "float32").aval == S
    assert JaxprBuilder.literal(True, dtypes.bool_).val == np.True_
    assert JaxprBuilder.literal(1 + 2j, dtypes.complex64).aval.dtype == dtypes.complex64
    weak = JaxprBuilder.literal(1.0, shaped_array((), dtypes.bfloat16, True))
    assert weak.aval.weak_type and weak.aval.dtype == dtypes.bfloat16
    with pytest.raises(JaxprTypeError, match="not a value of dtype int32"):
        JaxprBuilder.literal(1.5, dtypes.int32)
    with pytest.raises(JaxprTypeError, match="not a value of dtype float32"):
        JaxprBuilder.literal(1j, F32)
    with pytest.raises(JaxprTypeError, match="not a value of dtype bool"):
        JaxprBuilder.literal(1, dtypes.bool_)
    with pytest.raises(JaxprTypeError, match="does not fit dtype uint8"):
        JaxprBuilder.literal(256, dtypes.uint8)
    with pytest.raises(JaxprTypeError, match="literals must be scalars"):
        JaxprBuilder.literal(1.0, V3)


# ---------------------------------------------------------------------------------------
# Errors: each names the equation index and the primitive
# ---------------------------------------------------------------------------------------


def test_unbound_variable() -> None:
    other = JaxprBuilder()
    foreign = other.invar(V3)
    b = JaxprBuilder()
    x = b.invar(V3)
    b.eqn(ew.sin_p, [x])
    with pytest.raises(JaxprTypeError, match=r"equation 1 \(cos\): input 0 Var\(f32\[3\]\) is not bound in this builder"):
        b.eqn(ew.cos_p, [foreign])
    with pytest.raises(JaxprTypeError, match=r"output 0: Var\(f32\[3\]\) is not bound"):
        b.build([foreign])
    with pytest.raises(JaxprTypeError, match=r"equation 1 \(add\): input 1 .* is not a Var or a Literal"):
        b.eqn(ew.add_p, [x, 1.0])  # type: ignore[list-item]


def test_wrong_arity() -> None:
    b = JaxprBuilder()
    x = b.invar(V3)
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(abs applied to f32\[3\], f32\[3\]\): wrong number of inputs"):
        b.eqn(ew.abs_p, [x, x])
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(test_builder_pair applied to f32\[3\]\): wrong number"):
        b.eqn(pair_p, [x])
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(integer_pow applied to no inputs\)"):
        b.eqn(ew.integer_pow_p, [], y=2)
    assert b.num_eqns == 0  # a rejected equation is not added


def test_bad_params() -> None:
    b = JaxprBuilder()
    x = b.invar(V3)
    b.eqn(ew.sin_p, [x])
    with pytest.raises(JaxprTypeError, match=r"equation 1 \(sin applied to f32\[3\]\): sin does not accept params \['y'\]"):
        b.eqn(ew.sin_p, [x], y=1)
    with pytest.raises(JaxprTypeError, match=r"equation 1 \(integer_pow .*missing params \['y'\]"):
        b.eqn(ew.integer_pow_p, [x])
    with pytest.raises(JaxprTypeError, match=r"equation 1 \(integer_pow .*integer exponent"):
        b.eqn(ew.integer_pow_p, [x], y=1.5)
    with pytest.raises(JaxprTypeError, match=r"param axes=\[0\]: a list is not a parameter value"):
        b.eqn(reductions.reduce_sum_p, [x], axes=[0])  # type: ignore[arg-type]
    with pytest.raises(JaxprTypeError, match=r"param axes=\(0, \{\}\): a dict is not a parameter value"):
        b.eqn(reductions.reduce_sum_p, [x], axes=(0, {}))  # type: ignore[arg-type]
    with pytest.raises(JaxprTypeError, match="unsupported dtype"):
        b.eqn(ew.convert_element_type_p, [x], new_dtype=np.dtype("U3"), weak_type=False)


def test_ill_typed_operands() -> None:
    b = JaxprBuilder()
    x = b.invar(V3)
    i = b.invar(shaped_array((3,), dtypes.int32))
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(add applied to f32\[3\], i32\[3\]\): .*same dtypes"):
        b.eqn(ew.add_p, [x, i])
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(sin applied to i32\[3\]\): sin does not accept dtype int32"):
        b.eqn(ew.sin_p, [i])
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(add .*incompatible shapes"):
        b.eqn(ew.add_p, [x, b.invar(shaped_array((4,), F32))])
    with pytest.raises(JaxprTypeError, match="has no abstract evaluation rule"):
        b.eqn(no_rule_p, [x])
    with pytest.raises(JaxprTypeError, match="is not a Primitive"):
        b.eqn("sin", [x])  # type: ignore[arg-type]
    with pytest.raises(JaxprTypeError, match="needs a ShapedArray"):
        b.invar((3,))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Higher-order primitives: sub-jaxprs made by another builder
# ---------------------------------------------------------------------------------------


def _body() -> ClosedJaxpr:
    inner = JaxprBuilder()
    x = inner.invar(V3)
    (y,) = inner.eqn(ew.exp_p, [x])
    return inner.build_closed([y, x])


def test_nested_jaxpr_param() -> None:
    body = _body()
    b = JaxprBuilder()
    x = b.invar(V3)
    outs = b.eqn(call_p, [x], jaxpr=body)
    assert [o.aval for o in outs] == [V3, V3]
    j = b.build(outs)
    assert str(typecheck(j)) == "(f32[3],) -> (f32[3], f32[3])"
    assert isinstance(j.eqns[0].params["jaxpr"], ClosedJaxpr)
    # Nesting twice.
    outer = JaxprBuilder()
    z = outer.invar(V3)
    (w, _) = outer.eqn(call_p, [z], jaxpr=ClosedJaxpr(j, ()))
    typecheck(outer.build([w]))


def test_ill_typed_nested_jaxpr_is_rejected() -> None:
    a, out = Var(V3), Var(shaped_array((3,), dtypes.int32))
    bad = ClosedJaxpr(Jaxpr((), (a,), (out,), (JaxprEqn(ew.sin_p, (a,), (out,)),)), ())
    b = JaxprBuilder()
    x = b.invar(V3)
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(test_builder_call .*ill-typed nested jaxpr: in equation 0"):
        b.eqn(call_p, [x], jaxpr=bad)
    with pytest.raises(JaxprTypeError, match=r"equation 0 \(test_builder_call .*do not match the jaxpr inputs"):
        b.eqn(call_p, [b.invar(S)], jaxpr=_body())


class Flavor(enum.Enum):
    SWEET = 1


def test_param_kinds_are_accepted() -> None:
    any_p = Primitive("test_builder_any")
    any_p.def_abstract_eval(lambda x, **params: x)
    b = JaxprBuilder()
    x = b.invar(V3)
    params: dict[str, ParamValue] = {
        "n": None, "b": True, "i": 1, "f": 1.0, "c": 1j, "s": "s", "d": F32, "e": Flavor.SWEET, "t": ((1,), ()),
        "j": _body(),
    }
    (y,) = b.eqn(any_p, [x], **params)
    assert dict(b.build([y]).eqns[0].params) == params


def test_long_chain() -> None:
    b = JaxprBuilder()
    x = b.invar(V3)
    cur = x
    for _ in range(20_000):
        (cur,) = b.eqn(ew.sin_p, [cur])
    j = b.build([cur])
    assert len(j.eqns) == 20_000
    typecheck(j)

"""``fcore.extend.core``'s helpers for compiler writers against ``jax.extend.core``'s."""

from __future__ import annotations

from typing import Any

import jax
import jax.extend.core as jc
import numpy as np
import pytest
from jax._src import core as jax_core
from jax._src import literals as jax_literals

import fcore
import fcore.extend.core as fc
from fcore import lax
from fcore.ir.avals import ShapedArray

F32_3 = ShapedArray((3,), np.float32)


def test_array_types() -> None:
    assert fc.array_types == jc.array_types - {jax_literals.TypedNdArray}


@pytest.mark.parametrize("x", ["a", np.array(["a"]), object(), [1], (1, 2), None, 1, 2.5, True, np.float64(1),
                               np.zeros((2, 3), np.int8), np.array(1, dtype=np.uint4 if hasattr(np, "uint4") else np.uint8)])
def test_valid_jaxtype(x: object) -> None:
    assert fc.valid_jaxtype(x) == jc.valid_jaxtype(x)


@pytest.mark.parametrize("dtype", [np.float32, np.dtype("int32"), "float32", np.bool_, "bfloat16", np.complex64, np.uint8])
def test_primal_dtype_to_tangent_dtype(dtype: object) -> None:
    ours, theirs = fc.primal_dtype_to_tangent_dtype(dtype), jc.primal_dtype_to_tangent_dtype(dtype)  # type: ignore[no-untyped-call]
    assert ours == theirs and type(ours) is type(theirs)


def test_tangent_dtype_of_a_key_is_float0() -> None:
    ours = fc.primal_dtype_to_tangent_dtype(fcore.random.key(0).dtype)
    assert ours == jc.primal_dtype_to_tangent_dtype(jax.random.key(0).dtype) == fcore.dtypes.float0  # type: ignore[no-untyped-call]


def test_mapped_and_unmapped_avals() -> None:
    ours, theirs = ShapedArray((3, 4), np.float32, True), jax_core.ShapedArray((3, 4), np.float32, weak_type=True)
    for axis in (0, 1, None):
        size = 3 if axis is None else ours.shape[axis]
        assert repr(fc.mapped_aval(size, axis, ours)) == repr(jc.mapped_aval(size, axis, theirs))
    for axis in (0, 1, 2, None):
        assert repr(fc.unmapped_aval(5, axis, ours)) == repr(jc.unmapped_aval(5, axis, theirs))
    with pytest.raises(ValueError, match="has size 3, not 4"):
        fc.mapped_aval(4, 0, ours)
    with pytest.raises(ValueError, match="out of range"):
        fc.mapped_aval(3, 2, ours)
    with pytest.raises(ValueError, match="out of range"):
        fc.unmapped_aval(3, 3, ours)
    with pytest.raises(TypeError, match="no mapping handler"):
        fc.mapped_aval(3, 0, np.float32)  # type: ignore[arg-type]


def test_new_jaxpr_eqn_gensym_and_dropvar_build_a_jaxpr() -> None:
    x, y, dropped = fc.gensym()(F32_3), fc.Var(F32_3), fc.DropVar(F32_3)
    eqns = [fc.new_jaxpr_eqn([x, x], [y], lax.add_p, {}, fc.no_effects),
            fc.new_jaxpr_eqn([x], [dropped], lax.sin_p, {}, None)]
    jaxpr = fc.Jaxpr((), [x], [y], eqns)
    fc.check_jaxpr(jaxpr)
    assert repr(dropped) == "_" and isinstance(dropped, fc.Var)
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = add a a; _:f32[3] = sin a in (b,) }"
    assert fcore.core.parse_jaxpr(str(jaxpr)) == jaxpr
    (out,) = fc.jaxpr_as_fun(fc.ClosedJaxpr(jaxpr, ()))(np.ones(3, np.float32))
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_new_jaxpr_eqn_errors() -> None:
    x, y = fc.Var(F32_3), fc.Var(F32_3)
    with pytest.raises(TypeError, match="must be a Var or a Literal"):
        fc.new_jaxpr_eqn([np.ones(3)], [y], lax.sin_p, {}, None)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="result must be a Var"):
        fc.new_jaxpr_eqn([x], [None], lax.sin_p, {}, None)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="derives an equation's effects"):
        fc.new_jaxpr_eqn([x], [y], lax.sin_p, {}, {object()})


def test_subjaxprs_and_jaxprs_in_params() -> None:
    def f(x: Any) -> Any:
        return lax.cond(x > 0, lambda: fcore.numpy.sin(x), lambda: -x)

    ours = fcore.make_jaxpr(f)(np.float32(1.0)).jaxpr
    theirs = jax.make_jaxpr(lambda x: jax.lax.cond(x > 0, lambda: jax.numpy.sin(x), lambda: -x))(np.float32(1.0)).jaxpr
    assert [str(j) for j in fc.subjaxprs(ours)] == [str(j) for j in jc.subjaxprs(theirs)]
    (cond,) = [e for e in ours.eqns if e.primitive is lax.cond_p]
    assert list(fc.jaxprs_in_params(cond.params)) == list(fc.subjaxprs(ours))
    assert list(fc.jaxprs_in_params({"a": 1, "b": (2, ours)})) == [ours]


def test_concrete_or_error() -> None:
    def ours(x: Any) -> Any:
        return fc.concrete_or_error(int, x, "The size argument")

    def theirs(x: Any) -> Any:
        return jc.concrete_or_error(int, x, "The size argument")

    assert ours(3.7) == theirs(3.7) == 3
    assert fc.concrete_or_error(None, 2.5) == jc.concrete_or_error(None, 2.5) == 2.5
    assert float(fcore.grad(lambda x: x * ours(x))(3.0)) == float(jax.grad(lambda x: x * theirs(x))(3.0)) == 3.0
    with pytest.raises(jax.errors.ConcretizationTypeError, match="The size argument"):
        jax.jit(theirs)(3)
    with pytest.raises(fcore.errors.ConcretizationTypeError, match="The size argument of a traced int32"):
        fcore.jit(ours)(3)


def test_debug_info_matches_jax() -> None:
    for ours, theirs in [(fc.DebugInfo("jit", "f at /a/b.py:12", ("x", "y"), None),
                          jc.DebugInfo("jit", "f at /a/b.py:12", ("x", "y"), None)),
                         (fc.DebugInfo("scan", "body", None, ("result",)), jc.DebugInfo("scan", "body", None, ("result",)))]:
        assert repr(ours) == repr(theirs)
        assert (ours.func_name, ours.func_filename, ours.func_lineno) == (
            theirs.func_name, theirs.func_filename, theirs.func_lineno)
        assert ours.replace_func_name("g") == tuple(theirs.replace_func_name("g"))
        assert ours.safe_arg_names(2) == theirs.safe_arg_names(2)
        assert ours.filter_arg_names([True, False]) == theirs.filter_arg_names([True, False])
        assert ours.with_unknown_names() == tuple(theirs.with_unknown_names())
        tree = {"a": 1, "b": (2, 3)}
        assert ours.set_result_paths(tree).result_paths == theirs.set_result_paths(tree).result_paths  # type: ignore[no-untyped-call]
    lazy = fc.DebugInfo("jit", "f", None, lambda: ("result",))
    with pytest.raises(ValueError, match="not resolved"):
        lazy.safe_result_paths(1)
    assert lazy.resolve_result_paths().safe_result_paths(1) == ("result",)
    with pytest.raises(ValueError, match="expected 3"):
        fc.DebugInfo("jit", "f", ("x",), None).safe_arg_names(3)


def test_call_primitive_stays_one_equation_under_transformations() -> None:
    my_call = fc.CallPrimitive("test_helpers_call")

    def f(x: Any, y: Any) -> list[Any]:
        return [fcore.numpy.sin(x) * y, x + 1]

    x, y = np.float32(1.5), np.float32(2.0)
    out, plus_one = my_call.bind(f, x, y)
    assert np.isclose(float(out), np.sin(1.5) * 2) and float(plus_one) == 2.5
    closed = fcore.make_jaxpr(lambda x, y: my_call.bind(f, x, y))(x, y)
    (eqn,) = closed.eqns
    assert eqn.primitive is my_call and eqn.params["name"] == "f"
    assert fcore.core.parse_jaxpr(str(closed)) == closed.jaxpr

    def g(x: Any, y: Any) -> Any:
        return my_call.bind(f, x, y)[0]

    assert np.isclose(float(fcore.jit(fcore.grad(g))(x, y)), np.cos(1.5) * 2)
    assert [e.primitive for e in fcore.make_jaxpr(fcore.grad(g))(x, y).eqns] == [my_call, my_call]
    xs = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(fcore.vmap(g)(xs, np.ones(3, np.float32)), np.sin(xs), rtol=1e-6)
    assert fc.call_impl(lambda a, b: a + b, 1, 2, name="ignored") == 3
    with pytest.raises(ValueError, match="already defined by fcore"):
        fc.CallPrimitive("sin")

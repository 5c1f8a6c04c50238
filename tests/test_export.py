"""``fcore.export.to_stablehlo``: StableHLO text without compiling, consts as leading parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import backend
from fcore.backend.lowering import LoweringError
from fcore.core import ClosedJaxpr, JaxprBuilder, Primitive, eval_jaxpr, parse_jaxpr
from fcore.errors import JaxprTypeError
from fcore.export import to_stablehlo
from fcore.ir import dtypes
from fcore.ir.avals import shaped_array
from fcore.lax import call

X = np.array([0.5, -1.0, 2.0], np.float32)
C = np.array([10.0, 20.0, 30.0], np.float32)


def _with_const() -> ClosedJaxpr:
    return fcore.make_jaxpr(lambda x: fnp.sin(x) * fnp.asarray(C) + 1.0)(X)


def test_consts_are_leading_parameters() -> None:
    closed = _with_const()
    assert len(closed.consts) == 1
    text = to_stablehlo(closed)
    assert text.startswith("module @jit_main ")
    assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>)" in text
    assert "stablehlo.sine %arg1" in text  # the invar is the parameter after the constant


def test_text_compiles_and_runs_with_consts_first() -> None:
    closed = _with_const()
    exe = backend.compile(to_stablehlo(closed), [(a.shape, a.dtype) for a in closed.out_avals])
    args = [backend.device_put(np.asarray(c)) for c in closed.consts] + [backend.device_put(X)]
    (out,) = exe.execute(args)
    (want,) = eval_jaxpr(closed.jaxpr, closed.consts, X)
    np.testing.assert_allclose(out.to_numpy(), np.asarray(want), rtol=1e-6)


def test_nothing_is_compiled() -> None:
    closed = fcore.make_jaxpr(lambda x: fcore.jit(fnp.cos)(x) * 3.0)(X)
    before = len(call._compiled)
    text = to_stablehlo(closed, name="my fn")
    assert len(call._compiled) == before
    assert text.startswith("module @jit_my_fn ")
    assert "func.func private @cos(" in text and "func.call @cos(" in text


def test_same_nested_jaxpr_is_one_function() -> None:
    f = fcore.jit(fnp.tanh)
    text = to_stablehlo(fcore.make_jaxpr(lambda x: f(f(x)))(X))
    assert text.count("func.func private") == 1
    assert text.count("func.call @tanh(") == 2


def test_jaxpr_without_consts_is_accepted() -> None:
    jaxpr = parse_jaxpr("{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add a b in (c,) }")
    assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in to_stablehlo(jaxpr)


def test_ill_typed_jaxpr_is_a_type_error() -> None:
    closed = ClosedJaxpr(parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[2] = sin a in (b,) }"), ())
    with pytest.raises(JaxprTypeError, match="sin produces f32\\[3\\]"):
        to_stablehlo(closed)


def test_missing_lowering_rule_is_named() -> None:
    p = Primitive("export_test_no_lowering", param_names=())
    p.def_abstract_eval(lambda x: x)
    b = JaxprBuilder()
    x = b.invar(shaped_array((3,), dtypes.float32))
    (y,) = b.eqn(p, [x])
    with pytest.raises(LoweringError, match="export_test_no_lowering"):
        to_stablehlo(b.build_closed([y]))


def test_literal_outputs_and_no_equations() -> None:
    jaxpr = parse_jaxpr("{ lambda ; a:f32[]. let in (a, 2.0:f32[]) }")
    text = to_stablehlo(jaxpr)
    assert "stablehlo.constant" in text
    exe = backend.compile(text, [((), dtypes.float32), ((), dtypes.float32)])
    outs: list[Any] = [o.to_numpy() for o in exe.execute([backend.device_put(np.float32(3.0) * np.ones((), np.float32))])]
    assert [float(o) for o in outs] == [3.0, 2.0]


def test_export_api_matches_jax() -> None:
    """``export.export(jit(f))(*specs)`` as ``jax.export`` for static shapes: types, trees,
    platform check, ``call`` eagerly and under jit/grad, and fcore's serialize round trip."""
    import jax
    from jax import export as jexport

    from fcore import export as fexport

    def f(x: Any, y: Any) -> Any:
        return {"a": x * y}

    args = (np.float32(1.0), fcore.ShapeDtypeStruct((3,), np.float32))
    ours = fexport.export(fcore.jit(f))(*args)
    theirs = jexport.export(jax.jit(f))(np.float32(1.0), jax.ShapeDtypeStruct((3,), np.float32))  # type: ignore[no-untyped-call]
    for field in ("fun_name", "platforms", "nr_devices", "calling_convention_version", "in_shardings_hlo"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert str(ours.in_avals) == str(theirs.in_avals) and str(ours.out_avals) == str(theirs.out_avals)
    assert str(ours.in_tree) == str(theirs.in_tree) and str(ours.out_tree) == str(theirs.out_tree)
    assert fexport.default_export_platform() == jexport.default_export_platform()
    assert (fexport.minimum_supported_calling_convention_version, fexport.maximum_supported_calling_convention_version) \
        == (jexport.minimum_supported_calling_convention_version, jexport.maximum_supported_calling_convention_version)
    assert "@main" in ours.mlir_module()
    np.testing.assert_array_equal(np.asarray(ours.call(np.float32(2.0), X)["a"]), 2 * X)
    np.testing.assert_array_equal(np.asarray(fcore.jit(lambda v: ours.call(v[0], v))(X)["a"]), X[0] * X)
    assert float(fcore.grad(lambda s: ours.call(s, X)["a"].sum())(np.float32(2.0))) == pytest.approx(float(X.sum()))
    back = fexport.deserialize(ours.serialize())
    np.testing.assert_array_equal(np.asarray(back.call(np.float32(2.0), X)["a"]), 2 * X)
    assert back.in_tree == ours.in_tree and back.platforms == ours.platforms
    bad_calls: list[Callable[[], Any]] = [lambda: ours.call(np.float32(1.0)),
                                          lambda: ours.call(np.float32(1.0), np.ones(4, np.float32))]
    for bad in bad_calls:
        with pytest.raises(ValueError):
            bad()
    tpu = fexport.export(fcore.jit(fcore.lax.cos), platforms=["tpu"])(1.0)
    jtpu = jexport.export(jax.jit(jax.lax.cos), platforms=["tpu"])(1.0)
    with pytest.raises(ValueError) as want:
        jtpu.call(1.0)  # type: ignore[no-untyped-call]
    with pytest.raises(ValueError) as got:
        tpu.call(1.0)
    assert str(got.value) == str(want.value)
    unsafe = fexport.export(fcore.jit(fcore.lax.cos), platforms=["tpu"],
                            disabled_checks=[fexport.DisabledSafetyCheck.platform()])(1.0)
    assert float(unsafe.call(0.0)) == 1.0
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        fexport.export(fcore.lax.cos)

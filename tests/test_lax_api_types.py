"""``lax.dtype``, ``lax.shape_as_value`` and the option types (``DotAlgorithm``,
``DotAlgorithmPreset``, ``RoundingMethod``, ``AccuracyMode``, ``Tolerance``) against jax's."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jl

import fcore
import fcore.numpy as fnp
from fcore import lax as fl

VALUES: list[Any] = [1.0, 1, True, 1j, float, int, complex, np.int64, np.float32, "float32", "bfloat16",
                     np.dtype("int8"), np.ones(2, np.int64), np.float64(2), np.float16(1), ml_dtypes.bfloat16,
                     fnp.float32, np.uint8(3)]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_dtype_matches_jax(value: Any) -> None:
    theirs_value = jax.numpy.float32 if value is fnp.float32 else value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax warns that int64 is truncated without x64
        assert fl.dtype(value) == jl.dtype(theirs_value)


def test_dtype_of_arrays_and_x64() -> None:
    assert fl.dtype(fnp.ones(2, fnp.int8)) == np.int8
    with fcore.enable_x64(), jax.enable_x64(True):
        assert fl.dtype(1.0) == jl.dtype(1.0) == np.float64
        assert fl.dtype(np.int64) == jl.dtype(np.int64) == np.int64


@pytest.mark.parametrize(
    "bad", [None, "U", np.array(["a"]), object(), [1, 2]], ids=["None", "str", "str-array", "object", "list"]
)
def test_dtype_errors_match_jax(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as want:
        jl.dtype(bad)
    with pytest.raises(want.type, match=None) as got:
        fl.dtype(bad)
    assert str(got.value) == str(want.value)


def test_shape_as_value() -> None:
    ours, theirs = fl.shape_as_value((2, 3)), jl.shape_as_value((2, 3))
    assert type(ours) is type(theirs) is np.ndarray and ours.dtype == theirs.dtype
    assert ours.tolist() == theirs.tolist() == [2, 3]
    empty = fl.shape_as_value(())
    assert isinstance(empty, fcore.Array) and repr(empty) == repr(jl.shape_as_value(()))


def test_option_types_match_jax() -> None:
    assert [(m.name, m.value) for m in fl.RoundingMethod] == [(m.name, m.value) for m in jl.RoundingMethod]
    assert [(m.name, m.value) for m in fl.AccuracyMode] == [(m.name, m.value) for m in jl.AccuracyMode]
    assert [m.name for m in fl.DotAlgorithmPreset] == [m.name for m in jl.DotAlgorithmPreset]
    for ours, theirs in zip(fl.DotAlgorithmPreset, jl.DotAlgorithmPreset):
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert ours.supported_lhs_types == theirs.supported_lhs_types, ours
        assert ours.supported_rhs_types == theirs.supported_rhs_types, ours
        assert ours.accumulation_type == theirs.accumulation_type, ours
    assert fl.DotAlgorithm._fields == jl.DotAlgorithm._fields
    assert repr(fl.DotAlgorithm(np.float32, np.float32, np.float32)) == repr(jl.DotAlgorithm(np.float32, np.float32, np.float32))
    t = fl.Tolerance(atol=1e-3, ulps=2)
    assert (t.atol, t.rtol, t.ulps) == (1e-3, 0.0, 2)
    for atol in (0.0, -1.0):
        with pytest.raises(ValueError) as want:
            jl.Tolerance(atol=atol)
        with pytest.raises(ValueError) as got:
            fl.Tolerance(atol=atol)
        assert str(got.value) == str(want.value)


def test_rounding_method_in_round() -> None:
    x = np.array([0.5, 1.5, 2.5, -2.5], np.float32)
    for method in fl.RoundingMethod:
        np.testing.assert_array_equal(fl.round(x, method), jl.round(x, jl.RoundingMethod(method.value)))
    text = str(fcore.make_jaxpr(lambda a: fl.round(a, fl.RoundingMethod.TO_NEAREST_EVEN))(x))
    assert "round[rounding_method=1]" in text


def test_dot_algorithm_precision() -> None:
    x = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    want = jl.dot(x, x, precision=jl.DotAlgorithmPreset.DEFAULT)
    np.testing.assert_array_equal(fl.dot(x, x, precision=fl.DotAlgorithmPreset.DEFAULT), want)
    np.testing.assert_array_equal(fl.dot(x, x, precision="DEFAULT"), want)
    for algorithm in (fl.DotAlgorithmPreset.F32_F32_F32, "BF16_BF16_F32", fl.DotAlgorithm(np.float32, np.float32, np.float32)):
        with pytest.raises(NotImplementedError, match="no algorithm parameter"):
            fl.dot(x, x, precision=algorithm)
    with pytest.raises(ValueError, match="DotAlgorithmPreset or its name"):
        fl.dot(x, x, precision="nonsense")

"""The inline eager path of ``fcore.numpy``'s unary functions (issue 21: eager op dispatch)
computes what the primitive's eager rule computes: the same values, dtype, weak type and
aval for every dtype it takes, and it steps aside whenever an eager check is on."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import fcore
from fcore.config import verify_each
import fcore.numpy as fnp
from fcore.interpreters.array import ArrayImpl
from fcore.lax.elementwise import unary_eager_path
from fcore.numpy import ufuncs_unary

_DTYPES = (np.float16, np.float32, np.float64, np.complex64, np.complex128, ml_dtypes.bfloat16)


def _inline_functions() -> list[str]:
    return [n for n in ("sin", "cos", "tan", "tanh", "arctan", "arcsinh", "cbrt", "exp", "log", "sqrt")
            if "compute" in getattr(ufuncs_unary, n).__code__.co_freevars]


def test_the_inline_path_is_taken_by_the_common_functions() -> None:
    names = _inline_functions()
    assert {"sin", "cos", "tanh", "exp", "log"} <= set(names)
    path = unary_eager_path(fcore.lax.sin)
    assert path is not None and np.dtype(np.float32) in path.preserved


def test_the_inline_path_equals_the_checked_rule_path() -> None:
    for name in _inline_functions():
        f = getattr(fnp, name)
        for dt in _DTYPES:
            for weak, host in ((False, np.linspace(0.1, 0.9, 4).astype(dt)), (True, np.asarray(0.5, dt))):
                x = ArrayImpl(host, weak)
                try:
                    with verify_each():  # an eager check on: the primitive's own path, verified
                        slow = f(x)
                except TypeError as e:  # a dtype the primitive rejects: the same error
                    with pytest.raises(TypeError, match=re.escape(str(e))):
                        f(x)
                    continue
                fast = f(x)
                assert type(fast) is ArrayImpl and fast.aval == slow.aval, (name, dt, weak)
                assert fast.host().shape == host.shape and fast.host().dtype == host.dtype
                np.testing.assert_array_equal(fast.host(), slow.host())


def test_the_inline_path_steps_aside_for_debug_nans_and_integers() -> None:
    x = fnp.asarray(np.array([np.inf], np.float32))
    assert np.isnan(np.asarray(fnp.sin(x))).all()
    with fcore.debug_nans(True), pytest.raises(FloatingPointError, match="invalid value \\(nan\\) encountered in sin"):
        fnp.sin(x)
    i = fnp.sin(fnp.asarray(np.array([1, 2], np.int32)))
    assert i.dtype == np.float32 and not i.weak_type


def test_the_eager_rules_give_arrays_of_their_operands_type() -> None:
    """The eager rules ask NumPy for array results where its loop keeps the dtype (a 0-d result
    would be a NumPy scalar), and a binary operation on two operands of one known type skips
    the dtype and shape comparisons: every result is an array of the operands' type, equal to
    the checked impl's, 0-d and weakly typed ones included."""
    from fcore.lax.elementwise import add_p, mul_p, neg_p, sin_p

    for dt in (*_DTYPES, np.int8, np.int32, np.uint16):
        for host in (np.asarray(3, dt), np.arange(1, 4).astype(dt)):
            for weak in (False, True):
                x = ArrayImpl(host, weak)
                assert x.aval.weak_type == weak  # (its type known: the binary rules' identity test)
                for p, args in ((neg_p, (x,)), (sin_p, (x,)), (add_p, (x, x)), (mul_p, (x, x))):
                    rule, impl = p.eager_rule, p.impl_rule
                    assert rule is not None and impl is not None
                    r = rule(*args)
                    if r is None:  # (sin of an integer: promoted by the general path)
                        assert p is sin_p and not np.issubdtype(dt, np.inexact)
                        continue
                    assert type(r) is ArrayImpl and type(r.host()) is np.ndarray, (p, dt)
                    assert r.aval == x.aval and r.host().shape == host.shape, (p, dt, weak)
                    want = impl(*[host] * len(args))
                    assert r.host().dtype == want.dtype
                    np.testing.assert_array_equal(r.host(), want)

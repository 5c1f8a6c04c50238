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

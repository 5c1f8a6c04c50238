"""Issue 23, class 10: integer division and remainder by zero, and ``INT_MIN / -1``, give
JAX's results in eager, jit and ``fold_constants``, and never crash XLA (SIGFPE in its
constant folder, where ``v - v`` becomes the constant 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.transforms.simplify import fold_constants

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32]


def _operands(dt: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    info = np.iinfo(dt)
    if info.min < 0:
        x = np.array([7, -7, 0, info.min, info.min, 5, info.max], dt)
        y = np.array([0, 0, 0, -1, 0, 2, -1], dt)
    else:
        x = np.array([7, 0, 5, info.max, 1], dt)
        y = np.array([0, 0, 3, 0, 2], dt)
    return x, y


def test_sigfpe_repro_runs_in_a_subprocess() -> None:
    """The issue's repro: it killed the process inside XLA's compile."""
    code = (
        "import numpy as np, fcore\n"
        "from fcore import lax\n"
        "v = np.array([[3], [1], [9]], np.uint32)\n"
        "print(fcore.jit(lambda v: 0 // (v - v))(v).ravel().tolist())\n"
        "i = np.array([-2**31, 5], np.int32)\n"
        "print(fcore.jit(lambda v: lax.div(v, v * 0 - 1))(i).tolist())\n"
        "print(fcore.jit(lambda v: lax.rem(v, v - v))(i).tolist())\n"
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:3] == ["[4294967295, 4294967295, 4294967295]", "[-2147483648, -5]", "[-2147483648, 5]"]


@pytest.mark.parametrize("dt", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["div", "rem"])
def test_division_by_zero_and_overflow_match_jax(dt: Any, name: str) -> None:
    x, y = _operands(dt)
    want = np.asarray(getattr(jax.lax, name)(x, y))
    f: Callable[..., Any] = getattr(lax, name)
    np.testing.assert_array_equal(np.asarray(f(x, y)), want)
    np.testing.assert_array_equal(np.asarray(fcore.jit(f)(x, y)), want)
    # divisors that XLA sees as constants (its constant folder used to trap on these)
    np.testing.assert_array_equal(np.asarray(fcore.jit(lambda a: f(a, y))(x)), want)
    np.testing.assert_array_equal(np.asarray(fcore.jit(lambda: f(x, y))()), want)


@pytest.mark.parametrize("dt", [np.int32, np.uint32, np.int8])
def test_fold_constants_agrees(dt: Any) -> None:
    x, y = _operands(dt)
    for name in ("div", "rem"):
        f: Callable[..., Any] = getattr(lax, name)
        for a, b in zip(x, y):
            closed = fcore.make_jaxpr(lambda: f(a, b))()
            folded = fold_constants(closed)
            assert not folded.jaxpr.eqns
            want = np.asarray(getattr(jax.lax, name)(a, b))
            assert np.asarray(fcore.core.eval_jaxpr(folded.jaxpr, folded.consts)[0]) == want

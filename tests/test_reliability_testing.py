"""``fcore.testing`` (issue 23, part 2): random well-typed programs agree with JAX in every
mode, and satisfy the reference-free invariants. A fixed seed and few examples here; run
more with ``FCORE_FUZZ_EXAMPLES`` (docs/testing.md)."""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, seed, settings

import fcore
from fcore import testing
from fcore.ir.core import ClosedJaxpr

EXAMPLES = int(os.environ.get("FCORE_FUZZ_EXAMPLES", "6"))


@seed(23)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=False)
@given(testing.programs())
def test_random_programs_agree_with_jax(program: testing.Program) -> None:
    testing.check_against(program.function(fcore), program.function(jax), jax, program.inputs, rtol=2e-4, atol=2e-4)


@seed(24)
@settings(max_examples=max(EXAMPLES // 2, 3), deadline=None)
@given(testing.programs(max_steps=5))
def test_random_programs_satisfy_invariants(program: testing.Program) -> None:
    testing.check_invariants(program.function(fcore), program.inputs)
    assert isinstance(program.jaxpr(), ClosedJaxpr)


def test_check_against_reports_a_disagreement() -> None:
    x = np.array([1.0, 2.0], np.float32)

    def ours(v: Any) -> Any:
        return fcore.numpy.sum(fcore.numpy.sin(v))

    def wrong(v: Any) -> Any:
        return jax.numpy.sum(jax.numpy.cos(v))

    with pytest.raises(AssertionError, match="eager"):
        testing.check_against(ours, wrong, jax, (x,))


def test_check_invariants_catches_a_wrong_derivative() -> None:
    @fcore.custom_jvp
    def f(x: Any) -> Any:
        return fcore.numpy.sum(fcore.numpy.sin(x))

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), fcore.numpy.sum(t)  # wrong: should be sum(cos(x) * t)

    with pytest.raises(AssertionError, match="finite differences"):
        testing.check_invariants(f, (np.array([0.3, 1.2], np.float32),))

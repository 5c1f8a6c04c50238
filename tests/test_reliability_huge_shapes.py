"""Issue 23, class 8: a result that can never fit in memory fails at once with JAX's error
(``RESOURCE_EXHAUSTED``, a ``JaxRuntimeError``), eagerly and under jit, instead of NumPy
summing a broadcast view for minutes, allocating for seconds, or XLA aborting the process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp

HUGE = (10**6, 10**6)

CASES: dict[str, Callable[[], Any]] = {
    "zeros": lambda: fnp.zeros(HUGE),
    "broadcast_sum": lambda: fnp.broadcast_to(fnp.ones(()), (10**9, 10**9)).sum(),
    "ones_1d": lambda: fnp.ones((2**42,), np.float32),
    "arange": lambda: fnp.arange(10**13),
    "full": lambda: fnp.full(HUGE, 2.0),
    "outer_product": lambda: fnp.ones(10**6)[:, None] * fnp.ones(10**6)[None, :],
    "jit_zeros": lambda: fcore.jit(lambda: fnp.zeros(HUGE))(),
    "random_normal": lambda: fcore.random.normal(fcore.random.key(0), HUGE),
}


@pytest.mark.parametrize("name", list(CASES))
def test_enormous_results_fail_fast_as_in_jax(name: str) -> None:
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"RESOURCE_EXHAUSTED: Out of memory allocating \d+ bytes"):
        CASES[name]()


def test_same_message_as_jax() -> None:
    with pytest.raises(jax.errors.JaxRuntimeError) as want:
        jax.numpy.zeros(HUGE, np.float32)
    with pytest.raises(jax.errors.JaxRuntimeError) as got:
        fnp.zeros(HUGE, np.float32)
    assert str(got.value) == str(want.value)


def test_negative_dimensions_are_a_type_error() -> None:
    with pytest.raises(TypeError):
        fnp.zeros((-1, 3))


def test_large_splat_constants_do_not_materialize() -> None:
    """Lowering writes a scalar constant of a big shape as a splat, with no array of that
    shape in memory (random bits' counter strides were 7 TiB of uint64 here)."""
    key = fcore.random.key(0)
    text = fcore.jit(lambda k: fcore.random.bits(k, HUGE)).lower(key).as_text()
    assert "stablehlo.iota" in text and len(text) < 100_000

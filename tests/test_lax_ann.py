"""``fcore.lax.approx_max_k`` / ``approx_min_k`` against ``jax.lax`` on CPU (XLA's exact
fallback): values, indices (ties, NaNs), the unaggregated candidate count, grad, vmap and
JAX's errors."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import fcore
from fcore import lax
from test_numpy_common import check, modes, sample

jlax: Any = jax.lax  # jax types the operand as jax.Array; NumPy operands work at run time
ODD = np.array([[3.0, 1.0, np.nan, 3.0, -np.inf, 2.0, 3.0, 0.5], [1.0, np.nan, -np.nan, np.inf, -0.0, 0.0, 1.0, 2.0]],
               np.float32)
Y = sample(np.dtype(np.float32), (3, 40), seed=5)


@pytest.mark.parametrize("name", ["approx_max_k", "approx_min_k"])
def test_values_and_indices(name: str) -> None:
    mine, theirs = getattr(lax, name), getattr(jlax, name)
    with modes():
        check(lambda v: mine(v, 3), lambda v: theirs(v, 3), ODD)
        check(fcore.jit(lambda v: mine(v, 8)), jax.jit(lambda v: theirs(v, 8)), ODD)
        check(lambda v: mine(v, 2, reduction_dimension=0, recall_target=0.5), lambda v: theirs(v, 2, 0, 0.5), Y)
        check(lambda v: mine(v, 4), lambda v: theirs(v, 4), Y.astype(jax.numpy.bfloat16))
        big = sample(np.dtype(np.float32), (2, 3000), seed=6)
        check(lambda v: mine(v, 5, aggregate_to_topk=False), lambda v: theirs(v, 5, aggregate_to_topk=False), big)
        check(lambda v: mine(v, 5, aggregate_to_topk=False, reduction_input_size_override=100000),
              lambda v: theirs(v, 5, aggregate_to_topk=False, reduction_input_size_override=100000), big)


def test_grad_and_vmap() -> None:
    with modes():
        check(fcore.grad(lambda v: (lax.approx_max_k(v, 3)[0] ** 2).sum()),
              jax.grad(lambda v: (jlax.approx_max_k(v, 3)[0] ** 2).sum()), Y, staged=False)
        check(fcore.grad(lambda v: lax.approx_min_k(v, 2, reduction_dimension=0)[0].sum()),
              jax.grad(lambda v: jlax.approx_min_k(v, 2, reduction_dimension=0)[0].sum()), Y, staged=False)
        check(fcore.vmap(lambda v: lax.approx_max_k(v, 2)), jax.vmap(lambda v: jlax.approx_max_k(v, 2)), Y)
        check(fcore.vmap(lambda v: lax.approx_min_k(v, 2), in_axes=1), jax.vmap(lambda v: jlax.approx_min_k(v, 2), in_axes=1),
              Y)


@pytest.mark.parametrize("operand, k, kw, exc", [
    (ODD, 0, {}, ValueError), (ODD, 9, {}, ValueError), (ODD, 2, {"reduction_dimension": 2}, IndexError),
    (np.arange(5), 2, {}, ValueError), (np.float32(1), 1, {}, TypeError),
])
def test_errors(operand: Any, k: int, kw: dict[str, Any], exc: type[Exception]) -> None:
    with modes():
        with pytest.raises(exc) as theirs:
            jlax.approx_max_k(operand, k, **kw)
        with pytest.raises(exc, match=f"^{__import__('re').escape(str(theirs.value))}$"):
            lax.approx_max_k(operand, k, **kw)

"""``fcore.lax.platform_dependent`` against ``jax.lax`` on CPU: the branch chosen eagerly
and under ``jit``, ``grad`` and ``vmap``, joined branches, and JAX's errors."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np
import pytest

import fcore
from fcore import lax
from test_numpy_common import check, modes

jlax: Any = jax.lax
X = np.float32(2.0)
VS = np.arange(3.0, dtype=np.float32)


def _twice(v: Any) -> Any:
    return v * 2


def test_chosen_branch() -> None:
    def run(pd: Callable[..., Any]) -> Callable[[Any], Any]:
        return lambda v: pd(v, cpu=lambda u: u * v, tpu=lambda u: u + 1, default=lambda u: u * 3)

    with modes():
        check(fcore.jit(run(lax.platform_dependent)), jax.jit(run(jlax.platform_dependent)), X)
        check(fcore.grad(run(lax.platform_dependent)), jax.grad(run(jlax.platform_dependent)), X, staged=False)
        check(fcore.vmap(run(lax.platform_dependent)), jax.vmap(run(jlax.platform_dependent)), VS)
        # eagerly both call the branch itself (here a NumPy scalar comes back)
        assert lax.platform_dependent(X, cpu=_twice) == jlax.platform_dependent(X, cpu=_twice) == 4.0
        assert type(lax.platform_dependent(X, cpu=_twice)) is type(jlax.platform_dependent(X, cpu=_twice))
        joined: list[dict[str, Callable[..., Any]]] = [
            {"tpu": _twice, "default": np.negative}, {"cuda": _twice, "rocm": np.negative, "default": np.exp},
            {"cpu": _twice, "tpu": _twice},
        ]
        for kw in joined:
            assert lax.platform_dependent(X, **kw) == jlax.platform_dependent(X, **kw)
        assert lax.platform_dependent(cpu=lambda: 1, default=lambda: 2) == 1


@pytest.mark.parametrize("kw, exc", [
    ({"gpu": _twice}, ValueError), ({"cpu": 3}, TypeError), ({"cpu": _twice, "default": 4}, TypeError),
    ({"tpu": _twice}, NotImplementedError),
])
def test_errors(kw: dict[str, Any], exc: type[Exception]) -> None:
    with modes():
        with pytest.raises(exc):
            jlax.platform_dependent(X, **kw)
        with pytest.raises(exc):
            lax.platform_dependent(X, **kw)
        with pytest.raises(exc):
            jax.jit(lambda v: jlax.platform_dependent(v, **kw))(X)
        with pytest.raises(exc):
            fcore.jit(lambda v: lax.platform_dependent(v, **kw))(X)


def test_branches_traced_under_jit() -> None:
    """Under jit every branch is staged, so mismatched outputs fail even off the chosen branch."""
    kw: dict[str, Callable[..., Any]] = {"cpu": lambda v: v, "default": lambda v: (v, v)}
    with modes():
        with pytest.raises(TypeError):
            jax.jit(lambda v: jlax.platform_dependent(v, **kw))(X)
        with pytest.raises(TypeError):
            fcore.jit(lambda v: lax.platform_dependent(v, **kw))(X)
        assert lax.platform_dependent(X, **kw) == jlax.platform_dependent(X, **kw)

"""Issue 23, class 6: a ``contextvars`` context copied (or an asyncio task created) while a
transformation traces keeps the trace as its current one; once the transformation has
returned, ops run there are eager again (as in JAX), not staged into a finished jaxpr."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.stack import current_trace

X = np.array([0.5, 1.0, 2.0], np.float32)

TRANSFORMS: dict[str, Callable[[Callable[[Any], Any]], Any]] = {
    "jit": lambda f: fcore.jit(f)(X),
    "grad": lambda f: fcore.grad(lambda v: f(v).sum())(X),
    "vmap": lambda f: fcore.vmap(f)(X),
    "jvp": lambda f: fcore.jvp(f, (X,), (X,)),
    "jit_of_vmap_of_grad": lambda f: fcore.jit(fcore.vmap(fcore.grad(f)))(X),
}


def _eager_ops() -> tuple[Any, ...]:
    return fnp.sin(X) + 1, fcore.grad(lambda v: fnp.sin(v).sum())(X), fcore.jit(fnp.cos)(X)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_copied_context_is_eager_after_the_trace(name: str) -> None:
    contexts: list[contextvars.Context] = []

    def grab(v: Any) -> Any:
        contexts.append(contextvars.copy_context())
        return v * 2

    TRANSFORMS[name](grab)
    assert contexts
    for ctx in contexts:
        results = ctx.run(_eager_ops)
        assert all(type(r) is ArrayImpl for r in results), [type(r) for r in results]
        np.testing.assert_allclose(np.asarray(results[0]), np.sin(X) + 1, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(results[1]), np.cos(X), rtol=1e-6)
        assert ctx.run(current_trace) is current_trace()


def test_asyncio_task_created_during_jit_trace() -> None:
    async def main() -> Any:
        tasks: list[asyncio.Future[Any]] = []

        async def later() -> Any:
            await asyncio.sleep(0)
            return fnp.cos(X) * 3

        def f(v: Any) -> Any:
            tasks.append(asyncio.ensure_future(later()))
            return v + 1

        fcore.jit(f)(X)
        return await tasks[0]

    out = asyncio.run(main())
    assert type(out) is ArrayImpl
    np.testing.assert_allclose(np.asarray(out), np.cos(X) * 3, rtol=1e-6)


def test_leaked_tracer_still_raises_in_a_copied_context() -> None:
    leaked: list[Any] = []
    contexts: list[contextvars.Context] = []

    def f(v: Any) -> Any:
        leaked.append(v)
        contexts.append(contextvars.copy_context())
        return v

    fcore.jit(f)(X)
    with pytest.raises(fcore.errors.UnexpectedTracerError):
        contexts[0].run(lambda: fnp.sin(leaked[0]))

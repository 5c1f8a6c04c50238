"""Issue 23: tracing and running from many threads and asyncio tasks at once stays correct
(jit, grad, vmap, eager), and threads, tasks and copied contexts created inside a
transformation behave as in JAX. Each test bounds its wait, so a deadlock fails it."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.interpreters.array import ArrayImpl

X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)


def _f(x: Any, k: Any) -> Any:
    return fnp.sum(fnp.sin(x) * k + x * x)


def _jf(x: Any, k: Any) -> Any:
    return jax.numpy.sum(jax.numpy.sin(x) * k + x * x)


SHARED_JIT = fcore.jit(_f)


def _work(k: int) -> dict[str, Any]:
    """Every way of running ``_f`` for worker ``k``: a shared jitted function, a jit of a
    fresh closure (traced here), grad, vmap and eager."""
    kf = np.float32(k)
    return {
        "eager": _f(X, kf),
        "jit": SHARED_JIT(X, kf),
        "fresh_jit": fcore.jit(lambda x: _f(x, kf))(X),
        "grad": fcore.grad(_f)(X, kf),
        "vmap": fcore.vmap(_f, in_axes=(0, None))(X, kf),
        "jit_grad_vmap": fcore.jit(fcore.vmap(fcore.grad(_f), in_axes=(0, None)))(X, kf),
    }


def _expected(k: int) -> dict[str, Any]:
    kf = np.float32(k)
    return {
        "eager": _jf(X, kf),
        "jit": _jf(X, kf),
        "fresh_jit": _jf(X, kf),
        "grad": jax.grad(_jf)(X, kf),
        "vmap": jax.vmap(_jf, in_axes=(0, None))(X, kf),
        "jit_grad_vmap": jax.vmap(jax.grad(_jf), in_axes=(0, None))(X, kf),
    }


def _check(k: int, got: dict[str, Any]) -> None:
    for name, want in _expected(k).items():
        assert type(got[name]) is ArrayImpl, (k, name, type(got[name]))
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want), rtol=1e-5, atol=1e-5, err_msg=f"{k} {name}")


def test_sixteen_threads_trace_and_run_at_once() -> None:
    n = 16
    barrier = threading.Barrier(n)
    results: dict[int, list[dict[str, Any]]] = {}
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[k] = [_work(k)]
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish (deadlock?)"
    assert not errors, errors[0]
    for k in range(n):
        for got in results[k]:
            _check(k, got)


def test_a_hundred_asyncio_tasks_interleave_transformations() -> None:
    async def task(k: int) -> dict[str, Any]:
        kf = np.float32(k % 7)
        out: dict[str, Any] = {}
        out["eager"] = _f(X, kf)
        await asyncio.sleep(0)
        out["jit"] = SHARED_JIT(X, kf)
        await asyncio.sleep(0)
        out["grad"] = fcore.grad(_f)(X, kf)
        await asyncio.sleep(0)
        out["vmap"] = fcore.vmap(_f, in_axes=(0, None))(X, kf)
        return out

    async def main() -> list[dict[str, Any]]:
        return await asyncio.wait_for(asyncio.gather(*(task(k) for k in range(100))), timeout=120)

    results = asyncio.run(main())
    expected = {k: _expected(k) for k in range(7)}
    for k, got in enumerate(results):
        for name, value in got.items():
            assert type(value) is ArrayImpl
            np.testing.assert_allclose(np.asarray(value), np.asarray(expected[k % 7][name]), rtol=1e-5, atol=1e-5)


TRANSFORMS: dict[str, Callable[[Callable[[Any], Any]], Any]] = {
    "jit": lambda f: fcore.jit(f)(X),
    "grad": lambda f: fcore.grad(lambda v: f(v).sum())(X),
    "vmap": lambda f: fcore.vmap(f)(X),
    "jvp": lambda f: fcore.jvp(f, (X,), (X,)),
    "linearize": lambda f: fcore.linearize(f, X),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_thread_started_inside_a_transformation_runs_eagerly(name: str) -> None:
    """As in JAX (whose trace state is per thread): a new thread does not see the trace."""
    seen: list[Any] = []

    def f(v: Any) -> Any:
        t = threading.Thread(target=lambda: seen.append(fnp.cos(X) * 2))
        t.start()
        t.join(timeout=60)
        return v * 2

    TRANSFORMS[name](f)
    assert len(seen) == 1 and type(seen[0]) is ArrayImpl
    np.testing.assert_allclose(np.asarray(seen[0]), np.cos(X) * 2, rtol=1e-6)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_context_copied_inside_a_transformation_traces_while_it_runs(name: str) -> None:
    """``ctx.run`` inside the transformation stages into the live trace (the function is
    still differentiated/batched through it), and is eager once the transformation returned."""
    contexts: list[contextvars.Context] = []

    def f(v: Any) -> Any:
        ctx = contextvars.copy_context()
        contexts.append(ctx)
        return ctx.run(lambda: fnp.sin(v) * 2)

    out = TRANSFORMS[name](f)
    jax_transforms: dict[str, Callable[[], Any]] = {
        "jit": lambda: jax.jit(lambda v: jax.numpy.sin(v) * 2)(X),
        "grad": lambda: jax.grad(lambda v: (jax.numpy.sin(v) * 2).sum())(X),
        "vmap": lambda: jax.vmap(lambda v: jax.numpy.sin(v) * 2)(X),
        "jvp": lambda: jax.jvp(lambda v: jax.numpy.sin(v) * 2, (X,), (X,)),
        "linearize": lambda: jax.linearize(lambda v: jax.numpy.sin(v) * 2, X)[0],
    }
    want = jax_transforms[name]()
    got = out[0] if name == "linearize" else out
    for g, w in zip(fcore.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    later = contexts[0].run(lambda: fnp.sin(X) * 2)
    assert type(later) is ArrayImpl


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_an_asyncio_task_created_inside_a_transformation_runs_eagerly_later(name: str) -> None:
    async def main() -> Any:
        tasks: list[asyncio.Future[Any]] = []

        async def later() -> Any:
            await asyncio.sleep(0)
            return fcore.grad(lambda v: fnp.sin(v).sum())(X)

        def f(v: Any) -> Any:
            tasks.append(asyncio.ensure_future(later()))
            return v + 1

        TRANSFORMS[name](f)
        return await asyncio.wait_for(tasks[0], timeout=60)

    out = asyncio.run(main())
    assert type(out) is ArrayImpl
    np.testing.assert_allclose(np.asarray(out), np.cos(X), rtol=1e-6)

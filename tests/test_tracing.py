"""The trace stack: make_jaxpr, concretization errors, leaks, threads, failure safety."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.core import eval_jaxpr, jaxpr_as_fun
from fcore.errors import ConcretizationError, UnexpectedTracerError
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import current_trace

X3 = np.arange(3, dtype=np.float32)


def test_make_jaxpr_pytrees_and_static_args() -> None:
    def f(params: dict[str, Any], x: Any, n: int) -> tuple[Any, Any]:
        y = lax.mul(params["w"], x)
        for _ in range(n):
            y = lax.sin(y)
        return y, params["b"]

    closed = fcore.make_jaxpr(f, static_argnums=2)({"w": X3, "b": np.float32(1)}, X3, 3)
    assert [e.primitive.name for e in closed.eqns] == ["mul", "sin", "sin", "sin"]
    assert len(closed.jaxpr.invars) == 3
    outs = jaxpr_as_fun(closed)(np.float32(1), X3, X3)
    np.testing.assert_allclose(np.asarray(outs[0]), np.sin(np.sin(np.sin(X3 * X3))), rtol=1e-6)


def test_make_jaxpr_shape_dtype_struct_and_scalars() -> None:
    closed = fcore.make_jaxpr(lambda x, s: lax.mul(x, s))(fcore.ShapeDtypeStruct((2, 3), np.float32), np.float32(3))
    assert str(closed.in_avals[0]) == "float32[2,3]" and "a:f32[2,3]" in str(closed)
    weak = fcore.make_jaxpr(lambda x: lax.mul(x, 2.0))(1.0)
    assert weak.in_avals[0].weak_type
    assert str(weak.eqns[0].invars[1]) == "2.0:f32[]{weak}"


def test_eval_jaxpr_reproduces_function() -> None:
    def f(x: Any) -> Any:
        return lax.tanh(lax.add(lax.mul(x, x), 1.0))

    closed = fcore.make_jaxpr(f)(X3)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, X3)
    np.testing.assert_allclose(np.asarray(out), np.asarray(f(X3)))


def test_concretization_error_names_function_and_line() -> None:
    def branchy(x: Any) -> Any:
        if lax.gt(x, 0.0):  # the line that needs a concrete value
            return x
        return lax.neg(x)

    with pytest.raises(ConcretizationError) as info:
        fcore.make_jaxpr(branchy)(1.0)
    msg = str(info.value)
    assert "make_jaxpr(branchy)" in msg
    assert "test_tracing.py" in msg and "in branchy" in msg
    assert "static_argnums" in msg
    with pytest.raises(ConcretizationError):
        fcore.make_jaxpr(lambda x: int(x))(1.0)
    with pytest.raises(ConcretizationError):
        fcore.make_jaxpr(lambda x: float(x))(1.0)


def test_failed_trace_leaves_no_state() -> None:
    def boom(x: Any) -> Any:
        lax.sin(x)
        raise RuntimeError("user error")

    with pytest.raises(RuntimeError, match="user error"):
        fcore.make_jaxpr(boom)(1.0)
    assert current_trace() is EVAL_TRACE
    assert len(fcore.make_jaxpr(lambda x: lax.cos(x))(1.0).eqns) == 1


def test_leaked_tracer_raises_unexpected_tracer_error() -> None:
    leaked: list[Any] = []

    def leak(x: Any) -> Any:
        leaked.append(x)
        return x

    fcore.make_jaxpr(leak)(1.0)
    with pytest.raises(UnexpectedTracerError, match="make_jaxpr\\(leak\\)"):
        lax.sin(leaked[0])
    with pytest.raises(UnexpectedTracerError):
        fcore.make_jaxpr(lambda y: lax.add(y, leaked[0]))(1.0)


def test_threads_trace_independently() -> None:
    results: dict[int, str] = {}
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        def f(x: Any) -> Any:
            barrier.wait()
            for _ in range(i + 1):
                x = lax.sin(x)
            return x

        results[i] = str(fcore.make_jaxpr(f)(1.0))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        assert results[i].count("sin") == i + 1


def test_asyncio_tasks_trace_independently() -> None:
    async def trace(n: int) -> int:
        async def pause() -> None:
            await asyncio.sleep(0)

        def f(x: Any) -> Any:
            return lax.integer_pow(x, n)

        await pause()
        return len(fcore.make_jaxpr(f)(1.0).eqns) + n

    async def main() -> list[int]:
        return list(await asyncio.gather(*(trace(n) for n in range(1, 5))))

    assert asyncio.run(main()) == [2, 3, 4, 5]


def test_closed_over_array_used_twice_is_one_constvar() -> None:
    """fcore.numpy wraps a closed-over NumPy array anew at each use; it stays one constvar, as in jax."""
    import jax

    w = np.ones((3, 3), np.float32)
    x = np.ones(3, np.float32)
    closed = fcore.make_jaxpr(lambda v: w @ (w @ v))(x)
    assert len(closed.jaxpr.constvars) == len(jax.make_jaxpr(lambda v: w @ (w @ v))(x).jaxpr.constvars) == 1
    np.testing.assert_allclose(fcore.core.jaxpr_as_fun(closed)(x)[0], w @ (w @ x))

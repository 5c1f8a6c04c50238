"""Thread and asyncio safety (SPEC §1, §3.1): each thread and task traces on its own.

Eight threads trace eight different functions at the same moment (released together by a
barrier, many rounds) and each must get exactly the jaxpr a lone trace gives, and ``jit``
values equal to the serial ones. Settings: ``config.update`` is process-wide, as in JAX (a
thread started later sees it), while the ``enable_x64`` / ``numpy_dtype_promotion`` context
managers are context-local (one thread's or task's block is invisible to the others).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jax
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import lax
from fcore.config import promotion_mode, x64_enabled
from fcore.errors import TypePromotionError

X = np.linspace(0.1, 1.0, 3, dtype=np.float32)

FUNCTIONS: list[Callable[[Any], Any]] = [
    lambda x: fnp.sin(x) * 2.0,
    lambda x: fnp.sum(x**2),
    lambda x: lax.cond(x[0] > 0, lambda y: y + 1, lambda y: y - 1, x),
    lambda x: lax.scan(lambda c, y: (c + y, c * y), 0.0, x),
    lambda x: fnp.cumsum(x)[::-1],
    lambda x: fcore.grad(lambda y: fnp.sum(fnp.tanh(y)))(x),
    lambda x: fcore.vmap(lambda y: y * fnp.arange(3.0))(fnp.stack([x, x])),
    lambda x: fcore.jit(lambda y: fnp.exp(y) @ y)(x),
]


def _run_together(work: Callable[[int], None], n: int = 8) -> None:
    errors: list[BaseException] = []

    def guarded(i: int) -> None:
        try:
            work(i)
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_eight_threads_trace_eight_functions_at_once() -> None:
    serial = [fcore.make_jaxpr(f)(X) for f in FUNCTIONS]
    values = [fcore.tree_util.tree_leaves(fcore.jit(f)(X)) for f in FUNCTIONS]
    barrier = threading.Barrier(len(FUNCTIONS))

    def work(i: int) -> None:
        for _ in range(10):
            barrier.wait()
            closed = fcore.make_jaxpr(FUNCTIONS[i])(X)
            assert closed == serial[i] and str(closed) == str(serial[i])
            got = fcore.tree_util.tree_leaves(fcore.jit(FUNCTIONS[i])(X))
            for a, b in zip(got, values[i]):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)

    _run_together(work)


def test_threads_tracing_one_function_with_different_shapes() -> None:
    jf = fcore.jit(lambda x: fnp.sum(fnp.sin(x)) * x)
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        x = np.arange(i + 1, dtype=np.float32)
        barrier.wait()
        for _ in range(5):
            np.testing.assert_allclose(jf(x), np.sum(np.sin(x)) * x, rtol=1e-5)

    _run_together(work)


def test_asyncio_tasks_trace_independently() -> None:
    async def trace(i: int) -> str:
        await asyncio.sleep(0)
        with fcore.enable_x64(i % 2 == 0):
            await asyncio.sleep(0)  # other tasks run inside this block
            return str(fcore.make_jaxpr(FUNCTIONS[i])(np.asarray(X, np.float64)))

    async def main() -> list[str]:
        return list(await asyncio.gather(*(trace(i) for i in range(8))))

    texts = asyncio.run(main())
    for i, text in enumerate(texts):
        with fcore.enable_x64(i % 2 == 0):
            assert text == str(fcore.make_jaxpr(FUNCTIONS[i])(np.asarray(X, np.float64)))
        assert ("f64" in text) == (i % 2 == 0)


@pytest.fixture
def restore_config() -> Iterator[None]:
    yield
    fcore.config.update("enable_x64", False)
    fcore.config.update("numpy_dtype_promotion", "standard")


def _in_new_thread(f: Callable[[], Any]) -> Any:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(f).result()


@pytest.mark.usefixtures("restore_config")
def test_config_update_is_process_wide_as_in_jax() -> None:
    fcore.config.update("jax_enable_x64", True)
    assert fnp.asarray(1.0).dtype == np.float64
    assert _in_new_thread(lambda: fnp.asarray(1.0).dtype) == np.float64  # threads see it
    assert asyncio.run(_async_dtype()) == np.float64
    assert fcore.config.read("enable_x64") is True and fcore.config.jax_enable_x64
    with fcore.enable_x64(False):  # a context-local override wins over the global value
        assert fnp.asarray(1.0).dtype == np.float32
        assert _in_new_thread(lambda: fnp.asarray(1.0).dtype) == np.float64
    fcore.config.update("enable_x64", False)
    assert _in_new_thread(lambda: fnp.asarray(1.0).dtype) == np.float32
    # jax's config.update is process-wide too
    jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
    try:
        assert _in_new_thread(lambda: jax.numpy.asarray(1.0).dtype) == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)  # type: ignore[no-untyped-call]


async def _async_dtype() -> Any:
    return fnp.asarray(1.0).dtype


@pytest.mark.usefixtures("restore_config")
def test_config_update_promotion_and_errors() -> None:
    fcore.config.update("jax_numpy_dtype_promotion", "strict")
    assert _in_new_thread(promotion_mode) == "strict"
    with pytest.raises(TypePromotionError):
        fnp.add(np.float32(1), np.int32(1))
    with fcore.numpy_dtype_promotion("standard"):
        assert fnp.add(np.float32(1), np.int32(1)).dtype == np.float32
    fcore.config.update("numpy_dtype_promotion", "standard")
    with pytest.raises(AttributeError, match="Unrecognized config option: no_such_option"):  # as jax
        fcore.config.update("no_such_option", True)
    with pytest.raises(ValueError, match="standard"):
        fcore.config.update("numpy_dtype_promotion", "loose")


def test_context_managers_are_context_local() -> None:
    seen: dict[str, Any] = {}
    inside = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with fcore.enable_x64(), fcore.numpy_dtype_promotion("strict"):  # no argument: enable
            seen["holder"] = (x64_enabled(), promotion_mode(), fnp.asarray(1.0).dtype)
            inside.set()
            release.wait()

    t = threading.Thread(target=holder)
    t.start()
    inside.wait()
    seen["other"] = (x64_enabled(), promotion_mode(), fnp.asarray(1.0).dtype)  # while the block is open
    release.set()
    t.join()
    assert seen["holder"] == (True, "strict", np.float64)
    assert seen["other"] == (False, "standard", np.float32)
    assert not x64_enabled()


def test_enable_x64_without_argument_enables_and_restores() -> None:
    assert not x64_enabled()
    with fcore.enable_x64():
        assert fcore.config.read("enable_x64") is True and fnp.arange(3).dtype == np.int64
        with fcore.enable_x64(False):
            assert fnp.arange(3).dtype == np.int32
        assert fnp.arange(3).dtype == np.int64
    assert fnp.arange(3).dtype == np.int32

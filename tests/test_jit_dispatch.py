"""``fcore.jit`` dispatch: the cached fast path must behave exactly like a fresh call.

Retracing happens only for new avals (shape, dtype, weak type), new static arguments or
a new x64 mode; outputs keep their weak types and tree structure; consts, host-only
arrays, transformations, ``clear_caches`` and runtime errors all keep working.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.api import jit as jit_mod
from fcore.api.jit import Jitted
from fcore.backend import DeviceBuffer, XlaRuntimeError, runtime
from fcore.interpreters.array import ArrayImpl
from fcore.lax import call as call_mod


def _counting(fun: Any) -> tuple[Any, list[int]]:
    traces = [0]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        traces[0] += 1
        return fun(*args, **kwargs)

    return wrapped, traces


X = np.arange(8, dtype=np.float32)


def test_cached_call_does_not_retrace_and_is_correct() -> None:
    fun, traces = _counting(lambda x, y: x * y + 1)
    f = fcore.jit(fun)
    a, b = fcore.device_put(X), fcore.device_put(X * 2)
    for _ in range(3):
        out = f(a, b)
        assert type(out) is ArrayImpl
        np.testing.assert_array_equal(np.asarray(out.block_until_ready()), X * X * 2 + 1)
        assert out.dtype == np.float32 and out.shape == (8,) and not out.weak_type
    assert traces[0] == 1


def test_retrace_on_new_shape_dtype_and_weak_type() -> None:
    fun, traces = _counting(lambda x: x * 2)
    f = fcore.jit(fun)
    f(fcore.device_put(X))
    f(fcore.device_put(X + 1))
    assert traces[0] == 1
    f(fcore.device_put(X[:4]))
    assert traces[0] == 2
    f(fcore.device_put(X.astype(np.int32)))
    assert traces[0] == 3
    weak = f(fcore.device_put(1.5))  # a Python float: weakly typed f32[]
    assert traces[0] == 4
    assert weak.weak_type and weak.dtype == np.float32
    strong = f(fcore.device_put(np.float32(1.5)))
    assert traces[0] == 5
    assert not strong.weak_type
    f(fcore.device_put(1.5))
    assert traces[0] == 5


def test_weak_type_outputs_and_mixed_arguments() -> None:
    f = fcore.jit(lambda x, s: (x + s, s * 2, 3.0))
    a = fcore.device_put(X)
    for _ in range(2):
        y, s2, c = f(a, fcore.device_put(2.0))
        np.testing.assert_array_equal(np.asarray(y), X + 2)
        assert not y.weak_type
        assert s2.weak_type and float(s2) == 4.0
        const: object = c  # typed float (the lambda's), but a Python constant comes back an Array
        assert isinstance(const, fcore.Array) and const.weak_type and float(const) == 3.0
    # numpy and Python scalars take the general path with the same results
    y, s2, _ = f(X, 2.0)
    np.testing.assert_array_equal(np.asarray(y), X + 2)
    assert s2.weak_type


def test_x64_mode_is_part_of_the_key() -> None:
    fun, traces = _counting(lambda x: x + 1.0)
    f = fcore.jit(fun)
    a = fcore.device_put(np.arange(3, dtype=np.int32))
    assert f(a).dtype == np.float32
    with fcore.enable_x64():
        assert f(a).dtype == np.float64
    assert f(a).dtype == np.float32
    assert traces[0] == 2


def test_a_process_wide_update_inside_a_with_block_reaches_the_cached_call() -> None:
    """The cached path reads one context-local snapshot of the settings; a ``config.update``
    made inside an ``enable_x64``/``debug_nans`` block must still change what it sees."""
    fun, traces = _counting(lambda x: x * 2.0)
    f = fcore.jit(fun)
    a = fcore.device_put(np.arange(3, dtype=np.float32))
    with fcore.enable_x64(False), fcore.debug_nans(False):
        f(a), f(a)
        assert traces[0] == 1
        fcore.config.update("jax_default_matmul_precision", "highest")
        try:
            f(a), f(a)
            assert traces[0] == 2  # traced again under the new precision, once
        finally:
            fcore.config.update("jax_default_matmul_precision", None)
        fcore.config.update("jax_disable_jit", True)
        try:
            f(a), f(a)
            assert traces[0] == 4  # op by op: the function runs each time
        finally:
            fcore.config.update("jax_disable_jit", False)
        f(a)
        assert traces[0] == 4
    with fcore.default_matmul_precision("highest"):
        f(a)
        assert traces[0] == 4  # the specialization traced under "highest" above
    with fcore.disable_jit():
        f(a)
    assert traces[0] == 5


def test_output_trees() -> None:
    a = fcore.device_put(X)
    single_tuple = fcore.jit(lambda x: (x + 1,))
    out = single_tuple(a)
    assert isinstance(out, tuple) and len(out) == 1
    np.testing.assert_array_equal(np.asarray(single_tuple(a)[0]), X + 1)
    as_dict = fcore.jit(lambda x: {"s": x.sum(), "d": [x * 2, None]})
    for _ in range(2):
        d = as_dict(a)
        assert set(d) == {"s", "d"} and d["d"][1] is None
        np.testing.assert_allclose(float(d["s"]), X.sum())
        np.testing.assert_array_equal(np.asarray(d["d"][0]), X * 2)
    nothing = fcore.jit(lambda x: None)
    assert nothing(a) is None and nothing(a) is None


def test_consts_are_put_once_and_used() -> None:
    host_const = np.linspace(0, 1, 8, dtype=np.float32)
    dev_const = fcore.device_put(np.full(8, 3.0, np.float32))
    f = fcore.jit(lambda x: x * host_const + dev_const)
    a = fcore.device_put(X)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(a)), X * host_const + 3.0, rtol=1e-6)


def test_host_only_arrays_get_a_device_copy() -> None:
    f = fcore.jit(lambda x: x - 1)
    host = fnp.asarray(X) * 1.0  # eager: host data, no device copy yet
    assert isinstance(host, ArrayImpl)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(host)), X - 1)


def test_static_argnums_and_kwargs() -> None:
    fun, traces = _counting(lambda x, n, scale=1.0: x * n * scale)
    f = fcore.jit(fun, static_argnums=1)
    a = fcore.device_put(X)
    np.testing.assert_array_equal(np.asarray(f(a, 2)), X * 2)
    np.testing.assert_array_equal(np.asarray(f(a, 2)), X * 2)
    assert traces[0] == 1
    np.testing.assert_array_equal(np.asarray(f(a, 3)), X * 3)
    assert traces[0] == 2
    np.testing.assert_array_equal(np.asarray(f(a, 3, scale=fcore.device_put(np.float32(2)))), X * 6)
    g = fcore.jit(lambda x, y: x - y)
    np.testing.assert_array_equal(np.asarray(g(a, y=a)), X * 0)
    np.testing.assert_array_equal(np.asarray(g(x=a, y=a)), X * 0)


def test_cached_function_under_transformations() -> None:
    f = fcore.jit(lambda x: fnp.sin(x) * x)
    a = fcore.device_put(X)
    f(a)  # the cached fast path is populated first
    grad = fcore.grad(lambda x: f(x).sum())(a)
    np.testing.assert_allclose(np.asarray(grad), np.cos(X) * X + np.sin(X), rtol=1e-5, atol=1e-6)
    batched = fcore.vmap(f)(fcore.device_put(X.reshape(2, 4)))
    np.testing.assert_allclose(np.asarray(batched), (np.sin(X) * X).reshape(2, 4), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(a)), np.sin(X) * X, rtol=1e-6)


def test_clear_caches_forgets_executables() -> None:
    f = fcore.jit(lambda x: x + 2)
    a = fcore.device_put(X)
    f(a)
    fcore.clear_caches()
    assert not call_mod._compiled
    np.testing.assert_array_equal(np.asarray(f(a)), X + 2)
    assert len(call_mod._compiled) >= 1


def test_deleted_argument_raises() -> None:
    f = fcore.jit(lambda x: x + 1)
    a = fcore.device_put(X)
    f(a)
    b = fcore.device_put(X)
    buf = b.device_buffer()
    assert isinstance(buf, DeviceBuffer)
    buf.delete()
    with pytest.raises(XlaRuntimeError):
        f(b).block_until_ready()


def test_wrong_arity_and_tracer_leaks_still_raise() -> None:
    f = fcore.jit(lambda x, y: x + y)
    a = fcore.device_put(X)
    f(a, a)
    with pytest.raises(TypeError):
        f(a)  # type: ignore[call-arg]  # the wrong arity is the point
    leaked: list[Any] = []

    def leak(x: Any) -> Any:
        leaked.append(x)
        return x

    fcore.grad(leak)(1.0)
    with pytest.raises(fcore.UnexpectedTracerError):
        f(leaked[0], a)


def test_cached_call_takes_the_fast_path_and_puts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    host_const = np.linspace(0, 1, 8, dtype=np.float32)
    f = fcore.jit(lambda x, y: (x * y + host_const, x))
    a, b = fcore.device_put(X), fcore.device_put(X + 1)
    f(a, b)
    one = fcore.jit(lambda x: x * 2)
    one(a)
    # a variadic function called with one and with two arrays: both calls share one list of
    # positional candidates, told apart by their avals' lists
    add_all = fcore.jit(lambda *xs: sum(xs[1:], xs[0]))
    add_all(a)
    add_all(a, b)

    def no_slow_path(*args: Any) -> Any:
        raise AssertionError("cached call left the fast path")

    def no_put(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("cached call copied a host value to the device")

    monkeypatch.setattr(Jitted, "_call", no_slow_path)
    monkeypatch.setattr(runtime, "device_put", no_put)
    out, same = f(a, b)
    np.testing.assert_allclose(np.asarray(out), X * (X + 1) + host_const, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(same), X)
    again, _ = f(out, same)  # arrays the fast path returned are fast-path arguments too
    np.testing.assert_allclose(np.asarray(again), (X * (X + 1) + host_const) * X + host_const, rtol=1e-6)
    doubled = one(one(a))  # the one-result case, which the fast path wraps itself
    assert type(doubled) is type(a) and doubled.aval == a.aval and not doubled.weak_type
    np.testing.assert_array_equal(np.asarray(doubled), X * 4)
    np.testing.assert_array_equal(np.asarray(add_all(a, b)), 2 * X + 1)
    np.testing.assert_array_equal(np.asarray(add_all(b)), X + 1)


def test_pytree_and_keyword_calls_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    fun, traces = _counting(lambda p, *, s: {"sum": p["a"] + p["b"][0], "s": s * 2})
    f = fcore.jit(fun)
    p = fcore.device_put({"a": X, "b": [X + 1]})
    s = fcore.device_put(X[:2])
    f(p, s=s)
    monkeypatch.setattr(Jitted, "_call", lambda *args: pytest.fail("cached call left the fast path"))
    out = f(p, s=s)
    np.testing.assert_array_equal(np.asarray(out["sum"]), 2 * X + 1)
    np.testing.assert_array_equal(np.asarray(out["s"]), X[:2] * 2)
    assert traces[0] == 1


def test_host_arguments_take_the_fast_path_as_the_slow_path_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """NumPy arrays and scalars are put on the device by the cached call itself (as JAX's C++
    dispatch does), with the types the slow path gives them: a float64 array narrows without
    x64, a Python scalar is weakly typed, a NumPy scalar is not; each call copies the current
    value; an int the slow path refuses, and a transfer guard, still reach the slow path."""
    fun, traces = _counting(lambda x, k, p: {"y": x * k, "p": p["w"] + 1})
    f = fcore.jit(fun)
    x64 = np.arange(4, dtype=np.float64)

    def call() -> Any:
        return f(x64, 2.0, {"w": np.float32(3)})

    first = call()
    monkeypatch.setattr(Jitted, "_call", lambda *args: pytest.fail("cached call left the fast path"))
    out = call()
    assert traces[0] == 1
    assert out["y"].dtype == np.float32 and not out["y"].weak_type and out["p"].dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out["y"]), np.asarray(first["y"]))
    x64[0] = 10.0  # the value is read at each call
    np.testing.assert_array_equal(np.asarray(call()["y"]), [20.0, 2.0, 4.0, 6.0])
    monkeypatch.undo()
    with pytest.raises(OverflowError, match=r"argument path is args\[1\]"):
        f(x64, 2**40, {"w": np.float32(3)})
    with fcore.transfer_guard_host_to_device("disallow"), pytest.raises(Exception, match="Disallowed host-to-device"):
        call()
    g = fcore.jit(lambda a, b: a + b)
    assert g(np.ones(2, np.int32), 1).dtype == np.int32 and g(np.ones(2, np.int32), 1).dtype == np.int32
    assert g(np.ones(2, np.float32), np.float64(1)).dtype == np.float32


def test_pytree_fast_path_keys_on_every_leaf() -> None:
    fun, traces = _counting(lambda p: p["a"] * p["b"])
    f = fcore.jit(fun)
    a = fcore.device_put(X)
    f({"a": a, "b": fcore.device_put(X)})
    out = f({"a": a, "b": fcore.device_put(2.0)})  # weakly typed f32[]: a new trace
    assert traces[0] == 2 and out.dtype == np.float32 and not out.weak_type
    out = f({"a": a, "b": fcore.device_put(X.astype(np.int32))})  # promotes to f32 in a new trace
    assert traces[0] == 3 and out.dtype == np.float32
    out = f({"a": a, "b": a})  # the first specialization again, by aval equality
    assert traces[0] == 3
    np.testing.assert_array_equal(np.asarray(out), X * X)
    f({"b": a, "a": a, "c": None})  # another tree
    assert traces[0] == 4
    host_only = fnp.asarray(X)  # no device copy yet, no aval asked for yet
    np.testing.assert_array_equal(np.asarray(f({"a": a, "b": host_only})), X * X)
    assert traces[0] == 3 + 1
    deleted = fcore.device_put(X)
    deleted.delete()
    with pytest.raises(RuntimeError):
        f({"a": a, "b": deleted})
    with pytest.raises(TypeError, match="abstract array"):
        f({"a": a, "b": "text"})


def test_unused_arguments_are_not_passed_to_the_program() -> None:
    """As jax (``keep_unused=False``): the program takes only the arguments it uses, so an
    unused argument may even be deleted; a leaked tracer is still an error."""
    f = fcore.jit(lambda p, y: p["a"] * 2)
    a, y = fcore.device_put(X), fcore.device_put(X)
    p = {"a": a, "b": fcore.device_put(X), "c": fcore.device_put(X[:3])}
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(p, y)), X * 2)
    assert f.lower(p, y).compile().memory_analysis().argument_size_in_bytes == X.nbytes
    y.delete()
    np.testing.assert_array_equal(np.asarray(f(p, y)), X * 2)
    leaked: list[Any] = []

    def leak(x: Any) -> Any:
        leaked.append(x)
        return x

    fcore.grad(leak)(1.0)
    g = fcore.jit(lambda x, t: x + 1)
    g(a, fcore.device_put(1.0))
    with pytest.raises(fcore.UnexpectedTracerError):
        g(a, leaked[0])


def test_the_cached_call_runs_in_c_where_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """The install builds ``fcore._fastjit`` (a C compiler is on every machine fcore is set up
    on): a cached call of positional arrays, one result or several, never reaches Python's
    ``_dispatch``; anything else (keywords, NumPy arguments, a new type) still does."""
    assert jit_mod.CACHED_CALL_IN_C
    f = fcore.jit(lambda x, y: x * y + 1)
    t = fcore.jit(lambda x, y: (x * y, [x + y]))
    a, b = fcore.device_put(X), fcore.device_put(X + 1)
    f(a, b), t(a, b)
    python_calls: list[int] = []
    python_dispatch = Jitted._dispatch

    def counted(self: Jitted[Any, Any], *args: Any, **kwargs: Any) -> Any:
        python_calls.append(1)
        return python_dispatch(self, *args, **kwargs)

    monkeypatch.setattr(Jitted, "_dispatch", counted)
    out = f(a, b)
    prod, [total] = t(out, b)
    assert python_calls == []
    assert type(out) is ArrayImpl and out.aval == a.aval and not out.weak_type
    np.testing.assert_array_equal(np.asarray(prod), (X * (X + 1) + 1) * (X + 1))
    np.testing.assert_array_equal(np.asarray(total), X * (X + 1) + 1 + X + 1)
    f(a, y=b)
    f(X, b)
    f(a[:4], b[:4])
    assert python_calls == [1, 1, 1]


def test_the_python_cached_call_serves_where_the_extension_is_missing() -> None:
    """Without ``fcore._fastjit`` (no C compiler at install) ``Jitted`` calls its Python
    ``_dispatch``: the same results, the same cached path."""
    script = """
import sys
sys.modules["fcore._fastjit"] = None  # as if never built: importing it raises ImportError
import numpy as np
import fcore
from fcore.api import jit as jit_mod
assert not jit_mod.CACHED_CALL_IN_C and jit_mod.Jitted.__call__ is jit_mod.Jitted._dispatch
traces = []
f = fcore.jit(lambda x, y: (traces.append(1), (x * y, x + y))[1])
a, b = fcore.device_put(np.arange(3.0, dtype=np.float32)), fcore.device_put(np.ones(3, np.float32))
for _ in range(3):
    p, s = f(a, b)
assert len(traces) == 1, traces
print(np.asarray(p).tolist(), np.asarray(s).tolist(), fcore.jit(lambda x: x * 2)(1.5).weak_type)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0.0, 1.0, 2.0] [1.0, 2.0, 3.0] True"


def test_a_cached_launch_that_fails_runs_once() -> None:
    """An error raised while the cached call runs its program (here a callback's) is the call's
    error: the program is not run a second time to find out why."""
    calls: list[int] = []

    def host(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("the host function failed")
        return x

    f = fcore.jit(lambda x: fcore.pure_callback(host, fcore.ShapeDtypeStruct((8,), np.float32), x))
    a = fcore.device_put(X)
    f(a)
    with pytest.raises(XlaRuntimeError, match="the host function failed"):
        f(a)
    assert len(calls) == 2

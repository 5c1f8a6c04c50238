"""``fcore.pure_callback`` and ``fcore.experimental.io_callback`` against JAX: values, the calls
the Python function receives (count, shapes, order) under jit and vmap, and errors."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.backend
import fcore.numpy as fnp
from fcore import lax

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
Y = np.float32(10.0)


def _recorder(log: list[Any]) -> Callable[..., Any]:
    def cb(x: Any, y: Any) -> Any:
        x, y = np.asarray(x), np.asarray(y)
        log.append((x.shape, y.shape))
        return (x * y.reshape(y.shape + (1,) * (x.ndim - y.ndim))).astype(np.float32)

    return cb


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all", "legacy_vectorized"])
@pytest.mark.parametrize("jitted", [False, True])
def test_pure_callback_vmap_methods(method: str, jitted: bool) -> None:
    logs: dict[str, list[Any]] = {"fcore": [], "jax": []}

    def run(pkg: Any, np_: Any, which: str) -> Any:
        cb = _recorder(logs[which])

        def f(x: Any, y: Any) -> Any:
            spec = pkg.ShapeDtypeStruct(x.shape, np_.float32)
            return pkg.pure_callback(cb, spec, x, y, vmap_method=method)

        g = pkg.vmap(f, in_axes=(0, None))
        return (pkg.jit(g) if jitted else g)(X, Y)

    ours, theirs = run(fcore, fnp, "fcore"), run(jax, jnp, "jax")
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert logs["fcore"] == logs["jax"]


def test_pure_callback_pytrees_and_values() -> None:
    def cb(d: Any) -> Any:
        return {"s": np.sum(np.asarray(d["a"])).astype(np.float32), "t": (np.asarray(d["b"]) * 2).astype(np.int32)}

    def run(pkg: Any) -> Any:
        spec = {"s": pkg.ShapeDtypeStruct((), np.float32), "t": pkg.ShapeDtypeStruct((2,), np.int32)}
        return pkg.jit(lambda d: pkg.pure_callback(cb, spec, d))({"a": X, "b": np.array([1, 2], np.int32)})

    ours, theirs = run(fcore), run(jax)
    assert ours.keys() == theirs.keys()
    for k in ours:
        np.testing.assert_array_equal(np.asarray(ours[k]), np.asarray(theirs[k]))
        assert np.asarray(ours[k]).dtype == np.asarray(theirs[k]).dtype


def test_pure_callback_without_vmap_method_cannot_vmap() -> None:
    f = fcore.vmap(lambda x: fcore.pure_callback(lambda v: v, fcore.ShapeDtypeStruct((3,), np.float32), x))
    with pytest.raises(NotImplementedError, match="vmap_method"):
        f(X)


def test_pure_callback_wrong_result_type_errors() -> None:
    bad = lambda v: np.zeros(4, np.float32)  # noqa: E731
    spec = fcore.ShapeDtypeStruct((3,), np.float32)
    with pytest.raises(RuntimeError, match="Incorrect output shape for return value #0"):
        fcore.pure_callback(bad, spec, X[0])
    with pytest.raises(fcore.backend.XlaRuntimeError, match="Incorrect output shape for return value #0"):
        fcore.jit(lambda x: fcore.pure_callback(bad, spec, x))(X[0])


def test_pure_callback_is_not_differentiable() -> None:
    f = lambda x: fcore.pure_callback(lambda v: v, fcore.ShapeDtypeStruct((), np.float32), x)  # noqa: E731
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        fcore.grad(f)(1.0)


def test_callback_error_surfaces_with_traceback() -> None:
    def failing(v: Any) -> Any:
        raise KeyError("raised inside the callback")

    spec = fcore.ShapeDtypeStruct((3,), np.float32)
    with pytest.raises(KeyError):
        fcore.pure_callback(failing, spec, X[0])
    with pytest.raises(fcore.backend.XlaRuntimeError) as info:
        fcore.jit(lambda x: fcore.experimental.io_callback(failing, spec, x))(X[0])
    assert "Traceback" in str(info.value) and "in failing" in str(info.value) and "raised inside" in str(info.value)


def _io_program(pkg: Any, lax_: Any, io_callback: Any, log: list[Any], ordered: bool) -> Callable[[Any], Any]:
    def rec(tag: str) -> Callable[[Any], Any]:
        def cb(v: Any) -> Any:
            log.append((tag, np.asarray(v).tolist()))
            return np.asarray(v) + 1

        return cb

    spec = pkg.ShapeDtypeStruct((), np.float32)

    def f(x: Any) -> Any:
        a = io_callback(rec("first"), spec, x, ordered=ordered)
        io_callback(rec("unused"), spec, x * 3, ordered=ordered)  # result unused: still called
        b = io_callback(rec("second"), spec, a * 2, ordered=ordered)

        def body(c: Any, xi: Any) -> Any:
            return c + io_callback(rec("loop"), spec, xi, ordered=ordered), None

        c, _ = lax_.scan(body, b, x + np.arange(3, dtype=np.float32))
        return c

    return f


@pytest.mark.parametrize("ordered", [True, False])
def test_io_callback_calls_and_order_match_jax(ordered: bool) -> None:
    ours: list[Any] = []
    theirs: list[Any] = []
    r1 = fcore.jit(_io_program(fcore, lax, fcore.experimental.io_callback, ours, ordered))(np.float32(1.0))
    r2 = jax.jit(_io_program(jax, jax.lax, jax.experimental.io_callback, theirs, ordered))(np.float32(1.0))
    jax.effects_barrier()  # type: ignore[no-untyped-call]
    fcore.effects_barrier()
    np.testing.assert_array_equal(np.asarray(r1), np.asarray(r2))
    if ordered:
        assert ours == theirs
    else:
        assert sorted(ours) == sorted(theirs)
    eager: list[Any] = []
    np.testing.assert_array_equal(
        np.asarray(_io_program(fcore, lax, fcore.experimental.io_callback, eager, ordered)(np.float32(1.0))),
        np.asarray(r2),
    )
    assert eager == theirs if ordered else sorted(eager) == sorted(theirs)


def test_io_callback_vmap() -> None:
    def run(pkg: Any, log: list[Any]) -> Any:
        def cb(v: Any) -> Any:
            log.append(np.asarray(v).tolist())
            return np.asarray(v) * 2

        f = lambda x: pkg.experimental.io_callback(cb, pkg.ShapeDtypeStruct((3,), np.float32), x)  # noqa: E731
        return pkg.jit(pkg.vmap(f))(X)

    ours: list[Any] = []
    theirs: list[Any] = []
    np.testing.assert_array_equal(np.asarray(run(fcore, ours)), np.asarray(run(jax, theirs)))
    assert ours == theirs
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        fcore.vmap(lambda x: fcore.experimental.io_callback(lambda v: v, fcore.ShapeDtypeStruct((3,), np.float32), x,
                                                            ordered=True))(X)


def test_io_callback_ordered_across_calls() -> None:
    log: list[int] = []

    def cb(v: Any) -> Any:
        log.append(int(np.asarray(v)))
        return np.asarray(v)

    f = fcore.jit(lambda x: fcore.experimental.io_callback(cb, fcore.ShapeDtypeStruct((), np.int32), x, ordered=True))
    for i in range(5):
        f(np.int32(i))
        fcore.experimental.io_callback(cb, fcore.ShapeDtypeStruct((), np.int32), np.int32(100 + i), ordered=True)
    fcore.effects_barrier()
    assert log == [0, 100, 1, 101, 2, 102, 3, 103, 4, 104]


def _nested_program(pkg: Any, lax_: Any, log: list[Any]) -> Callable[[Any], Any]:
    """Ordered callbacks before, inside and after nested jit, scan, while, cond and remat."""

    def rec(tag: str) -> Callable[[Any], Any]:
        def cb(v: Any) -> Any:
            log.append((tag, float(np.asarray(v))))
            return np.asarray(v)

        return cb

    spec = pkg.ShapeDtypeStruct((), np.float32)

    def io(tag: str, v: Any) -> Any:
        return pkg.experimental.io_callback(rec(tag), spec, v, ordered=True)

    def f(x: Any) -> Any:
        x = io("start", x)
        x = pkg.jit(lambda v: io("jit", v) + 1)(x)
        x, _ = lax_.scan(lambda c, xi: (io("scan", c + xi), None), x, np.arange(2, dtype=np.float32))
        x = lax_.while_loop(lambda c: c < 10, lambda c: io("while", c * 2), x)
        x = lax_.cond(x > 5, lambda v: io("then", v), lambda v: v - 1, x)
        x = pkg.checkpoint(lambda v: io("remat", v) * 3)(x)
        pkg.debug.print("{}", x, ordered=True)
        return io("end", x)

    return f


def test_ordered_callbacks_in_nested_control_flow_run_in_program_order() -> None:
    ours: list[Any] = []
    theirs: list[Any] = []
    r1 = fcore.jit(_nested_program(fcore, lax, ours))(np.float32(0.5))
    r2 = jax.jit(_nested_program(jax, jax.lax, theirs))(np.float32(0.5))
    jax.effects_barrier()  # type: ignore[no-untyped-call]
    assert float(r1) == float(r2)
    assert ours == theirs and len(ours) == 9
    eager: list[Any] = []
    _nested_program(fcore, lax, eager)(np.float32(0.5))
    assert eager == theirs


def test_ordered_effects_in_while_cond_run_in_order() -> None:
    def run(pkg: Any, lax_: Any) -> Any:
        def cond(c: Any) -> Any:
            pkg.debug.print("cond {}", c, ordered=True)
            return c < 3

        def body(c: Any) -> Any:
            pkg.debug.print("body {}", c, ordered=True)
            return c + 1

        return lambda: pkg.jit(lambda x: lax_.while_loop(cond, body, x))(0)

    outs = []
    for pkg, lax_ in ((fcore, lax), (jax, jax.lax)):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert int(run(pkg, lax_)()) == 3
            jax.effects_barrier()  # type: ignore[no-untyped-call]
        outs.append(buf.getvalue())
    assert outs[0] == outs[1]
    assert outs[0].splitlines()[:3] == ["cond 0", "body 0", "cond 1"]

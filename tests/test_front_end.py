"""JAX's smaller front-end names against JAX: ``eval_shape``, ``typeof``, ``lax.map`` (with
``batch_size``), ``disable_jit``, ``ensure_compile_time_eval``, ``named_scope``/``named_call``,
``block_until_ready`` on pytrees, ``Array.devices``."""

from __future__ import annotations

import threading
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

import fcore
import fcore.numpy as fnp
from fcore.api.front_end import current_name_stack


def test_eval_shape_matches_jax() -> None:
    def f(pkg: Any) -> Any:
        return lambda x, y, s: {"mm": x @ y, "sum": x.sum(), "scaled": x * s}

    args = (np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), 2.0)
    ours = fcore.eval_shape(f(fcore), fcore.ShapeDtypeStruct((2, 3), np.float32), *args[1:])
    spec = jax.ShapeDtypeStruct((2, 3), jnp.float32)  # type: ignore[no-untyped-call]
    theirs = jax.eval_shape(f(jax), spec, *args[1:])
    assert ours.keys() == theirs.keys()
    for k in ours:
        assert (ours[k].shape, ours[k].dtype, ours[k].weak_type) == (theirs[k].shape, theirs[k].dtype, theirs[k].weak_type)
        assert isinstance(ours[k], fcore.ShapeDtypeStruct)


def test_shape_dtype_struct_like_matches_jax() -> None:
    # pure_callback's result spec in the external-callbacks tutorial is ShapeDtypeStruct.like(x).
    for x in (1.0, np.zeros((2,), np.int64), np.float32(1.0)):
        ours = fcore.ShapeDtypeStruct.like(x)
        theirs = jax.ShapeDtypeStruct.like(x)
        assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype, theirs.weak_type)
    assert fcore.ShapeDtypeStruct.like(fnp.arange(3.0)).shape == (3,)


def test_eval_shape_computes_nothing() -> None:
    calls: list[int] = []

    def f(x: Any) -> Any:
        fcore.debug.callback(lambda v: calls.append(1), x)
        return fnp.sin(x)

    out = fcore.eval_shape(f, fcore.ShapeDtypeStruct((3,), np.float32))
    assert (out.shape, out.dtype) == ((3,), np.float32) and calls == []


@pytest.mark.parametrize("x", [1.0, 3, True, 1j, np.ones(3, np.float32), np.int8(2), np.zeros((2, 0), jnp.bfloat16)])
def test_typeof_matches_jax(x: Any) -> None:
    ours, theirs = fcore.typeof(x), jax.typeof(x)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)  # ShapedArray(float32[3]), ~float32[]
    assert ours.str_short() == theirs.str_short()
    assert ours.str_short(short_dtypes=True) == theirs.str_short(short_dtypes=True)
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        fcore.typeof("text")


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 9), batch_size=st.one_of(st.none(), st.integers(1, 4)))
def test_lax_map_matches_jax(n: int, batch_size: int | None) -> None:
    xs = {"a": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "b": np.arange(n, dtype=np.int32)}

    def f(pkg: Any) -> Any:
        return lambda d: (pkg.numpy.sum(d["a"]) * d["b"], d["a"][::-1])

    ours = fcore.lax.map(f(fcore), xs, batch_size=batch_size)
    theirs = jax.lax.map(f(jax), xs, batch_size=batch_size)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert np.asarray(a).dtype == np.asarray(b).dtype


def test_lax_map_batches_are_vmapped() -> None:
    j = fcore.make_jaxpr(lambda xs: fcore.lax.map(fnp.sin, xs, batch_size=2))(np.arange(5.0, dtype=np.float32))
    names = [e.primitive.name for e in j.eqns]
    assert names.count("scan") == 1 and "concatenate" in names
    scan_eqn = next(e for e in j.eqns if e.primitive.name == "scan")
    assert scan_eqn.params["length"] == 2


def test_disable_jit_runs_op_by_op() -> None:
    seen: list[type] = []

    @fcore.jit
    def f(x: Any) -> Any:
        seen.append(type(x))
        return x + 1

    with fcore.disable_jit():
        assert float(f(1.5)) == 2.5
        assert fcore.config.read("jax_disable_jit") is True
    assert seen == [float]  # a plain call: no tracer
    f(1.5)
    assert seen[1] is not float  # traced again outside the block
    assert fcore.config.read("disable_jit") is False


def test_disable_jit_is_context_local() -> None:
    inner: list[bool] = []
    with fcore.disable_jit():
        t = threading.Thread(target=lambda: inner.append(bool(fcore.config.read("disable_jit"))))
        t.start()
        t.join()
    assert inner == [False]


def test_ensure_compile_time_eval_gives_concrete_values() -> None:
    def f(x: Any) -> Any:
        with fcore.ensure_compile_time_eval():
            n = fnp.arange(3).sum()
            k = int(n)  # concrete, even under jit
        return x * k

    assert float(fcore.jit(f)(2.0)) == 6.0
    assert [e.primitive.name for e in fcore.make_jaxpr(f)(2.0).eqns] == ["mul"]


def test_named_scope_and_named_call_keep_behaviour() -> None:
    stacks: list[tuple[str, ...]] = []

    def inner(v: Any) -> Any:
        stacks.append(current_name_stack())
        return v * 2

    def f(x: Any) -> Any:
        with fcore.named_scope("outer"):
            y = fcore.named_call(inner, name="dbl")(fnp.sin(x))
        return y + fcore.named_call(inner)(x)

    np.testing.assert_allclose(fcore.jit(f)(1.0), jax.jit(lambda x: jnp.sin(x) * 2 + x * 2)(1.0), rtol=1e-6)
    assert stacks == [("outer", "dbl"), ("inner",)]
    assert current_name_stack() == ()
    with pytest.raises(TypeError, match="must be a string"):
        with fcore.named_scope(3):  # type: ignore[arg-type]
            pass


def test_block_until_ready_on_pytrees_and_devices() -> None:
    tree = {"a": fnp.ones(3), "b": [fcore.jit(fnp.sin)(np.float32(1.0)), 2.0]}
    assert fcore.block_until_ready(tree) is tree
    assert tree["a"].devices() == {fcore.devices()[0]}


def _control_flow_program(pkg: Any, seen: list[Any]) -> Any:
    lax_ = pkg.lax

    def f(x: Any) -> Any:
        def body(c: Any, xi: Any) -> Any:
            seen.append(type(c).__name__)  # a concrete array each iteration when jit is disabled
            return c + xi, c * 2

        c, ys = lax_.scan(body, x, np.arange(3, dtype=np.float32), reverse=True)
        w = lax_.while_loop(lambda v: v < 20, lambda v: v * 3, c)
        k = lax_.fori_loop(0, 3, lambda i, v: v + i, w)
        k = lax_.fori_loop(2, 2, lambda i, v: v + i, k)
        s = lax_.switch(5, [lambda v: v - 1, lambda v: v + 1], k)
        return lax_.cond(s > 0, lambda v: v * 10, lambda v: v, s), ys

    return f


def test_disable_jit_runs_control_flow_in_python() -> None:
    ours_seen: list[Any] = []
    theirs_seen: list[Any] = []
    with fcore.disable_jit():
        ours = fcore.jit(_control_flow_program(fcore, ours_seen))(np.float32(1.0))
    with jax.disable_jit():
        theirs = jax.jit(_control_flow_program(jax, theirs_seen))(np.float32(1.0))
    for a, b in zip(fcore.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert len(ours_seen) == len(theirs_seen) == 3 and "StagingTracer" not in ours_seen
    staged: list[Any] = []
    fcore.jit(_control_flow_program(fcore, staged))(np.float32(1.0))
    assert staged == ["StagingTracer"]  # traced once, as usual, outside the block


def test_disable_jit_while_under_vmap_falls_back_to_the_primitive() -> None:
    f = fcore.vmap(lambda v: fcore.lax.while_loop(lambda c: c < 5, lambda c: c + 2, v))
    with fcore.disable_jit():
        np.testing.assert_array_equal(f(np.arange(3)), np.array([6, 5, 6]))


def test_tracers_print_as_jax_prints_them() -> None:
    """``print(x)`` inside a transformation: JitTracer, GradTracer, VmapTracer, JVPTracer."""

    def seen(lib: Any) -> list[str]:
        out: list[str] = []

        def show(x: Any) -> Any:
            out.append(repr(x))
            out.append(str(x * 2.0))
            return x.sum()

        x = np.ones(3, np.float32)
        lib.jit(show)(x)
        lib.grad(show)(np.float32(1.0))
        lib.vmap(show)(x)
        lib.jvp(show, (x,), (x,))
        lib.jit(lib.grad(show))(np.float32(2.0))
        lib.jit(show)(3.0)  # a weakly typed argument
        return out

    assert seen(fcore) == seen(jax)


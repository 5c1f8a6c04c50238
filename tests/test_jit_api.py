"""``fcore.jit``'s user-facing contract, differentially against ``jax.jit``.

Static and dynamic arguments (numbers, names, keywords, negatives, validation errors),
pytrees in and out, result dtypes and weak types for every dtype, re-tracing (counted by a
side effect), the shared trace cache, donation, the AOT stages and the errors a user sees.
A program is written once against a ``Lib`` namespace and run with fcore and with jax.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import tree_util
from fcore.api.stages import Compiled, Lowered, Traced


class Lib:
    def __init__(self, name: str, ad: Any, np_mod: Any) -> None:
        self.name, self.ad, self.np = name, ad, np_mod


FC = Lib("fcore", fcore, fnp)
JX = Lib("jax", jax, jnp)
LIBS = [FC, JX]


@contextlib.contextmanager
def x64(on: bool) -> Iterator[None]:
    with jax.enable_x64(on), fcore.enable_x64(on):
        yield


def assert_same(got: Any, want: Any) -> None:
    """Same tree; leaf by leaf the same shape, dtype, weak type and values."""
    g_leaves, g_tree = tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree), (g_tree, w_tree)
    for g, w in zip(g_leaves, w_leaves):
        assert isinstance(g, fcore.Array), type(g)
        assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type), (g, w)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def both(run: Callable[[Lib], Any]) -> None:
    assert_same(run(FC), run(JX))


def both_raise(run: Callable[[Lib], Any], exc: type[BaseException]) -> None:
    for L in LIBS:
        with pytest.raises(exc):
            run(L)


def counting(fun: Callable[..., Any]) -> tuple[Callable[..., Any], list[int]]:
    n = [0]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        n[0] += 1
        return fun(*args, **kwargs)

    return wrapped, n


X = np.arange(3, dtype=np.float32)


def scale(x: Any, n: Any = 2) -> Any:
    return x * n


# -- static and dynamic arguments ------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.ad.jit(scale, static_argnums=-1)(X, 3),
        lambda L: L.ad.jit(scale, static_argnums=1)(X, 3),
        lambda L: L.ad.jit(scale, static_argnums=1)(X, n=3),  # a static argument passed by keyword
        lambda L: L.ad.jit(scale, static_argnames="n")(X, 3),  # a static name passed by position
        lambda L: L.ad.jit(scale, static_argnames="n")(X, n=3),
        lambda L: L.ad.jit(scale, static_argnames="n")(X),  # the default is used
        lambda L: L.ad.jit(scale)(x=X, n=3.0),  # keyword arguments are dynamic
        lambda L: L.ad.jit(lambda x, *, n: x * n, static_argnames="n")(X, n=4),
        lambda L: L.ad.jit(lambda x, **kw: x * kw["s"], static_argnames="s")(X, s=5),
        lambda L: L.ad.jit(static_argnames="n")(scale)(X, n=3),  # decorator factory
        lambda L: L.ad.jit(L.np.sum, static_argnames="axis")(np.ones((2, 3)), axis=1),
        lambda L: L.ad.jit(L.np.sin)(1.0),
        lambda L: L.ad.jit(L.np.sin)(X),
    ],
)
def test_static_and_dynamic_arguments(call: Callable[[Lib], Any]) -> None:
    both(call)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.ad.jit(scale, static_argnums=5),
        lambda L: L.ad.jit(scale, static_argnums=-3),
        lambda L: L.ad.jit(scale, static_argnames="zz"),
        lambda L: L.ad.jit(lambda x, /, y: x, static_argnames="x"),
        lambda L: L.ad.jit(scale, donate_argnums=2),
        lambda L: L.ad.jit(scale, static_argnums=1, donate_argnums=1),
    ],
)
def test_invalid_argnums_are_rejected_when_jitting(make: Callable[[Lib], Any]) -> None:
    both_raise(make, ValueError)


def test_bad_jit_targets() -> None:
    both_raise(lambda L: L.ad.jit(3), TypeError)
    both_raise(lambda L: L.ad.jit(scale, static_argnums="a"), TypeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.ad.jit(scale, static_argnums=1)(X, [3]),
        lambda L: L.ad.jit(scale, static_argnames="n")(X, n={"a": 1}),
        lambda L: L.ad.jit(scale, static_argnums=-1)(X, [3]),
    ],
)
def test_unhashable_static_arguments(call: Callable[[Lib], Any]) -> None:
    both_raise(call, ValueError)


def test_static_values_are_compared_by_type_and_value() -> None:
    counts = []
    for L in LIBS:
        fun, n = counting(scale)
        f = L.ad.jit(fun, static_argnums=1)
        seen = []
        for k in [1, 1.0, True, 1, 2, np.int32(2)]:
            f(X, k)
            seen.append(n[0])
        f(X, n=2)  # a keyword is another specialization
        seen.append(n[0])
        counts.append(seen)
    assert counts[0] == counts[1] == [1, 2, 3, 3, 4, 5, 6]


def test_non_array_arguments_and_results() -> None:
    both_raise(lambda L: L.ad.jit(lambda x, y: x)(1.0, "s"), TypeError)
    both_raise(lambda L: L.ad.jit(lambda x: x)(object()), TypeError)
    both_raise(lambda L: L.ad.jit(lambda x: "s")(1.0), TypeError)
    with pytest.raises(TypeError, match=r"path y\."):
        fcore.jit(lambda x, y: x)(1.0, "s")
    with pytest.raises(TypeError, match=re.escape("path d['b'][1].")):
        fcore.jit(lambda d: d)({"a": 1.0, "b": [2.0, "s"]})
    with pytest.raises(TypeError, match=re.escape("Argument 'd['b'][0]' compiled with float32[] and called with int32[]")):
        fcore.jit(lambda d: d).lower({"a": 1.0, "b": [2.0]}).compile()({"a": 1.0, "b": [2]})
    with pytest.raises(TypeError, match=r"<lambda> at .*test_jit_api.py:\d+ traced for jit"):
        fcore.jit(lambda x: "s")(1.0)
    with x64(False):
        both_raise(lambda L: L.ad.jit(lambda x: x)(2**40), OverflowError)


def test_decorated_methods() -> None:
    for L in LIBS:

        class Model:
            def __init__(self) -> None:
                self.k = 2.0

            def _scaled(self, x: Any) -> Any:
                return x * self.k

            plain = L.ad.jit(_scaled)  # as ``@jit`` on the method
            scaled = L.ad.jit(_scaled, static_argnums=0)

        m = Model()
        with pytest.raises(TypeError):  # ``self`` is not an array
            m.plain(X)
        np.testing.assert_array_equal(np.asarray(m.scaled(X)), X * 2)
        assert Model.scaled is not None


# -- pytrees and result types ------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.ad.jit(lambda: 1.0)(),
        lambda L: L.ad.jit(lambda: L.np.arange(3))(),
        lambda L: L.ad.jit(lambda: (1, True, 1.0, 1j, np.float32(1), np.int8(2), np.arange(2)))(),
        lambda L: L.ad.jit(lambda x: None)(1.0),
        lambda L: L.ad.jit(lambda x: ())(1.0),
        lambda L: L.ad.jit(lambda x: {"b": x, "a": (x, None, [])})(1.0),
        lambda L: L.ad.jit(lambda x, y: x)(1.0, None),
        lambda L: L.ad.jit(lambda x, y: (x, y))(1.0, ()),
        lambda L: L.ad.jit(lambda d: (d["a"] * 2, d["b"][0]))({"a": X, "b": [np.int32(1)]}),
        lambda L: L.ad.jit(lambda t: t[0] + t[1])([1.0, 2]),
    ],
)
def test_pytrees_in_and_out(call: Callable[[Lib], Any]) -> None:
    both(call)


DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    ml_dtypes.bfloat16, np.float16, np.float32, np.float64, np.complex64, np.complex128,
]
SCALARS = [1, 1.5, True, 1j, np.float32(1), np.int8(3), np.float64(2), np.int64(5), np.bool_(True), np.uint8(3)]


@pytest.mark.parametrize("mode", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
def test_result_dtypes_for_every_dtype(dtype: Any, mode: bool) -> None:
    a = np.array([1, 0, 3], dtype)
    with x64(mode):
        for make in [lambda x: x, lambda x: x + 1, lambda x: x * 2.0]:
            both(lambda L: L.ad.jit(make)(a))
            both(lambda L: L.ad.jit(make)(a[0]))  # a NumPy scalar
            both(lambda L: L.ad.jit(make)(np.asarray(a[0])))  # a 0-d array
            both(lambda L: L.ad.jit(make)(a[:0].reshape(0, 0)))  # empty
            both(lambda L: L.ad.jit(make)(L.ad.device_put(a)))


@pytest.mark.parametrize("mode", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("scalar", SCALARS, ids=[f"{type(s).__name__}" for s in SCALARS])
def test_result_weak_types_for_scalars(scalar: Any, mode: bool) -> None:
    with x64(mode):
        for make in [lambda x: x, lambda x: x + 1, lambda x: x * 2.0, lambda x: (x, 2, 2.0)]:
            both(lambda L: L.ad.jit(make)(scalar))


# -- re-tracing --------------------------------------------------------------------------------
def test_retraces_only_for_new_types() -> None:
    for L in LIBS:
        fun, n = counting(lambda x: x * 2)
        f = L.ad.jit(fun)
        seen = []
        for arg in [1.0, 2.0, np.float32(1), L.np.asarray(1.0), 1, np.int32(1), True, np.bool_(True),
                    np.ones(3), np.ones(3, np.float32), np.ones(4), L.ad.device_put(np.ones(4))]:
            f(arg)
            seen.append(n[0])
        with x64(True):
            f(1.0)
            seen.append(n[0])
        f(1.0)
        seen.append(n[0])
        assert seen == [1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7, 7, 8, 8], (L.name, seen)


def test_pytree_structure_is_part_of_the_key() -> None:
    for L in LIBS:
        fun, n = counting(lambda t: t[0])
        f = L.ad.jit(fun)
        for arg in [[1.0, 2.0], (1.0, 2.0), [1.0, 2.0]]:
            f(arg)
        assert n[0] == 2


def test_a_failed_trace_is_never_cached() -> None:
    for L in LIBS:
        calls = [0]

        def branchy(x: Any) -> Any:
            calls[0] += 1
            return x if x > 0 else -x

        f = L.ad.jit(branchy)
        for _ in range(2):
            with pytest.raises(TypeError):
                f(1.0)
        assert calls[0] == 2
        g = L.ad.jit(lambda x: x + 1)
        np.testing.assert_array_equal(np.asarray(g(1.0)), 2.0)


def test_jit_objects_of_one_function_share_traces() -> None:
    for L in LIBS:
        n = [0]

        def g(x: Any, k: Any = 1) -> Any:
            n[0] += 1
            return x * k

        seen = []
        for f, args, kwargs in [
            (L.ad.jit(g), (X,), {}),
            (L.ad.jit(g), (X,), {}),
            (L.ad.jit(g, static_argnums=1), (X, 2), {}),
            (L.ad.jit(g, static_argnames="k"), (X, 2), {}),  # resolves to the same options
            (L.ad.jit(g, static_argnames="k"), (X,), {"k": 2}),
        ]:
            f(*args, **kwargs)
            seen.append(n[0])
        assert seen == [1, 1, 2, 2, 3], (L.name, seen)


def test_clear_cache_forgets_traces() -> None:
    fun, n = counting(lambda x: x + 1)
    f = fcore.jit(fun)
    f(X)
    f.clear_cache()
    f(X)
    assert n[0] == 2


# -- closures and transformations --------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.ad.jit(lambda x: x + L.np.arange(3.0))(1.0),
        lambda L: L.ad.grad(lambda y: L.ad.jit(lambda x: x * y)(2.0))(3.0),
        lambda L: L.ad.vmap(lambda y: L.ad.jit(lambda x: x * y)(2.0))(np.arange(3.0)),
        lambda L: L.ad.jit(L.ad.grad(L.ad.jit(lambda x: x**3)))(2.0),
        lambda L: L.ad.jit(lambda x: L.ad.jit(scale, static_argnums=1)(x, 3))(X),
        lambda L: L.ad.jit(lambda x: (L.ad.jit(lambda y: ())(x), x + 1)[1])(X),  # a nested call without results
    ],
)
def test_closures_and_transformations(call: Callable[[Lib], Any]) -> None:
    both(call)


# -- donation ----------------------------------------------------------------------------------
def test_donated_arguments_are_deleted() -> None:
    for L in LIBS:
        a = L.ad.device_put(np.ones(2, np.float32))
        out = L.ad.jit(lambda x: x * 2, donate_argnums=0)(a)
        np.testing.assert_array_equal(np.asarray(out), [2, 2])
        assert a.is_deleted()
        with pytest.raises(RuntimeError, match="deleted"):
            a + 1
        b = L.ad.device_put(np.ones(2, np.float32))
        L.ad.jit(lambda x, y: x * y, donate_argnames="y")(np.ones(2, np.float32), b)
        assert b.is_deleted()
        c = L.ad.device_put(np.ones(2, np.float32))
        with pytest.warns(UserWarning, match="donated buffers were not usable"):
            L.ad.jit(lambda x: x.sum(), donate_argnums=0)(c)
        assert not c.is_deleted()
        np.testing.assert_array_equal(np.asarray(L.ad.jit(lambda x: x + 1, donate_argnums=0)(np.ones(2))), [2, 2])


def test_unusable_donation_warning_points_at_the_call() -> None:
    with pytest.warns(UserWarning, match=r"not usable: float32\[2\]\.") as record:
        fcore.jit(lambda x: x.sum(), donate_argnums=0)(fcore.device_put(np.ones(2, np.float32)))
    assert record[0].filename == __file__


def test_donation_shows_in_the_lowering_and_compiled_call() -> None:
    f = fcore.jit(lambda x, y: (x * y, y), donate_argnums=0)
    lowered = f.lower(X, X)
    assert "tf.aliasing_output = 0" in lowered.as_text()
    assert lowered.donate_argnums == (0,)
    a = fcore.device_put(X)
    lowered.compile()(a, X)
    assert a.is_deleted()


# -- ahead of time -----------------------------------------------------------------------------
def f_aot(x: Any, y: Any) -> Any:
    return {"out": x * y + 1.0, "pair": (x, None)}


def test_aot_stages() -> None:
    traced = fcore.jit(f_aot).trace(X, 2.0)
    assert isinstance(traced, Traced) and traced.fun_name == "f_aot"
    assert str(traced.jaxpr).startswith("{ lambda ; a:f32[3] b:f32[]")
    lowered = traced.lower()
    assert isinstance(lowered, Lowered) and isinstance(fcore.jit(f_aot).lower(X, 2.0), Lowered)
    text = lowered.as_text()
    assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<f32>)" in text and "stablehlo.multiply" in text
    module = lowered.compiler_ir("stablehlo")
    assert type(module) is type(jax.jit(f_aot).lower(X, 2.0).compiler_ir()) and "stablehlo.multiply" in str(module)
    compiled = lowered.compile()
    assert isinstance(compiled, Compiled)
    assert compiled.as_text().startswith("HloModule")
    assert compiled.cost_analysis()["flops"] > 0 and lowered.cost_analysis()["flops"] > 0
    assert compiled.memory_analysis().argument_size_in_bytes == 16
    jtraced = jax.jit(f_aot).trace(X, 2.0)
    for ours, theirs in [(traced, jtraced), (lowered, jtraced.lower()), (compiled, jtraced.lower().compile())]:
        assert str(ours.in_tree) == str(theirs.in_tree) and str(ours.out_tree) == str(theirs.out_tree)
        assert ours.donate_argnums == theirs.donate_argnums
        info, jinfo = tree_util.tree_leaves(ours.args_info), jax.tree_util.tree_leaves(theirs.args_info)
        assert [(i.shape, i.dtype, i.donated) for i in info] == [(i.shape, i.dtype, i.donated) for i in jinfo]
        out, jout = tree_util.tree_leaves(ours.out_info), jax.tree_util.tree_leaves(theirs.out_info)
        assert [(o.shape, o.dtype) for o in out] == [(o.shape, o.dtype) for o in jout]
    assert_same(compiled(X, 2.0), jax.jit(f_aot).lower(X, 2.0).compile()(X, 2.0))
    shape = fcore.jit(f_aot).eval_shape(X, 2.0)["out"]
    assert (shape.shape, shape.dtype, shape.weak_type) == ((3,), np.float32, False)


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c(np.arange(4, dtype=np.float32), 2.0),  # another shape
        lambda c: c(np.arange(3, dtype=np.int32), 2.0),  # another dtype
        lambda c: c(X),  # another tree
        lambda c: c(X, y=2.0),
    ],
)
def test_compiled_rejects_other_argument_types(call: Callable[[Any], Any]) -> None:
    for L in LIBS:
        compiled = L.ad.jit(f_aot).lower(X, 2.0).compile()
        with pytest.raises(TypeError):
            call(compiled)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.ad.jit(f_aot).lower(X, 2.0).compile()(X, np.float32(2.0)),  # weak type differs
        lambda L: L.ad.jit(f_aot).lower(X, 2.0).compile()(X.astype(np.float64), 2.0),  # canonicalized
        lambda L: L.ad.jit(lambda a: a * 2).lower(2.0).compile()(np.float32(3.0)),  # weak result kept
        lambda L: L.ad.jit(lambda a: a * 2).lower(np.float32(2.0)).compile()(3.0),
        lambda L: L.ad.jit(scale, static_argnums=1).lower(X, 3).compile()(X),  # statics are baked in
        lambda L: L.ad.jit(lambda a: a + X).trace(X).lower().compile()(L.ad.device_put(X)),
    ],
)
def test_compiled_calls(call: Callable[[Lib], Any]) -> None:
    both(call)


def test_compiled_refuses_static_arguments_and_tracers() -> None:
    both_raise(lambda L: L.ad.jit(scale, static_argnums=1).lower(X, 3).compile()(X, 3), TypeError)
    for L in LIBS:
        compiled = L.ad.jit(lambda a: a * 2).lower(2.0).compile()
        with pytest.raises(TypeError):
            L.ad.grad(compiled)(2.0)


# -- errors ------------------------------------------------------------------------------------
def branch_on_traced(x: Any) -> Any:
    if x > 0:
        return x
    return -x


def test_python_branch_on_traced_value() -> None:
    both_raise(lambda L: L.ad.jit(branch_on_traced)(1.0), TypeError)
    with pytest.raises(fcore.ConcretizationError) as info:
        fcore.jit(branch_on_traced)(1.0)
    msg = str(info.value)
    assert "jit(branch_on_traced)" in msg
    line = branch_on_traced.__code__.co_firstlineno + 1
    assert re.search(rf"test_jit_api\.py:{line}\b", msg), msg
    assert "static_argnums" in msg and "lax.cond" in msg


def test_xla_compile_error_names_the_primitive_and_equation() -> None:
    bad = fcore.core.Primitive("bad_lowering")
    bad.def_impl(lambda x: x)
    bad.def_abstract_eval(lambda x: x)
    bad.def_lowering(lambda ctx, x: ctx.emit(f"stablehlo.add {x}, {x} : tensor<7xf32>"))
    with pytest.raises(RuntimeError) as info:
        fcore.jit(lambda x: bad.bind(fnp.sin(x)))(X)
    msg = str(info.value)
    assert "primitive 'bad_lowering'" in msg and "equation 1" in msg and "bad_lowering b" in msg, msg


def test_jit_wraps_the_function() -> None:
    for L in LIBS:
        f = L.ad.jit(scale)
        assert f.__name__ == "scale" and f.__wrapped__ is scale


def test_jax_only_options_are_accepted() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.asarray(fcore.jit(lambda x: x, keep_unused=True, inline=True)(X)), X)


def test_explain_cache_misses_as_jax(caplog: pytest.LogCaptureFixture) -> None:
    """``jax_explain_cache_misses``: the same WARNING text as JAX's for a new function, new
    argument types, a new argument tree, a new static value and a new tracing context (object
    ids and the name of the static-argument node class aside)."""

    def misses(lib: Any) -> list[str]:
        caplog.clear()
        lib.config.update("jax_explain_cache_misses", True)
        try:
            def f(x: Any, y: Any) -> Any:
                return x * y

            jf = lib.jit(f)
            jf(np.ones(3, np.float32), 2.0)
            jf(np.ones(4, np.int32), 2.0)
            jf(np.ones(4, np.int32), y=2.0)
            jf(np.ones(4, np.int32), np.float32(2.0))
            g = lib.jit(lambda x, n: x * n, static_argnums=1)
            g(np.ones(3), 2)
            g(np.ones(3), 3)
            h = lib.jit(lambda d: d["a"] + 1)
            h({"a": np.ones(2)})
            h({"a": np.ones(2), "b": np.ones(2)})
            with lib.enable_x64(True):
                h({"a": np.ones(2)})
        finally:
            lib.config.update("jax_explain_cache_misses", False)
        text = "\n".join(r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage())
        text = re.sub(r"id=\d+", "id=?", text)
        return text.replace("fcore.api.cache_miss.Static", "jax._src.tree_util.Static").split("\n")

    with caplog.at_level("WARNING"):
        ours, theirs = misses(fcore), misses(jax)
    assert len(ours) > 25 and ours == theirs

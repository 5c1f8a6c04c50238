"""SPEC §4: bad input gets a clear error of the right class, and nothing is corrupted.

* shape and dtype mismatches raise ``TypeError`` (as jax does) naming the primitive, the
  shapes and the dtypes;
* ``bool()``, ``int()``, ``if tracer:`` under ``jit`` and ``make_jaxpr`` raise
  ``ConcretizationError`` naming the user function and the file and line that needed the value;
* a tracer leaked out of any transformation raises ``UnexpectedTracerError`` when used later,
  naming the transformation and where it ran;
* a failed trace leaves no state behind and is never cached (``make_jaxpr`` and ``jit``);
* ``tree_unflatten`` with the wrong number of leaves raises ``ValueError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import lax, tree_util
from fcore.errors import ConcretizationError, UnexpectedTracerError
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import current_trace

X3 = np.ones(3, np.float32)
X4 = np.ones(4, np.float32)
I3 = np.ones(3, np.int32)
THIS_FILE = "test_error_contract.py"


# -- shape and dtype mismatches -------------------------------------------------------------
MISMATCHES: dict[str, tuple[Callable[[Any, Any], Callable[[], Any]], list[str]]] = {
    "lax_add_shapes": (lambda lx, np_: lambda: lx.add(X3, X4), ["add", "(3,)", "(4,)"]),
    "lax_add_dtypes": (lambda lx, np_: lambda: lx.add(X3, I3), ["add", "float32", "int32"]),
    "lax_mul_shapes_2d": (lambda lx, np_: lambda: lx.mul(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)), ["mul", "(2, 3)", "(3, 2)"]),
    "lax_dot_contracting": (
        lambda lx, np_: lambda: lx.dot_general(X3, X4, (((0,), (0,)), ((), ()))),
        ["dot_general", "(3,)", "(4,)"],
    ),
    "lax_reshape_size": (lambda lx, np_: lambda: lx.reshape(X3, (2,)), ["reshape", "(2,)"]),
    "lax_select_n_dtypes": (lambda lx, np_: lambda: lx.select_n(X3 > 0, X3, I3), ["select"]),
    "numpy_add_shapes": (lambda lx, np_: lambda: np_.add(X3, X4), ["add", "(3,)", "(4,)"]),
    "numpy_operator_shapes": (lambda lx, np_: lambda: np_.asarray(X3) * np_.asarray(X4), ["(3,)", "(4,)"]),
    "numpy_matmul_shapes": (lambda lx, np_: lambda: np_.asarray(X3) @ np_.asarray(X4), ["dot_general", "(3,)", "(4,)"]),
}


@pytest.mark.parametrize("name", sorted(MISMATCHES))
def test_mismatch_is_a_type_error_naming_primitive_shapes_dtypes(name: str) -> None:
    make, words = MISMATCHES[name]
    if name != "lax_reshape_size":  # jax's reshape fails late (a ValueError of the MLIR verifier)
        with pytest.raises(Exception) as expected:
            make(jax.lax, jnp)()
        assert expected.type is TypeError  # the class jax raises is the class fcore must raise
    with pytest.raises(TypeError) as info:
        make(lax, fnp)()
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    # the same error, naming the same things, while tracing
    with pytest.raises(TypeError) as staged:
        fcore.make_jaxpr(lambda: make(lax, fnp)())()
    assert all(word in str(staged.value) for word in words)


def test_shapes_are_checked_before_dtypes_in_jax_words() -> None:
    """Operands whose ranks (or shapes) and dtypes both differ get JAX's shape error, word for
    word; dtype errors and the ``which`` checks of ``select_n`` too (typed only: no compile)."""
    f2, i22, b = np.ones(2, np.float32), np.ones((2, 2), np.int32), np.array([True, False])
    cases: list[Callable[[Any], Any]] = [
        lambda lx: lx.clamp(np.ones(2, np.int32), X3, X3),
        lambda lx: lx.concatenate([f2, i22], 0),
        lambda lx: lx.concatenate([np.ones((2, 3), np.float32), i22], 0),
        lambda lx: lx.concatenate([f2, I3], 0),
        lambda lx: lx.select_n(b, f2, i22),
        lambda lx: lx.select_n(np.array([[True]]), f2, I3),
        lambda lx: lx.select_n(np.ones((1, 1), np.float32), f2, f2),
        lambda lx: lx.select_n(X3, X3, X3),
        lambda lx: lx.select_n(np.bool_(True), f2, f2, f2),
        lambda lx: lx.select_n(np.bool_(True)),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            jax.eval_shape(lambda: case(jax.lax))
        with pytest.raises(Exception) as ours:
            case(lax)
        assert (ours.type, str(ours.value)) == (theirs.type, str(theirs.value).replace("jnp.", "fcore.numpy."))
    for run in (lax.select_n, fcore.jit(lax.select_n)):  # any integer `which`, unsigned ones compiled too
        assert np.asarray(run(np.array([2, 0], np.uint32), f2, 2 * f2, 3 * f2)).tolist() == [3.0, 1.0]


# -- concretization ---------------------------------------------------------------------------
def _branchy(x: Any) -> Any:
    if x > 0:  # needs a concrete value
        return x
    return -x


def _to_int(x: Any) -> Any:
    return fnp.arange(int(x))  # needs a concrete value


def _truthy(x: Any) -> Any:
    return x if bool(fnp.all(x > 0)) else -x  # needs a concrete value


def _line_of(fun: Callable[..., Any]) -> int:
    src, first = fun.__code__.co_firstlineno, fun.__code__
    lines = open(first.co_filename).read().splitlines()
    for i in range(src, len(lines) + 1):
        if "needs a concrete value" in lines[i - 1]:
            return i
    raise AssertionError("marker not found")


@pytest.mark.parametrize("fun", [_branchy, _to_int, _truthy], ids=lambda f: f.__name__)
@pytest.mark.parametrize("stage", ["jit", "make_jaxpr", "jit_of_grad", "vmap"])
def test_concretization_error_names_function_file_and_line(stage: str, fun: Callable[..., Any]) -> None:
    runs: dict[str, Callable[[], object]] = {
        "jit": lambda: fcore.jit(fun)(2.0),
        "make_jaxpr": lambda: fcore.make_jaxpr(fun)(2.0),
        "jit_of_grad": lambda: fcore.jit(fcore.grad(lambda x: fun(x) * 1.0))(2.0),
        "vmap": lambda: fcore.vmap(fun)(X3),
    }
    with pytest.raises(ConcretizationError) as info:
        runs[stage]()
    msg = str(info.value)
    assert isinstance(info.value, TypeError)  # jax's ConcretizationTypeError is a TypeError too
    assert f"{THIS_FILE}:{_line_of(fun)}" in msg, msg
    assert f"in {fun.__name__}" in msg, msg


def test_concrete_python_control_flow_still_works_outside_staging() -> None:
    assert float(fcore.grad(lambda x: x**2 if x > 0 else 0.0)(3.0)) == 6.0
    np.testing.assert_allclose(fcore.vmap(lambda x: x * 2)(X3), 2 * X3)


# -- leaked tracers -----------------------------------------------------------------------------
def _leak_from(transform: str) -> tuple[Any, str]:
    """A tracer that escaped ``transform``, and the description the error must name."""
    box: list[Any] = []

    def f(x: Any) -> Any:
        box.append(x)
        return fnp.sum(x * 2.0)

    run: dict[str, Callable[[], object]] = {
        "jit": lambda: fcore.jit(f)(X3),
        "make_jaxpr": lambda: fcore.make_jaxpr(f)(X3),
        "grad": lambda: fcore.grad(f)(X3),
        "value_and_grad": lambda: fcore.value_and_grad(f)(X3),
        "vjp": lambda: fcore.vjp(f, X3),
        "jvp": lambda: fcore.jvp(f, (X3,), (X3,)),
        "linearize": lambda: fcore.linearize(f, X3),
        "vmap": lambda: fcore.vmap(f)(np.stack([X3, X3])),
        "jacfwd": lambda: fcore.jacfwd(f)(X3),
        "jacrev": lambda: fcore.jacrev(f)(X3),
        "jit_of_grad": lambda: fcore.jit(fcore.grad(f))(X3),
        "cond_branch": lambda: lax.cond(True, f, f, X3),
        "scan_body": lambda: lax.scan(lambda c, y: (c + f(y), y), 0.0, np.stack([X3, X3])),
    }
    run[transform]()
    assert box, transform
    return box[0], transform


LEAKS = ["jit", "make_jaxpr", "grad", "value_and_grad", "vjp", "jvp", "linearize", "vmap", "jacfwd", "jacrev", "jit_of_grad", "cond_branch", "scan_body"]
USES: dict[str, Callable[[Any], object]] = {
    "lax_op": lambda t: lax.sin(t),
    "operator": lambda t: t + 1.0,
    "numpy_fn": lambda t: fnp.sum(t),
    "inside_jit": lambda t: fcore.jit(lambda y: y + t)(X3),
    "inside_make_jaxpr": lambda t: fcore.make_jaxpr(lambda y: y * t)(X3),
    "inside_grad": lambda t: fcore.grad(lambda y: fnp.sum(y * t))(X3),
    "inside_vmap": lambda t: fcore.vmap(lambda y: y * t)(np.stack([X3, X3])),
    "np_asarray": lambda t: np.asarray(t),
    "bool": lambda t: bool(t[0]),
}


@pytest.mark.parametrize("use", sorted(USES))
@pytest.mark.parametrize("transform", LEAKS)
def test_leaked_tracer_raises_unexpected_tracer_error(transform: str, use: str) -> None:
    tracer, _ = _leak_from(transform)
    with pytest.raises(UnexpectedTracerError) as info:
        USES[use](tracer)
    msg = str(info.value)
    assert re.search(r"traced at .*test_error_contract\.py:\d+", msg), msg  # where it was created
    assert "escape" in msg or "outside of the transformation" in msg, msg
    assert current_trace() is EVAL_TRACE


def test_leaked_tracer_error_names_the_transformation() -> None:
    for transform, name in [("jit", "jit(f)"), ("make_jaxpr", "make_jaxpr(f)"), ("vmap", "vmap(f)"), ("jvp", "jvp(f)")]:
        tracer, _ = _leak_from(transform)
        with pytest.raises(UnexpectedTracerError, match=re.escape(name)):
            lax.sin(tracer)


# -- failed traces ---------------------------------------------------------------------------
def test_failed_trace_is_not_cached_by_jit() -> None:
    traces: list[int] = []
    fail = [True]

    def f(x: Any) -> Any:
        traces.append(1)
        y = fnp.sin(x) * 2.0
        if fail[0]:
            raise RuntimeError("user error mid-trace")
        return y

    jf = fcore.jit(f)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="mid-trace"):
            jf(X3)
        assert current_trace() is EVAL_TRACE
    assert len(traces) == 2  # nothing was cached: each call traced again
    fail[0] = False
    np.testing.assert_allclose(jf(X3), np.sin(X3) * 2, rtol=1e-6)
    np.testing.assert_allclose(jf(X3), np.sin(X3) * 2, rtol=1e-6)
    assert len(traces) == 3  # the successful trace is cached


def test_concretization_failure_inside_nested_transformations_leaves_no_state() -> None:
    def inner(x: Any) -> Any:
        lax.cond(True, lambda y: y, lambda y: -y, x)
        return _branchy(x)

    for attempt in (
        lambda: fcore.jit(fcore.vmap(fcore.grad(inner)))(X3),
        lambda: fcore.make_jaxpr(lambda x: lax.scan(lambda c, y: (c + inner(y), y), 0.0, x))(X3),
        lambda: fcore.linearize(fcore.jit(inner), 1.0),
    ):
        with pytest.raises(ConcretizationError):
            attempt()
        assert current_trace() is EVAL_TRACE
    # the next traces in this thread are complete and correct
    closed = fcore.make_jaxpr(lambda x: fnp.cos(x) + 1.0)(X3)
    assert [e.primitive.name for e in closed.eqns] == ["cos", "add"]
    np.testing.assert_allclose(fcore.jit(fcore.grad(lambda x: fnp.sum(fnp.sin(x))))(X3), np.cos(X3), rtol=1e-6)


def test_base_exceptions_also_unwind_the_trace_stack() -> None:
    class Stop(BaseException):
        pass

    def stop(x: Any) -> Any:
        fnp.sin(x)
        raise Stop

    for run in (fcore.jit(stop), fcore.make_jaxpr(stop), fcore.vmap(stop), fcore.grad(stop)):
        with pytest.raises(Stop):
            run(X3)
        assert current_trace() is EVAL_TRACE


# -- pytrees ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 3])
def test_tree_unflatten_wrong_leaf_count_is_a_value_error(n: int) -> None:
    treedef = tree_util.tree_structure({"a": 1, "b": (2,)})
    with pytest.raises(ValueError, match=f"expected 2, got {n}"):
        tree_util.tree_unflatten(treedef, list(range(n)))
    with pytest.raises(ValueError):
        jax.tree_util.tree_unflatten(jax.tree_util.tree_structure({"a": 1, "b": (2,)}), list(range(n)))


# -- the ConcretizationError subclasses JAX users catch --------------------------------------
CONVERSIONS: dict[str, tuple[Callable[[Any], object], str]] = {
    "bool": (lambda x: bool(x), "TracerBoolConversionError"),
    "if": (lambda x: 1 if x > 0 else 0, "TracerBoolConversionError"),
    "int": (lambda x: int(x), "ConcretizationTypeError"),
    "range": (lambda x: range(x), "TracerIntegerConversionError"),
    "np.asarray": (lambda x: np.asarray(x), "TracerArrayConversionError"),
    "float": (lambda x: float(x), "ConcretizationTypeError"),
}


@pytest.mark.parametrize("conversion", list(CONVERSIONS))
def test_conversion_errors_have_jax_classes(conversion: str) -> None:
    """Each conversion raises the class jax raises (all are ConcretizationErrors and TypeErrors)."""
    use, name = CONVERSIONS[conversion]
    arg = np.int32(3)
    with pytest.raises(getattr(jax.errors, name)):
        jax.jit(use)(arg)
    with pytest.raises(getattr(fcore.errors, name)) as info:
        fcore.jit(use)(arg)
    assert isinstance(info.value, ConcretizationError) and isinstance(info.value, TypeError)


def test_unexpected_tracer_error_is_a_type_error_as_in_jax() -> None:
    assert issubclass(UnexpectedTracerError, TypeError) and issubclass(jax.errors.UnexpectedTracerError, TypeError)


@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_truth_value_of_a_traced_array_is_ambiguous_first(transform: str) -> None:
    """bool() of a traced array of several elements raises ValueError under any trace, as jax's."""
    def f(lib: Any) -> Callable[[Any], Any]:
        return lambda x: (1.0 if x > 0 else 0.0) * lib.sum(x)

    for lib_t, lib_np in ((jax, jnp), (fcore, fnp)):
        with pytest.raises(ValueError, match="truth value of an array with more than one element"):
            getattr(lib_t, transform)(f(lib_np))(X3)

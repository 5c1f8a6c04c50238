"""``fcore.ffi`` against ``jax.ffi``: C++ kernels compiled here (docs/ffi.md's RMS norm and
tests/ffi_kernels.cc, one compile per session) called through both; values, dtypes, attribute
typing, lowering text, vmap methods, layouts, aliases, side effects and errors."""

from __future__ import annotations

import ctypes
import functools
import pathlib
import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax._src.interpreters import mlir as jax_mlir

import fcore
from fcore.backend.binding_lowering import mlir_context
from fcore.backend.custom_call import attribute_text
from fcore.backend.mlir_api import ir
from fcore.extend import core as fcore_core
from fcore.interpreters import mlir as fcore_mlir

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "ffi.md").read_text()
#: The C++ symbols the compiled library exports, registered as targets ``ffi_test_<symbol>``.
SYMBOLS = ["RmsNorm", "RmsNormFwd", "RmsNormBwd", "Attrs", "RawCopy", "AddOne", "Count", "Sizes"]


@pytest.fixture(scope="session")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    """docs/ffi.md's C++ and tests/ffi_kernels.cc compiled into one library (once), its
    handlers registered with XLA through fcore (the registry jax uses too)."""
    compiler = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no C++ compiler (g++, c++ or clang++) on PATH to build the FFI test kernels")
    (cpp,) = re.findall(r"^```cpp\n(.*?)^```$", DOC, re.S | re.M)
    out = tmp_path_factory.mktemp("ffi")
    source = out / "kernels.cc"
    source.write_text(cpp + "\n" + (ROOT / "tests" / "ffi_kernels.cc").read_text())
    library = out / "libffi_test.so"
    subprocess.run([compiler, "-O1", "-w", "-std=c++17", "-shared", "-fPIC", "-I", fcore.ffi.include_dir(),
                    str(source), "-o", str(library)], check=True, capture_output=True, timeout=300)
    lib = ctypes.cdll.LoadLibrary(str(library))
    for symbol in SYMBOLS:
        fcore.ffi.register_ffi_target(f"ffi_test_{symbol}", fcore.ffi.pycapsule(getattr(lib, symbol)), platform="cpu")
    for name, symbol in [("rms_norm", "RmsNorm"), ("rms_norm_fwd", "RmsNormFwd"), ("rms_norm_bwd", "RmsNormBwd")]:
        fcore.ffi.register_ffi_target(name, fcore.ffi.pycapsule(getattr(lib, symbol)), platform="cpu")
    return lib


def both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``fn(fcore)`` and ``fn(jax)`` as NumPy values (``fn`` writes one program for either)."""
    return jax.tree.map(np.asarray, fn(fcore)), jax.tree.map(np.asarray, fn(jax))


def assert_same(a: Any, b: Any) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def custom_call_attributes(text: str) -> str:
    """The attribute dictionary of the (one) ``stablehlo.custom_call`` in a printed module."""
    (line,) = [ln for ln in text.splitlines() if "stablehlo.custom_call" in ln]
    return line[line.index("{"): line.rindex("}") + 1]


# -----------------------------------------------------------------------------------------
# The documented example, and values against jax
# -----------------------------------------------------------------------------------------
def test_docs_page_runs(kernels: ctypes.CDLL, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/ffi.md's Python blocks run in order in one namespace (with the library built here)."""
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC, re.S | re.M)
    assert len(blocks) == 2
    namespace: dict[str, object] = {"__name__": "ffi_doc"}
    for i, block in enumerate(blocks):
        block = block.replace('"./librms_norm.so"', repr(kernels._name))
        exec(compile(block, f"ffi.md:block{i}", "exec"), namespace)  # noqa: S102 - the doc's own code
    assert "stablehlo.custom_call @rms_norm(%arg0)" in capsys.readouterr().out


def test_rms_norm_matches_jax(kernels: ctypes.CDLL) -> None:
    """The same kernel through fcore and jax, eager and jitted, bit for bit, and the same op
    attributes. (float64 operands would be float32 without x64, while a float64 result stays
    float64: the kernel's dtype check would abort, in jax as in fcore.)"""
    x32 = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(3, 4)

    def call(m: Any, x: Any) -> Any:
        return m.ffi.ffi_call("ffi_test_RmsNorm", m.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-3))

    assert_same(*both(lambda m: call(m, x32)))
    assert_same(*both(lambda m: m.jit(functools.partial(call, m))(x32)))
    ours = str(fcore.jit(functools.partial(call, fcore)).lower(x32).compiler_ir())
    theirs = jax.jit(functools.partial(call, jax)).lower(x32).as_text()
    assert custom_call_attributes(ours) == custom_call_attributes(theirs)


def test_attributes_reach_the_handler_typed_as_jax(kernels: ctypes.CDLL) -> None:
    """Python int -> i64, float -> f64, NumPy scalars by dtype, bool, str, int arrays: the
    handler decodes each as its declared type (it fails on a mismatch) and echoes them."""
    attrs = dict(i64=-(2**40), i32=np.int32(-7), u8=np.uint8(200), f64=0.1, f32=np.float32(0.5), flag=True,
                 name="hello", ints=np.arange(5))
    ours, theirs = both(lambda m: m.ffi.ffi_call("ffi_test_Attrs", m.ShapeDtypeStruct((9,), np.float64))(**attrs))
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours, [-(2**40), -7, 200, 0.1, 0.5, 1, 5, 10, 5])
    # An int32 array where the handler declares int64 is another parameter (not the program
    # compiled for the call above), and the handler's decoding error is raised, as jax's is.
    f = fcore.ffi.ffi_call("ffi_test_Attrs", fcore.ShapeDtypeStruct((9,), np.float64))
    with pytest.raises(RuntimeError, match="Wrong array data type: expected S64 but got S32"):
        f(**{**attrs, "ints": np.arange(5, dtype=np.int32)})


ATTRIBUTE_VALUES = [
    1, -5, 2.5, 1e-5, float("inf"), True, "hi", b"by\x00", np.int32(3), np.uint8(7), np.int8(-1), np.float16(1.5),
    np.float32(0.1), np.float64(-0.0), np.bool_(False), np.arange(3), np.array([[1, 2], [3, 4]], np.int8),
    np.array([True, False]), np.array(2.0, np.float32), np.array([1 + 2j], np.complex64), np.zeros((0,), np.float32),
    np.dtype(np.float32), (1, 2.0, "x"), {"b": 1, "a": (np.int16(2),)}, np.uint64(5), float("nan"), np.float32("nan"), 5e-324, -(2**63),
]


LOWERING_CASES: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "attributes": lambda m: lambda x: m.ffi.ffi_call("ffi_test_unregistered", m.ShapeDtypeStruct((3,), np.float32))(
        x, **{f"a{i:02d}": v for i, v in enumerate(ATTRIBUTE_VALUES)}),
    "no_results_side_effect": lambda m: lambda x: (m.ffi.ffi_call("t", (), has_side_effect=True)(x), x + 1)[1],
    "legacy_api": lambda m: m.ffi.ffi_call("t", [m.ShapeDtypeStruct((3,), np.float32)], custom_call_api_version=2,
                                           legacy_backend_config="cfg\n", output_layouts=[None]),
    "results_layouts": lambda m: lambda x: m.ffi.ffi_call(
        "t", (m.ShapeDtypeStruct((2, 3, 4), np.int32), m.ShapeDtypeStruct((), np.float32)),
        input_layouts=[None], output_layouts=[(0, 2, 1), None])(x),
}


@pytest.mark.parametrize("case", sorted(LOWERING_CASES))
def test_lowering_text_matches_jax(case: str) -> None:
    """The op's attributes (typed attributes of every kind, no results, the legacy API,
    several results and layouts), lowered (not compiled) by both: the same once fcore's text
    is parsed and printed by MLIR, as jax prints it."""
    x = np.ones(3, np.float32)
    ours = str(fcore.jit(LOWERING_CASES[case](fcore)).lower(x).compiler_ir())
    theirs = jax.jit(LOWERING_CASES[case](jax)).lower(x).as_text()
    assert custom_call_attributes(ours) == custom_call_attributes(theirs)


def _jax_attribute(value: object) -> str:
    with jax_mlir.make_ir_context(), ir.Location.unknown():  # (jax's ir is jaxlib's, as fcore's)
        return str(jax_mlir.ir_attribute(value))


def _fcore_attribute(value: object) -> str:
    with mlir_context():
        return str(ir.Attribute.parse(attribute_text(value)))


_scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, width=64),
    st.floats(width=32).map(np.float32),
    st.floats(width=16, allow_nan=False).map(np.float16),
    st.integers(0, 255).map(np.uint8),
    st.integers(-(2**31), 2**31 - 1).map(np.int32),
    st.booleans(),
    st.text(max_size=4),
)


@settings(max_examples=60, deadline=None)
@given(st.one_of(_scalars, st.lists(_scalars, max_size=3).map(tuple),
                 st.lists(st.floats(width=32), min_size=1, max_size=4).map(lambda v: np.array(v, np.float32))))
def test_attribute_text_property(value: object) -> None:
    """``attribute_text`` is the attribute jax's ``mlir.ir_attribute`` builds, value for value
    (NaN payloads and signed zeros included: floats are written exactly)."""
    assert _fcore_attribute(value) == _jax_attribute(value)


# -----------------------------------------------------------------------------------------
# vmap, layouts, aliases, side effects
# -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                                    "legacy_vectorized"])
def test_vmap_methods_match_jax(kernels: ctypes.CDLL, method: str) -> None:
    """What operands each vmap method hands the kernel (it reports their element counts),
    with one operand batched (along axis 1) and one not."""
    a = np.ones((2, 3, 5), np.float32)  # batched along axis 1: 3 elements of (2, 5)
    b = np.ones((4,), np.float32)

    def f(m: Any) -> Any:
        call = m.ffi.ffi_call("ffi_test_Sizes", m.ShapeDtypeStruct((2,), np.float32), vmap_method=method)
        return m.vmap(lambda u, v: call(u, v), in_axes=(1, None))(a, b)

    ours, theirs = both(f)
    assert_same(ours, theirs)
    assert ours.shape == (3, 2)


def test_layouts_and_aliases_match_jax(kernels: ctypes.CDLL) -> None:
    """A column-major operand reaches the kernel transposed in memory; an aliased result
    reuses its operand's buffer (and the op says so, as jax's does)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def raw(m: Any) -> Any:
        return m.jit(m.ffi.ffi_call("ffi_test_RawCopy", m.ShapeDtypeStruct((2, 3), np.float32),
                                    input_layouts=[(1, 0)]))(x)

    ours, theirs = both(raw)
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours, x.T.reshape(2, 3))

    def add_one(m: Any) -> Any:
        return m.ffi.ffi_call("ffi_test_AddOne", m.ShapeDtypeStruct((2, 3), np.float32), input_output_aliases={0: 0})

    ours, theirs = both(lambda m: m.jit(add_one(m))(x))
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours, x + 1)
    text = str(fcore.jit(add_one(fcore)).lower(x).compiler_ir())
    assert custom_call_attributes(text) == custom_call_attributes(jax.jit(add_one(jax)).lower(x).as_text())
    assert "output_operand_aliases" in text


def test_side_effect_keeps_unused_call(kernels: ctypes.CDLL) -> None:
    """With ``has_side_effect`` the call runs although its result is unused (an ``FFI``
    effect); without, it is dropped, as in jax."""
    calls = kernels.ffi_test_calls
    calls.restype = ctypes.c_int64
    x = np.ones(3, np.float32)

    def unused(m: Any, effect: bool) -> Callable[[Any], Any]:
        call = m.ffi.ffi_call("ffi_test_Count", m.ShapeDtypeStruct((3,), np.float32), has_side_effect=effect)
        return lambda v: (call(v), v * 2)[1]

    for effect in (True, False):
        for m in (fcore, jax):
            before = calls()
            np.testing.assert_array_equal(m.jit(unused(m, effect))(x), 2 * x)
            assert calls() - before == int(effect), (m.__name__, effect)
    assert "FFI" in str(fcore.make_jaxpr(unused(fcore, True))(x).effects)


def test_custom_vjp_around_the_kernel_matches_jax(kernels: ctypes.CDLL) -> None:
    """JAX's tutorial pattern: fwd/bwd kernels in a custom_vjp, differentiated under jit."""
    x = np.linspace(-1.0, 2.0, 8, dtype=np.float32).reshape(2, 4)

    def grad(m: Any) -> Any:
        def primal(v: Any) -> Any:
            return m.ffi.ffi_call("rms_norm", m.ShapeDtypeStruct(v.shape, v.dtype))(v, eps=np.float32(1e-5))

        def fwd(v: Any) -> Any:
            y, res = m.ffi.ffi_call("rms_norm_fwd", (m.ShapeDtypeStruct(v.shape, v.dtype),
                                                     m.ShapeDtypeStruct(v.shape[:-1], v.dtype)))(v, eps=np.float32(1e-5))
            return y, (res, v)

        def bwd(saved: Any, ct: Any) -> Any:
            return (m.ffi.ffi_call("rms_norm_bwd", m.ShapeDtypeStruct(ct.shape, ct.dtype))(*saved, ct),)

        norm = m.custom_vjp(primal)
        norm.defvjp(fwd, bwd)
        return m.jit(m.grad(lambda v: (norm(v) * np.arange(4.0, dtype=np.float32)).sum()))(x)

    ours, theirs = both(grad)
    assert_same(ours, theirs)


def test_ffi_lowering_for_a_users_primitive(kernels: ctypes.CDLL) -> None:
    """``ffi_lowering`` as the lowering rule of a primitive of one's own (JAX's older tutorial
    pattern): its parameters are the handler's attributes."""
    p = fcore_core.Primitive("ffi_test_rms_norm")
    p.def_abstract_eval(lambda x, eps: x)
    fcore_mlir.register_lowering(p, fcore.ffi.ffi_lowering("rms_norm"))
    x = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    attributes: dict[str, Any] = {"eps": np.float32(1e-5)}  # (a NumPy scalar parameter, as JAX allows)
    ours = fcore.jit(lambda v: p.bind(v, **attributes))(x)
    call = jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))  # type: ignore[no-untyped-call]
    theirs = jax.jit(functools.partial(call, **attributes))(x)
    assert_same(np.asarray(ours), np.asarray(theirs))


# -----------------------------------------------------------------------------------------
# Errors: jax's types and messages; nothing crashes inside XLA
# -----------------------------------------------------------------------------------------
def _error(fn: Callable[[Any], Any], m: Any) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        fn(m)
    return info.type, str(info.value)


@pytest.mark.parametrize("case", [
    "shape_dtype_missing", "shape_dtype_class", "vmap_method_unknown", "legacy_config_v4", "non_hashable",
    "layout_count", "alias_out_of_range", "alias_mismatch", "no_vmap_method", "grad", "attribute_type",
])
def test_errors_match_jax(case: str) -> None:
    """The errors jax raises, with its types and messages (no kernel needed: they come before
    compilation)."""
    x = np.ones(3, np.float32)

    def call(m: Any, **kw: Any) -> Any:
        return m.ffi.ffi_call("ffi_test_unregistered", m.ShapeDtypeStruct((3,), np.float32), **kw)

    cases: dict[str, Callable[[Any], Any]] = {
        "shape_dtype_missing": lambda m: m.ffi.ffi_call("t", {"a": 1}),
        "shape_dtype_class": lambda m: m.ffi.ffi_call("t", [np.float32]),
        "vmap_method_unknown": lambda m: call(m, vmap_method="parallel"),
        "legacy_config_v4": lambda m: call(m, legacy_backend_config="cfg"),
        "non_hashable": lambda m: call(m)(x, a=[1]),
        "layout_count": lambda m: call(m, input_layouts=[None, None])(x),
        "alias_out_of_range": lambda m: call(m, input_output_aliases={1: 0})(x),
        "alias_mismatch": lambda m: call(m, input_output_aliases={0: 0})(x[:2]),
        "no_vmap_method": lambda m: m.vmap(call(m))(np.ones((2, 3), np.float32)),
        "grad": lambda m: m.grad(lambda v: call(m)(v).sum())(x),
        "attribute_type": lambda m: m.jit(lambda v: call(m)(v, a=np.float32)).lower(x),
    }
    ours, theirs = _error(cases[case], fcore), _error(cases[case], jax)
    assert issubclass(ours[0], theirs[0]) or ours[0] is theirs[0]
    assert theirs[1].splitlines()[0] in ours[1]


def test_unknown_target_fails_at_compile_with_a_clear_error() -> None:
    """XLA's own message, raised when the program is compiled (not a crash)."""
    f = fcore.jit(fcore.ffi.ffi_call("ffi_test_no_such_target", fcore.ShapeDtypeStruct((3,), np.float32)))
    with pytest.raises(RuntimeError, match="No FFI handler registered for ffi_test_no_such_target"):
        f(np.ones(3, np.float32))


def test_registration_helpers_match_jax() -> None:
    jax_names = {n for n in dir(jax.ffi) if not n.startswith("_")}
    assert jax_names <= set(fcore.ffi.__all__), jax_names - set(fcore.ffi.__all__)
    assert fcore.ffi.include_dir() == jax.ffi.include_dir()
    assert (pathlib.Path(fcore.ffi.include_dir()) / "xla" / "ffi" / "api" / "ffi.h").is_file()
    with pytest.raises(ValueError, match="register_ffi_type_id is not supported"):
        fcore.ffi.register_ffi_type_id("t", object())
    assert type(fcore.ffi.pycapsule(ctypes.cast(ctypes.pythonapi.Py_IncRef, ctypes.c_void_p).value)).__name__ == "PyCapsule"

"""Tests of fcore.backend.runtime: jaxlib-only put / compile / execute / read back.

Programs are hand-written StableHLO text so these tests do not depend on the
lowering layer.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest

from fcore.backend import runtime as rt
from fcore.errors import FcoreError

SRC = Path(__file__).resolve().parents[1] / "src"

# numpy dtype -> MLIR element type
MLIR_TYPES: dict[np.dtype[Any], str] = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}
ALL_DTYPES = list(MLIR_TYPES)
FP8_TYPES: dict[np.dtype[Any], str] = {
    np.dtype(ml_dtypes.float8_e4m3fn): "f8E4M3FN",
    np.dtype(ml_dtypes.float8_e5m2): "f8E5M2",
}
SHAPES: list[tuple[int, ...]] = [(), (0,), (5,), (2, 3), (0, 3), (2, 1, 4)]


def tensor_type(shape: Sequence[int], dtype: np.dtype[Any]) -> str:
    elem = MLIR_TYPES.get(dtype) or FP8_TYPES[dtype]
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def identity_program(shape: Sequence[int], dtype: np.dtype[Any]) -> str:
    t = tensor_type(shape, dtype)
    return f"""
    func.func public @main(%a: {t}) -> {t} {{
      return %a : {t}
    }}"""


def add_program(shape: Sequence[int], dtype: np.dtype[Any]) -> str:
    t = tensor_type(shape, dtype)
    op = "or" if dtype == np.bool_ else "add"
    return f"""
    func.func public @main(%a: {t}, %b: {t}) -> {t} {{
      %0 = stablehlo.{op} %a, %b : {t}
      return %0 : {t}
    }}"""


MUL8 = """
func.func public @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""

TWO_OUTPUTS = """
func.func public @main(%x: tensor<2x3xf64>, %i: tensor<4xi32>) -> (tensor<3x2xf64>, tensor<4xi32>, tensor<i1>) {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf64>) -> tensor<3x2xf64>
  %n = stablehlo.negate %i : tensor<4xi32>
  %c = stablehlo.constant dense<true> : tensor<i1>
  return %t, %n, %c : tensor<3x2xf64>, tensor<4xi32>, tensor<i1>
}"""


def sample(shape: tuple[int, ...], dtype: np.dtype[Any], seed: int = 0) -> npt.NDArray[Any]:
    """Finite, normal (XLA CPU flushes subnormals), exactly doublable values."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min) // 2, -1000), min(int(info.max) // 2, 1000)
        return rng.integers(lo, hi + 1, n).astype(dtype).reshape(shape)
    if dtype.kind == "c":
        values: npt.NDArray[Any] = (rng.integers(-50, 50, n) + 1j * rng.integers(-50, 50, n)) / 4
        return values.astype(dtype).reshape(shape)
    return (rng.integers(-60, 60, n) / 4).astype(dtype).reshape(shape)


def assert_bitwise_equal(got: npt.NDArray[Any], want: npt.NDArray[Any]) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


# ------------------------------------------------------------------ client / devices


def test_devices_and_version() -> None:
    devs = rt.devices()
    assert devs and rt.default_device() == devs[0]
    assert rt.platform() in ("cpu", "cuda")
    assert rt.jaxlib_version() == importlib.metadata.version("jaxlib")


def test_client_created_once_under_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    existing = rt._get_client()
    calls: list[int] = []

    def slow_create() -> Any:
        calls.append(1)
        time.sleep(0.05)  # widen the race window
        return existing

    monkeypatch.setattr(rt, "_client", None)
    monkeypatch.setattr(rt, "_create_client", slow_create)
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        rt.devices()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert rt._get_client() is existing


# ------------------------------------------------------------------ compile / execute


def test_multiply_program() -> None:
    exe = rt.compile(MUL8, [((8,), np.float32)], num_args=2)
    assert exe.num_args == 2
    assert exe.out_avals == (((8,), np.dtype(np.float32)),)
    assert exe.device == rt.default_device()
    a = np.arange(8, dtype=np.float32)
    b = np.full(8, 1.5, dtype=np.float32)
    (out,) = exe.execute([rt.device_put(a), rt.device_put(b)])
    assert out.shape == (8,) and out.dtype == np.float32 and out.nbytes == 32
    assert out.device == rt.default_device()
    np.testing.assert_array_equal(out.to_numpy(), a * b)
    # cached executable, repeated calls, device-resident inputs
    x = rt.device_put(a)
    for _ in range(3):
        (x,) = exe.execute([x, rt.device_put(b)])
    np.testing.assert_array_equal(x.to_numpy(), a * b**3)


def test_compile_accepts_mlir_bytecode() -> None:
    import io

    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import stablehlo

    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    with ir.Context() as ctx:
        ctx.append_dialect_registry(registry)
        stablehlo.register_dialect(ctx)
        ctx.load_all_available_dialects()
        module = ir.Module.parse(MUL8)
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
    exe = rt.compile(buf.getvalue(), [((8,), np.float32)], num_args=2)
    x = np.arange(8, dtype=np.float32)
    (out,) = exe.execute([rt.device_put(x), rt.device_put(x)])
    np.testing.assert_array_equal(out.to_numpy(), x * x)


def test_multiple_outputs_text_and_costs() -> None:
    exe = rt.compile(TWO_OUTPUTS, [((3, 2), np.float64), ((4,), np.int32), ((), np.bool_)])
    x = np.arange(6, dtype=np.float64).reshape(2, 3) / 3
    i = np.array([1, -2, 3, 2**31 - 1], dtype=np.int32)
    t, n, c = exe.execute([rt.device_put(x), rt.device_put(i)])
    assert_bitwise_equal(t.to_numpy(), x.T)
    assert_bitwise_equal(n.to_numpy(), -i)
    assert c.to_numpy().shape == () and bool(c.to_numpy()) is True
    text = exe.as_text()
    assert "HloModule" in text and "ENTRY" in text
    costs = exe.cost_analysis()
    assert costs and all(type(v) is float for v in costs.values())
    assert "bytes accessed" in costs


def test_to_numpy_is_read_only_view() -> None:
    buf = rt.device_put(np.arange(4, dtype=np.int32))
    out = buf.to_numpy()
    assert not out.flags.writeable
    with pytest.raises(ValueError):
        out[0] = 1
    np.testing.assert_array_equal(np.asarray(buf), np.arange(4))
    assert np.asarray(buf, dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dtype_round_trip(dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
    x = sample(shape, dtype)
    buf = rt.device_put(x)
    assert buf.shape == shape and buf.dtype == dtype and buf.nbytes == x.nbytes
    assert_bitwise_equal(buf.to_numpy(), x)

    (same,) = rt.compile(identity_program(shape, dtype), [(shape, dtype)]).execute([buf])
    assert_bitwise_equal(same.to_numpy(), x)

    y = sample(shape, dtype, seed=1)
    add = rt.compile(add_program(shape, dtype), [(shape, dtype)], num_args=2)
    (out,) = add.execute([buf, rt.device_put(y)])
    want = (x | y) if dtype == np.bool_ else (x + y).astype(dtype)
    assert_bitwise_equal(out.to_numpy(), want)
    assert not out.to_numpy().flags.writeable


@pytest.mark.parametrize("dtype", list(FP8_TYPES), ids=str)
def test_fp8_round_trip(dtype: np.dtype[Any]) -> None:
    x = np.array([[0.0, 1.0, -2.0], [0.5, 3.0, -0.25]]).astype(dtype)
    buf = rt.device_put(x)
    assert_bitwise_equal(buf.to_numpy(), x)
    (same,) = rt.compile(identity_program(x.shape, dtype), [(x.shape, dtype)]).execute([buf])
    assert_bitwise_equal(same.to_numpy(), x)


def test_special_float_values_pass_through_bitwise() -> None:
    for dtype in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16):
        x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0]).astype(dtype)
        buf = rt.device_put(x)
        assert_bitwise_equal(buf.to_numpy(), x)
        dt = np.dtype(dtype)
        (same,) = rt.compile(identity_program(x.shape, dt), [(x.shape, dt)]).execute([buf])
        assert_bitwise_equal(same.to_numpy(), x)


def test_float64_stays_float64() -> None:
    x = np.array([1.0 + 2.0**-40, 1e300], dtype=np.float64)
    buf = rt.device_put(x)
    assert buf.dtype == np.float64
    assert_bitwise_equal(buf.to_numpy(), x)


def test_host_mutation_after_put_is_not_seen() -> None:
    # 64-byte-aligned host memory is what ZERO_COPY would alias; make sure we have it.
    raw = np.zeros(1024 * 4 + 64, dtype=np.uint8)
    offset = (-raw.ctypes.data) % 64
    host = raw[offset : offset + 1024 * 4].view(np.float32)
    host[:] = 1.0
    buf = rt.device_put(host)
    host[:] = 7.0  # no block_until_ready in between: the copy must be complete already
    (out,) = rt.compile(add_program((1024,), np.dtype(np.float32)), [((1024,), np.float32)]).execute(
        [buf, buf]
    )
    host[:] = 9.0
    np.testing.assert_array_equal(buf.to_numpy(), np.ones(1024, np.float32))
    np.testing.assert_array_equal(out.to_numpy(), np.full(1024, 2.0, np.float32))


def test_put_accepts_views_byteswapped_and_readonly_arrays() -> None:
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for x in (base[:, ::2], base.T, base[::-1]):
        assert_bitwise_equal(rt.device_put(x).to_numpy(), np.ascontiguousarray(x))
    big_endian = np.arange(5, dtype=">i4")
    buf = rt.device_put(big_endian)
    assert buf.dtype == np.dtype("<i4")
    np.testing.assert_array_equal(buf.to_numpy(), np.arange(5))
    ro = np.arange(3, dtype=np.int64)
    ro.flags.writeable = False
    np.testing.assert_array_equal(rt.device_put(ro).to_numpy(), ro)


def test_put_on_explicit_device() -> None:
    dev = rt.devices()[-1]
    buf = rt.device_put(np.ones(3, np.float32), dev)
    assert buf.device == dev
    exe = rt.compile(MUL8, [((8,), np.float32)], device=dev)
    assert exe.device == dev


def test_buffer_repr_and_delete() -> None:
    buf = rt.device_put(np.zeros((2, 3), ml_dtypes.bfloat16))
    assert repr(buf).startswith("DeviceBuffer(bfloat16[2,3] on ")
    assert buf.block_until_ready() is buf
    assert not buf.is_deleted()
    view = buf.to_numpy()
    buf.delete()
    assert buf.is_deleted()
    assert view.shape == (2, 3)  # the copy made for bf16 outlives the buffer
    f32 = rt.device_put(np.arange(8, dtype=np.float32))
    f32_view = f32.to_numpy()
    f32.delete()  # a live buffer-protocol view pins the memory; no crash
    np.testing.assert_array_equal(f32_view, np.arange(8))
    exe = rt.compile(MUL8, [((8,), np.float32)])
    with pytest.raises(rt.XlaRuntimeError):
        exe.execute([f32, f32])


# ------------------------------------------------------------------ errors


def test_compile_error_carries_xla_message() -> None:
    bad = """
    func.func public @main(%a: tensor<8xf32>) -> tensor<8xf32> {
      %0 = stablehlo.multiply %a, %a : tensor<4xf32>
      return %0 : tensor<8xf32>
    }"""
    with pytest.raises(rt.XlaCompileError) as info:
        rt.compile(bad, [((8,), np.float32)])
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, FcoreError)
    assert "expects different type" in err.xla_message
    assert err.xla_message in str(err)
    assert isinstance(err.__cause__, rt.XlaRuntimeError)
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is rt.XlaCompileError and clone.xla_message == err.xla_message
    assert str(clone) == str(err)

    no_main = "func.func public @f(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }"
    with pytest.raises(rt.XlaCompileError, match="main"):
        rt.compile(no_main, [((2,), np.float32)])
    with pytest.raises(rt.XlaCompileError, match="frobnicate"):
        rt.compile(MUL8.replace("stablehlo.multiply", "stablehlo.frobnicate"), [((8,), np.float32)])


def test_out_avals_and_num_args_are_checked() -> None:
    with pytest.raises(ValueError, match="1 results but 2 out_avals"):
        rt.compile(MUL8, [((8,), np.float32), ((8,), np.float32)])
    with pytest.raises(ValueError, match="2 parameters but num_args=3"):
        rt.compile(MUL8, [((8,), np.float32)], num_args=3)


def test_runtime_argument_errors() -> None:
    exe = rt.compile(MUL8, [((8,), np.float32)])
    f32 = rt.device_put(np.ones(8, np.float32))
    with pytest.raises(rt.XlaRuntimeError, match="arguments"):
        exe.execute([f32])
    with pytest.raises(rt.XlaRuntimeError):
        exe.execute([f32, rt.device_put(np.ones(8, np.float64))])


# ------------------------------------------------------------------ serialization


def test_serialize_deserialize_round_trip() -> None:
    out_avals = [((3, 2), np.float64), ((4,), np.int32), ((), np.bool_)]
    exe = rt.compile(TWO_OUTPUTS, out_avals)
    blob = exe.serialize()
    assert isinstance(blob, bytes) and blob
    again = rt.deserialize(blob, out_avals, num_args=2)
    args = [rt.device_put(np.arange(6.0).reshape(2, 3)), rt.device_put(np.arange(4, dtype=np.int32))]
    for a, b in zip(exe.execute(args), again.execute(args), strict=True):
        assert_bitwise_equal(a.to_numpy(), b.to_numpy())
    assert again.as_text() == exe.as_text()
    with pytest.raises(rt.XlaCompileError, match="deserializing"):
        rt.deserialize(b"not an executable" + blob[:10], out_avals)


# ------------------------------------------------------------------ no jax import

_NO_JAX_SCRIPT = textwrap.dedent(
    """
    import sys
    import ml_dtypes
    import numpy as np
    from fcore.backend import runtime as rt

    text = '''
    func.func public @main(%a: tensor<3xbf16>, %b: tensor<3xf32>) -> (tensor<3xbf16>, tensor<3xf32>) {
      %0 = stablehlo.add %a, %a : tensor<3xbf16>
      %1 = stablehlo.multiply %b, %b : tensor<3xf32>
      return %0, %1 : tensor<3xbf16>, tensor<3xf32>
    }'''
    exe = rt.compile(text, [((3,), ml_dtypes.bfloat16), ((3,), np.float32)], num_args=2)
    a = np.array([1.0, 2.5, -3.0], ml_dtypes.bfloat16)
    b = np.array([1.0, 2.0, 3.0], np.float32)
    x, y = exe.execute([rt.device_put(a), rt.device_put(b)])
    assert x.to_numpy().tolist() == [2.0, 5.0, -6.0], x.to_numpy()
    assert y.to_numpy().tolist() == [1.0, 4.0, 9.0], y.to_numpy()
    assert rt.device_put(a).to_numpy().dtype == a.dtype
    blob = exe.serialize()
    x2, _ = rt.deserialize(blob, exe.out_avals).execute([rt.device_put(a), rt.device_put(b)])
    assert x2.to_numpy().tolist() == [2.0, 5.0, -6.0]
    exe.as_text(), exe.cost_analysis(), repr(x), x.block_until_ready()
    bad = [m for m in sys.modules if m == "jax" or m.startswith("jax.")]
    assert not bad, bad
    print("OK")
    """
)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="needs jax installed to prove it is not imported")
def test_runtime_never_imports_jax() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["FCORE_PLATFORM"] = "cpu"
    proc = subprocess.run(
        [sys.executable, "-c", _NO_JAX_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("OK")

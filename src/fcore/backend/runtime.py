"""Runtime half of fcore's XLA backend: PJRT client, device buffers, executables.

Drives ``jaxlib`` directly and never imports ``jax``. That constrains which jaxlib
calls are usable: several C++ paths build an array's ``.aval`` by importing
``jax.core`` (dlpack import, ``disassemble_into_single_device_arrays``,
``unsafe_buffer_pointer``, ``_single_device_array_to_np_array_did_copy``). So every
array here is created with an fcore-owned aval (``batched_device_put`` and
``consume_with_handlers`` with ``array_result_handler(..., _skip_checks=True)``) and
read back through the buffer protocol. docs/backend.md lists the private jaxlib bits this relies on.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, TypeAlias, TypeVar

import jaxlib
import numpy as np
import numpy.typing as npt
from jaxlib import _jax
from jaxlib import utils as jaxlib_utils
from jaxlib import xla_client as xc
from jaxlib.xla_client import Device as Device
from jaxlib.xla_client import XlaRuntimeError as XlaRuntimeError

from fcore.config import (
    compilation_cache_dir,
    compilation_cache_max_size,
    persistent_cache_min_compile_time_secs,
)
from fcore.backend.devices import setup
from fcore.backend import platforms
from fcore.backend import compilation_cache, host_callback
from fcore.errors import FcoreError

__all__ = [
    "Device",
    "DeviceBuffer",
    "ExecuteResults",
    "Executable",
    "LaunchFn",
    "MemoryStats",
    "OutAval",
    "RawArray",
    "ResultHandler",
    "XlaCompileError",
    "XlaRuntimeError",
    "compile",
    "default_device",
    "deserialize",
    "device_put",
    "devices",
    "jaxlib_version",
    "local_devices",
    "platform",
    "process_index",
    "wrap_array",
]

#: jaxlib versions this module was written and measured against. It uses private,
#: unversioned jaxlib protocols (see docs/backend.md), so other versions only warn.
SUPPORTED_JAXLIB: Final = ((0, 10, 2), (0, 11, 0))  # [low, high)

Shape = tuple[int, ...]
AvalSpec = tuple[Sequence[int], npt.DTypeLike]

#: jaxlib's array type, for callers that drive :meth:`Executable.launch_parts` directly.
RawArray: TypeAlias = xc.ArrayImpl
#: What a launch returns: the results, until ``consume_with_handlers`` makes them arrays.
ExecuteResults: TypeAlias = _jax.ExecuteResults
#: ``launch(raw_args).consume_with_handlers(handlers)``: the two jaxlib calls of an execution.
LaunchFn: TypeAlias = Callable[[Sequence[RawArray]], ExecuteResults]
ResultHandler: TypeAlias = _jax.ResultHandler
#: The PJRT client type (what ``fcore.extend.backend.get_backend`` returns).
Client: TypeAlias = xc.Client
#: XLA's memory estimates of a compiled program (argument/output/temp/peak bytes ...).
MemoryStats: TypeAlias = _jax.CompiledMemoryStats


class XlaCompileError(FcoreError, RuntimeError):
    """XLA rejected a program (parse, verification or compilation error).

    ``xla_message`` is XLA's text unchanged, so the lowering layer can add jaxpr
    context around it.
    """

    def __init__(self, xla_message: str, prefix: str = "XLA compilation failed") -> None:
        super().__init__(f"{prefix}: {xla_message}")
        self.xla_message = xla_message
        self.prefix = prefix

    def __reduce__(self) -> tuple[type[XlaCompileError], tuple[str, str]]:
        # Exception pickling replays ``args`` (the formatted text); rebuild from parts.
        return (type(self), (self.xla_message, self.prefix))


# --------------------------------------------------------------------------- avals


class _Aval:
    """Duck aval handed to jaxlib: its C++ reads only shape, dtype and weak_type.

    Also carries the device so a DeviceBuffer needs no third slot.
    """

    __slots__ = ("shape", "dtype", "device")
    weak_type: ClassVar[bool] = False  # fcore tracks weak types above this layer

    def __init__(self, shape: Shape, dtype: np.dtype[Any], device: Device) -> None:
        self.shape = shape
        self.dtype = dtype
        self.device = device


#: The runtime aval of an executable's output (what ``DeviceBuffer(array, aval)`` takes).
OutAval: TypeAlias = _Aval


def result_handler(aval: _Aval, sharding: object) -> ResultHandler:
    """jaxlib's handler that makes a committed result array of ``aval`` laid out by ``sharding``.
    jaxlib 0.10 checks the aval unless told not to (fcore's ``_Aval`` is not jax's); jaxlib 0.11
    (the GPU machines' version, outside ``SUPPORTED_JAXLIB``) checks nothing and takes no flag."""
    if _HANDLER_SKIPS_CHECKS:
        return xc.array_result_handler(aval, sharding, True, _skip_checks=True)
    return xc.array_result_handler(aval, sharding, True)


_HANDLER_SKIPS_CHECKS: Final = tuple(int(p) for p in re.findall(r"\d+", jaxlib.__version__)[:2]) < (0, 11)


def _make_aval(spec: AvalSpec, device: Device) -> _Aval:
    shape, dtype = spec
    return _Aval(tuple(int(d) for d in shape), np.dtype(dtype), device)


# --------------------------------------------------------------------------- client

_REPLICATED: Final = xc.HloSharding.replicate()
_IMMUTABLE_ONLY_DURING_CALL: Final = xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


class _PutSharding(xc.SingleDeviceSharding):
    """SingleDeviceSharding plus the two hooks ``batched_device_put`` reads.

    The hooks are jax's (undocumented) sharding protocol; a plain
    SingleDeviceSharding fails with "no attribute '_to_xla_hlo_sharding'".
    """

    memory_kind: ClassVar[str | None] = None

    def _to_xla_hlo_sharding(self, ndim: int) -> xc.HloSharding:
        return _REPLICATED


_lock = threading.Lock()
_client: xc.Client | None = None
_devices: tuple[Device, ...] = ()
# device (None = default) -> (sharding, [device]) for batched_device_put.
_put_targets: dict[Device | None, tuple[_PutSharding, list[Device]]] = {}

# Sub-paths of pip's `nvidia` namespace package that jax's CUDA plugin preloads
# (so the plugin's dlopen finds them without LD_LIBRARY_PATH).
_NVIDIA_LIBS: Final = (
    "cuda_runtime/lib/libcudart.so.12",
    "cu13/lib/libcudart.so.13",
    "cuda_nvrtc/lib/libnvrtc.so.12",
    "cu13/lib/libnvrtc.so.13",
    "cublas/lib/libcublasLt.so.12",
    "cublas/lib/libcublas.so.12",
    "cu13/lib/libcublasLt.so.13",
    "cu13/lib/libcublas.so.13",
    "nccl/lib/libnccl.so.2",
    "cuda_cupti/lib/libcupti.so.12",
    "cu13/lib/libcupti.so.13",
    "cusparse/lib/libcusparse.so.12",
    "cusolver/lib/libcusolver.so.11",
    "cu13/lib/libcusolver.so.12",
    "cufft/lib/libcufft.so.11",
    "cu13/lib/libcufft.so.12",
    "nvshmem/lib/libnvshmem_host.so.3",
    "cudnn/lib/libcudnn.so.9",
)


def _find_cuda_plugin() -> str | None:
    """Path of the CUDA PJRT plugin from jax-cuda13/12-pjrt, found without importing it.

    (Its package ``__init__`` imports jax, so only the file system is searched.)
    """
    for entry in sys.path:
        for pkg in ("xla_cuda13", "xla_cuda12"):
            path = os.path.join(entry or ".", "jax_plugins", pkg, "xla_cuda_plugin.so")
            if os.path.isfile(path):
                return path
    return None


def _make_cuda_client(plugin_path: str) -> xc.Client:
    for entry in sys.path:
        root = os.path.join(entry or ".", "nvidia")
        if not os.path.isdir(root):
            continue
        for lib in _NVIDIA_LIBS:
            lib_path = os.path.join(root, lib)
            if os.path.isfile(lib_path):
                try:
                    ctypes.CDLL(lib_path)
                except OSError:
                    pass  # best effort, as in jax; the client creation reports real failures
    if not xc.pjrt_plugin_loaded("cuda"):
        xc.load_pjrt_plugin_dynamically("cuda", plugin_path)
    if not xc.pjrt_plugin_initialized("cuda"):
        xc.initialize_pjrt_plugin("cuda")
    return xc.make_c_api_client("cuda", xc.generate_pjrt_gpu_plugin_options())


def _check_jaxlib_version() -> None:
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", jaxlib.__version__)
    found = tuple(int(g) for g in m.groups()) if m else (0, 0, 0)
    low, high = SUPPORTED_JAXLIB
    if not low <= found < high:
        warnings.warn(
            f"fcore.backend was built for jaxlib >={'.'.join(map(str, low))},"
            f"<{'.'.join(map(str, high))} and uses private jaxlib APIs; found {jaxlib.__version__}",
            RuntimeWarning,
            stacklevel=3,
        )


def _quiet_cpp_logging() -> None:
    """Keep jaxlib's C++ INFO lines (``pjrt_client.cc:579] PjRt-IFRT device count ...``) off
    stderr, as ``import jax`` does: ``TF_CPP_MIN_LOG_LEVEL`` defaults to 1 (warnings and up).

    Setting ``TF_CPP_MIN_LOG_LEVEL=0`` before the first computation turns them back on. The
    level is also applied directly because XLA reads the variable only once, at its first log
    line, which may come before fcore is imported.
    """
    level = os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    if level.strip().isdigit():
        jaxlib_utils.absl_set_min_log_level(int(level))


def _create_client() -> xc.Client:
    """CPU client, or a CUDA one when jax's CUDA PJRT plugin is installed and works.

    ``jax_platforms``/``jax_platform_name`` (or ``FCORE_PLATFORM``) ``"cpu"`` skips the GPU
    probe; ``"cuda"`` (or ``"gpu"``) makes a GPU failure an error instead of a warning plus
    CPU fallback (``fcore.backend.platforms``).
    """
    _quiet_cpp_logging()
    _check_jaxlib_version()
    want, named = platforms.requested_platform()
    if want != "cpu":
        plugin = _find_cuda_plugin()
        if plugin is None and want:
            raise platforms.unavailable(want, named, "no jax CUDA PJRT plugin is installed")
        if plugin is not None:
            try:
                return _make_cuda_client(plugin)
            except Exception as e:  # C++ errors, missing CUDA libraries, no visible GPU...
                if want:
                    raise platforms.unavailable(want, named, f"creating the CUDA client from {plugin} failed: {e}") from e
                warnings.warn(
                    f"fcore: CUDA PJRT plugin {plugin} failed ({e}); falling back to CPU",
                    RuntimeWarning,
                    stacklevel=3,
                )
    return xc.make_cpu_client(
        distributed_client=setup.distributed_client,
        node_id=setup.node_id,
        num_nodes=setup.num_nodes,
        collectives=setup.collectives(),
        num_devices=setup.num_cpu_devices,
    )


def _get_client() -> xc.Client:
    """The process-wide client, created once on first use (double-checked lock)."""
    global _client, _devices
    client = _client
    if client is None:
        with _lock:
            if _client is None:
                setup.started = True
                new = _create_client()
                _devices = tuple(new.local_devices())
                _client = new
            client = _client
    return client


def client() -> Client:
    """The process-wide PJRT client (created on first use): fcore runs on this one backend."""
    return _get_client()


def devices() -> list[Device]:
    """Every device of the job (this process's and, in a distributed job, the others')."""
    return list(_get_client().devices())


def local_devices() -> list[Device]:
    """This process's devices (all of them unless the process is part of a distributed job)."""
    return list(_get_client().local_devices())


def process_index() -> int:
    return int(_get_client().process_index())


def default_device() -> Device:
    """First local device of the process-wide client."""
    _get_client()
    return _devices[0]


def platform() -> str:
    """Platform of the process-wide client: ``"cpu"`` or ``"cuda"``."""
    return _get_client().platform


def jaxlib_version() -> str:
    """Installed jaxlib version; part of any persistent executable cache key."""
    return jaxlib.__version__


def _put_target(device: Device | None) -> tuple[_PutSharding, list[Device]]:
    target = _put_targets.get(device)
    if target is None:
        dev = default_device() if device is None else device
        target = (_PutSharding(dev), [dev])
        _put_targets[device] = target
    return target


# --------------------------------------------------------------------------- buffers

_OBJECT_DTYPE: Final = np.dtype(object)


class DeviceBuffer:
    """One array on one device: a jaxlib ``ArrayImpl`` plus fcore's aval for it.

    Shape, dtype and device live here because ``ArrayImpl``'s own ``shape``,
    ``dtype``, ``devices()`` and ``__array__`` are methods that jax attaches on import.
    """

    __slots__ = ("_array", "_aval")

    def __init__(self, array: xc.ArrayImpl, aval: _Aval) -> None:
        self._array = array
        self._aval = aval

    @property
    def shape(self) -> Shape:
        return self._aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._aval.dtype

    @property
    def ndim(self) -> int:
        return len(self._aval.shape)

    @property
    def size(self) -> int:
        return _prod(self._aval.shape)

    @property
    def nbytes(self) -> int:
        """Host (numpy) size in bytes."""
        return _prod(self._aval.shape) * self._aval.dtype.itemsize

    @property
    def device(self) -> Device:
        return self._aval.device

    @property
    def placed(self) -> bool:
        """Off the default device: JAX counts such an array committed there, and operations
        on it run there (``fcore.api.eager_placed``), not on its host copy."""
        return self._aval.device != default_device()

    def block_until_ready(self) -> DeviceBuffer:
        """Wait until the value is computed; raises the execution's error, if any."""
        self._array.block_until_ready()
        return self

    def raw_array(self) -> RawArray:
        """The jaxlib array (for :meth:`Executable.launch_parts`)."""
        return self._array

    def is_deleted(self) -> bool:
        return self._array.is_deleted()

    def delete(self) -> None:
        """Free the device memory now (later use raises ``XlaRuntimeError``)."""
        self._array.delete()

    def to_numpy(self) -> npt.NDArray[Any]:
        """The value as a read-only numpy array (blocks until ready).

        On CPU this is a zero-copy view through the buffer protocol. That protocol
        rejects bf16/fp8/int4 and non-CPU buffers, and then ``np.asarray`` silently
        gives a 0-d object array; those cases take a copying path instead.
        """
        out = np.asarray(self._array)
        if out.dtype is _OBJECT_DTYPE:
            return self._to_numpy_slow()
        return out

    def _to_numpy_slow(self) -> npt.NDArray[Any]:
        aval = self._aval
        if self._array.is_deleted():
            dims = ",".join(map(str, aval.shape))
            raise RuntimeError(f"Array has been deleted with shape={aval.dtype.name}[{dims}].")
        out: npt.NDArray[Any] | None = None
        if _prod(aval.shape) == 0:
            out = np.empty(aval.shape, aval.dtype)
        elif aval.device.platform == "cpu":
            out = _dlpack_host_copy(self._array, aval)
        if out is None:
            # Private; handles any dtype/device but imports jax when it is installed.
            out, _ = self._array._single_device_array_to_np_array_did_copy()
        out.flags.writeable = False
        return out

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> npt.NDArray[Any]:
        out = self.to_numpy()
        if dtype is not None and np.dtype(dtype) != out.dtype:
            if copy is False:
                raise ValueError("a dtype conversion needs a copy")
            return out.astype(dtype)
        return out.copy() if copy else out

    def __repr__(self) -> str:
        dims = ",".join(map(str, self._aval.shape))
        return f"DeviceBuffer({self._aval.dtype.name}[{dims}] on {self._aval.device})"


_new = object.__new__


def wrap_array(array: xc.ArrayImpl, aval: _Aval) -> DeviceBuffer:
    """``DeviceBuffer(array, aval)`` without the ``__init__`` call that a class call makes
    (half the cost): how jit's cached path wraps each result."""
    buf: DeviceBuffer = _new(DeviceBuffer)
    buf._array = array
    buf._aval = aval
    return buf


def _prod(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    """DLPack's ABI-stable ``DLTensor`` (the head of ``DLManagedTensor``)."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DL_CPU: Final = 1


class _RawHostView:
    """Hands numpy a raw host pointer through ``__array_interface__``."""

    __slots__ = ("__array_interface__",)

    def __init__(self, interface: dict[str, object]) -> None:
        self.__array_interface__ = interface


def _dlpack_host_copy(array: xc.ArrayImpl, aval: _Aval) -> npt.NDArray[Any] | None:
    """Copy a CPU buffer whose dtype numpy's buffer/dlpack import rejects (bf16, fp8).

    ``buffer_to_dlpack_managed_tensor`` pins the buffer (and, unlike
    ``unsafe_buffer_pointer``, never imports jax); its data is copied while the
    capsule is alive and the pin is dropped right after, because deleting a buffer
    with a dlpack hold outstanding aborts the process. Returns None when the
    layout is not a plain byte-addressable one (e.g. packed int4, which jaxlib
    cannot export either).
    """
    try:
        capsule = _jax.buffer_to_dlpack_managed_tensor(array)
    except XlaRuntimeError:
        return None
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    itemsize = aval.dtype.itemsize
    ndim = tensor.ndim
    if (
        tensor.device.device_type != _DL_CPU
        or tensor.dtype.bits * tensor.dtype.lanes != 8 * itemsize
        or ndim != len(aval.shape)
        or tensor.data is None
    ):
        return None
    shape = tuple(tensor.shape[i] for i in range(ndim))
    strides = tuple(tensor.strides[i] * itemsize for i in range(ndim)) if tensor.strides else None
    view = _RawHostView(
        {
            "version": 3,
            "shape": shape,
            "typestr": f"|V{itemsize}",
            "data": (tensor.data + tensor.byte_offset, True),
            "strides": strides,
        }
    )
    raw = np.array(view, copy=True)
    del view, tensor, capsule  # release the dlpack hold now
    return raw.view(aval.dtype)


def device_put(x: npt.NDArray[Any], device: Device | None = None) -> DeviceBuffer:
    """Copy a host array to ``device`` (default: the first device).

    The copy is finished when this returns (``IMMUTABLE_ONLY_DURING_CALL``), so
    mutating ``x`` afterwards never changes the device value. The dtype is kept
    exactly (``enable_x64=True``: fcore canonicalizes dtypes before calling this).
    """
    array = device_put_raw(x, device)
    aval = array.aval
    assert isinstance(aval, _Aval)
    return DeviceBuffer(array, aval)


def device_put_raw(x: npt.NDArray[Any], device: Device | None = None) -> RawArray:
    """``device_put``'s jaxlib array alone (jit's cached call passes it straight to XLA)."""
    target = _put_targets.get(device)
    if target is None:
        target = _put_target(device)
    sharding, devs = target
    dtype = x.dtype
    if not dtype.isnative:  # jaxlib would reinterpret the bytes as native order
        dtype = dtype.newbyteorder("=")
        x = x.astype(dtype)
    aval = _Aval(x.shape, dtype, devs[0])
    return xc.batched_device_put(aval, sharding, [x], devs, True, False, _IMMUTABLE_ONLY_DURING_CALL, True)


# --------------------------------------------------------------------------- executables


class Executable:
    """A compiled single-device XLA program with its result handlers built once."""

    __slots__ = ("_exe", "_run", "_handlers", "_out_avals", "_device", "_num_args")

    def __init__(
        self,
        exe: xc.LoadedExecutable,
        out_avals: Sequence[AvalSpec],
        device: Device,
        num_args: int | None = None,
        host_callbacks: bool = False,
    ) -> None:
        avals = tuple(_make_aval(spec, device) for spec in out_avals)
        n_out = len(exe.get_output_layouts())
        if n_out != len(avals):
            raise ValueError(f"the program has {n_out} results but {len(avals)} out_avals were given")
        n_in = len(exe.get_parameter_layouts())
        if num_args is not None and n_in != num_args:
            raise ValueError(f"the program has {n_in} parameters but num_args={num_args}")
        sharding = xc.SingleDeviceSharding(device)
        self._exe = exe
        self._run: LaunchFn = _run_to_completion(exe) if host_callbacks else exe.execute_sharded
        self._handlers = [result_handler(a, sharding) for a in avals]
        self._out_avals = avals
        self._device = device
        self._num_args = n_in

    def execute(self, args: Sequence[DeviceBuffer]) -> list[DeviceBuffer]:
        """Run asynchronously; results are ready once ``block_until_ready``/``to_numpy``
        return. Shape, dtype and arity errors surface as ``XlaRuntimeError``.
        """
        outs = self._run([a._array for a in args]).consume_with_handlers(self._handlers)
        return list(map(DeviceBuffer, outs, self._out_avals))

    def launch_parts(self) -> tuple[LaunchFn, list[ResultHandler], tuple[OutAval, ...]]:
        """What :meth:`execute` does, in parts, for callers that keep their own arrays:
        ``[DeviceBuffer(a, r) for a, r in zip(launch(raw).consume_with_handlers(handlers), avals)]``
        with ``raw`` the arguments' :meth:`DeviceBuffer.raw_array`.
        """
        return self._run, self._handlers, self._out_avals

    @property
    def device(self) -> Device:
        return self._device

    @property
    def num_args(self) -> int:
        return self._num_args

    @property
    def out_avals(self) -> tuple[tuple[Shape, np.dtype[Any]], ...]:
        return tuple((a.shape, a.dtype) for a in self._out_avals)

    def as_text(self) -> str:
        """The optimized HLO module XLA actually runs."""
        return self._exe.get_hlo_text()

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimates (``flops``, ``bytes accessed``, ...), numeric entries only."""
        return {
            k: float(v)
            for k, v in self._exe.cost_analysis().items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }

    def memory_analysis(self) -> MemoryStats:
        """XLA's memory estimates (``argument_size_in_bytes``, ``temp_size_in_bytes``, ...)."""
        return self._exe.get_compiled_memory_stats()

    def serialize(self) -> bytes:
        """Opaque blob for :func:`deserialize`; valid only for the same jaxlib and
        device kind, so cache keys must include :func:`jaxlib_version`.
        """
        return self._exe.serialize()


_T = TypeVar("_T")


def run_to_completion(fn: Callable[..., _T], *args: object) -> _T:
    """``fn(*args)`` on a helper thread when called from the main thread, so that a
    ``KeyboardInterrupt`` (any Python signal handler's exception) cannot cut it short.

    jaxlib's ``compile_and_load`` waits for the compile with signal checks: on a pending
    signal it returns early and frees the parsed MLIR module while its thread pool is still
    compiling it, and the process dies with SIGSEGV later (issue 23, class 7). Signals are
    checked on the main thread only; there the interrupt now lands in ``join`` and propagates
    at once, while the helper finishes the call with its own references and drops the result.
    """
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    outcome: list[tuple[bool, Any]] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, fn(*args)))
        except BaseException as e:  # handed to the caller below
            outcome.append((False, e))
        finally:
            finished.set()

    # Waits on an event, not ``join``: an interrupted ``join`` marks the thread finished (so
    # interpreter exit would not wait for it); in slices, as ``_thread.interrupt_main`` sends
    # no signal that would wake the wait.
    threading.Thread(target=work, name="fcore-compile").start()
    while not finished.wait(0.05):
        pass
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def compile(
    mlir_module_text: str | bytes,
    out_avals: Sequence[AvalSpec],
    *,
    num_args: int | None = None,
    device: Device | None = None,
) -> Executable:
    """Compile StableHLO (text, or MLIR bytecode as bytes) for one device.

    The entry function must be ``func.func public @main``.
    ``out_avals`` gives (shape, dtype) per result: jaxlib does not check them, so
    they must match the program. ``num_args``, when given, is checked against the
    program's parameter count. XLA's errors raise :class:`XlaCompileError`.
    """
    client = _get_client()
    dev = _devices[0] if device is None else device
    if isinstance(mlir_module_text, str) and host_callback.has_callbacks(mlir_module_text):
        return _compile_with_callbacks(client, mlir_module_text, out_avals, dev, num_args)
    cache_dir = compilation_cache_dir()
    if cache_dir is None:
        return Executable(_compile_exe(client, mlir_module_text, dev), out_avals, dev, num_args)
    return _compile_cached(client, mlir_module_text, out_avals, dev, num_args, cache_dir)


def _compile_options(dev: Device) -> xc.CompileOptions:
    """XLA's options for a program on ``dev``: its device assignment names ``dev`` (XLA's
    default is the first device, whatever devices the program is loaded on)."""
    options = xc.CompileOptions()
    if dev != _devices[0]:
        options.device_assignment = xc.DeviceAssignment.create(np.asarray([[dev.id]]))
    return options


def _compile_exe(client: xc.Client, program: str | bytes, dev: Device) -> xc.LoadedExecutable:
    try:
        return run_to_completion(client.compile_and_load, program, xc.DeviceList((dev,)), _compile_options(dev))
    except XlaRuntimeError as e:
        raise XlaCompileError(str(e)) from e


def _compile_cached(
    client: xc.Client,
    program: str | bytes,
    out_avals: Sequence[AvalSpec],
    dev: Device,
    num_args: int | None,
    cache_dir: str,
) -> Executable:
    """Load ``program`` from the persistent cache, else compile it and store it there (when
    it took at least ``persistent_cache_min_compile_time_secs``)."""
    options = _compile_options(dev)
    key = compilation_cache.cache_key(
        program, jaxlib_version(), dev.platform, dev.device_kind, options.SerializeAsString()  # type: ignore[attr-defined]  # in jaxlib, not in its stub
    )
    blob = compilation_cache.get(cache_dir, key)
    if blob is not None:
        try:
            exe = client.deserialize_executable(blob, xc.DeviceList((dev,)), options)
            return Executable(exe, out_avals, dev, num_args)
        except (XlaRuntimeError, ValueError):
            pass  # stale or unreadable: compile and overwrite it
    start = time.perf_counter()
    exe = _compile_exe(client, program, dev)
    if time.perf_counter() - start >= persistent_cache_min_compile_time_secs():
        try:
            payload = exe.serialize()
        except XlaRuntimeError:
            payload = None
        if payload is not None:
            compilation_cache.put(cache_dir, key, payload, compilation_cache_max_size())
    return Executable(exe, out_avals, dev, num_args)


def _compile_with_callbacks(
    client: xc.Client, text: str, out_avals: Sequence[AvalSpec], dev: Device, num_args: int | None
) -> Executable:
    """Compile a program with Python host callbacks (see ``fcore.backend.host_callback``);
    jaxlib takes the callables only with an MLIR module object."""
    from fcore.backend.lowering import parse_module

    text, callables = host_callback.prepare(text, dev.platform)
    try:
        module = parse_module(text)
        exe = run_to_completion(
            client.compile_and_load, module, xc.DeviceList((dev,)), _compile_options(dev), callables
        )
    except (XlaRuntimeError, ValueError) as e:
        raise XlaCompileError(str(e)) from e
    return Executable(exe, out_avals, dev, num_args, host_callbacks=True)


def _run_to_completion(exe: xc.LoadedExecutable) -> LaunchFn:
    """A launch that returns once the program (and so every callback in it) has finished: the
    callbacks of one call happen before anything after it, as with ``effects_barrier``, and an
    exception raised by a callback surfaces here, as an ``XlaRuntimeError`` with its traceback."""
    run = exe.execute_sharded

    def launch(args: Sequence[RawArray]) -> _jax.ExecuteResults:
        results = run(args, with_tokens=True)
        results.consume_token().block_until_ready()
        return results

    return launch


def deserialize(
    blob: bytes,
    out_avals: Sequence[AvalSpec],
    device: Device | None = None,
    *,
    num_args: int | None = None,
) -> Executable:
    """Load an :meth:`Executable.serialize` blob (trusted input only: XLA warns that
    deserializing can run arbitrary code). Failures raise :class:`XlaCompileError`
    so a cache can fall back to compiling.
    """
    client = _get_client()
    dev = _devices[0] if device is None else device
    try:
        exe = client.deserialize_executable(blob, xc.DeviceList((dev,)), None)
    except XlaRuntimeError as e:
        raise XlaCompileError(str(e), "deserializing an XLA executable failed") from e
    return Executable(exe, out_avals, dev, num_args)

"""Arrays spread over several devices, and SPMD executables compiled by XLA's partitioner.

A sharded array is one jaxlib array spanning the devices of a mesh (in the mesh's flat
order, which is also the executables' device assignment). It is assembled from per-device
buffers with jaxlib's ``ArrayImpl`` constructor; its value is read back by compiling a
tiny program whose result is replicated (an all-gather in XLA) and exporting the first
device's copy through DLPack. (jaxlib's own ways to split a multi-device array into its
shards, ``_arrays`` and ``disassemble_into_single_device_arrays``, import ``jax``.)

Shardings reach this layer as XLA's ``HloSharding`` (for jaxlib's arrays) plus the Shardy
text of the mesh and the per-dimension axes (for the programs): ``fcore.sharding`` owns
their meaning.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt
from jaxlib import xla_client as xc

from fcore.backend import host_callback, runtime
from fcore.backend.runtime import Device, XlaCompileError, XlaRuntimeError

__all__ = [
    "ShardedBuffer",
    "SpmdExecutable",
    "SdySharding",
    "compile_spmd",
    "hlo_sharding",
    "put_sharded",
    "tile_assignment",
]

_IMMUTABLE_ONLY_DURING_CALL: Final = xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


class _ArraySharding(xc.GSPMDSharding):
    """GSPMDSharding plus the hooks jaxlib's array code reads (jax's sharding protocol)."""

    memory_kind: ClassVar[str | None] = None

    def _to_xla_hlo_sharding(self, ndim: int) -> xc.HloSharding:
        return self._hlo_sharding


def hlo_sharding(tiles: npt.NDArray[np.int64], replicate_last: bool) -> xc.HloSharding:
    """XLA's sharding for a tile assignment: ``tiles[i0, ..., (r)]`` is the position (in the
    device list) of the device holding tile ``(i0, ...)``; with ``replicate_last`` the last
    axis lists the replicas of each tile."""
    if tiles.size == 1 or (replicate_last and tiles.shape[-1] == tiles.size):
        return xc.HloSharding.replicate()
    op = xc.OpSharding()
    op.type = xc.OpSharding.Type.OTHER
    op.tile_assignment_dimensions = [int(d) for d in tiles.shape]
    op.tile_assignment_devices = [int(d) for d in tiles.reshape(-1)]
    op.replicate_on_last_tile_dim = bool(replicate_last)
    return xc.HloSharding.from_proto(op)


def tile_assignment(proto: xc.OpSharding, ndim: int, num_devices: int) -> npt.NDArray[np.int64]:
    """The inverse of :func:`hlo_sharding` for a sharding XLA chose (iota or explicit form),
    always with a last axis of replicas (of size 1 where there are none); a replicated
    sharding is ``ones(ndim) + [num_devices]``."""
    kind = proto.type
    if kind == xc.OpSharding.Type.REPLICATED or kind == xc.OpSharding.Type.MAXIMAL:
        return np.arange(num_devices).reshape((1,) * ndim + (num_devices,))
    if kind != xc.OpSharding.Type.OTHER:
        raise NotImplementedError(f"XLA chose a sharding fcore cannot represent: {xc.HloSharding.from_proto(proto)}")
    dims = [int(d) for d in proto.tile_assignment_dimensions]
    if proto.tile_assignment_devices:
        tiles = np.asarray(list(proto.tile_assignment_devices), np.int64).reshape(dims)
    else:
        reshape = [int(d) for d in proto.iota_reshape_dims]
        perm = [int(p) for p in proto.iota_transpose_perm]
        tiles = np.arange(int(np.prod(reshape)), dtype=np.int64).reshape(reshape).transpose(perm).reshape(dims)
    replicate_last = bool(proto.replicate_on_last_tile_dim)
    if list(proto.last_tile_dims):
        # Subgroup shardings: fold the trailing subgroup dims into one replica axis.
        n_extra = len(list(proto.last_tile_dims))
        tiles = tiles.reshape(tiles.shape[: len(dims) - n_extra] + (-1,))
        replicate_last = True
    if not replicate_last:
        tiles = tiles.reshape(tiles.shape + (1,))
    return tiles


class SdySharding:
    """A sharding as Shardy spells it in a program: the mesh (``<["x"=2, "y"=2]>``) and the
    per-dimension axes (``[{"x"}, {}]``), plus XLA's ``HloSharding`` of the same layout."""

    __slots__ = ("mesh", "dims", "hlo")

    def __init__(self, mesh: str, dims: str, hlo: xc.HloSharding) -> None:
        self.mesh = mesh
        self.dims = dims
        self.hlo = hlo


class ShardedBuffer:
    """One array over several devices: a multi-device jaxlib array, fcore's aval for it,
    and an opaque ``sharding`` (fcore's sharding object) for the layers above."""

    __slots__ = ("_sharded", "_aval", "devices", "sdy", "sharding")

    def __init__(
        self, array: xc.ArrayImpl, shape: tuple[int, ...], dtype: np.dtype[Any], devices: tuple[Device, ...],
        sdy: SdySharding, sharding: object,
    ) -> None:
        self._sharded = array
        self._aval = runtime._Aval(shape, dtype, devices[0])
        self.devices = devices
        self.sdy = sdy
        self.sharding = sharding

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._aval.dtype

    @property
    def device(self) -> Device:
        return self.devices[0]

    @property
    def placed(self) -> bool:
        """Always: operations on a sharded array run over its devices (``fcore.api.eager_placed``)."""
        return True

    def raw_array(self) -> runtime.RawArray:
        return self._sharded

    def block_until_ready(self) -> ShardedBuffer:
        self._sharded.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return self._sharded.is_deleted()

    def delete(self) -> None:
        self._sharded.delete()

    def to_numpy(self) -> npt.NDArray[Any]:
        """The global value (read-only), gathered by XLA onto every device, then copied
        from the first one."""
        aval = self._aval
        if self._sharded.is_deleted():
            dims = ",".join(map(str, aval.shape))
            raise RuntimeError(f"Array has been deleted with shape={aval.dtype.name}[{dims}].")
        if 0 in aval.shape:
            out: npt.NDArray[Any] | None = np.empty(aval.shape, aval.dtype)
        elif not self.sdy.hlo.is_replicated() and any(d.process_index != runtime.process_index() for d in self.devices):
            raise RuntimeError(
                "Fetching value for `fcore.Array` that spans non-addressable (non process local) devices is not "
                "possible: the other processes hold some of its shards."
            )
        else:
            rep = self._sharded if self.sdy.hlo.is_replicated() else _gather(self)
            out = runtime._dlpack_host_copy(rep, aval)
        if out is None:
            raise NotImplementedError(f"reading a sharded {aval.dtype.name} array back to the host")
        out.flags.writeable = False
        return out

    def __repr__(self) -> str:
        dims = ",".join(map(str, self._aval.shape))
        return f"ShardedBuffer({self._aval.dtype.name}[{dims}] over {len(self.devices)} devices)"


def put_sharded(
    x: npt.NDArray[Any], devices: tuple[Device, ...], indices: Sequence[tuple[slice, ...]], sdy: SdySharding,
    sharding: object,
) -> ShardedBuffer:
    """Copy ``x[indices[i]]`` to ``devices[i]`` for each of this process's devices, as one
    sharded array (in a multi-process job the other processes put their own shards)."""
    pid = runtime.process_index()
    parts = [
        runtime.device_put(np.array(x[idx], order="C"), d).raw_array()
        for d, idx in zip(devices, indices) if d.process_index == pid
    ]
    return assemble(parts, x.shape, x.dtype, devices, sdy, sharding)


def assemble(
    parts: Sequence[runtime.RawArray], shape: tuple[int, ...], dtype: np.dtype[Any], devices: tuple[Device, ...],
    sdy: SdySharding, sharding: object,
) -> ShardedBuffer:
    aval = runtime._Aval(shape, np.dtype(dtype), devices[0])
    arr = xc.ArrayImpl(aval, _ArraySharding(xc.DeviceList(devices), sdy.hlo), list(parts), True, _skip_checks=True)
    return ShardedBuffer(arr, shape, np.dtype(dtype), devices, sdy, sharding)


class SpmdExecutable:
    """A program compiled for ``len(devices)`` partitions by Shardy."""

    __slots__ = ("_exe", "devices", "out_hlo", "_handlers", "_out_avals", "_callbacks")

    def __init__(self, exe: xc.LoadedExecutable, devices: tuple[Device, ...], callbacks: bool = False) -> None:
        self._exe = exe
        #: Whether the program calls Python: then a run returns once every callback has run.
        self._callbacks = callbacks
        self.devices = devices
        #: XLA's sharding of each result (what it chose where the program left it open).
        self.out_hlo: list[xc.OpSharding] = list(exe.get_output_shardings() or ())
        self._handlers: list[Any] = []
        self._out_avals: list[runtime._Aval] = []

    def set_outputs(self, avals: Sequence[tuple[tuple[int, ...], np.dtype[Any]]]) -> None:
        """Build the result handlers once the caller knows the results' types."""
        dl = xc.DeviceList(self.devices)
        if len(self.out_hlo) != len(avals):  # a one-partition program reports no shardings
            self.out_hlo = [xc.HloSharding.replicate().to_proto() for _ in avals]
        self._out_avals = [runtime._Aval(tuple(s), np.dtype(d), self.devices[0]) for s, d in avals]
        self._handlers = [
            xc.array_result_handler(a, _ArraySharding(dl, xc.HloSharding.from_proto(p)), True, _skip_checks=True)
            for a, p in zip(self._out_avals, self.out_hlo)
        ]

    def run(self, args: Sequence[runtime.RawArray]) -> list[xc.ArrayImpl]:
        if self._callbacks:
            results = self._exe.execute_sharded(list(args), with_tokens=True)
            results.consume_token().block_until_ready()
        else:
            results = self._exe.execute_sharded(list(args))
        outs: list[xc.ArrayImpl] = results.consume_with_handlers(self._handlers)
        return outs

    def as_text(self) -> str:
        """The optimized, partitioned HLO module XLA runs on each device."""
        return self._exe.get_hlo_text()

    def cost_analysis(self) -> dict[str, float]:
        return {
            k: float(v)
            for k, v in self._exe.cost_analysis().items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }


def compile_spmd(text: str, devices: tuple[Device, ...]) -> SpmdExecutable:
    """Compile a StableHLO module annotated for Shardy over ``devices`` (one partition each)."""
    client = runtime._get_client()
    opts = xc.CompileOptions()
    opts.num_replicas = 1
    opts.num_partitions = len(devices)
    build = opts.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    opts.device_assignment = xc.DeviceAssignment.create(np.asarray([[d.id for d in devices]]))
    callbacks = host_callback.has_callbacks(text)
    try:
        if callbacks:  # jaxlib takes the callables only with an MLIR module object
            from fcore.backend.lowering import parse_module

            text, callables = host_callback.prepare(text, devices[0].platform)
            exe = runtime.run_to_completion(
                client.compile_and_load, parse_module(text), xc.DeviceList(devices), opts, callables
            )
        else:
            exe = runtime.run_to_completion(client.compile_and_load, text, xc.DeviceList(devices), opts)
    except (XlaRuntimeError, ValueError) as e:
        raise XlaCompileError(str(e)) from e
    return SpmdExecutable(exe, devices, callbacks)


_gathers: dict[tuple[tuple[int, ...], str, str, str, tuple[int, ...]], SpmdExecutable] = {}
_gather_lock = threading.Lock()


def _gather(buf: ShardedBuffer) -> xc.ArrayImpl:
    """``buf`` replicated on all its devices (an identity program with a replicated result)."""
    aval = buf._aval
    from fcore.backend.lowering import element_type

    typ = f"tensor<{''.join(f'{d}x' for d in aval.shape)}{element_type(aval.dtype)}>"
    key = (aval.shape, aval.dtype.str, buf.sdy.mesh, buf.sdy.dims, tuple(d.id for d in buf.devices))
    exe = _gathers.get(key)
    if exe is None:
        rep = "[" + ", ".join("{}" for _ in aval.shape) + "]"
        text = (
            f"module @gather attributes {{mhlo.num_partitions = {len(buf.devices)} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
            f"  sdy.mesh @mesh = {buf.sdy.mesh}\n"
            f"  func.func public @main(%arg0: {typ} {{sdy.sharding = #sdy.sharding<@mesh, {buf.sdy.dims}>}}) -> "
            f"({typ} {{sdy.sharding = #sdy.sharding<@mesh, {rep}>}}) {{\n"
            f"    return %arg0 : {typ}\n  }}\n}}\n"
        )
        exe = compile_spmd(text, buf.devices)
        exe.set_outputs([(aval.shape, aval.dtype)])
        with _gather_lock:
            exe = _gathers.setdefault(key, exe)
    return exe.run([buf._sharded])[0]

"""Arrays over several devices: ``device_put(x, sharding)``, ``.sharding``, ``.addressable_shards``.

A sharded ``ArrayImpl`` holds a ``backend.sharded.ShardedBuffer`` (one jaxlib array over
the mesh's devices) whose ``sharding`` is the ``fcore.sharding.NamedSharding`` it was laid
out with. Arrays on one device keep their ``DeviceBuffer``: nothing here is on the
single-device path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore.backend import runtime
from fcore.backend.sharded import ShardedBuffer, put_sharded
from fcore.interpreters.array import ArrayImpl, register_sharding_view
from fcore.interpreters.eval import to_numpy_arg
from fcore.ir.avals import ShapedArray
from fcore.sharding import Index, NamedSharding, Sharding, SingleDeviceSharding

__all__ = [
    "Shard", "make_array_from_callback", "make_array_from_process_local_data", "put_sharded_value", "sharded_buffer",
    "to_sharding",
]


class Shard:
    """One device's piece of an array: its device, its slice of the global array, the data."""

    __slots__ = ("device", "index", "replica_id", "_global", "_data")

    def __init__(self, device: runtime.Device, index: Index, replica_id: int, global_array: ArrayImpl) -> None:
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self._global = global_array
        self._data: ArrayImpl | None = None

    @property
    def data(self) -> ArrayImpl:
        """The shard as an array on its device (copied there from the gathered value)."""
        if self._data is None:
            host = np.asarray(self._global.host()[self.index])
            g = self._global
            self._data = ArrayImpl(None, g.weak_type, runtime.device_put(host, self.device),
                                   ShapedArray(host.shape, host.dtype, g.weak_type))
        return self._data

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})"


class _View:
    """The ``ShardingView`` installed on ``ArrayImpl``."""

    def sharding(self, x: ArrayImpl) -> Sharding:
        buf = x._placed()
        if type(buf) is ShardedBuffer:
            found: Sharding = buf.sharding  # type: ignore[assignment]  # set by this module
            return found
        return SingleDeviceSharding(buf.device)  # type: ignore[arg-type]  # a backend Device

    def addressable_shards(self, x: ArrayImpl) -> list[Shard]:
        sharding = self.sharding(x)
        pid = runtime.process_index()
        shards = []
        seen: dict[tuple[tuple[int | None, int | None], ...], int] = {}
        for dev, idx in sharding.devices_indices_map(x.shape).items():
            key = tuple((s.start, s.stop) for s in idx)
            replica = seen.get(key, 0)
            seen[key] = replica + 1
            if dev.process_index == pid:
                shards.append(Shard(dev, idx, replica, x))
        return shards


register_sharding_view(_View())


def sharded_buffer(x: object) -> ShardedBuffer | None:
    """The sharded device value of ``x``, if it is a sharded array."""
    if type(x) is ArrayImpl:
        buf = x._device
        if type(buf) is ShardedBuffer:
            return buf
    return None


def put_sharded_value(host: np.ndarray[Any, Any], weak: bool, sharding: NamedSharding,
                      what: str | None = None) -> ArrayImpl:
    """``host`` laid out over ``sharding``'s mesh."""
    sharding.check_shape(host.shape, what)
    idx = sharding.devices_indices_map(host.shape)
    devices = sharding.mesh.flat_devices
    buf = put_sharded(host, devices, [idx[d] for d in devices], sharding.sdy(host.ndim), sharding)
    return ArrayImpl(None, weak, buf, ShapedArray(host.shape, host.dtype, weak))


def to_sharding(leaf: object, sharding: Sharding) -> ArrayImpl:
    """``device_put(leaf, sharding)`` for one leaf (an already matching array is returned)."""
    if isinstance(sharding, SingleDeviceSharding):
        dev = sharding._device
        if type(leaf) is ArrayImpl:
            if sharded_buffer(leaf) is None and leaf.device == dev:
                return leaf
            return ArrayImpl(None, leaf.weak_type, runtime.device_put(leaf.host(), dev), leaf.aval)
        host, weak = to_numpy_arg(leaf)
        return ArrayImpl(None, weak, runtime.device_put(host, dev), ShapedArray(host.shape, host.dtype, weak))
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"device_put: unsupported sharding {sharding!r}")
    if type(leaf) is ArrayImpl:
        buf = sharded_buffer(leaf)
        if buf is not None and buf.sharding == sharding:
            return leaf
        return put_sharded_value(leaf.host(), leaf.weak_type, sharding)
    host, weak = to_numpy_arg(leaf)
    return put_sharded_value(host, weak, sharding)


def make_array_from_callback(shape: tuple[int, ...], sharding: Sharding, data_callback: Any) -> ArrayImpl:
    """An array of ``shape`` laid out as ``sharding``, each of this process's devices holding
    ``data_callback(index)`` for its slice ``index`` of the global array."""
    shape = tuple(int(d) for d in shape)
    if isinstance(sharding, SingleDeviceSharding):
        host = np.asarray(data_callback(tuple(slice(None) for _ in shape)))
        return to_sharding(host, sharding)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"make_array_from_callback: unsupported sharding {sharding!r}")
    sharding.check_shape(shape)
    idx = sharding.devices_indices_map(shape)
    devices = sharding.mesh.flat_devices
    pid = runtime.process_index()
    local = {d: np.asarray(data_callback(idx[d])) for d in devices if d.process_index == pid}
    first = next(iter(local.values()))
    want = sharding.shard_shape(shape)
    for d, block in local.items():
        if block.shape != want:
            raise ValueError(f"data_callback returned a block of shape {block.shape} for {d}; expected {want}")
    parts = [runtime.device_put(np.ascontiguousarray(local[d]) if local[d].ndim else local[d], d).raw_array()
             for d in devices if d in local]
    from fcore.backend.sharded import assemble

    buf = assemble(parts, shape, first.dtype, devices, sharding.sdy(len(shape)), sharding)
    return ArrayImpl(None, False, buf, ShapedArray(shape, first.dtype, False))


def make_array_from_process_local_data(
    sharding: Sharding, local_data: Any, global_shape: tuple[int, ...] | None = None
) -> ArrayImpl:
    """A global array from each process's part of it: ``local_data`` covers the slices of
    the global array that this process's devices hold (all of it in a one-process job)."""
    host = np.asarray(local_data)
    if isinstance(sharding, SingleDeviceSharding):
        return to_sharding(host, sharding)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"make_array_from_process_local_data: unsupported sharding {sharding!r}")
    pid = runtime.process_index()
    mesh = sharding.mesh
    if global_shape is None:
        # Dimensions split over devices of several processes grow by the number of processes' blocks.
        shape = list(host.shape)
        ways = [sharding._ways(d) for d in range(host.ndim)]
        probe = sharding.devices_indices_map(tuple(ways))  # one element per block
        for dim in range(host.ndim):
            local_blocks = {probe[d][dim].start for d in mesh.flat_devices if d.process_index == pid}
            shape[dim] = host.shape[dim] * ways[dim] // max(len(local_blocks), 1)
        global_shape = tuple(shape)
    idx = sharding.devices_indices_map(tuple(global_shape))
    local = [idx[d] for d in mesh.flat_devices if d.process_index == pid]
    starts = [min((i[dim].start or 0) for i in local) for dim in range(host.ndim)]

    def block(index: tuple[slice, ...]) -> Any:
        return host[tuple(slice((s.start or 0) - o, (s.stop if s.stop is not None else global_shape[k]) - o)
                          for k, (s, o) in enumerate(zip(index, starts)))]

    return make_array_from_callback(tuple(global_shape), sharding, block)

"""Arrays as sets of device buffers: ``make_array_from_single_device_arrays`` assembles a
global array from one array per device (without copying through the host), and
``live_arrays`` lists the arrays that hold device memory."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore.api.placement import to_sharding
from fcore.backend import runtime
from fcore.backend.sharded import assemble
from fcore.interpreters.array import ArrayImpl
from fcore.ir.avals import ShapedArray
from fcore.sharding import NamedSharding, Sharding, SingleDeviceSharding

__all__ = ["live_arrays", "make_array_from_single_device_arrays"]


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Sharding, arrays: Sequence[Any], *, dtype: Any = None
) -> ArrayImpl:
    """The array of ``shape`` laid out as ``sharding`` whose shard on each of this process's
    devices is the one of ``arrays`` placed on that device."""
    shape = tuple(int(d) for d in shape)
    arrays = list(arrays)
    if isinstance(sharding, SingleDeviceSharding):
        if len(arrays) != 1:
            raise ValueError(f"a SingleDeviceSharding takes exactly one array, got {len(arrays)}")
        return to_sharding(arrays[0], sharding)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"make_array_from_single_device_arrays: unsupported sharding {sharding!r}")
    if not arrays and dtype is None:
        raise ValueError("If the Array has no addressable shards, `dtype` must be provided via the `dtype` argument.")
    sharding.check_shape(shape)
    want = sharding.shard_shape(shape)
    pid = runtime.process_index()
    devices = sharding.mesh.flat_devices
    local = [d for d in devices if d.process_index == pid]
    by_device: dict[Any, ArrayImpl] = {}
    for a in arrays:
        if not isinstance(a, ArrayImpl) or not isinstance(a.device, runtime.Device):
            raise ValueError(f"make_array_from_single_device_arrays takes arrays on one device each, got {a!r}")
        if a.shape != want:
            raise ValueError(
                f"Expected shard shape {want} doesn't match the single device array shape {a.shape}. "
                f"Shape of Array is {ShapedArray(shape, a.dtype).str_short()} with sharding {sharding}"
            )
        by_device[a.device] = a
    if set(by_device) != set(local):
        raise ValueError(
            f"The arrays are on devices {sorted(d.id for d in by_device)}; the sharding's devices in this "
            f"process are {sorted(d.id for d in local)}"
        )
    dt = np.dtype(dtype) if dtype is not None else arrays[0].dtype
    parts = []
    for d in local:
        buf = by_device[d].device_buffer()
        assert isinstance(buf, runtime.DeviceBuffer)  # a.device is a Device: it is placed
        parts.append(buf.raw_array())
    out = assemble(parts, shape, dt, devices, sharding.sdy(len(shape)), sharding)
    return ArrayImpl(None, False, out, ShapedArray(shape, dt, False))


def live_arrays(platform: str | None = None) -> list[ArrayImpl]:
    """The arrays alive in this process that hold device memory (on ``platform``, if given)."""
    found = []
    for obj in gc.get_objects():
        if type(obj) is ArrayImpl and obj.device_buffer() is not None and not obj.is_deleted():
            if platform is None or all(d.platform == platform for d in obj.devices()):
                found.append(obj)
    return found

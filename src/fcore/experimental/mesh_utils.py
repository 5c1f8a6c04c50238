"""``fcore.experimental.mesh_utils``: device meshes (``jax.experimental.mesh_utils``).

fcore runs on CPU and GPU devices, where JAX's layout is the devices in order (GPUs sorted
by id); TPU torus layouts are not modelled."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.backend import runtime

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

#: Per device kind, a function ``(mesh_shape, devices, *, contiguous_submeshes)`` that may
#: return a mesh for that kind (``None`` falls back to the default layout), as in JAX.
device_kind_handler_dict: dict[str, Callable[..., np.ndarray[Any, Any] | None]] = {}


def _canonical_shape(mesh_shape: Sequence[Any]) -> tuple[int, ...] | None:
    """The sizes as ints (``int()`` of each, as JAX), or None where one is not a number."""
    try:
        return tuple(int(d) for d in mesh_shape)
    except (TypeError, ValueError):
        return None


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray[Any, Any]:
    """An array of ``devices`` (default: all) of shape ``mesh_shape``, ready for ``Mesh``."""
    devs = list(runtime.devices() if devices is None else devices)
    shape = _canonical_shape(mesh_shape)
    if shape is None:
        raise ValueError(f"`mesh_shape` passed to `create_device_mesh` should be a sequence of ints. Got {mesh_shape}")
    if math.prod(shape) != len(devs):
        raise ValueError(f"Number of devices {len(devs)} must equal the product of mesh_shape {shape}")
    last = devs[-1]
    handler = device_kind_handler_dict.get(last.device_kind, None)
    if handler is not None:
        result = handler(shape, devs, contiguous_submeshes=contiguous_submeshes)
        if result is not None:
            return result
    if last.platform == "tpu":
        raise NotImplementedError("fcore does not model TPU torus layouts in create_device_mesh")
    if last.platform == "gpu":
        devs = sorted(devs, key=lambda d: d.id)
    out = np.empty(len(devs), dtype=object)
    out[:] = devs
    return out.reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray[Any, Any]:
    """A mesh over several granules (processes or slices): ``mesh_shape`` within each granule,
    ``dcn_mesh_shape`` across them, the two multiplied axis by axis."""
    devs = list(runtime.devices() if devices is None else devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devs[0], attr):
        raise ValueError(f"Device {devs[0]} does not have attribute {attr}. See `process_is_granule` option.")
    by_key: dict[Any, list[Any]] = {}
    for d in devs:
        by_key.setdefault(getattr(d, attr), []).append(d)
    granules = [by_key[k] for k in sorted(by_key)] if should_sort_granules_by_key else list(by_key.values())
    if math.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(f"Number of slices {len(granules)} must equal the product of dcn_mesh_shape {dcn_mesh_shape}")
    per_granule = [create_device_mesh(mesh_shape, g, allow_split_physical_axes=allow_split_physical_axes) for g in granules]
    index = np.arange(len(granules)).reshape(tuple(dcn_mesh_shape))
    blocks = [per_granule[i] for i in index.ravel()]
    nested: Any = np.empty(len(blocks), dtype=object)
    nested[:] = blocks
    result: np.ndarray[Any, Any] = np.block(nested.reshape(index.shape).tolist())
    return result

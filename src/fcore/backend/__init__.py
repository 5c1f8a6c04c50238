"""fcore's XLA backend. The only fcore package allowed to import ``jaxlib``.

``runtime`` holds the PJRT client, device buffers and executables; the StableHLO
lowering lives beside it. Nothing here imports ``jax``.
"""

from fcore.backend.runtime import (
    Device,
    DeviceBuffer,
    Executable,
    XlaCompileError,
    XlaRuntimeError,
    compile,
    default_device,
    deserialize,
    device_put,
    devices,
    jaxlib_version,
    platform,
)

__all__ = [
    "Device",
    "DeviceBuffer",
    "Executable",
    "XlaCompileError",
    "XlaRuntimeError",
    "compile",
    "default_device",
    "deserialize",
    "device_put",
    "devices",
    "jaxlib_version",
    "platform",
]

"""Which device a jitted call runs on: the one its arguments are committed to.

As in JAX, a computation follows its committed arguments: an array ``device_put`` on
another device than the default one makes ``jit`` run there (and leave its results
there); arguments on the default device or on the host move to it. fcore counts an array
as committed when its buffer lives off the default device (JAX also commits arrays put
explicitly on the default device; fcore moves those instead of refusing the mix).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcore.backend import runtime
from fcore.interpreters.array import ArrayImpl
from fcore.ir.dtypes import dtype_name


def committed_device(flat: Sequence[Any], arg_names: Sequence[str], fun_name: str) -> runtime.Device | None:
    """The one non-default device the ``flat`` arguments live on, or None (the default
    device); arguments on two such devices are JAX's ``ValueError``."""
    default = runtime.default_device()
    found: tuple[int, runtime.Device] | None = None
    for i, x in enumerate(flat):
        if type(x) is ArrayImpl and type(x._device) is runtime.DeviceBuffer:
            device = x._device.device
            if device == default:
                continue
            if found is None:
                found = (i, device)
            elif device != found[1]:
                j, first = found
                raise ValueError(
                    "Received incompatible devices for jitted computation. Got argument "
                    f"{_describe(flat, arg_names, j, first, fun_name)} and argument "
                    f"{_describe(flat, arg_names, i, device, fun_name)}"
                )
    return None if found is None else found[1]


def on_other_device(flat: Sequence[Any]) -> bool:
    """Whether some argument lives off the default device (the cached path's check, made
    only once XLA has refused its arguments)."""
    default = runtime.default_device()
    return any(
        type(x) is ArrayImpl and type(x._device) is runtime.DeviceBuffer and x._device.device != default for x in flat
    )


def _describe(flat: Sequence[Any], names: Sequence[str], i: int, device: runtime.Device, fun_name: str) -> str:
    aval = flat[i].aval
    name = names[i] if i < len(names) else f"args[{i}]"
    shape = ",".join(map(str, aval.shape))
    return (f"{name} of {fun_name} with shape {dtype_name(aval.dtype)}[{shape}] and with device ids [{device.id}] "
            f"on platform {device.platform.upper()}")

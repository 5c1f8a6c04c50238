"""The device queries of ``fcore``: ``devices()``, ``device_count()``, ``process_index()`` ..."""

from __future__ import annotations

from fcore.backend import runtime

__all__ = ["device_count", "devices", "local_device_count", "local_devices", "process_count", "process_index"]


def devices() -> list[runtime.Device]:
    """Every device of the job (in a multi-process job, the other processes' too)."""
    return runtime.devices()


def device_count() -> int:
    return len(runtime.devices())


def local_devices(process_index: int | None = None) -> list[runtime.Device]:
    """This process's devices (or those of process ``process_index``)."""
    if process_index is None:
        return runtime.local_devices()
    return [d for d in runtime.devices() if d.process_index == process_index]


def local_device_count() -> int:
    return len(runtime.local_devices())


def process_index() -> int:
    return runtime.process_index()


def process_count() -> int:
    return len({d.process_index for d in runtime.devices()})

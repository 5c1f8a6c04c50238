"""The device queries of ``fcore``: ``devices()``, ``device_count()``, ``process_index()`` ..."""

from __future__ import annotations

from fcore.backend import runtime

__all__ = ["device_count", "devices", "local_device_count", "local_devices", "process_count", "process_index"]


def _check_backend(backend: object) -> None:
    """``backend=``: fcore has one client; another platform is JAX's "unknown backend" error."""
    if backend is None:
        return
    name = backend if isinstance(backend, str) else getattr(backend, "platform", backend)
    platform = runtime.platform()
    if name == platform or (name == "gpu" and platform == "cuda"):
        return
    if name == "gpu":
        raise RuntimeError(
            f"Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. "
            f"Platforms present are: {platform}"
        )
    raise RuntimeError(f"Unknown backend {name}. Available backends are [{platform!r}]")


def devices(backend: object = None) -> list[runtime.Device]:
    """Every device of the job (in a multi-process job, the other processes' too); ``backend``
    (a platform name) must be fcore's platform, as JAX's check of an unknown backend."""
    _check_backend(backend)
    return runtime.devices()


def device_count(backend: object = None) -> int:
    _check_backend(backend)
    return len(runtime.devices())


def local_devices(process_index: int | None = None, backend: object = None) -> list[runtime.Device]:
    """This process's devices (or those of process ``process_index``)."""
    _check_backend(backend)
    if process_index is None:
        return runtime.local_devices()
    return [d for d in runtime.devices() if d.process_index == process_index]


def local_device_count(backend: object = None) -> int:
    _check_backend(backend)
    return len(runtime.local_devices())


def process_index() -> int:
    return runtime.process_index()


def process_count() -> int:
    return len({d.process_index for d in runtime.devices()})

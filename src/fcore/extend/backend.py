"""``fcore.extend.backend`` as ``jax.extend.backend``: the PJRT client fcore runs on.

fcore holds one client, created on first use (CPU, or CUDA when jax's CUDA plugin works), so
``backends()`` has one entry and ``get_backend(name)`` accepts only that platform, with JAX's
"Unknown backend" ``RuntimeError`` otherwise. ``clear_backends`` differs from JAX's: it drops
every compiled executable, as JAX does, but keeps the client (fcore's arrays and device
objects stay valid; the device count cannot change after the first computation).
"""

from __future__ import annotations

from fcore.api.devices import _check_backend
from fcore.api.jit import clear_caches
from fcore.backend import runtime
from fcore.lax.call import clear_executable_cache

__all__ = [
    "backend_xla_version",
    "backends",
    "clear_backends",
    "clear_in_memory_compilation_cache",
    "get_backend",
    "get_default_device",
]


def get_backend(platform: str | runtime.Client | None = None) -> runtime.Client:
    """The client of ``platform`` (a name such as ``"cpu"``, or a client, returned as is)."""
    if platform is not None and not isinstance(platform, str):
        return platform
    _check_backend(platform)
    return runtime.client()


def backends() -> dict[str, runtime.Client]:
    """Every initialized backend by platform name: fcore's one client."""
    client = runtime.client()
    return {runtime.platform(): client}


def get_default_device() -> runtime.Device:
    """Where arrays go and jit runs when no device is given: fcore's first local device
    (``jax_default_device`` accepts only that device or its platform in fcore)."""
    return runtime.default_device()


def backend_xla_version(platform: str | None = None) -> int | None:
    """The plugin's XLA version, or None for a backend that does not report one (the CPU client)."""
    version: int | None = getattr(get_backend(platform), "xla_version", None)
    return version


def clear_in_memory_compilation_cache() -> None:
    """Forget the executables compiled in this process (the on-disk cache is kept)."""
    clear_executable_cache()


def clear_backends() -> None:
    """Drop every compiled executable and jit launch (fcore keeps its one client: see the module doc)."""
    clear_caches()

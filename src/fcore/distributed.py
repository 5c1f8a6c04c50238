"""``fcore.distributed``: form one job from several processes (``jax.distributed``'s API).

Each process calls ``initialize`` before computing anything; afterwards ``fcore.devices()``
lists every process's devices, ``fcore.local_devices()`` this process's, and a jitted
computation over a mesh of all devices runs on all processes together (each passes its
local shards; collectives cross processes over gloo). Built on jaxlib's distributed runtime.
"""

from __future__ import annotations

from fcore.backend import distributed as _backend

__all__ = ["initialize", "is_initialized", "shutdown"]


def initialize(
    coordinator_address: str | None = None, num_processes: int | None = None, process_id: int | None = None,
    local_device_ids: int | list[int] | None = None, cluster_detection_method: str | None = None,
    initialization_timeout: int = 300, coordinator_bind_address: str | None = None,
    heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
) -> None:
    """Join a multi-process job; process 0 also runs the coordination service at
    ``coordinator_address`` (bound to ``coordinator_bind_address``, default ``[::]:port``).

    The arguments are checked as jax checks them; cluster auto-detection is not supported,
    so ``coordinator_address``, ``num_processes`` and ``process_id`` are required.
    """
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError(
            f"process_id must be a nonnegative int. Got process_id={process_id} of type {type(process_id)}."
        )
    if not isinstance(num_processes, int):
        raise TypeError(
            f"num_processes must be a positive int. Got num_processes={num_processes} of type {type(num_processes)}."
        )
    if not 0 <= process_id < num_processes:
        raise ValueError(
            "process_id and num_processes must be nonnegative, with process_id < num_processes. "
            f"Got process_id={process_id}, num_processes={num_processes}."
        )
    _backend.initialize(
        coordinator_address, num_processes, process_id, coordinator_bind_address, initialization_timeout,
        heartbeat_timeout_seconds, shutdown_timeout_seconds,
    )


def is_initialized() -> bool:
    """Whether this process has joined a multi-process job."""
    return _backend.is_initialized()


def shutdown() -> None:
    """Leave the job (a no-op when not initialized)."""
    _backend.shutdown()

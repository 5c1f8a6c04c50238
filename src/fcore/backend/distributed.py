"""Multi-process jobs on jaxlib's distributed runtime (coordination service + client).

Process 0 runs the coordination service; every process connects a client to it. The client
is then handed to the CPU client (``devices.setup``), which exchanges device topologies with
the other processes and runs cross-process collectives over gloo (TCP), as jax configures
them. Must happen before the first computation creates the client.
"""

from __future__ import annotations

from jaxlib import _jax

from fcore.backend.devices import setup

__all__ = ["initialize", "is_initialized", "shutdown"]


class _State:
    __slots__ = ("service", "client")

    def __init__(self) -> None:
        self.service: _jax.DistributedRuntimeService | None = None
        self.client: _jax.DistributedRuntimeClient | None = None


_state = _State()


def initialize(
    coordinator_address: str, num_processes: int, process_id: int, coordinator_bind_address: str | None = None,
    initialization_timeout: int = 300, heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
) -> None:
    """Join the job coordinated at ``coordinator_address`` (``host:port``) as ``process_id``."""
    if setup.started:
        raise RuntimeError("fcore.distributed.initialize() must be called before any fcore computations are executed.")
    if _state.client is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if process_id == 0:
        bind = coordinator_bind_address or "[::]:" + coordinator_address.rsplit(":", 1)[1]
        _state.service = _jax.get_distributed_runtime_service(
            bind, num_processes, heartbeat_timeout=heartbeat_timeout_seconds, shutdown_timeout=shutdown_timeout_seconds
        )
    client = _jax.get_distributed_runtime_client(
        coordinator_address, process_id, init_timeout=initialization_timeout, use_compression=True,
        heartbeat_timeout=heartbeat_timeout_seconds,
    )
    client.connect()
    _state.client = client
    setup.distributed_client = client
    setup.node_id = process_id
    setup.num_nodes = num_processes


def is_initialized() -> bool:
    return _state.client is not None


def shutdown() -> None:
    """Leave the job (waits for the other processes, up to the shutdown timeout)."""
    if _state.client is not None:
        _state.client.shutdown()
        _state.client = None
    if _state.service is not None:
        _state.service.shutdown()
        _state.service = None

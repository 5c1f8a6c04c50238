"""How the process-wide client is made: the CPU device count and the distributed runtime.

Both must be settled before the first computation creates the client (``runtime``), as in
JAX: ``config.update("jax_num_cpu_devices", N)`` (or ``XLA_FLAGS=
--xla_force_host_platform_device_count=N``, which XLA reads itself) and
``fcore.distributed.initialize``.
"""

from __future__ import annotations

from typing import Final

from jaxlib import _jax

from fcore import config as _config

__all__ = ["ClientSetup", "setup"]


class ClientSetup:
    """What ``runtime._create_client`` passes to ``make_cpu_client``; frozen once it starts."""

    __slots__ = ("num_cpu_devices", "distributed_client", "node_id", "num_nodes", "started")

    def __init__(self) -> None:
        self.num_cpu_devices: int | None = None
        self.distributed_client: _jax.DistributedRuntimeClient | None = None
        self.node_id = 0
        self.num_nodes = 1
        self.started = False

    def collectives(self) -> _jax.CpuCollectives | None:
        """Gloo over TCP when the process belongs to a distributed job (as jax configures it)."""
        if self.distributed_client is None:
            return None
        return _jax.make_gloo_tcp_collectives(distributed_client=self.distributed_client)


setup: Final = ClientSetup()


def _set_num_cpu_devices(n: int) -> None:
    if setup.started:
        raise RuntimeError("jax_num_cpu_devices config should be updated before backends are initialized.")
    setup.num_cpu_devices = None if n < 0 else n


_config._num_cpu_devices_hook[:] = [_set_num_cpu_devices]

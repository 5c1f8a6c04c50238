"""``jax_transfer_guard`` for host-to-device transfers: NumPy arrays and Python scalars passed
to a jitted function (implicit transfers) or to ``device_put`` (explicit ones).

As JAX: ``"allow"`` lets them through; ``"log"`` logs implicit ones (``"log_explicit"`` all);
``"disallow"`` refuses implicit ones with JAX's ``INVALID_ARGUMENT`` error
(``"disallow_explicit"`` all). fcore's own arrays are never guarded: an eager result that still
lives on the host stands for a JAX array that is already on the device.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from fcore.api.staging import abstractify
from fcore.backend import runtime
from fcore.config_options import TRANSFER_GUARD_H2D, transfer_guard_level
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.trace import Tracer

_logger = logging.getLogger(__name__)


def host_to_device_guard() -> str:
    """The host-to-device guard in effect here (``"allow"`` unless one is set)."""
    return transfer_guard_level(TRANSFER_GUARD_H2D)


def check_host_to_device(leaves: Sequence[object], explicit: bool, level: str) -> None:
    """Apply guard ``level`` to the transfers of the host values among ``leaves``."""
    if level == "allow" or (explicit and level in ("log", "disallow")):
        return
    for leaf in leaves:
        if isinstance(leaf, (ArrayImpl, Tracer)):
            continue
        try:
            aval = abstractify(leaf)
        except (TypeError, OverflowError):
            continue  # not an array: the call's own error comes later
        what = (
            f"host-to-device transfer: aval={aval!r}, dst_sharding=SingleDeviceSharding("
            f"device={runtime.default_device()!r}, memory_kind=device)"
        )
        if level.startswith("disallow"):
            raise runtime.XlaRuntimeError(f"INVALID_ARGUMENT: Disallowed {what}")
        _logger.warning("%s", what)

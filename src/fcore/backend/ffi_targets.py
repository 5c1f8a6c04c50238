"""jaxlib's registry of XLA custom-call targets, for ``fcore.ffi`` (``jax.ffi``'s registration).

A foreign function is a C/C++ handler that XLA calls from a compiled program; jaxlib's
``xla_client`` keeps the process-wide table of them (by name and platform) that XLA looks
targets up in when it compiles a ``stablehlo.custom_call``. fcore registers into that same
table, so a target registered through ``jax.ffi`` is visible to fcore and the other way round.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import jaxlib
from jaxlib import xla_client as xc

__all__ = ["include_dir", "register_custom_call_as_batch_partitionable", "register_custom_call_target",
           "register_custom_type"]


def register_custom_call_target(name: str, fn: object, platform: str, api_version: int, **kwargs: Any) -> None:
    """Register ``fn`` (a ``PyCapsule``, or a dict of them by FFI stage) as target ``name``."""
    xc.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_custom_type(name: str, type_registration: Mapping[str, object], platform: str) -> None:
    """Register a user type (``type_id`` / ``type_info`` capsules) that FFI handlers exchange."""
    xc.register_custom_type(name, type_registration, platform=platform)


def register_custom_call_as_batch_partitionable(name: str) -> None:
    """Let the partitioner shard target ``name`` along its leading (batch) dimension."""
    xc.register_custom_call_as_batch_partitionable(name)


def include_dir() -> str:
    """The directory of the C/C++ headers jaxlib ships (``xla/ffi/api/ffi.h``, ...)."""
    jaxlib_file: str | None = jaxlib.__file__  # None for a namespace package
    if jaxlib_file is not None:
        return os.path.join(os.path.dirname(os.path.abspath(jaxlib_file)), "include")
    paths = list(getattr(jaxlib, "__path__", []))
    if not paths:
        raise RuntimeError("Cannot determine jaxlib directory: neither __file__ nor __path__ is available")
    return os.path.join(paths[0], "include")

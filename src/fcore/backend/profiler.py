"""jaxlib's profiler, as ``fcore.profiler`` needs it (the only place it is imported).

The trace machinery (``ProfilerSession``, ``TraceMe``, the profiler server) and the XSpace
readers (``ProfileData``) are jaxlib's own; this module re-exports them and adds what needs the
PJRT client: the platform versions a trace records, and the client's heap profile.
"""

from __future__ import annotations

from jaxlib import _profile_data, _profiler
from jaxlib import xla_client as xc

from fcore.backend import runtime

ProfileOptions = _profiler.ProfileOptions
ProfilerServer = _profiler.ProfilerServer
ProfilerSession = _profiler.ProfilerSession
TraceMe = _profiler.TraceMe
ProfileData = _profile_data.ProfileData
ProfileEvent = _profile_data.ProfileEvent
ProfilePlane = _profile_data.ProfilePlane

start_server = _profiler.start_server
register_subprocess = _profiler.register_subprocess
set_metadata = _profiler.set_metadata
clear_metadata = _profiler.clear_metadata


def _client_for(backend: str | None) -> xc.Client:
    """The process-wide client, which must be ``backend``'s when one is named (fcore has one)."""
    client = runtime._get_client()  # noqa: SLF001 - the backend package's own client
    aliases = {client.platform, "gpu"} if client.platform == "cuda" else {client.platform}
    if backend is not None and backend not in aliases:
        raise RuntimeError(f"Unknown backend {backend!r}: fcore runs on {client.platform!r}")
    return client


def platform_version() -> tuple[str, str]:
    """``(platform, its version string)`` of the client (recorded in each trace's metadata)."""
    client = _client_for(None)
    return client.platform, client.platform_version


def heap_profile(backend: str | None = None) -> bytes:
    """The client's live buffers and executables as an (uncompressed) pprof protocol buffer."""
    return _client_for(backend).heap_profile()

"""``fcore.profiler`` as ``jax.profiler``: traces for TensorBoard/Perfetto and memory profiles.

Everything runs on jaxlib's own profiler (``fcore.backend.profiler``): a trace is a
``ProfilerSession`` that writes ``<log_dir>/plugins/profile/<run>/<host>.xplane.pb`` (with
``create_perfetto_trace``, also a ``perfetto_trace.json.gz``); ``TraceAnnotation`` is
jaxlib's ``TraceMe``; the memory profile is the PJRT client's heap profile in pprof format.
Annotations are plain Python context managers: they mark host time, and staging (``jit``)
is unaffected by them.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import logging
import os
import pathlib
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import fcore
from fcore.backend import profiler as _profiler
from fcore.backend.runtime import jaxlib_version

__all__ = [
    "ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "StepTraceAnnotation", "TraceAnnotation",
    "annotate_function", "device_memory_profile", "register_subprocess", "save_device_memory_profile",
    "start_server", "start_trace", "stop_server", "stop_trace", "trace",
]

logger = logging.getLogger(__name__)

ProfileData = _profiler.ProfileData
ProfileEvent = _profiler.ProfileEvent
ProfilePlane = _profiler.ProfilePlane

P = ParamSpec("P")
R = TypeVar("R")


class ProfileOptions(_profiler.ProfileOptions):
    """Options of the profiler's collectors (host and Python tracer levels, HLO protos, ...)."""


# -- the profiler server ----------------------------------------------------------------------
_profiler_server: _profiler.ProfilerServer | None = None


def start_server(port: int, requires_backend: bool = True) -> _profiler.ProfilerServer:
    """Start the profiler server on ``port`` (TensorBoard's "capture profile" connects to it).

    With ``requires_backend`` the XLA client is created first, so that its activity is traced.
    """
    global _profiler_server
    if _profiler_server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:
        _profiler.platform_version()
    _profiler_server = _profiler.start_server(port)
    return _profiler_server


def stop_server() -> None:
    """Stop the running profiler server."""
    global _profiler_server
    if _profiler_server is None:
        raise ValueError("No active profiler server.")
    _profiler_server = None  # dropping the last reference destroys the server


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profile the subprocess ``pid`` (whose profiler server listens on ``port``) along with this
    one; returns the function that unregisters it."""
    return _profiler.register_subprocess(pid, port)


# -- traces -----------------------------------------------------------------------------------
class _ProfileState:
    def __init__(self) -> None:
        self.profile_session: _profiler.ProfilerSession | None = None
        self.log_dir: str | None = None
        self.create_perfetto_link = False
        self.create_perfetto_trace = False
        self.lock = threading.Lock()

    def reset(self) -> None:
        self.profile_session = None
        self.create_perfetto_link = False
        self.create_perfetto_trace = False
        self.log_dir = None


_profile_state = _ProfileState()


def start_trace(
    log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Start a profiler trace, saved to ``log_dir`` by :func:`stop_trace` (one at a time: a
    second start raises ``RuntimeError``)."""
    with _profile_state.lock:
        if _profile_state.profile_session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
        _profiler.clear_metadata()
        platform, version = _profiler.platform_version()  # the client exists before the session starts
        _profiler.set_metadata("fcore_version", fcore.__version__)
        _profiler.set_metadata("jaxlib_version", jaxlib_version())
        _profiler.set_metadata(f"{platform}_version", version)
        options = profiler_options if profiler_options is not None else ProfileOptions()
        _profile_state.profile_session = _profiler.ProfilerSession(options)
        _profile_state.create_perfetto_link = create_perfetto_link
        _profile_state.create_perfetto_trace = create_perfetto_trace or create_perfetto_link
        _profile_state.log_dir = str(log_dir)


def _write_perfetto_trace_file(log_dir: os.PathLike[str] | str) -> pathlib.Path:
    """``perfetto_trace.json.gz`` beside the latest run's ``trace.json.gz``, without the
    ``metadata`` field that Perfetto rejects."""
    runs = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    latest = max(runs, key=os.path.getmtime)
    try:
        (trace_json,) = latest.glob("*.trace.json.gz")
    except ValueError as e:
        raise ValueError(f"Invalid trace folder: {latest}") from e
    with gzip.open(trace_json, "rb") as fp:
        data = json.load(fp)
    data.pop("metadata", None)
    perfetto_trace = latest / "perfetto_trace.json.gz"
    with gzip.open(perfetto_trace, "w") as fp:
        fp.write(json.dumps(data).encode("utf-8"))
    return perfetto_trace


class _PerfettoServer(http.server.SimpleHTTPRequestHandler):
    """Serves the trace file to ui.perfetto.dev."""

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        setattr(self.server, "last_request", self.path)  # noqa: B010 - an attribute of our own on the server
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802
        self.send_error(404, "File not found")


def _host_perfetto_trace_file(path: os.PathLike[str] | str) -> None:
    """Serve ``path`` on 127.0.0.1:9001 (where ui.perfetto.dev looks) until Perfetto fetched it."""
    port = 9001
    directory, filename = os.path.split(path)
    handler = functools.partial(_PerfettoServer, directory=directory)
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", port), handler) as httpd:
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{filename}")
        while getattr(httpd, "last_request", None) != "/" + filename:
            httpd.handle_request()


def stop_trace() -> None:
    """Stop the running trace and write it to the ``log_dir`` given to :func:`start_trace`
    (``RuntimeError`` when no trace runs)."""
    with _profile_state.lock:
        session = _profile_state.profile_session
        if session is None:
            raise RuntimeError("No profile started")
        log_dir = str(_profile_state.log_dir)
        session.stop_and_export(log_dir)
        if _profile_state.create_perfetto_trace:
            path = _write_perfetto_trace_file(log_dir)
            if _profile_state.create_perfetto_link:
                _host_perfetto_trace_file(path)
        _profile_state.reset()
        _profiler.clear_metadata()


@contextmanager
def trace(
    log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> Iterator[None]:
    """A profiler trace of the enclosed code, written to ``log_dir`` (for TensorBoard's profile
    plugin, or Perfetto with ``create_perfetto_trace``).

    >>> import tempfile, pathlib
    >>> import fcore
    >>> log_dir = tempfile.mkdtemp()
    >>> with fcore.profiler.trace(log_dir):
    ...     with fcore.profiler.TraceAnnotation("my_step"):
    ...         fcore.jit(lambda x: x * 2)(3.0).block_until_ready()
    Array(6., dtype=float32, weak_type=True)
    >>> [p.suffixes for p in pathlib.Path(log_dir).glob("plugins/profile/*/*.xplane.pb")]
    [['.xplane', '.pb']]
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


# -- annotations ------------------------------------------------------------------------------
class TraceAnnotation(_profiler.TraceMe):
    """A context manager whose span shows up as an event named ``name`` on the trace timeline
    (keyword arguments become the event's metadata)."""


class StepTraceAnnotation(TraceAnnotation):
    """A :class:`TraceAnnotation` that marks one step (``step_num=...``) for per-step analysis."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable[P, R], name: str | None = None, **decorator_kwargs: Any) -> Callable[P, R]:
    """``func`` with each call wrapped in a :class:`TraceAnnotation` named ``name`` (by default
    the function's qualified name); use ``functools.partial`` to pass ``name``."""
    label = name or str(getattr(func, "__qualname__", None) or getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


# -- memory profiles --------------------------------------------------------------------------
def device_memory_profile(backend: str | None = None) -> bytes:
    """The live device buffers and executables, with their allocation sites, as a gzipped
    pprof protocol buffer (``pprof`` reads it)."""
    return gzip.compress(_profiler.heap_profile(backend))


def save_device_memory_profile(filename: os.PathLike[str] | str, backend: str | None = None) -> None:
    """Write :func:`device_memory_profile` to ``filename``."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)

"""``fcore.profiler`` on jaxlib's profiler: a trace writes an XSpace that holds the annotations,
annotations leave jit alone, memory profiles are gzipped pprof, and the errors are JAX's."""

from __future__ import annotations

import gzip
import pathlib
import socket

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore import profiler


def test_trace_writes_an_xspace_with_the_annotations(tmp_path: pathlib.Path) -> None:
    f = fcore.jit(lambda x: fnp.sin(x) * 2)

    @profiler.annotate_function
    def step(x: np.ndarray) -> fcore.Array:
        with profiler.TraceAnnotation("inside_jit_trace"):  # runs while jit traces: no effect on the program
            return f(x)

    x = np.ones(4, np.float32)
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with pytest.raises(RuntimeError, match="Profile has already been started"):
            profiler.start_trace(tmp_path)
        for i in range(2):
            with profiler.StepTraceAnnotation("train", step_num=i), profiler.TraceAnnotation("my_label", extra=3):
                out = step(x)
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(x), rtol=1e-6)
    assert step.__name__ == "step"
    (xplane,) = tmp_path.glob("plugins/profile/*/*.xplane.pb")
    assert list(tmp_path.glob("plugins/profile/*/perfetto_trace.json.gz"))
    data = profiler.ProfileData.from_file(str(xplane))
    names = {e.name for plane in data.planes for line in plane.lines for e in line.events}
    assert {"my_label", "train", "inside_jit_trace"} <= names
    assert any(n.endswith("step") for n in names)  # annotate_function's qualified name
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()


def test_memory_profile_and_server(tmp_path: pathlib.Path) -> None:
    keep = fcore.device_put(np.ones(1000, np.float32))
    raw = profiler.device_memory_profile()
    assert raw[:2] == b"\x1f\x8b" and gzip.decompress(raw)
    profiler.save_device_memory_profile(tmp_path / "mem.prof")
    assert (tmp_path / "mem.prof").read_bytes()[:2] == b"\x1f\x8b"
    with pytest.raises(RuntimeError, match="Unknown backend"):
        profiler.device_memory_profile("tpu")
    del keep
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = profiler.start_server(port)
    with pytest.raises(ValueError, match="Only one profiler server can be active at a time"):
        profiler.start_server(port)
    profiler.stop_server()
    with pytest.raises(ValueError, match="No active profiler server"):
        profiler.stop_server()

"""``fcore.distributed``: two processes on 127.0.0.1 form one job with 4 CPU devices and run
a jitted ``psum`` over a global mesh (each process started here, with timeouts)."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

import pytest

import fcore
from multidevice import PRELUDE, script_env

_WORKER = """
import sys
port, pid = int(sys.argv[1]), int(sys.argv[2])
addr = f"127.0.0.1:{port}"
fcore.distributed.initialize(addr, 2, pid, coordinator_bind_address=addr, initialization_timeout=60,
                             heartbeat_timeout_seconds=30, shutdown_timeout_seconds=60)
assert fcore.distributed.is_initialized()
assert fcore.device_count() == 4 and fcore.local_device_count() == 2, fcore.devices()
assert fcore.process_count() == 2 and fcore.process_index() == pid
assert all(d.process_index == pid for d in fcore.local_devices())
mesh = fcore.make_mesh((4,), ("i",))
x = np.arange(16, dtype=np.float32).reshape(8, 2)
a = fcore.device_put(x, NamedSharding(mesh, P("i")))
assert len(a.addressable_shards) == 2 and not a.is_fully_addressable
f = fcore.jit(fcore.shard_map(lambda v: lax.psum(v, "i"), mesh=mesh, in_specs=P("i"), out_specs=P()))
r = f(a)
np.testing.assert_array_equal(np.asarray(r), x.reshape(4, 2, 2).sum(0))
b = fcore.make_array_from_process_local_data(NamedSharding(mesh, P("i")), x[4 * pid : 4 * pid + 4])
assert b.shape == (8, 2)
np.testing.assert_array_equal(np.asarray(f(b)), x.reshape(4, 2, 2).sum(0))
g = fcore.jit(lambda v: (v * 2).sum(0), out_shardings=NamedSharding(mesh, P()))(a)
np.testing.assert_array_equal(np.asarray(g), (x * 2).sum(0))
try:
    np.asarray(a)
except RuntimeError as e:
    assert "non-addressable" in str(e)
else:
    raise AssertionError("reading a value other processes hold must fail")
fcore.distributed.shutdown()
print("ok", pid)
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_two_processes_form_one_job() -> None:
    port = _free_port()
    code = PRELUDE + textwrap.dedent(_WORKER)
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(port), str(pid)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=script_env(2))
        for pid in range(2)
    ]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=240)
            results.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for pid, (rc, out, err) in enumerate(results):
        assert rc == 0, f"process {pid} failed (rc={rc}):\n{err[-5000:]}"
        assert out.strip().endswith(f"ok {pid}")


def test_initialize_argument_errors_and_late_call() -> None:
    with pytest.raises(ValueError, match="coordinator_address should be defined"):
        fcore.distributed.initialize(None, 2, 0)
    with pytest.raises(ValueError, match="process_id < num_processes"):
        fcore.distributed.initialize("127.0.0.1:1", 2, 2)
    with pytest.raises(TypeError, match="process_id must be a nonnegative int"):
        fcore.distributed.initialize("127.0.0.1:1", 2, "0")  # type: ignore[arg-type]
    fcore.devices()
    with pytest.raises(RuntimeError, match="must be called before any fcore computations"):
        fcore.distributed.initialize("127.0.0.1:1", 2, 0)
    assert not fcore.distributed.is_initialized()
    fcore.distributed.shutdown()  # a no-op

"""Run a test script in a fresh Python process with N CPU devices.

The device count is fixed when the backend starts, and the pytest process keeps one device,
so every multi-device test runs its body in a subprocess (with a timeout, so a hang fails
the test instead of CI). The script sees ``fcore`` from this checkout and may import jax.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

#: Shared by the scripts: jax's mesh with Auto axes, as fcore's meshes behave.
PRELUDE = """
import numpy as np
import fcore
import fcore.numpy as fnp
from fcore import lax
from fcore.sharding import Mesh, NamedSharding, PartitionSpec as P
"""


def script_env(num_devices: int) -> dict[str, str]:
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={num_devices}"
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("FCORE_VERIFY", "1")
    env["FCORE_PLATFORM"] = "cpu"
    env["JAX_PLATFORMS"] = "cpu"
    return env


def run_script(code: str, num_devices: int = 4, timeout: float = 300) -> str:
    """Run ``PRELUDE + code``; returns its stdout, or fails the test with its stderr."""
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        capture_output=True, text=True, timeout=timeout, env=script_env(num_devices),
    )
    if proc.returncode != 0:
        raise AssertionError(f"script failed (rc={proc.returncode}):\n{proc.stderr[-6000:]}\nstdout:\n{proc.stdout[-2000:]}")
    return proc.stdout

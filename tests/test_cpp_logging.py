"""jaxlib's C++ log lines stay off the terminal as under JAX; ``TF_CPP_MIN_LOG_LEVEL=0`` brings them back."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = "import fcore, fcore.numpy as fnp; print(fcore.jit(lambda x: x + 1)(fnp.ones(3)))"


def run(level: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)


def test_quiet_by_default() -> None:
    result = run(None)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("[2. 2. 2.]\n", "")


def test_switch_turns_logs_back_on() -> None:
    result = run("0")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[2. 2. 2.]\n"
    assert "pjrt_client.cc" in result.stderr and "PjRt-IFRT device count" in result.stderr


@pytest.mark.parametrize("level", ["1", "2", "3"])
def test_higher_levels_stay_quiet(level: str) -> None:
    assert run(level).stderr == ""

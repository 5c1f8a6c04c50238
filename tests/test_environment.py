"""``fcore.print_environment_info`` reports what ``jax.print_environment_info`` does, plus fcore's config."""

from __future__ import annotations

import jax
import jaxlib
import numpy as np
import pytest

import fcore
from fcore.config_options import OPTIONS


def _lines(info: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in info.splitlines() if ": " in line)


def test_matches_jax_report() -> None:
    ours = _lines(fcore.print_environment_info(return_string=True) or "")
    theirs = _lines(jax.print_environment_info(return_string=True) or "")
    assert ours["fcore"].strip() == fcore.__version__
    assert ours["jaxlib"].strip() == jaxlib.__version__ == theirs["jaxlib"].strip()
    assert ours["numpy"].strip() == np.__version__
    for key in ("python", "process_count", "platform"):
        assert ours[key] == theirs[key], key
    # jax's line ends in a stray quote character
    assert ours["device info"] == theirs["device info"].rstrip('"')
    assert ours["devices"] == str(fcore.devices())


def test_config_in_force_is_the_callers() -> None:
    with fcore.enable_x64(), fcore.numpy_dtype_promotion("strict"), fcore.log_compiles(True):
        info = fcore.print_environment_info(return_string=True) or ""
    (line,) = [line for line in info.splitlines() if line.startswith("config: ")]
    settings = dict(item.split("=", 1) for item in line[len("config: "):].split())
    # fcore's own settings each once; of JAX's other options, only those changed here.
    assert set(settings) == {n for n in fcore.config.values if n not in OPTIONS} | {"jax_log_compiles"}
    assert settings["enable_x64"] == "True" and settings["numpy_dtype_promotion"] == "'strict'"
    assert settings["verify"] == "True" and settings["disable_jit"] == "False"
    assert "enable_x64=False" in (fcore.print_environment_info(return_string=True) or "")


def test_environment_variables_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FCORE_SOMETHING", "on")
    monkeypatch.setenv("XLA_SOMETHING", "2")
    monkeypatch.setenv("UNRELATED_SOMETHING", "x")
    lines = (fcore.print_environment_info(return_string=True) or "").splitlines()
    assert "FCORE_SOMETHING=on" in lines and "XLA_SOMETHING=2" in lines
    assert not any(line.startswith("UNRELATED_") for line in lines)


def test_prints_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert fcore.print_environment_info() is None
    out = capsys.readouterr().out
    assert out == (fcore.print_environment_info(return_string=True) or "") + "\n"

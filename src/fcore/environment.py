"""``fcore.print_environment_info``: what to paste into a bug report (as ``jax.print_environment_info``).

Versions, devices, the configuration in force and the environment variables that change
fcore's or XLA's behaviour, in JAX's layout, so a report reads the same for either library.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import textwrap

import numpy as np

from fcore.backend import runtime
from fcore.config import config
from fcore.config_options import OPTIONS

__all__ = ["print_environment_info"]

#: Environment variables shown: fcore's own, JAX's, XLA's, and jaxlib's C++ logging switch.
_ENV_PREFIXES = ("FCORE_", "JAX_", "XLA_", "TF_CPP_")


def _settings_worth_printing() -> dict[str, bool | str | int | float | None]:
    """fcore's own settings, and of JAX's other options those changed from their default
    (the 130 untouched ones would bury the line a bug report needs)."""
    values = config.values
    changed = {o.name for o in OPTIONS.values() if values.get(o.name, o.default) != o.default}
    return {name: value for name, value in values.items() if name not in OPTIONS or name in changed}


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or, with ``return_string=True``, return) fcore's installation and environment.

    The fcore, jaxlib, NumPy and Python versions, the devices of the backend (starting it if
    needed), the platform, fcore's settings (and JAX options set away from their default) as in force in the calling
    context, and the ``FCORE_*``, ``JAX_*``, ``XLA_*`` and ``TF_CPP_*`` environment variables;
    on a machine with ``nvidia-smi``, its output.

    >>> import fcore
    >>> print(fcore.print_environment_info(return_string=True))  # doctest: +ELLIPSIS
    fcore:  ...
    jaxlib: ...
    numpy:  ...
    config: enable_x64=False numpy_dtype_promotion='standard' verify=...
    ...
    """
    from fcore import __version__

    devices = runtime.devices()
    local = [d for d in devices if d.process_index == devices[0].process_index]
    python_version = sys.version.replace("\n", " ")
    settings = " ".join(f"{name}={value!r}" for name, value in _settings_worth_printing().items())
    info = textwrap.dedent(
        f"""\
        fcore:  {__version__}
        jaxlib: {runtime.jaxlib_version()}
        numpy:  {np.__version__}
        python: {python_version}
        device info: {devices[0].device_kind}-{len(devices)}, {len(local)} local devices
        devices: {devices}
        process_count: {len({d.process_index for d in devices})}
        platform: {platform.uname()}
        config: {settings}"""
    )
    for key, value in sorted(os.environ.items()):
        if key.startswith(_ENV_PREFIXES):
            info += f"\n{key}={value}"
    nvidia_smi = _nvidia_smi()
    if nvidia_smi:
        info += "\n\n$ nvidia-smi\n" + nvidia_smi
    if return_string:
        return info
    print(info)
    return None


def _nvidia_smi() -> str | None:
    """``nvidia-smi``'s report, or None where it is absent or fails (as in JAX)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        return subprocess.run([exe], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None

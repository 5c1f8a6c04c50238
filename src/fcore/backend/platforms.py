"""Which platform the process-wide client is for: ``jax_platforms`` / ``jax_platform_name``
(and fcore's older ``FCORE_PLATFORM``), and the check of ``jax_default_device``.

fcore holds one client (``runtime``), so it takes the first platform asked for; as in JAX,
the choice is made at the first computation, and a platform that cannot be had raises then.
"""

from __future__ import annotations

import os

from fcore import config_options as _options
from fcore.config_options import Value

__all__ = ["requested_platform", "unavailable"]

#: The platforms fcore can run on ('gpu' is JAX's alias of 'cuda').
KNOWN = ("cpu", "cuda")
#: JAX platforms fcore has no backend for.
_OTHER_JAX_PLATFORMS = ("tpu", "rocm", "metal", "neuron", "METAL")
_AUTO_HINT = "(set JAX_PLATFORMS='' to automatically choose an available backend)"


def _normalize(name: str) -> str:
    name = name.strip()
    return "cuda" if name.lower() in ("gpu", "cuda") else name


def requested_platform() -> tuple[str, bool]:
    """(platform, named): ``"cpu"``, ``"cuda"``, or ``""`` for the automatic choice (CUDA
    where its plugin works, else CPU); ``named`` when ``jax_platform_name`` chose it (JAX's
    error differs). An unknown or unsupported platform raises JAX's ``RuntimeError``."""
    platforms = _options.PLATFORMS.get()
    if isinstance(platforms, str) and platforms.strip():
        names = [_normalize(p) for p in platforms.split(",") if p.strip()]
        for name in names:
            _check_known(name)
        return names[0], False
    named = _options.PLATFORM_NAME.get()
    if isinstance(named, str) and named:
        name = _normalize(named)
        if name not in KNOWN:
            raise RuntimeError(f"Unknown backend {name}. Available backends are {list(KNOWN)}")
        return name, True
    want = os.environ.get("FCORE_PLATFORM", "").strip().lower()
    if want not in ("", "cpu", "cuda", "gpu"):
        raise ValueError(f"FCORE_PLATFORM must be 'cpu', 'cuda' or 'gpu', got {want!r}")
    return _normalize(want) if want else "", False


def _check_known(name: str) -> None:
    if name in KNOWN:
        return
    if name in _OTHER_JAX_PLATFORMS:
        raise RuntimeError(f"Unable to initialize backend '{name}': fcore has no {name} backend {_AUTO_HINT}")
    raise RuntimeError(
        f"Unable to initialize backend '{name}': Backend '{name}' is not in the list of known backends: "
        f"{list(KNOWN)}. {_AUTO_HINT}"
    )


def unavailable(name: str, named: bool, why: str) -> RuntimeError:
    """JAX's error for a platform asked for that cannot be had."""
    if named:
        return RuntimeError(f"Unknown backend {name}. Available backends are ['cpu']")
    return RuntimeError(f"Unable to initialize backend '{name}': {why} {_AUTO_HINT}")


def _check_platform_change(value: Value) -> None:
    """A platform asked for after the client exists must be the client's (fcore has one)."""
    from fcore.backend import runtime  # lazy: runtime imports this module

    if runtime._client is None or not isinstance(value, str) or not value.strip():
        return
    first = _normalize(value.split(",")[0])
    if first != runtime._client.platform:
        raise RuntimeError(
            f"fcore's backend is already '{runtime._client.platform}'; set jax_platforms/jax_platform_name "
            "before the first computation (fcore holds one client)"
        )


def _check_default_device(value: Value) -> None:
    """``jax_default_device``: fcore places arrays and runs jit on its first device only."""
    if value is None:
        return
    from fcore.backend import runtime  # lazy: runtime imports this module

    first = runtime.default_device()
    if isinstance(value, str):
        if _normalize(value) != first.platform:
            raise RuntimeError(f"Unknown backend {value}. Available backends are [{first.platform!r}]")
        return
    if value != first:
        raise NotImplementedError(
            f"fcore does not support jax_default_device={value!r}: fcore places arrays and runs jit on its "
            f"first device ({first!r}) only"
        )


_options.PLATFORMS.hooks.append(_check_platform_change)
_options.PLATFORM_NAME.hooks.append(_check_platform_change)
_options.DEFAULT_DEVICE.hooks.append(_check_default_device)

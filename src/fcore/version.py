"""``fcore.version`` as ``jax.version``: fcore's own release and the oldest jaxlib it runs on.

Kept free of imports so that ``fcore.__version__`` costs nothing to read.
"""

from __future__ import annotations

__all__ = ["__version__", "__version_info__"]

_version = "0.1.0"
#: The released version string (JAX computes a dev string when this is None; fcore is released).
_release_version: str = _version
__version__ = _release_version

#: The oldest jaxlib fcore supports (``fcore.backend.runtime.SUPPORTED_JAXLIB``'s lower bound).
_minimum_jaxlib_version = "0.10.2"


def _version_as_tuple(version_str: str) -> tuple[int, ...]:
    """``"0.10.2"`` -> ``(0, 10, 2)``: the numeric components only, as jax.version's."""
    return tuple(int(i) for i in version_str.split(".") if i.isdigit())


__version_info__ = _version_as_tuple(__version__)
_minimum_jaxlib_version_info = _version_as_tuple(_minimum_jaxlib_version)

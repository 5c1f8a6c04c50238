"""``set_cache_dir`` / ``reset_cache``, as ``jax.experimental.compilation_cache.compilation_cache``:
the persistent compilation cache's directory (the same setting as ``jax_compilation_cache_dir``)."""

from __future__ import annotations

from fcore.config import config

__all__ = ["reset_cache", "set_cache_dir"]


def set_cache_dir(path: str) -> None:
    """Keep compiled programs in ``path`` and look there before compiling."""
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Stop using the persistent cache directory (as if it had never been set)."""
    config.update("jax_compilation_cache_dir", None)

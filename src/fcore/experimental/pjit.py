"""``fcore.experimental.pjit``: the legacy name of :func:`fcore.jit` with shardings,
deprecated as in JAX (accessing ``pjit`` here warns with JAX's message)."""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__: list[str] = []

_MESSAGE = "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead."


def _deprecated_pjit(
    fun: Callable[..., Any],
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    device: Any = None,
    backend: str | None = None,
    inline: bool = False,
    compiler_options: dict[str, Any] | None = None,
) -> Any:
    """Please use `fcore.jit`: ``pjit(f, in_shardings, out_shardings)`` is
    ``jit(f, in_shardings=..., out_shardings=...)``."""
    from fcore.api.jit import jit

    if device is not None or backend is not None or compiler_options is not None:
        raise NotImplementedError("fcore's pjit does not take device, backend or compiler_options; use fcore.jit")
    return jit(
        fun, static_argnums=static_argnums, donate_argnums=donate_argnums, static_argnames=static_argnames,
        donate_argnames=donate_argnames, keep_unused=keep_unused, inline=inline, in_shardings=in_shardings,
        out_shardings=out_shardings,
    )


if typing.TYPE_CHECKING:
    pjit = _deprecated_pjit
else:

    def __getattr__(name: str) -> Any:
        if name == "pjit":
            warnings.warn(_MESSAGE, DeprecationWarning, stacklevel=2)
            return _deprecated_pjit
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

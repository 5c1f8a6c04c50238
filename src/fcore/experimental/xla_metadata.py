"""``fcore.experimental.xla_metadata``: attach XLA frontend attributes to lowered ops, as
``jax.experimental.xla_metadata`` (docs/xla_metadata.md).

``set_xla_metadata(x, **kw)`` tags the op that computes each leaf of ``x``;
``set_xla_metadata(**kw)`` is a context manager (and decorator) under which every equation
staged carries the attributes, so each op that defines one of its results is tagged. The
attributes do not change what is computed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import Token
from types import TracebackType
from typing import Any

from fcore import tree_util
from fcore.backend.frontend_attributes import metadata_items
from fcore.ir.params import ParamValue
from fcore.config import xla_metadata_context
from fcore.ir.source_info import XlaMetadata
from fcore.lax.xla_metadata import xla_metadata_value

__all__ = ["set_xla_metadata"]


class _XlaMetadataWrapper:
    """A function decorated with the context manager: calls run inside it, and so do calls of
    its callable attributes (``jit(f).lower``), as JAX's wrapper does."""

    def __init__(self, f: Callable[..., Any], ctx: XlaMetadataContextManager) -> None:
        self._f = f
        self._ctx = ctx
        functools.update_wrapper(self, f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._ctx:
            return self._f(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._f, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._ctx:
                return attr(*args, **kwargs)

        return wrapper


class XlaMetadataContextManager:
    """Puts ``updates`` in force (over the enclosing ones; a ``None`` value removes a key)."""

    __slots__ = ("_tokens", "updates")

    def __init__(self, updates: dict[str, Any]) -> None:
        self.updates = updates
        self._tokens: list[Token[XlaMetadata]] = []

    def __enter__(self) -> None:
        if not self.updates:
            return
        merged: dict[str, Any] = dict(xla_metadata_context.get()) | self.updates
        self._tokens.append(xla_metadata_context.set(metadata_items(merged)))

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.updates:
            xla_metadata_context.reset(self._tokens.pop())

    def __call__(self, f: Callable[..., Any]) -> _XlaMetadataWrapper:
        return _XlaMetadataWrapper(f, self)


def set_xla_metadata(x: Any = None, **kwargs: Any) -> Any:
    """With ``x``: ``x`` with the op computing each leaf tagged by ``kwargs``. Without: a
    context manager (usable as a decorator) tagging every op staged inside."""
    if x is None:
        return XlaMetadataContextManager(kwargs)
    kvs: tuple[tuple[str, ParamValue], ...] = tuple(sorted(kwargs.items()))
    return tree_util.tree_map(lambda v: xla_metadata_value(v, kvs), x)

"""Context-local configuration: 64-bit mode, promotion mode, verify-each.

A leaf module (imports nothing of fcore). Every setting is a ``ContextVar`` so that
threads and asyncio tasks each see their own value, as SPEC §3.1 requires.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Literal

PromotionMode = Literal["standard", "strict"]

_x64: ContextVar[bool] = ContextVar(
    "fcore_enable_x64", default=os.environ.get("FCORE_ENABLE_X64", "0") in ("1", "true", "True")
)
_promotion: ContextVar[PromotionMode] = ContextVar("fcore_numpy_dtype_promotion", default="standard")
_verify: ContextVar[bool] = ContextVar(
    "fcore_verify_each", default=os.environ.get("FCORE_VERIFY", "0") in ("1", "true", "True")
)


# The getters are the context variables' own ``get`` methods: they are read on every
# primitive application, so no Python frame sits in between.

#: ``x64_enabled()``: whether 64-bit dtypes are kept (off by default, as in JAX).
x64_enabled: Callable[[], bool] = _x64.get

#: ``promotion_mode()``: ``"standard"`` or ``"strict"`` dtype promotion.
promotion_mode: Callable[[], PromotionMode] = _promotion.get

#: ``verify_enabled()``: whether every jaxpr fcore produces is type-checked (MLIR's verify-each).
verify_enabled: Callable[[], bool] = _verify.get


class Config:
    """``fcore.config.update(name, value)`` as in ``jax.config.update``."""

    def update(self, name: str, value: object) -> None:
        if name in ("enable_x64", "jax_enable_x64"):
            _x64.set(bool(value))
        elif name in ("numpy_dtype_promotion", "jax_numpy_dtype_promotion"):
            if value not in ("standard", "strict"):
                raise ValueError(f"numpy_dtype_promotion must be 'standard' or 'strict', got {value!r}")
            _promotion.set("strict" if value == "strict" else "standard")
        elif name in ("verify", "fcore_verify"):
            _verify.set(bool(value))
        else:
            raise ValueError(f"unknown config option {name!r}")

    @property
    def enable_x64(self) -> bool:
        return _x64.get()


config = Config()


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Turn 64-bit mode on (or off) inside a ``with`` block, context-locally."""
    token = _x64.set(new_val)
    try:
        yield
    finally:
        _x64.reset(token)


@contextlib.contextmanager
def numpy_dtype_promotion(mode: PromotionMode) -> Iterator[None]:
    """``"standard"`` or ``"strict"`` implicit dtype promotion inside a ``with`` block."""
    if mode not in ("standard", "strict"):
        raise ValueError(f"numpy_dtype_promotion must be 'standard' or 'strict', got {mode!r}")
    token = _promotion.set(mode)
    try:
        yield
    finally:
        _promotion.reset(token)


@contextlib.contextmanager
def verify_each(on: bool = True) -> Iterator[None]:
    """Type-check every jaxpr produced inside the block."""
    token = _verify.set(on)
    try:
        yield
    finally:
        _verify.reset(token)

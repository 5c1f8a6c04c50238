"""``fcore.extend.source_info_util`` as ``jax.extend.source_info_util``: the source info that
equations carry (the user's line and the ``named_scope`` name stack), for code that stages
equations itself or imports them (docs/ir.md, "Source locations").

fcore's name stack is a tuple of scope names and ``Transform`` markers (JAX's ``NameStack`` of
``Scope`` s and ``Transform`` s); ``SourceInfo.name`` is its text, ``transpose(jvp(outer))/dbl``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from fcore.api.front_end import current_name_stack as current_name_stack
from fcore.api.front_end import named_scope
from fcore.interpreters.trace import _eqn_source, is_internal_code, name_stack
from fcore.interpreters.trace import register_exclusion as register_exclusion
from fcore.interpreters.trace import transform_name_stack as transform_name_stack
from fcore.interpreters.trace import user_context as user_context
from fcore.ir.source_info import Frame as Frame
from fcore.ir.source_info import SourceInfo as SourceInfo
from fcore.ir.source_info import Transform as Transform

__all__ = [
    "Frame", "SourceInfo", "current", "current_name_stack", "extend_name_stack", "new_source_info",
    "register_exclusion", "summarize", "Transform", "transform_name_stack", "user_context",
]


def new_source_info() -> SourceInfo:
    """Source info with no frame and an empty name stack."""
    return SourceInfo(None, ())


def current() -> SourceInfo:
    """The source info an equation staged here would get: the ``user_context``'s, else the
    innermost user frame (outside fcore, the standard library and registered exclusions)."""
    inherited = _eqn_source.get()
    if inherited is not None:
        return inherited
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and is_internal_code(frame.f_code):
        frame = frame.f_back
    position = None if frame is None else (frame.f_code, frame.f_lasti)
    return SourceInfo(position, name_stack.get())


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """``file:line:column (function)`` of the user's line (``unknown`` without one); fcore keeps
    one frame, so ``num_frames`` beyond 1 shows the same."""
    if num_frames < 1:
        return ""
    return source_info.summary()


@contextmanager
def extend_name_stack(name: str) -> Iterator[None]:
    """Push ``name`` on the name stack inside the block (``named_scope``)."""
    with named_scope(name):
        yield

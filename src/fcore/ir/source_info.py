"""Where an equation came from, as JAX's ``source_info``: the user's line that bound it and
the names of the enclosing ``named_scope`` / ``named_call`` blocks (the *name stack*).

Provenance, not meaning: a ``SourceInfo`` is never part of a jaxpr's structural equality,
hash or fingerprint. Tracing records the user's code object and instruction offset only
(cheap); file, line and column are resolved when first asked for (printing, lowering, an
error message).
"""

from __future__ import annotations

import functools
from types import CodeType
from typing import NamedTuple

from typing_extensions import TypeAlias


#: XLA frontend attributes: ``(key, value)`` pairs sorted by key, values as XLA reads them.
XlaMetadata: TypeAlias = tuple[tuple[str, str], ...]


class Frame(NamedTuple):
    """A resolved source position (JAX's ``source_info_util.Frame``); columns count from 0."""

    file_name: str
    function_name: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int


@functools.lru_cache(maxsize=256)
def _positions(code: CodeType) -> tuple[tuple[int | None, int | None, int | None, int | None], ...]:
    return tuple(code.co_positions())


def _resolve(code: CodeType, lasti: int) -> Frame:
    positions = _positions(code)
    index = lasti // 2
    line, end_line, col, end_col = positions[index] if 0 <= index < len(positions) else (None, None, None, None)
    if line is None:
        line = code.co_firstlineno
    return Frame(code.co_filename, code.co_qualname, line, col or 0, end_line or line, end_col or 0)


def summarize(code: CodeType, lasti: int) -> str:
    """``file:line[:column] (function)``: a frame as JAX's ``source_info_util.summarize`` prints it."""
    f = _resolve(code, lasti)
    column = f":{f.start_column}" if f.start_column else ""
    return f"{f.file_name}:{f.start_line}{column} ({f.function_name})"


class Transform(str):
    """A transformation in a name stack (``jvp``, ``transpose``, ``vmap``): it wraps the names
    after it, as JAX's ``source_info_util.Transform`` (``transpose(jvp(outer))/dbl``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Transform({str(self)!r})"


def format_name_stack(names: tuple[str, ...]) -> str:
    """The name stack as JAX prints it: scopes joined by ``/``, each transformation wrapping
    the scope after it (``jvp(outer)/dbl``; ``jvp()`` with none)."""
    scope: list[str] = []
    for name in reversed(names):
        if type(name) is Transform:
            if scope:
                scope[-1] = f"{name}({scope[-1]})"
            else:
                scope.append(f"{name}()")
        else:
            scope.append(name)
    return "/".join(reversed(scope))


#: An unresolved position: a code object and the offset of its instruction (``frame.f_lasti``).
RawPosition: TypeAlias = "tuple[CodeType, int]"


class SourceInfo:
    """An equation's provenance: a user frame (``frame``, or ``None`` when unknown) and the
    name stack (``named_scope`` names, outermost first). Tracing passes a ``RawPosition``
    for ``frame``, resolved when first read."""

    __slots__ = ("_frame", "name_stack", "xla_metadata")

    def __init__(
        self, frame: Frame | RawPosition | None, name_stack: tuple[str, ...] = (), xla_metadata: XlaMetadata = ()
    ) -> None:
        self._frame = frame
        self.name_stack = name_stack
        #: ``set_xla_metadata``'s attributes in force when the equation was staged (sorted by
        #: key): its lowered ops carry them as ``mhlo.frontend_attributes``.
        self.xla_metadata = xla_metadata

    @property
    def frame(self) -> Frame | None:
        frame = self._frame
        if type(frame) is tuple:
            frame = self._frame = _resolve(*frame)
        assert frame is None or type(frame) is Frame
        return frame

    def replace(self, *, name_stack: tuple[str, ...]) -> SourceInfo:
        return SourceInfo(self._frame, name_stack, self.xla_metadata)

    def with_xla_metadata(self, xla_metadata: XlaMetadata) -> SourceInfo:
        return SourceInfo(self._frame, self.name_stack, xla_metadata)

    @property
    def name(self) -> str:
        """The name stack as JAX prints it: ``outer/inner``, ``transpose(jvp(outer))/dbl``."""
        return format_name_stack(self.name_stack)

    def summary(self) -> str:
        """``file:line:column (function)`` as JAX's ``source_info_util.summarize`` (the column
        left out when it is 0); ``unknown`` without a frame."""
        frame = self.frame
        if frame is None:
            return "unknown"
        if frame.start_column:
            return f"{frame.file_name}:{frame.start_line}:{frame.start_column} ({frame.function_name})"
        return f"{frame.file_name}:{frame.start_line} ({frame.function_name})"

    def _key(self) -> tuple[object, ...]:
        return (self.frame, self.name_stack, self.xla_metadata)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceInfo):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple[type[SourceInfo], tuple[Frame | None, tuple[str, ...], XlaMetadata]]:
        return (SourceInfo, (self.frame, self.name_stack, self.xla_metadata))  # code objects do not pickle

    def __repr__(self) -> str:
        stack = f", name_stack={self.name!r}" if self.name_stack else ""
        return f"SourceInfo({self.summary()}{stack})"

"""Where a mutable array reference (``fcore.Ref``) may be read and written while staging.

fcore discharges refs as it traces: a ref holds its current value (an array, or a tracer of
the trace it lives in), reads return it and writes rebind it, so staged programs contain no
ref primitives. A ref belongs to the *frame* current when it was made. Each staged program
(``trace_to_jaxpr``) opens a frame; a ref from outside used inside it is either

- *lifted* (``jit``, ``make_jaxpr``): its value becomes an input of the staged program, read
  at each call, and its final value an output written back after each call; or
- *refused* (every other staged body: ``while_loop``, ``scan``, ``cond``, ``custom_jvp``, ...):
  a ``NotImplementedError`` naming that body, never a constant baked in or a leaked tracer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fcore.interpreters.staging import StagingTrace, StagingTracer
    from fcore.interpreters.trace import Trace
    from fcore.ir.avals import ShapedArray


class RefHolder:
    """What a frame needs of a ref: its aval, the frame it was made in, the trace its value
    lives in (``fcore.api.refs.Ref`` is the public class)."""

    __slots__ = ("_inner_aval", "_frame", "_home", "_value", "_valid", "__weakref__")

    _inner_aval: ShapedArray
    _frame: RefFrame | None
    _home: Trace
    _value: Any
    _valid: str  # "" while usable; "frozen" / "freed" afterwards


class RefFrame:
    """One staged program's view of refs made outside it.

    ``lifted`` maps each outer ref used inside (by identity) to its current value inside: an
    input tracer of ``trace`` at first, then whatever was written. ``refused`` names the
    staged body for the error, where lifting is not supported (``trace`` is then unused)."""

    __slots__ = ("trace", "refused", "lifted", "inputs")

    def __init__(self, trace: StagingTrace | None, refused: str = "") -> None:
        self.trace = trace
        self.refused = refused
        self.lifted: dict[int, tuple[RefHolder, Any]] = {}
        #: The input tracer of each lifted ref (by identity): unchanged refs are not outputs.
        self.inputs: dict[int, Any] = {}

    def _refuse(self, ref: RefHolder) -> None:
        raise NotImplementedError(
            f"a mutable array reference (Ref{{{ref._inner_aval.str_short()}}}) created outside {self.refused} "
            f"was used inside it; fcore supports refs from outside only in jit and make_jaxpr. "
            "Pass the value in and out of the body explicitly (e.g. as part of the loop carry)."
        )

    def read(self, ref: RefHolder) -> Any:
        entry = self.lifted.get(id(ref))
        if entry is not None:
            return entry[1]
        if self.trace is None:
            self._refuse(ref)
        assert self.trace is not None
        tracer: StagingTracer = self.trace.new_arg(ref._inner_aval)
        self.lifted[id(ref)] = (ref, tracer)
        self.inputs[id(ref)] = tracer
        return tracer

    def write(self, ref: RefHolder, value: Any) -> None:
        if id(ref) not in self.lifted:
            self.read(ref)  # the program's input for it, even when only written
        self.lifted[id(ref)] = (ref, value)

    def outer_refs(self) -> list[RefHolder]:
        """The lifted refs, in the order of the staged program's extra inputs."""
        return [ref for ref, _ in self.lifted.values()]

    def written(self, ref: RefHolder) -> bool:
        """Whether ``ref`` (lifted) holds another value than its input now."""
        return self.lifted[id(ref)][1] is not self.inputs[id(ref)]


#: The innermost staged program's frame; ``None`` outside any (eager code).
current_frame: ContextVar[RefFrame | None] = ContextVar("fcore_ref_frame", default=None)


@contextmanager
def ref_frame(frame: RefFrame) -> Iterator[RefFrame]:
    """Inside, refs made outside are seen through ``frame``."""
    token = current_frame.set(frame)
    try:
        yield frame
    finally:
        current_frame.reset(token)

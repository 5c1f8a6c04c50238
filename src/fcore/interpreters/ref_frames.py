"""Where a mutable array reference (``fcore.Ref``) may be read and written while staging.

fcore discharges refs as it traces: a ref holds its current value (an array, or a tracer of
the trace it lives in), reads return it and writes rebind it, so staged programs contain no
ref primitives. A ref belongs to the *frame* current when it was made. Each staged program
(``trace_to_jaxpr``) opens a frame; a ref from outside used inside it is either

- *lifted* (``jit``, ``make_jaxpr``): its value becomes an input of the staged program, read
  at each call, and its final value an output written back after each call; or
- *refused* (every other staged body: ``custom_jvp``, ``checkpoint``, ...): a
  ``NotImplementedError`` naming that body, never a constant baked in or a leaked tracer.
  Loop bodies and ``cond`` branches catch that error and carry the ref instead
  (``fcore.lax.control_flow.ref_carry``).
"""

from __future__ import annotations

from contextvars import ContextVar, Token
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


class OuterRefUsed(NotImplementedError):
    """A ref made outside a staged body that does not lift it was used inside. Loops and
    ``cond`` catch it and carry the ref (``fcore.lax.control_flow.ref_carry``); elsewhere it
    is the user's error."""

    def __init__(self, message: str, ref: RefHolder) -> None:
        super().__init__(message)
        self.ref = ref


class RefFrame:
    """One staged program's view of refs made outside it.

    ``lifted`` maps each outer ref used inside (by identity) to its current value inside: an
    input tracer of ``trace`` at first, then whatever was written. ``refused`` names the
    staged body for the error, where lifting is not supported (``trace`` is then None; a
    loop body that carries refs fills ``lifted`` itself)."""

    __slots__ = ("trace", "refused", "lifted", "inputs", "home")

    def __init__(self, trace: StagingTrace | None, refused: str = "", home: Trace | None = None) -> None:
        self.trace = trace
        self.refused = refused
        #: The trace the values in ``lifted`` live in (a carrying body's: ``ref_carry``).
        self.home = trace if home is None else home
        self.lifted: dict[int, tuple[RefHolder, Any]] = {}
        #: The input tracer of each lifted ref (by identity): unchanged refs are not outputs.
        self.inputs: dict[int, Any] = {}

    def _refuse(self, ref: RefHolder) -> None:
        raise OuterRefUsed(
            f"a mutable array reference (Ref{{{ref._inner_aval.str_short()}}}) created outside {self.refused} "
            "was used inside it; fcore supports refs from outside only in jit, make_jaxpr, and the bodies "
            "of lax loops (while_loop, fori_loop, scan) and cond/switch branches. Pass the value in and "
            "out of the function explicitly instead.",
            ref,
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


class ref_frame:  # noqa: N801 - used like the function-style context managers
    """``with ref_frame(frame):`` inside, refs made outside are seen through ``frame``. A class
    rather than ``contextlib.contextmanager``: every staged body enters one."""

    __slots__ = ("_frame", "_token")
    _token: Token[RefFrame | None]

    def __init__(self, frame: RefFrame) -> None:
        self._frame = frame

    def __enter__(self) -> RefFrame:
        self._token = current_frame.set(self._frame)
        return self._frame

    def __exit__(self, *exc: object) -> None:
        current_frame.reset(self._token)

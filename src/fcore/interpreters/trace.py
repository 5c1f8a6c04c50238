"""Traces (interpreters that handle ``bind``) and tracers (the values they box).

The trace that handles a ``bind`` is the *current* one, held in a ``ContextVar``
(see ``stack.py``). A trace recognises its own tracers by identity; values of any
other kind are constants to it, and it hands work on them to its parent trace.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
from collections.abc import Sequence
from contextvars import ContextVar, Token
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from fcore.config import xla_metadata_context
from fcore.errors import (
    ConcretizationError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from fcore.interpreters.array import Array
from fcore.ir.avals import ShapedArray
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.ir.source_info import SourceInfo, Transform

if TYPE_CHECKING:
    from fcore.ir.core import JaxprEqn

_FCORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Frames of fcore and of the standard library (contextlib's ``with`` plumbing, functools) are
# never the user's line, as in JAX's ``source_info_util``.
# (Installed packages may live under the standard library's folder: they are not excluded.)
_STDLIB = (sysconfig.get_path("stdlib") + os.sep, os.path.dirname(contextlib.__file__) + os.sep)
_excluded: tuple[str, ...] = (_FCORE_DIR,)
# Code objects are looked up by id (they hash by content, slowly). fcore's and the standard
# library's are kept alive in ``_internal_codes``, so their ids stay theirs; a user code object
# maps to itself (checked on lookup: its id may be reused once it is freed) and to the interned
# source infos of its positions (equations bound at one line share one: a loop costs no memory).
_internal_ids: set[int] = set()
_internal_codes: list[CodeType] = []
_user_codes: dict[int, tuple[CodeType, dict[object, SourceInfo]]] = {}


def _is_internal(code: CodeType) -> bool:
    file = code.co_filename
    if file.startswith(_excluded) or (file.startswith(_STDLIB) and "-packages" + os.sep not in file):
        _internal_ids.add(id(code))
        _internal_codes.append(code)
        return True
    return False


def _user_entry(code: CodeType) -> tuple[CodeType, dict[object, SourceInfo]] | None:
    """The interned infos of a user code object; ``None`` for an internal one."""
    entry = _user_codes.get(id(code))
    if entry is not None and entry[0] is code:
        return entry
    if _is_internal(code):
        return None
    if len(_user_codes) > 65536:
        _user_codes.clear()
    entry = _user_codes[id(code)] = (code, {})
    return entry


def register_exclusion(path: str) -> None:
    """Treat the code under ``path`` as a library's, never the user's line (as fcore's own):
    JAX's ``source_info_util.register_exclusion``, for libraries built on fcore."""
    global _excluded
    _excluded = (*_excluded, path)
    _internal_ids.clear()
    _internal_codes.clear()
    _user_codes.clear()


def is_internal_code(code: CodeType) -> bool:
    """Whether ``code`` is fcore's or the standard library's (never the user's line)."""
    return id(code) in _internal_ids or _user_entry(code) is None


def user_frame() -> FrameType | None:
    """The innermost stack frame that is not fcore's own code (nor the standard library's)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if id(frame.f_code) not in _internal_ids and _user_entry(frame.f_code) is not None:
            return frame
        frame = frame.f_back
    return None


def is_user_code(code: CodeType) -> bool:
    """Whether ``code`` is the user's (not fcore's, a registered library's, or the standard library's)."""
    return _user_entry(code) is not None


def user_location() -> str:
    frame = user_frame()
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"


# -- source info of staged equations ---------------------------------------------------------
#: The enclosing ``named_scope`` names, outermost first.
name_stack: ContextVar[tuple[str, ...]] = ContextVar("fcore_name_stack", default=())
#: Set while a pass re-binds an equation: its source info, which the equations the pass stages
#: for it inherit; ``None`` (not in a pass): the user's frame is looked up.
_eqn_source: ContextVar[SourceInfo | None] = ContextVar("fcore_eqn_source", default=None)
#: The variable itself, for a trace that captures one bind's source info for all the equations
#: its rule stages (``JVPTrace``); it must pair each ``set`` with a ``reset`` in a ``finally``.
EQN_SOURCE = _eqn_source


def current_source_info() -> SourceInfo | None:
    """The source info for an equation staged now: the one a pass is re-binding, else the
    innermost user frame (code object and instruction offset, resolved lazily) and the name
    stack. Called by the staging trace only, which fcore calls (so the two frames above this
    one are skipped unlooked: each frame looked at costs a frame object)."""
    inherited = _eqn_source.get()
    if inherited is not None:
        return inherited
    try:
        frame: FrameType | None = sys._getframe(3)
    except ValueError:  # a staging trace called from the bottom of the stack
        frame = sys._getframe(1)
    internal = _internal_ids
    while frame is not None:
        code = frame.f_code
        if id(code) in internal:
            frame = frame.f_back
            continue
        entry = _user_codes.get(id(code))
        if entry is None or entry[0] is not code:
            entry = _user_entry(code)
            if entry is None:
                frame = frame.f_back
                continue
        names = name_stack.get()
        key: object = (frame.f_lasti, names) if names else frame.f_lasti
        info = entry[1].get(key)
        if info is None:
            info = entry[1][key] = SourceInfo((code, frame.f_lasti), names)
        metadata = xla_metadata_context.get()
        return info.with_xla_metadata(metadata) if metadata else info
    names = name_stack.get()
    metadata = xla_metadata_context.get()
    return SourceInfo(None, names, metadata) if names or metadata else None


class transform_name_stack:  # noqa: N801 - used like a function: ``with transform_name_stack("jvp"):``
    """Inside, the name stack has the transformation ``name`` on top (JAX's
    ``source_info_util.transform_name_stack``): equations staged by ``jvp``, ``vmap`` and
    transposition print ``jvp(outer)``, ``vmap(outer)``, ``transpose(jvp(outer))``."""

    __slots__ = ("_name", "_token")

    def __init__(self, name: str) -> None:
        self._name = Transform(name)

    def __enter__(self) -> None:
        self._token = name_stack.set((*name_stack.get(), self._name))

    def __exit__(self, *exc: object) -> None:
        name_stack.reset(self._token)


def equation_source(eqn: JaxprEqn) -> user_context:
    """While a pass re-binds ``eqn`` (its primal, its JVP, its transpose, its batched form, its
    replay by ``eval_jaxpr``), the equations staged get ``eqn``'s source info."""
    return user_context(eqn.source_info)


class user_context:  # noqa: N801 - used like a function: ``with user_context(info):``
    """Inside, staged equations get ``info`` (under the current name stack) instead of the
    user's frame, as JAX's ``source_info_util.user_context``; ``None`` changes nothing."""

    __slots__ = ("_info", "_token")

    def __init__(self, info: SourceInfo | None) -> None:
        self._info = info
        self._token: Token[SourceInfo | None] | None = None

    def __enter__(self) -> None:
        info = self._info
        if info is not None:
            names = name_stack.get()
            if names:
                info = info.replace(name_stack=names + info.name_stack)
            self._token = _eqn_source.set(info)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _eqn_source.reset(self._token)


def add_source_note(error: BaseException, eqn: JaxprEqn) -> None:
    """Name the user's line of ``eqn`` on an error raised while evaluating it (a traceback note)."""
    info = eqn.source_info
    if info is not None and info.frame is not None:
        note = f"(the failing operation, {eqn.primitive.name}, was bound at {info.summary()})"
        if note not in getattr(error, "__notes__", ()):
            error.add_note(note)


class Trace:
    """An interpreter: handles ``bind`` for the tracers it owns.

    ``alive`` turns false when the transformation that made the trace returns;
    using one of its tracers afterwards raises ``UnexpectedTracerError``.
    """

    __slots__ = ("alive", "description", "created_at")

    def __init__(self, description: str) -> None:
        self.alive = True
        self.description = description
        self.created_at = ""

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, ParamValue]) -> Any:
        raise NotImplementedError

    def to_concrete(self, tracer: Tracer, reason: str) -> object:
        """The concrete value behind ``tracer`` (for ``bool()`` etc.), or an error."""
        raise_concretization_error(tracer, reason)

    def check_alive(self) -> None:
        if not self.alive:
            where = f" (traced at {self.created_at})" if self.created_at else ""
            raise UnexpectedTracerError(
                f"Encountered an unexpected tracer: a tracer created by {self.description}{where} "
                "was used after that transformation returned. Tracers must not escape the function "
                "being transformed (e.g. stored in a global or a closure); return values instead."
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"


#: The ``ConcretizationError`` subclass JAX raises for each conversion (``reason``).
_ERROR_CLASS: dict[str, type[ConcretizationError]] = {
    "bool()": TracerBoolConversionError,
    "__index__()": TracerIntegerConversionError,
    "numpy conversion (np.asarray)": TracerArrayConversionError,
}


def raise_concretization_error(tracer: Tracer, reason: str) -> NoReturn:
    trace = tracer._trace
    raise _ERROR_CLASS.get(reason, ConcretizationError)(
        f"Abstract tracer value encountered where a concrete value is expected: {reason} of a traced "
        f"{tracer.aval.str_short()} value inside {trace.description}, at {user_location()}. "
        "The value depends on the function's traced arguments. Mark the argument static "
        "(static_argnums) or use structured control flow (lax.cond, lax.select_n, fnp.where) instead."
    )


class Tracer(Array):
    """A value being traced by ``_trace``. Subclasses add what their trace needs."""

    __slots__ = ("_trace",)

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def _concrete(self, reason: str) -> Any:
        self._trace.check_alive()
        return self._trace.to_concrete(self, reason)

    def __bool__(self) -> bool:
        if self.aval.size != 1:  # checked first, as NumPy and JAX do, whatever the trace
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        return bool(self._concrete("bool()"))

    def __int__(self) -> int:
        return int(self._concrete("int()"))

    # As in JAX, float() and complex() refuse every tracer, even one with a concrete value
    # behind it (e.g. under grad): the conversion would silently drop the derivative.
    def __float__(self) -> float:
        self._trace.check_alive()
        raise_concretization_error(self, "float()")

    def __complex__(self) -> complex:
        self._trace.check_alive()
        raise_concretization_error(self, "complex()")

    def __index__(self) -> int:
        return int(np.asarray(self._concrete("__index__()")).__index__())

    def item(self) -> Any:
        return np.asarray(self._concrete("item()")).item()

    def tolist(self) -> Any:
        return np.asarray(self._concrete("tolist()")).tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        return np.asarray(self._concrete("numpy conversion (np.asarray)"), dtype=dtype)

    def __repr__(self) -> str:
        """JAX's short form, ``Name<float32[3]>``; each kind of tracer prints as JAX's does."""
        return f"{type(self).__name__}<{self.aval}>"

"""Traces (interpreters that handle ``bind``) and tracers (the values they box).

The trace that handles a ``bind`` is the *current* one, held in a ``ContextVar``
(see ``stack.py``). A trace recognises its own tracers by identity; values of any
other kind are constants to it, and it hands work on them to its parent trace.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any, NoReturn

import numpy as np

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

_FCORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame() -> FrameType | None:
    """The innermost stack frame that is not fcore's own code."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_FCORE_DIR) and "contextlib" not in frame.f_code.co_filename:
            return frame
        frame = frame.f_back
    return None


def user_location() -> str:
    frame = user_frame()
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"


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
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"

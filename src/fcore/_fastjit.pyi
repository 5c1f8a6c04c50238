"""jit's cached call in C (``_fastjit.c``): subclassed by ``fcore.api.jit.Jitted`` where built."""

from contextvars import ContextVar
from typing import TypeVar

_T = TypeVar("_T")
_C = TypeVar("_C")

class FastCall:
    """Calls take the cached path in C, or ``self._dispatch(*args, **kwargs)`` (the Python one)."""

    _fast_flat: list[tuple[object, ...]]
    def __call__(self, *args: object, **kwargs: object) -> object: ...

def configure(trace_var: ContextVar[_T], checks_var: ContextVar[_C], array_type: type, buffer_type: type) -> None: ...

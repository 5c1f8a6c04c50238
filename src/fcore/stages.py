"""``fcore.stages`` as ``jax.stages``: the types of jit's ahead-of-time stages.

``fcore.jit(f)`` is a ``Wrapped``; ``.trace(...)`` gives a ``Traced``, ``.lower()`` a
``Lowered``, ``.compile()`` a ``Compiled``; ``args_info`` holds ``ArgInfo`` values. The classes
are the ones ``fcore.api.stages`` builds, re-exported under JAX's module path.
"""

from __future__ import annotations

from typing import Any, Protocol, Union, runtime_checkable

from fcore.api.stages import ArgInfo as ArgInfo, Compiled as Compiled, Lowered as Lowered, Traced as Traced

# ``CompilerOptions`` is public as in JAX but left out of ``__all__``: the API pages would show
# the docstring of ``dict`` for it.
__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced", "Wrapped"]

#: Options passed to ``Lowered.compile(compiler_options=...)`` (JAX's alias, same type).
CompilerOptions = dict[str, Union[str, bool]]


@runtime_checkable
class Wrapped(Protocol):
    """A function ready to be traced, lowered and compiled: what ``fcore.jit`` returns.

    Calling it traces, compiles and runs as needed; ``trace``/``lower`` stage it explicitly.
    A plain function is not one (``isinstance(f, Wrapped)`` is False, as in JAX).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced[..., Any]: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered[..., Any]: ...

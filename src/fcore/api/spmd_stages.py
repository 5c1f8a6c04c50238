"""The ahead-of-time stages of a ``jit`` over a mesh: ``Lowered`` shows the annotated
program, ``Compiled`` runs the SPMD executable (``fcore.api.spmd``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from fcore import tree_util
from fcore.api.spmd import SpmdLaunch
from fcore.api.staging import abstractify
from fcore.api.stages import Compiled, Lowered, Specialization, _check_argument_types
from fcore.interpreters.trace import Tracer

__all__ = ["SpmdCompiled", "SpmdLowered"]

P = ParamSpec("P")
R = TypeVar("R")


class SpmdLowered(Lowered[P, R]):
    """``Lowered`` of a program over a mesh (its text carries the ``sdy`` annotations)."""

    __slots__ = ("_make_launch",)

    def __init__(self, spec: Specialization, make_launch: Callable[[], SpmdLaunch]) -> None:
        super().__init__(spec)
        self._make_launch = make_launch

    def as_text(self) -> str:
        return self._make_launch().text

    def compile(self) -> SpmdCompiled[P, R]:
        return SpmdCompiled(self._spec, self._make_launch())

    def cost_analysis(self) -> dict[str, float]:
        return self._make_launch().exe.cost_analysis()


class SpmdCompiled(Compiled[P, R]):
    """``Compiled`` of a program over a mesh: call it with arguments of the compiled types."""

    __slots__ = ("_spmd",)

    def __init__(self, spec: Specialization, launch: SpmdLaunch) -> None:
        self._spec = spec
        self._spmd = launch

    def as_text(self) -> str:
        return self._spmd.exe.as_text()

    def cost_analysis(self) -> dict[str, float]:
        return self._spmd.exe.cost_analysis()

    @property
    def input_shardings(self) -> Any:
        n = len(self._spec.consts)
        return tree_util.tree_unflatten(self._spec.in_tree, self._spmd.in_shardings[n:])

    @property
    def output_shardings(self) -> Any:
        return tree_util.tree_unflatten(self._spec.out_tree, self._spmd.out_shardings)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec = self._spec
        flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != spec.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was called with: "
                f"compiled for {spec.in_tree}, called with {in_tree}"
            )
        if any(isinstance(x, Tracer) for x in flat):
            raise TypeError("Cannot apply transformations to a function lowered and compiled for a particular signature.")
        _check_argument_types(spec, [abstractify(x) for x in flat])
        return spec.results(self._spmd(flat))

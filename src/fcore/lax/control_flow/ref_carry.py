"""Refs from outside a ``while_loop``/``scan``/``fori_loop`` body or a ``cond`` branch travel
through the loop carry (or the branch operands and results), as JAX carries them.

A body's staging frame refuses a ref made outside it (``OuterRefUsed``). The loop catches
that, adds the ref to the refs it carries, and traces again: inside, each carried ref reads
and writes the carried value (``carried``); after the loop, the final values are written to
the refs where the loop was called (``fcore.api.refs.write``: lifted into an enclosing ``jit``,
checked against an enclosing ``grad``/``vmap``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from fcore.api.refs import Ref, read, write
from fcore.interpreters.ref_frames import OuterRefUsed, RefFrame, ref_frame
from fcore.interpreters.stack import current_trace

T = TypeVar("T")


def with_outer_refs(run: Callable[[RefCarry], T]) -> T:
    """``run(carry)``, the refs to carry growing by each ref a trace of the body found used."""
    refs: list[Ref] = []
    while True:
        try:
            return run(RefCarry(refs))
        except OuterRefUsed as e:
            ref = e.ref
            if not isinstance(ref, Ref) or any(r is ref for r in refs):
                raise  # refused by a body nested inside (a ``custom_jvp``, a ``checkpoint``)
            refs.append(ref)


class RefCarry:
    """The refs a loop or ``cond`` carries, and which of them its bodies write."""

    __slots__ = ("refs", "written")

    def __init__(self, refs: list[Ref]) -> None:
        self.refs = refs
        self.written: set[int] = set()

    def initial_values(self) -> list[Any]:
        """The refs' values where the loop is called (lifted into an enclosing ``jit``)."""
        return [read(r) for r in self.refs]

    def write_finals(self, values: Sequence[Any]) -> None:
        """Store the loop's final values into the refs its bodies wrote (only those: a ref
        only read under ``vmap`` stays unbatched)."""
        for ref, value in zip(self.refs, values):
            if id(ref) in self.written:
                write(ref, value)

    @contextmanager
    def inside(self, values: Sequence[Any], body: str) -> Iterator[Callable[[], list[Any]]]:
        """Inside a body: each ref holds its value of ``values``; yields what gives the
        values at the end of the body."""
        frame = RefFrame(None, body, current_trace())
        for ref, value in zip(self.refs, values):
            frame.lifted[id(ref)] = (ref, value)
            frame.inputs[id(ref)] = value

        def finals() -> list[Any]:
            self.written.update(id(ref) for ref in self.refs if frame.written(ref))
            return [frame.lifted[id(ref)][1] for ref in self.refs]

        with ref_frame(frame):
            yield finals

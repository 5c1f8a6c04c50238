"""``safe_map`` / ``safe_zip`` / ``unzip2``, as ``jax._src.util`` has them: ``map`` and ``zip``
that refuse arguments of different lengths (the custom-interpreter tutorial imports them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
U = TypeVar("U")

__all__ = ["safe_map", "safe_zip", "unzip2"]


def safe_map(f: Callable[..., T], *args: Iterable[Any]) -> list[T]:
    """``list(map(f, *args))``; a ``ValueError`` when an argument is shorter than the first."""
    lists = [list(a) for a in args]
    n = len(lists[0])
    for i, a in enumerate(lists[1:], 1):
        if len(a) != n:
            raise ValueError(f"safe_map() argument {i + 1} is {'shorter' if len(a) < n else 'longer'} than argument 1")
    return list(map(f, *lists))


def safe_zip(*args: Iterable[Any]) -> list[tuple[Any, ...]]:
    """``list(zip(*args))``; a ``ValueError`` when the lengths differ."""
    lists = [list(a) for a in args]
    lengths = tuple(len(a) for a in lists)
    for i, n in enumerate(lengths[1:], 1):
        if n != lengths[0]:
            raise ValueError(
                f"safe_zip() argument {i} has length {n} but argument 0 has length {lengths[0]}. All lengths: {lengths}"
            )
    return list(zip(*lists))


def unzip2(pairs: Iterable[tuple[T, U]]) -> tuple[Sequence[T], Sequence[U]]:
    """Two tuples from a sequence of pairs."""
    firsts: list[T] = []
    seconds: list[U] = []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)

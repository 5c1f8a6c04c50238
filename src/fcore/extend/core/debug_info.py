"""``DebugInfo``, as ``jax.extend.core`` has it: what a traced function was traced for, where it
comes from, and the names of its flat arguments and results.

JAX attaches one to every jaxpr; fcore's jaxprs carry source info per equation instead (the
user's line and ``named_scope`` names, docs/ir.md), so a ``DebugInfo`` is a plain value that
extension code builds and reads with JAX's methods.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Union

from fcore import tree_util

__all__ = ["DebugInfo"]

_FUNC_SRC_INFO = re.compile(r"([^ ]+)( at (.+):(\d+))?$")
_FLAT_INDEX = re.compile(r"<flat index ([^>]+)>")

ResultPaths = Union[tuple[str, ...], Callable[[], tuple[str, ...]], None]


class DebugInfo(NamedTuple):
    """Debugging info about a function, its arguments and results."""

    #: What the function was traced for: ``"jit"``, ``"scan"``, ...
    traced_for: str
    #: ``"name at file:line"``, or ``"name"`` without a location; the first word is the name.
    func_src_info: str
    #: The paths of the flat arguments (``"x"``, ``"params['w']"``), or None when unknown.
    arg_names: tuple[str, ...] | None
    #: The paths of the flat results (``"result[0]"``), a thunk computing them, or None.
    result_paths: ResultPaths

    def resolve_result_paths(self) -> DebugInfo:
        """The debug info with ``result_paths`` computed if it is a thunk."""
        paths = self.result_paths
        return self._replace(result_paths=tuple(paths())) if callable(paths) else self

    @property
    def func_name(self) -> str:
        return self.func_src_info.split(" ")[0]

    def replace_func_name(self, name: str) -> DebugInfo:
        parts = self.func_src_info.split(" ")
        parts[0] = name
        return self._replace(func_src_info=" ".join(parts))

    def set_result_paths(self, ans: Any) -> DebugInfo:
        """The debug info with the paths of the leaves of ``ans`` as result paths."""
        paths = tuple("result" + _FLAT_INDEX.sub(r"\1", tree_util.keystr(path))
                      for path, _ in tree_util.tree_flatten_with_path(ans)[0])
        return self._replace(result_paths=paths)

    @property
    def func_filename(self) -> str | None:
        m = _FUNC_SRC_INFO.match(self.func_src_info)
        return m.group(3) if m else None

    @property
    def func_lineno(self) -> int | None:
        m = _FUNC_SRC_INFO.match(self.func_src_info)
        return None if not m or m.group(4) is None else int(m.group(4))

    def safe_arg_names(self, expected_count: int) -> tuple[str, ...]:
        """The argument names, or empty names when unknown; ``ValueError`` for a wrong count."""
        self.assert_arg_names(expected_count)
        return self.arg_names if self.arg_names is not None else ("",) * expected_count

    def assert_arg_names(self, expected_count: int) -> None:
        if self.arg_names is not None and len(self.arg_names) != expected_count:
            raise ValueError(f"DebugInfo has {len(self.arg_names)} argument names, expected {expected_count}: {self}")

    def filter_arg_names(self, keep: Sequence[bool]) -> tuple[str, ...] | None:
        """The argument names where ``keep`` is True."""
        if self.arg_names is None:
            return None
        return tuple(v for v, b in zip(self.safe_arg_names(len(keep)), keep) if b)

    def safe_result_paths(self, expected_count: int) -> tuple[str, ...]:
        """The result paths, or empty paths when unknown; ``ValueError`` for a wrong count or an
        unresolved thunk."""
        self.assert_result_paths(expected_count)
        paths = self.result_paths
        return paths if isinstance(paths, tuple) else ("",) * expected_count

    def assert_result_paths(self, expected_count: int) -> None:
        paths = self.result_paths
        if callable(paths):
            raise ValueError(f"DebugInfo's result paths are not resolved yet (resolve_result_paths): {self}")
        if paths is not None and len(paths) != expected_count:
            raise ValueError(f"DebugInfo has {len(paths)} result paths, expected {expected_count}: {self}")

    def filter_result_paths(self, keep: Sequence[bool]) -> tuple[str, ...] | None:
        """The result paths where ``keep`` is True."""
        paths = self.result_paths
        if callable(paths):
            raise ValueError(f"DebugInfo's result paths are not resolved yet (resolve_result_paths): {self}")
        return None if not isinstance(paths, tuple) else tuple(v for v, b in zip(paths, keep) if b)

    def with_unknown_names(self) -> DebugInfo:
        return self._replace(arg_names=None, result_paths=None)

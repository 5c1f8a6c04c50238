"""XLA frontend attributes on lowered ops (``set_xla_metadata``'s ``mhlo.frontend_attributes``).

As JAX does, the attributes go on the op that *defines* a value: each output of an equation
staged under ``set_xla_metadata(...)``, and the operand of an ``xla_metadata_value``
equation. Lowering emits op text, so the defining op's line is found by its SSA name and the
attribute is spliced into it where MLIR's syntax puts an op's attribute dictionary (merged
into one already there; keys already present win, as in JAX).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fcore.ir.source_info import XlaMetadata

if TYPE_CHECKING:
    from fcore.backend.lowering import FunctionBuilder

__all__ = ["metadata_items", "tag_defining_op", "tag_outputs"]

_KEY = "mhlo.frontend_attributes = {"
_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_PAIR = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_$.]*) = ("(?:[^"\\]|\\.)*")\s*(?:,|\Z)')
_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def metadata_items(metadata: dict[str, object]) -> XlaMetadata:
    """``set_xla_metadata``'s keywords as attributes: sorted, ``None`` dropped, bools as
    ``true``/``false`` and everything else as ``str`` (what JAX writes)."""
    return tuple(sorted((k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in metadata.items() if v is not None))


def tag_defining_op(fn: FunctionBuilder, value: str, metadata: XlaMetadata) -> None:
    """Attach ``metadata`` to the op of ``fn`` that defines the SSA ``value`` (nothing for a
    function or block argument)."""
    name = value.split("#", 1)[0]
    if not metadata or name.startswith("%arg"):
        return
    plain, multi = f"    {name} = ", f"    {name}:"
    for k in range(len(fn.lines) - 1, -1, -1):
        line = fn.lines[k]
        if line.startswith(plain) or line.startswith(multi):
            fn.lines[k] = _with_attributes(line, metadata)
            return


def tag_outputs(fn: FunctionBuilder, outs: Sequence[str], metadata: XlaMetadata) -> None:
    """Tag the ops defining an equation's results (JAX's ``wrap_xla_metadata_in_place``)."""
    for o in outs:
        tag_defining_op(fn, o, metadata)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dict_text(pairs: dict[str, str]) -> str:
    """``{k = "v", ...}`` sorted by key (MLIR's dictionary order); values already quoted."""
    return "{" + ", ".join(f"{k if _BARE_ID.match(k) else _quote(k)} = {pairs[k]}" for k in sorted(pairs)) + "}"


def _with_attributes(line: str, metadata: XlaMetadata) -> str:
    lhs_end = line.index(" = ") + 3
    loc_start = _location_start(line)
    head, rhs, loc = line[:lhs_end], line[lhs_end:loc_start], line[loc_start:]
    new = {k: _quote(v) for k, v in metadata}
    at = rhs.find(_KEY)
    if at >= 0:  # merge: the attributes already there win
        start = at + len(_KEY) - 1
        end = _skip(rhs, start)
        existing = {m.group(1).strip('"'): m.group(2) for m in _PAIR.finditer(rhs[start + 1 : end - 1])}
        return head + rhs[:start] + _dict_text(new | existing) + rhs[end:] + loc
    entry = f"{_KEY[:-2]} {_dict_text(new)}"
    return head + _insert_attribute(rhs, entry) + loc


def _insert_attribute(rhs: str, entry: str) -> str:
    """``rhs`` with ``entry`` (``name = value``) in its attribute dictionary."""
    if rhs.startswith('"'):  # generic form: "op"(operands) <{properties}> (regions) {attrs} : type
        i = _skip(rhs, 0)
        for opener in ("(", "<", "("):
            while rhs[i] == " ":
                i += 1
            if rhs[i] == opener:
                i = _skip(rhs, i)
        while rhs[i] == " ":
            i += 1
        if rhs[i] == "{":
            return f"{rhs[: i + 1]}{entry}, {rhs[i + 1 :]}"
        return f"{rhs[:i]}{{{entry}}} {rhs[i:]}"
    op = rhs.split(" ", 1)[0].split("(", 1)[0]
    if op == "stablehlo.constant":  # attr-dict before the value
        return f"{op} {{{entry}}}{rhs[len(op):]}"
    colon = _top_level_colon(rhs)
    if op == "stablehlo.while":  # ``attributes {...}`` after the carried types
        end = rhs.find("\n", colon)
        end = len(rhs) if end < 0 else end
        return f"{rhs[:end]} attributes {{{entry}}}{rhs[end:]}"
    before = rhs[:colon].rstrip()
    if before.endswith("}"):  # an attribute dictionary already there
        start = _matching_open(before, len(before) - 1)
        return f"{rhs[: start + 1]}{entry}, {rhs[start + 1 :]}"
    return f"{before} {{{entry}}}{rhs[colon:]}"


def _skip(text: str, i: int) -> int:
    """The index just past the bracketed group or string starting at ``text[i]``."""
    if text[i] == '"':
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    stack = [_OPEN[text[i]]]
    j = i + 1
    while stack:
        c = text[j]
        if c == '"':
            j = _skip(text, j)
            continue
        if c == stack[-1]:
            stack.pop()
        elif c in "([{" or (c == "<" and stack[-1] != ">"):
            stack.append(_OPEN[c])
        j += 1
    return j


def _top_level_colon(rhs: str) -> int:
    """The index of the first `` : `` outside brackets and strings (the type separator)."""
    j = 0
    while j < len(rhs):
        c = rhs[j]
        if c == '"' or c in "([{":
            j = _skip(rhs, j)
            continue
        if c == "<" and rhs[j - 1] != "-":
            j = _skip(rhs, j)
            continue
        if rhs.startswith(" : ", j):
            return j
        j += 1
    return len(rhs)


def _matching_open(text: str, close: int) -> int:
    """The index of the ``{`` that the ``}`` at ``close`` closes."""
    depth = 0
    for j in range(close, -1, -1):
        if text[j] == "}":
            depth += 1
        elif text[j] == "{":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced braces in {text!r}")


def _location_start(line: str) -> int:
    """Where the trailing `` loc(...)`` of an op line starts (the line's end if it has none)."""
    if not line.endswith(")"):
        return len(line)
    depth = 0
    for j in range(len(line) - 1, -1, -1):
        c = line[j]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return j - 4 if line.startswith(" loc(", j - 4) else len(line)
    return len(line)

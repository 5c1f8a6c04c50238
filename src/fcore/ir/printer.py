"""Jaxpr text in JAX's format, printed iteratively (10⁵ equations need no recursion).

Variable names are assigned here, never stored in the IR, exactly as JAX assigns them:
in binding order (``a … z, ba, bb …``) with one counter for the whole printed text, so
names stay unique across nested jaxprs (an equation's results are named before the
jaxprs in its parameters). Results of top-level equations that nothing uses print as
``_`` (JAX's dropped variables). A jaxpr that fits in 80 columns is printed on one
line, as JAX does.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable

import numpy as np

from fcore.ir import dtypes
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import ParamStruct, ParamValue

_WIDTH = 80
_INDENT = "    "
# Strings print bare (``name=sin``) when the parser cannot mistake them for another value.
_BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_BARE = frozenset({"True", "False", "None", "inf", "nan", "infj", "nanj"}) | frozenset(
    dtypes.dtype_name(d) for d in dtypes.SUPPORTED_DTYPES
)
_NO_DROPS: frozenset[int] = frozenset()


def encode_name(n: int) -> str:
    """``0 -> a``, ``25 -> z``, ``26 -> ba`` (JAX's alphabetic numbering)."""
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Names:
    """The names given so far, shared by a jaxpr and the jaxprs nested in it, and what the
    printing was asked to show (``pretty_print``'s options)."""

    __slots__ = ("names", "count", "print_shapes", "source_info", "name_stack")

    def __init__(self, print_shapes: bool = True, source_info: bool = False, name_stack: bool = False) -> None:
        self.names: dict[int, str] = {}
        self.count = 0
        self.print_shapes = print_shapes
        self.source_info = source_info
        self.name_stack = name_stack

    def _fresh(self) -> str:
        name = encode_name(self.count)
        self.count += 1
        return name

    def bind(self, v: Var) -> str:
        name = self._fresh()
        self.names[id(v)] = name
        return f"{name}:{v.aval.jaxpr_text()}" if self.print_shapes else name

    def use(self, a: Atom) -> str:
        if isinstance(a, Literal):
            return str(a)
        name = self.names.get(id(a))
        if name is None:  # unbound: printed distinctly so ill-typed jaxprs stay readable
            name = f"?{self._fresh()}"
            self.names[id(a)] = name
        return name


def unused_results(jaxpr: Jaxpr) -> frozenset[int]:
    """Ids of the equation results that no later equation and no output uses (printed ``_``)."""
    used = {id(a) for a in jaxpr.outvars if isinstance(a, Var)}
    dropped: set[int] = set()
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if id(v) not in used:
                dropped.add(id(v))
        used.update(id(a) for a in eqn.invars if isinstance(a, Var))
    return frozenset(dropped)


def pp_param_value(value: ParamValue, indent: str, names: _Names | None = None) -> str:
    """Python-like text for a parameter value; nested jaxprs printed as blocks."""
    if isinstance(value, ClosedJaxpr):
        return _pp_jaxpr(value.jaxpr, indent, names or _Names(), _NO_DROPS)
    if isinstance(value, Jaxpr):
        return _pp_jaxpr(value, indent, names or _Names(), _NO_DROPS)
    if isinstance(value, tuple):
        if any(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
            inner = indent + "  "
            items = [inner + pp_param_value(v, inner, names) for v in value]
            return "(\n" + "\n".join(items) + "\n" + indent + ")"
        if len(value) == 1:
            return f"({pp_param_value(value[0], indent, names)},)"
        return "(" + ", ".join(pp_param_value(v, indent, names) for v in value) + ")"
    if isinstance(value, np.dtype):
        return dtypes.dtype_name(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return repr(value) if np.isfinite(value) else str(value)
    if isinstance(value, ParamStruct):
        return repr(value)
    if isinstance(value, str) and (value in _NOT_BARE or not _BARE_WORD.fullmatch(value)):
        return repr(value)  # quoted: '3', 'a b', 'float32' and '' must not read back as other values
    return str(value)


def _pp_params(eqn: JaxprEqn, indent: str, names: _Names) -> str:
    if not eqn.params:
        return ""
    inner = indent + "  "
    items = [f"{k}={pp_param_value(eqn.params[k], inner, names)}" for k in sorted(eqn.params)]
    flat = " ".join(items)
    if "\n" not in flat and len(flat) + len(indent) <= _WIDTH:
        return f"[{flat}]"
    return "[\n" + "".join(f"{inner}{item}\n" for item in items) + indent + "]"


def _pp_eqn(eqn: JaxprEqn, names: _Names, indent: str, dropped: frozenset[int]) -> str:
    # Results first, then the jaxprs in the params, then the arguments: JAX's naming order.
    outs = " ".join(f"_:{v.aval.jaxpr_text()}" if id(v) in dropped else names.bind(v) for v in eqn.outvars)
    rhs = f"{eqn.primitive.name}{_pp_params(eqn, indent, names)}"
    ins = " ".join(names.use(a) for a in eqn.invars)
    if ins:
        rhs = f"{rhs} {ins}"
    return f"{outs} = {rhs}" if outs else rhs  # no results (a print): no binders, as JAX writes it


def _pp_outvars(outvars: Iterable[Atom], names: _Names) -> str:
    outs = [names.use(a) for a in outvars]
    return "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"


def _annotations(eqn: JaxprEqn, names: _Names) -> list[str]:
    """The ``# ...`` comments of an equation: its user line, its name stack (as JAX prints them)."""
    notes = []
    info = eqn.source_info
    if names.source_info and info is not None and info.frame is not None:
        notes.append(info.summary())
    if names.name_stack:
        notes.append(f"[{info.name if info is not None else ''}]")
    return notes


def _annotate(eqns: list[str], notes: list[list[str]], body_indent: str) -> list[str]:
    """Each equation's comments after its first line, aligned in one column (JAX's layout)."""
    column = max(len(e.split("\n", 1)[0]) for e in eqns) + 1
    out = []
    for text, eqn_notes in zip(eqns, notes):
        if not eqn_notes:
            out.append(text)
            continue
        first, nl, rest = text.partition("\n")
        lines = [f"{first.ljust(column)}# {eqn_notes[0]}"]
        lines.extend(f"{body_indent}{' ' * column}# {n}" for n in eqn_notes[1:])
        out.append("\n".join(lines) + nl + rest)
    return out


def _pp_jaxpr(jaxpr: Jaxpr, indent: str, names: _Names, dropped: frozenset[int]) -> str:
    consts = " ".join(names.bind(v) for v in jaxpr.constvars)
    invars = " ".join(names.bind(v) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {invars}. let"
    body_indent = indent + _INDENT
    eqns = [_pp_eqn(e, names, body_indent, dropped) for e in jaxpr.eqns]
    annotated = False
    if names.source_info or names.name_stack:
        notes = [_annotations(e, names) for e in jaxpr.eqns]
        if any(notes):
            eqns, annotated = _annotate(eqns, notes, body_indent), True
    outs = _pp_outvars(jaxpr.outvars, names)
    flat = f"{head} {'; '.join(eqns)} in {outs} }}"  # 'let  in' when there are no equations, as JAX
    if not annotated and len(flat) + len(indent) <= _WIDTH and "\n" not in flat:
        return flat
    lines = [head]
    lines.extend(body_indent + e for e in eqns)
    lines.append(f"{indent}  in {outs} }}")
    return "\n".join(lines)


def pp_jaxpr(
    jaxpr: Jaxpr | ClosedJaxpr, *, source_info: bool = False, print_shapes: bool = True, name_stack: bool = False
) -> str:
    """The text of a jaxpr (constvars are printed, their values are not). ``source_info``
    comments each equation with the user's line that bound it, ``name_stack`` with its
    ``named_scope`` names (``[outer/inner]``), as JAX's ``Jaxpr.pretty_print``; without
    ``print_shapes`` the binders have no types."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    return _pp_jaxpr(jaxpr, "", _Names(print_shapes, source_info, name_stack), unused_results(jaxpr))


def pp_eqn_in(jaxpr: Jaxpr, index: int) -> str:
    """Equation ``index`` of ``jaxpr`` with the names it has when the whole jaxpr is printed."""
    names = _Names()
    dropped = unused_results(jaxpr)
    for v in jaxpr.constvars:
        names.bind(v)
    for v in jaxpr.invars:
        names.bind(v)
    for i, e in enumerate(jaxpr.eqns):
        text = _pp_eqn(e, names, _INDENT, dropped)
        if i == index:
            return text
    raise IndexError(index)


def pp_eqn_one_line(jaxpr: Jaxpr, index: int) -> str:
    """``pp_eqn_in`` on one line: an equation with multi-line params shows as ``outs = prim[ ... ] ins``."""
    text = pp_eqn_in(jaxpr, index)
    if "\n" not in text:
        return text
    first, last = text.split("\n", 1)[0], text.rsplit("\n", 1)[1].strip()
    return f"{first} ... {last}"


def pp_eqn_standalone(eqn: JaxprEqn) -> str:
    """An equation on its own (inputs named in order of appearance)."""
    names = _Names()
    for a in eqn.invars:
        if isinstance(a, Var) and id(a) not in names.names:
            names.bind(a)
    return _pp_eqn(eqn, names, "", _NO_DROPS)

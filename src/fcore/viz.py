"""Drawing jaxprs: Graphviz DOT text of the data flow, for reading large programs.

Text, not a graphviz binding: no dependency, and the text can be rendered anywhere
(``dot -Tsvg``, online viewers). Variables are named as the printer names them
(``a``, ``b``, …, fresh in each nested jaxpr), so the drawing and ``str(jaxpr)`` agree.
"""

from __future__ import annotations

from collections.abc import Iterator

from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import ParamValue
from fcore.ir.printer import encode_name, pp_param_value

__all__ = ["to_dot"]

_MAX_PARAM_CHARS = 40


def to_dot(jaxpr: ClosedJaxpr | Jaxpr, name: str = "jaxpr") -> str:
    """The Graphviz DOT text of ``jaxpr``.

    One node per equation (labelled with the primitive, a summary of its parameters and
    its output types), one node per input and constant, one node collecting the outputs;
    an edge per use of a variable, labelled with its name; literals are small plain nodes.
    A jaxpr held in a parameter (``jit``'s body, or any higher-order primitive's) is drawn
    as a ``subgraph cluster_N`` inside the drawing of its jaxpr, linked to its equation by
    a dashed edge. Equations are visited in a loop; only nesting recurses.
    """
    drawing = _Drawing()
    lines = [
        f"digraph {_quote(name)} {{",
        "  compound=true;",
        "  rankdir=TB;",
        '  node [fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=9];',
    ]
    drawing.draw(jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr, lines, "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"


class _Drawing:
    """Node and cluster counters shared by a drawing and its nested jaxprs."""

    __slots__ = ("_nodes", "_clusters")

    def __init__(self) -> None:
        self._nodes = 0
        self._clusters = 0

    def node(self, lines: list[str], indent: str, label: str, attrs: str) -> str:
        node_id = f"n{self._nodes}"
        self._nodes += 1
        lines.append(f"{indent}{node_id} [label={_quote(label)}, {attrs}];")
        return node_id

    def draw(self, jaxpr: Jaxpr, lines: list[str], indent: str) -> str:
        """Append the nodes and edges of ``jaxpr``; return the id of its outputs node."""
        producers: dict[int, str] = {}  # id(var) -> node that defines it
        names: dict[int, str] = {}

        def bind(v: Var) -> str:
            names[id(v)] = encode_name(len(names))
            return names[id(v)]

        def edge(a: Atom, dst: str) -> None:
            if isinstance(a, Literal):
                src = self.node(lines, indent, str(a), "shape=plaintext, fontsize=8")
                lines.append(f"{indent}{src} -> {dst};")
                return
            if id(a) not in producers:  # unbound (an ill-typed jaxpr): draw it rather than fail
                producers[id(a)] = self.node(lines, indent, f"? {a.aval.jaxpr_text()}", "shape=box, color=red")
                names[id(a)] = "?"
            src = producers[id(a)]
            lines.append(f"{indent}{src} -> {dst} [label={_quote(names[id(a)])}];")

        for v in jaxpr.constvars:
            label = f"const {bind(v)}: {v.aval.jaxpr_text()}"
            producers[id(v)] = self.node(lines, indent, label, "shape=box, style=dashed")
        for v in jaxpr.invars:
            label = f"in {bind(v)}: {v.aval.jaxpr_text()}"
            producers[id(v)] = self.node(lines, indent, label, "shape=invhouse, style=filled, fillcolor=lightblue")
        for eqn in jaxpr.eqns:
            outs = ", ".join(f"{bind(v)}: {v.aval.jaxpr_text()}" for v in eqn.outvars)
            node_id = self.node(lines, indent, _eqn_label(eqn, outs), "shape=box, style=rounded")
            for a in eqn.invars:
                edge(a, node_id)
            for v in eqn.outvars:
                producers[id(v)] = node_id
            for title, inner in _nested_jaxprs(eqn):
                self._clusters += 1
                cluster = f"cluster_{self._clusters}"
                lines.append(f"{indent}subgraph {cluster} {{")
                lines.append(f"{indent}  label={_quote(title)};")
                lines.append(f"{indent}  style=rounded;")
                anchor = self.draw(inner, lines, indent + "  ")
                lines.append(f"{indent}}}")
                lines.append(f"{indent}{node_id} -> {anchor} [style=dashed, arrowhead=odot, lhead={cluster}];")
        out_label = "out: " + ", ".join(a.aval.jaxpr_text() for a in jaxpr.outvars)
        out_id = self.node(lines, indent, out_label, "shape=house, style=filled, fillcolor=lightyellow")
        for a in jaxpr.outvars:
            edge(a, out_id)
        return out_id


def _eqn_label(eqn: JaxprEqn, outs: str) -> str:
    """``prim`` / non-jaxpr params, each shortened / output binders with their types."""
    parts = [eqn.primitive.name]
    for key in sorted(eqn.params):
        value = eqn.params[key]
        if _holds_jaxpr(value):
            continue
        text = " ".join(pp_param_value(value, "").split())
        if len(text) > _MAX_PARAM_CHARS:
            text = text[: _MAX_PARAM_CHARS - 1] + "…"
        parts.append(f"{key}={text}")
    parts.append(outs or "(no outputs)")
    return "\n".join(parts)


def _holds_jaxpr(value: ParamValue) -> bool:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return True
    return isinstance(value, tuple) and any(_holds_jaxpr(v) for v in value)


def _nested_jaxprs(eqn: JaxprEqn) -> Iterator[tuple[str, Jaxpr]]:
    """``(cluster title, jaxpr)`` for each jaxpr in ``eqn``'s params (tuples searched in order)."""
    title = eqn.primitive.name
    name = eqn.params.get("name")
    if isinstance(name, str):
        title = f"{title}: {name}"
    for key in sorted(eqn.params):
        stack: list[tuple[str, ParamValue]] = [(key, eqn.params[key])]
        while stack:
            path, value = stack.pop(0)
            if isinstance(value, ClosedJaxpr):
                yield f"{title} ({path})", value.jaxpr
            elif isinstance(value, Jaxpr):
                yield f"{title} ({path})", value
            elif isinstance(value, tuple):
                stack[:0] = [(f"{path}[{i}]", v) for i, v in enumerate(value)]


def _quote(text: str) -> str:
    """A DOT double-quoted string (``\\n`` for line breaks)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'

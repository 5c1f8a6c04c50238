"""Sphinx extension: the ``examples-gallery`` directive lists every ``examples/*.py``.

For each script (the main demonstration first): its docstring, which says what it shows,
then its source. A new example appears on the page with no edit to the docs.
"""

from __future__ import annotations

import ast
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def examples(root: Path) -> list[Path]:
    return sorted(root.glob("*.py"), key=lambda p: (p.name != "demo.py", p.name))


class ExamplesGallery(SphinxDirective):
    """The directive; its content is written as Markdown (the page is MyST) and parsed in place."""

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir).parent / "examples"
        text: list[str] = []
        for path in examples(root):
            self.env.note_dependency(str(path))
            tree = ast.parse(path.read_text())
            doc = ast.get_docstring(tree) or ""
            after_doc = tree.body[0].end_lineno if doc and tree.body[0].end_lineno else 0
            relative = (Path("..") / "examples" / path.name).as_posix()
            text += [f"## `{path.name}`", "", doc, "", f"```{{literalinclude}} {relative}", ":language: python"]
            text += [f":lines: {after_doc + 2}-", "```", ""]
        container = nodes.container()
        self.state.nested_parse(self.content.__class__(text, source=str(root)), self.content_offset, container, match_titles=True)
        return container.children


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("examples-gallery", ExamplesGallery)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx configuration of fcore's documentation site.

Build it with ``python -m sphinx -W --keep-going docs docs/_build/html`` (``pip install -e ".[docs]"``).
The Markdown pages are read by MyST; the API reference is generated from the docstrings and
signatures of every public name by ``_ext/fcore_api.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "fcore"
author = "the fcore authors"
copyright = "the fcore authors"  # noqa: A001 - Sphinx's name

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "fcore_api",
    "fcore_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

# Markdown: `#` anchors for headings down to ###, so pages can link to sections.
myst_heading_anchors = 3

# API reference: signatures with their annotations as written, members in source order.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
python_use_unqualified_type_names = True

html_theme = "alabaster"
html_title = "fcore"
html_theme_options = {
    "description": "JAX's core as a typed, functional-core Python library",
    "fixed_sidebar": True,
    "page_width": "1240px",
    "sidebar_width": "250px",
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}

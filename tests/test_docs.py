"""The documentation's examples are part of the product: run them."""

from __future__ import annotations

import doctest
import pathlib

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


#: Every page with ``>>>`` examples (new pages are picked up).
PAGES = sorted(p.name for p in DOCS.glob("*.md") if ">>> " in p.read_text())


@pytest.mark.parametrize("name", PAGES)
def test_doc_examples_run(name: str) -> None:
    result = doctest.testfile(str(DOCS / name), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0

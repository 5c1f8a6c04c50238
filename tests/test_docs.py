"""The documentation's examples are part of the product: run them."""

from __future__ import annotations

import doctest
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


#: Every page with ``>>>`` examples (new pages are picked up).
PAGES = sorted(p.name for p in DOCS.glob("*.md") if ">>> " in p.read_text())


@pytest.mark.parametrize("name", PAGES)
def test_doc_examples_run(name: str) -> None:
    result = doctest.testfile(str(DOCS / name), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_adding_a_primitive_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/adding_a_primitive.md's blocks run in order, in one namespace (the block, then its use)."""
    text = (DOCS / "adding_a_primitive.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)
    assert len(blocks) == 2
    namespace: dict[str, object] = {"__name__": "adding_a_primitive_doc"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"adding_a_primitive.md:block{i}", "exec"), namespace)  # noqa: S102 - the doc's own code
    assert "my_roll[axis=1 shift=1]" in capsys.readouterr().out

"""docs/embedding.md is executable: its ``python`` blocks run here, so the doc cannot rot.

Each ``## `` section runs in a fresh namespace, its blocks in order (a section is self-contained,
which also keeps the sections independent under pytest-xdist).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "embedding.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def _sections() -> list[tuple[str, list[str]]]:
    """``(title, python blocks)`` for each ``## `` section that has code."""
    sections: list[tuple[str, list[str]]] = []
    for chunk in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        title = chunk.split("\n", 1)[0].strip()
        blocks = _BLOCK.findall(chunk)
        if blocks:
            sections.append((title, blocks))
    return sections


SECTIONS = _sections()


def test_every_section_has_code() -> None:
    titles = [t for t, _ in SECTIONS]
    assert len(titles) == 6, titles


@pytest.mark.parametrize(("title", "blocks"), SECTIONS, ids=[t for t, _ in SECTIONS])
def test_section_runs(title: str, blocks: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {"__name__": f"embedding_doc_{len(title)}"}
    for i, block in enumerate(blocks):
        code = compile(block, f"{DOC}:{title}:block{i}", "exec")
        exec(code, namespace)  # noqa: S102 - the doc's own examples
    capsys.readouterr()


def _block_defining(name: str) -> str:
    for _, blocks in SECTIONS:
        for block in blocks:
            if re.search(rf"^def {name}\(", block, re.M):
                return block
    raise AssertionError(f"no block defines {name}")


@pytest.mark.parametrize("name", ["count_costs", "eval_intervals"])
def test_interpreters_are_short(name: str) -> None:
    """The interpreters (the whole block: helpers, rule table and loop) stay under 40 lines."""
    lines = _block_defining(name).splitlines()
    assert len(lines) < 40, len(lines)


def test_user_primitives_cover_every_rule() -> None:
    text = DOC.read_text()
    for rule in ("def_impl", "def_abstract_eval", "def_jvp", "def_transpose", "def_batching", "def_lowering"):
        assert f"@cube_p.{rule}" in text or f"@scale_p.{rule}" in text, rule
    for transform in ("fcore.grad(", "fcore.vmap(", "fcore.jit(", "fcore.make_jaxpr("):
        assert transform in text, transform

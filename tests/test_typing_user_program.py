"""fcore's types catch a user's mistakes: ``mypy --strict`` over an annotated program and a
file of deliberate mistakes (tests/typing_cases/), as a user sees fcore: installed, with
its ``py.typed`` and no configuration of ours (mypy runs outside the repository). The same
probes run under pyright (basic mode) where it is installed (``npm install pyright``; found
on ``PATH`` or through ``FCORE_PYRIGHT``)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest

import fcore

CASES = pathlib.Path(__file__).resolve().parent / "typing_cases"
PROGRAM = CASES / "user_program.py"
MISTAKES = CASES / "mistakes.py"
#: ``path:line: error: message  [code]``, as mypy prints it.
_ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")
_MARK = re.compile(r"#\s*E:\s*(?P<code>[a-z-]+)\s*$")

Errors = dict[str, dict[int, set[str]]]


def _marked_mistakes() -> list[tuple[int, str]]:
    """``(line, code)`` of each line of the mistakes file marked ``# E: <code>``."""
    lines = MISTAKES.read_text().splitlines()
    return [(n, m["code"]) for n, text in enumerate(lines, 1) if (m := _MARK.search(text))]


@pytest.fixture(scope="module")
def errors(tmp_path_factory: pytest.TempPathFactory) -> Errors:
    """Errors per file name and line, from one cold strict mypy run over both case files."""
    work = tmp_path_factory.mktemp("mypy")
    src = pathlib.Path(fcore.__file__).resolve().parent.parent  # the fcore being tested
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
         "--hide-error-context", "--no-pretty", "--cache-dir", str(work / "cache"), str(PROGRAM), str(MISTAKES)],
        cwd=work, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout  # 2: mypy itself failed
    found: Errors = defaultdict(lambda: defaultdict(set))
    for line in proc.stdout.splitlines():
        if (m := _ERROR.match(line)) is not None:
            found[pathlib.Path(m["path"]).name][int(m["line"])].add(m["code"])
    return found


def test_the_annotated_program_type_checks_clean(errors: Errors) -> None:
    assert dict(errors["user_program.py"]) == {}


def test_there_are_enough_mistakes() -> None:
    assert len(_marked_mistakes()) >= 32


@pytest.mark.parametrize(("line", "code"), _marked_mistakes())
def test_the_mistake_is_reported_on_its_line(errors: Errors, line: int, code: str) -> None:
    reported = errors["mistakes.py"].get(line, set())
    assert code in reported, f"mistakes.py:{line}: expected [{code}], mypy reported {sorted(reported)}"


def test_no_error_outside_the_marked_lines(errors: Errors) -> None:
    marked = {line for line, _ in _marked_mistakes()}
    assert {line: codes for line, codes in errors["mistakes.py"].items() if line not in marked} == {}


PYRIGHT = os.environ.get("FCORE_PYRIGHT") or shutil.which("pyright")


@pytest.mark.skipif(PYRIGHT is None, reason="pyright is not installed (npm install pyright)")
def test_pyright_catches_the_same_mistakes_and_passes_the_program(tmp_path: pathlib.Path) -> None:
    assert PYRIGHT is not None
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({"typeCheckingMode": "basic", "pythonVersion": "3.11"}))
    src = pathlib.Path(fcore.__file__).resolve().parent.parent
    proc = subprocess.run(
        [PYRIGHT, "--outputjson", "-p", str(config), "--pythonpath", sys.executable, str(PROGRAM), str(MISTAKES)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=False,
    )
    report = json.loads(proc.stdout)
    found: dict[str, set[int]] = defaultdict(set)
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            found[pathlib.Path(diagnostic["file"]).name].add(diagnostic["range"]["start"]["line"] + 1)
    assert found["user_program.py"] == set()
    assert found["mistakes.py"] == {line for line, _ in _marked_mistakes()}

"""The examples gallery runs: every ``examples/*.py``, each in its own interpreter, as a user runs it.

New example files are picked up automatically. Each must start with a docstring saying what it
shows, exit cleanly, write nothing to stderr (no jaxlib log lines, no warnings) and print no
NaN; an example that defines a ``--small`` option is run with it. The examples listed in
``CHECKS`` also have their printed results checked.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))
#: The prefix of a glog/absl line, e.g. ``I1125 17:50:26.453809    4732 pjrt_client.cc:579] ...``.
LOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\]", re.M)


def run_example(path: Path, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``path`` as ``python path [--small] extra...`` with the environment a user has."""
    args = [sys.executable, str(path), *extra]
    if "--small" in path.read_text():
        args.append("--small")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}  # the defaults
    env["TMPDIR"] = str(cwd)  # anything an example writes to a temporary folder lands here
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def numbers_after(label: str, out: str) -> list[float]:
    """Every number printed right after ``label`` (e.g. ``loss 0.123``)."""
    return [float(m) for m in re.findall(re.escape(label) + r"\s*([-+]?\d[\d.]*(?:e[-+]?\d+)?)", out)]


def check_demo(out: str, cwd: Path) -> None:
    """Its own lines only: the four sections, in order, with their results."""
    headers = [line for line in out.splitlines() if line.startswith("== ")]
    assert headers == [
        "== the loss, staged to a jaxpr ==",
        "== gradient check (directional derivative vs central differences) ==",
        "== per-example gradient norms with vmap(grad) ==",
        "== training with jit(value_and_grad(loss)) ==",
    ]
    assert out.splitlines()[1].startswith("{ lambda ")
    (analytic,), (numeric,) = numbers_after("analytic", out), numbers_after("numeric", out)
    assert analytic == pytest.approx(numeric, rel=1e-2)
    losses = numbers_after("loss", out)
    assert len(losses) == 7 and losses[-1] < 0.5 * losses[0]
    assert "module @jit_step" in out


def check_per_example_gradients(out: str, cwd: Path) -> None:
    differences = numbers_after("max |difference| =", out)
    assert len(differences) == 2 and max(differences) < 1e-5
    losses, accuracies = numbers_after("loss", out), numbers_after("accuracy", out)
    assert losses[-1] < losses[0] and accuracies[-1] > max(0.7, accuracies[0])


def check_transformer(out: str, cwd: Path) -> None:
    losses, accuracies = numbers_after("loss", out), numbers_after("copy accuracy", out)
    assert losses[-1] < 0.2 * losses[0] and accuracies[-1] > 0.9
    given = re.search(r"^input : (.*) \|$", out, re.M)
    copied = re.search(r"^copied: (.*)$", out, re.M)
    assert given is not None and copied is not None and copied.group(1) == given.group(1)


def check_mlp(out: str, cwd: Path) -> None:
    """JAX's own run of this script (jax in place of fcore) prints these very numbers."""
    losses, (accuracy,) = numbers_after("loss", out), numbers_after("training accuracy", out)
    assert losses[0] == pytest.approx(0.7053, abs=1e-4)  # same seed, same keys, same weights as JAX
    assert losses[-1] < 0.1 * losses[0] and accuracy > 0.9


def check_ir_toolkit(out: str, cwd: Path) -> None:
    before, after = out.split("== after strength_reduce, cse, dce ==")
    assert "integer_pow" in before and "div" in before and "cos" in before
    program = after.split("operations:")[0]
    assert "integer_pow" not in program and "div" not in program and "cos" not in program
    value = re.search(r"^value before (\S+)  after (\S+)  \|difference\| (\S+)$", out, re.M)
    assert value is not None and float(value.group(1)) == pytest.approx(float(value.group(2)), rel=1e-5)
    difference = float(value.group(3))
    (grad_difference,) = numbers_after("derivative by hand: max |difference|", out)
    assert difference < 1e-5 and grad_difference < 1e-4
    wrote = re.search(r"^wrote (\S+) \(\d+ lines\) and (\S+)$", out, re.M)
    assert wrote is not None
    mlir, dot = Path(wrote.group(1)), Path(wrote.group(2))
    assert mlir.is_relative_to(cwd) and mlir.read_text().startswith("module @jit_program")
    assert dot.read_text().startswith('digraph "program"')


def check_data_parallel(out: str, cwd: Path) -> None:
    """Four devices, the batch in four shards, and the same losses as on one device."""
    assert out.startswith("devices: 4, mesh: {'data': 4}")
    assert "split into 4 shards" in out
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+\d+\s", line)]
    assert len(rows) >= 5
    for _, one, four in rows:
        assert float(four) == pytest.approx(float(one), rel=1e-5)
    assert float(rows[-1][1]) < float(rows[0][1])
    (diff,) = numbers_after("max relative difference", out)
    assert diff < 1e-5


def check_cnn(out: str, cwd: Path) -> None:
    losses, accuracies = numbers_after("loss", out), numbers_after("held-out accuracy", out)
    assert len(losses) == 4 and losses[-1] < 0.5 * losses[0]
    assert accuracies[0] < 0.5 and accuracies[-1] > 0.9


CHECKS: dict[str, Callable[[str, Path], None]] = {
    "data_parallel.py": check_data_parallel,
    "demo.py": check_demo,
    "per_example_gradients.py": check_per_example_gradients,
    "transformer.py": check_transformer,
    "ir_toolkit.py": check_ir_toolkit,
    "mlp.py": check_mlp,
    "cnn.py": check_cnn,
}


def test_gallery_is_not_empty() -> None:
    assert {p.name for p in EXAMPLES} >= set(CHECKS)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_cleanly(path: Path, tmp_path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    assert docstring, f"{path.name} must start with a docstring saying what it shows"
    result = run_example(path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"{path.name} wrote to stderr:\n{result.stderr}"
    assert result.stdout.strip(), f"{path.name} printed nothing"
    assert not LOG_LINE.search(result.stdout), result.stdout
    assert not re.search(r"\bnan\b", result.stdout, re.I), result.stdout
    check = CHECKS.get(path.name)
    if check is not None:
        check(result.stdout, tmp_path)

"""The documentation site builds warning-free, documents every public name, and renders in a browser.

The build is the one command the README gives (``python -m sphinx -W --keep-going docs
<out>``), run once per test session into a temporary folder. Headless Chromium (Debian's
``chromium`` package, installed by ``.ci/run``) opens the built index and an API page.
Docstring examples of public names run here as doctests; the Markdown pages' examples run in
``tests/test_docs.py`` and ``tests/test_embedding.py``.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import os
import shutil
import subprocess
import types
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def _load_public_api() -> Callable[[], dict[str, list[str]]]:
    """``public_api`` of the docs extension that generates the API pages (docs/_ext/fcore_api.py)."""
    spec = importlib.util.spec_from_file_location("fcore_api", DOCS / "_ext" / "fcore_api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    public_api: Callable[[], dict[str, list[str]]] = module.public_api
    return public_api


public_api = _load_public_api()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built HTML site (the build must succeed with warnings as errors)."""
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-d", str(out / "doctrees"), str(DOCS),
               str(out / "html")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert result.returncode == 0, f"the docs build failed:\n{result.stdout}\n{result.stderr}"
    assert "WARNING" not in result.stderr, result.stderr
    return out / "html"


def _documented_python_names(site: Path) -> set[str]:
    """The ``py:`` objects in Sphinx's inventory (objects.inv: four header lines, then zlib)."""
    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    body = zlib.decompress(raw[header_end:]).decode()
    return {line.split(" ", 1)[0] for line in body.splitlines() if " py:" in line}


def test_every_public_name_is_documented(site: Path) -> None:
    api = public_api()
    assert {"fcore", "fcore.numpy", "fcore.lax", "fcore.core", "fcore.transforms", "fcore.tree_util"} <= set(api)
    documented = _documented_python_names(site)
    missing = [f"{mod}.{name}" for mod, names in api.items() for name in names if f"{mod}.{name}" not in documented]
    assert not missing, f"public names without an API entry: {missing}"
    for mod in api:
        assert (site / "api" / f"{mod}.html").is_file(), mod


def test_public_api_follows_the_exports() -> None:
    """The pages list what the modules export: ``__all__``, else the ``x as x`` re-exports and definitions."""
    api = public_api()
    import fcore
    import fcore.numpy

    # fcore.numpy has no __all__: its re-exports are the list (its implementation modules are not)
    names = {n for n in dir(fcore.numpy) if not n.startswith("_") and not isinstance(getattr(fcore.numpy, n), types.ModuleType)}
    assert set(api["fcore.numpy"]) == names | {"linalg", "fft"}
    for name in ("jit", "grad", "vmap", "print_environment_info", "Array", "config", "numpy", "lax"):
        assert name in api["fcore"], name
    assert not [n for n in api["fcore"] if n.startswith("_")]
    assert "pp_jaxpr" not in api["fcore.core"]  # imported without `as`: not a re-export
    assert "pretty_print" in api["fcore.core"]  # defined there
    assert "to_stablehlo" in api["fcore.export"] and "to_dot" in api["fcore.viz"]


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    return exe


def _open(page: Path, tmp_path: Path, *action: str) -> subprocess.CompletedProcess[str]:
    command = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *action, page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("index.html", ["<title>fcore", "fcore user guide", "API reference", "Examples", 'class="sphinxsidebar"']),
        ("api/fcore.numpy.html", ['id="fcore.numpy.sum"', "fcore.numpy.linalg", 'class="sig-name descname"', "Summary"]),
    ],
)
def test_page_renders_in_chromium(site: Path, tmp_path: Path, page: str, expected: list[str]) -> None:
    result = _open(site / page, tmp_path, "--dump-dom")
    assert result.returncode == 0, result.stderr
    dom = result.stdout
    for text in expected:
        assert text in dom, text
    shot = tmp_path / "page.png"
    result = _open(site / page, tmp_path, "--window-size=1280,900", f"--screenshot={shot}")
    assert result.returncode == 0, result.stderr
    picture = shot.read_bytes()
    assert picture.startswith(b"\x89PNG")
    assert len(picture) > 30_000  # a blank page of this size compresses to under 10 kB


def _docstring_tests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen: set[int] = set()
    tests: list[doctest.DocTest] = []
    for mod, names in public_api().items():
        module = importlib.import_module(mod)
        for name in names:
            obj = getattr(module, name)
            written_by_fcore = (getattr(obj, "__module__", None) or "").startswith("fcore")
            if id(obj) in seen or not (inspect.isroutine(obj) or inspect.isclass(obj)) or not written_by_fcore:
                continue
            seen.add(id(obj))
            tests += [t for t in finder.find(obj, f"{mod}.{name}", module=False, globs={}) if t.examples]
    return tests


DOCSTRING_TESTS = _docstring_tests()


def test_docstrings_have_examples() -> None:
    assert DOCSTRING_TESTS, "no public docstring has a >>> example"


@pytest.mark.parametrize("test", DOCSTRING_TESTS, ids=[t.name for t in DOCSTRING_TESTS])
def test_docstring_examples_run(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0

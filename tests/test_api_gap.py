"""What fcore still lacks of JAX's public API, module by module, kept in docs/api_gap.md.

The list is computed from ``dir()`` of JAX's documented public modules and fcore's mirrors
(``jax.X`` -> ``fcore.X``); the test fails when docs/api_gap.md is out of date, in either
direction (a name landed, or JAX has a name fcore lacks that the page does not list).
Regenerate the page with ``python tests/test_api_gap.py``.
"""

from __future__ import annotations

import importlib
import pathlib
import pkgutil
import sys
import types

#: JAX's public modules whose names fcore mirrors (SPEC §3.6); ``jax.numpy`` has its own,
#: stricter test (tests/test_numpy_namespace.py).
MODULES = (
    "jax",
    "jax.lax",
    "jax.nn",
    "jax.nn.initializers",
    "jax.random",
    "jax.tree",
    "jax.tree_util",
    "jax.scipy.special",
    "jax.scipy.stats",
    "jax.scipy.linalg",
    "jax.scipy",
    "jax.scipy.optimize",
    "jax.scipy.signal",
    "jax.scipy.fft",
    "jax.scipy.integrate",
    "jax.scipy.interpolate",
    "jax.scipy.ndimage",
    "jax.scipy.cluster",
    "jax.scipy.cluster.vq",
    "jax.scipy.spatial",
    "jax.scipy.spatial.transform",
    "jax.scipy.sparse",
    "jax.scipy.sparse.linalg",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.sharding",
    "jax.debug",
    "jax.ad_checkpoint",
    "jax.test_util",
    "jax.dtypes",
    "jax.extend",
    "jax.extend.core",
    "jax.experimental",
)

PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "api_gap.md"

HEADER = """# What fcore lacks of JAX's public API

fcore mirrors JAX's module paths (`fcore.X` is `jax.X`). This page lists, for each public JAX
module, the names fcore does not have yet. It is generated from `dir()` of both libraries by
`python tests/test_api_gap.py`, and `tests/test_api_gap.py` fails when it is out of date.
Private names (a leading underscore) are not counted; a submodule is written `name/`. `jax.numpy`'s gap, with the reason for each name, is in `tests/test_numpy_namespace.py`.
"""


def _public(module: types.ModuleType) -> set[str]:
    """Public names, submodules written ``name/``. ``dir()`` lists a submodule only once
    something in the process has imported it, so submodules are read from the package's
    files instead."""
    names = {n for n in dir(module) if not n.startswith("_") and not isinstance(getattr(module, n), types.ModuleType)}
    path = getattr(module, "__path__", None)
    if path is not None:
        names |= {f"{m.name}/" for m in pkgutil.iter_modules(path) if not m.name.startswith("_")}
    return names


def gap() -> dict[str, tuple[int, list[str]]]:
    """Per JAX module: (number of public names, the names fcore's mirror lacks)."""
    result: dict[str, tuple[int, list[str]]] = {}
    for name in MODULES:
        theirs = importlib.import_module(name)
        mirror = "fcore" + name[len("jax"):]
        try:
            ours: types.ModuleType | None = importlib.import_module(mirror)
        except ImportError:
            ours = None
        names = _public(theirs)
        have = _public(ours) if ours is not None else set()
        result[name] = (len(names), sorted(names - have))
    return result


def render() -> str:
    lines = [HEADER]
    lines.append("| JAX module | public names | missing in fcore |")
    lines.append("|---|---|---|")
    table = gap()
    for name, (total, missing) in table.items():
        lines.append(f"| `{name}` | {total} | {len(missing)} |")
    for name, (total, missing) in table.items():
        if not missing:
            continue
        lines.append("")
        lines.append(f"## `{name}` ({len(missing)} of {total} missing)")
        lines.append("")
        lines.append(", ".join(f"`{n}`" for n in missing))
    return "\n".join(lines) + "\n"


def test_api_gap_page_is_current() -> None:
    assert PAGE.exists(), "docs/api_gap.md is missing: run `python tests/test_api_gap.py`"
    assert PAGE.read_text() == render(), "docs/api_gap.md is out of date: run `python tests/test_api_gap.py`"


def test_gap_shrinks_where_fcore_claims_the_module() -> None:
    """The modules this round builds are mostly there: fewer than a quarter of their names
    missing (a regression that drops a module's exports shows up here first)."""
    table = gap()
    for name in ("jax.tree", "jax.tree_util", "jax.random", "jax.ad_checkpoint", "jax.test_util"):
        total, missing = table[name]
        assert len(missing) * 4 < total, (name, missing)


if __name__ == "__main__":
    PAGE.write_text(render())
    sys.stdout.write(f"wrote {PAGE}\n")

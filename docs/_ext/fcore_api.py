"""Sphinx extension: the API reference, one page per public module, generated at each build.

A public module is ``fcore``, every module listed in ``EXTRA_MODULES``, and every submodule
that a public module re-exports. A module's public names are its ``__all__`` where it has one,
else what mypy (``--no-implicit-reexport``) treats as public: the names it defines without a
leading underscore plus the names it imports as ``import x as x`` / ``from m import x as x``.
So a new module or name is documented as soon as it is exported, with no page to write.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import types
import typing
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util.inspect import TypeAliasForwardRef

#: Public modules that fcore does not re-export as attributes (imported by their full name).
EXTRA_MODULES = (
    "fcore.export", "fcore.viz", "fcore.interop", "fcore.backend", "fcore.backend.lowering",
    "fcore.example_libraries.optimizers", "fcore.example_libraries.stax", "fcore.experimental.ode",
    "fcore.experimental.mesh_utils", "fcore.experimental.multihost_utils",
)


def _exported_by_source(module: types.ModuleType) -> list[str]:
    """The names mypy treats as public in a module without ``__all__``."""
    source = inspect.getsource(module)
    names: list[str] = []

    def visit(stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(stmt.name)
            elif isinstance(stmt, ast.Assign):
                names.extend(t.id for t in stmt.targets if isinstance(t, ast.Name))
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
                names.append(stmt.target.id)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                names.extend(a.asname for a in stmt.names if a.asname is not None and a.asname == a.name.split(".")[-1])
            elif isinstance(stmt, ast.If):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                visit(stmt.body)
                for handler in stmt.handlers:
                    visit(handler.body)
                visit(stmt.orelse)

    visit(ast.parse(source).body)
    return [n for n in dict.fromkeys(names) if not n.startswith("_") and hasattr(module, n)]


def public_names(module: types.ModuleType) -> list[str]:
    """The public names of ``module``, in the order it lists or defines them."""
    exported = getattr(module, "__all__", None)
    if exported is not None:
        return list(dict.fromkeys(exported))
    return _exported_by_source(module)


def _is_submodule(parent: types.ModuleType, name: str) -> bool:
    value = getattr(parent, name)
    return isinstance(value, types.ModuleType) and value.__name__ == f"{parent.__name__}.{name}"


def public_api() -> dict[str, list[str]]:
    """``{module name: its public names}`` for every public module, submodules included."""
    api: dict[str, list[str]] = {}
    pending = ["fcore", *EXTRA_MODULES]
    while pending:
        name = pending.pop(0)
        if name in api:
            continue
        module = importlib.import_module(name)
        names = public_names(module)
        api[name] = names
        pending.extend(f"{name}.{n}" for n in names if _is_submodule(module, n))
    return api


# --------------------------------------------------------------------------- pages

_SIMPLE_VALUES = (bool, int, float, str, type(None))


def _is_type_alias(obj: object) -> bool:
    return isinstance(obj, (types.GenericAlias, types.UnionType)) or typing.get_origin(obj) is not None


def _is_fcores(obj: object) -> bool:
    """Whether fcore defines ``obj`` (not re-exported from NumPy, jaxlib, the standard library...)."""
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "fcore"


def _is_data(obj: object) -> bool:
    return _is_type_alias(obj) or not callable(obj)


def _shows_value(obj: object) -> bool:
    """Whether a data entry shows its value: a type alias, or a short repr without an address."""
    if _is_type_alias(obj) or isinstance(obj, _SIMPLE_VALUES):
        return True
    text = repr(obj)
    return len(text) <= 60 and " at 0x" not in text


def _foreign_note(obj: object, name: str) -> str | None:
    """What replaces a docstring fcore did not write (None: keep the docstring).

    NumPy's docstrings are numpydoc, not this site's markup, and a constant such as ``pi``
    would otherwise show the docstring of ``float``.
    """
    if _is_type_alias(obj):
        return None
    if _is_data(obj):
        if _is_fcores(type(obj)):
            return None
        if _shows_value(obj):
            return ""
        return f"An instance of ``{type(obj).__module__}.{type(obj).__qualname__}``."
    if _is_fcores(obj):
        return None
    origin = f"{getattr(obj, '__module__', None) or '?'}.{getattr(obj, '__qualname__', name)}"
    return f"Re-exported from ``{origin.removeprefix('builtins.')}``."


def _inherits_docstring(obj: object) -> bool:
    """A class without a docstring of its own (``fnp.int8``), which would show its base's."""
    return inspect.isclass(obj) and not vars(obj).get("__doc__")


def _summary(obj: object, name: str) -> str:
    """The first sentence of the docstring, cut only outside inline literals."""
    note = _foreign_note(obj, name)
    if note is None and _inherits_docstring(obj):
        note = ""
    doc = note if note is not None else (inspect.getdoc(obj) or "")
    stanza = " ".join(doc.strip().split("\n\n", 1)[0].split())
    for match in re.finditer(r"\.(\s|$)", stanza):
        head = stanza[: match.start() + 1]
        if head.count("``") % 2 == 0 and head.count("`") % 2 == 0:
            return head
    return stanza if stanza.count("`") % 2 == 0 else ""


class _Homes:
    """Where each class is documented in full: its defining module's page where that module is
    public, else the first page that lists it. Other pages name it as an alias, because
    autodoc gives every class its defining path as a second (``:canonical:``) name, and two
    full descriptions would claim that name twice."""

    def __init__(self, api: dict[str, list[str]]) -> None:
        self._home: dict[int, str] = {}
        for module_name, names in api.items():
            module = importlib.import_module(module_name)
            for n in names:
                obj = getattr(module, n)
                if inspect.isclass(obj) and obj.__name__ == n:
                    defining = obj.__module__
                    if defining in api and n in api[defining]:
                        self._home[id(obj)] = f"{defining}.{n}"
                    else:
                        self._home.setdefault(id(obj), f"{module_name}.{n}")

    def elsewhere(self, obj: object, full_name: str) -> str | None:
        """The full name where ``obj`` is documented, when that is not ``full_name``."""
        home = self._home.get(id(obj))
        return home if home is not None and home != full_name else None


def _directive(module_name: str, name: str, obj: object, homes: _Homes) -> list[str]:
    if _is_data(obj):
        return [f".. autodata:: {name}", *([] if _shows_value(obj) else ["   :no-value:"])]
    if inspect.isclass(obj):
        home = homes.elsewhere(obj, f"{module_name}.{name}")
        if home is not None:
            return [f".. py:class:: {name}", "", f"   The same class as :py:class:`{home}`."]
        lines = [f".. autoclass:: {name}"]
        if _is_fcores(obj) and obj.__name__ == name:
            lines += ["   :members:", "   :show-inheritance:"]
        return lines
    return [f".. autofunction:: {name}"]


def _page(module_name: str, names: list[str], homes: _Homes) -> str:
    module = importlib.import_module(module_name)
    title = f"``{module_name}``"
    lines = [title, "=" * len(title), "", f".. automodule:: {module_name}", "   :no-members:", ""]
    submodules = [n for n in names if _is_submodule(module, n)]
    members = [n for n in names if n not in submodules]
    if submodules:
        lines += [".. rubric:: Submodules", ""]
        lines += [f"* :doc:`{module_name}.{n}`" for n in submodules] + [""]
    if members:
        lines += [".. rubric:: Summary", "", ".. list-table::", "   :widths: 30 70", ""]
        for n in members:
            lines += [f"   * - :py:obj:`{n} <{module_name}.{n}>`", f"     - {_summary(getattr(module, n), n)}"]
        lines += ["", ".. rubric:: Reference", ""]
        for n in members:
            lines += [*_directive(module_name, n, getattr(module, n), homes), ""]
    return "\n".join(lines)


def write_pages(out: Path) -> list[str]:
    """Write ``out/<module>.rst`` for every public module (only files whose text changed, so
    incremental builds stay incremental) and delete pages of modules that are gone."""
    out.mkdir(parents=True, exist_ok=True)
    api = public_api()
    homes = _Homes(api)
    written = []
    for module_name, names in api.items():
        path = out / f"{module_name}.rst"
        text = _page(module_name, names, homes)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path.name)
    for stale in out.glob("*.rst"):
        if stale.name not in written:
            stale.unlink()
    return written


def _replace_foreign_docstring(
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    if what != "module":
        note = _foreign_note(obj, name.rsplit(".", 1)[-1])
        if note is None and what == "class" and _inherits_docstring(obj):
            note = ""
        if note is not None:
            lines[:] = [note] if note else []


def _declared_type_aliases() -> dict[str, str]:
    """``{alias name: how signatures show it}`` for every ``X: TypeAlias = ...`` in fcore.

    Signatures then read ``x: ArrayLike`` rather than the seven-member union it stands for
    (``autodoc_type_aliases``; fcore's annotations are strings, which is what that needs).
    A public alias is shown by its public name, so that it links to its entry.
    """
    public = {n: f"{mod}.{n}" for mod, names in public_api().items() for n in names}
    aliases: dict[str, str] = {}
    for name, module in sorted(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if not (name == "fcore" or name.startswith("fcore.")) or not source or not source.endswith(".py"):
            continue  # (``fcore._fastjit`` is compiled: no Python source to read)
        for stmt in ast.parse(Path(source).read_text()).body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and "TypeAlias" in ast.unparse(stmt.annotation)
                and not stmt.target.id.startswith("_")
            ):
                aliases.setdefault(stmt.target.id, public.get(stmt.target.id, stmt.target.id))
    return aliases


def _configure(app: Sphinx, config: Config) -> None:
    importlib.import_module("fcore")
    # Sphinx 9 writes an alias inside a union (``x: ArrayLike | None``) with the repr of its
    # placeholder, ``TypeAliasForwardRef('ArrayLike') | None``; its name is what belongs there.
    TypeAliasForwardRef.__repr__ = lambda self: str(self.name)  # type: ignore[method-assign]
    config.autodoc_type_aliases = {**_declared_type_aliases(), **config.autodoc_type_aliases}


def _generate(app: Sphinx) -> None:
    write_pages(Path(app.srcdir) / "api")


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _configure)
    app.connect("builder-inited", _generate)
    app.connect("autodoc-process-docstring", _replace_foreign_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # a quick listing: python docs/_ext/fcore_api.py
    for mod, names in public_api().items():
        print(mod, len(names))

"""``fcore.numpy``'s public names against ``jax.numpy``'s: what is still missing, and why.

The gap is listed here, name by name with its reason, so that it stays visible: the test fails
both when a listed name appears (strike it from the list) and when a new JAX name is missing.
"""

from __future__ import annotations

import ast
import pathlib
import types

import jax.numpy as jnp
import pytest

import fcore.numpy as fnp

#: jax.numpy names fcore.numpy does not have yet, with the reason.
MISSING: dict[str, str] = {}

#: Names jax.numpy had and removed: fcore refuses them the same way.
REMOVED = ("fix", "row_stack", "trapz", "in1d", "round_", "product")


def _public(module: types.ModuleType) -> set[str]:
    """Public names, plus the Array API's two dunder entry points."""
    return {n for n in dir(module) if not n.startswith("_") or n.startswith("__array_")}


def _fcore_submodules() -> set[str]:
    """fcore.numpy's own implementation modules (``fnp.setops``...), which JAX keeps private."""
    return {n for n in _public(fnp) if isinstance(getattr(fnp, n), types.ModuleType) and n not in ("linalg", "fft")}


def test_missing_names_are_exactly_the_listed_ones() -> None:
    missing = _public(jnp) - _public(fnp)
    unexplained = sorted(missing - set(MISSING))
    assert not unexplained, f"jax.numpy names missing from fcore.numpy without a listed reason: {unexplained}"
    now_present = sorted(set(MISSING) - missing)
    assert not now_present, f"listed as missing but present now (strike them from MISSING): {now_present}"


def test_no_names_beyond_jax() -> None:
    """Apart from its implementation modules, fcore.numpy exports nothing jax.numpy does not."""
    extra = _public(fnp) - _public(jnp) - _fcore_submodules()
    assert not extra, f"fcore.numpy exports names jax.numpy does not have: {sorted(extra)}"


@pytest.mark.parametrize("name", REMOVED)
def test_removed_names_raise_attribute_error(name: str) -> None:
    with pytest.raises(AttributeError) as theirs:
        getattr(jnp, name)
    with pytest.raises(AttributeError) as ours:
        getattr(fnp, name)
    if name == "fix":  # jnp explains the removal; so does fnp
        assert str(ours.value) == str(theirs.value)


def test_callable_and_class_kinds_agree() -> None:
    """A name that is a class (dtype, ufunc, scalar type) or a function in jnp is one in fnp."""
    for name in sorted(_public(jnp) & _public(fnp)):
        theirs, ours = getattr(jnp, name), getattr(fnp, name)
        assert callable(theirs) == callable(ours), name
        assert isinstance(theirs, types.ModuleType) == isinstance(ours, types.ModuleType), name
        assert isinstance(theirs, jnp.ufunc) == isinstance(ours, fnp.ufunc), name


def test_each_public_name_is_exported_once() -> None:
    """``fcore/numpy/__init__.py`` re-exports each name exactly once (``from m import x as x``)
    and keeps no ``__all__`` list repeating them."""
    source = pathlib.Path(fnp.__file__).read_text()
    tree = ast.parse(source)
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            exported += [a.asname for a in node.names if a.asname and not a.asname.startswith("_")]
        if isinstance(node, ast.Assign):
            assert not any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets), "a second export list"
    duplicates = sorted({n for n in exported if exported.count(n) > 1})
    assert not duplicates, duplicates

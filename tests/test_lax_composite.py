"""``lax.composite`` against jax's: values, the ``composite`` equation, the ``stablehlo.composite``
op's attributes, and the errors of the transformations it has no rule for."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import jax
import numpy as np
import pytest

import fcore
from fcore import lax

X = np.array([0.0, 0.5, 1.0], np.float32)


def _tangent(lax_module: Any) -> Any:
    @partial(lax_module.composite, name="my.tangent")
    def tangent(x: Any, **attributes: Any) -> Any:
        return lax_module.sin(x) / lax_module.cos(x)

    return tangent


def _attributes(text: str) -> str:
    (attrs,) = re.findall(r"stablehlo\.composite .*?(\{composite_attributes = \{.*?\}|\{decomposition)", text)
    return str(attrs)


def test_values_and_equation_match_jax() -> None:
    ours, theirs = _tangent(lax), _tangent(jax.lax)
    np.testing.assert_array_equal(fcore.jit(lambda x: ours(x, a=3))(X), jax.jit(lambda x: theirs(x, a=3))(X))
    np.testing.assert_allclose(ours(X, a=3), theirs(X, a=3), rtol=1e-6)
    closed = fcore.make_jaxpr(lambda x: ours(x, a=3))(X)
    (eqn,) = closed.eqns
    assert eqn.primitive.name == "composite" and eqn.params["name"] == "my.tangent" and eqn.params["version"] == 0
    assert eqn.params["attributes"] == (("a", 3),)
    assert fcore.core.parse_jaxpr(str(closed)) == closed.jaxpr


def test_lowered_attributes_match_jax() -> None:
    ours, theirs = _tangent(lax), _tangent(jax.lax)
    kwargs = {"a": 3, "c": "s", "d": 1.5, "e": True, "n": None, "t": (1.5, 2), "u": ("a", True), "v": ((1, 2), 3)}
    ours_text = fcore.jit(lambda x: ours(x, **kwargs)).lower(X).as_text()
    theirs_text = jax.jit(lambda x: theirs(x, **kwargs)).lower(X).as_text()
    assert _attributes(ours_text) == _attributes(theirs_text)


def test_several_results_consts_and_version() -> None:
    ours = lax.composite(lambda x, y: (x + y, x * np.arange(3.0, dtype=np.float32)), "my.pair", version=2)
    theirs = jax.lax.composite(lambda x, y: (x + y, x * np.arange(3.0, dtype=np.float32)), "my.pair", version=2)
    for got, want in zip(fcore.jit(ours)(X, X), jax.jit(theirs)(X, X)):
        np.testing.assert_array_equal(got, want)
    assert "version = 2 : i32" in fcore.jit(ours).lower(X, X).as_text()


def test_errors() -> None:
    tangent = _tangent(lax)
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite' not implemented"):
        fcore.vmap(lambda x: tangent(x, a=3))(X[:, None])
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        fcore.grad(lambda x: tangent(x, a=3).sum())(X)
    with pytest.raises(NotImplementedError, match="attributes are Python scalars"):
        tangent(X, a=np.ones(2))
    with pytest.raises(fcore.errors.UnexpectedTracerError, match="as an attribute"):
        fcore.jit(lambda x: tangent(x, a=x))(X)
    with pytest.raises(NotImplementedError, match="not a valid namespaced op name"):
        fcore.jit(lax.composite(lambda x: x, "plain"))(X)

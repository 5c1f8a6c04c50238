"""``parse_jaxpr(text, dialect="jax")`` reads what JAX prints: for the programs of
tests/jax_corpus.py and tests/test_printing_vs_jax.py, ``str(jax.make_jaxpr(f)(...))`` parses
to a type-checked jaxpr that is the jaxpr ``from_jax`` makes of the live JAX jaxpr (up to
weak types, which JAX's text does not show), or, where the text cannot hold what the live
jaxpr has (custom-derivative rules), a program computing the same values."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from jax_corpus import CORPUS
from test_printing_vs_jax import CORPUS as PRINTING_CORPUS
from test_printing_vs_jax import DIFFERENT, _J

from fcore.core import eval_jaxpr, typecheck
from fcore.errors import JaxprParseError
from fcore.interop import from_jax
from fcore.ir import parse_jaxpr
from fcore.testing import Program as RandomProgram
from fcore.testing import programs

Program = tuple[str, Callable[..., Any], tuple[Any, ...]]

#: Programs with custom derivative rules: JAX prints only the rules' names.
WITH_RULES = {"custom_jvp", "custom_vjp", "custom_closures", "softmax_jit", "det_searchsorted"}
PROGRAMS: list[Program] = [
    *[entry for entry in CORPUS if entry[0] not in WITH_RULES],
    *[(name, make(_J), args) for name, (make, args) in PRINTING_CORPUS.items()],
    *[(name, make(_J), args) for name, ((make, args), _) in DIFFERENT.items() if name != "at_set"],
]


def _normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("{weak}", ""))


@pytest.mark.parametrize("program", PROGRAMS, ids=[f"{i}-{p[0]}" for i, p in enumerate(PROGRAMS)])
def test_jax_text_parses_to_the_imported_jaxpr(program: Program) -> None:
    _, f, args = program
    jax_closed = jax.make_jaxpr(f)(*args)
    parsed = parse_jaxpr(str(jax_closed), dialect="jax")
    typecheck(parsed)
    assert _normalized(str(parsed)) == _normalized(str(from_jax(jax_closed).jaxpr))


@settings(max_examples=15, deadline=None)
@given(programs(max_steps=6))
def test_random_programs_traced_by_jax_parse(program: RandomProgram) -> None:
    jax_closed = jax.make_jaxpr(program.function(jax))(*program.inputs)
    parsed = parse_jaxpr(str(jax_closed), dialect="jax")
    assert _normalized(str(parsed)) == _normalized(str(from_jax(jax_closed).jaxpr))


@pytest.mark.parametrize("name", sorted(WITH_RULES))
def test_jax_text_with_custom_rules_computes_the_same(name: str) -> None:
    (_, f, args), = [e for e in CORPUS if e[0] == name]
    parsed = parse_jaxpr(str(jax.make_jaxpr(f)(*args)), dialect="jax")
    want = jax.tree_util.tree_leaves(f(*args))
    for got, w in zip(eval_jaxpr(parsed, [], *args), want, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(w), rtol=2e-6, atol=2e-6)


def test_constvars_stay_constvars() -> None:
    c = np.arange(3, dtype=np.float32)
    text = str(jax.make_jaxpr(lambda x: x * c)(c))
    parsed = parse_jaxpr(text, dialect="jax")
    assert len(parsed.constvars) == 1 and len(parsed.invars) == 1
    np.testing.assert_allclose(eval_jaxpr(parsed, [c], c)[0], c * c)


def test_unknown_primitive_is_named_with_its_line() -> None:
    text = "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = frobnicate[k=1] b\n  in (c,) }"
    with pytest.raises(JaxprParseError, match=r"line 3, column 16: unknown primitive 'frobnicate'"):
        parse_jaxpr(text, dialect="jax")


def test_unknown_parameter_is_named() -> None:
    text = "{ lambda ; a:f32[3]. let b:f32[3] = sin[frobs=2] a in (b,) }"
    with pytest.raises(JaxprParseError, match=r"line 1\).*frobs=2 of 'sin'"):
        parse_jaxpr(text, dialect="jax")


def test_ill_typed_text_is_refused() -> None:
    text = "{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }"
    with pytest.raises(JaxprParseError, match="JAX types an output f32\\[4\\]"):
        parse_jaxpr(text, dialect="jax")


def test_malformed_text_names_line_and_column() -> None:
    with pytest.raises(JaxprParseError, match=r"line 2, column 19: variable 'q' used before it is bound"):
        parse_jaxpr("{ lambda ; a:f32[]. let\n    b:f32[] = sin q\n  in (b,) }", dialect="jax")


def test_unknown_dialect() -> None:
    with pytest.raises(ValueError, match="unknown dialect 'mlir'"):
        parse_jaxpr("{ lambda ; . let  in () }", dialect="mlir")


def test_inf_and_nan_are_names_and_literals() -> None:
    """JAX's name generator reaches ``inf`` (its 5752nd variable): position tells it from a literal."""
    multi = "{ lambda ; inf:f32[]. let\n    nan:f32[] = sin inf\n    b:f32[] = mul nan inf:f32[]\n    c:f32[] = add b\n      nan:f32[]\n  in (c,) }"
    one_line = "{ lambda ; inf:f32[]. let nan:f32[] = sin inf; b:f32[] = mul nan inf:f32[]; c:f32[] = add b nan:f32[] in (c,) }"
    for text in (multi, one_line):
        parsed = parse_jaxpr(text, dialect="jax")
        assert [e.primitive.name for e in parsed.eqns] == ["sin", "mul", "add"]
        assert str(parsed.eqns[1].invars[1]) == "inf:f32[]" and str(parsed.eqns[2].invars[1]) == "nan:f32[]"

"""Tests of ``fcore.ir.parser``: printed jaxprs read back to equal values.

The central property is ``parse_jaxpr(str(j)) == j`` (and the text printed again is
identical), checked on jaxprs staged from the lax primitives, on hand-written text
covering every literal form, dtype and parameter kind, on nested jaxprs, on random
elementwise programs made with the builder (hypothesis), and on a 10⁵-equation chain.
Errors must name the line, the column and what was expected.
"""

from __future__ import annotations

import enum
import math
from pathlib import Path
import typing
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
from fcore import lax
from fcore.errors import JaxprParseError, JaxprTypeError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.builder import JaxprBuilder
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, Literal, Var
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.parser import parse_jaxpr, register_param_enum, register_param_struct
from fcore.ir.primitive import Primitive
from fcore.ir.typecheck import typecheck
from fcore.lax import elementwise as ew
from fcore.lax.dot import Precision

F32 = dtypes.float32
FCORE_PRECISION = Precision


def sa(shape: tuple[int, ...], dtype: dtypes.DType, weak: bool = False) -> ShapedArray:
    return shaped_array(shape, dtype, weak)


def check_roundtrip(j: Jaxpr | ClosedJaxpr) -> Jaxpr:
    """Print, parse, compare structurally and textually; the parsed jaxpr must typecheck."""
    jaxpr = j.jaxpr if isinstance(j, ClosedJaxpr) else j
    text = str(jaxpr)
    parsed = parse_jaxpr(text)
    assert parsed == jaxpr, text
    assert str(parsed) == text
    assert hash(parsed) == hash(jaxpr)
    typecheck(parsed)
    return parsed


# ---------------------------------------------------------------------------------------
# Test-only primitives: any params, several results, nested jaxprs
# ---------------------------------------------------------------------------------------

anyparams_p = Primitive("test_parser_anyparams")  # accepts any params: exercises their syntax


@anyparams_p.def_abstract_eval
def _anyparams_abstract_eval(x: ShapedArray, **params: ParamValue) -> ShapedArray:
    return x


split_p = Primitive("test_parser_split", multiple_results=True, param_names=())


@split_p.def_abstract_eval
def _split_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    return [x, x.update(dtype=dtypes.int32, weak_type=False)]


nothing_p = Primitive("test_parser_nothing", multiple_results=True, param_names=())
nothing_p.def_abstract_eval(lambda *avals: [])


call_p = Primitive("test_parser_call", multiple_results=True, param_names=("jaxpr",))


@call_p.def_abstract_eval
def _call_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr) -> list[ShapedArray]:
    if list(avals) != jaxpr.in_avals:
        raise TypeError(f"call: arguments {avals} do not match the jaxpr's inputs {jaxpr.in_avals}")
    return jaxpr.out_avals


switch_p = Primitive("test_parser_switch", multiple_results=True, param_names=("branches", "tag"))


@switch_p.def_abstract_eval
def _switch_abstract_eval(
    index: ShapedArray, *avals: ShapedArray, branches: tuple[ClosedJaxpr, ...], tag: ParamValue
) -> list[ShapedArray]:
    for b in branches:
        if list(avals) != b.in_avals:
            raise TypeError("switch: branch inputs differ from the operands")
    return branches[0].out_avals


@register_param_enum
class Mode(enum.Enum):
    FAST = 1
    SLOW = "slow"


class Unregistered(enum.IntEnum):
    ONE = 1


@register_param_struct
@attrs.frozen
class Dims(ParamStruct):
    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    mode: Mode = Mode.FAST
    dtype: Any = None
    label: str = "x"
    inner: Any = None


def anyparams_jaxpr(**params: ParamValue) -> Jaxpr:
    b = JaxprBuilder()
    x = b.invar(sa((2,), F32))
    (y,) = b.eqn(anyparams_p, [x], **params)
    return b.build([y])


# ---------------------------------------------------------------------------------------
# Round trips of staged programs
# ---------------------------------------------------------------------------------------

X = np.linspace(0.1, 0.9, 6, dtype=np.float32).reshape(2, 3)
XI = np.arange(6, dtype=np.int32).reshape(2, 3)
XC = (X + 1j * X).astype(np.complex64)
XB = XI > 2

STAGED: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "sin_add_weak_literal": (lambda x: lax.add(lax.sin(x), 1.0), (X,)),
    "integer_pow_round_convert": (
        lambda x: lax.convert_element_type(lax.round(lax.integer_pow(x, 3), 1), "bfloat16"),
        (X,),
    ),
    "convert_all_dtypes": (
        lambda x: [lax.convert_element_type(x, d) for d in dtypes.SUPPORTED_DTYPES if d.itemsize < 8],
        (X,),
    ),
    "binary_float": (
        lambda x, y: [f(x, y) for f in (lax.add, lax.sub, lax.mul, lax.div, lax.pow, lax.max, lax.atan2)],
        (X, X),
    ),
    "comparisons": (lambda x, y: [lax.eq(x, y), lax.lt(x, 0.5), lax.ge(x, y), lax.ne(x, -1.0)], (X, X)),
    "integer": (
        lambda i: [lax.rem(i, 3), lax.and_(i, 6), lax.xor(i, -1), lax.neg(i), lax.div(i, 2)],
        (XI,),
    ),
    "bool": (lambda b: [lax.not_(b), lax.or_(b, True), lax.select_n(b, b, b)], (XB,)),
    "complex": (lambda c: [lax.real(c), lax.imag(c), lax.abs(c), lax.mul(c, 2j), lax.conj(c)], (XC,)),
    "make_complex": (lambda x: lax.complex(x, x), (X,)),
    "clamp_select": (lambda x: lax.clamp(0.2, x, 0.8), (X,)),
    "unary_chain": (lambda x: lax.tanh(lax.exp(lax.log1p(lax.sqrt(lax.logistic(lax.erf(x)))))), (X,)),
    "structural": (
        lambda x: [
            lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
            lax.reshape(x, (3, 2)),
            lax.transpose(x, (1, 0)),
            lax.concatenate([x, x], 0),
            lax.pad(x, 0.0, ((1, 1, 0), (0, 2, 1))),
            lax.slice(x, (0, 1), (2, 3), (1, 2)),
            lax.rev(x, (0,)),
            lax.squeeze(lax.reshape(x, (1, 2, 3)), (0,)),
        ],
        (X,),
    ),
    "dynamic": (
        lambda x, i: [lax.dynamic_slice(x, (i, i), (1, 2)), lax.dynamic_update_slice(x, x, (i, 0))],
        (X, np.int32(0)),
    ),
    "iota_no_inputs": (lambda x: lax.add(lax.iota(np.int32, 3), 1), (X,)),
    "reductions": (
        lambda x: [
            lax.reduce_sum(x, (0,)),
            lax.reduce_max(x, (0, 1)),
            lax.argmax(x, 1, np.int32),
            lax.cumsum(x, 1, reverse=True),
            lax.cumlogsumexp(x, 0),
        ],
        (X,),
    ),
    "dot_general_with_enum_params": (
        lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision="highest"),
        (X, X.T),
    ),
    "closed_over_const": (lambda x: lax.add(x, np.ones((2, 3), np.float32)), (X,)),
    "literal_output": (lambda x: (x, 2.5), (X,)),
}


@pytest.mark.parametrize("name", sorted(STAGED))
def test_roundtrip_staged(name: str) -> None:
    fun, args = STAGED[name]
    closed = fcore.make_jaxpr(fun)(*args)
    check_roundtrip(closed)


def test_roundtrip_staged_x64() -> None:
    with fcore.enable_x64():
        x = np.linspace(0, 1, 4)
        closed = fcore.make_jaxpr(
            lambda a: [lax.add(lax.sin(a), 1e-05), lax.convert_element_type(a, np.uint64), lax.mul(lax.complex(a, a), 1 + 2j)]
        )(x)
    parsed = check_roundtrip(closed)
    assert {v.aval.dtype for v in parsed.outvars} == {dtypes.float64, dtypes.uint64, dtypes.complex128}


# ---------------------------------------------------------------------------------------
# Hand-written text: literals, dtypes, shapes, weak types, forms
# ---------------------------------------------------------------------------------------

# The printer's canonical texts for fcore's own primitives are golden files (tests/golden/print_*.jaxpr,
# run by test_passes.test_golden); these use this file's test primitives.
CANONICAL = [
    "{ lambda ; a:f32[]. let b:f32[] c:i32[] = test_parser_split a in (b, c) }",
    "{ lambda ; a:f32[]. let test_parser_nothing a in (a,) }",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_text_roundtrips(text: str) -> None:
    j = parse_jaxpr(text)
    assert str(j) == text
    assert parse_jaxpr(str(j)) == j
    typecheck(j)


def _literal(j: Jaxpr, eqn: int = 0, arg: int = 1) -> Literal:
    lit = j.eqns[eqn].invars[arg]
    assert isinstance(lit, Literal)
    return lit


def _golden_text(name: str) -> str:
    """The jaxpr text of tests/golden/print_NAME.jaxpr."""
    return (Path(__file__).resolve().parent / "golden" / f"print_{name}.jaxpr").read_text().split("\n# expected:")[0].split("\n", 1)[1]


def test_literal_values() -> None:
    def value(name: str) -> Any:
        return _literal(parse_jaxpr(_golden_text(name))).val

    assert value("f64_small_literal") == 1e-05
    assert value("f64_large_literal") == -2.5e30
    assert math.copysign(1.0, float(value("negative_zero"))) == -1.0
    assert value("c64_literal") == np.complex64(1 + 2j)
    c = value("c128_nonfinite")
    assert np.isneginf(c.real) and np.isnan(c.imag)
    assert value("i64_min") == np.iinfo(np.int64).min
    assert value("u64_max") == np.iinfo(np.uint64).max
    assert value("bool_literals") == np.True_
    outs = parse_jaxpr(_golden_text("infinities_and_nan")).outvars
    assert isinstance(outs[1], Literal) and float(outs[1].val) == math.inf
    assert isinstance(outs[2], Literal) and math.isnan(float(outs[2].val))
    weak = _literal(parse_jaxpr(_golden_text("weak_types")))
    assert weak.aval == sa((), F32, True) and weak.val.dtype == F32


def test_all_dtypes_as_binders() -> None:
    names = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bf16", "f16", "f32", "f64", "c64", "c128",
             "i1", "i2", "i4", "u1", "u2", "u4", "f4_e2m1fn", "f6_e2m3fn", "f6_e3m2fn", "f8_e3m4", "f8_e4m3",
             "f8_e4m3b11fnuz", "f8_e4m3fn", "f8_e4m3fnuz", "f8_e5m2", "f8_e5m2fnuz", "f8_e8m0fnu"]
    binders = " ".join(f"v{i}:{t}[2]" for i, t in enumerate(names))
    j = parse_jaxpr(f"{{ lambda ; {binders}. let in (v0,) }}")
    assert [v.aval.dtype for v in j.invars] == list(dtypes.SUPPORTED_DTYPES)
    check_roundtrip(j)


def test_one_line_and_multi_line_forms_parse_to_the_same_jaxpr() -> None:
    one = "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = add b 1.0:f32[]{weak} in (c,) }"
    multi = "{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = add b 1.0:f32[]{weak}\n  in (c,) }"
    assert parse_jaxpr(one) == parse_jaxpr(multi)
    # Whitespace is free, except that a line break ends an equation.
    loose = "\n\n  {lambda;a:f32[3].let\n b:f32[3]=sin a\n\n c:f32[3]=add b 1.0:f32[]{weak};\nin(c,)}  \n"
    assert parse_jaxpr(loose) == parse_jaxpr(one)


def test_keyword_like_variable_names() -> None:
    """``in``, ``inf``, ``nan``, ``let`` and ``lambda`` are valid variable names (the printer makes them)."""
    text = (
        "{ lambda lambda:f32[]; in:f32[] let:f32[]. let\n"
        "    inf:f32[] = add in inf:f32[]\n"
        "    nan:f32[] = mul inf nan:f32[]\n"
        "    ina:f32[] = add nan in\n"
        "    infa:f32[] = sub let lambda\n"
        "  in (in, inf, nan, inf:f32[], infa) }"
    )
    j = parse_jaxpr(text)
    lam, x, let = j.constvars + j.invars
    e0, e1, e2, e3 = j.eqns
    assert e0.invars[0] is x and isinstance(e0.invars[1], Literal)
    assert e1.invars[0] is e0.outvars[0] and isinstance(e1.invars[1], Literal)
    assert e2.invars == (e1.outvars[0], x)
    assert e3.invars == (let, lam)
    assert j.outvars[:3] == (x, e0.outvars[0], e1.outvars[0]) and isinstance(j.outvars[3], Literal)
    one_line = "{ lambda ; in:f32[]. let inf:f32[] = add in inf:f32[]; nan:f32[] = sin inf in (in, nan) }"
    j1 = parse_jaxpr(one_line)
    assert j1.outvars == (j1.invars[0], j1.eqns[1].outvars[0])
    typecheck(j1)


def test_printed_names_in_and_inf_roundtrip() -> None:
    """Variables 221 (``in``), 5751 (``inf``) and 8801 (``nan``) next to literals and line ends."""
    b = JaxprBuilder()
    x = b.invar(sa((), F32))
    lits = [b.literal(v, F32) for v in (math.inf, -math.inf, math.nan, 1.0)]
    cur = x
    for k in range(9000):
        (cur,) = b.eqn(ew.add_p, [cur, lits[k % 4]] if k % 3 else [lits[k % 4], cur])
    j = b.build([cur, x, lits[0]])
    text = str(j)
    assert "\n    inf:f32[] = " in text and "\n    nan:f32[] = " in text and "\n    in:f32[] = " in text
    check_roundtrip(j)


def test_complex_literal_negative_zero_imaginary_part() -> None:
    b = JaxprBuilder()
    b.invar(sa((), F32))
    check_roundtrip(b.build([b.literal(complex(1.0, -0.0), dtypes.complex64)]))


# ---------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------

PARAMS: list[dict[str, ParamValue]] = [
    {"i": 3, "neg": -12, "big": 2**70},
    {"f": 1.5, "tiny": 1e-05, "exp": -2.5e30, "pinf": math.inf, "ninf": -math.inf, "negzero": -0.0},
    {"t": True, "f": False, "n": None},
    {"c": 1 + 2j, "imag": 2j, "nimag": -1.5j, "inf": complex(1e-05, -math.inf), "infj": complex(0, math.inf)},
    {"name": "sin", "under": "_x_1", "weird": "a b", "digits": "3", "empty": "", "quote": "it's \"q\"\n"},
    {"like_bool": "True", "like_none": "None", "like_dtype": "float32", "like_enum": "Mode.FAST", "like_inf": "inf"},
    {"d": np.dtype(np.float32), "bf": dtypes.bfloat16, "b": dtypes.bool_, "c": dtypes.complex128},
    {"one": (0,), "empty": (), "nested": ((1, 1, 0),), "pair": ((1, 2), (3, 4)), "mixed": (1, "a", None, 2.0)},
    {"e": Mode.FAST, "s": Mode.SLOW, "tup": (Mode.FAST, Mode.SLOW), "ext": Precision.HIGHEST, "ie": Unregistered.ONE},
    {"dims": Dims((0,), (1, 2))},
    {"dims": Dims((), (3,), Mode.SLOW, dtypes.bfloat16, "lbl 'q'", Dims((1,), (2,), dtype=F32))},
    {f"long_parameter_name_{k}": (k, k + 1, k + 2) for k in range(8)},
]


@pytest.mark.parametrize("params", PARAMS, ids=[",".join(p)[:40] for p in PARAMS])
def test_params_roundtrip(params: dict[str, ParamValue]) -> None:
    parsed = check_roundtrip(anyparams_jaxpr(**params))
    got = parsed.eqns[0].params
    for key, value in params.items():
        assert type(got[key]) is type(value), key  # e.g. a str never comes back as a dtype or bool
        assert got[key] == value


def test_bare_word_params_are_strings_and_numpy_names_dtypes() -> None:
    text = "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[d=float32 s=f32 w=hello] a in (b,) }"
    params = parse_jaxpr(text).eqns[0].params
    assert params["d"] == dtypes.float32 and isinstance(params["d"], np.dtype)
    assert params["s"] == "f32" and params["w"] == "hello"


def test_unregistered_enum_names_resolve_to_fcore_classes_or_fail_when_ambiguous() -> None:
    class Precision(enum.Enum):  # same name as fcore.lax.dot.Precision (and jax.lax.Precision)
        HIGHEST = 0

    text = str(anyparams_jaxpr(p=Precision.HIGHEST))
    assert parse_jaxpr(text).eqns[0].params["p"] is FCORE_PRECISION.HIGHEST

    class Twin(enum.Enum):
        A = 0

    first = Twin

    class Twin(enum.Enum):  # type: ignore[no-redef]
        A = 0

    with pytest.raises(JaxprParseError, match="ambiguous enum class name 'Twin': 2 classes"):
        parse_jaxpr(str(anyparams_jaxpr(t=first.A)))
    register_param_enum(first)
    assert parse_jaxpr(str(anyparams_jaxpr(t=first.A))).eqns[0].params["t"] is first.A
    with pytest.raises(ValueError, match="another class named 'Twin' is already registered"):
        register_param_enum(Twin)


def test_param_struct_reprs() -> None:
    text = (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams["
        "d=Dims(lhs=(0,), rhs=(), mode=<Mode.SLOW: 'slow'>, dtype=dtype('int8'), inner=Dims((1,), (2,)))"
        "] a in (b,) }"
    )
    d = parse_jaxpr(text).eqns[0].params["d"]
    assert d == Dims((0,), (), Mode.SLOW, dtypes.int8, inner=Dims((1,), (2,)))


# ---------------------------------------------------------------------------------------
# Nested jaxprs
# ---------------------------------------------------------------------------------------


def _inner(fn: Primitive = ew.sin_p, shape: tuple[int, ...] = (3,)) -> ClosedJaxpr:
    b = JaxprBuilder()
    x = b.invar(sa(shape, F32))
    (y,) = b.eqn(fn, [x])
    (z,) = b.eqn(ew.mul_p, [y, b.literal(2.0, F32)])
    return b.build_closed([z, x])


def _call(inner: ClosedJaxpr, n_args: int = 1) -> Jaxpr:
    b = JaxprBuilder()
    xs = [b.invar(a) for a in inner.in_avals[:n_args]]
    (pre,) = b.eqn(ew.neg_p, [xs[0]])
    outs = b.eqn(call_p, [pre, *xs[1:]], jaxpr=inner)
    (post,) = b.eqn(ew.add_p, [outs[0], xs[0]])
    return b.build([post, outs[1]])


def test_nested_jaxpr_param() -> None:
    j = _call(_inner())
    parsed = check_roundtrip(j)
    nested = parsed.eqns[1].params["jaxpr"]
    assert isinstance(nested, ClosedJaxpr) and nested.consts == ()
    # As in JAX, names continue into the nested jaxpr (after the equation's results).
    assert "jaxpr={ lambda ; e:f32[3]. let" in str(j)


def test_nested_jaxpr_one_line() -> None:
    b = JaxprBuilder()
    x = b.invar(sa((), F32))
    inner = JaxprBuilder()
    y = inner.invar(sa((), F32))
    (outs,) = b.eqn(call_p, [x], jaxpr=inner.build_closed([y]))
    j = b.build([outs])
    assert "[jaxpr={ lambda ; c:f32[]. let  in (c,) }] a\n" in str(j)  # the nested jaxpr on one line
    check_roundtrip(j)
    # Nested jaxprs have scopes of their own: reusing the outer names there is fine.
    one_line = "{ lambda ; a:f32[]. let b:f32[] = test_parser_call[jaxpr={ lambda ; a:f32[]. let in (a,) }] a in (b,) }"
    assert parse_jaxpr(one_line) == j


def test_tuple_of_nested_jaxprs() -> None:
    branches = (_inner(ew.sin_p), _inner(ew.cos_p), _inner(ew.exp_p))
    b = JaxprBuilder()
    i = b.invar(sa((), dtypes.int32))
    x = b.invar(sa((3,), F32))
    outs = b.eqn(switch_p, [i, x], branches=branches, tag=("a", (1, 2)))
    j = b.build(outs)
    parsed = check_roundtrip(j)
    got = parsed.eqns[0].params["branches"]
    assert isinstance(got, tuple) and len(got) == 3 and all(isinstance(g, ClosedJaxpr) for g in got)
    one = JaxprBuilder()
    i1, x1 = one.invar(i.aval), one.invar(x.aval)
    check_roundtrip(one.build(one.eqn(switch_p, [i1, x1], branches=branches[:1], tag=None)))


def test_deeply_nested_jaxprs() -> None:
    closed = _inner()
    for _ in range(30):
        closed = ClosedJaxpr(_call(closed), ())
    check_roundtrip(closed)


def test_nested_jaxpr_with_constvars_parses_as_open_jaxpr() -> None:
    text = (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = test_parser_anyparams[j={ lambda c:f32[3]; d:f32[3]. let e:f32[3] = add c d in (e,) }] a\n"
        "  in (b,) }"
    )
    j = parse_jaxpr(text)
    nested = j.eqns[0].params["j"]
    assert isinstance(nested, Jaxpr) and len(nested.constvars) == 1
    assert str(j) == text


# ---------------------------------------------------------------------------------------
# Random elementwise programs (hypothesis)
# ---------------------------------------------------------------------------------------

_KIND_OPS: dict[str, tuple[list[Primitive], list[Primitive]]] = {
    "float": (
        [ew.sin_p, ew.cos_p, ew.exp_p, ew.neg_p, ew.tanh_p, ew.sqrt_p, ew.floor_p, ew.logistic_p, ew.is_finite_p],
        [ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.max_p, ew.min_p, ew.atan2_p, ew.pow_p, ew.lt_p, ew.eq_p],
    ),
    "complex": ([ew.sin_p, ew.exp_p, ew.neg_p, ew.sqrt_p, ew.real_p, ew.abs_p], [ew.add_p, ew.mul_p, ew.sub_p, ew.div_p, ew.ne_p]),
    "int": ([ew.neg_p, ew.sign_p, ew.not_p], [ew.add_p, ew.sub_p, ew.mul_p, ew.max_p, ew.and_p, ew.xor_p, ew.rem_p, ew.ge_p]),
    "bool": ([ew.not_p], [ew.and_p, ew.or_p, ew.xor_p, ew.max_p, ew.eq_p]),
}


def _kind(dt: dtypes.DType) -> str:
    if dtypes.is_bool(dt):
        return "bool"
    if dtypes.is_integer(dt):
        return "int"
    return "complex" if dtypes.is_complex(dt) else "float"


def _scalar_strategy(dt: dtypes.DType) -> st.SearchStrategy[Any]:
    if dtypes.is_bool(dt):
        return st.booleans()
    if dtypes.is_integer(dt):
        info = np.iinfo(dt)
        return st.integers(int(info.min), int(info.max))
    width: typing.Literal[16, 32, 64] = 64 if dt in (dtypes.float64, dtypes.complex128) else 32 if dt in (dtypes.float32, dtypes.complex64) else 16
    real = st.floats(allow_nan=False, width=width) | st.just(math.nan)  # only the canonical NaN prints faithfully
    if dtypes.is_complex(dt):
        # ``+ 0.0`` turns an imaginary -0.0 into 0.0: see test_complex_literal_negative_zero_imaginary_part.
        return st.builds(complex, real, real.map(lambda v: v + 0.0))
    return real


_CORE_DTYPES = [d for d in dtypes.SUPPORTED_DTYPES if not dtypes.is_narrow(d)]


@st.composite
def elementwise_jaxprs(draw: st.DrawFn) -> Jaxpr:
    """A random DAG of elementwise ops and conversions over one shape, several dtypes."""
    shape = draw(st.sampled_from([(), (3,), (2, 3), (0,), (1, 1, 2)]))
    b = JaxprBuilder()
    atoms: list[Var] = []
    for _ in range(draw(st.integers(1, 3))):
        dt = draw(st.sampled_from(_CORE_DTYPES))
        atoms.append(b.invar(sa(draw(st.sampled_from([shape, ()])), dt, draw(st.booleans()))))
    for _ in range(draw(st.integers(0, 12))):
        x = draw(st.sampled_from(atoms))
        dt = x.aval.dtype
        unary, binary = _KIND_OPS[_kind(dt)]
        choice = draw(st.sampled_from(["unary", "binary", "convert"]))
        if choice == "convert":
            new = draw(st.sampled_from(_CORE_DTYPES))
            outs = b.eqn(ew.convert_element_type_p, [x], new_dtype=new, weak_type=draw(st.booleans()))
        elif choice == "unary":
            prim = draw(st.sampled_from(unary))
            outs = b.eqn(prim, [x])
        else:
            prim = draw(st.sampled_from(binary))
            same = [a for a in atoms if a.aval.dtype == dt and a.aval.shape in (x.aval.shape, ())]
            y: Atom
            if draw(st.booleans()) or not same:
                y = b.literal(draw(_scalar_strategy(dt)), dt, draw(st.booleans()))
            else:
                y = draw(st.sampled_from(same))
            args = [x, y] if draw(st.booleans()) else [y, x]
            if all(isinstance(a, Literal) for a in args):
                continue
            outs = b.eqn(prim, args)
        atoms.extend(outs)
    n_out = draw(st.integers(0, 3))
    outs_: list[Atom] = [draw(st.sampled_from(atoms)) for _ in range(n_out)]
    if draw(st.booleans()):
        dt = draw(st.sampled_from(_CORE_DTYPES))
        outs_.append(b.literal(draw(_scalar_strategy(dt)), dt, draw(st.booleans())))
    return b.build(outs_)


@settings(max_examples=300, deadline=None)
@given(elementwise_jaxprs())
def test_random_elementwise_jaxprs_roundtrip(j: Jaxpr) -> None:
    typecheck(j)
    check_roundtrip(j)


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

ERRORS: list[tuple[str, str]] = [
    ("{ lambda ; a:f32[]. let\n    b = sin a\n  in (b,) }", "line 2, column 7: expected ':' after variable name, got '='"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sin q\n  in (b,) }", "line 2, column 19: variable 'q' used before it is bound"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a in (b, c) }", "line 1, column 48: variable 'c' used before it is bound"),
    ("{ lambda ; a:f32[]. let b:f32[] = frobnicate a in (b,) }", "line 1, column 35: unknown primitive 'frobnicate'"),
    ("{ lambda ; a:f33[]. let in (a,) }", "line 1, column 13: unknown short dtype name 'f33'"),
    ("{ lambda ; a:f32. let in (a,) }", "line 1, column 14: expected a type such as 'f32[3]' after ':', got 'f32'"),
    ("{ lambda ; a:f32[] a:f32[]. let in (a,) }", "line 1, column 20: variable 'a' is bound twice"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a c:f32[] = cos b in (c,) }", "line 1, column 41: 'c' is followed by a type"),
    ("{ lambda ; a:i32[]. let b:i32[] = add a 1.5:i32[] in (b,) }", "line 1, column 41: literal 1.5 is not a value of dtype int32"),
    ("{ lambda ; a:i8[]. let b:i8[] = add a 300:i8[] in (b,) }", "line 1, column 39: literal 300 does not fit dtype int8"),
    ("{ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[2] in (b,) }", "line 1, column 44: literals must be scalars"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,)", "line 1, column 48: expected '}' to close the jaxpr, got end of input"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) } }", "line 1, column 51: expected end of input after the jaxpr"),
    ("", "line 1, column 1: expected '{' to open a jaxpr, got end of input"),
    ("lambda", "line 1, column 1: expected '{' to open a jaxpr, got 'lambda'"),
    ("{ lambda ; a:f32[]. b:f32[] = sin a in (b,) }", "line 1, column 21: expected 'let' after the input variables, got 'b'"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a in (b c) }", "line 1, column 47: expected ',' or ')' in the output list, got 'c'"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin ?c in (b,) }", "line 1, column 39: variable '?c' used before it is bound"),
    (
        "{ lambda ; a:f32[2]. let\n    b:f32[2] = test_parser_anyparams[x=1 y=] a\n  in (b,) }",
        "line 2, column 44: expected a parameter value, got ']'",
    ),
    (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[m=Nope.X] a in (b,) }",
        "line 1, column 61: unknown enum class 'Nope'",
    ),
    (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[m=Mode.MEDIUM] a in (b,) }",
        "line 1, column 61: enum Mode has no member 'MEDIUM'",
    ),
    (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[m=Nope(x=1)] a in (b,) }",
        "line 1, column 61: unknown ParamStruct class 'Nope'",
    ),
    (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[m=Dims(lhs=1)] a in (b,) }",
        "line 1, column 61: cannot build Dims from the text",
    ),
    (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[x=1 x=2] a in (b,) }",
        "line 1, column 63: parameter 'x' is given twice",
    ),
    (
        "{ lambda ; a:f32[2]. let b:f32[2] = test_parser_anyparams[x=(1, 2] a in (b,) }",
        "line 1, column 66: expected a parameter value, got ']'",
    ),
    (
        # Line and column are those of the whole text, also inside a nested jaxpr.
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = test_parser_call[\n"
        "      jaxpr={ lambda ; a:f32[3]. let\n"
        "          b:f32[3] = sin z\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }",
        "line 4, column 26: variable 'z' used before it is bound",
    ),
    (
        "{ lambda ; a:f32[3]. let\n    b:f32[3] = test_parser_call[jaxpr={ lambda ; x:f32[3]. let in (a,) }] a\n  in (b,) }",
        "line 2, column 68: variable 'a' used before it is bound",
    ),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a $ in (b,) }", "line 1, column 41: expected a variable or a literal, got '$'"),
    ("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }\n}", "line 2, column 1: expected end of input"),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(JaxprParseError) as info:
        parse_jaxpr(text)
    assert str(info.value).startswith(message), str(info.value)


def test_parse_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_jaxpr("{")


def test_parsed_text_may_be_ill_typed_for_typecheck_to_catch() -> None:
    """The parser reads types, it does not re-derive them: typecheck still decides."""
    j = parse_jaxpr("{ lambda ; a:f32[3]. let b:i32[3] = sin a in (b,) }")
    with pytest.raises(JaxprTypeError, match="equation 0"):
        typecheck(j)


# ---------------------------------------------------------------------------------------
# Scale
# ---------------------------------------------------------------------------------------


def test_hundred_thousand_equation_chain() -> None:
    b = JaxprBuilder()
    x = b.invar(sa((3,), F32))
    one = b.literal(1.0, F32, weak_type=True)
    cur = x
    for k in range(100_000):
        (cur,) = b.eqn(ew.sin_p, [cur]) if k % 10 else b.eqn(ew.add_p, [cur, one])
    j = b.build([cur])
    text = str(j)
    parsed = parse_jaxpr(text)  # no RecursionError: the equation list is read by a loop
    assert len(parsed.eqns) == 100_000
    assert parsed == j
    assert str(parsed) == text

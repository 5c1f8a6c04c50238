"""Elementwise ``fcore.numpy`` functions, differentially against ``jax.numpy``.

Every case compares values, dtypes and weak types eagerly, and the output avals of the staged
jaxprs (``fcore.make_jaxpr`` vs ``jax.make_jaxpr``), over the corpus dtypes and mixes of
arrays with Python scalars; a few run in 64-bit mode, and strict promotion is checked to raise.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcore
import fcore.numpy as fnp
from fcore import lax
from fcore.errors import TypePromotionError
from test_numpy_common import BF16, DTYPES, DTYPES_C, SCALARS, check, check_or_raises, check_raises, modes, sample

UNARY_INEXACT = [
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "cbrt", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "deg2rad", "rad2deg", "sinc", "reciprocal",
]
UNARY_OTHER = [
    "negative", "positive", "sign", "floor", "ceil", "trunc", "rint", "abs", "absolute", "fabs",
    "square", "isfinite", "isinf", "isnan", "real", "imag", "conj", "conjugate", "logical_not",
    "invert", "signbit", "nan_to_num", "round",
]
# Domain or dtype restrictions where JAX raises (fcore must raise too).
_UNARY_REJECTS: dict[str, Callable[[np.dtype[Any]], bool]] = {
    "negative": lambda d: d == np.bool_,
    "sign": lambda d: d == np.bool_,
    "invert": lambda d: d.kind in "fc",
    "fabs": lambda d: d.kind == "c",
    "cbrt": lambda d: d.kind == "c",
    "signbit": lambda d: d.kind == "c",
    "round": lambda d: d == np.bool_,
}


def _fn(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return getattr(fnp, name), getattr(jnp, name)


def _unary_case(name: str, x: Any) -> None:
    f, g = _fn(name)
    dt = np.asarray(x).dtype if not isinstance(x, (bool, int, float, complex)) else None
    reject = _UNARY_REJECTS.get(name)
    if dt is not None and reject is not None and reject(dt):
        check_raises(f, g, x)
        return
    check_or_raises(f, g, x)


@pytest.mark.parametrize("dtype", DTYPES_C, ids=str)
@pytest.mark.parametrize("name", UNARY_INEXACT + UNARY_OTHER)
def test_unary(name: str, dtype: np.dtype[Any]) -> None:
    with modes():
        _unary_case(name, sample(dtype, (2, 3), nonzero=name == "reciprocal"))


@pytest.mark.parametrize("scalar", [*SCALARS, 1j], ids=repr)
@pytest.mark.parametrize("name", UNARY_INEXACT + UNARY_OTHER)
def test_unary_python_scalar(name: str, scalar: bool | int | float | complex) -> None:
    with modes():
        check_or_raises(*_fn(name), scalar)


def test_sin_of_int_is_float() -> None:
    with modes():
        out = fnp.sin(np.arange(3, dtype=np.int32))
        assert out.dtype == np.float32 and not out.weak_type
        w = fnp.sin(2)
        assert w.dtype == np.float32 and w.weak_type


BINARY = [
    "add", "subtract", "multiply", "true_divide", "divide", "floor_divide", "remainder", "mod", "fmod",
    "power", "float_power", "maximum", "minimum", "arctan2", "hypot", "logaddexp", "nextafter", "copysign",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "heaviside",
]
_INTEGRAL_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
_REAL_ONLY = {"arctan2", "hypot", "nextafter", "copysign", "heaviside", "floor_divide", "remainder", "mod", "fmod"}
_NEEDS_NONZERO_DIVISOR = {"floor_divide", "remainder", "mod", "fmod", "true_divide", "divide"}
# The full dtype x dtype matrix for one function of each promotion path (arithmetic, true
# division, comparison, power); the others get matching dtypes plus a few mixes.
FULL_MATRIX = ["add", "true_divide", "less", "power"]
_MIX_SPECS: list[tuple[Any, Any]] = [
    (np.int8, np.uint8), (np.int16, np.float16), (np.uint8, np.float32), (np.bool_, np.int8),
    (np.float16, BF16), (np.int32, np.float32), (np.bool_, np.float32),
]
MIXES = [(np.dtype(a), np.dtype(b)) for a, b in _MIX_SPECS]


def _binary_ok(name: str, a: np.dtype[Any], b: np.dtype[Any]) -> bool:
    kinds = {a.kind, b.kind}
    if name in _INTEGRAL_ONLY and kinds & set("fcV"):
        return False
    if name in _INTEGRAL_ONLY and kinds & {"V"}:
        return False
    return True


def _binary_case(name: str, x: Any, y: Any) -> None:
    with modes():
        check_or_raises(*_fn(name), x, y)


def _pairs() -> list[tuple[str, np.dtype[Any], np.dtype[Any]]]:
    out = []
    for name in BINARY:
        pairs = itertools.product(DTYPES, DTYPES) if name in FULL_MATRIX else [*((d, d) for d in DTYPES), *MIXES]
        for a, b in pairs:
            out.append((name, a, b))
    return out


def _is_integral(d: np.dtype[Any]) -> bool:
    return d.kind in "biu"


@pytest.mark.parametrize(("name", "a", "b"), _pairs(), ids=lambda v: str(v))
def test_binary(name: str, a: np.dtype[Any], b: np.dtype[Any]) -> None:
    x = sample(a, (2, 3), seed=1)
    y = sample(b, (2, 3), seed=2, nonzero=name in _NEEDS_NONZERO_DIVISOR)
    if name in _INTEGRAL_ONLY and not (_is_integral(a) and _is_integral(b)):
        with modes():
            check_raises(*_fn(name), x, y)
        return
    if name in ("power",) and _is_integral(a) and _is_integral(b):
        y = np.abs(y.astype(np.int64)).astype(b) if b != np.bool_ else y  # negative int powers are implementation-defined
    _binary_case(name, x, y)


# Python-scalar mixes for the functions whose promotion paths differ.
SCALAR_MIX = [
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "fmod", "power", "maximum",
    "arctan2", "logaddexp", "copysign", "bitwise_and", "logical_and", "equal", "less", "heaviside",
]


def _scalar_cases() -> list[tuple[str, np.dtype[Any], bool | int | float]]:
    return [(n, d, s) for n in SCALAR_MIX for d in DTYPES for s in SCALARS]


@pytest.mark.parametrize(("name", "dtype", "scalar"), _scalar_cases(), ids=lambda v: str(v))
def test_binary_with_python_scalar(name: str, dtype: np.dtype[Any], scalar: bool | int | float) -> None:
    x = sample(dtype, (3,), seed=3, nonzero=True)
    if name in _INTEGRAL_ONLY and not (_is_integral(dtype) and isinstance(scalar, int)):
        with modes():
            check_raises(*_fn(name), x, scalar)
        return
    if name in _NEEDS_NONZERO_DIVISOR and scalar is False:
        return
    _binary_case(name, x, scalar)
    if name == "power" and _is_integral(dtype) and isinstance(scalar, (int, float)) and not isinstance(scalar, bool) and scalar < 0:
        return
    _binary_case(name, scalar, x)


@pytest.mark.parametrize("name", ["add", "multiply", "true_divide", "less", "maximum", "power", "floor_divide"])
def test_binary_two_python_scalars(name: str) -> None:
    for s, t in itertools.product((True, 3, -1.5), (2, 0.5)):
        _binary_case(name, s, t)


@pytest.mark.parametrize("name", ["add", "multiply", "true_divide", "equal", "less", "maximum", "sin", "power", "floor_divide"])
def test_x64(name: str) -> None:
    f, g = _fn(name)
    with modes(x64=True):
        for dt in (np.int64, np.float64, np.uint32, np.int32, np.float32, np.uint64):
            x = sample(np.dtype(dt), (4,), seed=5, nonzero=True)
            if name == "sin":
                check(f, g, x)
                continue
            for other in (2, 1.5, np.int32(3), np.ones(4, np.int64), np.ones(4, np.float32)):
                check(f, g, x, other)
        check(f, g, *((3,) if name == "sin" else (3, 2)))


@pytest.mark.parametrize("name", ["add", "multiply", "less", "maximum", "true_divide"])
def test_strict_promotion(name: str) -> None:
    f, g = _fn(name)
    with modes(mode="strict"):
        for a, b in [(np.int8, np.int16), (np.int32, np.float32), (np.float16, np.float32), (np.uint8, np.int8)]:
            x, y = np.ones(3, a), np.ones(3, b)
            with pytest.raises(TypePromotionError):
                f(x, y)
            with pytest.raises(Exception):
                g(x, y)
        # Python scalars (weak types) still adapt to the array's dtype.
        for dt in (np.int8, np.float16, np.float32):
            check(f, g, np.ones(3, dt), 2)
        check(f, g, np.ones(3, np.float16), 2.5)


def test_where() -> None:
    with modes():
        c = sample(np.dtype(np.bool_), (2, 3), seed=4)
        for a, b in itertools.product(DTYPES, DTYPES):
            check(fnp.where, jnp.where, c, sample(a, (2, 3), seed=1), sample(b, (3,), seed=2))
        check(fnp.where, jnp.where, c, 1, 2.5)
        check(fnp.where, jnp.where, True, 1, 2.5)
        check(fnp.where, jnp.where, np.array([0, 2, 1]), np.int8(1), np.ones((2, 3), np.uint8))
        check(fnp.where, jnp.where, c[:, :1], 0.5, sample(np.dtype(np.float16), (2, 3)))
        check(fnp.where, jnp.where, c, staged=False)  # one argument: nonzero
        check(lambda v: fnp.where(v, size=4, fill_value=-1), lambda v: jnp.where(v, size=4, fill_value=-1), c)
    where: Any = fnp.where  # the two-argument call is wrong on purpose
    with pytest.raises(TypeError):
        where(c, 1.0)
    with pytest.raises(fcore.ConcretizationError):
        fcore.jit(fnp.where)(c)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_clip(dtype: np.dtype[Any]) -> None:
    x = sample(dtype, (2, 3), seed=7)
    with modes():
        if dtype == np.bool_:
            return
        check(fnp.clip, jnp.clip, x, -1, 2)
        check(fnp.clip, jnp.clip, x, 0.5, None)
        check(fnp.clip, jnp.clip, x, None, np.int8(1))
        check(lambda v: fnp.clip(v, max=1.5), lambda v: jnp.clip(v, max=1.5), x)
        assert fnp.asarray(x).clip(0, 1).dtype == jnp.asarray(x).clip(0, 1).dtype


def test_divmod_and_misc() -> None:
    with modes():
        x, y = sample(np.dtype(np.float32), (5,), seed=1), sample(np.dtype(np.float32), (5,), seed=2, nonzero=True)
        check(fnp.divmod, jnp.divmod, x, y)
        i, j = sample(np.dtype(np.int16), (5,), seed=1), sample(np.dtype(np.int16), (5,), seed=2, nonzero=True)
        check(fnp.divmod, jnp.divmod, i, j)
        for decimals, v in [(1, x * 100), (-1, x * 100), (2, sample(np.dtype(np.float16), (4,)) * 10),
                            (1, sample(np.dtype(np.complex64), (4,)))]:
            check(lambda u, d=decimals: fnp.round(u, d), lambda u, d=decimals: jnp.round(u, d), v)
        check(lambda u: fnp.around(u, -1), lambda u: jnp.around(u, -1), x * 100)
        check(fnp.nan_to_num, jnp.nan_to_num, np.array([np.nan, np.inf, -np.inf, 1.0], np.float32))
        check(lambda v: fnp.nan_to_num(v, nan=1.0, posinf=2.0), lambda v: jnp.nan_to_num(v, nan=1.0, posinf=2.0),
              np.array([np.nan, np.inf, -np.inf, 1.0], np.float16))
        check(fnp.isposinf, jnp.isposinf, np.array([np.inf, -np.inf, 1.0], np.float32))
        check(fnp.isneginf, jnp.isneginf, np.array([np.inf, -np.inf, 1.0], np.float32))
        check(fnp.signbit, jnp.signbit, np.array([-0.0, 0.0, -1.0, 2.0], np.float32))


def test_power_uses_integer_pow_for_concrete_exponents() -> None:
    with modes():
        for exponent in (2, -1, np.int32(3), 0):
            jaxpr = fcore.make_jaxpr(lambda x, e=exponent: fnp.power(x, e))(np.ones(3, np.float32))
            assert [e.primitive.name for e in jaxpr.eqns] == ["integer_pow"]
        jaxpr = fcore.make_jaxpr(lambda x: x**2.5)(np.ones(3, np.float32))
        assert [e.primitive.name for e in jaxpr.eqns] == ["pow"]
        check(lambda x: fnp.asarray(x) ** 3, lambda x: jnp.asarray(x) ** 3, sample(np.dtype(np.int8), (4,)))
        check(lambda x: 2.0 ** fnp.asarray(x), lambda x: 2.0 ** jnp.asarray(x), np.arange(4, dtype=np.int32))
        check(fnp.power, jnp.power, np.arange(1, 5, dtype=np.float32), np.arange(4, dtype=np.int32))
        check(fnp.power, jnp.power, np.arange(1, 5, dtype=np.int32), np.arange(4, dtype=np.int8))
        with pytest.raises(TypeError):
            fnp.power(np.arange(3, dtype=np.int32), -1)


def test_operators_dispatch_through_the_table() -> None:
    with modes():
        x = sample(np.dtype(np.float32), (2, 3), seed=1)
        i = sample(np.dtype(np.int32), (2, 3), seed=2, nonzero=True)
        a, ai = fnp.asarray(x), fnp.asarray(i)
        ja, jai = jnp.asarray(x), jnp.asarray(i)
        cases: list[tuple[Any, Any]] = [
            (a + 1, ja + 1), (1 - a, 1 - ja), (a * 0.5, ja * 0.5), (a / 2, ja / 2), (2 / a, 2 / ja),
            (ai // 2, jai // 2), (7 // ai, 7 // jai), (ai % 3, jai % 3), (a % 0.7, ja % 0.7),
            (a**2, ja**2), (2**ai, 2**jai), (-a, -ja), (abs(a), abs(ja)), (~ai, ~jai),
            (ai & 3, jai & 3), (ai | 3, jai | 3), (ai ^ 3, jai ^ 3), (3 & ai, 3 & jai),
            (ai << 2, jai << 2), (ai >> 1, jai >> 1), (1 << (ai & 7), 1 << (jai & 7)), (-64 >> (ai & 7), -64 >> (jai & 7)),
            (a < 0, ja < 0), (a <= 0, ja <= 0), (a > 0, ja > 0), (a >= 0, ja >= 0),
            (a == a, ja == ja), (a != 1, ja != 1), (+a, +ja), (a @ a.T, ja @ ja.T), (x @ a.T, x @ ja.T),
            (a.real, ja.real), (a.imag, ja.imag), (a.conj(), ja.conj()), (a.astype(np.int8), ja.astype(np.int8)),
            (a.astype(fnp.bfloat16), ja.astype(jnp.bfloat16)), (a.round(1), ja.round(1)),
        ]
        for k, (got, want) in enumerate(cases):
            from test_numpy_common import assert_same

            assert_same(got, want, f"case {k}")
        untyped: Any = a
        assert (untyped == "text") is False
        assert (untyped != None) is True  # noqa: E711
        with pytest.raises(TypeError):
            a + "text"  # noqa: B018


def test_multiply_hot_path_stages_one_equation() -> None:
    """``x * 0.9`` on a traced float32: no conversion or broadcast, just ``mul``."""
    with modes():
        for f in (lambda x: x * 0.9, lambda x: 0.9 * x, lambda x: x + 1, lambda x: x * x, lambda x: fnp.sin(x)):
            jaxpr = fcore.make_jaxpr(f)(np.ones((3, 4), np.float32))
            assert len(jaxpr.eqns) == 1, jaxpr
            assert jaxpr.out_avals[0].dtype == np.float32 and not jaxpr.out_avals[0].weak_type


def test_staged_values_match_eager() -> None:
    with modes():
        x = sample(np.dtype(np.float32), (2, 3), seed=1)
        y = sample(np.dtype(np.int8), (3,), seed=2, nonzero=True)
        for name in ("add", "true_divide", "floor_divide", "remainder", "power", "logaddexp", "less"):
            check(*_fn(name), x, y, evaluate_staged=True)


# -- broadcasting properties ------------------------------------------------------------------
@st.composite
def broadcastable_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes NumPy can broadcast together (some dims 1, ranks may differ)."""
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    a, b = [], []
    for d in out:
        a.append(d if draw(st.booleans()) else 1)
        b.append(d if draw(st.booleans()) else 1)
    ka = draw(st.integers(0, len(a)))
    kb = draw(st.integers(0, len(b)))
    return tuple(a[ka:]), tuple(b[kb:])


@settings(max_examples=60, deadline=None)
@given(broadcastable_shapes(), st.sampled_from(["add", "multiply", "maximum", "less", "true_divide", "where"]))
def test_broadcasting_property(shapes: tuple[tuple[int, ...], tuple[int, ...]], name: str) -> None:
    sa, sb = shapes
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    x = rng.normal(size=sa).astype(np.float32)
    y = (rng.normal(size=sb) + 3).astype(np.float32)
    with modes():
        if name == "where":
            got = fnp.where(x > 0, x, y)
            want: np.ndarray[Any, Any] = np.where(x > 0, x, y)
        else:
            got = getattr(fnp, name)(x, y)
            want = getattr(np, name)(x, y)
        assert got.shape == np.broadcast_shapes(sa, sb)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        staged = fcore.make_jaxpr(lambda u, v: getattr(fnp, name)(u, v) if name != "where" else fnp.where(u > 0, u, v))(x, y)
        assert staged.out_avals[0].shape == np.broadcast_shapes(sa, sb)


def test_broadcasting_errors() -> None:
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(2, 3\), \(2, 4\)"):
        fnp.add(np.ones((2, 3)), np.ones((2, 4)))  # one rank: the primitive's TypeError, as jnp.add's (SPEC §4)
    calls: list[Callable[[], Any]] = [lambda: fnp.add(np.ones((2, 3)), np.ones((4,))),
                                      lambda: fnp.ones((2, 3)) * fnp.ones(4),
                                      lambda: fnp.arctan2(fnp.ones((2, 3)), np.ones(4))]
    for f in calls:
        with pytest.raises(ValueError, match=re.escape("Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]")):
            f()  # different ranks: jnp's ValueError in JAX 0.10
    with pytest.raises(ValueError) as want:
        jnp.ones((2, 3)) * jnp.ones(4)
    assert str(want.value) == "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"
    with pytest.raises(TypeError):
        fnp.add([1, 2], 1)  # type: ignore[arg-type]  # jnp also rejects lists


def test_traced_integer_pow_and_jit_values() -> None:
    """Staged graphs evaluate to jax.jit's values."""
    with modes():
        def f(x: Any, y: Any) -> Any:
            return (x * 0.9 + y) ** 2 - fnp.exp(-x) / (1 + fnp.abs(y))

        def g(x: Any, y: Any) -> Any:
            return (x * 0.9 + y) ** 2 - jnp.exp(-x) / (1 + jnp.abs(y))

        x, y = sample(np.dtype(np.float32), (4,), seed=1), sample(np.dtype(np.float32), (4,), seed=2)
        check(f, g, x, y, evaluate_staged=True)
        np.testing.assert_allclose(
            np.asarray(fcore.core.jaxpr_as_fun(fcore.make_jaxpr(f)(x, y))(x, y)[0]),
            np.asarray(jax.jit(g)(x, y)), rtol=1e-5,
        )


def test_lax_is_reachable() -> None:
    # fnp only composes fcore.lax: every equation it stages names an fcore primitive.
    jaxpr = fcore.make_jaxpr(lambda x: fnp.floor_divide(x, 3) + fnp.remainder(x, 3))(np.arange(4, dtype=np.int32))
    assert all(fcore.core.lookup_primitive(e.primitive.name) is e.primitive for e in jaxpr.eqns)
    assert lax.add is not None

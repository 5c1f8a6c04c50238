"""The ml_dtypes narrow formats as fcore dtypes, against ``jax.numpy``: the scalar types,
creation, ``astype`` round trips, promotion with arrays and Python scalars (``jnp``'s table),
``finfo``/``iinfo``, the jaxpr text, and lowering to StableHLO and running under ``jit``."""

from __future__ import annotations

import itertools
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.core import parse_jaxpr
from fcore.errors import TypePromotionError
from fcore.ir import dtypes
from test_numpy_common import modes

NARROW = [d.name for d in dtypes.NARROW_DTYPES]
#: XLA's CPU backend cannot create these (jnp.zeros fails in JAX too), so only host-side
#: behaviour and staging are compared for them.
NO_XLA = {"int1", "uint1", "float6_e2m3fn", "float6_e3m2fn"}
ON_XLA = [n for n in NARROW if n not in NO_XLA]
STANDARD = ["bool_", "int8", "uint8", "int32", "float16", "bfloat16", "float32"]
#: StableHLO's element type of each format, as jax lowers it.
ELEMENT_TYPES = {
    "int2": "i2", "int4": "i4", "uint2": "ui2", "uint4": "ui4", "float4_e2m1fn": "f4E2M1FN",
    "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e4m3fn": "f8E4M3FN", "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2": "f8E5M2",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e8m0fnu": "f8E8M0FNU",
}
VALUES = np.array([0.0, 1.0, -1.5, 2.0, 0.25, 3.0, -0.0, 100.0, -7.0], np.float32)


def _same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64))


@pytest.mark.parametrize("name", NARROW)
def test_scalar_types(name: str) -> None:
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    assert np.dtype(ours) == np.dtype(theirs) == ours.dtype
    assert fnp.dtype(ours) == jnp.dtype(theirs)
    for kind in (fnp.floating, fnp.signedinteger, fnp.unsignedinteger, fnp.integer, fnp.inexact, fnp.number):
        assert fnp.issubdtype(ours, kind) == jnp.issubdtype(theirs, kind), kind
    for kind_name in ("real floating", "signed integer", "unsigned integer", "integral", "numeric"):
        assert fnp.isdtype(ours, kind_name) == jnp.isdtype(theirs, kind_name), kind_name
    x = ours(1)
    assert x.dtype == np.dtype(theirs) and not x.weak_type


@pytest.mark.parametrize("name", NARROW)
def test_limits(name: str) -> None:
    dt = np.dtype(getattr(jnp, name))
    if dtypes.is_integer(dt):
        ours, theirs = fnp.iinfo(dt), cast(Any, jnp).iinfo(dt)
        assert (ours.min, ours.max, ours.bits) == (theirs.min, theirs.max, theirs.bits)
    else:
        f, j = fnp.finfo(dt), cast(Any, jnp).finfo(dt)
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "nmant", "nexp"):
            assert float(getattr(f, field)) == float(getattr(j, field)), field


@pytest.mark.parametrize("name", ON_XLA)
def test_creation_and_astype_round_trips(name: str) -> None:
    dt = getattr(fnp, name)
    with modes():
        _same(fnp.zeros(3, dt), jnp.zeros(3, getattr(jnp, name)))
        _same(fnp.array([1, 2, 3], dt), jnp.array([1, 2, 3], getattr(jnp, name)))
        _same(fnp.full((2,), 1.5, dt), jnp.full((2,), 1.5, getattr(jnp, name)))
        narrow = fnp.asarray(VALUES).astype(dt)
        _same(narrow, jnp.asarray(VALUES).astype(getattr(jnp, name)))
        for back in ("float32", "int32", "bfloat16", "bool"):
            if name == "float4_e2m1fn" and back == "int32":
                # XLA's CPU convert f4E2M1FN -> s32 turns +-6 (the largest finite value) into
                # INT_MAX/INT_MIN; fcore's eager conversion gives +-6, as ml_dtypes does.
                _same(narrow.astype(back), np.asarray(narrow).astype(np.float32).astype(np.int32))
                continue
            _same(narrow.astype(back), jnp.asarray(VALUES).astype(getattr(jnp, name)).astype(back))
        for start in ("int8", "uint8", "float16"):
            src = VALUES.astype(start)
            _same(fnp.asarray(src).astype(dt), jnp.asarray(src).astype(getattr(jnp, name)))


@pytest.mark.parametrize("name", ON_XLA)
def test_float_to_narrow_int_saturates_as_xla(name: str) -> None:
    """float -> narrow int clamps to the range (XLA's convert), int -> narrow int wraps."""
    dt = getattr(fnp, name)
    x = np.array([100.0, -100.0, np.inf, -np.inf, np.nan, 2.7, -2.7], np.float32)
    with modes():
        _same(fnp.asarray(x).astype(dt), jnp.asarray(x).astype(getattr(jnp, name)))
        _same(fcore.jit(lambda v: v.astype(dt))(x), jnp.asarray(x).astype(getattr(jnp, name)))
        i = np.array([100, -9, 8, 17], np.int32)
        _same(fnp.asarray(i).astype(dt), jnp.asarray(i).astype(getattr(jnp, name)))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_promote_types_table(x64: bool, mode: Any) -> None:
    """``fnp.promote_types`` over every pair of narrow and standard dtypes, as ``jnp``'s."""
    names = NARROW + STANDARD
    with modes(x64, mode):
        for a, b in itertools.product(names, names):
            da, db = np.dtype(getattr(jnp, a)), np.dtype(getattr(jnp, b))
            try:
                want: Any = jnp.promote_types(da, db)
            except ValueError:  # jax's TypePromotionError
                with pytest.raises(TypePromotionError):
                    fnp.promote_types(da, db)
            else:
                assert fnp.promote_types(da, db) == want, (a, b)


@pytest.mark.parametrize("name", NARROW)
def test_arithmetic_promotion_with_scalars_and_arrays(name: str) -> None:
    """Traced ``x + y`` for a narrow array and Python scalars or other arrays: result dtype and
    weak type as jnp's, and a ``TypePromotionError`` wherever jnp refuses."""
    dt = np.dtype(getattr(jnp, name))
    with modes():
        for other in [1, 1.5, True, *[np.zeros(2, getattr(jnp, s)) for s in STANDARD], np.zeros(2, dt)]:
            spec = cast(Any, jax.ShapeDtypeStruct)((2,), dt)
            try:
                want = jax.eval_shape(lambda v: v * other, spec)
            except ValueError:
                with pytest.raises(TypePromotionError):
                    fcore.make_jaxpr(lambda v: v * other)(fcore.ShapeDtypeStruct((2,), dt))
                continue
            got = fcore.make_jaxpr(lambda v: v * other)(fcore.ShapeDtypeStruct((2,), dt)).out_avals[0]
            assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape), other


def test_promotion_error_names_the_dtypes() -> None:
    with pytest.raises(TypePromotionError, match="int4.*int8"):
        fnp.zeros(2, fnp.int4) + fnp.zeros(2, fnp.int8)
    with pytest.raises(TypePromotionError, match="float8_e4m3fn.*float32"):
        fnp.zeros(2, fnp.float8_e4m3fn) * fnp.zeros(2, fnp.float32)


@pytest.mark.parametrize("name", NARROW)
def test_jaxpr_text_round_trips(name: str) -> None:
    dt = np.dtype(getattr(jnp, name))
    lit = np.array([-1.5, 3.25], np.float32).astype(dt)  # literals of the format in the text
    closed = fcore.make_jaxpr(lambda v: (v.astype(fnp.float32), v * 2, v * lit[0] + lit[1]))(fcore.ShapeDtypeStruct((3,), dt))
    text = str(closed.jaxpr)
    theirs = str(jax.make_jaxpr(lambda v: v)(cast(Any, jax.ShapeDtypeStruct)((3,), dt)))
    if name != "uint1":  # JAX prints uint1 as "i1", like int1; fcore writes "u1" to keep parsing exact
        assert f"a:{dtypes.short_name(dt)}[3]" in theirs, theirs
    assert f"a:{dtypes.short_name(dt)}[3]" in text
    assert parse_jaxpr(text) == closed.jaxpr


@pytest.mark.parametrize("name", ON_XLA)
def test_jit_lowers_and_runs(name: str) -> None:
    dt = getattr(fnp, name)
    x = fnp.asarray(VALUES).astype(dt)
    c = VALUES[::-1].astype(np.dtype(dt))

    def f(v: Any) -> Any:
        return v * fnp.asarray(c) - 1, v.astype(fnp.float32)

    text = fcore.jit(f).lower(x).as_text()
    assert f"x{ELEMENT_TYPES[name]}>" in text
    jax_text = jax.jit(lambda v: v).lower(jnp.asarray(np.asarray(x))).as_text()
    assert f"x{ELEMENT_TYPES[name]}>" in jax_text
    for got, want in zip(fcore.jit(f)(x), f(x)):
        _same(got, want)
    want_jax = jax.jit(lambda v: (v * jnp.asarray(c) - 1, v.astype(jnp.float32)))(jnp.asarray(np.asarray(x)))
    for got, want in zip(fcore.jit(f)(x), want_jax):
        _same(got, want)


def test_formats_without_an_xla_type_fail_clearly() -> None:
    """int1/uint1 have no StableHLO element type: jit says so instead of crashing in XLA."""
    for dt in (fnp.int1, fnp.uint1):
        x = fnp.zeros(2, dt)
        with pytest.raises(TypeError, match="StableHLO"):
            fcore.jit(lambda v: v + 1)(x)

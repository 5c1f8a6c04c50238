"""Shared helpers of the ``fcore.numpy`` differential tests, and tests of its dtype API.

``check(f_fcore, f_jax, *args)`` runs both functions eagerly and compares values, dtypes and
weak types; it also stages both (``fcore.make_jaxpr`` / ``jax.make_jaxpr``) and compares the
output avals. Arguments are NumPy values or Python scalars, which both libraries accept.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ParamSpec, Literal, cast

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.config import enable_x64, numpy_dtype_promotion
from fcore.core import jaxpr_as_fun

Mode = Literal["standard", "strict"]

BF16 = np.dtype(ml_dtypes.bfloat16)
#: The dtypes the corpus runs over (the brief's eight).
DTYPES: tuple[np.dtype[Any], ...] = tuple(
    np.dtype(d) for d in (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.float16, BF16, np.float32)
)
#: Plus complex64, for functions defined on complex numbers.
DTYPES_C: tuple[np.dtype[Any], ...] = (*DTYPES, np.dtype(np.complex64))
SCALARS: tuple[bool | int | float, ...] = (True, 2, -1.5)

P = ParamSpec("P")


@contextlib.contextmanager
def modes(x64: bool = False, mode: Mode = "standard") -> Iterator[None]:
    """The same 64-bit and promotion mode in JAX and in fcore."""
    with (
        jax.enable_x64(x64),
        jax.numpy_dtype_promotion(mode),
        enable_x64(x64),
        numpy_dtype_promotion(mode),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        yield


def sample(dtype: np.dtype[Any], shape: Sequence[int] = (2, 3), seed: int = 0, nonzero: bool = False) -> np.ndarray[Any, Any]:
    """Deterministic test values of ``dtype``: signed values, no zeros when ``nonzero``."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    shp = tuple(shape)
    if dt == np.bool_:
        out = rng.random(shp) > 0.4
        return np.ones(shp, bool) if nonzero else out
    if dt.kind == "u":
        return rng.integers(1 if nonzero else 0, 7, shp).astype(dt)
    if dt.kind == "i":
        iv: np.ndarray[Any, Any] = rng.integers(-5, 6, shp)
        if nonzero:
            iv = np.where(iv == 0, 3, iv)
        return iv.astype(dt)
    if dt.kind == "c":
        return (rng.normal(size=shp) + 1j * rng.normal(size=shp)).astype(dt)
    v: np.ndarray[Any, Any] = rng.normal(size=shp) * 2
    if nonzero:
        v = np.where(np.abs(v) < 0.1, 0.5, v)
    return v.astype(dt)


def _tolerance(dt: np.dtype[Any]) -> tuple[float, float]:
    if dt == BF16:
        return 2e-2, 2e-2
    if dt in (np.float16,):
        return 5e-3, 5e-3
    if dt in (np.float32, np.complex64):
        return 2e-5, 2e-6
    return 1e-12, 1e-12


def _host(x: object) -> np.ndarray[Any, Any]:
    return np.asarray(x)


def assert_same(got: object, want: object, what: str = "") -> None:
    """Values (to a dtype-dependent tolerance), dtype, shape and weak type agree."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{what}: expected a sequence, got {type(got)}"
        assert len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{what}[{i}]")
        return
    assert isinstance(got, fcore.Array), f"{what}: expected an fcore.Array, got {type(got)}"
    g, w = _host(got), _host(want)
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != jax's {w.dtype}"
    assert g.shape == w.shape, f"{what}: shape {g.shape} != jax's {w.shape}"
    want_weak = bool(getattr(want, "weak_type", False))
    assert got.weak_type == want_weak, f"{what}: weak_type {got.weak_type} != jax's {want_weak}"
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=what)
        return
    rtol, atol = _tolerance(g.dtype)
    wide = np.complex128 if g.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _avals(closed: Any) -> list[tuple[tuple[int, ...], np.dtype[Any], bool]]:
    return [(tuple(a.shape), np.dtype(a.dtype), bool(a.weak_type)) for a in closed.out_avals]


def check_staged(f_fcore: Callable[..., Any], f_jax: Callable[..., Any], *args: Any) -> None:
    """``make_jaxpr`` of both: the output avals agree, and fcore's jaxpr evaluates like fcore."""
    mine = fcore.make_jaxpr(f_fcore)(*args)
    theirs = jax.make_jaxpr(f_jax)(*args)
    assert _avals(mine) == _avals(theirs), f"staged avals {_avals(mine)} != jax's {_avals(theirs)}"


def check(
    f_fcore: Callable[P, Any],  # a ParamSpec, not ``...``: mypy infers ``check(fcore.grad(lambda v: ...))``
    f_jax: Callable[..., Any],
    *args: Any,
    staged: bool = True,
    evaluate_staged: bool = False,
) -> None:
    """Eager results agree (values, dtypes, weak types); with ``staged``, so do the staged avals.

    Both raising counts as agreement only when the caller expects it (use ``check_raises``).
    """
    want = f_jax(*args)
    run: Callable[..., Any] = f_fcore
    got = run(*args)
    assert_same(got, want, "eager")
    if staged:
        check_staged(f_fcore, f_jax, *args)
    if evaluate_staged:
        closed = fcore.make_jaxpr(run)(*args)
        outs = jaxpr_as_fun(closed)(*args)
        flat_want = list(want) if isinstance(want, (tuple, list)) else [want]
        assert_same(list(outs), flat_want, "staged evaluation")


def check_or_raises(f_fcore: Callable[..., Any], f_jax: Callable[..., Any], *args: Any) -> None:
    """``check``, except that where JAX rejects the call, fcore must reject it too."""
    try:
        f_jax(*args)
    except (TypeError, ValueError, OverflowError, NotImplementedError) as e:
        with pytest.raises((TypeError, ValueError, OverflowError, NotImplementedError)):
            f_fcore(*args)
        assert e is not None
        return
    check(f_fcore, f_jax, *args)


def check_raises(
    f_fcore: Callable[..., Any],
    f_jax: Callable[..., Any],
    *args: Any,
    exc: type[BaseException] | tuple[type[BaseException], ...] = (TypeError, ValueError),
) -> None:
    """Both libraries reject the call with an exception of (one of) the given types."""
    with pytest.raises(exc):
        f_jax(*args)
    with pytest.raises(exc):
        f_fcore(*args)


# -- tests of the dtype API -------------------------------------------------------------------
SCALAR_TYPES = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]


@pytest.mark.parametrize("name", SCALAR_TYPES)
@pytest.mark.parametrize("value", [1, 2.5, True])
def test_scalar_type_call(name: str, value: bool | int | float) -> None:
    with modes():
        check(lambda v: getattr(fnp, name)(v), lambda v: getattr(jnp, name)(v), value, staged=False)


@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_type_call_x64(name: str) -> None:
    with modes(x64=True):
        check(lambda v: getattr(fnp, name)(v), lambda v: getattr(jnp, name)(v), 3, staged=False)


@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_type_is_a_dtype(name: str) -> None:
    st = getattr(fnp, name)
    assert np.dtype(st) == np.dtype(getattr(jnp, name))
    assert st.dtype == np.dtype(getattr(jnp, name))
    assert fnp.dtype(st) == jnp.dtype(getattr(jnp, name))
    assert fnp.zeros(2, st).dtype == jnp.zeros(2, getattr(jnp, name)).dtype


def test_scalar_type_strong_and_isinstance() -> None:
    x = fnp.int16(1) + 1
    assert x.dtype == np.int16 and not x.weak_type
    assert isinstance(fnp.float32(1), fnp.float32)
    assert not isinstance(fnp.float32(1), fnp.int32)
    y = fnp.float32(np.arange(3))
    assert y.shape == (3,) and y.dtype == np.float32


@pytest.mark.parametrize("a", DTYPES_C)
@pytest.mark.parametrize("b", DTYPES_C)
def test_promote_and_result_type(a: np.dtype[Any], b: np.dtype[Any]) -> None:
    with modes():
        assert fnp.promote_types(a, b) == jnp.promote_types(a, b)
        assert fnp.result_type(a, b) == jnp.result_type(a, b)
        assert fnp.result_type(np.zeros(2, a), 1.0) == jnp.result_type(np.zeros(2, a), 1.0)
        assert fnp.can_cast(a, b) == jnp.can_cast(a, b)
        assert fnp.can_cast(a, b, "same_kind") == jnp.can_cast(a, b, "same_kind")


def test_result_type_weak_flag() -> None:
    with modes():
        assert fnp.result_type(2, 3.0, return_weak_type_flag=True) == (np.dtype(np.float32), True)
        assert fnp.result_type(fnp.asarray(2), np.int8) == np.int8
        assert fnp.result_type(2) == jnp.result_type(2)
    with modes(x64=True):
        assert fnp.result_type(2) == jnp.result_type(2) == np.int64


@pytest.mark.parametrize("dt", [np.float16, BF16, np.float32, np.float64, np.complex64])
def test_finfo(dt: np.dtype[Any]) -> None:
    mine, theirs = fnp.finfo(dt), cast(Any, jnp).finfo(dt)
    assert mine.dtype == theirs.dtype
    assert mine.bits == theirs.bits
    for field in ("eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert float(getattr(mine, field)) == float(getattr(theirs, field)), field
    assert fnp.finfo(fnp.float32).eps == np.finfo(np.float32).eps


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
def test_iinfo(dt: type) -> None:
    mine, theirs = fnp.iinfo(dt), cast(Any, jnp).iinfo(dt)
    assert (mine.min, mine.max, mine.bits) == (theirs.min, theirs.max, theirs.bits)
    assert fnp.iinfo(fnp.int8).max == 127


def test_issubdtype_and_isdtype() -> None:
    for name in SCALAR_TYPES:
        for abstract in (fnp.floating, fnp.integer, fnp.signedinteger, fnp.unsignedinteger, fnp.inexact,
                         fnp.complexfloating, fnp.number, fnp.generic):
            assert fnp.issubdtype(getattr(fnp, name), abstract) == jnp.issubdtype(getattr(jnp, name), abstract), (name, abstract)
        for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"):
            assert fnp.isdtype(getattr(fnp, name), kind) == jnp.isdtype(getattr(jnp, name), kind), (name, kind)
    assert fnp.issubdtype(np.float32, np.float32)
    assert not fnp.issubdtype(np.float32, np.float64)


def test_dtype_function() -> None:
    for spec in ("float32", "bf16" if False else "bfloat16", float, int, bool, np.float64, np.dtype("int8"), jnp.uint8):
        assert fnp.dtype(spec) == jnp.dtype(spec), spec
    assert fnp.dtype(fnp.bfloat16) == BF16
    with pytest.raises(TypeError):
        fnp.dtype(np.dtype("U3"))


def test_constants_and_aliases() -> None:
    assert fnp.pi == np.pi and fnp.inf == np.inf and np.isnan(fnp.nan)
    assert fnp.newaxis is None
    assert fnp.bool is fnp.bool_
    assert np.dtype(fnp.int_) == np.int64

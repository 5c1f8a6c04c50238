"""``fcore.test_util``: ``jax.test_util``'s gradient checks against finite differences.

``check_grads(f, args, order)`` checks forward (``jvp``) and reverse (``vjp``) derivatives of
``f`` at ``args``, and their derivatives up to ``order``, in one random direction (seeded, so
a failure repeats). A mismatch raises ``AssertionError`` from ``numpy.testing`` naming what
was compared (``JVP tangent``, ``VJP cotangent projection``, ``JVP of VJP primal``, ...) and
the tolerances used. Tolerances default per dtype as in JAX and scale with the array size.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeAlias

import ml_dtypes
import numpy as np

from fcore.api._float0 import float0
from fcore.api.autodiff import jvp as _jvp, linearize as _linearize, vjp as _vjp
from fcore.config import x64_enabled
from fcore.ir import dtypes as _dtypes
from fcore.tree_util import tree_map, tree_reduce

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

Tolerance: TypeAlias = "float | Mapping[Any, float] | None"
ToleranceDict: TypeAlias = dict[np.dtype[Any], float]
NpArray: TypeAlias = np.ndarray[Any, Any]

_NARROW_FLOATS = {
    np.dtype(ml_dtypes.float8_e3m4): 1e-1, np.dtype(ml_dtypes.float8_e4m3): 1e-1,
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): 1e-1, np.dtype(ml_dtypes.float8_e4m3fn): 1e-1,
    np.dtype(ml_dtypes.float8_e4m3fnuz): 1e-1, np.dtype(ml_dtypes.float8_e5m2): 1e-1,
    np.dtype(ml_dtypes.float8_e5m2fnuz): 1e-1, np.dtype(ml_dtypes.float4_e2m1fn): 1e0,
    np.dtype(ml_dtypes.float8_e8m0fnu): 1e0,
}
_INTEGERS = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
             ml_dtypes.int2, ml_dtypes.int4, ml_dtypes.uint2, ml_dtypes.uint4]

#: JAX's default tolerances for values (``jax._src.public_test_util.default_tolerance``).
_default_tolerance: ToleranceDict = {
    float0: 0, **{np.dtype(d): 0 for d in _INTEGERS}, **_NARROW_FLOATS,
    np.dtype(ml_dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15, np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}

#: JAX's default tolerances for derivatives.
default_gradient_tolerance: ToleranceDict = {
    **_NARROW_FLOATS, np.dtype(ml_dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}

_CUSTOM_FLOATS = frozenset([*_NARROW_FLOATS, np.dtype(ml_dtypes.bfloat16)])
_SIGNED_SUB_BYTE = frozenset(np.dtype(d) for d in (ml_dtypes.int2, ml_dtypes.int4))
_UNSIGNED_SUB_BYTE = frozenset(np.dtype(d) for d in (ml_dtypes.uint2, ml_dtypes.uint4))


#: As JAX's ``python_scalar_types_to_dtypes``: finite differences of Python scalars run in 64 bits.
_PYTHON_SCALAR_DTYPES: dict[type, np.dtype[Any]] = {
    bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128),
}


def _is_python_scalar(val: object) -> bool:
    return not isinstance(val, np.generic) and isinstance(val, (bool, int, float, complex))


def _dtype(x: Any) -> np.dtype[Any]:
    if hasattr(x, "dtype"):
        dt: np.dtype[Any] = np.dtype(x.dtype)
        return dt
    scalar = _PYTHON_SCALAR_DTYPES.get(type(x))
    if scalar is not None:
        return scalar
    return np.asarray(x).dtype


def _canonical(dt: np.dtype[Any]) -> np.dtype[Any]:
    try:
        return _dtypes.canonicalize_dtype(dt)
    except TypeError:  # float0 and the narrow types fcore does not compute in stay as they are
        return dt


def _tolerance(dtype: np.dtype[Any], tol: float | Mapping[Any, float] | None) -> float:
    if tol is not None and not isinstance(tol, Mapping):
        return tol
    table = {np.dtype(k): v for k, v in (tol or {}).items()}
    dt = _canonical(np.dtype(dtype))
    return table.get(dt, _default_tolerance[dt])


def _upcast(x: NpArray) -> NpArray:
    if x.dtype in _CUSTOM_FLOATS:
        return x.astype(np.float32)
    if x.dtype in _SIGNED_SUB_BYTE:
        return x.astype(np.int8)
    if x.dtype in _UNSIGNED_SUB_BYTE:
        return x.astype(np.uint8)
    return x


def _assert_allclose(a: NpArray, b: NpArray, atol: float, rtol: float, err_msg: str) -> None:
    if a.dtype == b.dtype == float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    with np.errstate(invalid="ignore"):  # a zero tolerance means NumPy's default, as in JAX
        np.testing.assert_allclose(_upcast(a), _upcast(b), rtol=rtol or 1e-7, atol=atol or 0, err_msg=err_msg)


def _assert_close(x: Any, y: Any, atol: Tolerance, rtol: Tolerance, err_msg: str) -> None:
    a, b = np.asarray(x), np.asarray(y)
    assert a.shape == b.shape
    at = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol))
    rt = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol))
    _assert_allclose(a, b, atol=at * a.size, rtol=rt * b.size, err_msg=err_msg)


def check_close(xs: Any, ys: Any, atol: Tolerance = None, rtol: Tolerance = None, err_msg: str = "") -> None:
    """Each pair of leaves is close (tolerances per dtype, scaled by the leaf's size)."""
    tree_map(partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg), xs, ys)


def _check_dtypes_match(xs: Any, ys: Any) -> None:
    def same(x: Any, y: Any) -> None:
        if x64_enabled():
            assert _dtype(x) == _dtype(y)
        else:
            assert _canonical(_dtype(x)) == _canonical(_dtype(y))

    tree_map(same, xs, ys)


def _inner_prod(xs: Any, ys: Any) -> Any:
    def contract(x: Any, y: Any) -> Any:
        return np.real(np.dot(np.conj(x).reshape(-1), np.asarray(y).reshape(-1)))

    return tree_reduce(np.add, tree_map(contract, xs, ys))


def _safe_subtract(x: Any, y: Any, *, dtype: np.dtype[Any]) -> NpArray:
    """``x - y`` with ``inf - inf == 0``."""
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))


def _preserve_input_types(f: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any) -> Any:
        result = np.array(f(*args), dtype=_dtype(args[0]))
        return result.item() if all(_is_python_scalar(a) for a in args) else result

    return wrapped


_add = partial(tree_map, _preserve_input_types(operator.add))
_sub = partial(tree_map, _preserve_input_types(operator.sub))
_conj = partial(tree_map, _preserve_input_types(np.conj))


def _safe_sub(xs: Any, ys: Any) -> Any:
    return tree_map(lambda x, y: _safe_subtract(x, y, dtype=_dtype(x)), xs, ys)


def _scalar_mul(xs: Any, a: float) -> Any:
    def mul(x: Any) -> Any:
        dt = _dtype(x)
        result = np.multiply(x, np.array(a, dtype=dt), dtype=dt)
        return result.item() if _is_python_scalar(x) else result

    return tree_map(mul, xs)


def _rand_like(rng: np.random.RandomState, x: Any) -> Any:
    shape, dt = np.shape(x), _dtype(x)
    result = np.asarray(rng.randn(*shape), dtype=dt)
    if np.issubdtype(dt, np.complexfloating):
        result = result + dt.type(1.0j) * np.asarray(rng.randn(*shape), dtype=dt)
    return result.item() if _is_python_scalar(x) else result


def numerical_jvp(f: Callable[..., Any], primals: Any, tangents: Any, eps: float = EPS) -> Any:
    """The central finite difference of ``f`` at ``primals`` along ``tangents``."""
    delta = _scalar_mul(tangents, eps)
    f_pos = f(*_add(primals, delta))
    f_neg = f(*_sub(primals, delta))
    return _scalar_mul(_safe_sub(f_pos, f_neg), 0.5 / eps)


def _merge_tolerance(tol: Tolerance, default: ToleranceDict) -> float | ToleranceDict:
    if tol is None:
        return default
    if not isinstance(tol, Mapping):
        return tol
    out = dict(default)
    out.update((np.dtype(k), v) for k, v in tol.items())
    return out


def check_jvp(f: Callable[..., Any], f_jvp: Callable[[Any, Any], Any], args: Sequence[Any], atol: Tolerance = None,
              rtol: Tolerance = None, eps: float = EPS, err_msg: str = "") -> None:
    """Check ``f_jvp`` (typically ``partial(fcore.jvp, f)``) against finite differences of
    ``f`` at ``args``, in one random direction; raises ``AssertionError`` on a mismatch."""
    at = _merge_tolerance(atol, default_gradient_tolerance)
    rt = _merge_tolerance(rtol, default_gradient_tolerance)
    rng = np.random.RandomState(0)
    tangent = tree_map(partial(_rand_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_out_expected = f(*args)
    _check_dtypes_match(v_out, v_out_expected)
    t_out_expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(v_out, v_out_expected, atol=at, rtol=rt, err_msg=f"{err_msg} primal" if err_msg else "primal")
    check_close(t_out, t_out_expected, atol=at, rtol=rt, err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any], atol: Tolerance = None,
              rtol: Tolerance = None, eps: float = EPS, err_msg: str = "") -> None:
    """Check ``f_vjp`` (typically ``partial(fcore.vjp, f)``) against finite differences of
    ``f``: ``<ct, J t>`` must equal ``<J^T ct, t>`` for random ``t`` and ``ct``."""
    at = _merge_tolerance(atol, default_gradient_tolerance)
    rt = _merge_tolerance(rtol, default_gradient_tolerance)
    rand_like = partial(_rand_like, np.random.RandomState(0))
    v_out, vjpfun = f_vjp(*args)
    v_out_expected = f(*args)
    check_close(v_out, v_out_expected, atol=at, rtol=rt, err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(rand_like, args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(rand_like, v_out)
    cotangent_out = _conj(vjpfun(_conj(cotangent)))
    ip = _inner_prod(tangent, cotangent_out)
    ip_expected = _inner_prod(tangent_out, cotangent)
    check_close(ip, ip_expected, atol=at, rtol=rt,
                err_msg=f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def _jvp_from_lin(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    primal_out, f_lin = _linearize(f, *primals)
    return primal_out, f_lin(*tangents)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int, modes: Sequence[str] = ("fwd", "rev"),
                atol: Tolerance = None, rtol: Tolerance = None, eps: float | None = None) -> None:
    """Check derivatives of ``f`` at ``args`` up to ``order`` against finite differences.

    ``modes``: ``"fwd"`` (``jvp``), ``"rev"`` (``vjp``) and/or ``"lin"`` (``linearize``).
    Raises ``AssertionError`` naming the failing check when a derivative is off.
    """
    args = tuple(args)
    step = eps or EPS
    _check_jvp = partial(check_jvp, atol=atol, rtol=rtol, eps=step)
    _check_vjp = partial(check_vjp, atol=atol, rtol=rtol, eps=step)

    def check(f: Callable[..., Any], args: tuple[Any, ...], order: int, err_msg: str = "") -> None:
        if "fwd" in modes:
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
            _check_jvp(f, partial(_jvp, f), args, err_msg=fwd_msg)
            if order > 1:
                check(partial(_jvp, f), (args, args), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
            _check_vjp(f, partial(_vjp, f), args, err_msg=rev_msg)
            if order > 1:
                def f_vjp(*args: Any) -> Any:
                    out_primal, vjp_fun = _vjp(f, *args)
                    return vjp_fun(out_primal)

                check(f_vjp, args, order - 1, rev_msg)
        if "lin" in modes:
            lin_msg = f"LIN of {err_msg}" if err_msg else "LIN"
            _check_jvp(f, partial(_jvp_from_lin, f), args, err_msg=lin_msg)
            if order > 1:
                check(partial(_jvp_from_lin, f), (args, args), order - 1, lin_msg)

    check(f, args, order)

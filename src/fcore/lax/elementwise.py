"""Elementwise primitives: for each, the user function, abstract eval and eager impl.

Rules for transformations (jvp, transpose, batching, lowering) live next to these,
in this file, as each transformation is added.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fcore.backend.lowering import lowering_rules
from fcore.transforms.batching import batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.stack import CURRENT_TRACE
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax._base import PYTHON_SCALARS, ArrayLike, broadcast_shapes_scalar, match_scalars, same_dtypes

NpArray = np.ndarray[Any, Any]


_KIND_DTYPES: dict[str, frozenset[DType]] = {
    "float": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_floating(d)),
    "complex": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_complex(d)),
    "int": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_integer(d)),
    "bool": frozenset([dtypes.bool_]),
}


def _accepted(kinds: str) -> frozenset[DType]:
    """The dtypes of the ``|``-separated kinds (computed once per primitive)."""
    return frozenset().union(*(_KIND_DTYPES[k] for k in kinds.split("|")))


_NUM = "float|complex|int"
_INEXACT = "float|complex"
_INTEGRAL = "int|bool"
_ANY = "float|complex|int|bool"


def _check_dtype(name: str, dt: DType, kinds: str) -> None:
    if dt not in _accepted(kinds):
        raise TypeError(
            f"{name} does not accept dtype {dtypes.dtype_name(dt)}. Accepted dtype kinds: {kinds.replace('|', ', ')}."
        )


def _nary_abstract_eval(name: str, arity: int, kinds: str, out_dtype: DType | None = None) -> Callable[..., ShapedArray]:
    accepted = _accepted(kinds)

    def rule(*avals: ShapedArray, **params: ParamValue) -> ShapedArray:
        if len(avals) != arity:
            raise TypeError(f"{name} takes {arity} operand(s), got {len(avals)}")
        first = avals[0]
        dt = first.dtype
        if arity == 1 and out_dtype is None and dt in accepted:
            return first  # fast path: unary, same type out
        if arity == 2 and avals[1].dtype == dt and dt in accepted:  # fast path: valid binary
            second = avals[1]
            fs, ss = first.shape, second.shape
            if fs == ss or not fs or not ss:
                if out_dtype is not None:
                    return shaped_array(fs or ss, out_dtype, first.weak_type and second.weak_type)
                weak = first.weak_type and second.weak_type
                if fs == (fs or ss) and first.weak_type == weak:
                    return first
                if ss == (fs or ss) and second.weak_type == weak:
                    return second
                return shaped_array(fs or ss, dt, weak)
        dt = same_dtypes(name, avals)
        if dt not in accepted:
            _check_dtype(name, dt, kinds)
        shape = broadcast_shapes_scalar(name, avals)
        weak = all(a.weak_type for a in avals)  # also for fixed-dtype results, as in JAX
        if out_dtype is None:
            for a in avals:  # reuse an interned input aval when it is the answer
                if a.shape == shape and a.weak_type == weak:
                    return a
        return shaped_array(shape, dt if out_dtype is None else out_dtype, weak)

    return rule


def _all_weak(weaks: Sequence[bool], params: Mapping[str, ParamValue]) -> bool:
    return all(weaks)


def _define(
    name: str, arity: int, kinds: str, fn: Callable[..., Any], out_dtype: DType | None = None
) -> Primitive:
    """An elementwise primitive computed on the host by the NumPy function ``fn``.

    Without ``out_dtype`` the result has the operands' dtype: NumPy's ufunc loops may widen
    (float16, bfloat16) or return NumPy scalars for 0-d operands, so results are cast back.
    """
    p = Primitive(name, param_names=())
    abstract_eval = _nary_abstract_eval(name, arity, kinds, out_dtype)
    p.def_abstract_eval(abstract_eval)
    accepted = _accepted(kinds)
    fixed_dtype = out_dtype

    def checked_impl(*args: NpArray) -> NpArray:
        # NumPy would broadcast or promote silently where lax does not: anything unusual is
        # re-checked by the shape/dtype rule (which raises).
        first = args[0]
        if len(args) != arity or first.dtype not in accepted or any(
            a.dtype != first.dtype or (a.shape != first.shape and a.ndim and first.ndim) for a in args[1:]
        ):
            abstract_eval(*(ShapedArray(a.shape, a.dtype) for a in args))
        out = fn(*args)
        dt = first.dtype if fixed_dtype is None else fixed_dtype
        return out if type(out) is np.ndarray and out.dtype == dt else np.asarray(out, dt)

    def eager_unary(x: object = None, *rest: object) -> ArrayImpl | None:
        if rest or type(x) is not ArrayImpl:
            return None
        h = x._np
        if h is None:
            h = x.host()
        dt = h.dtype
        if dt not in accepted:
            return None
        out = fn(h)
        if fixed_dtype is not None:
            return ArrayImpl(out if type(out) is np.ndarray else np.asarray(out), x._weak)
        if type(out) is not np.ndarray or out.dtype != dt:
            out = np.asarray(out, dt)
        return ArrayImpl(out, x._weak, None, x._aval)  # the operand's type, known or not

    def eager_binary(x: object = None, y: object = None, *rest: object) -> ArrayImpl | None:
        if rest or type(x) is not ArrayImpl or type(y) is not ArrayImpl:
            return None
        hx, hy = x._np, y._np
        if hx is None:
            hx = x.host()
        if hy is None:
            hy = y.host()
        dt = hx.dtype
        if dt not in accepted or hy.dtype != dt or (hx.shape != hy.shape and hx.ndim and hy.ndim):
            return None
        out = fn(hx, hy)
        if fixed_dtype is not None:
            return ArrayImpl(out if type(out) is np.ndarray else np.asarray(out), x._weak and y._weak)
        if type(out) is not np.ndarray or out.dtype != dt:
            out = np.asarray(out, dt)
        weak = x._weak and y._weak
        # The result has the type of an operand of its shape and weak type, if it knows it.
        if weak == x._weak and (hx.ndim or not hy.ndim):
            return ArrayImpl(out, weak, None, x._aval)
        if weak == y._weak and hy.ndim:
            return ArrayImpl(out, weak, None, y._aval)
        return ArrayImpl(out, weak)

    p.def_impl(checked_impl)
    p.eager_rule = eager_unary if arity == 1 else eager_binary
    p.weak_type_rule = _all_weak
    return p


def _unary(name: str, kinds: str, impl: Callable[[NpArray], NpArray]) -> tuple[Primitive, Callable[[ArrayLike], Array]]:
    p = _define(name, 1, kinds, impl)

    def fn(x: ArrayLike) -> Array:
        result: Array = CURRENT_TRACE.get().process_primitive(p, (x,), {})  # p.bind(x), one call less
        return result

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (``lax.{name}``)."
    return p, fn


def _binary(
    name: str, kinds: str, impl: Callable[[NpArray, NpArray], NpArray], out_dtype: DType | None = None
) -> tuple[Primitive, Callable[[ArrayLike, ArrayLike], Array]]:
    p = _define(name, 2, kinds, impl, out_dtype)

    def fn(x: ArrayLike, y: ArrayLike) -> Array:
        if type(x) in PYTHON_SCALARS or type(y) in PYTHON_SCALARS:
            x, y = match_scalars(x, y)
        result: Array = CURRENT_TRACE.get().process_primitive(p, (x, y), {})  # p.bind(x, y)
        return result

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (``lax.{name}``); operands share a dtype, rank-0 operands broadcast."
    return p, fn


def _real_dtype(dt: DType) -> DType:
    return np.dtype(np.real(np.zeros((), dt)).dtype)


def _int_div(x: NpArray, y: NpArray) -> NpArray:
    """Truncating integer division; ``x / 0`` is -1 (all ones), as XLA computes it."""
    if dtypes.is_integer(x.dtype):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q = np.floor_divide(x, y)
            r = np.remainder(x, y)
            fix = (r != 0) & ((x < 0) != (y < 0))
            out = np.asarray(q + fix.astype(x.dtype))
            return np.where(y == 0, np.asarray(-1).astype(x.dtype), out) if np.any(y == 0) else out
    return np.asarray(np.divide(x, y))


def _rem(x: NpArray, y: NpArray) -> NpArray:
    """C-style remainder; ``x % 0`` is ``x`` for integers, as XLA computes it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(np.fmod(x, y))
        if dtypes.is_integer(x.dtype) and np.any(y == 0):
            out = np.where(y == 0, x, out)
        return out


def _shift_amount(x: NpArray, y: NpArray) -> tuple[NpArray, NpArray, int]:
    """The amounts as unsigned integers (XLA reads them so: negative ones are huge), a mask of
    those below the bit width, and the width."""
    bits = x.dtype.itemsize * 8
    amount = y.astype(f"u{x.dtype.itemsize}")
    return amount, amount < bits, bits


def _shift_left(x: NpArray, y: NpArray) -> NpArray:
    """``x << y``; amounts at or past the bit width give 0, as in XLA."""
    amount, ok = _shift_amount(x, y)[:2]
    with np.errstate(over="ignore"):
        return np.where(ok, np.left_shift(x, np.where(ok, amount, 0).astype(x.dtype)), np.zeros((), x.dtype))


def _shift_right_arithmetic(x: NpArray, y: NpArray) -> NpArray:
    """Sign-filling ``x >> y`` on the bits of ``x``; amounts past the width fill entirely."""
    amount, ok, bits = _shift_amount(x, y)
    signed = x.view(f"i{x.dtype.itemsize}")
    out = np.right_shift(signed, np.where(ok, amount, bits - 1).astype(signed.dtype))
    return np.asarray(out).view(x.dtype)


def _shift_right_logical(x: NpArray, y: NpArray) -> NpArray:
    """Zero-filling ``x >> y`` on the bits of ``x``; amounts past the width give 0."""
    amount, ok = _shift_amount(x, y)[:2]
    unsigned = x.view(f"u{x.dtype.itemsize}")
    out = np.where(ok, np.right_shift(unsigned, np.where(ok, amount, 0).astype(unsigned.dtype)), np.zeros((), unsigned.dtype))
    return np.asarray(out).view(x.dtype)


def _logistic(x: NpArray) -> NpArray:
    with np.errstate(over="ignore"):
        return np.asarray(1 / (1 + np.exp(-x)))


def _rsqrt(x: NpArray) -> NpArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(1 / np.sqrt(x))


def _sign(x: NpArray) -> NpArray:
    if dtypes.is_complex(x.dtype):
        with np.errstate(invalid="ignore", divide="ignore"):
            mag = np.abs(x)
            return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)
    return np.asarray(np.sign(x))


def _erf(x: NpArray) -> NpArray:
    return np.asarray(np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)))


def _quiet(f: Callable[..., NpArray]) -> Callable[..., NpArray]:
    def impl(*args: NpArray) -> NpArray:
        with np.errstate(all="ignore"):
            return f(*args)

    return impl


neg_p, neg = _unary("neg", _NUM, np.negative)
sign_p, sign = _unary("sign", _NUM, _sign)
floor_p, floor = _unary("floor", "float", np.floor)
ceil_p, ceil = _unary("ceil", "float", np.ceil)
is_finite_p = _define("is_finite", 1, "float", np.isfinite, dtypes.bool_)
exp_p, exp = _unary("exp", _INEXACT, _quiet(np.exp))
exp2_p, exp2 = _unary("exp2", _INEXACT, _quiet(np.exp2))
log_p, log = _unary("log", _INEXACT, _quiet(np.log))
log1p_p, log1p = _unary("log1p", _INEXACT, _quiet(np.log1p))
expm1_p, expm1 = _unary("expm1", _INEXACT, _quiet(np.expm1))
tanh_p, tanh = _unary("tanh", _INEXACT, np.tanh)
logistic_p, logistic = _unary("logistic", _INEXACT, _logistic)
sin_p, sin = _unary("sin", _INEXACT, np.sin)
cos_p, cos = _unary("cos", _INEXACT, np.cos)
tan_p, tan = _unary("tan", _INEXACT, np.tan)
asin_p, asin = _unary("asin", _INEXACT, _quiet(np.arcsin))
acos_p, acos = _unary("acos", _INEXACT, _quiet(np.arccos))
atan_p, atan = _unary("atan", _INEXACT, np.arctan)
sinh_p, sinh = _unary("sinh", _INEXACT, _quiet(np.sinh))
cosh_p, cosh = _unary("cosh", _INEXACT, _quiet(np.cosh))
asinh_p, asinh = _unary("asinh", _INEXACT, np.arcsinh)
acosh_p, acosh = _unary("acosh", _INEXACT, _quiet(np.arccosh))
atanh_p, atanh = _unary("atanh", _INEXACT, _quiet(np.arctanh))
sqrt_p, sqrt = _unary("sqrt", _INEXACT, _quiet(np.sqrt))
rsqrt_p, rsqrt = _unary("rsqrt", _INEXACT, _rsqrt)
cbrt_p, cbrt = _unary("cbrt", "float", np.cbrt)
erf_p, erf = _unary("erf", "float", _erf)
not_p, not_ = _unary("not", _INTEGRAL, np.invert)

add_p, add = _binary("add", _NUM, np.add)
sub_p, sub = _binary("sub", _NUM, np.subtract)
mul_p, mul = _binary("mul", _NUM, np.multiply)
div_p, div = _binary("div", _NUM, _quiet(_int_div))
rem_p, rem = _binary("rem", _NUM, _rem)
pow_p, pow = _binary("pow", _INEXACT, _quiet(np.power))
max_p, max = _binary("max", _ANY, np.maximum)
min_p, min = _binary("min", _ANY, np.minimum)
atan2_p, atan2 = _binary("atan2", "float", np.arctan2)
nextafter_p, nextafter = _binary("nextafter", "float", np.nextafter)
and_p, and_ = _binary("and", _INTEGRAL, np.bitwise_and)
or_p, or_ = _binary("or", _INTEGRAL, np.bitwise_or)
xor_p, xor = _binary("xor", _INTEGRAL, np.bitwise_xor)
shift_left_p, shift_left = _binary("shift_left", "int", _shift_left)
shift_right_arithmetic_p, shift_right_arithmetic = _binary("shift_right_arithmetic", "int", _shift_right_arithmetic)
shift_right_logical_p, shift_right_logical = _binary("shift_right_logical", "int", _shift_right_logical)
eq_p, eq = _binary("eq", _ANY, np.equal, dtypes.bool_)
ne_p, ne = _binary("ne", _ANY, np.not_equal, dtypes.bool_)
lt_p, lt = _binary("lt", _NUM + "|bool", np.less, dtypes.bool_)
le_p, le = _binary("le", _NUM + "|bool", np.less_equal, dtypes.bool_)
gt_p, gt = _binary("gt", _NUM + "|bool", np.greater, dtypes.bool_)
ge_p, ge = _binary("ge", _NUM + "|bool", np.greater_equal, dtypes.bool_)


def is_finite(x: ArrayLike) -> Array:
    """Elementwise ``isfinite`` (``lax.is_finite``)."""
    result: Array = is_finite_p.bind(x)
    return result


def square(x: ArrayLike) -> Array:
    return integer_pow(x, 2)


def reciprocal(x: ArrayLike) -> Array:
    return integer_pow(x, -1)


# -- abs: complex inputs give real outputs ---------------------------------------------
abs_p = Primitive("abs", param_names=())


@abs_p.def_abstract_eval
def _abs_abstract_eval(x: ShapedArray) -> ShapedArray:
    _check_dtype("abs", x.dtype, _NUM)
    return shaped_array(x.shape, _real_dtype(x.dtype), x.weak_type)


@abs_p.def_impl
def _abs_impl(x: NpArray) -> NpArray:
    return np.asarray(np.abs(x)).astype(_real_dtype(x.dtype), copy=False)


def abs(x: ArrayLike) -> Array:
    """Elementwise absolute value (``lax.abs``)."""
    result: Array = abs_p.bind(x)
    return result


# -- complex parts -------------------------------------------------------------------
def _complex_part(name: str, fn: Callable[[NpArray], NpArray], real_out: bool) -> Primitive:
    p = Primitive(name, param_names=())

    @p.def_abstract_eval
    def _(x: ShapedArray) -> ShapedArray:
        _check_dtype(name, x.dtype, "complex")
        out = _real_dtype(x.dtype) if real_out else x.dtype
        return shaped_array(x.shape, out, x.weak_type)

    p.def_impl(lambda x: np.asarray(fn(x)))
    return p


real_p = _complex_part("real", np.real, True)
imag_p = _complex_part("imag", np.imag, True)
conj_p = _complex_part("conj", np.conj, False)


def real(x: ArrayLike) -> Array:
    result: Array = real_p.bind(x)
    return result


def imag(x: ArrayLike) -> Array:
    result: Array = imag_p.bind(x)
    return result


def conj(x: ArrayLike) -> Array:
    result: Array = conj_p.bind(x)
    return result


complex_p = Primitive("complex", param_names=())


@complex_p.def_abstract_eval
def _complex_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    dt = same_dtypes("complex", (x, y))
    _check_dtype("complex", dt, "float")
    out = dtypes.complex128 if dt == dtypes.float64 else dtypes.complex64
    return shaped_array(broadcast_shapes_scalar("complex", (x, y)), out, x.weak_type and y.weak_type)


@complex_p.def_impl
def _complex_impl(x: NpArray, y: NpArray) -> NpArray:
    out = dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64
    return np.asarray(x + 1j * y).astype(out)


def complex(x: ArrayLike, y: ArrayLike) -> Array:
    """``x + i y`` (``lax.complex``)."""
    x, y = match_scalars(x, y)
    result: Array = complex_p.bind(x, y)
    return result


# -- integer_pow[y] ------------------------------------------------------------------
integer_pow_p = Primitive("integer_pow", param_names=("y",))


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x: ShapedArray, *, y: int) -> ShapedArray:
    _check_dtype("integer_pow", x.dtype, _NUM)
    if not isinstance(y, int):
        raise TypeError(f"integer_pow requires an integer exponent, got {y!r}")
    if y < 0 and dtypes.is_integer(x.dtype):
        raise TypeError(f"integer_pow: negative exponent {y} is not allowed for integer dtype {x.dtype}")
    return x


@integer_pow_p.def_impl
def _integer_pow_impl(x: NpArray, *, y: int) -> NpArray:
    with np.errstate(all="ignore"):
        if y == 0:
            return np.ones_like(x)
        out = np.asarray(x ** builtins.abs(y) if dtypes.is_integer(x.dtype) else np.power(x, np.asarray(builtins.abs(y), x.dtype)))
        if y < 0:
            out = np.asarray(1 / out)
        return out.astype(x.dtype, copy=False)


def integer_pow(x: ArrayLike, y: int) -> Array:
    """``x ** y`` for a static Python integer ``y`` (``lax.integer_pow``)."""
    result: Array = integer_pow_p.bind(x, y=y)
    return result


# -- round[rounding_method] ------------------------------------------------------------
round_p = Primitive("round", param_names=("rounding_method",))


@round_p.def_abstract_eval
def _round_abstract_eval(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    _check_dtype("round", x.dtype, "float")
    return x


@round_p.def_impl
def _round_impl(x: NpArray, *, rounding_method: int) -> NpArray:
    if rounding_method == 1:  # to nearest even
        return np.asarray(np.round(x)).astype(x.dtype, copy=False)
    return np.asarray(np.sign(x) * np.floor(np.abs(x) + np.asarray(0.5, x.dtype))).astype(x.dtype, copy=False)


def round(x: ArrayLike, rounding_method: int = 0) -> Array:
    """Round to integral values; ``rounding_method`` 0 = away from zero, 1 = to nearest even."""
    result: Array = round_p.bind(x, rounding_method=int(rounding_method))
    return result


# -- select_n / clamp ------------------------------------------------------------------
select_n_p = Primitive("select_n", param_names=())


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n requires at least one case")
    if not (dtypes.is_bool(which.dtype) or which.dtype == dtypes.int32):
        raise TypeError(f"select_n predicate must be bool or int32, got {which.dtype}")
    if dtypes.is_bool(which.dtype) and len(cases) > 2:
        raise TypeError("select_n with a bool predicate takes at most two cases")
    dt = same_dtypes("select_n", cases)
    shape = cases[0].shape
    for c in cases[1:]:
        if c.shape != shape:
            raise TypeError(f"select_n cases must have the same shapes, got {[c.shape for c in cases]}")
    if which.shape not in ((), shape):
        raise TypeError(f"select_n predicate shape {which.shape} must be scalar or equal to the case shape {shape}")
    return shaped_array(shape, dt, all(c.weak_type for c in cases))


@select_n_p.def_impl
def _select_n_impl(which: NpArray, *cases: NpArray) -> NpArray:
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.asarray(np.where(which, cases[1], cases[0]))
    return np.asarray(np.choose(np.broadcast_to(which, cases[0].shape), cases))


select_n_p.weak_type_rule = lambda weaks, params: all(weaks[1:])


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """``cases[which]`` elementwise (``lax.select_n``); ``which`` is bool or int32."""
    result: Array = select_n_p.bind(which, *cases)
    return result


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """``on_true`` where ``pred`` else ``on_false`` (``lax.select``: ``select_n`` with the
    cases in predicate order)."""
    return select_n(pred, on_false, on_true)


clamp_p = Primitive("clamp", param_names=())


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    dt = same_dtypes("clamp", (lo, x, hi))
    _check_dtype("clamp", dt, _NUM)
    for b in (lo, hi):
        if b.shape not in ((), x.shape):
            raise TypeError(f"clamp bounds must be scalars or have the operand's shape {x.shape}, got {b.shape}")
    return x


@clamp_p.def_impl
def _clamp_impl(lo: NpArray, x: NpArray, hi: NpArray) -> NpArray:
    return np.asarray(np.minimum(np.maximum(x, lo), hi)).astype(x.dtype, copy=False)


clamp_p.weak_type_rule = _all_weak


def clamp(lo: ArrayLike, x: ArrayLike, hi: ArrayLike) -> Array:
    """``min(max(x, lo), hi)`` (``lax.clamp``)."""
    lo, x = match_scalars(lo, x)
    hi, x = match_scalars(hi, x)
    result: Array = clamp_p.bind(lo, x, hi)
    return result


# -- convert_element_type[new_dtype, weak_type] ------------------------------------------
convert_element_type_p = Primitive("convert_element_type", param_names=("new_dtype", "weak_type"))


@convert_element_type_p.def_abstract_eval
def _convert_abstract_eval(x: ShapedArray, *, new_dtype: DType, weak_type: bool) -> ShapedArray:
    return shaped_array(x.shape, new_dtype, weak_type)


@convert_element_type_p.def_impl
def _convert_impl(x: NpArray, *, new_dtype: DType, weak_type: bool) -> NpArray:
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    with np.errstate(invalid="ignore", over="ignore"):
        if dtypes.is_integer(new_dtype) and dtypes.is_floating(x.dtype):
            info = np.iinfo(new_dtype)
            x = np.nan_to_num(np.trunc(x), nan=0).clip(info.min, info.max)
        return x.astype(new_dtype)


convert_element_type_p.weak_type_rule = lambda weaks, params: bool(params["weak_type"])


def convert_element_type(x: ArrayLike, new_dtype: Any, weak_type: bool = False) -> Array:
    """Cast to ``new_dtype`` (canonicalized for the 64-bit mode), as ``lax.convert_element_type``."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(new_dtype))
    if isinstance(x, Array) and x.dtype == dt and x.weak_type == bool(weak_type):
        return x  # a no-op conversion stages nothing, as in JAX
    result: Array = convert_element_type_p.bind(x, new_dtype=dt, weak_type=bool(weak_type))
    return result


# -- stop_gradient ---------------------------------------------------------------------
stop_gradient_p = Primitive("stop_gradient", param_names=())
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_impl(lambda x: x)


def stop_gradient(x: ArrayLike) -> Array:
    """Identity whose derivative is zero."""
    result: Array = stop_gradient_p.bind(x)
    return result


UNARY: tuple[Primitive, ...] = (
    neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p,
    logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p,
    atanh_p, sqrt_p, rsqrt_p, cbrt_p, erf_p, not_p,
)


# ======================================================================================
# Transformation rules. Each is written once and used by both the tracing front end
# and the jaxpr passes (fcore.transforms).
# ======================================================================================
from fcore.interpreters.eval import get_aval  # noqa: E402
from fcore.transforms.ad_util import UndefinedPrimal, Zero, instantiate, is_undefined  # noqa: E402
from fcore.transforms.batching import defbroadcasting, defvectorized  # noqa: E402
from fcore.transforms.jvp import deflinear, defjvp, defjvp_with_output, defjvp_zero  # noqa: E402


def _aval(x: Any) -> ShapedArray:
    return x.aval if type(x) is UndefinedPrimal else get_aval(x)


def _unbroadcast(ct: Any, operand: Any) -> Any:
    """Sum a cotangent down to a rank-0 operand that was broadcast by the shape rule."""
    if type(ct) is Zero:
        return ct
    a = _aval(operand)
    if a.shape == () and get_aval(ct).shape != ():
        from fcore.lax.reductions import reduce_sum

        ct = reduce_sum(ct, tuple(range(get_aval(ct).ndim)))
    return _weak_like(ct, a)


def _weak_like(ct: Any, a: ShapedArray) -> Any:
    """The cotangent of a weak operand that met a strong one of its dtype is weak again.

    JAX stages a weak-to-strong ``convert_element_type`` there, whose transpose restores
    the weak type; fcore stages no conversion, so its transpose rules restore it.
    """
    if a.weak_type and not get_aval(ct).weak_type:
        return convert_element_type_p.bind(ct, new_dtype=a.dtype, weak_type=True)
    return ct


def _zeros(x: Any) -> Any:
    return instantiate(Zero(_aval(x).strip_weak_type()))


def _full_like(x: Any, value: float) -> Array:
    return _scalar(value, _aval(x).dtype)


def _scalar(value: float, dt: DType) -> Array:
    from fcore.lax._base import weak_scalar

    return weak_scalar(value, dt)


for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, stop_gradient_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p,
           not_p, and_p, or_p, xor_p, nextafter_p, shift_left_p, shift_right_arithmetic_p, shift_right_logical_p):
    defjvp_zero(_p)

defjvp_with_output(exp_p, lambda g, ans, x: mul(g, ans))
defjvp_with_output(exp2_p, lambda g, ans, x: mul(g, mul(ans, _full_like(x, math.log(2.0)))))
defjvp(log_p, lambda g, x: div(g, x))
defjvp(log1p_p, lambda g, x: div(g, add(x, _full_like(x, 1.0))))
defjvp_with_output(expm1_p, lambda g, ans, x: mul(g, add(ans, _full_like(x, 1.0))))
defjvp(sin_p, lambda g, x: mul(g, cos(x)))
defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))  # the neg stays on the tangent side, where it can cancel
defjvp_with_output(tan_p, lambda g, ans, x: mul(g, add(_full_like(x, 1.0), mul(ans, ans))))
defjvp_with_output(tanh_p, lambda g, ans, x: mul(g, sub(_full_like(x, 1.0), mul(ans, ans))))
defjvp_with_output(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(_full_like(x, 1.0), ans))))
defjvp_with_output(sqrt_p, lambda g, ans, x: div(g, mul(_full_like(x, 2.0), ans)))
defjvp_with_output(rsqrt_p, lambda g, ans, x: mul(g, mul(_full_like(x, -0.5), div(ans, x))))
defjvp_with_output(cbrt_p, lambda g, ans, x: mul(g, mul(_full_like(x, 1.0 / 3.0), integer_pow(ans, -2))))
defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_full_like(x, 1.0), mul(x, x)))))
defjvp(acos_p, lambda g, x: neg(mul(g, rsqrt(sub(_full_like(x, 1.0), mul(x, x))))))
defjvp(atan_p, lambda g, x: div(g, add(_full_like(x, 1.0), mul(x, x))))
defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(mul(x, x), _full_like(x, 1.0)))))
defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(mul(x, x), _full_like(x, 1.0)))))
defjvp(atanh_p, lambda g, x: div(g, sub(_full_like(x, 1.0), mul(x, x))))
defjvp(erf_p, lambda g, x: mul(g, mul(_full_like(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x))))))
defjvp(abs_p, lambda g, x: mul(g, sign(x)) if not dtypes.is_complex(_aval(x).dtype) else
       div(real(mul(conj(x), g)), abs(x)))
defjvp(integer_pow_p, lambda g, x, *, y: (
    mul(g, mul(_full_like(x, float(y)), integer_pow(x, y - 1))) if y != 0 else Zero(_aval(x))))
defjvp(atan2_p,
       lambda g, x, y: mul(g, div(y, add(mul(x, x), mul(y, y)))),
       lambda g, x, y: neg(mul(g, div(x, add(mul(x, x), mul(y, y))))))
defjvp(rem_p, lambda g, x, y: g,
       lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))


def _replace_zero(x: Any) -> Array:
    """``x`` with zeros replaced by ones (so log(x) stays finite where its factor is zero)."""
    return add(x, convert_element_type(eq(x, _full_like(x, 0.0)), _aval(x).dtype))


defjvp_with_output(pow_p,
                   lambda g, ans, x, y: mul(g, mul(y, pow(x, sub(y, _full_like(y, 1.0))))),
                   lambda g, ans, x, y: mul(g, mul(log(_replace_zero(x)), ans)))


def _balanced_eq(x: Any, z: Any, y: Any) -> Array:
    """1 where x is the extremum, 0.5 on ties (as JAX), so the gradient is split."""
    dt = _aval(z).dtype
    return div(convert_element_type(eq(x, z), dt), add(_full_like(z, 1.0), convert_element_type(eq(y, z), dt)))


defjvp_with_output(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
                   lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
defjvp_with_output(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
                   lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


def _mask(g: Any, pred: Any) -> Array:
    return mul(g, convert_element_type(pred, _aval(g).dtype))


defjvp(clamp_p,
       lambda g, lo, x, hi: _mask(g, lt(x, lo)),
       lambda g, lo, x, hi: _mask(g, and_(gt(x, lo), lt(x, hi))),
       lambda g, lo, x, hi: _mask(g, lt(hi, x)))

# Linear primitives: jvp applies the primitive to tangents; transpose below.
for _p in (neg_p, real_p, imag_p, conj_p, complex_p):
    deflinear(_p)
defjvp(add_p, lambda g, x, y: g, lambda g, x, y: g)
defjvp(sub_p, lambda g, x, y: g, lambda g, x, y: neg(g))
defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
defjvp(div_p, lambda g, x, y: div(g, y), lambda g, x, y: mul(neg(g), div(x, mul(y, y))))


def _select_n_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    out = select_n(which, *cases)
    case_ts = tangents[1:]
    if all(type(t) is Zero for t in case_ts):
        return out, Zero(get_aval(out))
    return out, select_n(which, *[instantiate(t) for t in case_ts])


jvp_rules.register(select_n_p, symbolic_zeros=True)(_select_n_jvp)


def _convert_jvp(primals: list[Any], tangents: list[Any], *, new_dtype: DType, weak_type: bool) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(t) is Zero or not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(_aval(x).dtype):
        return out, Zero(get_aval(out))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


jvp_rules.register(convert_element_type_p, symbolic_zeros=True)(_convert_jvp)


# -- transpose rules -----------------------------------------------------------------------
def _add_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [_unbroadcast(ct, x) if is_undefined(x) else None, _unbroadcast(ct, y) if is_undefined(y) else None]


def _sub_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [_unbroadcast(ct, x) if is_undefined(x) else None,
            _unbroadcast(neg(ct), y) if is_undefined(y) else None]


def _mul_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    x_linear, y_linear = type(x) is UndefinedPrimal, type(y) is UndefinedPrimal
    if x_linear and y_linear:
        raise ValueError("mul is not linear in both operands at once")
    if x_linear:
        return [_unbroadcast(mul(ct, y), x), None]
    return [None, _unbroadcast(mul(x, ct), y)]


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if is_undefined(y):
        raise ValueError("div is linear only in its numerator")
    return [_unbroadcast(div(ct, y), x), None]


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    if is_undefined(which):
        raise ValueError("select_n is not linear in its predicate")
    zeros = _zeros(ct)
    out: list[Any] = [None]
    for i, c in enumerate(cases):
        if is_undefined(c):
            branches = [ct if j == i else zeros for j in range(len(cases))]
            out.append(_weak_like(select_n(which, *branches), c.aval))
        else:
            out.append(None)
    return out


def _convert_transpose(ct: Any, x: Any, *, new_dtype: DType, weak_type: bool) -> list[Any]:
    a = _aval(x)
    return [convert_element_type_p.bind(ct, new_dtype=a.dtype, weak_type=a.weak_type)]


transpose_rules.register(add_p)(_add_transpose)
transpose_rules.register(sub_p)(_sub_transpose)
transpose_rules.register(mul_p)(_mul_transpose)
transpose_rules.register(div_p)(_div_transpose)
transpose_rules.register(neg_p)(lambda ct, x: [neg(ct)])
transpose_rules.register(select_n_p)(_select_n_transpose)
transpose_rules.register(convert_element_type_p)(_convert_transpose)
transpose_rules.register(real_p)(lambda ct, x: [complex(ct, _zeros(ct))])
transpose_rules.register(imag_p)(lambda ct, x: [complex(_zeros(ct), neg(ct))])
transpose_rules.register(conj_p)(lambda ct, x: [conj(ct)])
transpose_rules.register(complex_p)(lambda ct, x, y: [real(ct), neg(imag(ct))])

# -- batching rules ----------------------------------------------------------------------
for _p in UNARY + (abs_p, real_p, imag_p, conj_p, integer_pow_p, round_p, convert_element_type_p,
                    stop_gradient_p):
    defvectorized(_p)
for _p in (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, nextafter_p, and_p, or_p, xor_p,
           shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p, complex_p, clamp_p):
    defbroadcasting(_p)


@batching_rules.register(select_n_p)
def _select_n_batching(axis_size: int, vals: list[Any], dims: list[int | None]) -> tuple[Any, int]:
    """Cases never broadcast against each other (only the predicate may be rank 0), so
    every case is given the batch axis at 0, and a batched rank-0 predicate is broadcast."""
    from fcore.transforms.batching import bdim_at

    which, *cases = vals
    which_dim, *case_dims = dims
    c0, d0 = cases[0], case_dims[0]
    shape0 = _aval(c0).shape
    case_shape = shape0 if d0 is None else shape0[:d0] + shape0[d0 + 1 :]
    new_cases = [bdim_at(c, d, axis_size, 0) for c, d in zip(cases, case_dims)]
    w_aval = _aval(which)
    if which_dim is None:
        new_which = which if w_aval.shape == () else bdim_at(which, None, axis_size, 0)
    else:
        new_which = bdim_at(which, which_dim, axis_size, 0)
        if w_aval.ndim == 1 and case_shape:
            from fcore.transforms.ad_util import vspace

            new_which = vspace().broadcast_in_dim(new_which, (axis_size,) + case_shape, (0,))
    return select_n(new_which, *new_cases), 0

# -- lowering rules (StableHLO text) -------------------------------------------------------
from fcore.backend.lowering import LoweringRuleContext, tensor_type  # noqa: E402


def _lower_unary(op: str) -> Callable[..., str]:
    def rule(ctx: LoweringRuleContext, x: str, **params: ParamValue) -> str:
        if op.startswith("chlo."):  # chlo's custom form: `chlo.asin %x : tensor<..> -> tensor<..>`
            t = tensor_type(ctx.avals_out[0])
            return ctx.emit(f"{op} {x} : {t} -> {t}")
        return ctx.op(op, [x], ctx.avals_out[0])

    return rule


def _lower_nary(op: str) -> Callable[..., str]:
    def rule(ctx: LoweringRuleContext, *xs: str, **params: ParamValue) -> str:
        out = ctx.avals_out[0]
        args = [ctx.broadcast(x, a, out.shape) for x, a in zip(xs, ctx.avals_in)]
        if op.startswith("chlo."):  # `chlo.next_after %a, %b : tensor<..>, tensor<..> -> tensor<..>`
            t = tensor_type(out)
            return ctx.emit(f"{op} {', '.join(args)} : {', '.join([t] * len(args))} -> {t}")
        return ctx.op(op, args, out)

    return rule


def _compare_type(dt: DType) -> str:
    if dtypes.is_inexact(dt):
        return "FLOAT"
    return "SIGNED" if dtypes.is_signed_int(dt) else "UNSIGNED"


def _lower_compare(direction: str) -> Callable[..., str]:
    def rule(ctx: LoweringRuleContext, x: str, y: str) -> str:
        a, b = ctx.avals_in
        shape = ctx.avals_out[0].shape
        x, y = ctx.broadcast(x, a, shape), ctx.broadcast(y, b, shape)
        full = [a.update(shape=shape), b.update(shape=shape)]
        return ctx.op_typed(f"stablehlo.compare {direction},", [x, y], full, ctx.avals_out[0], f", {_compare_type(a.dtype)}")

    return rule


for _p, _op in [
    (neg_p, "stablehlo.negate"), (sign_p, "stablehlo.sign"), (floor_p, "stablehlo.floor"), (ceil_p, "stablehlo.ceil"),
    (exp_p, "stablehlo.exponential"), (log_p, "stablehlo.log"), (log1p_p, "stablehlo.log_plus_one"),
    (expm1_p, "stablehlo.exponential_minus_one"), (tanh_p, "stablehlo.tanh"), (logistic_p, "stablehlo.logistic"),
    (sin_p, "stablehlo.sine"), (cos_p, "stablehlo.cosine"), (tan_p, "stablehlo.tan"), (sqrt_p, "stablehlo.sqrt"),
    (rsqrt_p, "stablehlo.rsqrt"), (cbrt_p, "stablehlo.cbrt"), (not_p, "stablehlo.not"),
    (asin_p, "chlo.asin"), (acos_p, "chlo.acos"), (atan_p, "chlo.atan"), (sinh_p, "chlo.sinh"),
    (cosh_p, "chlo.cosh"), (asinh_p, "chlo.asinh"), (acosh_p, "chlo.acosh"), (atanh_p, "chlo.atanh"),
    (erf_p, "chlo.erf"),
]:
    lowering_rules.register(_p)(_lower_unary(_op))

for _p, _op in [
    (add_p, "stablehlo.add"), (sub_p, "stablehlo.subtract"), (mul_p, "stablehlo.multiply"), (div_p, "stablehlo.divide"),
    (rem_p, "stablehlo.remainder"), (pow_p, "stablehlo.power"), (max_p, "stablehlo.maximum"),
    (min_p, "stablehlo.minimum"), (atan2_p, "stablehlo.atan2"), (nextafter_p, "chlo.next_after"),
    (and_p, "stablehlo.and"), (or_p, "stablehlo.or"), (xor_p, "stablehlo.xor"),
    (shift_left_p, "stablehlo.shift_left"), (shift_right_arithmetic_p, "stablehlo.shift_right_arithmetic"),
    (shift_right_logical_p, "stablehlo.shift_right_logical"),
]:
    lowering_rules.register(_p)(_lower_nary(_op))

for _p, _dir in [(eq_p, "EQ"), (ne_p, "NE"), (lt_p, "LT"), (le_p, "LE"), (gt_p, "GT"), (ge_p, "GE")]:
    lowering_rules.register(_p)(_lower_compare(_dir))


def _lower_typed_unary(op: str) -> Callable[..., str]:
    def rule(ctx: LoweringRuleContext, x: str, **params: ParamValue) -> str:
        return ctx.op_typed(op, [x], ctx.avals_in, ctx.avals_out[0])

    return rule


lowering_rules.register(is_finite_p)(_lower_typed_unary("stablehlo.is_finite"))
lowering_rules.register(real_p)(_lower_typed_unary("stablehlo.real"))
lowering_rules.register(imag_p)(_lower_typed_unary("stablehlo.imag"))


@lowering_rules.register(abs_p)
def _abs_lowering(ctx: LoweringRuleContext, x: str) -> str:
    if dtypes.is_complex(ctx.avals_in[0].dtype):
        return ctx.op_typed("stablehlo.abs", [x], ctx.avals_in, ctx.avals_out[0])
    return ctx.op("stablehlo.abs", [x], ctx.avals_out[0])


@lowering_rules.register(conj_p)
def _conj_lowering(ctx: LoweringRuleContext, x: str) -> str:
    (a,) = ctx.avals_in
    part = a.update(dtype=_real_dtype(a.dtype))
    re = ctx.op_typed("stablehlo.real", [x], [a], part)
    im = ctx.op_typed("stablehlo.imag", [x], [a], part)
    return ctx.op_typed("stablehlo.complex", [re, ctx.op("stablehlo.negate", [im], part)], [part, part], a)


@lowering_rules.register(complex_p)
def _complex_lowering(ctx: LoweringRuleContext, x: str, y: str) -> str:
    out = ctx.avals_out[0]
    a, b = ctx.avals_in
    x, y = ctx.broadcast(x, a, out.shape), ctx.broadcast(y, b, out.shape)
    part = a.update(shape=out.shape)
    return ctx.op_typed("stablehlo.complex", [x, y], [part, part], out)


@lowering_rules.register(round_p)
def _round_lowering(ctx: LoweringRuleContext, x: str, *, rounding_method: int) -> str:
    op = "stablehlo.round_nearest_even" if rounding_method == 1 else "stablehlo.round_nearest_afz"
    return ctx.op(op, [x], ctx.avals_out[0])


@lowering_rules.register(exp2_p)
def _exp2_lowering(ctx: LoweringRuleContext, x: str) -> str:
    out = ctx.avals_out[0]
    two = ctx.constant(2, out.dtype, out.shape)
    return ctx.op("stablehlo.power", [two, x], out)


@lowering_rules.register(integer_pow_p)
def _integer_pow_lowering(ctx: LoweringRuleContext, x: str, *, y: int) -> str:
    out = ctx.avals_out[0]
    if y == 0:
        return ctx.constant(1, out.dtype, out.shape)
    acc: str | None = None
    base, n = x, builtins.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else ctx.op("stablehlo.multiply", [acc, base], out)
        n >>= 1
        if n:
            base = ctx.op("stablehlo.multiply", [base, base], out)
    assert acc is not None
    if y < 0:
        return ctx.op("stablehlo.divide", [ctx.constant(1, out.dtype, out.shape), acc], out)
    return acc


@lowering_rules.register(select_n_p)
def _select_n_lowering(ctx: LoweringRuleContext, which: str, *cases: str) -> str:
    out = ctx.avals_out[0]
    w = ctx.avals_in[0]
    pred_type = w.update(dtype=dtypes.bool_)
    if len(cases) == 1:
        return cases[0]
    if dtypes.is_bool(w.dtype):
        return ctx.emit(
            f"stablehlo.select {which}, {cases[1]}, {cases[0]} : {tensor_type(pred_type)}, {tensor_type(out)}"
        )
    # int32 selector: a chain of selects, last case for out-of-range as XLA's case does.
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        idx = ctx.constant(i, w.dtype, w.shape)
        pred = ctx.op_typed("stablehlo.compare EQ,", [which, idx], [w, w], pred_type, ", SIGNED")
        result = ctx.emit(f"stablehlo.select {pred}, {cases[i]}, {result} : {tensor_type(pred_type)}, {tensor_type(out)}")
    return result


@lowering_rules.register(clamp_p)
def _clamp_lowering(ctx: LoweringRuleContext, lo: str, x: str, hi: str) -> str:
    out = ctx.avals_out[0]
    lo_a, _, hi_a = ctx.avals_in
    return ctx.op("stablehlo.clamp", [ctx.broadcast(lo, lo_a, out.shape), x, ctx.broadcast(hi, hi_a, out.shape)], out)


@lowering_rules.register(convert_element_type_p)
def _convert_lowering(ctx: LoweringRuleContext, x: str, *, new_dtype: DType, weak_type: bool) -> str:
    (a,) = ctx.avals_in
    out = ctx.avals_out[0]
    if a.dtype == out.dtype:
        return x
    if dtypes.is_complex(a.dtype) and not dtypes.is_complex(out.dtype):
        part = a.update(dtype=_real_dtype(a.dtype))
        x = ctx.op_typed("stablehlo.real", [x], [a], part)
        a = part
    if dtypes.is_bool(out.dtype):
        zero = ctx.constant(0, a.dtype, a.shape)
        return ctx.op_typed("stablehlo.compare NE,", [x, zero], [a, a], out, f", {_compare_type(a.dtype)}")
    return ctx.op_typed("stablehlo.convert", [x], [a], out)


lowering_rules.register(stop_gradient_p)(lambda ctx, x: x)

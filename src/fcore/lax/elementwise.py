"""Elementwise primitives: arithmetic, transcendental, comparison, bitwise, complex parts,
conversion, ``select_n``, ``clamp``, ``integer_pow``, ``round`` and ``stop_gradient``.

Each primitive is one block (docs/adding_a_primitive.md): schema (where it takes parameters),
declaration, abstract eval and impl, jvp, transpose, batching, lowering, user function. Most
share the family's helpers, defined first: ``_elementwise`` (shape and dtype rule, checked
impl, eager fast path), ``defvectorized``/``defbroadcasting`` (batching) and
``_lower_unary``/``_lower_nary``/``_lower_compare`` (lowering). ``fcore.lax.special`` builds
its primitives with the same helpers (``_define``).
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.stack import trace_now
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType, DTypeLike
from fcore.ir.params import NoParams, ParamValue
from fcore.lax._base import (
    ArrayLike, NpArray, broadcast_shapes_scalar, same_dtypes, weak_scalar,
)
from fcore.lax._primitive import Primitive
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate, is_undefined, vspace
from fcore.transforms.batching import Dim, batching_rules, bdim_at, defbroadcasting, defvectorized
from fcore.transforms.jvp import deflinear, defjvp, defjvp_with_output, defjvp_zero, jvp_rules
from fcore.transforms.transpose import transpose_rules

#: The user functions of the parameterless unary and binary primitives.
UnaryFunction: TypeAlias = Callable[[ArrayLike], Array]
BinaryFunction: TypeAlias = Callable[[ArrayLike, ArrayLike], Array]
#: An operand of a transpose rule: a value, or the ``UndefinedPrimal`` of a linear input.
LinearOperand: TypeAlias = Union[Array, UndefinedPrimal]


# ==========================================================================================
# The family's shared rules
# ==========================================================================================
_KIND_DTYPES: dict[str, frozenset[DType]] = {
    "float": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_floating(d)),
    "complex": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_complex(d)),
    "int": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_integer(d)),
    "signed int": frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_signed_int(d)),
    "bool": frozenset([dtypes.bool_]),
}


_ndarray = np.ndarray
#: ``object.__new__``, looked up once: the eager fast paths fill an ``ArrayImpl`` 's slots
#: themselves (a Python ``__init__`` frame costs more than the four stores).
_new_array = ArrayImpl.__new__


@functools.lru_cache(maxsize=None)
def _accepted(kinds: str) -> frozenset[DType]:
    """The dtypes of the ``|``-separated kinds (computed once per primitive)."""
    return frozenset().union(*(_KIND_DTYPES[k] for k in kinds.split("|")))


_NUM = "int|float|complex"
_INEXACT = "float|complex"
_INTEGRAL = "int|bool"
_ANY = "int|float|complex|bool"
_ORDERED = "int|float|bool"  # complex numbers have no order: lt/le/gt/ge reject them, as JAX


#: NumPy's names of the kinds, as JAX's messages print them.
_KIND_NAMES = {"int": "integer", "signed int": "signedinteger", "float": "floating", "complex": "complexfloating",
               "bool": "bool"}


def _check_dtype(name: str, dt: DType, kinds: str, position: int | None = None) -> None:
    """JAX's message for an operand (at ``position`` of an n-ary op) of a dtype not in ``kinds``."""
    if dt not in _accepted(kinds):
        names = ", ".join(_KIND_NAMES[k] for k in kinds.split("|"))
        where, accepted = ("", "") if position is None else (f" at position {position}", f" at position {position}")
        raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(dt)}{where}. "
                        f"Accepted dtypes{accepted} are subtypes of {names}.")


def _nary_abstract_eval(name: str, arity: int, kinds: str, out_dtype: DType | None = None) -> Callable[..., ShapedArray]:
    """The shape/dtype rule: operands share a dtype of ``kinds`` and a shape (rank 0 broadcasts)."""
    accepted = _accepted(kinds)

    def rule(*avals: ShapedArray) -> ShapedArray:
        if len(avals) != arity:
            raise TypeError(f"{name} takes {arity} operand(s), got {len(avals)}")
        first = avals[0]
        dt = first.dtype
        if arity == 2 and avals[1] is first and out_dtype is None and dt in accepted:
            return first  # fast path: two operands of one type (avals are interned)
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
        for i, a in enumerate(avals):  # as JAX: each operand's kind, then one dtype
            _check_dtype(name, a.dtype, kinds, i if arity > 1 else None)
        dt = same_dtypes(name, avals)
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


def _elementwise(
    p: Primitive, arity: int, kinds: str, fn: Callable[..., NpArray], out_dtype: DType | None = None,
    abstract_eval: Callable[..., ShapedArray] | None = None,
) -> None:
    """Give ``p`` the family's abstract eval and an impl computed on the host by NumPy's ``fn``.

    Without ``out_dtype`` the result has the operands' dtype: NumPy's ufunc loops may widen
    (float16, bfloat16) or return NumPy scalars for 0-d operands, so results are cast back.
    ``p.eager_rule`` is the eager fast path for ``ArrayImpl`` operands of valid types.
    ``abstract_eval`` replaces the family's shape and dtype rule (``pow``'s integer exponents).
    """
    if abstract_eval is None:
        abstract_eval = _nary_abstract_eval(p.name, arity, kinds, out_dtype)
    p.def_abstract_eval(abstract_eval)
    accepted = _accepted(kinds)
    fixed_dtype = out_dtype

    def impl(*args: NpArray) -> NpArray:
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

    # The accepted dtypes whose results need no dtype check: NumPy's ufunc ``fn`` computes them in
    # their own dtype (its loop resolution, asked once) and returns an array even for 0-d operands
    # (``out=...``; a NumPy scalar made into an array costs ~1.5k instructions, a fifth of the op).
    preserved = _dtype_preserving(fn, accepted, arity) if fixed_dtype is None else frozenset()
    same = preserved if ARRAY_OUT else frozenset()

    def eager_unary(x: object = None, *rest: object) -> ArrayImpl | None:
        if rest or type(x) is not ArrayImpl:
            return None
        h = x._np
        if h is None:
            if x.runs_on_device():
                return None  # (``EvalTrace`` runs it there)
            h = x.host()
        dt = h.dtype
        if dt in same:
            out = fn(h, out=...)
        else:
            if dt not in accepted:
                return None
            out = fn(h)
            if fixed_dtype is not None:
                return ArrayImpl(out if type(out) is np.ndarray else np.asarray(out), x._weak)
            if type(out) is not _ndarray or out.dtype != dt:
                out = np.asarray(out, dt)
        # ArrayImpl(out, x._weak, None, x._aval) without the ``__init__`` frame: the result has
        # the operand's type, known or not.
        r = _new_array(ArrayImpl)
        r._np = out
        r._device = None
        r._weak = x._weak
        r._aval = x._aval
        return r

    def eager_binary(x: object = None, y: object = None, *rest: object) -> ArrayImpl | None:
        if rest or type(x) is not ArrayImpl or type(y) is not ArrayImpl:
            return None
        hx, hy = x._np, y._np
        aval = x._aval
        if aval is not None and aval is y._aval and hx is not None and hy is not None and aval.dtype in same:
            # Operands of one known type (avals are interned): no dtype or shape to compare, and
            # the result has that type.
            r = _new_array(ArrayImpl)
            r._np = fn(hx, hy, out=...)
            r._device = None
            r._weak = x._weak
            r._aval = aval
            return r
        if hx is None:
            if x.runs_on_device():
                return None
            hx = x.host()
        if hy is None:
            if y.runs_on_device():
                return None
            hy = y.host()
        dt = hx.dtype
        if dt not in accepted or hy.dtype != dt or (hx.shape != hy.shape and hx.ndim and hy.ndim):
            return None
        if dt in same:
            out = fn(hx, hy, out=...)
        else:
            out = fn(hx, hy)
            if fixed_dtype is not None:
                return ArrayImpl(out if type(out) is np.ndarray else np.asarray(out), x._weak and y._weak)
            if type(out) is not _ndarray or out.dtype != dt:
                out = np.asarray(out, dt)
        weak = x._weak and y._weak
        # The result has the type of an operand of its shape and weak type, if it knows it.
        r = _new_array(ArrayImpl)  # ArrayImpl(out, weak, None, aval) without the ``__init__`` frame
        r._np = out
        r._device = None
        r._weak = weak
        if weak == x._weak and (hx.ndim or not hy.ndim):
            r._aval = x._aval
        elif weak == y._weak and hy.ndim:
            r._aval = y._aval
        else:
            r._aval = None
        return r

    p.def_impl(impl)
    p.eager_rule = eager_unary if arity == 1 else eager_binary
    p.weak_type_rule = _all_weak
    if arity == 1 and fixed_dtype is None:
        _EAGER_PATHS[p] = UnaryEagerPath(p, eager_unary, accepted, fn, preserved)


class UnaryEagerPath(NamedTuple):
    """What a caller needs to run a unary primitive's eager fast path inline (``fcore.numpy``'s
    wrappers do, under eager evaluation): the same computation as ``rule``, for operands whose
    dtype is in ``preserved`` (the accepted dtypes NumPy's ufunc ``compute`` maps to themselves,
    so its result needs no dtype check); ``rule`` itself for the other ``accepted`` ones. Valid
    while ``primitive.eager_rule is rule``."""

    primitive: Primitive
    rule: Callable[..., ArrayImpl | None]
    accepted: frozenset[DType]
    compute: Callable[[NpArray], NpArray]
    preserved: frozenset[DType]


def _takes_array_out() -> bool:
    """Whether NumPy's ufuncs take ``out=...`` (NumPy 2.3+): their result is then an array
    even for 0-d operands, where they would return a NumPy scalar."""
    try:
        return type(np.negative(np.zeros((), np.float32), out=...)) is np.ndarray
    except (TypeError, ValueError):  # an older NumPy: "return arrays must be of ArrayType"
        return False


#: Whether the eager fast paths can ask NumPy for array results (``out=...``); with an older
#: NumPy they take their general path (a scalar result made into an array).
ARRAY_OUT = _takes_array_out()


def _dtype_preserving(fn: Callable[..., NpArray], accepted: frozenset[DType], arity: int) -> frozenset[DType]:
    """The dtypes of ``accepted`` that NumPy's ufunc ``fn`` of ``arity`` operands computes in and
    returns as themselves (its loop resolution, asked once); none where ``fn`` is not a ufunc."""
    if not isinstance(fn, np.ufunc) or fn.nin != arity or fn.nout != 1:
        return frozenset()
    same = set()
    for dt in accepted:
        try:
            if fn.resolve_dtypes((dt,) * arity + (None,)) == (dt,) * (arity + 1):
                same.add(dt)
        except (TypeError, ValueError):  # no loop for it (bfloat16's may be ml_dtypes' own)
            pass
    return frozenset(same)


#: The inline eager path of each ``_elementwise`` unary primitive with an operand-typed result.
_EAGER_PATHS: dict[Primitive, UnaryEagerPath] = {}
#: The primitive of each parameterless unary user function (``_unary_function``).
_UNARY_PRIMITIVES: dict[Callable[..., object], Primitive] = {}


def unary_eager_path(fn: Callable[..., object]) -> UnaryEagerPath | None:
    """The inline eager path of the unary ``lax`` function ``fn``, if ``fn`` is one of
    ``_unary_function``'s over an ``_elementwise`` primitive whose result has its operand's dtype."""
    p = _UNARY_PRIMITIVES.get(fn)
    return None if p is None else _EAGER_PATHS.get(p)


def _define(name: str, arity: int, kinds: str, fn: Callable[..., NpArray], out_dtype: DType | None = None) -> Primitive:
    """A parameterless elementwise primitive with ``_elementwise``'s rules, in one call."""
    p = Primitive(name, params=NoParams)
    _elementwise(p, arity, kinds, fn, out_dtype)
    return p


def _unary_function(p: Primitive) -> UnaryFunction:
    """The user function of a parameterless unary primitive."""

    def fn(x: ArrayLike) -> Array:
        result: Array = trace_now().process_primitive(p, (x,), {})  # p.bind(x), one call less
        return result

    fn.__name__ = p.name
    fn.__doc__ = f"Elementwise ``{p.name}`` (``lax.{p.name}``)."
    _UNARY_PRIMITIVES[fn] = p
    return fn


def _binary_function(p: Primitive) -> BinaryFunction:
    """The user function of a parameterless binary primitive. As in JAX, a Python scalar
    operand is a weakly typed value of its default dtype (``lax.add(int8_array, 2)`` is a
    dtype mismatch; ``lax.add(float32_array, 2.0)`` is float32)."""

    def fn(x: ArrayLike, y: ArrayLike) -> Array:
        result: Array = trace_now().process_primitive(p, (x, y), {})  # p.bind(x, y)
        return result

    fn.__name__ = p.name
    fn.__doc__ = f"Elementwise ``{p.name}`` (``lax.{p.name}``); operands share a dtype, rank-0 operands broadcast."
    return fn


def _quiet(f: Callable[..., NpArray]) -> Callable[..., NpArray]:
    """``f`` with NumPy's floating-point warnings silenced (XLA computes inf/nan silently)."""

    def impl(*args: NpArray) -> NpArray:
        with np.errstate(all="ignore"):
            return f(*args)

    return impl


def _real_dtype(dt: DType) -> DType:
    return np.dtype(np.real(np.zeros((), dt)).dtype)


def _complex_part(p: Primitive, fn: Callable[[NpArray], NpArray], *, real_out: bool) -> None:
    """Abstract eval and impl of ``real``/``imag``/``conj``: a complex operand, and a result of
    its real dtype (``real_out``) or its own."""

    @p.def_abstract_eval
    def _(x: ShapedArray) -> ShapedArray:
        _check_dtype(p.name, x.dtype, "complex")
        out = _real_dtype(x.dtype) if real_out else x.dtype
        return shaped_array(x.shape, out, x.weak_type)

    p.def_impl(lambda x: np.asarray(fn(x)))


def _shift_amount(x: NpArray, y: NpArray) -> tuple[NpArray, NpArray, int]:
    """The amounts as unsigned integers (XLA reads them so: negative ones are huge), a mask of
    those below the bit width, and the width."""
    bits = x.dtype.itemsize * 8
    amount = y.astype(f"u{x.dtype.itemsize}")
    return amount, amount < bits, bits


# -- helpers of the jvp and transpose rules ---------------------------------------------------
def _aval(x: object) -> ShapedArray:
    return x.aval if type(x) is UndefinedPrimal else get_aval(x)


def _unbroadcast(ct: Array, operand: LinearOperand) -> Array:
    """Sum a cotangent down to an operand that the shape rule broadcast (rank 0, or size-1
    dimensions of an operand of the same rank)."""
    a = operand.aval if type(operand) is UndefinedPrimal else get_aval(operand)
    ct_aval = get_aval(ct)
    if ct_aval is a:  # the operand's own type (avals are interned): nothing to sum or restore
        return ct
    ct_shape = ct_aval.shape
    if a.shape != ct_shape:
        from fcore.lax.reductions import reduce_sum  # lazy: reductions imports this module
        from fcore.lax.shapes import reshape

        if a.shape == ():
            ct = reduce_sum(ct, tuple(range(len(ct_shape))))
        else:
            axes = tuple(i for i, (d, e) in enumerate(zip(a.shape, ct_shape)) if d != e)
            ct = reshape(reduce_sum(ct, axes), a.shape)
    return _weak_like(ct, a)


def _weak_like(ct: Array, a: ShapedArray) -> Array:
    """The cotangent of a weak operand that met a strong one of its dtype is weak again.

    JAX stages a weak-to-strong ``convert_element_type`` there, whose transpose restores
    the weak type; fcore stages no conversion, so its transpose rules restore it
    (docs/ir.md, "Differences from JAX's text").
    """
    if a.weak_type and not get_aval(ct).weak_type:
        weak: Array = convert_element_type_p.bind(ct, new_dtype=a.dtype, weak_type=True)
        return weak
    return ct


def _zeros(x: Array) -> Array:
    zeros: Array = instantiate(Zero(_aval(x).strip_weak_type()))
    return zeros


def _full_like(x: object, value: float) -> Array:
    """A weakly typed rank-0 ``value`` of ``x``'s dtype."""
    return weak_scalar(value, _aval(x).dtype)


def _balanced_eq(x: Array, z: Array, y: Array) -> Array:
    """1 where x is the extremum ``z``, 0.5 on ties (as JAX), so the gradient is split."""
    dt = _aval(z).dtype
    return div(convert_element_type(eq(x, z), dt), add(_full_like(z, 1.0), convert_element_type(eq(y, z), dt)))


# -- lowering helpers ---------------------------------------------------------------------------
def _lower_unary(op: str) -> Callable[[LoweringRuleContext, str], str]:
    def rule(ctx: LoweringRuleContext, x: str) -> str:
        if op.startswith("chlo."):  # chlo's custom form: `chlo.asin %x : tensor<..> -> tensor<..>`
            t = tensor_type(ctx.avals_out[0])
            return ctx.emit(f"{op} {x} : {t} -> {t}")
        return ctx.op(op, [x], ctx.avals_out[0])

    return rule


def _lower_typed_unary(op: str) -> Callable[[LoweringRuleContext, str], str]:
    """A unary op whose result type differs from its operand's (``is_finite``, ``real``)."""

    def rule(ctx: LoweringRuleContext, x: str) -> str:
        return ctx.op_typed(op, [x], ctx.avals_in, ctx.avals_out[0])

    return rule


def _lower_nary(op: str) -> Callable[..., str]:
    def rule(ctx: LoweringRuleContext, *xs: str) -> str:
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


def _lower_compare(direction: str) -> Callable[[LoweringRuleContext, str, str], str]:
    def rule(ctx: LoweringRuleContext, x: str, y: str) -> str:
        a, b = ctx.avals_in
        shape = ctx.avals_out[0].shape
        x, y = ctx.broadcast(x, a, shape), ctx.broadcast(y, b, shape)
        full = [a.update(shape=shape), b.update(shape=shape)]
        return ctx.op_typed(f"stablehlo.compare {direction},", [x, y], full, ctx.avals_out[0], f", {_compare_type(a.dtype)}")

    return rule


def _lower_int_division(op: str) -> Callable[[LoweringRuleContext, str, str], str]:
    """``divide``/``remainder`` whose integer divisor is never 0 nor (signed) -1.

    XLA defines ``x / 0`` (-1, all ones) and ``x % 0`` (``x``), and ``INT_MIN / -1``
    (``INT_MIN``), but its constant folder traps (SIGFPE) where such operands become
    constants (``0 // (v - v)``). The divisor is replaced by 1 there and the defined result
    selected, so no program fcore emits divides by 0 or -1 (issue 23, class 10).
    """
    plain = _lower_nary(op)

    def rule(ctx: LoweringRuleContext, x: str, y: str) -> str:
        out = ctx.avals_out[0]
        if not dtypes.is_integer(out.dtype):
            return plain(ctx, x, y)
        shape, dt = out.shape, out.dtype
        full = out.strip_weak_type()
        pred = ShapedArray(shape, dtypes.bool_)
        x, y = ctx.broadcast(x, ctx.avals_in[0], shape), ctx.broadcast(y, ctx.avals_in[1], shape)
        kind = _compare_type(dt)

        def const(v: int) -> str:  # a broadcast scalar: no array-sized literal in the text
            return ctx.broadcast(ctx.constant(np.array(v).astype(dt), dt), ShapedArray((), dt), shape)

        def eq_const(v: int) -> str:
            c = const(v)
            return ctx.op_typed("stablehlo.compare EQ,", [y, c], [full, full], pred, f", {kind}")

        def select(p: str, a: str, b: str) -> str:
            return ctx.op_typed("stablehlo.select", [p, a, b], [pred, full, full], full)

        zero = eq_const(0)
        bad = zero
        minus_one = None
        if dtypes.is_signed_int(dt):
            minus_one = eq_const(-1)
            bad = ctx.op("stablehlo.or", [zero, minus_one], pred)
        safe = select(bad, const(1), y)
        res = ctx.op(op, [x, safe], full)
        if op == "stablehlo.divide":
            if minus_one is not None:  # x / -1 is -x (INT_MIN wraps to itself)
                res = select(minus_one, ctx.op("stablehlo.negate", [x], full), res)
            return select(zero, const(-1), res)
        return select(zero, x, res)  # x % -1 is x % 1 = 0 already

    return rule


# ==========================================================================================
# Arithmetic
# ==========================================================================================
neg_p = Primitive("neg", params=NoParams)
_elementwise(neg_p, 1, _NUM, np.negative)
deflinear(neg_p)
transpose_rules.register(neg_p)(lambda ct, x: [neg(ct)])
defvectorized(neg_p)
lowering_rules.register(neg_p)(_lower_unary("stablehlo.negate"))
neg: UnaryFunction = _unary_function(neg_p)


add_p = Primitive("add", params=NoParams, commutative=True)
_elementwise(add_p, 2, _NUM, np.add)
defjvp(add_p, lambda g, x, y: g, lambda g, x, y: g)


@transpose_rules.register(add_p)
def _add_transpose(ct: Array, x: LinearOperand, y: LinearOperand) -> list[Array | None]:
    return [_unbroadcast(ct, x) if is_undefined(x) else None, _unbroadcast(ct, y) if is_undefined(y) else None]


defbroadcasting(add_p)
lowering_rules.register(add_p)(_lower_nary("stablehlo.add"))
add: BinaryFunction = _binary_function(add_p)


sub_p = Primitive("sub", params=NoParams)
_elementwise(sub_p, 2, _NUM, np.subtract)
defjvp(sub_p, lambda g, x, y: g, lambda g, x, y: neg(g))


@transpose_rules.register(sub_p)
def _sub_transpose(ct: Array, x: LinearOperand, y: LinearOperand) -> list[Array | None]:
    return [_unbroadcast(ct, x) if is_undefined(x) else None,
            _unbroadcast(neg(ct), y) if is_undefined(y) else None]


defbroadcasting(sub_p)
lowering_rules.register(sub_p)(_lower_nary("stablehlo.subtract"))
sub: BinaryFunction = _binary_function(sub_p)


mul_p = Primitive("mul", params=NoParams, commutative=True)
_elementwise(mul_p, 2, _NUM, np.multiply)
defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))


@transpose_rules.register(mul_p)
def _mul_transpose(ct: Array, x: LinearOperand, y: LinearOperand) -> list[Array | None]:
    if isinstance(x, UndefinedPrimal):
        if isinstance(y, UndefinedPrimal):
            raise ValueError("mul is not linear in both operands at once")
        return [_unbroadcast(mul(ct, y), x), None]
    return [None, _unbroadcast(mul(x, ct), y)]


defbroadcasting(mul_p)
lowering_rules.register(mul_p)(_lower_nary("stablehlo.multiply"))
mul: BinaryFunction = _binary_function(mul_p)


def _div_impl(x: NpArray, y: NpArray) -> NpArray:
    """Truncating integer division; ``x / 0`` is -1 (all ones), as XLA computes it."""
    if dtypes.is_integer(x.dtype):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q = np.floor_divide(x, y)
            r = np.remainder(x, y)
            fix = (r != 0) & ((x < 0) != (y < 0))
            out = np.asarray(q + fix.astype(x.dtype))
            return np.where(y == 0, np.asarray(-1).astype(x.dtype), out) if np.any(y == 0) else out
    return np.asarray(np.divide(x, y))


div_p = Primitive("div", params=NoParams)
_elementwise(div_p, 2, _NUM, _quiet(_div_impl))
defjvp(div_p, lambda g, x, y: div(g, y), lambda g, x, y: mul(neg(g), div(x, mul(y, y))))


@transpose_rules.register(div_p)
def _div_transpose(ct: Array, x: LinearOperand, y: LinearOperand) -> list[Array | None]:
    if isinstance(y, UndefinedPrimal):
        raise ValueError("div is linear only in its numerator")
    return [_unbroadcast(div(ct, y), x), None]


defbroadcasting(div_p)
lowering_rules.register(div_p)(_lower_int_division("stablehlo.divide"))
div: BinaryFunction = _binary_function(div_p)


def _rem_impl(x: NpArray, y: NpArray) -> NpArray:
    """C-style remainder; ``x % 0`` is ``x`` for integers, as XLA computes it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(np.fmod(x, y))
        if dtypes.is_integer(x.dtype) and np.any(y == 0):
            out = np.where(y == 0, x, out)
        return out


rem_p = Primitive("rem", params=NoParams)
_elementwise(rem_p, 2, "float|int", _rem_impl)  # no complex remainder, as in JAX
defjvp(rem_p, lambda g, x, y: g,
       lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))
defbroadcasting(rem_p)
lowering_rules.register(rem_p)(_lower_int_division("stablehlo.remainder"))
rem: BinaryFunction = _binary_function(rem_p)


def _replace_zero(x: Array) -> Array:
    """``x`` with zeros replaced by ones (so log(x) stays finite where its factor is zero)."""
    return add(x, convert_element_type(eq(x, _full_like(x, 0.0)), _aval(x).dtype))


def _pow_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    """``pow``'s exponent has the base's dtype or is any integer (as in JAX 0.10)."""
    if not dtypes.is_integer(y.dtype) or not dtypes.is_inexact(x.dtype):
        if x.dtype != y.dtype and dtypes.is_inexact(x.dtype) and dtypes.is_inexact(y.dtype):
            raise TypeError(
                "the first argument to pow must have an inexact dtype (float or complex), and the second "
                "argument must have an inexact or integer dtype, and two inexact dtypes must match, but got "
                f"{dtypes.dtype_name(x.dtype)} and {dtypes.dtype_name(y.dtype)} respectively.")
        return _pow_same_dtype(x, y)
    shape = broadcast_shapes_scalar("pow", (x, y))
    weak = x.weak_type and y.weak_type
    return x if x.shape == shape and x.weak_type == weak else shaped_array(shape, x.dtype, weak)


def _pow_impl(x: NpArray, y: NpArray) -> NpArray:
    return np.power(x, y.astype(x.dtype)) if y.dtype != x.dtype else np.power(x, y)


def _pow_jvp_base(g: Array, ans: Array, x: Array, y: Array) -> Array:
    """``y x^(y-1)``; with an integer exponent 0 where ``y == 0`` (also at ``x == 0``, as JAX)."""
    dt = _aval(x).dtype
    if not dtypes.is_integer(_aval(y).dtype):
        return mul(g, mul(y, pow(x, sub(y, _full_like(y, 1.0)))))
    yf = convert_element_type(y, dt)
    exponent = sub(_replace_zero(yf), _full_like(yf, 1.0))  # y = 0: 0 * x^0, never 0 * inf
    return mul(g, mul(yf, pow(x, exponent)))


pow_p = Primitive("pow", params=NoParams)
_pow_same_dtype = _nary_abstract_eval("pow", 2, _INEXACT)
_elementwise(pow_p, 2, _INEXACT, _quiet(_pow_impl), abstract_eval=_pow_abstract_eval)
defjvp_with_output(pow_p, _pow_jvp_base, lambda g, ans, x, y: mul(g, mul(log(_replace_zero(x)), ans)))
defbroadcasting(pow_p)


@lowering_rules.register(pow_p)
def _pow_lowering(ctx: LoweringRuleContext, x: str, y: str) -> str:
    """An integer exponent is converted to the base's dtype first (as JAX lowers it), then
    both operands broadcast to the result's shape."""
    a, b = ctx.avals_in
    out = ctx.avals_out[0]
    y = ctx.convert(y, b, a.dtype)
    args = [ctx.broadcast(x, a, out.shape), ctx.broadcast(y, b.update(dtype=a.dtype), out.shape)]
    return ctx.op("stablehlo.power", args, out)


pow: BinaryFunction = _binary_function(pow_p)


max_p = Primitive("max", params=NoParams, commutative=True, idempotent=True)
_elementwise(max_p, 2, _ANY, np.maximum)
defjvp_with_output(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
                   lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
defbroadcasting(max_p)
lowering_rules.register(max_p)(_lower_nary("stablehlo.maximum"))
max: BinaryFunction = _binary_function(max_p)


min_p = Primitive("min", params=NoParams, commutative=True, idempotent=True)
_elementwise(min_p, 2, _ANY, np.minimum)
defjvp_with_output(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
                   lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
defbroadcasting(min_p)
lowering_rules.register(min_p)(_lower_nary("stablehlo.minimum"))
min: BinaryFunction = _binary_function(min_p)


nextafter_p = Primitive("nextafter", params=NoParams)
_elementwise(nextafter_p, 2, "float", np.nextafter)  # no jvp: JAX does not differentiate it
defbroadcasting(nextafter_p)
lowering_rules.register(nextafter_p)(_lower_nary("chlo.next_after"))
nextafter: BinaryFunction = _binary_function(nextafter_p)


def _sign_impl(x: NpArray) -> NpArray:
    if dtypes.is_complex(x.dtype):
        with np.errstate(invalid="ignore", divide="ignore"):
            mag = np.abs(x)
            return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)
    return np.asarray(np.sign(x))


sign_p = Primitive("sign", params=NoParams, idempotent=True)
_elementwise(sign_p, 1, _NUM, _sign_impl)
defjvp_zero(sign_p)
defvectorized(sign_p)


@lowering_rules.register(sign_p)
def _sign_lowering(ctx: LoweringRuleContext, x: str) -> str:
    """``stablehlo.sign`` rejects unsigned operands: there it is ``x != 0`` (as JAX lowers it)."""
    out = ctx.avals_out[0]
    if not dtypes.is_unsigned_int(out.dtype):
        return ctx.op("stablehlo.sign", [x], out)
    full = out.strip_weak_type()
    zero = ctx.broadcast(ctx.constant(0, out.dtype), ShapedArray((), out.dtype), out.shape)
    one = ctx.broadcast(ctx.constant(1, out.dtype), ShapedArray((), out.dtype), out.shape)
    pred = ShapedArray(out.shape, dtypes.bool_)
    is_zero = ctx.op_typed("stablehlo.compare EQ,", [x, zero], [full, full], pred, ", UNSIGNED")
    return ctx.op_typed("stablehlo.select", [is_zero, zero, one], [pred, full, full], full)


sign: UnaryFunction = _unary_function(sign_p)


floor_p = Primitive("floor", params=NoParams, idempotent=True)
_elementwise(floor_p, 1, "float", np.floor)
defjvp_zero(floor_p)
defvectorized(floor_p)
lowering_rules.register(floor_p)(_lower_unary("stablehlo.floor"))
floor: UnaryFunction = _unary_function(floor_p)


ceil_p = Primitive("ceil", params=NoParams, idempotent=True)
_elementwise(ceil_p, 1, "float", np.ceil)
defjvp_zero(ceil_p)
defvectorized(ceil_p)
lowering_rules.register(ceil_p)(_lower_unary("stablehlo.ceil"))
ceil: UnaryFunction = _unary_function(ceil_p)


@attrs.frozen(kw_only=True)
class RoundParams:
    """``round[rounding_method]``: 0 rounds halves away from zero, 1 to the nearest even."""

    rounding_method: int


round_p = Primitive("round", params=RoundParams, idempotent=True)


@round_p.def_abstract_eval
def _round_abstract_eval(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    _check_dtype("round", x.dtype, "float")
    return x


@round_p.def_impl
def _round_impl(x: NpArray, *, rounding_method: int) -> NpArray:
    if rounding_method == 1:  # to nearest even
        return np.asarray(np.round(x)).astype(x.dtype, copy=False)
    return np.asarray(np.sign(x) * np.floor(np.abs(x) + np.asarray(0.5, x.dtype))).astype(x.dtype, copy=False)


defjvp_zero(round_p)
defvectorized(round_p)


@lowering_rules.register(round_p)
def _round_lowering(ctx: LoweringRuleContext, x: str, *, rounding_method: int) -> str:
    op = "stablehlo.round_nearest_even" if rounding_method == 1 else "stablehlo.round_nearest_afz"
    return ctx.op(op, [x], ctx.avals_out[0])


def round(x: ArrayLike, rounding_method: int = 0) -> Array:
    """Round to integral values; ``rounding_method`` 0 = away from zero, 1 = to nearest even."""
    result: Array = round_p.bind(x, rounding_method=int(rounding_method))
    return result


abs_p = Primitive("abs", params=NoParams, idempotent=True)


@abs_p.def_abstract_eval
def _abs_abstract_eval(x: ShapedArray) -> ShapedArray:
    _check_dtype("abs", x.dtype, "float|complex|signed int")  # unsigned: rejected, as in JAX
    return shaped_array(x.shape, _real_dtype(x.dtype), x.weak_type)  # complex inputs give real outputs


@abs_p.def_impl
def _abs_impl(x: NpArray) -> NpArray:
    return np.asarray(np.abs(x)).astype(_real_dtype(x.dtype), copy=False)


defjvp(abs_p, lambda g, x: mul(g, sign(x)) if not dtypes.is_complex(_aval(x).dtype) else
       div(real(mul(conj(x), g)), abs(x)))
defvectorized(abs_p)


@lowering_rules.register(abs_p)
def _abs_lowering(ctx: LoweringRuleContext, x: str) -> str:
    if dtypes.is_complex(ctx.avals_in[0].dtype):
        return ctx.op_typed("stablehlo.abs", [x], ctx.avals_in, ctx.avals_out[0])
    return ctx.op("stablehlo.abs", [x], ctx.avals_out[0])


def abs(x: ArrayLike) -> Array:
    """Elementwise absolute value (``lax.abs``)."""
    result: Array = abs_p.bind(x)
    return result


@attrs.frozen(kw_only=True)
class IntegerPowParams:
    """``integer_pow[y]``: ``x ** y`` for the static Python integer ``y``."""

    y: int


integer_pow_p = Primitive("integer_pow", params=IntegerPowParams)


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
        n = builtins.abs(y)
        out = np.asarray(x**n if dtypes.is_integer(x.dtype) else np.power(x, np.asarray(n, x.dtype)))
        if y < 0:
            out = np.asarray(1 / out)
        return out.astype(x.dtype, copy=False)


@jvp_rules.register(integer_pow_p, symbolic_zeros=True)
def _integer_pow_jvp(primals: list[Array], tangents: list[Tangent], *, y: int) -> tuple[Array, Tangent]:
    (x,), (t,) = primals, tangents
    out = integer_pow(x, y)
    if isinstance(t, Zero):
        return out, Zero(get_aval(out))
    if y == 0:
        return out, Zero(_aval(x))
    return out, mul(t, mul(_full_like(x, float(y)), integer_pow(x, y - 1)))


defvectorized(integer_pow_p)


@lowering_rules.register(integer_pow_p)
def _integer_pow_lowering(ctx: LoweringRuleContext, x: str, *, y: int) -> str:
    out = ctx.avals_out[0]
    if y == 0:
        return ctx.constant(1, out.dtype, out.shape)
    acc: str | None = None
    base, n = x, builtins.abs(y)
    while n:  # square-and-multiply
        if n & 1:
            acc = base if acc is None else ctx.op("stablehlo.multiply", [acc, base], out)
        n >>= 1
        if n:
            base = ctx.op("stablehlo.multiply", [base, base], out)
    assert acc is not None
    if y < 0:
        return ctx.op("stablehlo.divide", [ctx.constant(1, out.dtype, out.shape), acc], out)
    return acc


def integer_pow(x: ArrayLike, y: int) -> Array:
    """``x ** y`` for a static Python integer ``y`` (``lax.integer_pow``)."""
    result: Array = integer_pow_p.bind(x, y=y)
    return result


sqrt_p = Primitive("sqrt", params=NoParams)
_elementwise(sqrt_p, 1, _INEXACT, _quiet(np.sqrt))
defjvp_with_output(sqrt_p, lambda g, ans, x: div(g, mul(_full_like(x, 2.0), ans)))
defvectorized(sqrt_p)
lowering_rules.register(sqrt_p)(_lower_unary("stablehlo.sqrt"))
sqrt: UnaryFunction = _unary_function(sqrt_p)


def _rsqrt_impl(x: NpArray) -> NpArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(1 / np.sqrt(x))


rsqrt_p = Primitive("rsqrt", params=NoParams)
_elementwise(rsqrt_p, 1, _INEXACT, _rsqrt_impl)
defjvp_with_output(rsqrt_p, lambda g, ans, x: mul(g, mul(_full_like(x, -0.5), div(ans, x))))
defvectorized(rsqrt_p)
lowering_rules.register(rsqrt_p)(_lower_unary("stablehlo.rsqrt"))
rsqrt: UnaryFunction = _unary_function(rsqrt_p)


cbrt_p = Primitive("cbrt", params=NoParams)
_elementwise(cbrt_p, 1, "float", np.cbrt)
defjvp_with_output(cbrt_p, lambda g, ans, x: mul(g, mul(_full_like(x, 1.0 / 3.0), integer_pow(ans, -2))))
defvectorized(cbrt_p)
lowering_rules.register(cbrt_p)(_lower_unary("stablehlo.cbrt"))
cbrt: UnaryFunction = _unary_function(cbrt_p)


# ==========================================================================================
# Exponentials, logarithms, trigonometric and hyperbolic functions
# ==========================================================================================
exp_p = Primitive("exp", params=NoParams)
_elementwise(exp_p, 1, _INEXACT, _quiet(np.exp))
defjvp_with_output(exp_p, lambda g, ans, x: mul(g, ans))
defvectorized(exp_p)
lowering_rules.register(exp_p)(_lower_unary("stablehlo.exponential"))
exp: UnaryFunction = _unary_function(exp_p)


exp2_p = Primitive("exp2", params=NoParams)
_elementwise(exp2_p, 1, _INEXACT, _quiet(np.exp2))
defjvp_with_output(exp2_p, lambda g, ans, x: mul(g, mul(ans, _full_like(x, math.log(2.0)))))
defvectorized(exp2_p)


@lowering_rules.register(exp2_p)
def _exp2_lowering(ctx: LoweringRuleContext, x: str) -> str:
    out = ctx.avals_out[0]
    two = ctx.constant(2, out.dtype, out.shape)
    return ctx.op("stablehlo.power", [two, x], out)


exp2: UnaryFunction = _unary_function(exp2_p)


log_p = Primitive("log", params=NoParams)
_elementwise(log_p, 1, _INEXACT, _quiet(np.log))
defjvp(log_p, lambda g, x: div(g, x))
defvectorized(log_p)
lowering_rules.register(log_p)(_lower_unary("stablehlo.log"))
log: UnaryFunction = _unary_function(log_p)


log1p_p = Primitive("log1p", params=NoParams)
_elementwise(log1p_p, 1, _INEXACT, _quiet(np.log1p))
defjvp(log1p_p, lambda g, x: div(g, add(x, _full_like(x, 1.0))))
defvectorized(log1p_p)
lowering_rules.register(log1p_p)(_lower_unary("stablehlo.log_plus_one"))
log1p: UnaryFunction = _unary_function(log1p_p)


expm1_p = Primitive("expm1", params=NoParams)
_elementwise(expm1_p, 1, _INEXACT, _quiet(np.expm1))
defjvp_with_output(expm1_p, lambda g, ans, x: mul(g, add(ans, _full_like(x, 1.0))))
defvectorized(expm1_p)
lowering_rules.register(expm1_p)(_lower_unary("stablehlo.exponential_minus_one"))
expm1: UnaryFunction = _unary_function(expm1_p)


tanh_p = Primitive("tanh", params=NoParams)
_elementwise(tanh_p, 1, _INEXACT, np.tanh)
defjvp_with_output(tanh_p, lambda g, ans, x: mul(g, sub(_full_like(x, 1.0), mul(ans, ans))))
defvectorized(tanh_p)
lowering_rules.register(tanh_p)(_lower_unary("stablehlo.tanh"))
tanh: UnaryFunction = _unary_function(tanh_p)


def _logistic_impl(x: NpArray) -> NpArray:
    with np.errstate(over="ignore"):
        return np.asarray(1 / (1 + np.exp(-x)))


logistic_p = Primitive("logistic", params=NoParams)
_elementwise(logistic_p, 1, _INEXACT, _logistic_impl)
defjvp_with_output(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(_full_like(x, 1.0), ans))))
defvectorized(logistic_p)
lowering_rules.register(logistic_p)(_lower_unary("stablehlo.logistic"))
logistic: UnaryFunction = _unary_function(logistic_p)


sin_p = Primitive("sin", params=NoParams)
_elementwise(sin_p, 1, _INEXACT, np.sin)
defjvp(sin_p, lambda g, x: mul(g, cos(x)))
defvectorized(sin_p)
lowering_rules.register(sin_p)(_lower_unary("stablehlo.sine"))
sin: UnaryFunction = _unary_function(sin_p)


cos_p = Primitive("cos", params=NoParams)
_elementwise(cos_p, 1, _INEXACT, np.cos)
defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))  # the neg stays on the tangent side, where it can cancel
defvectorized(cos_p)
lowering_rules.register(cos_p)(_lower_unary("stablehlo.cosine"))
cos: UnaryFunction = _unary_function(cos_p)


tan_p = Primitive("tan", params=NoParams)
_elementwise(tan_p, 1, _INEXACT, np.tan)
defjvp_with_output(tan_p, lambda g, ans, x: mul(g, add(_full_like(x, 1.0), mul(ans, ans))))
defvectorized(tan_p)
lowering_rules.register(tan_p)(_lower_unary("stablehlo.tan"))
tan: UnaryFunction = _unary_function(tan_p)


asin_p = Primitive("asin", params=NoParams)
_elementwise(asin_p, 1, _INEXACT, _quiet(np.arcsin))
defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_full_like(x, 1.0), mul(x, x)))))
defvectorized(asin_p)
lowering_rules.register(asin_p)(_lower_unary("chlo.asin"))
asin: UnaryFunction = _unary_function(asin_p)


acos_p = Primitive("acos", params=NoParams)
_elementwise(acos_p, 1, _INEXACT, _quiet(np.arccos))
defjvp(acos_p, lambda g, x: neg(mul(g, rsqrt(sub(_full_like(x, 1.0), mul(x, x))))))
defvectorized(acos_p)
lowering_rules.register(acos_p)(_lower_unary("chlo.acos"))
acos: UnaryFunction = _unary_function(acos_p)


atan_p = Primitive("atan", params=NoParams)
_elementwise(atan_p, 1, _INEXACT, np.arctan)
defjvp(atan_p, lambda g, x: div(g, add(_full_like(x, 1.0), mul(x, x))))
defvectorized(atan_p)
lowering_rules.register(atan_p)(_lower_unary("chlo.atan"))
atan: UnaryFunction = _unary_function(atan_p)


atan2_p = Primitive("atan2", params=NoParams)
_elementwise(atan2_p, 2, "float", np.arctan2)
defjvp(atan2_p,
       lambda g, x, y: mul(g, div(y, add(mul(x, x), mul(y, y)))),
       lambda g, x, y: neg(mul(g, div(x, add(mul(x, x), mul(y, y))))))
defbroadcasting(atan2_p)
lowering_rules.register(atan2_p)(_lower_nary("stablehlo.atan2"))
atan2: BinaryFunction = _binary_function(atan2_p)


sinh_p = Primitive("sinh", params=NoParams)
_elementwise(sinh_p, 1, _INEXACT, _quiet(np.sinh))
defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
defvectorized(sinh_p)
lowering_rules.register(sinh_p)(_lower_unary("chlo.sinh"))
sinh: UnaryFunction = _unary_function(sinh_p)


cosh_p = Primitive("cosh", params=NoParams)
_elementwise(cosh_p, 1, _INEXACT, _quiet(np.cosh))
defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
defvectorized(cosh_p)
lowering_rules.register(cosh_p)(_lower_unary("chlo.cosh"))
cosh: UnaryFunction = _unary_function(cosh_p)


asinh_p = Primitive("asinh", params=NoParams)
_elementwise(asinh_p, 1, _INEXACT, np.arcsinh)
defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(mul(x, x), _full_like(x, 1.0)))))
defvectorized(asinh_p)
lowering_rules.register(asinh_p)(_lower_unary("chlo.asinh"))
asinh: UnaryFunction = _unary_function(asinh_p)


acosh_p = Primitive("acosh", params=NoParams)
_elementwise(acosh_p, 1, _INEXACT, _quiet(np.arccosh))
defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(mul(x, x), _full_like(x, 1.0)))))
defvectorized(acosh_p)
lowering_rules.register(acosh_p)(_lower_unary("chlo.acosh"))
acosh: UnaryFunction = _unary_function(acosh_p)


atanh_p = Primitive("atanh", params=NoParams)
_elementwise(atanh_p, 1, _INEXACT, _quiet(np.arctanh))
defjvp(atanh_p, lambda g, x: div(g, sub(_full_like(x, 1.0), mul(x, x))))
defvectorized(atanh_p)
lowering_rules.register(atanh_p)(_lower_unary("chlo.atanh"))
atanh: UnaryFunction = _unary_function(atanh_p)


def _erf_impl(x: NpArray) -> NpArray:
    return np.asarray(np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)))


erf_p = Primitive("erf", params=NoParams)
_elementwise(erf_p, 1, "float", _erf_impl)
defjvp(erf_p, lambda g, x: mul(g, mul(_full_like(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x))))))
defvectorized(erf_p)
lowering_rules.register(erf_p)(_lower_unary("chlo.erf"))
erf: UnaryFunction = _unary_function(erf_p)


is_finite_p = Primitive("is_finite", params=NoParams)
_elementwise(is_finite_p, 1, "float", np.isfinite, dtypes.bool_)
defjvp_zero(is_finite_p)
defvectorized(is_finite_p)
lowering_rules.register(is_finite_p)(_lower_typed_unary("stablehlo.is_finite"))
is_finite: UnaryFunction = _unary_function(is_finite_p)


# ==========================================================================================
# Comparisons, logical and bitwise operations, shifts
# ==========================================================================================
eq_p = Primitive("eq", params=NoParams, commutative=True)
_elementwise(eq_p, 2, _ANY, np.equal, dtypes.bool_)
defjvp_zero(eq_p)
defbroadcasting(eq_p)
lowering_rules.register(eq_p)(_lower_compare("EQ"))
eq: BinaryFunction = _binary_function(eq_p)


ne_p = Primitive("ne", params=NoParams, commutative=True)
_elementwise(ne_p, 2, _ANY, np.not_equal, dtypes.bool_)
defjvp_zero(ne_p)
defbroadcasting(ne_p)
lowering_rules.register(ne_p)(_lower_compare("NE"))
ne: BinaryFunction = _binary_function(ne_p)


lt_p = Primitive("lt", params=NoParams)
_elementwise(lt_p, 2, _ORDERED, np.less, dtypes.bool_)
defjvp_zero(lt_p)
defbroadcasting(lt_p)
lowering_rules.register(lt_p)(_lower_compare("LT"))
lt: BinaryFunction = _binary_function(lt_p)


le_p = Primitive("le", params=NoParams)
_elementwise(le_p, 2, _ORDERED, np.less_equal, dtypes.bool_)
defjvp_zero(le_p)
defbroadcasting(le_p)
lowering_rules.register(le_p)(_lower_compare("LE"))
le: BinaryFunction = _binary_function(le_p)


gt_p = Primitive("gt", params=NoParams)
_elementwise(gt_p, 2, _ORDERED, np.greater, dtypes.bool_)
defjvp_zero(gt_p)
defbroadcasting(gt_p)
lowering_rules.register(gt_p)(_lower_compare("GT"))
gt: BinaryFunction = _binary_function(gt_p)


ge_p = Primitive("ge", params=NoParams)
_elementwise(ge_p, 2, _ORDERED, np.greater_equal, dtypes.bool_)
defjvp_zero(ge_p)
defbroadcasting(ge_p)
lowering_rules.register(ge_p)(_lower_compare("GE"))
ge: BinaryFunction = _binary_function(ge_p)


not_p = Primitive("not", params=NoParams)
_elementwise(not_p, 1, _INTEGRAL, np.invert)
defjvp_zero(not_p)
defvectorized(not_p)
lowering_rules.register(not_p)(_lower_unary("stablehlo.not"))
not_: UnaryFunction = _unary_function(not_p)


and_p = Primitive("and", params=NoParams, commutative=True, idempotent=True)
_elementwise(and_p, 2, _INTEGRAL, np.bitwise_and)
defjvp_zero(and_p)
defbroadcasting(and_p)
lowering_rules.register(and_p)(_lower_nary("stablehlo.and"))
and_: BinaryFunction = _binary_function(and_p)


or_p = Primitive("or", params=NoParams, commutative=True, idempotent=True)
_elementwise(or_p, 2, _INTEGRAL, np.bitwise_or)
defjvp_zero(or_p)
defbroadcasting(or_p)
lowering_rules.register(or_p)(_lower_nary("stablehlo.or"))
or_: BinaryFunction = _binary_function(or_p)


xor_p = Primitive("xor", params=NoParams, commutative=True)
_elementwise(xor_p, 2, _INTEGRAL, np.bitwise_xor)
defjvp_zero(xor_p)
defbroadcasting(xor_p)
lowering_rules.register(xor_p)(_lower_nary("stablehlo.xor"))
xor: BinaryFunction = _binary_function(xor_p)


def _shift_left_impl(x: NpArray, y: NpArray) -> NpArray:
    """``x << y``; amounts at or past the bit width give 0, as in XLA."""
    amount, ok = _shift_amount(x, y)[:2]
    with np.errstate(over="ignore"):
        return np.where(ok, np.left_shift(x, np.where(ok, amount, 0).astype(x.dtype)), np.zeros((), x.dtype))


shift_left_p = Primitive("shift_left", params=NoParams)
_elementwise(shift_left_p, 2, "int", _shift_left_impl)
defjvp_zero(shift_left_p)
defbroadcasting(shift_left_p)
lowering_rules.register(shift_left_p)(_lower_nary("stablehlo.shift_left"))
shift_left: BinaryFunction = _binary_function(shift_left_p)


def _shift_right_arithmetic_impl(x: NpArray, y: NpArray) -> NpArray:
    """Sign-filling ``x >> y`` on the bits of ``x``; amounts past the width fill entirely."""
    amount, ok, bits = _shift_amount(x, y)
    signed = x.view(f"i{x.dtype.itemsize}")
    out = np.right_shift(signed, np.where(ok, amount, bits - 1).astype(signed.dtype))
    return np.asarray(out).view(x.dtype)


shift_right_arithmetic_p = Primitive("shift_right_arithmetic", params=NoParams)
_elementwise(shift_right_arithmetic_p, 2, "int", _shift_right_arithmetic_impl)
defjvp_zero(shift_right_arithmetic_p)
defbroadcasting(shift_right_arithmetic_p)
lowering_rules.register(shift_right_arithmetic_p)(_lower_nary("stablehlo.shift_right_arithmetic"))
shift_right_arithmetic: BinaryFunction = _binary_function(shift_right_arithmetic_p)


def _shift_right_logical_impl(x: NpArray, y: NpArray) -> NpArray:
    """Zero-filling ``x >> y`` on the bits of ``x``; amounts past the width give 0."""
    amount, ok = _shift_amount(x, y)[:2]
    unsigned = x.view(f"u{x.dtype.itemsize}")
    out = np.where(ok, np.right_shift(unsigned, np.where(ok, amount, 0).astype(unsigned.dtype)), np.zeros((), unsigned.dtype))
    return np.asarray(out).view(x.dtype)


shift_right_logical_p = Primitive("shift_right_logical", params=NoParams)
_elementwise(shift_right_logical_p, 2, "int", _shift_right_logical_impl)
defjvp_zero(shift_right_logical_p)
defbroadcasting(shift_right_logical_p)
lowering_rules.register(shift_right_logical_p)(_lower_nary("stablehlo.shift_right_logical"))
shift_right_logical: BinaryFunction = _binary_function(shift_right_logical_p)


# ==========================================================================================
# Complex numbers
# ==========================================================================================
real_p = Primitive("real", params=NoParams)
_complex_part(real_p, np.real, real_out=True)
deflinear(real_p)
transpose_rules.register(real_p)(lambda ct, x: [complex(ct, _zeros(ct))])
defvectorized(real_p)
lowering_rules.register(real_p)(_lower_typed_unary("stablehlo.real"))


def real(x: ArrayLike) -> Array:
    """The real part of a complex ``x`` (``lax.real``)."""
    result: Array = real_p.bind(x)
    return result


imag_p = Primitive("imag", params=NoParams)
_complex_part(imag_p, np.imag, real_out=True)
deflinear(imag_p)
transpose_rules.register(imag_p)(lambda ct, x: [complex(_zeros(ct), neg(ct))])
defvectorized(imag_p)
lowering_rules.register(imag_p)(_lower_typed_unary("stablehlo.imag"))


def imag(x: ArrayLike) -> Array:
    """The imaginary part of a complex ``x`` (``lax.imag``)."""
    result: Array = imag_p.bind(x)
    return result


conj_p = Primitive("conj", params=NoParams)
_complex_part(conj_p, np.conj, real_out=False)
deflinear(conj_p)
transpose_rules.register(conj_p)(lambda ct, x: [conj(ct)])
defvectorized(conj_p)


@lowering_rules.register(conj_p)
def _conj_lowering(ctx: LoweringRuleContext, x: str) -> str:
    (a,) = ctx.avals_in
    part = a.update(dtype=_real_dtype(a.dtype))
    re = ctx.op_typed("stablehlo.real", [x], [a], part)
    im = ctx.op_typed("stablehlo.imag", [x], [a], part)
    return ctx.op_typed("stablehlo.complex", [re, ctx.op("stablehlo.negate", [im], part)], [part, part], a)


def conj(x: ArrayLike) -> Array:
    """The complex conjugate of a complex ``x`` (``lax.conj``)."""
    result: Array = conj_p.bind(x)
    return result


complex_p = Primitive("complex", params=NoParams)


@complex_p.def_abstract_eval
def _complex_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    for i, a in enumerate((x, y)):
        if a.dtype not in (dtypes.float32, dtypes.float64):  # XLA has no complex32/bfloat16 parts
            raise TypeError(f"complex does not accept dtype {dtypes.dtype_name(a.dtype)} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of float32, float64.")
    dt = same_dtypes("complex", (x, y))
    out = dtypes.complex128 if dt == dtypes.float64 else dtypes.complex64
    return shaped_array(broadcast_shapes_scalar("complex", (x, y)), out, x.weak_type and y.weak_type)


@complex_p.def_impl
def _complex_impl(x: NpArray, y: NpArray) -> NpArray:
    out = dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64
    return np.asarray(x + 1j * y).astype(out)


deflinear(complex_p)
transpose_rules.register(complex_p)(lambda ct, x, y: [_unbroadcast(real(ct), x), _unbroadcast(neg(imag(ct)), y)])
defbroadcasting(complex_p)


@lowering_rules.register(complex_p)
def _complex_lowering(ctx: LoweringRuleContext, x: str, y: str) -> str:
    out = ctx.avals_out[0]
    a, b = ctx.avals_in
    x, y = ctx.broadcast(x, a, out.shape), ctx.broadcast(y, b, out.shape)
    part = a.update(shape=out.shape)
    return ctx.op_typed("stablehlo.complex", [x, y], [part, part], out)


def complex(x: ArrayLike, y: ArrayLike) -> Array:
    """``x + i y`` (``lax.complex``)."""
    result: Array = complex_p.bind(x, y)
    return result


# ==========================================================================================
# Conversion, selection, clamping, stop_gradient
# ==========================================================================================
@attrs.frozen(kw_only=True)
class ConvertElementTypeParams:
    """``convert_element_type[new_dtype, weak_type]``: the result's dtype and weak type."""

    new_dtype: DType
    weak_type: bool


convert_element_type_p = Primitive("convert_element_type", params=ConvertElementTypeParams)


@convert_element_type_p.def_abstract_eval
def _convert_abstract_eval(x: ShapedArray, *, new_dtype: DType, weak_type: bool) -> ShapedArray:
    return shaped_array(x.shape, new_dtype, weak_type)


@convert_element_type_p.def_impl
def _convert_impl(x: NpArray, *, new_dtype: DType, weak_type: bool) -> NpArray:
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    with np.errstate(invalid="ignore", over="ignore"):
        if dtypes.is_integer(new_dtype) and dtypes.is_floating(x.dtype):
            # XLA saturates (NaN is 0). Clamp in float64, where every narrower float is exact,
            # and write the bounds as integers: float64(2**63 - 1) would round past int64's max.
            lo, hi = dtypes.int_range(new_dtype)
            t = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
            inside = np.clip(t, lo, hi).astype(new_dtype)
            return np.where(t >= hi, np.array(hi, new_dtype), np.where(t <= lo, np.array(lo, new_dtype), inside))
        if new_dtype == dtypes.bool_ and x.dtype == dtypes.float32:
            # XLA's CPU compare treats float32 denormals as zero (DAZ): they convert to False
            return np.asarray(~(np.abs(x) < np.finfo(np.float32).tiny))
        return x.astype(new_dtype)


convert_element_type_p.weak_type_rule = lambda weaks, params: bool(params["weak_type"])


@jvp_rules.register(convert_element_type_p, symbolic_zeros=True)
def _convert_jvp(
    primals: list[Array], tangents: list[Tangent], *, new_dtype: DType, weak_type: bool
) -> tuple[Array, Tangent]:
    (x,), (t,) = primals, tangents
    out: Array = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(t) is Zero or not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(_aval(x).dtype):
        return out, Zero(get_aval(out))
    t_out: Array = convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)
    return out, t_out


@transpose_rules.register(convert_element_type_p)
def _convert_transpose(ct: Array, x: LinearOperand, *, new_dtype: DType, weak_type: bool) -> list[Array]:
    a = _aval(x)
    return [convert_element_type_p.bind(ct, new_dtype=a.dtype, weak_type=a.weak_type)]


defvectorized(convert_element_type_p)


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


def convert_element_type(x: ArrayLike, new_dtype: DTypeLike, weak_type: bool = False) -> Array:
    """Cast to ``new_dtype`` (canonicalized for the 64-bit mode), as ``lax.convert_element_type``."""
    dt = dtypes.canonicalize_dtype(dtypes.to_dtype(new_dtype))
    if isinstance(x, Array) and x.dtype == dt and x.weak_type == bool(weak_type):
        return x  # a no-op conversion stages nothing, as in JAX
    result: Array = convert_element_type_p.bind(x, new_dtype=dt, weak_type=bool(weak_type))
    return result


select_n_p = Primitive("select_n", params=NoParams)


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    # JAX's shape rule, then its dtype rule (JAX names select_n "select" here), in its words.
    if not cases:
        raise TypeError("select must have at least one case")
    shape = cases[0].shape
    if any(c.shape != shape for c in cases[1:]):
        raise TypeError(f"select cases must have the same shapes, got [{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != shape:
        raise TypeError("select `which` must be scalar or have the same shape as cases, "
                        f"got `which` shape {which.shape} but case shape {shape}.")
    dt = same_dtypes("select", cases)
    if not (dtypes.is_bool(which.dtype) or dtypes.is_integer(which.dtype)):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype}.")
    if dtypes.is_bool(which.dtype) and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return shaped_array(shape, dt, all(c.weak_type for c in cases))


@select_n_p.def_impl
def _select_n_impl(which: NpArray, *cases: NpArray) -> NpArray:
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.asarray(np.where(which, cases[1], cases[0]))
    return np.asarray(np.choose(np.broadcast_to(which, cases[0].shape), cases))


select_n_p.weak_type_rule = lambda weaks, params: all(weaks[1:])


@jvp_rules.register(select_n_p, symbolic_zeros=True)
def _select_n_jvp(primals: list[Array], tangents: list[Tangent]) -> tuple[Array, Tangent]:
    which, *cases = primals
    out = select_n(which, *cases)
    case_ts = tangents[1:]
    if all(type(t) is Zero for t in case_ts):
        return out, Zero(get_aval(out))
    return out, select_n(which, *[instantiate(t) for t in case_ts])


@transpose_rules.register(select_n_p)
def _select_n_transpose(ct: Array, which: LinearOperand, *cases: LinearOperand) -> list[Array | None]:
    if isinstance(which, UndefinedPrimal):
        raise ValueError("select_n is not linear in its predicate")
    zeros = _zeros(ct)
    out: list[Array | None] = [None]
    for i, c in enumerate(cases):
        if isinstance(c, UndefinedPrimal):
            branches = [ct if j == i else zeros for j in range(len(cases))]
            out.append(_weak_like(select_n(which, *branches), c.aval))
        else:
            out.append(None)
    return out


@batching_rules.register(select_n_p)
def _select_n_batching(axis_size: int, vals: list[Array], dims: list[Dim]) -> tuple[Array, Dim]:
    """Cases never broadcast against each other (only the predicate may be rank 0), so
    every case is given the batch axis at 0, and a batched rank-0 predicate is broadcast."""
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
            new_which = vspace().broadcast_in_dim(new_which, (axis_size,) + case_shape, (0,))
    return select_n(new_which, *new_cases), 0


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
    # integer selector: a chain of selects, last case for out-of-range as XLA's case does.
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        idx = ctx.constant(i, w.dtype, w.shape)
        kind = ", UNSIGNED" if dtypes.is_unsigned_int(w.dtype) else ", SIGNED"
        pred = ctx.op_typed("stablehlo.compare EQ,", [which, idx], [w, w], pred_type, kind)
        result = ctx.emit(f"stablehlo.select {pred}, {cases[i]}, {result} : {tensor_type(pred_type)}, {tensor_type(out)}")
    return result


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """``cases[which]`` elementwise (``lax.select_n``); ``which`` is bool or an integer."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    result: Array = select_n_p.bind(which, *cases)
    return result


clamp_p = Primitive("clamp", params=NoParams)


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for b, what in ((lo, "min"), (hi, "max")):  # as JAX: shapes first, then dtypes (of any kind)
        if b.shape not in ((), x.shape):
            raise TypeError(f"clamp requires {what}.shape == operand.shape or {what}.shape == (), got "
                            f"{what}.shape={b.shape}, operand.shape={x.shape}.")
    dt = same_dtypes("clamp", (lo, x, hi))
    _check_dtype("clamp", dt, _ANY)
    weak = lo.weak_type and x.weak_type and hi.weak_type
    return x if x.weak_type == weak else x.update(weak_type=weak)


@clamp_p.def_impl
def _clamp_impl(lo: NpArray, x: NpArray, hi: NpArray) -> NpArray:
    return np.asarray(np.minimum(np.maximum(x, lo), hi)).astype(x.dtype, copy=False)


clamp_p.weak_type_rule = _all_weak


def _mask(g: Array, pred: Array) -> Array:
    """``g`` where ``pred``, else 0."""
    return mul(g, convert_element_type(pred, _aval(g).dtype))


defjvp(clamp_p,
       lambda g, lo, x, hi: _mask(g, lt(x, lo)),
       lambda g, lo, x, hi: _mask(g, and_(gt(x, lo), lt(x, hi))),
       lambda g, lo, x, hi: _mask(g, lt(hi, x)))
defbroadcasting(clamp_p)


@lowering_rules.register(clamp_p)
def _clamp_lowering(ctx: LoweringRuleContext, lo: str, x: str, hi: str) -> str:
    out = ctx.avals_out[0]
    lo_a, _, hi_a = ctx.avals_in
    return ctx.op("stablehlo.clamp", [ctx.broadcast(lo, lo_a, out.shape), x, ctx.broadcast(hi, hi_a, out.shape)], out)


def clamp(lo: ArrayLike, x: ArrayLike, hi: ArrayLike) -> Array:
    """``min(max(x, lo), hi)`` (``lax.clamp``)."""
    result: Array = clamp_p.bind(lo, x, hi)
    return result


stop_gradient_p = Primitive("stop_gradient", params=NoParams)
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_impl(lambda x: x)
defjvp_zero(stop_gradient_p)
defvectorized(stop_gradient_p)
lowering_rules.register(stop_gradient_p)(lambda ctx, x: x)


def stop_gradient(x: ArrayLike) -> Array:
    """Identity whose derivative is zero."""
    result: Array = stop_gradient_p.bind(x)
    return result


# ==========================================================================================
# Conveniences built from the primitives above
# ==========================================================================================
square_p = Primitive("square", params=NoParams)
_elementwise(square_p, 1, _NUM, _quiet(np.square))
defjvp(square_p, lambda g, x: mul(g, mul(_full_like(x, 2.0), x)))
defvectorized(square_p)
lowering_rules.register(square_p)(lambda ctx, x: ctx.op("stablehlo.multiply", [x, x], ctx.avals_out[0]))
square: UnaryFunction = _unary_function(square_p)
square.__doc__ = "``x * x`` (``lax.square``)."


def reciprocal(x: ArrayLike) -> Array:
    """``1 / x`` (``lax.reciprocal``), as ``integer_pow(x, -1)``."""
    return integer_pow(x, -1)


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """``on_true`` where ``pred`` else ``on_false`` (``lax.select``: ``select_n`` with the
    cases in predicate order)."""
    return select_n(pred, on_false, on_true)

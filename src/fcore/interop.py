"""Interoperability with JAX: JAX's jaxprs in, JAX-traceable callables out.

``jax`` is an optional (test) dependency and ``src/fcore`` never imports it at module level
(docs/design.md). ``from_jax`` therefore reads JAX's jaxpr objects by duck typing — only
their attributes ``jaxpr``, ``consts``, ``constvars``, ``invars``, ``outvars``, ``eqns``,
``primitive.name``, ``params``, ``aval.shape/dtype/weak_type`` and ``Literal.val`` — and
``to_jax_callable`` loads ``jax`` and ``jax.lax`` with ``importlib.import_module`` when it is
called, so that importing ``fcore.interop`` never loads JAX.

Primitives are matched by name: fcore's primitives have ``jax.lax``'s names and parameters.
Where JAX's form differs, a small table translates (``pjit``/``jit`` calls, ``square``,
``copy``, ``split``, custom-derivative calls, JAX-only parameters such as ``sharding``).
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from fcore.errors import JaxprTypeError
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.builder import JaxprBuilder
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import Params, ParamValue
from fcore.ir.primitive import lookup_primitive
from fcore.ir.printer import pp_eqn_in
from fcore.ir.typecheck import typecheck
from fcore.lax.call import hoist_consts, jit_p
from fcore.lax.dot import Precision

__all__ = ["from_jax", "to_jax_callable", "JaxRule"]

# ======================================================================================
# JAX -> fcore
# ======================================================================================

#: JAX parameters that say where values live, not what they are: dropped whatever their value.
_PLACEMENT_PARAMS = frozenset({"sharding", "out_sharding", "accumulation_type"})

#: n-ary elementwise primitives: JAX's versions also broadcast size-1 axes, fcore's only rank-0
#: operands, so ``from_jax`` makes such broadcasts explicit (``broadcast_in_dim``).
_ELEMENTWISE_NARY = frozenset({
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and", "or", "xor",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge", "complex", "select_n", "clamp",
})


def from_jax(jax_closed_jaxpr: object) -> ClosedJaxpr:
    """The fcore ``ClosedJaxpr`` of a JAX ``ClosedJaxpr`` (e.g. from ``jax.make_jaxpr(f)(x)``).

    Equations are rebuilt with fcore's primitives of the same name, typed by fcore's own
    abstract evaluation, and the result is type-checked. JAX's nested ``pjit``/``jit`` calls
    become fcore ``jit`` equations (their jaxprs converted recursively, constants hoisted to
    leading operands); ``custom_jvp_call``/``custom_vjp_call`` are inlined (the custom rule is
    dropped: fcore differentiates the primal computation), and so are ``checkpoint``/``remat``
    calls (rematerialization is a memory policy, not a value). Non-scalar literals become
    constants. An unknown primitive, or a JAX parameter without fcore equivalent, raises
    ``NotImplementedError`` naming it.
    """
    jaxpr = getattr(jax_closed_jaxpr, "jaxpr", None)
    if jaxpr is None or not hasattr(jaxpr, "eqns"):
        raise TypeError(f"from_jax expects a JAX ClosedJaxpr (from jax.make_jaxpr), got {type(jax_closed_jaxpr).__name__}")
    consts = list(getattr(jax_closed_jaxpr, "consts", ()))
    closed = _Converter().convert(jaxpr, consts)
    typecheck(closed)
    return closed


def _aval(jax_aval: object) -> ShapedArray:
    """An fcore aval from a JAX ``ShapedArray`` (shape, dtype, weak_type)."""
    shape = getattr(jax_aval, "shape", None)
    dtype = getattr(jax_aval, "dtype", None)
    if shape is None or dtype is None:
        raise NotImplementedError(f"from_jax: abstract value {jax_aval!r} is not an array type")
    dt = np.dtype(dtype)
    if not dtypes.is_supported(dt):
        raise NotImplementedError(f"from_jax: dtype {dt} of {jax_aval!r} is not supported by fcore")
    return shaped_array(tuple(int(d) for d in shape), dt, bool(getattr(jax_aval, "weak_type", False)))


def _is_literal(atom: object) -> bool:
    return hasattr(atom, "val")  # JAX's Var has no ``val``


def _is_jax_closed_jaxpr(value: object) -> bool:
    return hasattr(value, "jaxpr") and hasattr(value, "consts") and hasattr(getattr(value, "jaxpr"), "eqns")


class _Converter:
    """Rebuilds one JAX jaxpr into a ``JaxprBuilder``; one instance per (nested) jaxpr."""

    __slots__ = ("builder", "consts", "env")

    def __init__(self) -> None:
        self.builder = JaxprBuilder()
        self.consts: list[np.ndarray[Any, Any]] = []
        self.env: dict[int, Atom] = {}

    def convert(self, jaxpr: object, consts: Sequence[object]) -> ClosedJaxpr:
        b = self.builder
        for v, c in zip(_attr_seq(jaxpr, "constvars"), consts, strict=True):
            self.env[id(v)] = b.constvar(_aval(getattr(v, "aval")))
            self.consts.append(np.asarray(c))
        for v in _attr_seq(jaxpr, "invars"):
            self.env[id(v)] = b.invar(_aval(getattr(v, "aval")))
        for i, eqn in enumerate(_attr_seq(jaxpr, "eqns")):
            name = str(getattr(getattr(eqn, "primitive"), "name"))
            ins = [self.read(a) for a in _attr_seq(eqn, "invars")]
            out_avals = [_aval(getattr(v, "aval")) for v in _attr_seq(eqn, "outvars")]
            params: Mapping[str, object] = getattr(eqn, "params")
            try:
                outs = self.equation(name, ins, params, out_avals)
            except NotImplementedError as e:
                raise NotImplementedError(f"from_jax: JAX equation {i} ({name}): {e}") from None
            except JaxprTypeError as e:
                raise JaxprTypeError(f"from_jax: JAX equation {i} ({name}) is ill-typed for fcore: {e}") from None
            for v, o, want in zip(_attr_seq(eqn, "outvars"), outs, out_avals, strict=True):
                got = o.aval
                if got.shape != want.shape or got.dtype != want.dtype:
                    raise TypeError(
                        f"from_jax: equation {i} ({name}): JAX types an output {want.str_short()}, "
                        f"fcore's abstract evaluation gives {got.str_short()}"
                    )
                self.env[id(v)] = o
        outs = [self.read(a) for a in _attr_seq(jaxpr, "outvars")]
        return b.build_closed(outs, self.consts)

    def read(self, atom: object) -> Atom:
        if _is_literal(atom):
            aval = _aval(getattr(atom, "aval"))
            value = np.asarray(getattr(atom, "val"), aval.dtype)
            if aval.shape == ():
                return Literal.of(value, aval)
            var = self.builder.constvar(aval)  # array literals are constants in fcore
            self.consts.append(value)
            return var
        return self.env[id(atom)]

    def equation(
        self, name: str, ins: list[Atom], params: Mapping[str, object], out_avals: list[ShapedArray]
    ) -> list[Atom]:
        """Add the fcore equation(s) computing JAX's equation ``name``; return its results."""
        special = _SPECIAL.get(name)
        if special is not None:
            return special(self, ins, params, out_avals)
        prim = lookup_primitive(name)
        if prim is None or prim is jit_p:
            raise NotImplementedError(f"JAX primitive '{name}' has no fcore counterpart")
        new_params: dict[str, ParamValue] = {}
        for key, value in params.items():
            if prim.param_names is not None and key not in prim.param_names:
                if key in _PLACEMENT_PARAMS or value is None:
                    continue
                raise NotImplementedError(f"JAX parameter {key}={value!r} of '{name}' has no fcore equivalent")
            new_params[key] = _param(key, value)
        if name in _ELEMENTWISE_NARY and out_avals:
            ins = [self.broadcast(a, out_avals[0].shape) for a in ins]
        return list(self.builder.eqn(prim, ins, **new_params))

    def broadcast(self, a: Atom, shape: tuple[int, ...]) -> Atom:
        """``a`` broadcast to ``shape`` NumPy-style, unless it is rank-0 or already has it."""
        s = a.aval.shape
        if s == () or s == shape:
            return a
        prim = lookup_primitive("broadcast_in_dim")
        assert prim is not None
        dims = tuple(range(len(shape) - len(s), len(shape)))
        (out,) = self.builder.eqn(prim, [a], shape=shape, broadcast_dimensions=dims)
        return out

    def inline(self, inner: ClosedJaxpr, ins: Sequence[Atom]) -> list[Atom]:
        """Replay ``inner``'s equations here (its consts become constants of this jaxpr)."""
        sub: dict[int, Atom] = {}
        for v, c in zip(inner.jaxpr.constvars, inner.consts):
            sub[id(v)] = self.builder.constvar(v.aval)
            self.consts.append(np.asarray(c))
        for v, a in zip(inner.jaxpr.invars, ins, strict=True):
            sub[id(v)] = a
        for e in inner.jaxpr.eqns:
            outs = self.builder.eqn(e.primitive, [_sub(sub, a) for a in e.invars], **e.params)
            for v, o in zip(e.outvars, outs):
                sub[id(v)] = o
        return [_sub(sub, a) for a in inner.jaxpr.outvars]


def _sub(sub: dict[int, Atom], a: Atom) -> Atom:
    return sub[id(a)] if isinstance(a, Var) else a


def _attr_seq(obj: object, name: str) -> list[object]:
    return list(getattr(obj, name))


def _param(key: str, value: object) -> ParamValue:
    """A JAX parameter value as an fcore ``ParamValue`` (lists become tuples, NumPy scalars Python's)."""
    if value is None or isinstance(value, (bool, str, np.dtype)):
        return value
    if isinstance(value, enum.Enum):
        if type(value).__name__ == "Precision":
            return Precision[value.name]
        if isinstance(value, int):  # IntEnums such as RoundingMethod: fcore takes the int
            return int(value)
        raise NotImplementedError(f"JAX parameter {key}={value!r}: enum {type(value).__name__} has no fcore equivalent")
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (complex, np.complexfloating)):
        return complex(value)
    if isinstance(value, (list, tuple)):
        if key == "precision" and len(value) == 2:
            return tuple(Precision.DEFAULT if p is None else _param(key, p) for p in value)
        return tuple(_param(key, v) for v in value)
    if _is_jax_closed_jaxpr(value):
        return from_jax(value)
    raise NotImplementedError(f"JAX parameter {key}={value!r} ({type(value).__name__}) has no fcore equivalent")


# -- JAX primitives without a same-named fcore primitive --------------------------------
_Special = Callable[[_Converter, list[Atom], Mapping[str, object], list[ShapedArray]], list[Atom]]


def _convert_call(conv: _Converter, ins: list[Atom], params: Mapping[str, object], outs: list[ShapedArray]) -> list[Atom]:
    inner = params.get("jaxpr", params.get("call_jaxpr"))
    if not _is_jax_closed_jaxpr(inner):
        raise NotImplementedError(f"call without a closed 'jaxpr' parameter: {sorted(params)}")
    hoisted, consts = hoist_consts(from_jax(inner))
    const_atoms: list[Atom] = []
    for v, c in zip(hoisted.jaxpr.invars, consts):
        const_atoms.append(conv.builder.constvar(v.aval))
        conv.consts.append(np.asarray(c))
    name = params.get("name")
    return list(conv.builder.eqn(jit_p, [*const_atoms, *ins], jaxpr=hoisted, name=str(name) if name else "jit"))


def _convert_inlined(
    conv: _Converter, ins: list[Atom], params: Mapping[str, object], outs: list[ShapedArray]
) -> list[Atom]:
    """Calls whose only effect on values is their body (custom derivatives, rematerialization)."""
    inner = params.get("call_jaxpr", params.get("jaxpr"))
    if _is_jax_closed_jaxpr(inner):
        return conv.inline(from_jax(inner), ins)
    if inner is not None and hasattr(inner, "eqns") and not _attr_seq(inner, "constvars"):  # an open jaxpr
        closed = _Converter().convert(inner, [])
        typecheck(closed)
        return conv.inline(closed, ins)
    raise NotImplementedError(f"call without a 'call_jaxpr' or 'jaxpr' parameter: {sorted(params)}")


def _convert_square(conv: _Converter, ins: list[Atom], params: Mapping[str, object], outs: list[ShapedArray]) -> list[Atom]:
    return conv.equation("integer_pow", ins, {"y": 2}, outs)


def _convert_copy(conv: _Converter, ins: list[Atom], params: Mapping[str, object], outs: list[ShapedArray]) -> list[Atom]:
    return list(ins)


def _convert_split(conv: _Converter, ins: list[Atom], params: Mapping[str, object], outs: list[ShapedArray]) -> list[Atom]:
    (x,) = ins
    axis = _ints((params["axis"],))[0]
    sizes = _ints(params["sizes"])
    results: list[Atom] = []
    start = 0
    for size in sizes:
        lo = [0] * x.aval.ndim
        hi = list(x.aval.shape)
        lo[axis], hi[axis] = start, start + size
        results.extend(conv.equation("slice", [x], {"start_indices": tuple(lo), "limit_indices": tuple(hi),
                                                     "strides": None}, outs))
        start += size
    return results


def _ints(value: object) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise NotImplementedError(f"expected a sequence of integers, got {value!r}")
    if not all(isinstance(v, (int, np.integer)) for v in value):
        raise NotImplementedError(f"expected integers, got {value!r}")
    return [int(v) for v in value]


_SPECIAL: dict[str, _Special] = {
    "pjit": _convert_call,
    "jit": _convert_call,
    "closed_call": _convert_call,
    "custom_jvp_call": _convert_inlined,
    "custom_vjp_call": _convert_inlined,
    "custom_vjp_call_jaxpr": _convert_inlined,
    "checkpoint": _convert_inlined,
    "remat2": _convert_inlined,
    "square": _convert_square,
    "copy": _convert_copy,
    "copy_p": _convert_copy,
    "split": _convert_split,
}


# ======================================================================================
# fcore -> JAX
# ======================================================================================

#: How to apply one fcore primitive with JAX: ``rule(lax, operands, params) -> result(s)``,
#: where ``lax`` is the ``jax.lax`` module. Results follow the primitive's ``multiple_results``.
JaxRule = Callable[[ModuleType, list[Any], Params], Any]


def to_jax_callable(
    closed: ClosedJaxpr, rules: Mapping[str, JaxRule] | None = None
) -> Callable[..., list[Any]]:
    """A function computing ``closed`` with ``jax.lax`` operations (so ``jax.jit``, ``jax.grad``
    and ``jax.vmap`` apply to it); it takes the jaxpr's inputs and returns the list of outputs.

    Each primitive is applied with the ``jax.lax`` function of the same name (see ``JaxRule``);
    ``rules`` adds or overrides rules by primitive name, e.g. for user-defined primitives.
    Nested ``jit`` equations become ``jax.jit`` calls. ``jax`` is imported here, when called
    (``importlib.import_module``), never when ``fcore.interop`` is imported. Literals and
    constants are passed as NumPy values of their dtype (with JAX's 64-bit mode off, JAX
    computes 64-bit dtypes in 32 bits).
    """
    jax = importlib.import_module("jax")
    lax = importlib.import_module("jax.lax")
    table: dict[str, JaxRule] = {**_JAX_RULES, **(rules or {})}
    return _jax_fun(jax, lax, table, closed)


def _jax_fun(jax: ModuleType, lax: ModuleType, table: Mapping[str, JaxRule], closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    jaxpr = closed.jaxpr
    consts = [np.asarray(c) for c in closed.consts]
    steps: list[tuple[JaxprEqn, Callable[[list[Any]], Any]]] = []
    for i, eqn in enumerate(jaxpr.eqns):
        steps.append((eqn, _step(jax, lax, table, jaxpr, i)))

    def fun(*args: Any) -> list[Any]:
        if len(args) != len(jaxpr.invars):
            raise TypeError(f"the jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
        env: dict[int, Any] = {}
        for v, x in zip(jaxpr.constvars, consts):
            env[id(v)] = x
        for v, x in zip(jaxpr.invars, args):
            env[id(v)] = x

        def read(a: Atom) -> Any:
            return np.asarray(a.val, a.aval.dtype) if isinstance(a, Literal) else env[id(a)]

        for eqn, apply in steps:
            out = apply([read(a) for a in eqn.invars])
            if eqn.primitive.multiple_results:
                for v, o in zip(eqn.outvars, out, strict=True):
                    env[id(v)] = o
            else:
                env[id(eqn.outvars[0])] = out
        return [read(a) for a in jaxpr.outvars]

    return fun


def _step(jax: ModuleType, lax: ModuleType, table: Mapping[str, JaxRule], jaxpr: Jaxpr, i: int) -> Callable[[list[Any]], Any]:
    """The JAX computation of equation ``i`` (nested ``jit`` jaxprs are converted once, here)."""
    eqn = jaxpr.eqns[i]
    name = eqn.primitive.name
    params = eqn.params
    if eqn.primitive is jit_p and name not in table:
        inner = params["jaxpr"]
        assert isinstance(inner, ClosedJaxpr)
        body = _jax_fun(jax, lax, table, inner)
        body.__name__ = str(params.get("name", "jit"))
        jitted = jax.jit(body)
        return lambda args: list(jitted(*args))
    rule = table.get(name)
    if rule is None:
        raise NotImplementedError(
            f"to_jax_callable: no JAX rule for primitive '{name}' (equation {i}: {pp_eqn_in(jaxpr, i)}); "
            "pass one in `rules`"
        )
    return lambda args: rule(lax, args, params)


def _same_name(name: str) -> JaxRule:
    """``lax.<name>(*operands)`` for parameterless primitives."""
    return lambda lax, xs, p: getattr(lax, name)(*xs)


def _precision(value: ParamValue) -> Any:
    """fcore ``Precision`` values as JAX's (by member name)."""
    if value is None:
        return None
    jax_precision = importlib.import_module("jax.lax").Precision
    if isinstance(value, tuple):
        return tuple(jax_precision[p.name] if isinstance(p, enum.Enum) else p for p in value)
    return jax_precision[value.name] if isinstance(value, enum.Enum) else value


_JAX_RULES: dict[str, JaxRule] = {
    **{n: _same_name(n) for n in (
        "neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh",
        "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
        "atanh", "sqrt", "rsqrt", "cbrt", "erf", "abs", "real", "imag", "conj", "complex", "add", "sub",
        "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "eq", "ne", "lt", "le", "gt",
        "ge", "select_n", "clamp", "stop_gradient", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    )},
    "not": _same_name("bitwise_not"),
    "and": _same_name("bitwise_and"),
    "or": _same_name("bitwise_or"),
    "xor": _same_name("bitwise_xor"),
    "integer_pow": lambda lax, xs, p: lax.integer_pow(xs[0], p["y"]),
    "round": lambda lax, xs, p: lax.round(xs[0], lax.RoundingMethod(p["rounding_method"])),
    "convert_element_type": lambda lax, xs, p: lax.convert_element_type(xs[0], p["new_dtype"]),
    "broadcast_in_dim": lambda lax, xs, p: lax.broadcast_in_dim(xs[0], p["shape"], p["broadcast_dimensions"]),
    "reshape": lambda lax, xs, p: lax.reshape(xs[0], p["new_sizes"], p["dimensions"]),
    "slice": lambda lax, xs, p: lax.slice(xs[0], p["start_indices"], p["limit_indices"], p["strides"]),
    "concatenate": lambda lax, xs, p: lax.concatenate(xs, p["dimension"]),
    "transpose": lambda lax, xs, p: lax.transpose(xs[0], p["permutation"]),
    "squeeze": lambda lax, xs, p: lax.squeeze(xs[0], p["dimensions"]),
    "rev": lambda lax, xs, p: lax.rev(xs[0], p["dimensions"]),
    "pad": lambda lax, xs, p: lax.pad(xs[0], xs[1], p["padding_config"]),
    "iota": lambda lax, xs, p: lax.broadcasted_iota(p["dtype"], p["shape"], p["dimension"]),
    "dynamic_slice": lambda lax, xs, p: lax.dynamic_slice(xs[0], xs[1:], p["slice_sizes"]),
    "dynamic_update_slice": lambda lax, xs, p: lax.dynamic_update_slice(xs[0], xs[1], xs[2:]),
    "argmax": lambda lax, xs, p: lax.argmax(xs[0], _single_axis(p), p["index_dtype"]),
    "argmin": lambda lax, xs, p: lax.argmin(xs[0], _single_axis(p), p["index_dtype"]),
    **{n: (lambda n: lambda lax, xs, p: getattr(lax, n)(xs[0], p["axis"], p["reverse"]))(n) for n in (
        "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
    )},
    **{n: (lambda n: lambda lax, xs, p: getattr(lax, n)(xs[0], p["axes"]))(n) for n in (
        "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor",
    )},
    "dot_general": lambda lax, xs, p: lax.dot_general(
        xs[0], xs[1], p["dimension_numbers"], _precision(p["precision"]), p["preferred_element_type"]
    ),
}


def _single_axis(p: Params) -> int:
    axes = p["axes"]
    assert isinstance(axes, tuple) and len(axes) == 1 and isinstance(axes[0], int)
    return axes[0]

"""fcore jaxprs out: ``to_jax_callable``, a function of ``jax.lax`` operations.

First-order primitives have a ``JaxRule`` each (``rule(lax, operands, params)``); primitives
holding jaxprs (``jit``, ``while``, ``cond``, ``scan``, the custom-derivative calls,
``remat2``) are built here from the converted inner functions: ``jax.jit``,
``lax.while_loop``, ``lax.switch``, ``lax.scan``, ``jax.custom_jvp``/``custom_vjp`` and
``jax.custom_batching.custom_vmap`` (whose rules are fcore's, converted in turn),
``lax.custom_linear_solve`` and ``jax.checkpoint``. Enum and dimension-number
parameters become JAX's classes of the same name.
"""

from __future__ import annotations

import enum
import importlib
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

import attrs
import numpy as np

from fcore.api.staging import ShapeDtypeStruct, make_jaxpr
from fcore.custom_batching import VmapRule
from fcore.ir import dtypes
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal
from fcore.ir.params import Params, ParamStruct, ParamValue
from fcore.ir.printer import pp_eqn_in
from fcore.lax.custom_derivatives import CustomBwd
from fcore.lax.remat import DotsSaveable, EitherSaves, EverythingSaveable, NothingSaveable, SaveNames
from fcore.lax.traced_rules import LazyJaxpr

__all__ = ["to_jax_callable", "JaxRule"]

#: How to apply one fcore primitive with JAX: ``rule(lax, operands, params) -> result(s)``,
#: where ``lax`` is the ``jax.lax`` module. Results follow the primitive's ``multiple_results``.
JaxRule = Callable[[ModuleType, list[Any], Params], Any]
Fun = Callable[..., list[Any]]


def to_jax_callable(closed: ClosedJaxpr, rules: Mapping[str, JaxRule] | None = None) -> Fun:
    """A function computing ``closed`` with ``jax.lax`` operations (so ``jax.jit``, ``jax.grad``
    and ``jax.vmap`` apply to it); it takes the jaxpr's inputs and returns the list of outputs.

    Each primitive is applied with the ``jax.lax`` function of the same name (see ``JaxRule``),
    else bound as JAX's primitive of that name (``jax.extend.core.primitives``) with its parameters;
    ``rules`` adds or overrides rules by primitive name, e.g. for user-defined primitives.
    Control flow, calls, custom derivatives and checkpoints become JAX's own (so JAX
    differentiates a custom-derivative function by its rule). ``jax`` is imported here, when
    called (``importlib.import_module``), never when ``fcore.interop`` is imported. Literals and
    constants are passed as NumPy values of their dtype (with JAX's 64-bit mode off, JAX
    computes 64-bit dtypes in 32 bits).
    """
    return _Builder(importlib.import_module("jax"), {**_JAX_RULES, **(rules or {})}).fun(closed)


class _Builder:
    """Converts jaxprs with one ``jax`` module and rule table (nested jaxprs included)."""

    __slots__ = ("jax", "lax", "table")

    def __init__(self, jax: ModuleType, table: Mapping[str, JaxRule]) -> None:
        self.jax = jax
        self.lax: ModuleType = importlib.import_module("jax.lax")
        self.table = table

    def fun(self, closed: ClosedJaxpr) -> Fun:
        jaxpr = closed.jaxpr
        consts = [np.asarray(c) for c in closed.consts]
        steps = [(eqn, self.step(jaxpr, i)) for i, eqn in enumerate(jaxpr.eqns)]

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

    def step(self, jaxpr: Jaxpr, i: int) -> Callable[[list[Any]], Any]:
        """The JAX computation of equation ``i`` (nested jaxprs are converted once, here)."""
        eqn = jaxpr.eqns[i]
        name = eqn.primitive.name
        rule = self.table.get(name)
        if rule is not None:
            eqn_params, lax = eqn.params, self.lax
            return lambda args: rule(lax, args, eqn_params)
        higher = _HIGHER_ORDER.get(name)
        if higher is not None:
            return higher(self, eqn)
        jax_prim = getattr(importlib.import_module("jax.extend.core.primitives"), name.replace("-", "_") + "_p", None)
        if jax_prim is not None and not any(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in _flat(eqn.params.values())):
            # JAX's primitive of the same name, bound with fcore's parameters in JAX's classes.
            params: dict[str, Any] = {k: _jax_value(self.lax, v) for k, v in eqn.params.items()}
            select = params.get("select_prim")
            if isinstance(select, str):  # fcore names the comparison, JAX holds its primitive
                params["select_prim"] = getattr(importlib.import_module("jax.extend.core.primitives"), select + "_p")
            multiple = eqn.primitive.multiple_results
            return lambda args: (list if multiple else _same)(jax_prim.bind(*args, **params))
        raise NotImplementedError(
            f"to_jax_callable: no JAX rule for primitive '{name}' (equation {i}: {pp_eqn_in(jaxpr, i)}); "
            "pass one in `rules`"
        )

    def closed(self, eqn: JaxprEqn, key: str) -> Fun:
        inner = eqn.params[key]
        assert isinstance(inner, ClosedJaxpr), f"{eqn.primitive.name}'s {key} must be a ClosedJaxpr"
        return self.fun(inner)


def _flat(values: Iterable[ParamValue]) -> list[ParamValue]:
    return [x for v in values for x in (_flat(v) if isinstance(v, tuple) else [v])]


def _same(x: Any) -> Any:
    return x


def _int(eqn: JaxprEqn, key: str) -> int:
    value = eqn.params[key]
    assert isinstance(value, int)
    return value


# -- higher-order primitives ----------------------------------------------------------------------
def _jit(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    body = b.closed(eqn, "jaxpr")
    body.__name__ = str(eqn.params.get("name", "jit"))
    jitted = b.jax.jit(body)
    return lambda args: list(jitted(*args))


def _while(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    cond, body = b.closed(eqn, "cond_jaxpr"), b.closed(eqn, "body_jaxpr")
    nc, nb = _int(eqn, "cond_nconsts"), _int(eqn, "body_nconsts")

    def apply(args: list[Any]) -> Any:
        cc, bc, init = args[:nc], args[nc : nc + nb], args[nc + nb :]
        out = b.lax.while_loop(lambda c: cond(*cc, *c)[0], lambda c: tuple(body(*bc, *c)), tuple(init))
        return list(out)

    return apply


def _cond(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    branches = eqn.params["branches"]
    assert isinstance(branches, tuple)
    funs = [b.fun(br) for br in branches if isinstance(br, ClosedJaxpr)]
    return lambda args: list(b.lax.switch(args[0], [lambda *xs, f=f: tuple(f(*xs)) for f in funs], *args[1:]))


def _scan(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    body = b.closed(eqn, "jaxpr")
    n_consts, n_carry = _int(eqn, "num_consts"), _int(eqn, "num_carry")
    length, unroll = _int(eqn, "length"), _int(eqn, "unroll")
    reverse = bool(eqn.params["reverse"])

    def apply(args: list[Any]) -> Any:
        consts, init, xs = args[:n_consts], args[n_consts : n_consts + n_carry], args[n_consts + n_carry :]

        def step(carry: tuple[Any, ...], x: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
            outs = body(*consts, *carry, *x)
            return tuple(outs[:n_carry]), tuple(outs[n_carry:])

        carry, ys = b.lax.scan(step, tuple(init), tuple(xs), length=length, reverse=reverse, unroll=unroll)
        return [*carry, *ys]

    return apply


def _dtype_of(x: Any) -> np.dtype[Any]:
    dtype = getattr(x, "dtype", None)  # a JAX value, or a NumPy one
    return np.dtype(dtype) if dtype is not None else np.asarray(x).dtype


def _float0_free(x: Any, like: Any) -> Any:
    """A JAX tangent of an integer value is ``float0``; fcore's rules take zeros of the value's type."""
    if str(getattr(x, "dtype", "")) == "float0":
        return np.zeros(np.shape(like), _dtype_of(like))
    return x


def _custom_jvp(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    body = b.closed(eqn, "call_jaxpr")
    jvp = eqn.params["jvp"]
    assert isinstance(jvp, LazyJaxpr)
    nc = _int(eqn, "num_consts")
    n_out = len(eqn.outvars)
    rule: list[Fun] = []

    f: Any = b.jax.custom_jvp(lambda *args: tuple(body(*args)))

    def f_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        if not rule:
            rule.append(b.fun(jvp.get()))
        ts = [_float0_free(t, p) for t, p in zip(tangents[nc:], primals[nc:])]
        outs = rule[0](*primals, *ts)
        touts = [_tangent_of(b, o, t) for o, t in zip(outs[:n_out], outs[n_out:])]
        return tuple(outs[:n_out]), tuple(touts)

    f.defjvp(f_jvp)
    return lambda args: list(f(*args))


def _tangent_of(b: _Builder, primal: Any, tangent: Any) -> Any:
    if dtypes.is_inexact(_dtype_of(primal)):
        return tangent
    return np.zeros(np.shape(primal), b.jax.dtypes.float0)


def _custom_vjp(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    body = b.closed(eqn, "call_jaxpr")
    fwd, bwd = eqn.params["fwd"], eqn.params["bwd"]
    assert isinstance(fwd, LazyJaxpr) and isinstance(bwd, CustomBwd)
    nc = _int(eqn, "num_consts")
    n_out = len(eqn.outvars)
    cache: dict[str, Fun] = {}

    def fwd_fun() -> Fun:
        if "fwd" not in cache:
            cache["fwd"] = b.fun(fwd.get())
        return cache["fwd"]

    def bwd_fun(res: Sequence[Any], cts: Sequence[Any]) -> Fun:
        """fcore's ``bwd`` staged by fcore on these types and converted."""
        if "bwd" not in cache:
            avals = [ShapeDtypeStruct(np.shape(x), np.dtype(x.dtype)) for x in [*res, *cts]]
            nr = len(res)
            present: list[bool] = []

            def flat(*xs: Any) -> list[Any]:
                got = bwd.fun(list(xs[:nr]), list(xs[nr:]))
                present[:] = [c is not None for c in got]
                return [c for c in got if c is not None]

            closed = make_jaxpr(flat)(*avals)
            inner = b.fun(closed)
            cache["bwd"] = lambda *xs: (lambda got: [next(got) if p else None for p in present])(iter(inner(*xs)))
        return cache["bwd"]

    f: Any = b.jax.custom_vjp(lambda *args: tuple(body(*args)))

    def f_fwd(*args: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        outs = fwd_fun()(*args)
        return tuple(outs[:n_out]), (*args[:nc], *outs[n_out:])

    def f_bwd(res: tuple[Any, ...], cts: tuple[Any, ...]) -> tuple[Any, ...]:
        ct_args = bwd_fun(res, cts)(*res, *cts)
        return (*[None] * nc, *ct_args)

    f.defvjp(f_fwd, f_bwd)
    return lambda args: list(f(*args))


def _linear_solve(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    """``lax.custom_linear_solve`` of the converted jaxprs (each already closes over the map it
    is given, so it ignores JAX's); JAX reuses ``matvec`` as ``vecmat`` where fcore did."""
    p = eqn.params
    lengths = p["const_lengths"]
    assert isinstance(lengths, tuple)
    starts = list(itertools.accumulate((n for n in lengths if isinstance(n, int)), initial=0))
    matvec, solve = b.closed(eqn, "matvec"), b.closed(eqn, "solve")
    tr_jaxpr = p["transpose_solve"]
    transpose = None if not isinstance(tr_jaxpr, ClosedJaxpr) else b.fun(tr_jaxpr)
    ins = eqn.invars
    symmetric = (transpose is not None and p["vecmat"] == p["matvec"]
                 and all(x is y for x, y in zip(ins[starts[0] : starts[1]], ins[starts[1] : starts[2]], strict=True)))
    n_b = len(ins) - starts[4]
    has_aux = len(eqn.outvars) > n_b

    def apply(args: list[Any]) -> Any:
        mc, sc, tc = args[starts[0] : starts[1]], args[starts[2] : starts[3]], args[starts[3] : starts[4]]

        def result(outs: list[Any]) -> Any:
            return (tuple(outs[:n_b]), tuple(outs[n_b:])) if has_aux else tuple(outs)

        out = b.lax.custom_linear_solve(
            lambda x: tuple(matvec(*mc, *x)), tuple(args[starts[4] :]), lambda _, x: result(solve(*sc, *x)),
            None if transpose is None else (lambda _, x: result(transpose(*tc, *x))),
            symmetric=symmetric, has_aux=has_aux,
        )
        return [*out[0], *out[1]] if has_aux else list(out)

    return apply


def _custom_vmap(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    """``jax.custom_batching.custom_vmap``: fcore's rule is staged by fcore on the batched types
    JAX hands it, and converted (as a ``custom_vjp``'s ``bwd`` is)."""
    body = b.closed(eqn, "call")
    rule = eqn.params["rule"]
    assert isinstance(rule, VmapRule)
    f: Any = b.jax.custom_batching.custom_vmap(lambda *args: tuple(body(*args)))

    def jax_rule(axis_size: int, in_batched: Sequence[bool], *args: Any) -> tuple[tuple[Any, ...], tuple[bool, ...]]:
        out_batched: list[bool] = []

        def flat(*xs: Any) -> list[Any]:
            outs, batched = rule.fun(axis_size, list(in_batched), list(xs))
            out_batched[:] = batched
            return outs

        closed = make_jaxpr(flat)(*[ShapeDtypeStruct(np.shape(x), _dtype_of(x)) for x in args])
        return tuple(b.fun(closed)(*args)), tuple(out_batched)

    f.def_vmap(jax_rule)
    return lambda args: list(f(*args))


def _remat(b: _Builder, eqn: JaxprEqn) -> Callable[[list[Any]], Any]:
    body = b.closed(eqn, "jaxpr")
    policy = eqn.params["policy"]
    jax_policy = None if policy is None else _jax_policy(b.jax, policy)
    f = b.jax.checkpoint(lambda *xs: tuple(body(*xs)), prevent_cse=bool(eqn.params["prevent_cse"]), policy=jax_policy)
    return lambda args: list(f(*args))


def _jax_policy(jax: ModuleType, policy: ParamValue) -> Any:
    """fcore's residual policy as JAX's ``jax.checkpoint_policies`` one."""
    policies = jax.checkpoint_policies
    if isinstance(policy, EverythingSaveable):
        return policies.everything_saveable
    if isinstance(policy, NothingSaveable):
        return policies.nothing_saveable
    if isinstance(policy, DotsSaveable):
        return policies.dots_with_no_batch_dims_saveable if policy.only_if_no_batch_dims else policies.dots_saveable
    if isinstance(policy, SaveNames):
        return (policies.save_any_names_but_these if policy.exclude else policies.save_only_these_names)(*policy.names)
    if isinstance(policy, EitherSaves):
        return policies.save_from_both_policies(_jax_policy(jax, policy.first), _jax_policy(jax, policy.second))
    raise NotImplementedError(f"to_jax_callable: checkpoint policy {policy!r} has no JAX equivalent here")


_HIGHER_ORDER: dict[str, Callable[[_Builder, JaxprEqn], Callable[[list[Any]], Any]]] = {
    "jit": _jit,
    "while": _while,
    "cond": _cond,
    "scan": _scan,
    "custom_jvp_call": _custom_jvp,
    "custom_vjp_call": _custom_vjp,
    "remat2": _remat,
    "custom_linear_solve": _linear_solve,
    "custom_vmap_call": _custom_vmap,
}


# -- first-order primitives ------------------------------------------------------------------------
def _jax_value(lax: ModuleType, value: ParamValue) -> Any:
    """fcore parameter values as JAX's: enums and dimension numbers by class name."""
    if isinstance(value, enum.Enum):
        cls = getattr(lax, type(value).__name__, None)
        return cls[value.name] if cls is not None else value
    if isinstance(value, ParamStruct) and attrs.has(type(value)):
        cls = getattr(lax, type(value).__name__)
        names: list[str] = [f.name for f in getattr(type(value), "__attrs_attrs__")]
        return cls(**{n: _jax_value(lax, getattr(value, n)) for n in names})
    if isinstance(value, tuple):
        return tuple(_jax_value(lax, v) for v in value)
    return value


def _same_name(name: str) -> JaxRule:
    """``lax.<name>(*operands)`` for parameterless primitives."""
    return lambda lax, xs, p: getattr(lax, name)(*xs)


def _with(name: str, *keys: str) -> JaxRule:
    """``lax.<name>(*operands, **params)`` for the parameters ``keys`` (JAX's keyword names)."""
    return lambda lax, xs, p: getattr(lax, name)(*xs, **{k: _jax_value(lax, p[k]) for k in keys})


def _gather(lax: ModuleType, xs: list[Any], p: Params) -> Any:
    return lax.gather(
        xs[0], xs[1], _jax_value(lax, p["dimension_numbers"]), p["slice_sizes"], unique_indices=p["unique_indices"],
        indices_are_sorted=p["indices_are_sorted"], mode=_jax_value(lax, p["mode"]), fill_value=p["fill_value"],
    )


def _scatter(name: str) -> JaxRule:
    def rule(lax: ModuleType, xs: list[Any], p: Params) -> Any:
        return getattr(lax, name)(
            xs[0], xs[1], xs[2], _jax_value(lax, p["dimension_numbers"]), indices_are_sorted=p["indices_are_sorted"],
            unique_indices=p["unique_indices"], mode=_jax_value(lax, p["mode"]),
        )
    return rule


def _threefry2x32(lax: ModuleType, xs: list[Any], p: Params) -> Any:
    prim = importlib.import_module("jax.extend.random").threefry2x32_p
    return list(prim.bind(*xs))


def _iota_2x32_shape(lax: ModuleType, xs: list[Any], p: Params) -> Any:
    """The row-major index of each element as two ``uint32`` words (the high word is zero below 2**32)."""
    value = p["shape"]
    assert isinstance(value, tuple)
    shape = tuple(int(d) for d in value if isinstance(d, int))
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if size > 2**32:
        raise NotImplementedError("to_jax_callable: iota_2x32_shape of 2**32 elements or more")
    strides = np.cumprod((1, *shape[::-1]))[::-1][1:] if shape else ()
    low = np.uint32(0)
    for d, s in enumerate(strides):
        low = lax.add(low, lax.mul(lax.broadcasted_iota(np.uint32, shape, d), np.uint32(s)))
    return [lax.full(shape, 0, np.uint32), lax.broadcast_in_dim(low, shape, tuple(range(len(shape))))]


def _precision(lax: ModuleType, value: ParamValue) -> Any:
    return None if value is None else _jax_value(lax, value)


_JAX_RULES: dict[str, JaxRule] = {
    **{n: _same_name(n) for n in (
        "neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh",
        "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
        "atanh", "sqrt", "rsqrt", "cbrt", "erf", "erfc", "erf_inv", "lgamma", "digamma", "abs", "real", "imag",
        "conj", "complex", "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "eq", "ne",
        "lt", "le", "gt", "ge", "select_n", "clamp", "stop_gradient", "shift_left", "shift_right_arithmetic",
        "shift_right_logical", "population_count", "clz", "igamma", "igammac", "zeta", "polygamma",
        "bessel_i0e", "bessel_i1e", "mulhi",
    )},
    "not": _same_name("bitwise_not"),
    "and": _same_name("bitwise_and"),
    "or": _same_name("bitwise_or"),
    "xor": _same_name("bitwise_xor"),
    "integer_pow": lambda lax, xs, p: lax.integer_pow(xs[0], p["y"]),
    "round": lambda lax, xs, p: lax.round(xs[0], lax.RoundingMethod(p["rounding_method"])),
    "convert_element_type": lambda lax, xs, p: lax.convert_element_type(xs[0], p["new_dtype"]),
    "bitcast_convert_type": lambda lax, xs, p: lax.bitcast_convert_type(xs[0], p["new_dtype"]),
    "reduce_precision": _with("reduce_precision", "exponent_bits", "mantissa_bits"),
    "broadcast_in_dim": lambda lax, xs, p: lax.broadcast_in_dim(xs[0], p["shape"], p["broadcast_dimensions"]),
    "reshape": lambda lax, xs, p: lax.reshape(xs[0], p["new_sizes"], p["dimensions"]),
    "slice": lambda lax, xs, p: lax.slice(xs[0], p["start_indices"], p["limit_indices"], p["strides"]),
    "concatenate": lambda lax, xs, p: lax.concatenate(xs, p["dimension"]),
    "stack": lambda lax, xs, p: lax.stack(xs, p["axis"]),
    "unstack": lambda lax, xs, p: list(lax.unstack(xs[0], p["axis"])),
    "split": lambda lax, xs, p: list(lax.split(xs[0], p["sizes"], p["axis"])),
    "tile": lambda lax, xs, p: lax.tile(xs[0], p["reps"]),
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
        xs[0], xs[1], p["dimension_numbers"], _precision(lax, p["precision"]), p["preferred_element_type"]
    ),
    "conv_general_dilated": lambda lax, xs, p: lax.conv_general_dilated(
        xs[0], xs[1], p["window_strides"], p["padding"], p["lhs_dilation"], p["rhs_dilation"],
        _jax_value(lax, p["dimension_numbers"]), p["feature_group_count"], p["batch_group_count"],
        _precision(lax, p["precision"]), p["preferred_element_type"],
    ),
    "sort": lambda lax, xs, p: list(lax.sort(xs, p["dimension"], p["is_stable"], p["num_keys"])),
    "top_k": lambda lax, xs, p: list(lax.top_k(xs[0], p["k"], axis=p["axis"])),
    "gather": _gather,
    "scatter": _scatter("scatter"),
    "scatter-add": _scatter("scatter_add"),
    "scatter-sub": _scatter("scatter_sub"),
    "scatter-mul": _scatter("scatter_mul"),
    "scatter-min": _scatter("scatter_min"),
    "scatter-max": _scatter("scatter_max"),
    "threefry2x32": _threefry2x32,
    "iota_2x32_shape": _iota_2x32_shape,
}


def _single_axis(p: Params) -> int:
    axes = p["axes"]
    assert isinstance(axes, tuple) and len(axes) == 1 and isinstance(axes[0], int)
    return axes[0]

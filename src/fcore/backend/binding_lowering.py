"""Lowering rules written JAX's way, run inside fcore's text lowering.

A JAX lowering rule builds ops with jaxlib's MLIR bindings: ``rule(ctx, *values, **params)``
returns the ``ir.Value`` s of the results. fcore lowers to StableHLO text, so the adapter
(``binding_rule``) builds the rule's ops into the body of a private ``func.func`` of its own
``ir.Module`` (one parameter per operand, typed from the avals), checks the results, prints the
function into fcore's module and emits a ``func.call`` to it (XLA inlines it).

``lower_fun`` is JAX's "lower by tracing a Python function": the function is staged to a jaxpr,
lowered by fcore's own rules into a private function, and called, from a text rule or from
inside a binding rule alike.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import attrs
import numpy as np
from jaxlib.mlir._mlir_libs import _jax_mlir_ext

from fcore.backend import runtime
from fcore.backend.lowering import (
    LoweringError,
    LoweringRule,
    LoweringRuleContext,
    ModuleBuilder,
    dense_attr,
    element_type,
    tensor_type,
    threads_token,
)
from fcore.backend.mlir_api import chlo, func, ir, mpmd, sdy, stablehlo
from jaxlib.mlir.dialects import mhlo
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive

__all__ = [
    "BindingRuleContext", "LowerFunRule", "ModuleContext", "aval_to_ir_type", "binding_rule", "dtype_to_ir_type",
    "ir_constant", "lower_fun",
]


#: The upstream dialects (func, arith, ...), registered into each context as JAX registers them.
_UPSTREAM_DIALECTS = ir.DialectRegistry()
_jax_mlir_ext.register_dialects(_UPSTREAM_DIALECTS)


def mlir_context() -> ir.Context:
    """A fresh MLIR context with the dialects JAX's lowering contexts have (StableHLO, CHLO,
    MHLO, Shardy, ...): a few milliseconds."""
    ctx = ir.Context()
    ctx.append_dialect_registry(_UPSTREAM_DIALECTS)
    ctx.load_all_available_dialects()
    sdy.register_dialect(ctx)
    mpmd.register_dialect(ctx)
    mhlo.register_mhlo_dialect(ctx)
    chlo.register_dialect(ctx)
    stablehlo.register_dialect(ctx)
    return ctx


def dtype_to_ir_type(dtype: Any) -> ir.Type:
    """The MLIR element type of ``dtype`` (``f32``, ``i1``, ...), in the current context."""
    return ir.Type.parse(element_type(dtypes.to_dtype(dtype)))


def aval_to_ir_type(aval: ShapedArray) -> ir.Type:
    """The ``tensor<...>`` type of ``aval``, in the current context."""
    return ir.Type.parse(tensor_type(ShapedArray(tuple(aval.shape), dtypes.to_dtype(aval.dtype))))


def aval_to_ir_types(aval: ShapedArray) -> tuple[ir.Type, ...]:
    return (aval_to_ir_type(aval),)


def ir_constant(val: Any) -> ir.Value[Any]:
    """A ``stablehlo.constant`` holding ``val`` (Python scalars take fcore's default dtypes),
    at the current insertion point."""
    if isinstance(val, (bool, int, float, complex)):
        arr = np.asarray(val, dtypes.python_scalar_dtype(val))
    else:
        arr = np.asarray(val)
        arr = arr.astype(dtypes.canonicalize_dtype(arr.dtype), copy=False)
    typ = tensor_type(ShapedArray(arr.shape, arr.dtype))
    attr = ir.Attribute.parse(f"{dense_attr(arr)} : {typ}")
    return stablehlo.ConstantOp(attr).result


@attrs.frozen
class ModuleContext:
    """JAX's ``ctx.module_context``: the MLIR context and module the rule's ops go into."""

    context: ir.Context
    module: ir.Module
    platforms: tuple[str, ...]
    #: fcore's text module (where ``lower_fun`` puts the functions it lowers).
    builder: ModuleBuilder


@attrs.frozen
class BindingRuleContext:
    """What a JAX-style lowering rule sees as ``ctx``: the primitive, its avals, and the module."""

    module_context: ModuleContext
    primitive: Primitive[Any]
    avals_in: Sequence[ShapedArray]
    avals_out: Sequence[ShapedArray]
    platforms: tuple[str, ...]

    def replace(self, **changes: Any) -> BindingRuleContext:
        """A copy with some fields changed (``ctx.replace(avals_out=...)``), as in JAX."""
        return attrs.evolve(self, **changes)


def _flatten_results(out: object, where: str) -> list[ir.Value[Any]]:
    """The rule's results as a flat list of values (JAX allows a value per result, or a
    sequence of values per result)."""
    if isinstance(out, (ir.Value, ir.Operation, ir.OpView)) or not isinstance(out, Iterable):
        raise LoweringError(
            f"{where} must return a sequence of ir.Value, one per result of the primitive, got "
            f"{type(out).__name__} (for one result, return [op.result])"
        )
    flat: list[ir.Value[Any]] = []
    for item in out:
        items = item if isinstance(item, (list, tuple)) else [item]
        for v in items:
            if not isinstance(v, ir.Value):
                raise LoweringError(
                    f"{where} must return ir.Value s, got {type(v).__name__} {v!r} (an op's value is its .result)"
                )
            flat.append(v)
    return flat


def _check_results(results: Sequence[ir.Value[Any]], want: Sequence[ir.Type], where: str) -> None:
    if len(results) != len(want):
        raise LoweringError(f"{where} returned {len(results)} values, but the primitive has {len(want)} results")
    for i, (v, t) in enumerate(zip(results, want)):
        if v.type != t:
            raise LoweringError(f"{where} returned a value of type {v.type} for result {i}, which has type {t}")


def _call_text(ctx: LoweringRuleContext, sym: str, operands: Sequence[str], in_types: Sequence[str],
               out_avals: Sequence[ShapedArray]) -> list[str]:
    """Emit ``func.call @sym(operands)`` in fcore's text function; its results' SSA names."""
    out_types = [tensor_type(a) for a in out_avals]
    rhs = f"func.call @{sym}({', '.join(operands)}) : ({', '.join(in_types)}) -> ({', '.join(out_types)})"
    if not out_types:
        ctx.fn.lines.append(f"    {rhs}{ctx.fn.location}")
        return []
    name = ctx.emit(rhs, len(out_types))
    if len(out_types) == 1:
        return [name]
    return [f"{name}#{i}" for i in range(len(out_types))]


def _private_function(name: str, in_types: Sequence[ir.Type], out_types: Sequence[ir.Type]) -> func.FuncOp:
    """A ``func.func private @name`` (without a body until a block is appended), at the insertion point."""
    make: Any = func.FuncOp  # the bindings' Python subclass (mypy sees only the generated base)
    op: func.FuncOp = make(name, (list(in_types), list(out_types)), visibility="private")
    return op


def _platforms() -> tuple[str, ...]:
    """The platform being compiled for (fcore compiles for its one client's)."""
    return (runtime.platform(),)


def _memo_key(rule: Callable[..., Any], ctx: LoweringRuleContext, params: dict[str, ParamValue]) -> Hashable | None:
    """Equations with the same rule, avals and parameters share one function (as JAX caches a
    primitive's lowering per module); ``None`` where a parameter does not hash."""
    key = (rule, tuple(ctx.avals_in), tuple(ctx.avals_out), tuple(sorted(params.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _build_function(
    prim: Primitive[Any], rule: Callable[..., Any], ctx: LoweringRuleContext, params: dict[str, ParamValue],
    platforms: tuple[str, ...],
) -> str:
    """Run ``rule`` on jaxlib's bindings into a private function, add its text to the module
    being lowered, and return its symbol."""
    where = f"the lowering rule of '{prim.name}' ({getattr(rule, '__qualname__', rule)!r})"
    sym = ctx.module.unique_name(f"{prim.name}_lowering")
    with mlir_context() as context, ir.Location.unknown():
        module = ir.Module.create()
        in_types = [aval_to_ir_type(a) for a in ctx.avals_in]
        out_types = [aval_to_ir_type(a) for a in ctx.avals_out]
        with ir.InsertionPoint(module.body):
            fn = _private_function(sym, in_types, out_types)
        block = fn.body.blocks.append(*in_types)
        rule_ctx = BindingRuleContext(
            ModuleContext(context, module, platforms, ctx.module), prim, list(ctx.avals_in), list(ctx.avals_out),
            platforms,
        )
        with ir.InsertionPoint(block):
            out = rule(rule_ctx, *block.arguments, **params)
            results = _flatten_results(out, where)
            _check_results(results, out_types, where)
            func.ReturnOp(results)
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise LoweringError(f"{where} built invalid ops: {e}") from None
        text = str(fn.operation.get_asm(enable_debug_info=False))
    ctx.module.functions.append("\n".join("  " + line for line in text.splitlines()))
    return sym


def binding_rule(
    prim: Primitive[Any], rules: dict[str | None, Callable[..., Any]], fallback: LoweringRule | None = None
) -> LoweringRule:
    """The text lowering rule that runs the rule of ``rules`` for the platform being compiled for
    (the key ``None``: any platform) on jaxlib's bindings, and calls the function it builds;
    ``fallback`` (a text rule) lowers on the platforms ``rules`` has nothing for."""

    def lower(ctx: LoweringRuleContext, *operands: str, **params: ParamValue) -> str | list[str]:
        platforms = _platforms()
        chosen = next((rules[p] for p in platforms if p in rules), rules.get(None))
        if chosen is None and fallback is not None:
            return fallback(ctx, *operands, **params)
        if chosen is None:
            have = ", ".join(sorted(str(p) for p in rules))
            raise LoweringError(
                f"'{prim.name}' has no lowering rule for platform {platforms[0]} (it has rules for {have})"
            )
        in_texts = [tensor_type(a) for a in ctx.avals_in]
        key = _memo_key(chosen, ctx, params)
        sym = ctx.module.rule_functions.get(key) if key is not None else None
        if sym is None:
            sym = _build_function(prim, chosen, ctx, params, platforms)
            if key is not None:
                ctx.module.rule_functions[key] = sym
        return _call_text(ctx, sym, operands, in_texts, ctx.avals_out)

    return lower


class LowerFunRule:
    """JAX's ``mlir.lower_fun(fun, multiple_results)``: a lowering rule that stages ``fun`` with
    the primitive's avals and parameters and calls the function fcore lowers it to. Called from
    another rule, its results need not be that rule's (``ctx.avals_out`` is not read, as in JAX)."""

    __slots__ = ("fun", "multiple_results")

    def __init__(self, fun: Callable[..., Any], multiple_results: bool) -> None:
        self.fun = fun
        self.multiple_results = multiple_results

    def _jaxpr(self, avals_in: Sequence[ShapedArray], params: dict[str, ParamValue]) -> ClosedJaxpr:
        def flat(*args: Any) -> list[Any]:
            out = self.fun(*args, **params)
            return list(out) if self.multiple_results else [out]

        closed = trace_to_jaxpr(flat, list(avals_in), f"lower_fun({getattr(self.fun, '__name__', 'fun')})")
        if threads_token(closed.jaxpr):
            raise LoweringError("mlir.lower_fun: the function has ordered effects, which lower_fun cannot thread")
        return closed

    def _name(self) -> str:
        return f"lower_fun_{getattr(self.fun, '__name__', 'fun')}"

    def __call__(self, ctx: LoweringRuleContext | BindingRuleContext, *args: Any, **params: ParamValue) -> Any:
        closed = self._jaxpr(ctx.avals_in, params)
        consts = [np.asarray(c) for c in closed.consts]
        out_avals = [v.aval for v in closed.jaxpr.outvars]
        if isinstance(ctx, LoweringRuleContext):  # registered as a rule itself: text throughout
            if [(a.shape, a.dtype) for a in out_avals] != [(a.shape, a.dtype) for a in ctx.avals_out]:
                raise LoweringError(
                    f"mlir.lower_fun: the function returns {_types(out_avals)}, but the primitive's results are "
                    f"{_types(ctx.avals_out)} (multiple_results={self.multiple_results})"
                )
            sym = ctx.module.private_function(closed.jaxpr, self._name())
            const_names = [ctx.constant(c, c.dtype, c.shape) for c in consts]
            in_types = [tensor_type(v.aval) for v in closed.jaxpr.constvars + closed.jaxpr.invars]
            return _call_text(ctx, sym, [*const_names, *args], in_types, out_avals)
        # Called from a rule written with the bindings: call the text function from there, with a
        # declaration of it in the rule's module so that the call verifies.
        sym = ctx.module_context.builder.private_function(closed.jaxpr, self._name())
        ir_in_types = [aval_to_ir_type(v.aval) for v in closed.jaxpr.constvars + closed.jaxpr.invars]
        out_types = [aval_to_ir_type(a) for a in out_avals]
        module = ctx.module_context.module
        if sym not in {op.sym_name.value for op in module.body.operations if isinstance(op, func.FuncOp)}:
            with ir.InsertionPoint.at_block_begin(module.body):
                _private_function(sym, ir_in_types, out_types)  # a declaration: no body
        operands = [ir_constant(c) for c in consts] + list(args)
        return list(func.CallOp(out_types, sym, operands).results)


def _types(avals: Sequence[ShapedArray]) -> str:
    return "[" + ", ".join(a.str_short() for a in avals) + "]"


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LowerFunRule:
    """A lowering rule computing ``fun(*operands, **params)`` (a list of results when
    ``multiple_results``), as JAX's ``mlir.lower_fun``."""
    return LowerFunRule(fun, multiple_results)

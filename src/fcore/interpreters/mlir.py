"""``fcore.interpreters.mlir`` as ``jax.interpreters.mlir``: lowering rules written with jaxlib's
MLIR bindings, as in "Writing custom JAX primitives"::

    def multiply_add_lowering(ctx, x, y, z):
        return [hlo.AddOp(hlo.MulOp(x, y), z).result]

    mlir.register_lowering(multiply_add_p, multiply_add_lowering)

The rule lands in fcore's ``lowering_rules`` as an adapter (``fcore.backend.binding_lowering``)
that builds its ops into a private function of the StableHLO text and calls it, so it works
under ``jit``, in the bodies of ``grad``/``vmap``/``scan`` and under ``export``
(docs/adding_a_primitive.md, "Rules written JAX's way").

This is a public facade at JAX's module path; nothing in fcore imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore.backend.binding_lowering import (
    BindingRuleContext,
    LowerFunRule,
    ModuleContext as ModuleContext,
    aval_to_ir_type as aval_to_ir_type,
    aval_to_ir_types as aval_to_ir_types,
    binding_rule,
    dtype_to_ir_type as dtype_to_ir_type,
    ir_constant as ir_constant,
    lower_fun as lower_fun,
)
from fcore.backend.lowering import LoweringRule as TextLoweringRule, lowering_rules
from fcore.backend.mlir_api import ir as ir
from fcore.ir.primitive import Primitive

__all__ = [
    "LoweringRule", "LoweringRuleContext", "ModuleContext", "Value", "aval_to_ir_type", "aval_to_ir_types",
    "dense_int_array", "dense_int_elements", "dtype_to_ir_type", "i32_attr", "i64_attr", "ir", "ir_constant",
    "ir_constants", "lower_fun", "register_lowering",
]

#: The ``ctx`` a rule registered here receives (``avals_in``, ``avals_out``, ``module_context``, ...).
LoweringRuleContext = BindingRuleContext
Value = ir.Value
#: A rule: ``(ctx, *values, **params) -> [value or sequence of values, one per result]``.
LoweringRule = Callable[..., Sequence[Any]]

#: JAX's platform names as fcore's runtime reports them.
_PLATFORM_ALIASES = {"gpu": "cuda"}
#: The platforms JAX accepts a rule for (fcore runs on 'cpu' and 'cuda'; a rule for another is kept, unused).
_KNOWN_PLATFORMS = frozenset({"cpu", "cuda", "rocm", "tpu", "gpu"})

#: Per primitive, the rules registered here: by platform, ``None`` for any platform.
_rules: dict[Primitive[Any], dict[str | None, Callable[..., Any]]] = {}
#: Per primitive, the text rule it had before its first rule was registered here.
_fallbacks: dict[Primitive[Any], TextLoweringRule | None] = {}


def register_lowering(
    prim: Primitive[Any], rule: Callable[..., Any], platform: str | None = None, inline: bool = True,
    cacheable: bool = True,
) -> None:
    """Register ``rule(ctx, *values, **params) -> [ir.Value, ...]`` as ``prim``'s lowering (for
    ``platform`` only, when given: 'cpu', 'cuda', 'gpu', ...). The rule's ops always go into a
    function of their own, called where the primitive is (XLA inlines it): ``inline`` and
    ``cacheable`` are accepted for JAX's signature."""
    if platform is not None and platform not in _KNOWN_PLATFORMS:
        raise NotImplementedError(
            f"Registering an MLIR lowering rule for primitive {prim} for an unknown platform {platform}. "
            f"Known platforms are: {', '.join(sorted(_KNOWN_PLATFORMS))}."
        )
    if not isinstance(prim, Primitive):
        raise TypeError(f"register_lowering: expected a Primitive, got {type(prim).__name__} {prim!r}")
    if not callable(rule):
        raise TypeError(f"register_lowering: the rule for '{prim.name}' must be callable, got {type(rule).__name__}")
    key = None if platform is None else _PLATFORM_ALIASES.get(platform, platform)
    if isinstance(rule, LowerFunRule) and key is None and prim not in _rules:
        lowering_rules.register(prim)(rule)  # a text rule already: no binding function around it
        return
    if prim not in _rules:
        # A rule for one platform leaves the lowering the primitive had in force elsewhere.
        _fallbacks[prim] = lowering_rules.get(prim)
    rules = _rules.setdefault(prim, {})
    rules[key] = rule
    lowering_rules.register(prim)(binding_rule(prim, rules, _fallbacks[prim]))


def ir_constants(val: Any) -> list[ir.Value[Any]]:
    """``[ir_constant(val)]``."""
    return [ir_constant(val)]


def dense_int_array(xs: Sequence[int]) -> ir.Attribute:
    """A ``DenseI64ArrayAttr`` of ``xs`` (what StableHLO ops take for dimension lists)."""
    return ir.DenseI64ArrayAttr.get([int(x) for x in xs])


def dense_int_elements(xs: Sequence[int]) -> ir.Attribute:
    """A ``DenseIntElementsAttr`` of ``xs`` as int64."""
    return ir.DenseIntElementsAttr.get(np.asarray(xs, np.int64).data)


def i32_attr(i: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(i))


def i64_attr(i: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(i))

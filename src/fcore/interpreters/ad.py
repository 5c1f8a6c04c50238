"""``fcore.interpreters.ad`` as ``jax.interpreters.ad``: the registries and helpers that code
written for JAX uses to give its own primitives derivative rules ("Writing custom JAX
primitives"). The registries are views of fcore's ``jvp_rules`` and ``transpose_rules``
(docs/adding_a_primitive.md, "Rules written JAX's way"): one rule system, JAX's spelling.

This is a public facade at JAX's module path: it sits above ``fcore.transforms``, and nothing
in fcore imports it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from fcore.interpreters.eval import get_aval
from fcore.ir.avals import ShapedArray
from fcore.ir.params import ParamValue
from fcore.ir.primitive import Primitive
from fcore.interpreters._rule_views import JaxRule, RuleView
from fcore.transforms import ad_util
from fcore.transforms.ad_util import UndefinedPrimal as UndefinedPrimal, Zero as Zero
from fcore.transforms.jvp import JVPTrace as JVPTrace, JVPTracer as JVPTracer, jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_tangents", "defbilinear", "defjvp",
    "defjvp2", "deflinear", "deflinear2", "get_primitive_transpose", "instantiate_zeros", "is_undefined_primal",
    "primitive_jvps", "primitive_transposes", "zeros_like_aval",
]


def _register_jvp(prim: Primitive[Any], rule: JaxRule) -> JaxRule:
    # JAX's jvp rules take symbolic zeros (``type(t) is ad.Zero``): fcore's convention with
    # ``symbolic_zeros=True``; they get tuples, as in JAX.
    @functools.wraps(rule)
    def adapter(primals: list[Any], tangents: list[Any], /, **params: ParamValue) -> tuple[Any, Any]:
        return rule(tuple(primals), tuple(tangents), **params)  # type: ignore[no-any-return]

    return jvp_rules.register(prim, symbolic_zeros=True)(adapter)


def _register_transpose(prim: Primitive[Any], rule: JaxRule) -> JaxRule:
    return transpose_rules.register(prim)(rule)  # the same signature: ``(ct, *args, **params)``


def _as_is(prim: Primitive[Any], rule: JaxRule) -> JaxRule:
    return rule


#: ``primitive_jvps[p] = rule``: ``rule(primals, tangents, **params) -> (out, tangent_out)``,
#: where a tangent known to be zero is ``Zero(aval)``.
primitive_jvps = RuleView(jvp_rules, _register_jvp, _as_is)
#: ``primitive_transposes[p] = rule``: ``rule(ct, *args, **params) -> cotangents``, one per
#: argument (``None`` for a non-linear one); linear arguments arrive as ``UndefinedPrimal``.
primitive_transposes = RuleView(transpose_rules, _register_transpose, _as_is)


def is_undefined_primal(x: object) -> bool:
    """Whether a transpose rule's argument is a linear one (an ``UndefinedPrimal``)."""
    return type(x) is UndefinedPrimal


def get_primitive_transpose(p: Primitive[Any]) -> JaxRule:
    """``primitive_transposes[p]``; ``NotImplementedError`` naming ``p`` where it has none."""
    return primitive_transposes[p]


def zeros_like_aval(aval: ShapedArray) -> Any:
    """An array of zeros of ``aval``'s shape and dtype."""
    return ad_util.vspace().zeros_like_aval(aval)


def instantiate_zeros(tangent: Any) -> Any:
    """``tangent``, with a symbolic ``Zero`` made an array of zeros."""
    return ad_util.instantiate(tangent)


def add_tangents(x: Any, y: Any) -> Any:
    """``x + y`` where either may be a symbolic ``Zero``."""
    return ad_util.add_tangents(x, y)


def add_jaxvals(x: Any, y: Any) -> Any:
    """``x + y`` of two tangent values."""
    return ad_util.vspace().add(x, y)


def _zero_like(x: Any) -> Zero:
    return Zero(get_aval(x))


def _sum_terms(out: Any, terms: Sequence[Any]) -> Any:
    acc: Any = _zero_like(out)
    for t in terms:
        acc = add_tangents(acc, t)
    return acc


def defjvp(primitive: Primitive[Any], *jvprules: Callable[..., Any] | None) -> None:
    """Jvp from one rule per operand: ``jvprules[i](t_i, *primals, **params)`` is operand i's
    tangent contribution (``None``: not differentiable); the contributions are added."""
    if primitive.multiple_results:
        raise TypeError(f"defjvp is for single-result primitives; '{primitive.name}' has several results")

    def rule(primals: list[Any], tangents: list[Any], **params: ParamValue) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        terms = [r(t, *primals, **params) for r, t in zip(jvprules, tangents) if r is not None and type(t) is not Zero]
        return out, _sum_terms(out, terms)

    primitive_jvps[primitive] = rule


def defjvp2(primitive: Primitive[Any], *jvprules: Callable[..., Any] | None) -> None:
    """Like ``defjvp``, each rule also given the output: ``jvprules[i](t_i, out, *primals, **params)``."""
    if primitive.multiple_results:
        raise TypeError(f"defjvp2 is for single-result primitives; '{primitive.name}' has several results")

    def rule(primals: list[Any], tangents: list[Any], **params: ParamValue) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        terms = [
            r(t, out, *primals, **params) for r, t in zip(jvprules, tangents) if r is not None and type(t) is not Zero
        ]
        return out, _sum_terms(out, terms)

    primitive_jvps[primitive] = rule


def _linear_jvp(primitive: Primitive[Any]) -> JaxRule:
    """The jvp of a linear primitive: the primitive applied to the tangents."""

    def rule(primals: list[Any], tangents: list[Any], **params: ParamValue) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, [_zero_like(o) for o in out] if primitive.multiple_results else _zero_like(out)
        return out, primitive.bind(*[instantiate_zeros(t) for t in tangents], **params)

    return rule


def _zero_cts(args: Sequence[Any]) -> list[Any]:
    return [Zero(x.aval) if type(x) is UndefinedPrimal else None for x in args]


def deflinear(primitive: Primitive[Any], transpose_rule: Callable[..., Sequence[Any]]) -> None:
    """A primitive linear in all its operands: jvp applies it to the tangents, and
    ``transpose_rule(ct, **params)`` gives the operands' cotangents."""
    primitive_jvps[primitive] = _linear_jvp(primitive)

    def transpose(ct: Any, *args: Any, **params: ParamValue) -> Sequence[Any]:
        return _zero_cts(args) if type(ct) is Zero else transpose_rule(ct, **params)

    primitive_transposes[primitive] = transpose


def deflinear2(primitive: Primitive[Any], transpose_rule: Callable[..., Sequence[Any]]) -> None:
    """``deflinear`` whose transpose rule also sees the operands: ``transpose_rule(ct, *args, **params)``."""
    primitive_jvps[primitive] = _linear_jvp(primitive)

    def transpose(ct: Any, *args: Any, **params: ParamValue) -> Sequence[Any]:
        return _zero_cts(args) if type(ct) is Zero else transpose_rule(ct, *args, **params)

    primitive_transposes[primitive] = transpose


def defbilinear(prim: Primitive[Any], lhs_rule: Callable[..., Any], rhs_rule: Callable[..., Any]) -> None:
    """A primitive linear in each of its two operands separately (a product): ``lhs_rule(ct, x, y,
    **params)`` is the cotangent of ``x`` when ``x`` is the linear one, ``rhs_rule`` that of ``y``."""
    defjvp(
        prim,
        lambda g, x, y, **params: prim.bind(g, y, **params),
        lambda g, x, y, **params: prim.bind(x, g, **params),
    )

    def transpose(ct: Any, x: Any, y: Any, **params: ParamValue) -> tuple[Any, Any]:
        if is_undefined_primal(x) == is_undefined_primal(y):
            raise ValueError(f"the transpose of '{prim.name}' needs exactly one of its two operands linear")
        if is_undefined_primal(x):
            return (Zero(x.aval) if type(ct) is Zero else lhs_rule(ct, x, y, **params)), None
        return None, (Zero(y.aval) if type(ct) is Zero else rhs_rule(ct, x, y, **params))

    primitive_transposes[prim] = transpose

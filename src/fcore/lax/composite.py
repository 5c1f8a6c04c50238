"""``lax.composite``: a named operation whose meaning is its decomposition, lowered to
``stablehlo.composite`` so that a compiler may recognise it by name, version and attributes.

As in JAX: positional arguments are operands, keyword arguments are attributes (those passed
as ``None`` are left out of the StableHLO attributes); there is no jvp, transpose or batching
rule (JAX's errors). fcore's attributes are Python scalars, strings and tuples of them (JAX also
takes NumPy arrays), recorded as ``(name, value)`` pairs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from fcore import tree_util
from fcore.backend.lowering import LoweringError, LoweringRuleContext, lowering_rules, tensor_type
from fcore.errors import UnexpectedTracerError
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ParamValue
from fcore.lax._base import ArrayLike
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, hoist_consts
from fcore.transforms.batching import batching_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = ["composite", "composite_p"]

Attributes = tuple[tuple[str, ParamValue], ...]

#: StableHLO's rule for a composite's name: a namespaced op name such as ``my_namespace.my_op``.
_NAMESPACED = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


@attrs.frozen(kw_only=True)
class CompositeParams:
    """``composite[name, attributes, version, jaxpr]``: the operation's name and version, its
    ``(attribute, value)`` pairs, and the const-free jaxpr of its decomposition."""

    name: str
    attributes: Attributes
    version: int
    jaxpr: ClosedJaxpr


composite_p = Primitive("composite", multiple_results=True, params=CompositeParams)
composite_p.impl_takes_arrays = True


@composite_p.def_abstract_eval
def _composite_abstract_eval(
    *avals: ShapedArray, name: str, attributes: Attributes, version: int, jaxpr: ClosedJaxpr,
) -> list[ShapedArray]:
    if [a.strip_weak_type() for a in avals] != [a.strip_weak_type() for a in jaxpr.in_avals]:
        raise TypeError(f"composite {name!r}: operands {[a.str_short() for a in avals]} do not match the "
                        f"decomposition's inputs {[a.str_short() for a in jaxpr.in_avals]}")
    return list(jaxpr.out_avals)


@composite_p.def_impl
def _composite_impl(
    *args: ArrayLike, name: str, attributes: Attributes, version: int, jaxpr: ClosedJaxpr,
) -> list[ArrayImpl]:
    return as_eager_results(eval_closed(jaxpr, args), jaxpr.out_avals)


@jvp_rules.register(composite_p)
def _composite_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> tuple[Any, Any]:
    raise ValueError(
        "JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. See "
        "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html"
    )


@transpose_rules.register(composite_p)
def _composite_transpose(cts: list[Any], *args: Any, **params: Any) -> list[Any]:
    raise ValueError(
        "Transpose rule for composite not implemented. You can use`jax.custom_jvp` or `jax.custom_vjp` to add "
        "support. See https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html"
    )


@batching_rules.register(composite_p)
def _composite_batching(axis_size: int, vals: list[Any], dims: list[Any], **params: Any) -> tuple[Any, Any]:
    raise NotImplementedError("Batching rule for 'composite' not implemented")


def _attribute_text(value: ParamValue, in_array: bool = False) -> str:
    """A StableHLO attribute, as JAX's ``ir_attribute`` writes Python values (MLIR leaves out
    the default ``i64``/``f64`` types of an array's elements)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if in_array else f"{value} : i64"
    if isinstance(value, float):
        return f"{value:e}" if in_array else f"{value:e} : f64"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_attribute_text(v, True) for v in value) + "]"
    raise TypeError(f"composite: attribute value {value!r} has no StableHLO form")


@lowering_rules.register(composite_p)
def _composite_lowering(
    ctx: LoweringRuleContext, *args: str, name: str, attributes: Attributes, version: int, jaxpr: ClosedJaxpr,
) -> list[str]:
    if not _NAMESPACED.match(name):
        raise LoweringError(
            f"composite name {name!r} is not a valid namespaced op name: StableHLO requires one matching "
            f"{_NAMESPACED.pattern} (e.g. \"my_namespace.my_op\")"
        )
    sym = ctx.module.private_function(jaxpr.jaxpr, name)
    attrs_text = [f"{k} = {_attribute_text(v)}" for k, v in attributes if v is not None]
    fields = ([f"composite_attributes = {{{', '.join(attrs_text)}}}"] if attrs_text else []) + [f"decomposition = @{sym}"]
    if version:
        fields.append(f"version = {version} : i32")
    ins = ", ".join(tensor_type(a) for a in ctx.avals_in)
    outs = ", ".join(tensor_type(a) for a in ctx.avals_out)
    n = len(ctx.avals_out)
    result = ctx.emit(f'stablehlo.composite "{name}" {", ".join(args)} {{{", ".join(fields)}}} : ({ins}) -> ({outs})',
                      n_results=n)
    return [result] if n == 1 else [f"{result}#{i}" for i in range(n)]


def _attribute(name: str, key: str, value: Any) -> ParamValue:
    """An attribute as a parameter value: Python scalars, strings, ``None`` and tuples of them."""
    if isinstance(value, Tracer):
        raise UnexpectedTracerError(
            "Found a JAX Tracer as an attribute in the decomposition for the composite op "
            f"'{name}'. This means that the decomposition function closes over a value that is involved in a "
            "JAX transformation. Any values that aren't explicitly known at compile time must be explicitly "
            "passed as arguments to the composite.\n\nNote: If you are passing jax arrays as attributes, use numpy "
            "arrays instead."
        )
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(_attribute(name, key, v) for v in value)
    raise NotImplementedError(
        f"composite {name!r}: attribute {key}={value!r} of type {type(value).__name__}: fcore's composite "
        "attributes are Python scalars, strings, None and tuples of them"
    )


def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Callable[..., Any]:
    """The function ``decomposition`` as one ``composite`` operation named ``name``: call it with
    the operands positionally and the attributes as keywords."""

    @functools.wraps(decomposition)
    def composite_fun(*args: Any, **kwargs: Any) -> Any:
        attributes = tuple((k, _attribute(name, k, v)) for k, v in kwargs.items())
        flat, in_tree = tree_util.tree_flatten(args)
        out_trees: list[tree_util.PyTreeDef] = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = decomposition(*in_tree.unflatten(xs), **kwargs)
            leaves, tree = tree_util.tree_flatten(out)
            out_trees.append(tree)
            return leaves

        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat], f"composite {name}")
        hoisted, consts = hoist_consts(closed)
        outs = composite_p.bind(*consts, *flat, name=name, attributes=attributes, version=int(version), jaxpr=hoisted)
        return out_trees[0].unflatten(outs)

    return composite_fun

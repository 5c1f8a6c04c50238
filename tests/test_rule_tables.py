"""The rule surface (docs/adding_a_primitive.md): primitives hold their own things, interpreters
own typed rule tables, and every registered rule takes exactly its primitive's parameters."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest

import fcore
from fcore import lax
from fcore.backend.lowering import lowering_rules
from fcore.core import Primitive
from fcore.ir.params import NoParams
from fcore.ir.primitive import Primitive as IrPrimitive
from fcore.ir.primitive import registered_primitives
from fcore.ir.rules import MissingRuleError, RuleTable
from fcore.transforms.batching import batching_rules
from fcore.transforms.dce import dce_rules
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.partial_eval import partial_eval_rules
from fcore.transforms.transpose import transpose_rules

TABLES: list[RuleTable[Any]] = [jvp_rules, transpose_rules, batching_rules, partial_eval_rules, dce_rules, lowering_rules]


def _keyword_problem(rule: Callable[..., object], names: frozenset[str]) -> str | None:
    """Why ``rule`` cannot be called with exactly the keywords ``names`` (None if it can)."""
    params = inspect.signature(rule).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        accepted = None
    else:
        accepted = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    required = {p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty}
    if required - names:
        return f"requires keywords {sorted(required - names)} the schema lacks"
    if accepted is not None and names - accepted:
        return f"does not accept schema keywords {sorted(names - accepted)}"
    return None


def test_every_rule_takes_its_primitives_parameters() -> None:
    problems = []
    for prim in registered_primitives().values():
        if prim.param_names is None:
            continue
        rules: list[tuple[str, Callable[..., object] | None]] = [
            ("abstract eval", prim.abstract_eval_rule), ("impl", prim.impl_rule),
        ]
        rules += [(t.name, t.get(prim)) for t in TABLES if t is not dce_rules]  # DCE rules take the equation
        for what, rule in rules:
            if rule is not None and (why := _keyword_problem(rule, prim.param_names)) is not None:
                problems.append(f"{prim.name} {what} rule {why}")
    assert not problems, "\n".join(problems)


def test_primitive_holds_no_transformation_rules() -> None:
    slots = set(IrPrimitive.__slots__)
    assert not {s for s in slots if any(k in s for k in ("jvp", "transpose", "batching", "lowering", "dce", "partial"))}


def test_lax_exports_the_primitive_objects() -> None:
    for name in ("add_p", "exp_p", "tanh_p", "dot_general_p", "reduce_sum_p", "gather_p", "scan_p", "while_p", "cond_p"):
        assert isinstance(getattr(lax, name), Primitive), name
    assert fcore.make_jaxpr(lax.exp)(1.0).eqns[0].primitive is lax.exp_p


def test_missing_rule_names_the_table_and_primitive() -> None:
    table: RuleTable[Callable[[int], int]] = RuleTable("Doubling")
    p = Primitive("test_rule_tables_noop", params=NoParams)
    assert p not in table and table.get(p) is None and table.get(p, abs) is abs
    with pytest.raises(MissingRuleError, match="Doubling rule for 'test_rule_tables_noop' not implemented"):
        table[p]
    table.register(p)(lambda n: 2 * n)
    assert table[p](3) == 6 and list(table) == [p] and len(table) == 1


def test_missing_jvp_rule_is_not_implemented_error() -> None:
    p = Primitive("test_rule_tables_no_jvp", params=NoParams)
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'test_rule_tables_no_jvp'"):
        fcore.jvp(p.bind, (1.0,), (1.0,))


@attrs.frozen(kw_only=True)
class _ScaleParams:
    factor: float


def test_schema_declares_parameter_names_checked_by_typecheck() -> None:
    p = Primitive("test_rule_tables_scale", params=_ScaleParams)
    assert p.param_names == frozenset({"factor"})
    p.def_abstract_eval(lambda x, *, factor: x)
    p.def_impl(lambda x, *, factor: x * factor)
    closed = fcore.make_jaxpr(lambda x: p.bind(x, factor=2.0))(np.float32(1.0))
    fcore.core.typecheck(closed)
    bad = closed.jaxpr.replace(eqns=(closed.jaxpr.eqns[0].replace(params=fcore.core.Params({"scale": 2.0})),))
    with pytest.raises(fcore.JaxprTypeError, match="scale"):
        fcore.core.typecheck(bad)


def test_shorthands_register_in_the_tables() -> None:
    p = Primitive("test_rule_tables_shorthand", params=NoParams)

    def jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
        return primals[0], tangents[0]

    p.def_jvp(jvp)
    p.def_transpose(lambda ct, x: [ct])
    p.def_batching(lambda axis_size, vals, dims: (vals[0], dims[0]))
    p.def_lowering(lambda ctx, x: x)
    assert all(p in t for t in (jvp_rules, transpose_rules, batching_rules, lowering_rules))
    assert inspect.signature(jvp_rules[p]) == inspect.signature(jvp)  # the user's rule, given materialized zeros
    p.def_abstract_eval(lambda x: x)
    p.def_impl(lambda x: x)
    assert float(fcore.grad(p.bind)(3.0)) == 1.0

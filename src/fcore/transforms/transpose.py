"""Transposition of linear jaxprs (reverse mode): one backward walk over the equations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import TypeAlias

from fcore.interpreters.eval import EvalTrace
from fcore.interpreters.stack import set_current_trace, trace_now
from fcore.interpreters.staging import StagingTrace
from fcore.interpreters.trace import equation_source, transform_name_stack
from fcore.ir.core import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.ir.params import EMPTY_PARAMS, ParamValue
from fcore.ir.primitive import Primitive
from fcore.ir.rules import RuleTable
from fcore.transforms import ad_util
from fcore.transforms.partial_eval import TapeEntry
from fcore.transforms.ad_util import UNDEFINED_BY_AVAL_ID, Zero, add_tangents, undefined_of
from fcore.transforms.util import bools, literal_value, verified

#: A transpose rule: ``(ct, *invals, **params) -> [ct_in, ...]`` with one cotangent (or ``None``
#: or ``Zero``) per operand; linear operands arrive as ``UndefinedPrimal``. Where the primitive
#: has several results, ``ct`` is a list. (Operands are variadic, so the signature is not checked
#: against the primitive's parameter schema by mypy; tests/test_rule_tables.py checks it.)
TransposeRule: TypeAlias = Callable[..., Sequence[Any]]

transpose_rules: RuleTable[TransposeRule] = RuleTable("Transpose (for reverse-mode differentiation)")
_transpose_rule = transpose_rules.get
_undefined_get = UNDEFINED_BY_AVAL_ID.get


def call_transpose_rule(prim: Primitive, cts: list[Any], invals: list[Any], params: dict[str, ParamValue]) -> list[Any]:
    rule = transpose_rules[prim]
    if prim.multiple_results:
        cts_in = rule([ad_util.instantiate(c) for c in cts], *invals, **params)
    else:
        ct = cts[0]
        cts_in = rule(ct if type(ct) is not Zero else ad_util.instantiate(ct), *invals, **params)
    return list(cts_in)


def backward_pass(
    jaxpr: Jaxpr, linear: Sequence[bool], consts: Sequence[Any], nonlinear: Sequence[Any], cts: Sequence[Any]
) -> list[Any]:
    """Cotangents of ``jaxpr``'s linear inputs (``_backward_pass``), the equations it stages named
    ``transpose(...)`` as JAX names them."""
    with transform_name_stack("transpose"):
        return _backward_pass(jaxpr, linear, consts, nonlinear, cts)


def _backward_pass(
    jaxpr: Jaxpr, linear: Sequence[bool], consts: Sequence[Any], nonlinear: Sequence[Any], cts: Sequence[Any]
) -> list[Any]:
    """Cotangents of ``jaxpr``'s linear inputs, computed by the current trace.

    ``consts`` are the constvars' values and ``nonlinear`` the non-linear inputs' values;
    ``cts`` holds one cotangent per output (``Zero`` allowed). The non-linear equations run
    forward and the transpose rules of the linear ones run backward, each by ``bind``: under
    the eager trace this *evaluates* the transpose (JAX's ``backward_pass``), under a staging
    trace it builds the transposed jaxpr.
    """
    # Keyed by the variables themselves: a ``Var`` hashes by identity, in C (``id()`` would cost
    # a call and an audit hook per lookup). A literal is never looked up (its hash is by value).
    env: dict[Atom, Any] = dict(zip(jaxpr.constvars, consts))
    lin: set[Atom] = set()
    vals = iter(nonlinear)
    for v, is_lin in zip(jaxpr.invars, linear):
        if is_lin:
            lin.add(v)
        else:
            env[v] = next(vals)

    def read(a: Atom) -> Any:
        return literal_value(a) if type(a) is Literal else env[a]

    add_linear = lin.update
    for eqn in jaxpr.eqns:  # forward: evaluate the non-linear equations
        for a in eqn.invars:
            if type(a) is not Literal and a in lin:
                add_linear(eqn.outvars)
                break
        else:
            with equation_source(eqn):
                outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params.as_dict())
            for v, o in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
                env[v] = o

    ct_env: dict[Atom, Any] = {}
    ct_pop, ct_get = ct_env.pop, ct_env.get
    eager = type(trace_now()) is EvalTrace

    def add_ct(a: Atom, ct: Any) -> None:
        if type(a) is not Literal and a in lin and ct is not None and type(ct) is not Zero:
            prev = ct_get(a)
            ct_env[a] = ct if prev is None else add_tangents(prev, ct)

    for a, ct in zip(jaxpr.outvars, cts):
        add_ct(a, ct)
    # Backward: transpose the linear equations. A non-linear one never has a cotangent (only
    # linear variables get one), so it is skipped as an equation whose results went unused.
    for eqn in reversed(jaxpr.eqns):
        outvars = eqn.outvars
        if len(outvars) == 1:
            ct = ct_pop(outvars[0], None)
            if ct is None:
                continue
            prim = eqn.primitive
            if eager and eqn.params is EMPTY_PARAMS and not prim.multiple_results:
                # Evaluated now, staging nothing: the equation's source info would go unread.
                rule = _transpose_rule(prim)
                if rule is not None:
                    invars = eqn.invars
                    invals: list[Any] = []
                    for a in invars:  # as below, without a comprehension's frame
                        if type(a) is Literal:
                            invals.append(literal_value(a))
                        elif a in lin:
                            aval = a.aval
                            invals.append(_undefined_get(id(aval)) or undefined_of(aval))
                        else:
                            invals.append(env[a])
                    cts_in = rule(ct, *invals)  # never ``Zero``: ``ct_env`` holds none
                    for a, ct in zip(invars, cts_in):  # ``add_ct``, inline
                        # (A rule gives ``None`` for a literal operand: the set lookup, by value
                        # for a literal, is not reached.)
                        if ct is not None and type(ct) is not Zero and a in lin:
                            prev = ct_get(a)
                            ct_env[a] = ct if prev is None else add_tangents(prev, ct)
                    continue
            cts_out = [ct]
        else:
            eqn_cts = [ct_pop(v, None) for v in outvars]
            if all(c is None for c in eqn_cts):
                continue
            cts_out = [Zero(v.aval) if c is None else c for v, c in zip(outvars, eqn_cts)]
            prim = eqn.primitive
        invals = [
            undefined_of(a.aval) if type(a) is not Literal and a in lin else read(a) for a in eqn.invars
        ]
        with equation_source(eqn):
            cts_in = call_transpose_rule(prim, cts_out, invals, eqn.params.as_dict() if eqn.params else {})
        for a, ct in zip(eqn.invars, cts_in):
            add_ct(a, ct)
    outs_ct: list[Any] = []
    for v, is_lin in zip(jaxpr.invars, linear):
        if is_lin:
            ct_v = ct_get(v)
            outs_ct.append(ad_util.instantiate(Zero(v.aval)) if ct_v is None else ct_v)
    return outs_ct


def backward_tape(
    invars: Sequence[Var], entries: Sequence[TapeEntry], outs: Sequence[Var | None], cts: Sequence[Any]
) -> list[Any]:
    """Cotangents of a transient linear map's inputs, from its tape (``PartialEvalTrace.tape``):
    ``_backward_pass``'s backward walk, the transpose rules called directly. Every entry is
    linear (each has one of the map's variables as an operand), a variable operand is a linear
    one and any other operand is its residual value: no forward walk, no environment of values."""
    ct_env: dict[Var, Any] = {}
    ct_pop, ct_get = ct_env.pop, ct_env.get
    for v, ct in zip(outs, cts):
        if v is not None and ct is not None and type(ct) is not Zero:
            prev = ct_get(v)
            ct_env[v] = ct if prev is None else add_tangents(prev, ct)
    with transform_name_stack("transpose"):
        for prim, operands, out in reversed(entries):
            ct = ct_pop(out, None)
            if ct is None:  # (no cotangent reaches it)
                continue
            rule = _transpose_rule(prim)
            if rule is None:
                rule = transpose_rules[prim]  # (raises: no transpose rule)
            invals: list[Any] = []
            for a in operands:
                if type(a) is Var:
                    aval = a.aval
                    invals.append(_undefined_get(id(aval)) or undefined_of(aval))
                else:
                    invals.append(a)
            cts_in = rule(ct, *invals)  # never ``Zero``: ``ct_env`` holds none
            for a, ct in zip(operands, cts_in):
                if ct is not None and type(ct) is not Zero and type(a) is Var:
                    prev = ct_get(a)
                    ct_env[a] = ct if prev is None else add_tangents(prev, ct)
    outs_ct: list[Any] = []
    for v in invars:
        ct_v = ct_get(v)
        outs_ct.append(ad_util.instantiate(Zero(v.aval)) if ct_v is None else ct_v)
    return outs_ct


def transpose_open(jaxpr: Jaxpr, linear: Sequence[bool]) -> tuple[Jaxpr, list[Any]]:
    """Transpose ``jaxpr`` (constvars are non-linear and stay constvars).

    The result takes the non-linear invars followed by one cotangent per output, and
    returns cotangents for the linear invars, in order. Constants the rules create are
    appended to the constvars; their values are returned.
    """
    linear = bools(linear, len(jaxpr.invars), "linear")
    builder = StagingTrace("transpose_jaxpr")
    with set_current_trace(builder):
        consts = [builder.new_const_arg(v.aval) for v in jaxpr.constvars]
        nonlinear = [builder.new_arg(v.aval) for v, lin in zip(jaxpr.invars, linear) if not lin]
        ct_args = [builder.new_arg(a.aval) for a in jaxpr.outvars]
        outs = backward_pass(jaxpr, linear, consts, nonlinear, ct_args)
        result, const_vals = builder.to_jaxpr(outs)
    builder.alive = False
    return result, const_vals[len(jaxpr.constvars) :]


def transpose_jaxpr(closed: ClosedJaxpr, linear: Sequence[bool]) -> ClosedJaxpr:
    """transpose : (a_nl, a_lin) -> b  ~>  (a_nl, ct b) -> ct a_lin

    ``linear[i]`` marks input i as linear. The result takes the non-linear inputs
    followed by the output cotangents and returns cotangents for the linear inputs only.
    Zero cotangents are symbolic; fan-out is accumulated with additions.
    """
    transposed, extra_consts = transpose_open(closed.jaxpr, linear)
    return verified(ClosedJaxpr(transposed, closed.consts + tuple(extra_consts)))

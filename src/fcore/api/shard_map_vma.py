"""Which mesh axes each value of a ``shard_map`` body may vary over (JAX's ``check_vma``).

A body's argument varies over the mesh axes its ``in_specs`` split it along; collectives that
reduce over axes (``psum``, ``pmax``, ``pmin``) make their result the same on every device
along them, ``axis_index`` and the exchanges (``all_gather``, ``psum_scatter``, ``all_to_all``,
``ppermute``) make it vary; any other equation varies where its operands do, looking inside
the jaxprs of calls and control flow (``while``/``scan`` carries to a fixpoint; a ``cond``
result varies where its branches' results do, as in JAX). A result whose ``out_specs`` leave
out an axis it may vary over is refused before anything runs, with JAX's message: its value
would depend on which device's block is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fcore.ir.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from fcore.lax.parallel import all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p, psum_p, psum_scatter_p

__all__ = ["varying_axes"]

Axes = frozenset[str]
_NONE: Axes = frozenset()

_REDUCING = frozenset({psum_p, pmax_p, pmin_p})
_VARYING = frozenset({all_gather_p, psum_scatter_p, all_to_all_p, ppermute_p, axis_index_p})


def varying_axes(jaxpr: Jaxpr, in_axes: Sequence[Axes]) -> list[Axes]:
    """The axes each result of ``jaxpr`` may vary over, given its arguments' (constants vary
    over none)."""
    env: dict[Var, Axes] = dict(zip(jaxpr.invars, in_axes))

    def read(a: Var | Literal) -> Axes:
        return env.get(a, _NONE) if isinstance(a, Var) else _NONE

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = _equation(eqn, ins)
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in jaxpr.outvars]


def _union(xs: Sequence[Axes]) -> Axes:
    return frozenset().union(*xs) if xs else _NONE


def _inner(j: object) -> Jaxpr | None:
    if isinstance(j, ClosedJaxpr):
        return j.jaxpr
    return j if isinstance(j, Jaxpr) else None


def _body(params: Mapping[str, object], key: str) -> Jaxpr:
    body = _inner(params[key])
    assert body is not None, key
    return body


def _equation(eqn: JaxprEqn, ins: list[Axes]) -> list[Axes]:
    params: Mapping[str, object] = eqn.params
    name, n_out = eqn.primitive.name, len(eqn.outvars)
    axes = params.get("axes")
    named = frozenset(a for a in axes if isinstance(a, str)) if isinstance(axes, tuple) else _NONE
    if eqn.primitive in _REDUCING:
        return [a - named for a in ins]
    if eqn.primitive in _VARYING:
        return [_union(ins) | named] * n_out
    if name == "cond":
        branches = params["branches"]
        assert isinstance(branches, tuple)
        per_branch = [varying_axes(b.jaxpr, ins[1:]) for b in branches if isinstance(b, ClosedJaxpr)]
        return [_union(outs) for outs in zip(*per_branch)]
    if name == "while":
        return _while(params, ins)
    if name == "scan":
        return _scan(params, ins, n_out)
    bodies = [j for j in map(_inner, params.values()) if j is not None]
    if len(bodies) == 1 and len(bodies[0].invars) == len(ins) and len(bodies[0].outvars) == n_out:
        return varying_axes(bodies[0], ins)  # a call: pjit, closed_call, remat, custom_jvp/vjp
    return [_union(ins)] * n_out


def _while(params: Mapping[str, object], ins: list[Axes]) -> list[Axes]:
    body = _body(params, "body_jaxpr")
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    assert isinstance(cn, int) and isinstance(bn, int)
    consts, carry = ins[cn : cn + bn], ins[cn + bn :]
    while True:
        new = [c | o for c, o in zip(carry, varying_axes(body, [*consts, *carry]))]
        if new == carry:
            return carry
        carry = new


def _scan(params: Mapping[str, object], ins: list[Axes], n_out: int) -> list[Axes]:
    body = _body(params, "jaxpr")
    nc, nk = params["num_consts"], params["num_carry"]
    assert isinstance(nc, int) and isinstance(nk, int)
    consts, carry, xs = ins[:nc], ins[nc : nc + nk], ins[nc + nk :]
    while True:
        outs = varying_axes(body, [*consts, *carry, *xs])
        new = [c | o for c, o in zip(carry, outs[:nk])]
        if new == carry:
            return [*carry, *outs[nk:]]
        carry = new

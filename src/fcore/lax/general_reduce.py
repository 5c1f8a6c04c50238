"""``reduce_p``: ``lax.reduce`` with a computation that is not one of the monoids fcore maps to
``reduce_sum``/``reduce_max``/... (or with several operands), as JAX binds it.

The equation holds the computation's jaxpr (``jaxpr``: the accumulated values, then the new
ones, to the new accumulated values) and the Python function (``computation``, compared by
identity, as JAX prints it). It lowers to ``stablehlo.reduce`` whose region calls the jaxpr's
private function; eagerly the one equation runs through XLA. Batching moves the reduced axes
past the batch axis. Differentiation is not implemented in fcore (JAX has a jvp rule), and
raises ``NotImplementedError``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fcore import tree_util
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ByIdentity
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape
from fcore.lax.call import launch_for
from fcore.transforms.batching import Dim, batching_rules, bdim_at, moveaxis
from fcore.transforms.jvp import jvp_rules

__all__ = ["Computation", "reduce_p", "bind_reduce"]


class Computation(ByIdentity):
    """The Python reducer of a ``reduce`` equation: compared by identity, printed by name."""

    __slots__ = ("fun",)
    what = "reduce computation"

    def __init__(self, fun: Callable[..., Any]) -> None:
        super().__init__(getattr(fun, "__name__", type(fun).__name__))
        self.fun = fun


#: One ``Computation`` per reducer function, so that equations reducing with the same function
#: are equal (jit's executable cache and the eager path's compiled programs are shared).
_computations: weakref.WeakKeyDictionary[Callable[..., Any], Computation] = weakref.WeakKeyDictionary()


def _computation(fun: Callable[..., Any]) -> Computation:
    try:
        found = _computations.get(fun)
    except TypeError:  # not weakly referenceable
        return Computation(fun)
    if found is None:
        found = _computations[fun] = Computation(fun)
    return found


@attrs.frozen(kw_only=True)
class ReduceParams:
    """``reduce[computation jaxpr dimensions]``: the reducer, its jaxpr, the reduced axes."""

    computation: Computation
    jaxpr: ClosedJaxpr
    dimensions: Shape


reduce_p = Primitive("reduce", multiple_results=True, params=ReduceParams)


@reduce_p.def_abstract_eval
def _reduce_abstract_eval(
    *avals: ShapedArray, computation: Computation, jaxpr: ClosedJaxpr, dimensions: Shape,
) -> list[ShapedArray]:
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    if len(avals) % 2 or not n:
        raise TypeError(f"reduce takes operands and as many init values, got {len(avals)} arrays")
    if len({a.shape for a in operands}) != 1:
        raise TypeError(f"reduce operands must have the same shape, got {[a.shape for a in operands]}")
    if any(a.shape != () for a in inits):
        raise TypeError(f"reduce init values must be scalars, got shapes {[a.shape for a in inits]}")
    if [a.dtype for a in operands] != [a.dtype for a in inits]:
        raise TypeError("reduce operand dtypes should match corresponding initial value dtypes, got "
                        f"operands={[a.dtype.name for a in operands]} and initial_values={[a.dtype.name for a in inits]}")
    shape = operands[0].shape
    if any(not 0 <= d < len(shape) for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce: dimensions {dimensions} are not distinct axes of an operand of rank {len(shape)}")
    out_shape = tuple(s for i, s in enumerate(shape) if i not in dimensions)
    return [a.update(shape=out_shape) for a in operands]


@reduce_p.def_impl
def _reduce_impl(*args: Any, computation: Computation, jaxpr: ClosedJaxpr, dimensions: Shape) -> list[Any]:
    """The one equation compiled and run by XLA (the reducer's order of combination is XLA's)."""
    avals = [ShapedArray(a.shape, a.dtype) for a in args]
    closed = trace_to_jaxpr(
        lambda *xs: reduce_p.bind(*xs, computation=computation, jaxpr=jaxpr, dimensions=dimensions), avals, "reduce",
    )
    return [out.host() for out in launch_for(closed, "reduce")(list(args))]


@jvp_rules.register(reduce_p)
def _reduce_jvp(primals: list[Any], tangents: list[Any], *, computation: Computation, jaxpr: ClosedJaxpr,
                dimensions: Shape) -> tuple[Any, Any]:
    raise NotImplementedError(
        f"fcore cannot differentiate lax.reduce with the computation {computation.name!r} (JAX can); use a monoid "
        "(lax.add, mul, max, min) or fcore.numpy's reductions"
    )


@batching_rules.register(reduce_p)
def _reduce_batching(axis_size: int, vals: list[Any], dims: list[Dim], *, computation: Computation,
                     jaxpr: ClosedJaxpr, dimensions: Shape) -> tuple[list[Any], list[Dim]]:
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("vmap of lax.reduce over batched init values is not supported by fcore")
    operands = [moveaxis(x, d, 0) if d is not None else bdim_at(x, None, axis_size, 0) for x, d in zip(vals[:n], dims[:n])]
    outs: list[Any] = reduce_p.bind(*operands, *vals[n:], computation=computation, jaxpr=jaxpr,
                                    dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * n


@lowering_rules.register(reduce_p)
def _reduce_lowering(ctx: LoweringRuleContext, *args: str, computation: Computation, jaxpr: ClosedJaxpr,
                     dimensions: Shape) -> list[str]:
    n = len(args) // 2
    sym = ctx.module.private_function(jaxpr.jaxpr, f"reduce_{computation.name}")
    elems = [ShapedArray((), a.dtype) for a in ctx.avals_in[:n]]
    types = [tensor_type(e) for e in elems]
    acc = [f"%r{ctx.fn.fresh()[1:]}" for _ in range(n)]
    new = [f"%r{ctx.fn.fresh()[1:]}" for _ in range(n)]
    res = f"%r{ctx.fn.fresh()[1:]}"
    pairs = " ".join(f"({a}: {t}, {b}: {t})" for a, b, t in zip(acc, new, types))
    call = (f"      {res}{':' + str(n) if n > 1 else ''} = func.call @{sym}({', '.join(acc + new)}) : "
            f"({', '.join(types + types)}) -> ({', '.join(types)})")
    results = [res] if n == 1 else [f"{res}#{i}" for i in range(n)]
    region = f"{call}\n      stablehlo.return {', '.join(results)} : {', '.join(types)}"
    inputs = ", ".join(f"({x} init: {i})" for x, i in zip(args[:n], args[n:]))
    sig = (f"({', '.join(tensor_type(a) for a in ctx.avals_in)}) -> "
           f"({', '.join(tensor_type(a) for a in ctx.avals_out)})")
    out = ctx.emit(f"stablehlo.reduce{inputs} across dimensions = [{', '.join(map(str, dimensions))}] : {sig}\n"
                   f"     reducer{pairs} {{\n{region}\n    }}", n_results=n)
    return [out] if n == 1 else [f"{out}#{i}" for i in range(n)]


def bind_reduce(operands: Sequence[Any], inits: Sequence[Any], computation: Callable[..., Any],
                init_tree: Any, dimensions: Sequence[int]) -> list[Array]:
    """Trace ``computation`` on scalars of the init values' types and bind ``reduce``."""
    avals = [ShapedArray((), get_aval(x).dtype) for x in inits]

    def flat(*xs: Any) -> list[Any]:
        a, b = init_tree.unflatten(xs[:len(inits)]), init_tree.unflatten(xs[len(inits):])
        leaves, tree = tree_util.tree_flatten(computation(a, b))
        if tree != init_tree:
            raise TypeError(f"reduce: the computation must return the structure of the init values ({init_tree}), "
                            f"got {tree}")
        return leaves

    closed = trace_to_jaxpr(flat, avals + avals, f"reduce computation {getattr(computation, '__name__', '')}")
    if closed.consts:
        raise NotImplementedError("lax.reduce: a computation closing over arrays is not supported by fcore")
    outs: list[Array] = reduce_p.bind(*operands, *inits, computation=_computation(computation), jaxpr=closed,
                                      dimensions=tuple(dimensions))
    return outs

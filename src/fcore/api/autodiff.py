"""Differentiation front end: jvp, linearize, vjp, grad, value_and_grad.

Pytree handling, argument checks and ``float0`` conversion around the flat cores in
``fcore.transforms``. Integer and boolean values have no tangent space: the transformations
give them symbolic zeros, and here, as in JAX, their tangents and cotangents become ``float0``
arrays (and ``float0`` arrays are accepted for them).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, TypeVar, overload

import numpy as np

from fcore import tree_util
from fcore.api._diff_args import (
    argnums_partial,
    check_callable,
    check_grad_argnums,
    check_input_dtype_revderiv,
    check_output_dtype_revderiv,
    check_scalar,
    ensure_index,
    leaves_checked,
    type_str,
    typeof,
)
from fcore.api._float0 import float0, float0_zeros, is_float0
from fcore.api.staging import fun_name
from fcore.api.vjp_object import VJP as VJPObject
from fcore.api.vjp_object import make_vjp
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import EvalTrace, get_aval
from fcore.interpreters.stack import current_trace, trace_scope
from fcore.interpreters.trace import Trace, transform_name_stack
from fcore.ir.avals import ShapedArray
from fcore.ir.core import Jaxpr
from fcore.transforms import ad_util
from fcore.transforms.ad_util import Zero, has_tangent
from fcore.transforms.autodiff import VJP, linearize_flat, vjp_flat
from fcore.transforms.jvp import JVPTrace, JVPTracer

if TYPE_CHECKING:
    from fcore.lax._base import ArrayLike

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")  # the differentiated argument, and so its gradient
A = TypeVar("A")  # auxiliary data

#: jaxlib's C++ flattener, called directly on this hot path (no Python frame in between).
_flatten = tree_util.default_registry.flatten


def _tangent_type(x: Any) -> tuple[tuple[int, ...], Any]:
    """(shape, dtype) of a tangent or cotangent, which may be a ``float0`` array."""
    if is_float0(x):
        return tuple(np.shape(x)), float0
    aval = typeof(x)
    return aval.shape, aval.dtype


def _tangent_dtype(aval: ShapedArray) -> Any:
    """JAX's ``primal_dtype_to_tangent_dtype``."""
    return aval.dtype if has_tangent(aval) else float0


def _output_tangent(aval: ShapedArray, t: Any) -> Any:
    """What the user sees as the tangent of an output: ``float0`` zeros for integer outputs."""
    return t if has_tangent(aval) else float0_zeros(aval.shape)


def _flat_fun(fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, out_trees: list[tree_util.PyTreeDef]) -> Callable[..., list[Any]]:
    def flat(*leaves: Any) -> list[Any]:
        out = fun(*in_tree.unflatten(leaves))
        out_leaves, out_tree = _flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    return flat


def _split_aux(out: Any) -> tuple[Any, Any]:
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"expected function with aux output to return a two-element tuple, but got type {type(out)} "
            f"with value {out!r}"
        )
    return out[0], out[1]


def _strip_aux(trace: Trace, aux: Any) -> Any:
    """The auxiliary output as primal values: it is not differentiated (JAX's ``_strip_tracer``)."""

    def strip(leaf: Any) -> Any:
        return leaf.primal if type(leaf) is JVPTracer and leaf._trace is trace else leaf

    return tree_util.tree_map(strip, aux)


def _with_aux_stripped(fun: Callable[..., Any], aux_box: list[Any]) -> Callable[..., Any]:
    """``fun`` returning only its main output; the aux output (as primals) goes to ``aux_box``."""

    def main(*args: Any) -> Any:
        out, aux = _split_aux(fun(*args))
        aux_box.append(_strip_aux(current_trace(), aux))
        return out

    return main


@overload
def jvp(
    fun: Callable[..., R], primals: Sequence[Any], tangents: Sequence[Any], has_aux: Literal[False] = False
) -> tuple[R, R]: ...


@overload
def jvp(
    fun: Callable[..., tuple[R, A]], primals: Sequence[Any], tangents: Sequence[Any], has_aux: Literal[True]
) -> tuple[R, R, A]: ...


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> Any:
    """Forward mode: ``(fun(*primals), d fun(primals)[tangents][, aux])``."""
    check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to fcore.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_flat, p_tree = _flatten(primals)
    t_flat, t_tree = _flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to fcore.jvp must have the same tree structure; primals have tree "
            f"structure {p_tree} whereas tangents have tree structure {t_tree}."
        )
    t_flat = [_jvp_tangent(p, t) for p, t in zip(p_flat, t_flat)]
    trace = JVPTrace(current_trace(), f"jvp({fun_name(fun)})")
    with trace_scope(trace), transform_name_stack("jvp"):
        out = fun(*p_tree.unflatten([JVPTracer(trace, p, t) for p, t in zip(p_flat, t_flat)]))
        if has_aux:
            out, aux = _split_aux(out)
            aux = _strip_aux(trace, aux)
        out_flat, out_tree = _flatten(out)
        pairs = [trace.unpack(o) for o in out_flat]
    primals_out = [p for p, _ in pairs]
    tangents_out = [_output_tangent(get_aval(p), ad_util.instantiate(t)) for p, t in pairs]
    result = (out_tree.unflatten(primals_out), out_tree.unflatten(tangents_out))
    return (*result, aux) if has_aux else result


def _jvp_tangent(p: Any, t: Any) -> Any:
    """Check tangent ``t`` against primal ``p`` as ``jax.jvp`` does; integer primals get a symbolic zero."""
    pa = typeof(p)
    t_shape, t_dtype = _tangent_type(t)
    want = _tangent_dtype(pa)
    if t_dtype != want:
        raise TypeError(
            "primal and tangent arguments to fcore.jvp do not match; dtypes must be equal, or in case of "
            f"int/bool primal dtype the tangent dtype must be float0. Got primal dtype {pa.dtype} and so "
            f"expected tangent dtype {want}, but got tangent dtype {t_dtype} instead."
        )
    if t_shape != pa.shape:
        raise ValueError(
            "jvp called with different primal and tangent shapes; "
            f"Got primal shape {pa.shape} and tangent shape as {t_shape}"
        )
    return t if has_tangent(pa) else Zero(pa)


@overload
def linearize(fun: Callable[..., R], *primals: Any, has_aux: Literal[False] = False) -> tuple[R, Callable[..., R]]: ...


@overload
def linearize(
    fun: Callable[..., tuple[R, A]], *primals: Any, has_aux: Literal[True]
) -> tuple[R, Callable[..., R], A]: ...


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_jvp[, aux])``: ``f_jvp`` replays only the staged linear part."""
    check_callable(fun)
    p_flat, p_tree = _flatten(primals)
    in_avals = [typeof(p) for p in p_flat]
    aux_box: list[Any] = []
    main = _with_aux_stripped(fun, aux_box) if has_aux else fun
    out_trees: list[tree_util.PyTreeDef] = []
    lin = linearize_flat(_flat_fun(main, p_tree, out_trees), p_flat, f"linearize({fun_name(fun)})")
    out_tree = out_trees[0]
    out_avals = [get_aval(o) for o in lin.primals_out]

    def f_jvp(*tangents: Any) -> Any:
        t_flat, t_tree = _flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(f"expected {p_tree}, got {t_tree}")
        for a, t in zip(in_avals, t_flat):
            t_shape, t_dtype = _tangent_type(t)
            if (t_shape, t_dtype) != (a.shape, _tangent_dtype(a)):
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the original primal "
                    f"values:\nGot tangent aval {type_str(t_shape, t_dtype)} for primal aval "
                    f"{type_str(a.shape, a.dtype)} but expected {type_str(a.shape, _tangent_dtype(a))}."
                )
        t_flat = [t if has_tangent(a) else np.zeros(a.shape, a.dtype) for a, t in zip(in_avals, t_flat)]
        outs = [_output_tangent(a, t) for a, t in zip(out_avals, lin.jvp(t_flat))]
        return out_tree.unflatten(outs)

    out = out_tree.unflatten(lin.primals_out)
    return (out, f_jvp, aux_box[0]) if has_aux else (out, f_jvp)


@overload
def vjp(
    fun: Callable[..., R], *primals: Any, has_aux: Literal[False] = False, reduce_axes: Sequence[Any] = ()
) -> tuple[R, VJPObject]: ...


@overload
def vjp(
    fun: Callable[..., tuple[R, A]], *primals: Any, has_aux: Literal[True], reduce_axes: Sequence[Any] = ()
) -> tuple[R, VJPObject, A]: ...


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False, reduce_axes: Sequence[Any] = ()) -> Any:
    """``(fun(*primals), f_vjp[, aux])``; ``f_vjp(ct)`` returns a tuple of cotangents.

    ``f_vjp`` is a ``VJP`` object whose leaves are the residuals, as in JAX: it can be passed
    through ``jit``, staged with ``make_jaxpr`` and mapped over with ``tree_map``; its
    ``args_res`` and ``opaque_residuals`` are the saved state (docs/vjp_objects.md)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    check_callable(fun)
    out, apply, p_flat, aux_box = _vjp(fun, primals, has_aux)
    lin = apply.pullback.linearized
    assert isinstance(lin.linear, Jaxpr)  # (only eager ``grad``'s transient map is a ``Tape``)
    f_vjp = make_vjp(p_flat, apply.p_tree, apply.out_tree, lin.linear, lin.residuals, apply.flat)
    return (out, f_vjp, aux_box[0]) if has_aux else (out, f_vjp)


def _vjp(
    fun: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool, *, transient: bool = False
) -> tuple[Any, _VjpApply, list[Any], list[Any]]:
    """``(out, pullback, flat primals, [aux])``; ``transient``: the pullback will only be applied
    eagerly, now (see ``linearize_flat``)."""
    p_flat, p_tree = _flatten(primals)
    in_avals = [typeof(p) for p in p_flat]
    aux_box: list[Any] = []
    main = _with_aux_stripped(fun, aux_box) if has_aux else fun
    out_trees: list[tree_util.PyTreeDef] = []
    outs, pullback = vjp_flat(_flat_fun(main, p_tree, out_trees), p_flat, f"vjp({fun_name(fun)})", transient=transient)
    out_tree = out_trees[0]
    apply = _VjpApply(fun_name(fun), pullback, p_tree, in_avals, out_tree, [get_aval(o) for o in outs])
    return out_tree.unflatten(outs), apply, p_flat, aux_box


class _VjpApply:
    """The static part of the function ``vjp`` returns: ``(residuals, ct) -> cotangents``."""

    def __init__(self, name: str, pullback: VJP, p_tree: tree_util.PyTreeDef, in_avals: list[ShapedArray],
                 out_tree: tree_util.PyTreeDef, out_avals: list[ShapedArray]) -> None:
        self.name, self.pullback, self.p_tree = name, pullback, p_tree
        self.in_avals, self.out_tree, self.out_avals = in_avals, out_tree, out_avals
        self.__name__ = f"vjp_of_{name}"

    def __call__(self, residuals: list[Any], ct: Any) -> tuple[Any, ...]:
        result: tuple[Any, ...] = self.p_tree.unflatten(self.flat(residuals, ct))
        return result

    def flat(self, residuals: list[Any], ct: Any, *extra: Any) -> list[Any]:
        """The flat cotangents of the inputs."""
        if extra:
            raise TypeError(
                f"The function returned by `fcore.vjp` applied to {self.name} was called with "
                f"{len(extra) + 1} arguments, but functions returned by `fcore.vjp` must be called with a "
                "single argument corresponding to the single value returned by the function being "
                "differentiated (even if that returned value is a tuple or other container)."
            )
        ct_flat, ct_tree = _flatten(ct)
        if ct_tree != self.out_tree:
            raise ValueError(
                "unexpected tree structure: the argument to a VJP function returned by `fcore.vjp` must match "
                f"the pytree structure of the output of {self.name}, {self.out_tree}, but got {ct_tree}."
            )
        cts_in = self.pullback([_checked_cotangent(c, a) for c, a in zip(ct_flat, self.out_avals)], residuals)
        return [_output_tangent(a, c) for a, c in zip(self.in_avals, cts_in)]


def _checked_cotangent(ct: Any, aval: ShapedArray) -> Any:
    """The cotangent for an output of type ``aval``, checked as JAX does.

    For an integer output any cotangent of its shape (JAX's is ``float0``) means zero."""
    shape, dtype = _tangent_type(ct)
    if shape == aval.shape and (dtype == aval.dtype or not has_tangent(aval)):
        return ct if has_tangent(aval) else np.zeros(aval.shape, aval.dtype)
    raise ValueError(
        "unexpected type (e.g. shape/dtype) for argument to VJP function: got "
        f"{type_str(shape, dtype)}, but expected {type_str(aval.shape, _tangent_dtype(aval))} because the "
        f"corresponding output of the differentiated function had type {type_str(aval.shape, aval.dtype)}"
    )


@overload
def value_and_grad(  # type: ignore[overload-overlap]  # argnums 0 is also an int: the narrower result wins
    fun: Callable[Concatenate[T, P], ArrayLike],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[Concatenate[T, P], tuple[Array, T]]: ...


@overload
def value_and_grad(
    fun: Callable[Concatenate[T, P], tuple[ArrayLike, A]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[Concatenate[T, P], tuple[tuple[Array, A], T]]: ...


@overload
def value_and_grad(
    fun: Callable[P, ArrayLike],
    argnums: int,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[Array, Any]]: ...


@overload
def value_and_grad(
    fun: Callable[P, tuple[ArrayLike, A]],
    argnums: int,
    has_aux: Literal[True],
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[tuple[Array, A], Any]]: ...


@overload
def value_and_grad(
    fun: Callable[P, ArrayLike],
    argnums: Sequence[int],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[Array, tuple[Any, ...]]]: ...


@overload
def value_and_grad(
    fun: Callable[P, tuple[ArrayLike, A]],
    argnums: Sequence[int],
    has_aux: Literal[True],
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[tuple[Array, A], tuple[Any, ...]]]: ...


@overload
def value_and_grad(
    fun: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: bool,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, Any]: ...


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """``(fun(*args), d fun / d args[argnums])`` for a scalar ``fun`` (real, or complex if ``holomorphic``)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    check_callable(fun)
    nums = ensure_index(argnums)

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        check_grad_argnums(nums, len(args))
        f_partial, dyn_args = argnums_partial(fun, nums, args, kwargs)
        leaves_checked(functools.partial(check_input_dtype_revderiv, "grad", holomorphic, allow_int), dyn_args)
        # Called eagerly, the pullback runs eagerly below and nothing else sees the linear jaxpr.
        transient = type(current_trace()) is EvalTrace
        out, f_vjp, _, aux_box = _vjp(f_partial, dyn_args, has_aux, transient=transient)
        check_scalar(out)
        check_output_dtype_revderiv("grad", holomorphic, out)
        aval = get_aval(out)
        grads = f_vjp(f_vjp.pullback.linearized.residuals, ArrayImpl(np.ones((), aval.dtype), aval.weak_type))
        g = grads[0] if isinstance(nums, int) else grads
        return ((out, aux_box[0]), g) if has_aux else (out, g)

    return value_and_grad_f


@overload
def grad(  # type: ignore[overload-overlap]  # argnums 0 is also an int: the narrower result wins
    fun: Callable[Concatenate[T, P], ArrayLike],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[Concatenate[T, P], T]: ...


@overload
def grad(
    fun: Callable[Concatenate[T, P], tuple[ArrayLike, A]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[Concatenate[T, P], tuple[T, A]]: ...


@overload
def grad(
    fun: Callable[P, ArrayLike],
    argnums: int,
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, Any]: ...


@overload
def grad(
    fun: Callable[P, tuple[ArrayLike, A]],
    argnums: int,
    has_aux: Literal[True],
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[Any, A]]: ...


@overload
def grad(
    fun: Callable[P, ArrayLike],
    argnums: Sequence[int],
    has_aux: Literal[False] = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[Any, ...]]: ...


@overload
def grad(
    fun: Callable[P, tuple[ArrayLike, A]],
    argnums: Sequence[int],
    has_aux: Literal[True],
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, tuple[tuple[Any, ...], A]]: ...


@overload
def grad(
    fun: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: bool,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[P, Any]: ...


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """The gradient of a scalar ``fun`` with respect to ``args[argnums]`` (``(grad, aux)`` with ``has_aux``)."""
    vg = value_and_grad(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int, reduce_axes=reduce_axes)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f

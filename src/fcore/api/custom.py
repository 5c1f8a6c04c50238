"""User-defined derivative rules (``custom_jvp``, ``custom_vjp``) and ``checkpoint``/``remat``.

Each is a higher-order primitive (``fcore.lax.custom_derivatives``, ``fcore.lax.remat``)
whose rules every transformation and jaxpr pass applies. The front end here picks how a
call runs, as JAX's traces do:

* outside any transformation the Python function just runs;
* directly under the differentiation (``jvp``/``grad``/``linearize``/``vjp``) of one of its
  arguments, the user's rule runs in Python on the primal values (so Python control flow
  on concrete values works in it, as in JAX);
* otherwise (``jit``/``make_jaxpr`` staging, ``vmap``, ...) the function is traced to a
  jaxpr and the primitive is bound; its rule is traced when first needed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

from fcore import tree_util
from fcore.api.staging import fun_name, merge_static, normalize_argnums, split_static
from fcore.errors import UnexpectedTracerError
from fcore.interpreters.eval import EvalTrace, get_aval
from fcore.interpreters.stack import current_trace, set_current_trace
from fcore.interpreters.staging import StagingTracer, trace_to_jaxpr
from fcore.interpreters.trace import Trace, Tracer
from fcore.ir.avals import ShapedArray, typematch
from fcore.ir.core import ClosedJaxpr
from fcore.lax.call import hoist_consts
from fcore.lax.custom_derivatives import CustomBwd, custom_jvp_call_p, custom_lin_p, custom_vjp_call_p
from fcore.lax.elementwise import convert_element_type, stop_gradient
from fcore.lax.remat import as_policy, bind_remat
from fcore.lax.traced_rules import LazyJaxpr, trace_rule, with_closure
from fcore.transforms import ad_util
from fcore.transforms.ad_util import Zero, has_tangent
from fcore.transforms.jvp import JVPTrace, JVPTracer
from fcore.transforms.partial_eval import PartialEvalTrace

__all__ = ["custom_jvp", "custom_vjp", "checkpoint", "remat"]


# =========================================================================================
# Shared helpers
# =========================================================================================
def _resolve_kwargs(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], kind: str
) -> tuple[Any, ...]:
    """Arguments as positional ones, defaults filled in (JAX's ``resolve_kwargs``)."""
    if isinstance(fun, functools.partial):
        if kwargs:
            raise TypeError(f"keyword arguments to a {kind} function wrapping functools.partial could not be "
                            f"resolved to positions: {', '.join(kwargs)}")
        return args
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        if kwargs:
            raise TypeError(f"keyword arguments to {fun_name(fun)} could not be resolved to positions") from None
        return args
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(
            f"The input arguments to the {kind}-decorated function {fun_name(fun)} could not be resolved to "
            f"positional-only arguments. Binding failed with the error:\n{e}"
        ) from e
    bound.apply_defaults()
    passed = [k for k in bound.kwargs if k in kwargs]
    if passed:
        raise TypeError(f"The following keyword arguments could not be resolved to positions: {', '.join(passed)}")
    return tuple(bound.args)

P = ParamSpec("P")
R = TypeVar("R")


def _nondiff_argnums(fun: Callable[..., Any], nums: Sequence[int], names: Sequence[str]) -> tuple[int, ...]:
    """``nondiff_argnums`` plus the positions of the parameters named in ``nondiff_argnames``."""
    found = set(nums)
    if names:
        params = list(inspect.signature(fun).parameters.values())
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        found.update(i for i, p in enumerate(params) if p.name in names and p.kind in positional)
    return tuple(sorted(found))


def _handling_trace(args: tuple[Any, ...]) -> tuple[Trace, tuple[Any, ...]]:
    """The trace a custom function's call goes to, and the arguments as that trace sees them.

    As in JAX, a differentiation trace (a JVP, or linearize's partial evaluation) that
    differentiates none of the arguments hands the call to its parent: a rule calling its
    own function on primal values thus runs it on those values, concretely under eager
    differentiation (Python control flow on them works, as in JAX).
    """
    trace = current_trace()
    if not isinstance(trace, (JVPTrace, PartialEvalTrace)):
        return trace, args
    leaves, tree = tree_util.tree_flatten(args)
    moved = False
    while True:
        if isinstance(trace, JVPTrace):
            if any(type(x) is JVPTracer and x._trace is trace and type(x.tangent) is not Zero for x in leaves):
                break
            leaves = [x.primal if type(x) is JVPTracer and x._trace is trace else x for x in leaves]
        elif isinstance(trace, PartialEvalTrace):
            if any(type(x) is StagingTracer and x._trace is trace for x in leaves):
                break
        else:
            break
        trace, moved = trace.parent, True
    return trace, tuple(tree_util.tree_unflatten(tree, leaves)) if moved else args


def _own_pairs(trace: JVPTrace, flat: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
    """Primals and tangents when ``trace`` differentiates one of the ``flat`` arguments."""
    if not any(type(x) is JVPTracer and x._trace is trace for x in flat):
        return None
    pairs = [trace.unpack(x) for x in flat]
    return [p for p, _ in pairs], [t for _, t in pairs]


def _split_args(args: tuple[Any, ...], nondiff: tuple[int, ...]) -> tuple[list[Any], dict[int, Any]]:
    if not nondiff:
        return list(args), {}
    return split_static(args, nondiff)


def _fmt_tree(tree: tree_util.PyTreeDef, avals: Sequence[ShapedArray]) -> str:
    return str(tree_util.tree_unflatten(tree, [a.str_short() for a in avals])).replace("'", "")


def _match_outs(kind: str, name: str, outs: Sequence[Any], tree: tree_util.PyTreeDef,
                want_tree: tree_util.PyTreeDef, want: Sequence[ShapedArray]) -> list[Any]:
    """A rule's primal outputs, checked against the function's and given its exact types
    (a weak type may differ, as JAX allows; the staged equation has the function's types)."""
    got = [get_aval(o) for o in outs]
    if tree != want_tree or not all(typematch(g, w) for g, w in zip(got, want)):
        raise TypeError(
            f"{kind} of {name} must produce primal outputs with the container structure, shapes and dtypes of "
            f"{name}'s own outputs, {_fmt_tree(want_tree, want)}, but produced {_fmt_tree(tree, got)}"
        )
    return [o if g.weak_type == w.weak_type else convert_element_type(o, w.dtype, w.weak_type)
            for o, g, w in zip(outs, got, want)]


# =========================================================================================
# custom_jvp
# =========================================================================================
def _stage_body(
    fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, static: dict[int, Any], avals: Sequence[ShapedArray],
    description: str,
) -> tuple[ClosedJaxpr, list[Any], tree_util.PyTreeDef]:
    """A custom function's body staged for ``avals``: the const-free jaxpr, its hoisted consts
    (the closure operands) and the output tree."""
    out_trees: list[tree_util.PyTreeDef] = []

    def body(*leaves: Any) -> list[Any]:
        out = fun(*merge_static(list(tree_util.tree_unflatten(in_tree, leaves)), static))
        out_flat, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_flat

    call, consts = hoist_consts(trace_to_jaxpr(body, avals, description))
    return call, consts, out_trees[0]


def _forward_attr(self: Any, name: str) -> Any:
    """JAX's ``forward_attr``: an attribute the decorator lacks is the wrapped function's (so
    ``custom_vjp(custom_vmap(f))`` still offers ``def_vmap``)."""
    if (name.startswith("__") and name.endswith("__")) or name == "fun":
        raise AttributeError(name)
    return getattr(self.fun, name)


class custom_jvp(Generic[P, R]):  # noqa: N801  (JAX's name)
    """``f = custom_jvp(f)``; ``@f.defjvp def f_jvp(primals, tangents): return out, t_out``.

    With ``nondiff_argnums`` the rule is called as ``f_jvp(*nondiff_args, primals, tangents)``
    with only the other arguments in ``primals``/``tangents``.
    """

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        self.fun: Callable[..., Any] = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        functools.update_wrapper(self, fun, updated=())  # never copy fun.__dict__ over our attributes

    __getattr__ = _forward_attr

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp rules with symbolic_zeros=True are not supported by fcore")
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """One function per argument: ``fn(t, primal_out, *primals)`` is that argument's contribution."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            out = self._invoke(*primals)
            terms = [fn(t, out, *primals) for fn, t in zip(tangent_fns, tangents) if fn is not None]
            if not terms:
                from fcore.numpy import zeros_like

                return out, tree_util.tree_map(zeros_like, out)
            total = terms[0]
            for term in terms[1:]:
                total = tree_util.tree_map(lambda a, b: a + b, total, term)
            return out, total

        jvp.__name__ = f"{fun_name(self.fun)}_jvps"
        self.jvp = jvp

    def _invoke(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
        trace, args = _handling_trace(args)
        if trace is current_trace():
            return self._call(trace, args)
        with set_current_trace(trace):
            return self._call(trace, args)


    if TYPE_CHECKING:  # called as ``fun`` is; ``_invoke`` itself, with no extra frame, at runtime
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    else:
        __call__ = _invoke
    def _call(self, trace: Trace, args: tuple[Any, ...]) -> Any:
        if type(trace) is EvalTrace:
            return self.fun(*args)
        nondiff = normalize_argnums(self.nondiff_argnums, len(args))
        diff, static = _split_args(args, nondiff)
        static = {i: tree_util.tree_map(lambda x: stop_gradient(x) if isinstance(x, Tracer) else x, v)
                  for i, v in static.items()}
        flat, in_tree = tree_util.tree_flatten(tuple(diff))
        if isinstance(trace, JVPTrace):
            split = _own_pairs(trace, flat)
            if split is not None:
                return self._apply_rule(trace, static, in_tree, *split)
        return self._bind(flat, in_tree, static)

    def _rule(self, static: dict[int, Any], in_tree: tree_util.PyTreeDef, primals: Sequence[Any],
              tangents: Sequence[Any], expect: tuple[tree_util.PyTreeDef, Sequence[ShapedArray]] | None = None,
              ) -> tuple[list[Any], list[Any], tree_util.PyTreeDef]:
        """Call the user's rule on flat values; flat (checked) primal and tangent outputs.
        With ``expect`` (the staged body's output tree and types), the primal outputs are
        checked against it and given exactly its types."""
        assert self.jvp is not None
        name, rule_name = fun_name(self.fun), fun_name(self.jvp)
        pair = self.jvp(
            *[static[i] for i in sorted(static)],
            tree_util.tree_unflatten(in_tree, primals), tree_util.tree_unflatten(in_tree, tangents),
        )
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(
                f"Custom JVP rule {rule_name} for function {name} must produce a pair (list or tuple of length two) "
                f"representing primal and tangent outputs, but got {pair}."
            )
        outs, out_tree = tree_util.tree_flatten(pair[0])
        touts, t_tree = tree_util.tree_flatten(pair[1])
        if out_tree != t_tree:
            raise TypeError(
                f"Custom JVP rule {rule_name} for function {name} must produce primal and tangent outputs with "
                f"equal container (pytree) structures, but got {out_tree} and {t_tree} respectively."
            )
        if expect is not None:
            outs = _match_outs(f"Custom JVP rule {rule_name}", name, outs, out_tree, *expect)
        for o, t in zip(outs, touts):
            p = get_aval(o)
            if not has_tangent(p):  # an integer output's tangent is a zero (jax's float0) whatever it is
                continue
            ta = get_aval(t)
            if p.shape != ta.shape or p.dtype != ta.dtype:
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. "
                    f"Expected {p.strip_weak_type().str_short()} (tangent type of {p.str_short()}) but got "
                    f"{ta.strip_weak_type().str_short()}."
                )
        return outs, touts, out_tree

    def _apply_rule(self, trace: JVPTrace, static: dict[int, Any], in_tree: tree_util.PyTreeDef,
                    primals: list[Any], tangents: list[Any]) -> Any:
        """The rule on the primal values of ``trace``'s tracers (JAX's ``process_custom_jvp_call``)."""
        with set_current_trace(trace.rule_trace):
            tangents = [ad_util.instantiate(t) for t in tangents]
            outs, touts, out_tree = self._rule(static, in_tree, primals, tangents)
        results = []
        for o, t in zip(outs, touts):
            aval = get_aval(o)
            results.append(JVPTracer(trace, o, t if has_tangent(aval) else Zero(aval)))
        return tree_util.tree_unflatten(out_tree, results)

    def _bind(self, flat: list[Any], in_tree: tree_util.PyTreeDef, static: dict[int, Any]) -> Any:
        """Stage the body, bind ``custom_jvp_call`` with the rule traced when first needed."""
        assert self.jvp is not None
        name, rule_name = fun_name(self.fun), fun_name(self.jvp)
        avals = [get_aval(x) for x in flat]
        call, consts, out_tree = _stage_body(self.fun, in_tree, static, avals, f"custom_jvp({name})")
        out_avals = call.out_avals

        def rule(*xs: Any) -> list[Any]:
            n = len(xs) // 2
            # An integer argument's tangent is a zero, as the rule sees it when called directly.
            tangents = [t if has_tangent(a) else ad_util.instantiate(Zero(a)) for t, a in zip(xs[n:], avals)]
            outs, touts, _ = self._rule(static, in_tree, xs[:n], tangents, (out_tree, out_avals))
            # Tangents get their primal's exact type; integer outputs have none (a zero stands in).
            touts = [
                ad_util.instantiate(Zero(a)) if not has_tangent(a)
                else t if get_aval(t).weak_type == a.weak_type else convert_element_type(t, a.dtype, a.weak_type)
                for t, a in zip(touts, out_avals)
            ]
            return [*outs, *touts]

        const_avals = call.in_avals[: len(consts)]
        jvp = LazyJaxpr(rule_name, lambda: trace_rule(
            rule, consts, const_avals, [*avals, *avals], f"custom_jvp rule of {name}"))
        outs = custom_jvp_call_p.bind(
            *consts, *flat, call_jaxpr=call, jvp=jvp, num_consts=len(consts), symbolic_zeros=False, name=name
        )
        return tree_util.tree_unflatten(out_tree, outs)


# =========================================================================================
# custom_vjp
# =========================================================================================
class custom_vjp(Generic[P, R]):  # noqa: N801  (JAX's name)
    """``f = custom_vjp(f)``; ``f.defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, res)`` and
    ``bwd(res, ct) -> tuple`` of one cotangent per argument (``None`` for a zero).

    With ``nondiff_argnums``, ``fwd`` takes all arguments, ``bwd`` is called as
    ``bwd(*nondiff_args, res, ct)`` and returns cotangents for the other arguments only.
    """

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        self.fun: Callable[..., Any] = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        functools.update_wrapper(self, fun, updated=())  # never copy fun.__dict__ over our attributes

    __getattr__ = _forward_attr

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp rules with symbolic_zeros=True are not supported by fcore")
        self.fwd, self.bwd = fwd, bwd

    def _invoke(self, *args: Any, **kwargs: Any) -> Any:
        name = fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        nondiff = normalize_argnums(self.nondiff_argnums, len(args))
        for i in nondiff:
            if any(isinstance(x, Tracer) for x in tree_util.tree_leaves(args[i])):
                raise UnexpectedTracerError(
                    "Found a tracer passed as an argument to a custom_vjp function in a position indicated by "
                    "nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable "
                    "arguments to custom_vjp functions; instead, nondiff_argnums should only be used for "
                    "arguments that can't be or contain tracers, e.g. function-valued arguments. In particular, "
                    "array-valued arguments should typically not be indicated as nondiff_argnums."
                )
        trace, args = _handling_trace(args)
        if trace is current_trace():
            return self._call(trace, args, nondiff)
        with set_current_trace(trace):
            return self._call(trace, args, nondiff)


    if TYPE_CHECKING:  # called as ``fun`` is; ``_invoke`` itself, with no extra frame, at runtime
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    else:
        __call__ = _invoke
    def _call(self, trace: Trace, args: tuple[Any, ...], nondiff: tuple[int, ...]) -> Any:
        if type(trace) is EvalTrace:
            return self.fun(*args)
        diff, static = _split_args(args, nondiff)
        flat, in_tree = tree_util.tree_flatten(tuple(diff))
        if isinstance(trace, JVPTrace):
            split = _own_pairs(trace, flat)
            if split is not None:
                return self._apply_rule(trace, static, in_tree, *split)
        return self._bind(flat, in_tree, static)

    def _fwd(self, static: dict[int, Any], in_tree: tree_util.PyTreeDef,
             primals: Sequence[Any]) -> tuple[list[Any], tree_util.PyTreeDef, list[Any], tree_util.PyTreeDef]:
        assert self.fwd is not None
        pair = self.fwd(*merge_static(list(tree_util.tree_unflatten(in_tree, primals)), static))
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(
                f"Custom VJP fwd rule {fun_name(self.fwd)} for function {fun_name(self.fun)} must produce a pair "
                "(list or tuple of length two) where the first element represents the primal output and the "
                f"second element represents residuals, but produced {pair}."
            )
        outs, out_tree = tree_util.tree_flatten(pair[0])
        res, res_tree = tree_util.tree_flatten(pair[1])
        return outs, out_tree, res, res_tree

    def _make_bwd(self, static: dict[int, Any], in_tree: tree_util.PyTreeDef, in_avals: Sequence[ShapedArray],
                  res_tree: Callable[[], tree_util.PyTreeDef], out_tree: tree_util.PyTreeDef,
                  out_avals: Sequence[ShapedArray], closure: Sequence[Any] = ()) -> CustomBwd:
        """The user's ``bwd`` as a flat function: one cotangent (or ``None``) per input leaf.
        Its residuals start with the current values of ``closure`` (see ``with_closure``)."""
        bwd = self.bwd
        assert bwd is not None
        name = fun_name(bwd)
        n_args = in_tree.num_leaves
        diff_args = tree_util.tree_unflatten(in_tree, list(range(n_args)))

        def flat_bwd(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
            values, res = res[: len(closure)], res[len(closure) :]
            py_cts = with_closure(lambda: bwd(
                *[static[i] for i in sorted(static)], tree_util.tree_unflatten(res_tree(), res),
                tree_util.tree_unflatten(out_tree, cts),
            ), closure, values)
            if isinstance(py_cts, list) and len(py_cts) == len(diff_args):
                py_cts = tuple(py_cts)
            try:
                if not isinstance(py_cts, tuple) or len(py_cts) != len(diff_args):
                    raise ValueError
                per_leaf = tree_util.broadcast_prefix(py_cts, diff_args, is_leaf=lambda x: x is None)
            except ValueError:
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the "
                    "args tuple of the primal function, and in particular must produce a tuple of length equal to "
                    f"the number of arguments to the primal function, but got bwd output structure "
                    f"{tree_util.tree_structure(py_cts)} for primal input structure {in_tree}."
                ) from None
            out: list[Any] = []
            for ct, aval in zip(per_leaf, in_avals):
                if ct is None or not has_tangent(aval):
                    out.append(None)
                    continue
                got = get_aval(ct)
                if got.shape != aval.shape:
                    raise ValueError(
                        "Custom VJP bwd rule must produce an output with the same shape/dtypes as the args tuple "
                        f"of the primal function, but got {got.str_short()} for an input of type {aval.str_short()}"
                    )
                if got.dtype != aval.dtype:  # (a weak type may differ, as in JAX)
                    ct = convert_element_type(ct, aval.dtype, got.weak_type)
                out.append(ct)
            return out

        return CustomBwd(name, flat_bwd, out_avals)

    def _apply_rule(self, trace: JVPTrace, static: dict[int, Any], in_tree: tree_util.PyTreeDef,
                    primals: list[Any], tangents: list[Any]) -> Any:
        """Run ``fwd`` now; the tangents are ``custom_lin`` of the residuals (JAX's ``process_custom_vjp_call``)."""
        with set_current_trace(trace.parent):
            outs, out_tree, res, res_tree = self._fwd(static, in_tree, primals)
        out_avals = [get_aval(o) for o in outs]
        bwd = self._make_bwd(static, in_tree, [get_aval(p) for p in primals], lambda: res_tree, out_tree, out_avals)
        with set_current_trace(trace.rule_trace):
            tangents = [ad_util.instantiate(t) for t in tangents]
            t_out = custom_lin_p.bind(*res, *tangents, num_res=len(res), bwd=bwd)
        results = [JVPTracer(trace, o, t if has_tangent(a) else Zero(a)) for o, t, a in zip(outs, t_out, out_avals)]
        return tree_util.tree_unflatten(out_tree, results)

    def _bind(self, flat: list[Any], in_tree: tree_util.PyTreeDef, static: dict[int, Any]) -> Any:
        """Stage the body, bind ``custom_vjp_call`` with ``fwd`` traced when first needed."""
        assert self.fwd is not None
        name, fwd_name = fun_name(self.fun), fun_name(self.fwd)
        avals = [get_aval(x) for x in flat]
        res_trees: list[tree_util.PyTreeDef] = []
        call, consts, out_tree = _stage_body(self.fun, in_tree, static, avals, f"custom_vjp({name})")
        out_avals = call.out_avals

        def fwd(*leaves: Any) -> list[Any]:
            outs, tree, res, res_tree = self._fwd(static, in_tree, leaves)
            outs = _match_outs(f"Custom VJP fwd rule {fwd_name}", name, outs, tree, out_tree, out_avals)
            res_trees.append(res_tree)
            return [*outs, *res]

        const_avals = call.in_avals[: len(consts)]
        lazy_fwd = LazyJaxpr(fwd_name, lambda: trace_rule(
            fwd, consts, const_avals, avals, f"custom_vjp fwd of {name}"))
        bwd = self._make_bwd(static, in_tree, avals, lambda: res_trees[0], out_tree, out_avals, consts)
        outs = custom_vjp_call_p.bind(
            *consts, *flat, call_jaxpr=call, fwd=lazy_fwd, bwd=bwd, num_consts=len(consts), symbolic_zeros=False,
            name=name,
        )
        return tree_util.tree_unflatten(out_tree, outs)


# =========================================================================================
# checkpoint / remat
# =========================================================================================
def checkpoint(
    fun: Callable[P, R],
    *,
    prevent_cse: bool = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | tuple[int, ...] = (),
) -> Callable[P, R]:
    """``jax.checkpoint``: same values and derivatives, but differentiation saves only the
    inputs (and what ``policy`` allows) and recomputes the rest of the function's values."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if not (isinstance(static_argnums, tuple) and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be an int, tuple of "
                        f"ints or, bool, but got value {static_argnums}")
    if not isinstance(prevent_cse, bool):
        raise TypeError(f"prevent_cse must be a bool, got {type(prevent_cse)=}")
    save = as_policy(policy)

    @functools.wraps(fun)
    def fun_remat(*args: Any, **kwargs: Any) -> Any:
        if not all(-len(args) <= d < len(args) for d in static_argnums):
            raise ValueError(
                "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer values "
                "greater than or equal to `-len(args)` and less than `len(args)`, but got "
                f"{static_argnums}, while `len(args)` = {len(args)}"
            )
        if type(current_trace()) is EvalTrace:
            return fun(*args, **kwargs)  # nothing to differentiate: no residuals to save
        dyn, static = split_static(args, static_argnums)
        flat, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
        out_trees: list[tree_util.PyTreeDef] = []

        def body(*leaves: Any) -> list[Any]:
            dyn_args, kw = tree_util.tree_unflatten(in_tree, leaves)
            out_flat, out_tree = tree_util.tree_flatten(fun(*merge_static(list(dyn_args), static), **kw))
            out_trees.append(out_tree)
            return out_flat

        closed = trace_to_jaxpr(body, [get_aval(x) for x in flat], f"checkpoint({fun_name(fun)})")
        outs = bind_remat(closed, flat, prevent_cse=prevent_cse, differentiated=False, policy=save)
        return tree_util.tree_unflatten(out_trees[0], outs)

    return fun_remat


remat = checkpoint

"""``fcore.shard_map``: run a function on each device's block of its arguments (manual SPMD).

``shard_map(f, mesh=, in_specs=, out_specs=)`` traces ``f`` once on the per-device block
shapes with the mesh's axis names bound (so ``lax.psum(x, "x")`` and the other collectives
of ``fcore.lax.parallel`` work in it) and binds one ``shard_map`` equation. It lowers to
Shardy's ``sdy.manual_computation`` over the mesh; eagerly it runs as a jitted program.
With ``check_vma`` (the default) a result whose ``out_specs`` leave out a mesh axis it may vary
over is refused (``shard_map_vma``); differentiation scales and sums the cotangents of
replicated values as JAX's ``check_vma=False`` does (the values are the same either way).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import attrs

from fcore import tree_util
from fcore.api.shard_map_vma import varying_axes
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.config import eager_checks
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.interpreters.float_checks import check_sharded, float_checks_off
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.lax._base import ArrayLike
from fcore.lax._primitive import Primitive
from fcore.lax.call import eval_closed, hoist_consts
from fcore.lax.parallel import axis_env, psum_p
from fcore.sharding import Mesh, NamedSharding, PartitionSpec, get_mesh
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate, is_undefined
from fcore.transforms.jvp import jvp_jaxpr, jvp_rules
from fcore.lax.shapes import reshape
from fcore.transforms.partial_eval import partial_eval_jaxpr, partial_eval_rules
from fcore.transforms.transpose import transpose_jaxpr, transpose_rules

__all__ = ["shard_map", "shard_map_p"]


def _ways(mesh: Mesh, spec: PartitionSpec, dim: int) -> int:
    sizes = mesh.shape
    return math.prod(sizes[a] for a in spec.axes_of(dim))


def _unmentioned(mesh: Mesh, spec: PartitionSpec) -> tuple[str, ...]:
    used = {a for d in range(len(spec)) for a in spec.axes_of(d)}
    return tuple(a for a in mesh.axis_names if a not in used)


def _global_aval(mesh: Mesh, spec: PartitionSpec, aval: ShapedArray) -> ShapedArray:
    shape = tuple(s * _ways(mesh, spec, d) for d, s in enumerate(aval.shape))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _local_aval(mesh: Mesh, spec: PartitionSpec, aval: ShapedArray) -> ShapedArray:
    shape = tuple(s // _ways(mesh, spec, d) for d, s in enumerate(aval.shape))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


# =========================================================================================
# shard_map[jaxpr mesh in_specs out_specs]
# =========================================================================================
@attrs.frozen(kw_only=True)
class ShardMapParams:
    """``shard_map[jaxpr mesh in_specs out_specs]``: the const-free body on per-device blocks,
    the mesh, and per operand / result the ``PartitionSpec`` that maps blocks to the global value."""

    jaxpr: ClosedJaxpr
    mesh: Mesh
    in_specs: tuple[PartitionSpec, ...]
    out_specs: tuple[PartitionSpec, ...]


shard_map_p = Primitive("shard_map", multiple_results=True, params=ShardMapParams)
shard_map_p.impl_takes_arrays = True


@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(
    *avals: ShapedArray, jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
) -> list[ShapedArray]:
    if len(avals) != len(in_specs) or len(avals) != len(jaxpr.in_avals):
        raise TypeError(f"shard_map: {len(avals)} operands for {len(in_specs)} in_specs")
    for a, s, local in zip(avals, in_specs, jaxpr.in_avals):
        if _local_aval(mesh, s, a).shape != local.shape:
            raise TypeError(f"shard_map: operand {a.str_short()} with spec {s} does not give blocks {local.str_short()}")
    return [_global_aval(mesh, s, a) for s, a in zip(out_specs, jaxpr.out_avals)]


_eager: dict[tuple[ClosedJaxpr, Mesh, tuple[PartitionSpec, ...], tuple[PartitionSpec, ...]], Callable[..., Any]] = {}


@shard_map_p.def_impl
def _shard_map_impl(
    *args: ArrayLike, jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
) -> list[Array]:
    """Eagerly: a jitted program whose arguments are laid out as ``in_specs`` say (as jax)."""
    key = (jaxpr, mesh, in_specs, out_specs)
    fn = _eager.get(key)
    if fn is None:
        from fcore.api.jit import jit

        def run(*xs: Any) -> list[Array]:
            outs: list[Array] = shard_map_p.bind(*xs, jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
            return outs

        fn = jit(run, in_shardings=tuple(NamedSharding(mesh, s) for s in in_specs))
        if len(_eager) < 256:
            _eager[key] = fn
    if eager_checks().floats:  # checked here, as JAX: the jit's own check would re-run this
        with float_checks_off():
            checked: list[Array] = fn(*args)
        check_sharded(checked)
        return checked
    outs: list[Array] = fn(*args)
    return outs


@jvp_rules.register(shard_map_p, symbolic_zeros=True)
def _shard_map_jvp(
    primals: list[Array], tangents: list[Tangent], *, jaxpr: ClosedJaxpr, mesh: Mesh,
    in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
) -> tuple[list[Array], list[Tangent]]:
    nonzeros = [type(t) is not Zero for t in tangents]
    with axis_env(mesh.shape):
        jvp_closed, out_nz = jvp_jaxpr(jaxpr, nonzeros, False)
    body, consts = hoist_consts(jvp_closed)
    rep = PartitionSpec()
    specs_in = (*[rep] * len(consts), *in_specs, *[s for s, nz in zip(in_specs, nonzeros) if nz])
    specs_out = (*out_specs, *[s for s, nz in zip(out_specs, out_nz) if nz])
    outs: list[Array] = shard_map_p.bind(
        *consts, *primals, *[t for t in tangents if type(t) is not Zero],
        jaxpr=body, mesh=mesh, in_specs=specs_in, out_specs=specs_out,
    )
    n = len(jaxpr.out_avals)
    tangent_it = iter(outs[n:])
    out_avals = _shard_map_abstract_eval(*[get_aval(p) for p in primals], jaxpr=jaxpr, mesh=mesh,
                                         in_specs=in_specs, out_specs=out_specs)
    touts: list[Tangent] = [next(tangent_it) if nz else Zero(a) for nz, a in zip(out_nz, out_avals)]
    return outs[:n], touts


@transpose_rules.register(shard_map_p)
def _shard_map_transpose(
    cts: list[Any], *invals: Array | UndefinedPrimal, jaxpr: ClosedJaxpr, mesh: Mesh,
    in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
) -> list[Array | None]:
    linear = [is_undefined(x) for x in invals]
    nonlinear = [x for x in invals if not isinstance(x, UndefinedPrimal)]
    cts = [instantiate(ct) for ct in cts]
    with axis_env(mesh.shape):
        # The body's non-linear part runs forward first (a jvp body of a remat mixes primal and
        # tangent results in one equation, which a backward walk alone would take as all linear).
        known, unknown, _, num_res = partial_eval_jaxpr(jaxpr, linear, True)
        transposed = transpose_jaxpr(unknown, [False] * num_res + [True] * sum(linear))
    nl_specs = [s for s, lin in zip(in_specs, linear) if not lin]
    lin_specs = [s for s, lin in zip(in_specs, linear) if lin]
    out_scale = [math.prod(mesh.shape[a] for a in _unmentioned(mesh, s)) for s in out_specs]
    sums = [_unmentioned(mesh, s) for s in lin_specs]

    def body(*args: Any) -> list[Any]:
        k = len(nonlinear)
        local_cts = [c / n if n > 1 else c for c, n in zip(args[k:], out_scale)]
        residuals = eval_closed(known, list(args[:k]))
        outs = eval_closed(transposed, [*residuals, *local_cts])
        return [psum_p.bind(o, axes=axes) if axes else o for o, axes in zip(outs, sums)]

    local_in = [
        *[a for a, lin in zip(jaxpr.in_avals, linear) if not lin],
        *jaxpr.out_avals,
    ]
    with axis_env(mesh.shape):
        closed = trace_to_jaxpr(body, local_in, "transpose(shard_map)")
    hoisted, consts = hoist_consts(closed)
    rep = PartitionSpec()
    outs: list[Array] = shard_map_p.bind(
        *consts, *nonlinear, *cts, jaxpr=hoisted, mesh=mesh,
        in_specs=(*[rep] * len(consts), *nl_specs, *out_specs), out_specs=tuple(lin_specs),
    )
    it = iter(outs)
    return [next(it) if lin else None for lin in linear]


@partial_eval_rules.register(shard_map_p)
def _shard_map_partial_eval(
    unknowns: list[bool], *, jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """Two ``shard_map``s, as JAX splits one: the known body now (``linearize``: the primal
    work), the unknown one staged. A residual is each device's own block, so it leaves the known
    body split over every mesh axis along its first dimension (a scalar one as a length-1 block)
    and enters the unknown body the same way. (Jaxpr halves, so each body's consts are hoisted
    into replicated operands as ``shard_map`` binds them.)"""
    with axis_env(mesh.shape):
        known, unknown, out_unknowns, num_res = partial_eval_jaxpr(jaxpr, unknowns, False)
    n_known_outs = len(known.out_avals) - num_res
    scalar = [a.ndim == 0 for a in known.out_avals[n_known_outs:]]

    def known_body(*xs: Any) -> list[Any]:
        outs = eval_closed(known, list(xs))
        res = [reshape(r, (1,)) if s else r for r, s in zip(outs[n_known_outs:], scalar)]
        return [*outs[:n_known_outs], *res]

    def unknown_body(*xs: Any) -> list[Any]:
        res = [reshape(r, ()) if s else r for r, s in zip(xs[:num_res], scalar)]
        return eval_closed(unknown, [*res, *xs[num_res:]])

    res_spec = PartitionSpec(tuple(mesh.axis_names)) if mesh.axis_names else PartitionSpec()
    known_in = [s for s, u in zip(in_specs, unknowns) if not u]
    unknown_in = [s for s, u in zip(in_specs, unknowns) if u]
    with axis_env(mesh.shape):
        known_local = trace_to_jaxpr(known_body, known.in_avals, "shard_map")
        res_blocks = known_local.out_avals[n_known_outs:]
        unknown_local = trace_to_jaxpr(unknown_body, [*res_blocks, *unknown.in_avals[num_res:]], "shard_map")
    known_out = (*[s for s, u in zip(out_specs, out_unknowns) if not u], *[res_spec] * num_res)
    unknown_out = tuple(s for s, u in zip(out_specs, out_unknowns) if u)
    return (
        _outer(known_local, mesh, known_in, known_out),
        _outer(unknown_local, mesh, [res_spec] * num_res + unknown_in, unknown_out),
        out_unknowns,
        num_res,
    )


def _outer(body: ClosedJaxpr, mesh: Mesh, in_specs: list[PartitionSpec], out_specs: tuple[PartitionSpec, ...]) -> ClosedJaxpr:
    """The program of one ``shard_map`` of ``body`` (per-device avals) over whole arrays."""
    hoisted, consts = hoist_consts(body)
    rep = PartitionSpec()

    def call(*xs: Any) -> list[Array]:
        outs: list[Array] = shard_map_p.bind(
            *consts, *xs, jaxpr=hoisted, mesh=mesh, in_specs=(*[rep] * len(consts), *in_specs), out_specs=out_specs
        )
        return outs

    return trace_to_jaxpr(call, [_global_aval(mesh, s, a) for s, a in zip(in_specs, body.in_avals)], "shard_map")


def _sdy_dims(spec: PartitionSpec, ndim: int) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in spec.axes_of(d)) + "}" for d in range(ndim))
    return f"[{dims}]"


@lowering_rules.register(shard_map_p)
def _shard_map_lowering(
    ctx: LoweringRuleContext, *args: str, jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
    out_specs: tuple[PartitionSpec, ...],
) -> list[str]:
    m = ctx.module.use_mesh(mesh.sdy_text(), mesh.size)
    ctx.module.axis_env.append((mesh.axis_names, mesh.axis_sizes))
    try:
        sym = ctx.module.private_function(jaxpr.jaxpr, "shmap_body")
    finally:
        ctx.module.axis_env.pop()
    local_in, local_out = jaxpr.in_avals, jaxpr.out_avals
    in_sh = ", ".join(f"<{m}, {_sdy_dims(s, a.ndim)}>" for s, a in zip(in_specs, ctx.avals_in))
    out_sh = ", ".join(f"<{m}, {_sdy_dims(s, a.ndim)}>" for s, a in zip(out_specs, ctx.avals_out))
    manual = ", ".join(f'"{a}"' for a in mesh.axis_names)
    tag = ctx.fn.fresh()[1:]
    block = [f"%sm{tag}_{i}" for i in range(len(args))]
    block_decl = ", ".join(f"{b}: {tensor_type(a)}" for b, a in zip(block, local_in))
    in_types = ", ".join(tensor_type(a) for a in local_in)
    out_types = ", ".join(tensor_type(a) for a in local_out)
    res = f"%sm{tag}_r"
    k = len(local_out)
    lhs = res if k == 1 else f"{res}:{k}"
    results = res if k == 1 else ", ".join(f"{res}#{i}" for i in range(k))
    glob_in = ", ".join(tensor_type(a) for a in ctx.avals_in)
    glob_out = ", ".join(tensor_type(a) for a in ctx.avals_out)
    text = (
        f"sdy.manual_computation({', '.join(args)}) in_shardings=[{in_sh}] out_shardings=[{out_sh}] "
        f"manual_axes={{{manual}}} ({block_decl}) {{\n"
        f"      {lhs} = func.call @{sym}({', '.join(block)}) : ({in_types}) -> ({out_types})\n"
        f"      sdy.return {results} : {out_types}\n"
        f"    }} : ({glob_in}) -> ({glob_out})"
    )
    name = ctx.emit(text, n_results=k)
    return [name] if k == 1 else [f"{name}#{i}" for i in range(k)]


# =========================================================================================
# The user-facing function
# =========================================================================================
def _is_spec(x: object) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _check_spec(mesh: Mesh, spec: PartitionSpec, what: str) -> None:
    used = [a for d in range(len(spec)) for a in spec.axes_of(d)]
    dup = [a for i, a in enumerate(used) if a in used[:i]]
    if dup:
        raise ValueError(f"shard_map {what} {spec} uses mesh axis {dup[0]!r} more than once")
    for d in range(len(spec)):
        for a in spec.axes_of(d):
            if a not in mesh.axis_names:
                raise ValueError(
                    f"shard_map {what} refers to {a!r}, which is not in the mesh axis names {mesh.axis_names}"
                )


def _check_replication(
    name: str, mesh: Mesh, in_sp: list[PartitionSpec], out_sp: list[PartitionSpec], out_paths: list[str],
    closed: ClosedJaxpr,
) -> None:
    """JAX's ``check_vma``: each result must be the same on the devices along the axes its
    out_spec leaves out (the error lists every result that may not be, as JAX's)."""

    def axes(names: frozenset[str]) -> str:
        return "{" + ",".join(a for a in mesh.axis_names if a in names) + "}"

    split = [frozenset(a for d in range(len(s)) for a in s.axes_of(d)) for s in in_sp]
    msgs = []
    for s, path, varying in zip(out_sp, out_paths, varying_axes(closed.jaxpr, split)):
        left_out = _unmentioned(mesh, s)
        if not varying & frozenset(left_out):
            continue
        if len(left_out) > 1:
            msgs.append(
                f"* out_specs{path} is {s} which implies that the corresponding output value is only varying across "
                f"mesh axes {axes(frozenset(mesh.axis_names) - frozenset(left_out))} and not "
                f"{axes(varying & frozenset(left_out))}, but it was inferred to be possibly varying over {axes(varying)}"
            )
        else:
            msgs.append(
                f"* out_specs{path} is {s} which implies that the corresponding output value is replicated across "
                f"mesh axis '{left_out[0]}', but could not infer replication over any axes"
            )
    if msgs:
        if len(msgs) == 1:
            msgs = [msgs[0][2:]]
        raise ValueError(
            f"shard_map applied to the function '{name}' was given out_specs which require replication which can't "
            f"be statically inferred given the mesh:\n\nThe mesh given has shape {tuple(mesh.shape.values())} with "
            f"corresponding axis names {tuple(mesh.axis_names)}.\n\n" + "\n\n".join(msgs) + "\n\nCheck if these "
            "output values are meant to be replicated over those mesh axes. If not, consider revising the "
            "corresponding out_specs entries. If so, consider disabling the check by passing the check_vma=False "
            "argument to `jax.shard_map`."
        )


def shard_map(
    f: Callable[..., Any] | None = None, /, *, out_specs: Any, in_specs: Any = None, mesh: Mesh | None = None,
    axis_names: Any = frozenset(), check_vma: bool = True, check_rep: bool | None = None,
) -> Any:
    """Map ``f`` over the blocks of its arguments on ``mesh``'s devices.

    ``in_specs`` (a prefix of the positional arguments) and ``out_specs`` (a prefix of the
    results) are ``PartitionSpec`` objects: dimension ``i`` of a value is split over the mesh axes
    ``spec[i]``; values are replicated over axes their spec leaves out (``check_vma``, or its
    older name ``check_rep``, checks that results are). Without ``f``, returns a decorator.
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma, check_rep=check_rep)
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map requires a Mesh, got {type(mesh).__name__}")
    fun = f
    check = check_vma if check_rep is None else check_rep

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        # Without `mesh=`, the mesh set where the function is called (as jax), not where it was defined.
        m = mesh if mesh is not None else get_mesh()
        if m is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh context")
        return _call(fun, m, in_specs, out_specs, args, check)

    return wrapped


def _spec_of_argument(mesh: Mesh, x: object, name: str) -> PartitionSpec:
    """Without ``in_specs``, as jax: an argument keeps the spec it is laid out with on
    ``mesh`` (an uncommitted or host value: replicated). fcore keeps no sharding in the
    types of traced values, so under a transformation ``in_specs`` must be given."""
    if isinstance(x, Tracer):
        raise ValueError(
            f"shard_map of {name} needs in_specs for a traced argument (fcore keeps no shardings in types)"
        )
    sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding) and sharding.mesh == mesh:
        return sharding.spec
    return PartitionSpec()


def _call(
    f: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any, args: tuple[Any, ...], check_vma: bool
) -> Any:
    name = getattr(f, "__name__", "f")
    flat, in_tree = tree_util.tree_flatten(args)
    if in_specs is None:
        in_specs = in_tree.unflatten([_spec_of_argument(mesh, x, name) for x in flat])
    try:
        specs_in = tree_util.broadcast_prefix(
            tuple(in_specs) if isinstance(in_specs, list) else in_specs, args, is_leaf=_is_spec
        )
    except ValueError as e:
        raise ValueError(
            f"shard_map in_specs specification must be a tree prefix of the positional arguments tuple passed to "
            f"{name}; got in_specs={in_specs} for {len(args)} arguments: {e}"
        ) from None
    in_sp = [PartitionSpec() if s is None else s for s in specs_in]
    avals = [get_aval(x) for x in flat]
    for i, (s, a) in enumerate(zip(in_sp, avals)):
        _check_spec(mesh, s, f"in_specs[{i}]")
        if len(s) > a.ndim:
            raise ValueError(
                f"shard_map applied to the function '{name}' was given an argument of rank {a.ndim} "
                f"({a.str_short()}) with in_spec {s} of length {len(s)}"
            )
        bad = [d for d in range(a.ndim) if a.shape[d] % _ways(mesh, s, d)]
        if bad:
            d = bad[0]
            raise ValueError(
                f"shard_map applied to the function '{name}' was given argument arrays with axis sizes that are not "
                f"evenly divisible by the corresponding mesh axis sizes: argument {i} of shape {a.shape} has "
                f"dimension {d} of size {a.shape[d]}, which its in_spec {s} splits {_ways(mesh, s, d)} ways"
            )
    local = [_local_aval(mesh, s, a) for s, a in zip(in_sp, avals)]
    out_trees: list[tree_util.PyTreeDef] = []

    def body(*xs: Any) -> list[Any]:
        outs, tree = tree_util.tree_flatten(f(*in_tree.unflatten(xs)))
        out_trees.append(tree)
        return outs

    with axis_env(mesh.shape):
        closed = trace_to_jaxpr(body, local, f"shard_map({name})")
    out_tree = out_trees[0]
    dummy = out_tree.unflatten([0] * out_tree.num_leaves)
    prefix = tuple(out_specs) if isinstance(out_specs, list) else out_specs
    try:
        specs_out = tree_util.broadcast_prefix(prefix, dummy, is_leaf=_is_spec)
    except ValueError as e:
        raise ValueError(
            f"shard_map out_specs specification must be a tree prefix of the outputs of {name}; "
            f"got out_specs={out_specs}: {e}"
        ) from None
    out_sp = [PartitionSpec() if s is None else s for s in specs_out]
    for i, (s, a) in enumerate(zip(out_sp, closed.out_avals)):
        _check_spec(mesh, s, f"out_specs[{i}]")
        if len(s) > a.ndim:
            raise ValueError(f"shard_map out_specs[{i}] {s} has more entries than the rank of the result {a.str_short()}")
    if check_vma:
        paths = tree_util.tree_map_with_path(lambda p, _: tree_util.keystr(p), prefix, is_leaf=_is_spec)
        out_paths = tree_util.broadcast_prefix(paths, dummy)
        _check_replication(name, mesh, in_sp, out_sp, out_paths, closed)
    hoisted, consts = hoist_consts(closed)
    rep = PartitionSpec()
    outs: list[Array] = shard_map_p.bind(
        *consts, *flat, jaxpr=hoisted, mesh=mesh, in_specs=(*[rep] * len(consts), *in_sp), out_specs=tuple(out_sp)
    )
    return out_tree.unflatten(outs)

"""Differentiation front end: jvp, linearize, vjp, grad, value_and_grad, jacobians."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fcore import tree_util
from fcore.api.staging import fun_name, normalize_argnums
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.stack import current_trace, trace_scope
from fcore.ir import dtypes
from fcore.transforms import ad_util
from fcore.transforms.ad_util import Zero, has_tangent
from fcore.transforms.autodiff import linearize_flat, vjp_flat
from fcore.transforms.jvp import JVPTrace, JVPTracer

#: JAX's dtype of tangents of integer and boolean values (``jax.dtypes.float0``). fcore has no
#: such arrays; it accepts them as tangents and cotangents, meaning "zero".
FLOAT0 = np.dtype([("float0", "V")])


def _check_tangent(name: str, p: Any, t: Any, error: type[Exception] = TypeError) -> bool:
    """Check tangent ``t`` against primal ``p`` as JAX does; True when ``p`` has a tangent space.

    The dtypes must agree (else ``error``: JAX raises TypeError in jvp, ValueError in linearize);
    an integer or boolean primal takes a ``float0`` tangent, or (fcore's own convention) one of
    its own dtype, whose value is ignored.
    """
    pa = get_aval(p)
    float0 = getattr(t, "dtype", None) == FLOAT0
    if float0:
        t_shape, t_dtype = tuple(np.shape(t)), FLOAT0
    else:
        ta = get_aval(t)
        t_shape, t_dtype = ta.shape, ta.dtype
    if t_shape != pa.shape:
        raise ValueError(f"{name}: primal shape {pa.shape} and tangent shape {t_shape} differ")
    differentiable = has_tangent(pa)
    if t_dtype == pa.dtype or (float0 and not differentiable):
        return differentiable
    want = dtypes.dtype_name(pa.dtype) if differentiable else f"float0 (or {dtypes.dtype_name(pa.dtype)})"
    got = "float0" if float0 else dtypes.dtype_name(t_dtype)
    raise error(
        f"{name}: primal and tangent dtypes do not match; they must be equal, or for an integer or boolean "
        f"primal the tangent dtype must be float0. Got primal dtype {dtypes.dtype_name(pa.dtype)} and so "
        f"expected tangent dtype {want}, but got tangent dtype {got}."
    )


def _flat_fun(fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, out_trees: list[tree_util.PyTreeDef]) -> Callable[..., list[Any]]:
    def flat(*leaves: Any) -> list[Any]:
        out = fun(*tree_util.tree_unflatten(in_tree, leaves))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    return flat


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """Forward mode: ``(fun(*primals), d fun(primals)[tangents])``."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments")
    p_flat, p_tree = tree_util.tree_flatten(tuple(primals))
    t_flat, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree structure; got {p_tree} and {t_tree}")
    t_flat = [t if _check_tangent("jvp", p, t) else Zero(get_aval(p)) for p, t in zip(p_flat, t_flat)]
    out_trees: list[tree_util.PyTreeDef] = []
    flat = _flat_fun(fun, p_tree, out_trees)
    trace = JVPTrace(current_trace(), f"jvp({fun_name(fun)})")
    with trace_scope(trace):
        outs = flat(*[JVPTracer(trace, p, t) for p, t in zip(p_flat, t_flat)])
        pairs = [trace.unpack(o) for o in outs]
    primals_out = [p for p, _ in pairs]
    tangents_out = [ad_util.instantiate(t) for _, t in pairs]
    return (tree_util.tree_unflatten(out_trees[0], primals_out), tree_util.tree_unflatten(out_trees[0], tangents_out))


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(fun(*primals), f_jvp)``: ``f_jvp`` replays only the staged linear part."""
    p_flat, p_tree = tree_util.tree_flatten(primals)
    out_trees: list[tree_util.PyTreeDef] = []
    lin = linearize_flat(_flat_fun(fun, p_tree, out_trees), p_flat, f"linearize({fun_name(fun)})")
    out_tree = out_trees[0]

    def f_jvp(*tangents: Any) -> Any:
        t_flat, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(f"linearize: tangent tree {t_tree} does not match primal tree {p_tree}")
        t_flat = [
            t if _check_tangent("linearize", p, t, ValueError) else np.zeros(np.shape(p), get_aval(p).dtype)
            for p, t in zip(p_flat, t_flat)
        ]
        return tree_util.tree_unflatten(out_tree, lin.jvp(t_flat))

    return tree_util.tree_unflatten(out_tree, lin.primals_out), f_jvp


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_vjp[, aux])``; ``f_vjp(ct)`` returns a tuple of cotangents."""
    p_flat, p_tree = tree_util.tree_flatten(primals)
    out_trees: list[tree_util.PyTreeDef] = []
    aux_box: list[Any] = []
    if has_aux:

        def main(*args: Any) -> Any:
            out = fun(*args)
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("vjp with has_aux=True requires fun to return a pair (output, aux)")
            aux_box.append(out[1])
            return out[0]

    else:
        main = fun
    outs, pullback = vjp_flat(_flat_fun(main, p_tree, out_trees), p_flat, f"vjp({fun_name(fun)})")
    out_tree = out_trees[0]
    out_avals = [get_aval(o) for o in outs]

    def f_vjp(ct: Any) -> tuple[Any, ...]:
        ct_flat, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp: cotangent tree {ct_tree} does not match output tree {out_tree}")
        for k, (c, a) in enumerate(zip(ct_flat, out_avals)):
            if tuple(np.shape(c)) != a.shape:
                raise ValueError(f"vjp: cotangent of shape {np.shape(c)} for an output of shape {a.shape}")
            if not has_tangent(a):  # integer outputs: any cotangent (JAX's is float0) means zero
                ct_flat[k] = np.zeros(a.shape, a.dtype)
            elif (ct_dtype := get_aval(c).dtype) != a.dtype:
                raise ValueError(
                    f"vjp: cotangent of dtype {dtypes.dtype_name(ct_dtype)} for an output of dtype "
                    f"{dtypes.dtype_name(a.dtype)}; they must be equal"
                )
        cts = pullback(ct_flat)
        result: tuple[Any, ...] = tree_util.tree_unflatten(p_tree, cts)
        return result

    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_vjp, aux_box[0]
    return out, f_vjp


def _check_grad_inputs(name: str, leaves: Sequence[Any]) -> None:
    for x in leaves:
        dt = get_aval(x).dtype
        if not dtypes.is_inexact(dt):
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                f"np.inexact), but got {dtypes.dtype_name(dt)}. If you want integer inputs, use vjp."
            )


def value_and_grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``(fun(*args), d fun / d args[argnums])`` for a scalar real-valued ``fun``."""
    nums = normalize_argnums(argnums)

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"differentiating with respect to argnums={argnums} requires at least {max(nums) + 1} "
                    f"positional arguments, but {fun_name(fun)} was called with {len(args)}"
                )
        idx = [i % len(args) for i in nums]
        diff_args = tuple(args[i] for i in idx)

        def partial_fun(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(idx, diff):
                full[i] = d
            return fun(*full, **kwargs)

        _check_grad_inputs("grad", tree_util.tree_leaves(diff_args))
        if has_aux:
            out, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, f_vjp = vjp(partial_fun, *diff_args)
        aval = get_aval(out) if not isinstance(out, (tuple, list, dict)) else None
        if aval is None or aval.shape != ():
            shape = aval.shape if aval is not None else type(out).__name__
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {shape}.")
        if not dtypes.is_inexact(aval.dtype) or dtypes.is_complex(aval.dtype):
            raise TypeError(
                "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                f"but got {dtypes.dtype_name(aval.dtype)}."
            )
        grads = f_vjp(ArrayImpl(np.ones((), aval.dtype), aval.weak_type))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar real-valued ``fun`` with respect to ``args[argnums]``."""
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_f


def _std_basis(leaves: Sequence[Any]) -> tuple[list[Any], int]:
    sizes = [get_aval(x).size for x in leaves]
    n = sum(sizes)
    basis = []
    offset = 0
    for x, size in zip(leaves, sizes):
        a = get_aval(x)
        eye = np.zeros((n, size), dtype=a.dtype)
        eye[offset : offset + size] = np.eye(size, dtype=a.dtype)
        basis.append(ArrayImpl(eye.reshape((n,) + a.shape), False))
        offset += size
    return basis, n


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Jacobian by forward mode: ``vmap`` of ``jvp`` over the standard basis."""
    from fcore.api.vectorize import vmap

    nums = normalize_argnums(argnums)

    def jac(*args: Any) -> Any:
        idx = [i % len(args) for i in nums]
        diff = tuple(args[i] for i in idx)
        d_flat, d_tree = tree_util.tree_flatten(diff)
        _check_grad_inputs("jacfwd", d_flat)
        basis, _ = _std_basis(d_flat)

        def pushfwd(*tangent_leaves: Any) -> Any:
            def partial_fun(*dargs: Any) -> Any:
                full = list(args)
                for i, d in zip(idx, dargs):
                    full[i] = d
                return fun(*full)

            return jvp(partial_fun, diff, tree_util.tree_unflatten(d_tree, tangent_leaves))[1]

        jac_t = vmap(pushfwd, out_axes=-1)(*basis)  # outputs with a trailing input-flat axis
        return _split_jacobian(jac_t, d_flat, d_tree, isinstance(argnums, int))

    return jac


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Jacobian by reverse mode: ``vmap`` of the pullback over the output basis."""
    from fcore.api.vectorize import vmap

    nums = normalize_argnums(argnums)

    def jac(*args: Any) -> Any:
        idx = [i % len(args) for i in nums]
        diff = tuple(args[i] for i in idx)
        _check_grad_inputs("jacrev", tree_util.tree_leaves(diff))

        def partial_fun(*dargs: Any) -> Any:
            full = list(args)
            for i, d in zip(idx, dargs):
                full[i] = d
            return fun(*full)

        out, f_vjp = vjp(partial_fun, *diff)
        o_flat, o_tree = tree_util.tree_flatten(out)
        basis, _ = _std_basis(o_flat)
        cts = vmap(lambda *c: f_vjp(tree_util.tree_unflatten(o_tree, c)))(*basis)
        # cts: tuple over diff args of pytrees with a leading output-flat axis.
        out_avals = [get_aval(o) for o in o_flat]
        from fcore import numpy as fnp

        def per_output(ct_leaf: Any) -> Any:
            pieces = []
            offset = 0
            for a in out_avals:
                piece = ct_leaf[offset : offset + a.size]
                pieces.append(fnp.reshape(piece, a.shape + tuple(ct_leaf.shape[1:])))
                offset += a.size
            return tree_util.tree_unflatten(o_tree, pieces)

        per_arg = cts[0] if isinstance(argnums, int) else tuple(cts)
        arg_tree = tree_util.tree_structure(per_arg)
        blocks = tree_util.tree_map(per_output, per_arg)
        return tree_util.tree_transpose(arg_tree, o_tree, blocks)

    return jac


def _split_jacobian(jac_t: Any, d_flat: Sequence[Any], d_tree: tree_util.PyTreeDef, single: bool) -> Any:
    from fcore import numpy as fnp

    d_avals = [get_aval(x) for x in d_flat]

    def split(leaf: Any) -> Any:
        pieces = []
        offset = 0
        lead = tuple(leaf.shape[:-1])
        for a in d_avals:
            piece = leaf[..., offset : offset + a.size]
            pieces.append(fnp.reshape(piece, lead + a.shape))
            offset += a.size
        args = tree_util.tree_unflatten(d_tree, pieces)
        return args[0] if single else args

    return tree_util.tree_map(split, jac_t)


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums), argnums)

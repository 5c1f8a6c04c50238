"""Implicitly differentiated solves: ``custom_linear_solve`` and ``custom_root`` (``jax.lax``).

* ``custom_linear_solve[const_lengths matvec vecmat solve transpose_solve] *consts *b`` runs
  ``solve`` on ``b``. Its derivatives never look inside ``solve``: the tangent of ``x = A^-1 b``
  is another solve, ``A^-1 (db - dA x)``, and the transpose of a solve in ``b`` is the solve of
  the transposed system (``transpose_solve`` with ``vecmat``, the transpose of ``matvec``).
  ``const_lengths`` counts the values each of the four jaxprs closes over (hoisted into the
  leading operands, in that order); ``vecmat`` and ``transpose_solve`` are ``None`` when no
  ``transpose_solve`` was given (then reverse mode is an error, as in JAX).
* ``custom_root`` needs no primitive: as in JAX it is a ``custom_jvp`` function whose rule
  solves the linearized system with the user's ``tangent_solve`` (implicit function theorem).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore import tree_util
from fcore.api.autodiff import jvp, linearize
from fcore.api.custom import custom_jvp
from fcore.api.linear_transpose import linear_transpose
from fcore.api.staging import abstractify
from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive
from fcore.lax.call import as_eager_results, eval_closed, lower_call
from fcore.lax.control_flow.common import split, trace_hoisted
from fcore.lax.elementwise import neg, sub
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate, is_undefined
from fcore.transforms.batching import Dim, batch_jaxpr, batching_rules, bdim_at
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


# =========================================================================================
# Helpers
# =========================================================================================
def _check_tree(func_name: str, expected_name: str, actual: tree_util.PyTreeDef, expected: tree_util.PyTreeDef,
                has_aux: bool = False) -> None:
    """JAX's structure check of a user function's output (and its ``(out, aux)`` pair)."""
    if has_aux:
        children = actual.children()
        if len(children) != 2:
            raise ValueError(
                f"{func_name}() produced a pytree with structure {actual}, but a pytree tuple with auxiliary "
                "output was expected because has_aux was set to True."
            )
        actual = children[0]
    if actual != expected:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, got {actual} and {expected}.")


def _check_shapes(func_name: str, expected_name: str, actual: Sequence[Any], expected: Sequence[Any]) -> None:
    actual_shapes = [np.shape(x) for x in actual]
    expected_shapes = [np.shape(x) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, got {actual_shapes} and {expected_shapes}")


def _trace(fun: Callable[[Any], Any], tree: tree_util.PyTreeDef, avals: Sequence[ShapedArray], what: str
           ) -> tuple[ClosedJaxpr, list[Any], tree_util.PyTreeDef]:
    """Stage ``fun`` of one pytree argument (``tree`` over ``avals``): its const-free jaxpr, the
    values it closes over, and its output's structure."""
    out_trees: list[tree_util.PyTreeDef] = []

    def flat(*leaves: Any) -> list[Any]:
        out, out_tree = tree_util.tree_flatten(fun(tree_util.tree_unflatten(tree, leaves)))
        out_trees.append(out_tree)
        return out

    closed, consts = trace_hoisted(flat, avals, what)
    return closed, consts, out_trees[0]


# =========================================================================================
# custom_linear_solve
# =========================================================================================
@attrs.frozen(kw_only=True)
class LinearSolveParams:
    """``custom_linear_solve[const_lengths matvec vecmat solve transpose_solve]`` (module docstring)."""

    const_lengths: tuple[int, ...]
    matvec: ClosedJaxpr
    vecmat: ClosedJaxpr | None
    solve: ClosedJaxpr
    transpose_solve: ClosedJaxpr | None


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True, params=LinearSolveParams)
linear_solve_p.impl_takes_arrays = True


def _split_operands(args: Sequence[Any], const_lengths: Sequence[int]) -> tuple[list[list[Any]], list[Any]]:
    """The operands as (consts of matvec, vecmat, solve, transpose_solve) and ``b``."""
    *consts, b = split(args, *const_lengths)
    return consts, b


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract_eval(
    *avals: ShapedArray, const_lengths: tuple[int, ...], matvec: ClosedJaxpr, vecmat: ClosedJaxpr | None,
    solve: ClosedJaxpr, transpose_solve: ClosedJaxpr | None,
) -> list[ShapedArray]:
    if len(const_lengths) != 4 or (vecmat is None) != (transpose_solve is None):
        raise TypeError("custom_linear_solve needs 4 const_lengths, and vecmat exactly when transpose_solve")
    _, b = _split_operands(avals, const_lengths)
    outs = solve.out_avals
    if len(outs) < len(b) or any(o.shape != a.shape or o.dtype != a.dtype for o, a in zip(outs, b)):
        raise TypeError(f"custom_linear_solve: solve returns {outs[:len(b)]} for a right-hand side {list(b)}")
    return [*b, *outs[len(b):]]


@linear_solve_p.def_impl
def _linear_solve_impl(
    *args: Array, const_lengths: tuple[int, ...], matvec: ClosedJaxpr, vecmat: ClosedJaxpr | None,
    solve: ClosedJaxpr, transpose_solve: ClosedJaxpr | None,
) -> list[ArrayImpl]:
    consts, b = _split_operands(args, const_lengths)
    return as_eager_results(eval_closed(solve, [*consts[2], *b]), solve.out_avals)


@jvp_rules.register(linear_solve_p, symbolic_zeros=True)
def _linear_solve_jvp(
    primals: list[Array], tangents: list[Tangent], *, const_lengths: tuple[int, ...], matvec: ClosedJaxpr,
    vecmat: ClosedJaxpr | None, solve: ClosedJaxpr, transpose_solve: ClosedJaxpr | None,
) -> tuple[list[Array], list[Tangent]]:
    """``A x = b`` gives ``A dx = db - dA x``: the tangent is a solve of the same system (only
    ``matvec``'s consts and ``b`` have derivatives; the solvers' are not used, as in JAX)."""
    params: dict[str, ParamValue] = dict(const_lengths=const_lengths, matvec=matvec, vecmat=vecmat, solve=solve,
                                         transpose_solve=transpose_solve)
    x: list[Array] = linear_solve_p.bind(*primals, **params)
    consts, _ = _split_operands(primals, const_lengths)
    dconsts, db = _split_operands(tangents, const_lengths)
    x_leaves = x[: len(db)]
    rhs: list[Tangent] = list(db)
    if any(type(t) is not Zero for t in dconsts[0]):
        _, matvec_dot = jvp(lambda *c: eval_closed(matvec, [*c, *x_leaves]), consts[0],
                            [instantiate(t) for t in dconsts[0]])
        rhs = [neg(m) if type(d) is Zero else sub(d, m) for d, m in zip(db, matvec_dot)]
    aux_zeros: list[Tangent] = [Zero(a) for a in solve.out_avals[len(db):]]
    if all(type(t) is Zero for t in rhs):
        return x, [*rhs, *aux_zeros]
    x_dot: list[Array] = linear_solve_p.bind(*primals[: sum(const_lengths)], *[instantiate(t) for t in rhs], **params)
    return x, [*x_dot[: len(db)], *aux_zeros]


@transpose_rules.register(linear_solve_p)
def _linear_solve_transpose(
    cts: list[Array], *invals: Array | UndefinedPrimal, const_lengths: tuple[int, ...], matvec: ClosedJaxpr,
    vecmat: ClosedJaxpr | None, solve: ClosedJaxpr, transpose_solve: ClosedJaxpr | None,
) -> list[Array | None]:
    """Linear in ``b``: the cotangent of ``b`` solves the transposed system."""
    if transpose_solve is None or vecmat is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of custom_linear_solve")
    consts, b = _split_operands(invals, const_lengths)
    if any(is_undefined(c) for cs in consts for c in cs):
        raise NotImplementedError("custom_linear_solve is linear only in its right-hand side b, not in the operator")
    m, v, s, t = consts
    ct_b: list[Array] = linear_solve_p.bind(
        *v, *m, *t, *s, *cts[: len(b)],
        const_lengths=(len(v), len(m), len(t), len(s)), matvec=vecmat, vecmat=matvec, solve=transpose_solve,
        transpose_solve=solve,
    )
    return [None] * sum(const_lengths) + list(ct_b[: len(b)])


def _batched(closed: ClosedJaxpr, axis_size: int, in_bat: Sequence[bool], instantiate_out: Sequence[bool]) -> list[bool]:
    """Which outputs of ``closed`` are batched when the ``in_bat`` inputs are: those that
    depend on a batched input, and those forced by ``instantiate_out``."""
    _, natural = batch_jaxpr(closed, axis_size, [0 if b else None for b in in_bat])
    return [d is not None or f for d, f in zip(natural, instantiate_out, strict=True)]


def _batch_final(closed: ClosedJaxpr, axis_size: int, in_bat: Sequence[bool], out_bat: Sequence[bool]) -> ClosedJaxpr:
    batched, _ = batch_jaxpr(closed, axis_size, [0 if b else None for b in in_bat], [0 if b else None for b in out_bat])
    return batched


@batching_rules.register(linear_solve_p)
def _linear_solve_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, const_lengths: tuple[int, ...], matvec: ClosedJaxpr,
    vecmat: ClosedJaxpr | None, solve: ClosedJaxpr, transpose_solve: ClosedJaxpr | None,
) -> tuple[list[Array], list[Dim]]:
    """JAX's fixpoint: ``x`` and ``b`` live in the same space, so a part of either that one of
    the four maps batches must be batched in all of them."""
    consts_bat, orig_b_bat = _split_operands([d is not None for d in dims], const_lengths)
    matvec_bat, vecmat_bat, solve_bat, solve_t_bat = consts_bat
    n_op = len(matvec.out_avals)
    num_aux = len(solve.out_avals) - n_op
    b_bat = list(orig_b_bat)
    x_bat = [False] * len(solve.out_avals)
    for _ in range(1 + len(orig_b_bat) + len(solve.out_avals)):
        solve_x_bat = _batched(solve, axis_size, solve_bat + b_bat, x_bat)
        if vecmat is None:
            x_bat_out = solve_x_bat
        else:
            vecmat_x_bat = _batched(vecmat, axis_size, vecmat_bat + b_bat, b_bat)
            x_bat_out = [a or s for a, s in zip(vecmat_x_bat + [True] * num_aux, solve_x_bat)]
        x_bat_noaux = x_bat_out[:n_op]
        matvec_b_bat = _batched(matvec, axis_size, matvec_bat + x_bat_noaux, b_bat)
        if transpose_solve is None:
            b_bat_out = [m or o for m, o in zip(matvec_b_bat, orig_b_bat)]
        else:
            solve_t_b_aux_bat = _batched(transpose_solve, axis_size, solve_t_bat + x_bat_noaux, x_bat_out)
            b_bat_out = [m or s or o for m, s, o in zip(matvec_b_bat, solve_t_b_aux_bat, orig_b_bat)]
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:
        raise AssertionError("custom_linear_solve batching: fixpoint not reached")
    x_noaux = x_bat[:n_op]
    new_params: dict[str, ParamValue] = dict(
        const_lengths=const_lengths,
        matvec=_batch_final(matvec, axis_size, matvec_bat + x_noaux, b_bat),
        vecmat=None if vecmat is None else _batch_final(vecmat, axis_size, vecmat_bat + b_bat, b_bat),
        solve=_batch_final(solve, axis_size, solve_bat + b_bat, x_bat),
        transpose_solve=None if transpose_solve is None else _batch_final(
            transpose_solve, axis_size, solve_t_bat + x_noaux, x_bat),
    )
    n_consts = sum(const_lengths)
    operands = [v if d is None else bdim_at(v, d, axis_size, 0) for v, d in zip(vals[:n_consts], dims[:n_consts])]
    for v, d, now in zip(vals[n_consts:], dims[n_consts:], b_bat):
        operands.append(bdim_at(v, d, axis_size, 0) if now else v)
    outs: list[Array] = linear_solve_p.bind(*operands, **new_params)
    return outs, [0 if b else None for b in x_bat]


@lowering_rules.register(linear_solve_p)
def _linear_solve_lowering(
    ctx: LoweringRuleContext, *args: str, const_lengths: tuple[int, ...], matvec: ClosedJaxpr,
    vecmat: ClosedJaxpr | None, solve: ClosedJaxpr, transpose_solve: ClosedJaxpr | None,
) -> list[str]:
    start = const_lengths[0] + const_lengths[1]
    stop = start + const_lengths[2]
    picked = [*range(start, stop), *range(sum(const_lengths), len(args))]
    sub_ctx = LoweringRuleContext(ctx.module, ctx.fn, [ctx.avals_in[i] for i in picked], ctx.avals_out)
    return lower_call(sub_ctx, [args[i] for i in picked], solve, "custom_linear_solve")


def custom_linear_solve(
    matvec: Callable[[Any], Any], b: Any, solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None, symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """``solve(matvec, b)``, differentiated implicitly (``jax.lax.custom_linear_solve``).

    The derivatives assume that the result ``x`` satisfies ``matvec(x) == b``; ``solve`` itself
    is never differentiated. Reverse mode needs ``transpose_solve`` (or ``symmetric=True``,
    which makes ``solve`` its own transpose).

    >>> import numpy as np
    >>> import fcore
    >>> a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    >>> solve = lambda matvec, b: fcore.numpy.linalg.solve(a, b)
    >>> x = fcore.lax.custom_linear_solve(lambda v: a @ v, np.ones(2, np.float32), solve, symmetric=True)
    >>> np.round(np.asarray(x), 4)
    array([0.4, 0.2], dtype=float32)
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_flat, tree = tree_util.tree_flatten(b)
    avals = [abstractify(x) for x in b_flat]

    def shape_checked(fun: Callable[[Any], Any], name: str, aux: bool) -> Callable[[Any], Any]:
        def checked(x: Any) -> Any:
            if aux:
                y, extra = fun(x)
                _check_shapes(name, "b", tree_util.tree_leaves(y), b_flat)
                return y, extra
            y = fun(x)
            _check_shapes(name, "b", tree_util.tree_leaves(y), b_flat)
            return y

        return checked

    matvec_jaxpr, matvec_consts, out_tree = _trace(shape_checked(matvec, "matvec", False), tree, avals,
                                                   "custom_linear_solve matvec")
    _check_tree("matvec", "b", out_tree, tree)
    solve_jaxpr, solve_consts, out_tree = _trace(shape_checked(functools.partial(solve, matvec), "solve", has_aux),
                                                 tree, avals, "custom_linear_solve solve")
    _check_tree("solve", "b", out_tree, tree, has_aux)
    out_avals_tree = out_tree
    vecmat_jaxpr: ClosedJaxpr | None = None
    tr_solve_jaxpr: ClosedJaxpr | None = None
    vecmat_consts: list[Any] = []
    tr_solve_consts: list[Any] = []
    if transpose_solve is not None:
        if symmetric:
            vecmat: Callable[[Any], Any] = matvec
            vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
        else:
            transposed = linear_transpose(matvec, b)

            def vecmat(y: Any) -> Any:
                (x,) = transposed(y)
                return x

            vecmat_jaxpr, vecmat_consts, _ = _trace(vecmat, tree, avals, "custom_linear_solve vecmat")
        tr_solve_jaxpr, tr_solve_consts, out_tree = _trace(
            shape_checked(functools.partial(transpose_solve, vecmat), "transpose_solve", has_aux), tree, avals,
            "custom_linear_solve transpose_solve")
        _check_tree("transpose_solve", "b", out_tree, tree, has_aux)
    all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    out_flat: list[Array] = linear_solve_p.bind(
        *[c for cs in all_consts for c in cs], *b_flat,
        const_lengths=tuple(len(cs) for cs in all_consts), matvec=matvec_jaxpr, vecmat=vecmat_jaxpr,
        solve=solve_jaxpr, transpose_solve=tr_solve_jaxpr,
    )
    return tree_util.tree_unflatten(out_avals_tree, out_flat)


# =========================================================================================
# custom_root
# =========================================================================================
def custom_root(
    f: Callable[[Any], Any], initial_guess: Any, solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any], has_aux: bool = False,
) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly with respect to the
    values ``f`` closes over (``jax.lax.custom_root``): the tangent ``du`` solves
    ``∂f/∂u du = -∂f/∂params dparams`` with ``tangent_solve(g, y)``, which must return ``x`` with
    ``g(x) == y`` for the linear ``g``.

    >>> import numpy as np
    >>> import fcore
    >>> def sqrt(c):
    ...     f = lambda u: u * u - c
    ...     newton = lambda f, u0: fcore.lax.fori_loop(0, 20, lambda i, u: u - f(u) / (2 * u), u0)
    ...     return fcore.lax.custom_root(f, np.float32(1.0), newton, lambda g, y: y / g(1.0))
    >>> print(round(float(sqrt(2.0)), 5), round(float(fcore.grad(sqrt)(2.0)), 5))
    1.41421 0.35355
    """
    guess_flat, guess_tree = tree_util.tree_flatten(initial_guess)
    avals = [abstractify(x) for x in guess_flat]
    f_jaxpr, f_consts, out_tree = _trace(f, guess_tree, avals, "custom_root f")
    _check_tree("f", "initial_guess", out_tree, guess_tree)
    solve_jaxpr, solve_consts, solution_tree = _trace(functools.partial(solve, f), guess_tree, avals,
                                                      "custom_root solve")
    _check_tree("solve", "initial_guess", solution_tree, guess_tree, has_aux)

    def linearize_and_solve(xb: Any) -> Any:
        x, b = xb
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    pair_tree = tree_util.tree_structure((initial_guess, initial_guess))
    l_and_s_jaxpr, l_and_s_consts, out_tree = _trace(linearize_and_solve, pair_tree, [*avals, *avals],
                                                     "custom_root tangent_solve")
    _check_tree("tangent_solve", "x", out_tree, guess_tree)
    n_f, n_solve, n_ls = len(f_consts), len(solve_consts), len(l_and_s_consts)
    n_sol = len(f_jaxpr.out_avals)

    @custom_jvp
    def root(*args: Any) -> list[Any]:
        f_c, solve_c, _, guess = split(args, n_f, n_solve, n_ls)
        return eval_closed(solve_jaxpr, [*solve_c, *guess])

    @root.defjvp
    def root_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[list[Any], list[Any]]:
        f_c, _, ls_c, _ = split(primals, n_f, n_solve, n_ls)
        df_c = list(tangents[:n_f])
        sol = root(*primals)
        solution, aux = sol[:n_sol], sol[n_sol:]
        # F(m, u*(m)) = 0 gives du* = -(∂_u F)^-1 ∂_m F dm: one jvp in the parameters, one tangent solve.
        _, rhs = jvp(lambda *c: eval_closed(f_jaxpr, [*c, *solution]), f_c, df_c)
        solution_dot = [neg(t) for t in eval_closed(l_and_s_jaxpr, [*ls_c, *solution, *rhs])]
        return [*solution, *aux], [*solution_dot, *[instantiate(Zero(abstractify(a))) for a in aux]]

    out = root(*f_consts, *solve_consts, *l_and_s_consts, *guess_flat)
    return tree_util.tree_unflatten(solution_tree, out)

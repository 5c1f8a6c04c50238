"""``fcore.lax.linalg``: matrix factorizations and solves as primitives (``jax.lax.linalg``).

Each primitive acts on the trailing two axes of its operands (leading axes are batch axes).
On the CPU they lower, as JAX's do, to jaxlib's LAPACK kernels called as XLA FFI custom
calls (``fcore.backend.lapack``): ``potrf`` (Cholesky), ``trsm`` (triangular solve),
``getrf`` (LU), ``geqrf``/``geqp3`` + ``orgqr`` (QR), ``syevd``/``heevd`` (eigh), ``gesdd``/``gesvd``
(SVD), ``geev`` (eig), ``gees`` (Schur), ``gehrd``/``sytrd`` (Hessenberg and tridiagonal
reductions) and ``gtsv`` (tridiagonal solve), so the numbers are JAX's bit for bit. Elsewhere ``cholesky`` and
``triangular_solve`` lower to StableHLO's own ops. A factorization that fails gives NaNs,
as in JAX. The eager impls run the same lowering compiled by XLA (once per operand type).
The jvp rules are JAX's. Each primitive is one block (docs/adding_a_primitive.md); the
lowering pieces around the custom calls (NaN masks, the pivot permutation, triangles) are
lax functions traced and inlined (``_inline``).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fcore.backend import lapack
from fcore.backend.lowering import LoweringRuleContext, lowering_rules, tensor_type
from fcore.backend.runtime import platform
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr, Jaxpr
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.ir.parser import register_param_enum
from fcore.lax._base import ArrayLike, NpArray, checked_impl, const
from fcore.lax._primitive import Primitive
from fcore.lax.call import launch_for
from fcore.lax.control_flow import fori_loop, scan
from fcore.lax.dot import batch_matmul
from fcore.lax.elementwise import abs as abs_
from fcore.lax.elementwise import complex as complex_
from fcore.lax.elementwise import (
    add, conj, convert_element_type, div, eq, ge, imag, integer_pow, mul, neg, real, select, sub,
)
from fcore.lax.reductions import argmax, reduce_sum
from fcore.lax.shapes import (
    broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, full, pad, reshape, squeeze, transpose,
)
from fcore.lax.slicing import dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice, dynamic_update_slice_in_dim
from fcore.lax.slicing import slice as lax_slice
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero
from fcore.transforms.batching import Dim, batching_rules, moveaxis
from fcore.transforms.jvp import jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eigh", "svd", "eig",
    "tridiagonal_solve", "symmetrize", "cholesky_p", "triangular_solve_p", "lu_p", "qr_p", "eigh_p", "svd_p",
    "eig_p", "schur", "schur_p", "tridiagonal_solve_p",
    "householder_product", "householder_product_p", "ormqr", "ormqr_p", "hessenberg", "hessenberg_p", "tridiagonal", "tridiagonal_p",
    "symmetric_product", "EighImplementation", "SvdAlgorithm", "EigImplementation",
]


# -- matrix helpers in lax operations --------------------------------------------------------------
def _shape(x: ArrayLike) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _T(x: Array) -> Array:
    nd = len(_shape(x))
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _H(x: Array) -> Array:
    return conj(_T(x)) if dtypes.is_complex(get_aval(x).dtype) else _T(x)


def _triangle_mask(shape: tuple[int, ...], k: int, lower: bool) -> Array:
    """True on and below (``lower``) or on and above the ``k``-th diagonal of the trailing axes."""
    nd = len(shape)
    rows = broadcasted_iota(np.int32, shape, nd - 2)
    cols = broadcasted_iota(np.int32, shape, nd - 1)
    if k:
        rows = add(rows, full(shape, k, np.int32))
    return ge(rows, cols) if lower else ge(cols, rows)


def _tril(x: Array, k: int = 0) -> Array:
    aval = get_aval(x)
    return select(_triangle_mask(aval.shape, k, True), x, full(aval.shape, 0, aval.dtype))


def _triu(x: Array, k: int = 0) -> Array:
    aval = get_aval(x)
    return select(_triangle_mask(aval.shape, k, False), x, full(aval.shape, 0, aval.dtype))


def _eye(dtype: DType, shape: tuple[int, ...]) -> Array:
    """Identity matrices of the trailing two axes of ``shape`` (ones on the main diagonal)."""
    nd = len(shape)
    diag = eq(broadcasted_iota(np.int32, shape, nd - 2), broadcasted_iota(np.int32, shape, nd - 1))
    return convert_element_type(diag, dtype)


def _mm(a: Array, b: Array) -> Array:
    return batch_matmul(a, b)


def _diag(x: Array) -> Array:
    """The main diagonal of the trailing axes (square matrices)."""
    aval = get_aval(x)
    return reduce_sum(mul(x, _eye(aval.dtype, aval.shape)), (len(aval.shape) - 1,))


def _const(value: float, like: Array) -> Array:
    aval = get_aval(like)
    return full(aval.shape, value, aval.dtype)


def _rows(x: Array, start: int, stop: int, axis: int) -> Array:
    """``x[..., start:stop, :]`` (``axis=-2``) or ``x[..., start:stop]`` (``axis=-1``)."""
    shape = _shape(x)
    ax = len(shape) + axis
    lo = tuple(start if i == ax else 0 for i in range(len(shape)))
    hi = tuple(stop if i == ax else s for i, s in enumerate(shape))
    return lax_slice(x, lo, hi)


def _permutation_matrix(permutation: Array, dtype: DType) -> Array:
    """``P`` with ``P[..., i, j] = (permutation[..., i] == j)``: ``P @ x`` is ``x[..., permutation, :]``."""
    *batch, m = _shape(permutation)
    nb = len(batch)
    shape = (*batch, m, m)
    perm = broadcast_in_dim(permutation, shape, tuple(range(nb + 1)))
    return convert_element_type(eq(perm, broadcasted_iota(np.int32, shape, nb + 1)), dtype)


def symmetrize(x: Array) -> Array:
    """``(x + x^H) / 2`` (``lax.linalg.symmetrize``)."""
    return div(add(x, _H(x)), const(x, 2))


def _check_matrix(name: str, x: ShapedArray, square: bool = True) -> None:
    if not (dtypes.is_floating(x.dtype) or dtypes.is_complex(x.dtype)):
        raise TypeError(f"{name} requires a floating point or complex operand, got {dtypes.dtype_name(x.dtype)}")
    if len(x.shape) < 2:
        raise ValueError(f"{name} requires an operand of rank >= 2 (a batch of matrices), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to {name} must be a square matrix. Got shape {x.shape[-2:]}.")


def _real_dtype(dt: DType) -> DType:
    if dt == np.complex64:
        return dtypes.to_dtype(np.float32)
    if dt == np.complex128:
        return dtypes.to_dtype(np.float64)
    return dt


# -- lowering and eager machinery shared by the blocks ---------------------------------------------
_traced: dict[tuple[object, ...], ClosedJaxpr] = {}
_lock = threading.Lock()


def _trace(key: tuple[object, ...], fn: Callable[..., Sequence[Array]], avals: Sequence[ShapedArray], what: str) -> ClosedJaxpr:
    closed = _traced.get(key)
    if closed is None:
        closed = trace_to_jaxpr(lambda *xs: list(fn(*xs)), list(avals), what)
        with _lock:
            closed = _traced.setdefault(key, closed)
    return closed


def _inline(ctx: LoweringRuleContext, fn: Callable[..., Sequence[Array]], args: Sequence[str],
            avals: Sequence[ShapedArray], name: str) -> list[str]:
    """Lower ``fn`` (lax operations on ``avals``) as a private function called on ``args``."""
    key = (fn, tuple(avals))
    closed = _trace(key, fn, avals, name)
    operands = [ctx.constant(np.asarray(c), v.aval.dtype, v.aval.shape) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
    j = closed.jaxpr
    sym = ctx.module.private_function(Jaxpr((), j.constvars + j.invars, j.outvars, j.eqns), name)
    ins = ", ".join(tensor_type(v.aval) for v in j.constvars + j.invars)
    outs = [v.aval for v in j.outvars]
    res = ctx.emit(
        f"func.call @{sym}({', '.join([*operands, *args])}) : ({ins}) -> ({', '.join(tensor_type(a) for a in outs)})",
        n_results=len(outs),
    )
    return [res] if len(outs) == 1 else [f"{res}#{i}" for i in range(len(outs))]


def _xla_impl(prim: Primitive) -> Callable[..., list[NpArray]]:
    """An eager impl running ``prim``'s lowering compiled by XLA (the same LAPACK calls as jit)."""

    def impl(*args: NpArray, **params: ParamValue) -> list[NpArray]:
        avals = [ShapedArray(a.shape, a.dtype) for a in args]
        key = (prim, tuple(avals), tuple(sorted(params.items())))
        closed = _trace(key, lambda *xs: _bind_list(prim, xs, params), avals, prim.name)
        return [o.host() for o in launch_for(closed, prim.name)(args)]

    return impl


def _bind_list(prim: Primitive, args: Sequence[Array], params: dict[str, ParamValue]) -> list[Array]:
    out = prim.bind(*args, **params)
    return list(out) if prim.multiple_results else [out]


def _nan_where_failed(info: Array, ok_if_nonnegative: bool, *xs: Array) -> list[Array]:
    """Each ``x`` with its matrices replaced by NaNs where LAPACK's ``info`` reports failure."""
    zero = full(_shape(info), 0, np.int32)
    ok = ge(info, zero) if ok_if_nonnegative else eq(info, zero)
    batch = len(_shape(info))
    outs = []
    for x in xs:
        aval = get_aval(x)
        okb = broadcast_in_dim(ok, aval.shape, tuple(range(batch)))
        outs.append(select(okb, x, full(aval.shape, np.nan, aval.dtype)))
    return outs


def _batch_to_front(prim: Primitive) -> None:
    """Batching for the one-operand primitives: the batch axis moves to the front."""

    def rule(axis_size: int, vals: list[Array], dims: list[Dim], **params: ParamValue) -> tuple[Any, Any]:
        (x,), (d,) = vals, dims
        assert d is not None
        out = prim.bind(moveaxis(x, d, 0), **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)

    batching_rules.register(prim)(rule)


def _on_cpu() -> bool:
    return platform() == "cpu"


# -- cholesky --------------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class CholeskyParams:
    """``cholesky``: no parameters (the lower factor, computed from the lower triangle)."""


cholesky_p = Primitive("cholesky", params=CholeskyParams)


@cholesky_p.def_abstract_eval
def _cholesky_abstract_eval(x: ShapedArray) -> ShapedArray:
    _check_matrix("cholesky", x)
    return ShapedArray(x.shape, x.dtype)


_cholesky_run = _xla_impl(cholesky_p)


@checked_impl(cholesky_p)
def _cholesky_impl(x: NpArray) -> NpArray:
    return _cholesky_run(x)[0]


@jvp_rules.register(cholesky_p)
def _cholesky_jvp(primals: list[Array], tangents: list[Array]) -> tuple[Array, Array]:
    """Murray's forward rule (arXiv:1602.07527): ``dL = L phi(L^-1 dA L^-H)``."""
    (x,), (sigma_dot,) = primals, tangents
    L = _tril(cholesky_p.bind(x))
    aval = get_aval(L)
    tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    phi = div(_tril(inner), add(_const(1, L), _eye(aval.dtype, aval.shape)))
    return L, _mm(L, phi)


_batch_to_front(cholesky_p)


@lowering_rules.register(cholesky_p)
def _cholesky_lowering(ctx: LoweringRuleContext, x: str) -> str:
    aval = ctx.avals_in[0]
    if not (_on_cpu() and lapack.supports(aval.dtype)):
        return ctx.emit(f"stablehlo.cholesky {x}, lower = true : {tensor_type(aval)}")
    info = ShapedArray(aval.shape[:-2], dtypes.to_dtype(np.int32))
    out, code = lapack.custom_call(ctx, lapack.target("potrf_ffi", aval.dtype), [x], [aval], [aval, info],
                                   {"uplo": ord("L")}, {0: 0})
    return _inline(ctx, lambda a, i: _nan_where_failed(i, False, a), [out, code], [aval, info], "cholesky_nan")[0]


def cholesky(x: ArrayLike, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor ``L`` (``x = L L^H``) of each matrix; NaNs where ``x`` is not
    positive definite. ``symmetrize_input`` uses ``(x + x^H) / 2``; otherwise only the lower
    triangle of ``x`` is read."""
    xa = _as_array(x)
    if symmetrize_input:
        _check_matrix("cholesky", get_aval(xa))
        xa = symmetrize(xa)
    out: Array = cholesky_p.bind(xa)
    return _tril(out)


def _as_array(x: ArrayLike) -> Array:
    """An operand as an fcore array (NumPy values and Python scalars canonicalized, as ``bind`` does)."""
    if isinstance(x, Array):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax.linalg functions take arrays, got a {type(x).__name__}")
    aval = get_aval(x)
    return ArrayImpl(np.asarray(x, aval.dtype), aval.weak_type)


# -- triangular_solve[left_side, lower, transpose_a, conjugate_a, unit_diagonal] -------------------
@attrs.frozen(kw_only=True)
class TriangularSolveParams:
    """``triangular_solve``: ``op(a) x = b`` (``left_side``) or ``x op(a) = b``, reading the lower
    or upper triangle of ``a``; ``op`` transposes and/or conjugates; a unit diagonal is not read."""

    left_side: bool
    lower: bool
    transpose_a: bool
    conjugate_a: bool
    unit_diagonal: bool


triangular_solve_p = Primitive("triangular_solve", params=TriangularSolveParams)


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract_eval(a: ShapedArray, b: ShapedArray, *, left_side: bool, lower: bool,
                                    transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> ShapedArray:
    _check_matrix("triangular_solve", a, square=False)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The first input to triangular_solve must be a square matrix. Got shape {a.shape[-2:]}.")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve requires operands of one dtype, got {dtypes.dtype_name(a.dtype)} "
                        f"and {dtypes.dtype_name(b.dtype)}")
    if len(b.shape) != len(a.shape) or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a.shape} and {b.shape}.")
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != common:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a.shape} and {b.shape}.")
    return ShapedArray(b.shape, b.dtype)


_triangular_solve_run = _xla_impl(triangular_solve_p)


@checked_impl(triangular_solve_p)
def _triangular_solve_impl(a: NpArray, b: NpArray, *, left_side: bool, lower: bool, transpose_a: bool,
                           conjugate_a: bool, unit_diagonal: bool) -> NpArray:
    return _triangular_solve_run(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                 conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)[0]


@jvp_rules.register(triangular_solve_p, symbolic_zeros=True)
def _triangular_solve_jvp(primals: list[Array], tangents: list[Tangent], *, left_side: bool, lower: bool,
                          transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> tuple[Array, Tangent]:
    a, b = primals
    g_a, g_b = tangents
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
              unit_diagonal=unit_diagonal)
    ans: Array = triangular_solve_p.bind(a, b, **kw)
    terms: list[Array] = []
    if not isinstance(g_b, Zero):
        terms.append(triangular_solve_p.bind(a, g_b, **kw))
    if not isinstance(g_a, Zero):
        m, n = _shape(b)[-2:]
        k = 1 if unit_diagonal else 0
        ga = _tril(g_a, -k) if lower else _triu(g_a, k)
        ga = neg(ga)
        ga = _T(ga) if transpose_a else ga
        ga = conj(ga) if conjugate_a else ga

        def a_inverse(rhs: Array) -> Array:
            out: Array = triangular_solve_p.bind(a, rhs, **kw)
            return out

        if left_side:
            terms.append(a_inverse(_mm(ga, ans)) if m > n else _mm(a_inverse(ga), ans))
        else:
            terms.append(a_inverse(_mm(ans, ga)) if m < n else _mm(ans, a_inverse(ga)))
    if not terms:
        return ans, Zero(get_aval(ans))
    tout = terms[0] if len(terms) == 1 else add(terms[0], terms[1])
    return ans, tout


@transpose_rules.register(triangular_solve_p)
def _triangular_solve_transpose(ct: Any, a: Array, b: UndefinedPrimal, *, left_side: bool, lower: bool,
                                transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> list[Any]:
    """Linear in ``b``: the cotangent is solved with the transposed ``a``."""
    if isinstance(ct, Zero):
        return [None, Zero(b.aval)]
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                                          conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)]


@batching_rules.register(triangular_solve_p)
def _triangular_solve_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, left_side: bool, lower: bool,
                               transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> tuple[Array, Dim]:
    a, b = vals
    da, db = dims
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
              unit_diagonal=unit_diagonal)
    if da is None:
        # One matrix against a batch of right-hand sides: fold the batch into b's free axis.
        assert db is not None
        if left_side:
            y = moveaxis(b, db, len(_shape(b)) - 1)
            s = _shape(y)
            out_flat: Array = triangular_solve_p.bind(a, _merge_last(y), **kw)
            return _reshape(out_flat, s), len(s) - 1
        y = moveaxis(b, db, len(_shape(b)) - 2)
        s = _shape(y)
        out_flat = triangular_solve_p.bind(a, _merge_rows(y), **kw)
        return _reshape(out_flat, s), len(s) - 2
    a = moveaxis(a, da, 0)
    if db is None:
        b = broadcast_in_dim(b, (axis_size, *_shape(b)), tuple(range(1, len(_shape(b)) + 1)))
    else:
        b = moveaxis(b, db, 0)
    out: Array = triangular_solve_p.bind(a, b, **kw)
    return out, 0


def _reshape(x: Array, shape: tuple[int, ...]) -> Array:
    return reshape(x, shape)


def _merge_last(y: Array) -> Array:
    """``(..., m, n, B) -> (..., m, n * B)``."""
    s = _shape(y)
    return _reshape(y, (*s[:-2], s[-2] * s[-1]))


def _merge_rows(y: Array) -> Array:
    """``(..., n, B, m) -> (..., n * B, m)``."""
    s = _shape(y)
    return _reshape(y, (*s[:-3], s[-3] * s[-2], s[-1]))


@lowering_rules.register(triangular_solve_p)
def _triangular_solve_lowering(ctx: LoweringRuleContext, a: str, b: str, *, left_side: bool, lower: bool,
                               transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> str:
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a:
        a = _conj_text(ctx, a, a_aval)
        conjugate_a = False
    if _on_cpu() and lapack.supports(a_aval.dtype):
        trans = ord("C") if (transpose_a and conjugate_a) else ord("T") if transpose_a else ord("N")
        config = {"side": ord("L") if left_side else ord("R"), "uplo": ord("L") if lower else ord("U"),
                  "trans_x": trans, "diag": ord("U") if unit_diagonal else ord("N")}
        return lapack.custom_call(ctx, lapack.target("trsm_ffi", a_aval.dtype), [a, b], [a_aval, b_aval], [b_aval],
                                  config, {0: 1})[0]
    transpose = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    return ctx.emit(
        f'"stablehlo.triangular_solve"({a}, {b}) {{left_side = {str(left_side).lower()}, lower = {str(lower).lower()}, '
        f"transpose_a = #stablehlo<transpose {transpose}>, unit_diagonal = {str(unit_diagonal).lower()}}} "
        f": ({tensor_type(a_aval)}, {tensor_type(b_aval)}) -> {tensor_type(b_aval)}"
    )


def _conj_text(ctx: LoweringRuleContext, a: str, aval: ShapedArray) -> str:
    if not dtypes.is_complex(aval.dtype):
        return a
    part = ShapedArray(aval.shape, _real_dtype(aval.dtype))
    re = ctx.op_typed("stablehlo.real", [a], [aval], part)
    im = ctx.op_typed("stablehlo.imag", [a], [aval], part)
    return ctx.op_typed("stablehlo.complex", [re, ctx.op("stablehlo.negate", [im], part)], [part, part], aval)


def triangular_solve(a: ArrayLike, b: ArrayLike, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False, unit_diagonal: bool = False) -> Array:
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for triangular ``a``
    (``lax.linalg.triangular_solve``); ``b`` may have one axis fewer than ``a`` (a vector)."""
    aa, bb = _as_array(a), _as_array(b)
    conjugate_a = bool(conjugate_a) and dtypes.is_complex(aa.dtype)
    singleton = bb.ndim == aa.ndim - 1
    if singleton:
        bb = expand_dims(bb, (bb.ndim if left_side else bb.ndim - 1,))
    out: Array = triangular_solve_p.bind(aa, bb, left_side=bool(left_side), lower=bool(lower),
                                         transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                         unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = squeeze(out, (out.ndim - 1 if left_side else out.ndim - 2,))
    return out


# -- lu: (lu, pivots, permutation) -----------------------------------------------------------------
@attrs.frozen(kw_only=True)
class LuParams:
    """``lu``: no parameters (partial pivoting, LAPACK's ``getrf``)."""


lu_p = Primitive("lu", multiple_results=True, params=LuParams)


@lu_p.def_abstract_eval
def _lu_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    _check_matrix("lu", x, square=False)
    *batch, m, n = x.shape
    i32 = dtypes.to_dtype(np.int32)
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), i32), ShapedArray((*batch, m), i32)]


_lu_run = _xla_impl(lu_p)


@checked_impl(lu_p)
def _lu_impl(x: NpArray) -> list[NpArray]:
    return _lu_run(x)


def _lu_jvp_inner(lu_: Array, a_dot: Array, permutation: Array) -> Array:
    """De Hoog, Anderssen and Lukas: ``L' = L tril(L^-1 A' U^-1, -1)``, ``U' = triu(L^-1 A' U^-1) U``."""
    *batch, m, n = _shape(lu_)
    dt = get_aval(lu_).dtype
    k = min(m, n)
    nb = len(batch)
    zero = np.zeros((), dt)
    l = pad(_tril(_rows(lu_, 0, k, -1), -1), zero, [(0, 0, 0)] * (nb + 1) + [(0, m - k, 0)])
    l = add(l, _eye(dt, (*batch, m, m)))
    u_eye = pad(_eye(dt, (*batch, n - k, n - k)), zero, [(0, 0, 0)] * nb + [(k, 0, 0), (k, 0, 0)])
    u = add(pad(_triu(_rows(lu_, 0, k, -2)), zero, [(0, 0, 0)] * nb + [(0, n - k, 0), (0, 0, 0)]), u_eye)
    la = triangular_solve(l, _mm(_permutation_matrix(permutation, dt), a_dot), left_side=True, transpose_a=False, lower=True,
                          unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, transpose_a=False, lower=False)
    return add(_mm(l, _tril(lau, -1)), _mm(_triu(lau), u))


@jvp_rules.register(lu_p)
def _lu_jvp(primals: list[Array], tangents: list[Array]) -> tuple[list[Array], list[Tangent]]:
    (a,), (a_dot,) = primals, tangents
    lu_, pivots, permutation = lu_p.bind(a)
    return [lu_, pivots, permutation], [_lu_jvp_inner(lu_, a_dot, permutation), Zero(get_aval(pivots)),
                                        Zero(get_aval(permutation))]


_batch_to_front(lu_p)


def lu_pivots_to_permutation(pivots: ArrayLike, permutation_size: int) -> Array:
    """The permutation that the row swaps ``pivots`` (LAPACK's, 0-based) apply to ``range(m)``."""
    piv = _as_array(pivots)
    *batch, k = _shape(piv)
    m = int(permutation_size)
    nb = len(batch)
    shape = (*batch, m)
    perm0 = broadcasted_iota(np.int32, shape, nb)
    if m == 0 or k == 0:
        return perm0
    iota = broadcasted_iota(np.int32, shape, nb)

    def at(v: Array, idx: Array) -> Array:
        """``v[..., idx]`` for a scalar index (a one-element slice)."""
        return dynamic_slice_in_dim(v, idx, 1, nb, allow_negative_indices=False)

    def body(i_any: Array, perm: Array) -> Array:
        i = convert_element_type(i_any, np.int32)
        j = at(piv, i)  # swaps[..., i]
        x = at(perm, i)
        if nb == 0:  # one permutation: swap two elements with slices, as JAX's loop does
            y = dynamic_slice(perm, (reshape(j, ()),), (1,))
            perm = dynamic_update_slice(perm, y, (i,))
            return dynamic_update_slice(perm, x, (reshape(j, ()),))
        at_j = eq(iota, broadcast_in_dim(j, shape, tuple(range(nb + 1))))
        y = reduce_sum(select(at_j, perm, full(shape, 0, np.int32)), (nb,))
        perm = dynamic_update_slice_in_dim(perm, expand_dims(y, (nb,)), i, nb, allow_negative_indices=False)
        return select(at_j, broadcast_in_dim(x, shape, tuple(range(nb + 1))), perm)

    out: Array = fori_loop(np.int32(0), np.int32(k), body, perm0)
    return out


def _lu_post(lu_: Array, pivots: Array, info: Array) -> list[Array]:
    piv = sub(pivots, full(_shape(pivots), 1, np.int32))
    (lu_nan,) = _nan_where_failed(info, True, lu_)
    return [lu_nan, piv, lu_pivots_to_permutation(piv, _shape(lu_)[-2])]


@lowering_rules.register(lu_p)
def _lu_lowering(ctx: LoweringRuleContext, x: str) -> list[str]:
    aval = ctx.avals_in[0]
    _, piv_aval, _ = ctx.avals_out
    info = ShapedArray(aval.shape[:-2], dtypes.to_dtype(np.int32))
    out, piv, code = lapack.custom_call(ctx, lapack.target("getrf_ffi", aval.dtype), [x], [aval],
                                        [aval, piv_aval, info], {}, {0: 0})
    return _inline(ctx, _lu_post, [out, piv, code], [aval, piv_aval, info], "lu_post")


def lu(x: ArrayLike) -> tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting (``lax.linalg.lu``): ``(lu, pivots, permutation)``
    with ``x[..., permutation, :] = L @ U``, ``L`` unit lower (below ``lu``'s diagonal) and ``U``
    upper triangular."""
    lu_, pivots, permutation = lu_p.bind(_as_array(x))
    return lu_, pivots, permutation


# -- qr[full_matrices, pivoting, use_magma] --------------------------------------------------------
@attrs.frozen(kw_only=True)
class QrParams:
    """``qr[full_matrices, pivoting, use_magma]``: ``q`` is ``m x m`` (full) or ``m x min(m, n)``
    (reduced); with ``pivoting`` the columns are pivoted (LAPACK's ``geqp3``) and the column
    permutation is a third result; ``use_magma`` matters on GPUs only."""

    full_matrices: bool
    pivoting: bool
    use_magma: bool | None


qr_p = Primitive("qr", multiple_results=True, params=QrParams)


@qr_p.def_abstract_eval
def _qr_abstract_eval(x: ShapedArray, *, full_matrices: bool, pivoting: bool,
                      use_magma: bool | None) -> list[ShapedArray]:
    _check_matrix("qr", x, square=False)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    outs = [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]
    return [*outs, ShapedArray((*batch, n), dtypes.to_dtype(np.int32))] if pivoting else outs


_qr_run = _xla_impl(qr_p)


@checked_impl(qr_p)
def _qr_impl(x: NpArray, *, full_matrices: bool, pivoting: bool, use_magma: bool | None) -> list[NpArray]:
    return _qr_run(x, full_matrices=full_matrices, pivoting=pivoting, use_magma=use_magma)


def _thin_qr_jvp(q: Array, r: Array, dx: Array) -> tuple[Array, Array]:
    """JVP of the QR of ``[..., m, n]`` matrices with ``m >= n`` (J. Townsend's derivation)."""
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    lower = _tril(qt_dx_rinv, -1)
    do = sub(lower, _H(lower))
    aval = get_aval(qt_dx_rinv)
    if dtypes.is_complex(aval.dtype):
        n = _shape(r)[-1]
        eye = _eye(aval.dtype, (*aval.shape[:-2], n, n))
        do = add(do, mul(eye, sub(qt_dx_rinv, convert_element_type(real(qt_dx_rinv), aval.dtype))))
    dq = add(_mm(q, sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(sub(qt_dx_rinv, do), r)
    return dq, dr


def _lu_solve(lu_: Array, permutation: Array, b: Array, adjoint: bool) -> Array:
    """``a^-1 b`` (or ``a^-H b``) for ``[..., m, k]`` ``b`` from ``a``'s LU factors."""
    p = _permutation_matrix(permutation, get_aval(b).dtype)
    if not adjoint:
        x = triangular_solve(lu_, _mm(p, b), left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=True)
    return _mm(_T(p), x)


@jvp_rules.register(qr_p)
def _qr_jvp(primals: list[Array], tangents: list[Array], *, full_matrices: bool, pivoting: bool,
            use_magma: bool | None) -> tuple[list[Array], list[Tangent]]:
    (x,), (dx,) = primals, tangents
    q, r, *p = qr_p.bind(x, full_matrices=full_matrices, pivoting=pivoting, use_magma=use_magma)
    *batch, m, n = _shape(x)
    nb = len(batch)
    dt = get_aval(x).dtype
    if pivoting:
        dx = _mm(dx, _T(_permutation_matrix(p[0], dt)))  # dx[..., p]
    dp: list[Tangent] = [Zero(get_aval(p[0]))] if pivoting else []
    if m < n:
        x2 = _rows(x, m, n, -1)  # unpivoted, as in JAX's rule
        dx1, dx2 = _rows(dx, 0, m, -1), _rows(dx, m, n, -1)
        dq, dr1 = _thin_qr_jvp(q, _rows(r, 0, m, -1), dx1)
        dr2 = add(_mm(_H(dq), x2), _mm(_H(q), dx2))
        return [q, r, *p], [dq, concatenate([dr1, dr2], nb + 1), *dp]
    q_mn = _rows(q, 0, n, -1) if full_matrices else q
    r_nn = _rows(r, 0, n, -2) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return [q, r, *p], [dq_mn, dr_nn, *dp]
    # Tall, full matrices: arXiv:2409.13374, eqs. 32-33.
    q_nn, q_pn = _rows(q_mn, 0, n, -2), _rows(q_mn, n, m, -2)
    q_mp = _rows(q, n, m, -1)
    dq_nn, dq_pn = _rows(dq_mn, 0, n, -2), _rows(dq_mn, n, m, -2)
    lu_, _, perm = lu(sub(q_nn, _eye(dt, _shape(q_nn))))
    z_pn_H = _lu_solve(lu_, perm, _H(q_pn), adjoint=True)
    z_pn = _H(z_pn_H)
    dq_mp = sub(_mm(dq_mn, z_pn_H), _mm(add(q_mn, _mm(q_mp, z_pn)), _H(sub(dq_pn, _mm(z_pn, dq_nn)))))
    dq = concatenate([dq_mn, dq_mp], nb + 1)
    dr = concatenate([dr_nn, full((*batch, m - n, n), 0, dt)], nb)
    return [q, r, *p], [dq, dr, *dp]


_batch_to_front(qr_p)


def _qr_pad(r: Array, pad_cols: int) -> list[Array]:
    if not pad_cols:
        return [r]
    nd = len(_shape(r))
    return [pad(r, np.zeros((), get_aval(r).dtype), [(0, 0, 0)] * (nd - 1) + [(0, pad_cols, 0)])]


@lowering_rules.register(qr_p)
def _qr_lowering(ctx: LoweringRuleContext, x: str, *, full_matrices: bool, pivoting: bool,
                 use_magma: bool | None) -> list[str]:
    aval = ctx.avals_in[0]
    q_aval, r_aval = ctx.avals_out[:2]
    *batch, m, n = aval.shape
    i32 = dtypes.to_dtype(np.int32)
    p_aval = ShapedArray((*batch, n), i32)
    if m == 0 or n == 0:
        def empty(a: Array) -> list[Array]:
            outs = [_eye(aval.dtype, q_aval.shape), full(r_aval.shape, 0, aval.dtype)]
            return [*outs, full(p_aval.shape, 0, i32)] if pivoting else outs

        return _inline(ctx, empty, [x], [aval], "qr_empty")
    k = min(m, n)
    tau_aval = ShapedArray((*batch, k), aval.dtype)
    p_out: list[str] = []
    if pivoting:
        (jpvt,) = _inline(ctx, lambda a: [full(p_aval.shape, 0, i32)], [x], [aval], "qr_jpvt")
        r, piv, taus = lapack.custom_call(ctx, lapack.target("geqp3_ffi", aval.dtype), [x, jpvt], [aval, p_aval],
                                          [aval, p_aval, tau_aval], {}, {0: 0, 1: 1})
        p_out = _inline(ctx, lambda v: [sub(v, full(p_aval.shape, 1, i32))], [piv], [p_aval], "qr_pivots")
    else:
        r, taus = lapack.custom_call(ctx, lapack.target("geqrf_ffi", aval.dtype), [x], [aval], [aval, tau_aval], {},
                                     {0: 0})
    if m < n:
        q_in_aval = ShapedArray((*batch, m, m), aval.dtype)
        (q_in,) = _inline(ctx, lambda a: [_rows(_rows(a, 0, m, -2), 0, m, -1)], [r], [aval], "qr_square")
    elif full_matrices:
        q_in_aval = ShapedArray((*batch, m, m), aval.dtype)
        (q_in,) = _inline(ctx, lambda a: _qr_pad(a, m - n), [r], [aval], "qr_pad")
    else:
        q_in_aval, q_in = aval, r
    orgqr = "ungqr_ffi" if dtypes.is_complex(aval.dtype) else "orgqr_ffi"
    (q,) = lapack.custom_call(ctx, lapack.target(orgqr, aval.dtype), [q_in, taus], [q_in_aval, tau_aval], [q_in_aval],
                              {}, {0: 0})
    rows = r_aval.shape[-2]
    (r_out,) = _inline(ctx, lambda a: [_triu(_rows(a, 0, rows, -2))], [r], [aval], "qr_triu")
    return [q, r_out, *p_out]


def qr(x: ArrayLike, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None) -> Any:
    """QR decomposition (``lax.linalg.qr``): ``(q, r)`` with ``x = q @ r``, ``q`` with orthonormal
    columns and ``r`` upper triangular (LAPACK's ``geqrf`` then ``orgqr``); with ``pivoting``,
    ``(q, r, p)`` with ``x[..., p] = q @ r`` (``geqp3``)."""
    out = qr_p.bind(_as_array(x), full_matrices=bool(full_matrices), pivoting=bool(pivoting), use_magma=use_magma)
    return tuple(out)


# -- geqrf and householder_product: QR in LAPACK's compact form -----------------------------------
@attrs.frozen(kw_only=True)
class GeqrfParams:
    """``geqrf``: no parameters."""


geqrf_p = Primitive("geqrf", multiple_results=True, params=GeqrfParams)


@geqrf_p.def_abstract_eval
def _geqrf_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    _check_matrix("geqrf", x, square=False)
    *batch, m, n = x.shape
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), x.dtype)]


_geqrf_run = _xla_impl(geqrf_p)


@checked_impl(geqrf_p)
def _geqrf_impl(x: NpArray) -> list[NpArray]:
    return _geqrf_run(x)


_batch_to_front(geqrf_p)


@lowering_rules.register(geqrf_p)
def _geqrf_lowering(ctx: LoweringRuleContext, x: str) -> list[str]:
    aval = ctx.avals_in[0]
    return lapack.custom_call(ctx, lapack.target("geqrf_ffi", aval.dtype), [x], [aval], ctx.avals_out, {}, {0: 0})


def geqrf(a: ArrayLike) -> tuple[Array, Array]:
    """LAPACK's ``geqrf`` (``lax.linalg.geqrf``): ``(a, taus)``, ``r`` in the upper triangle of
    ``a`` and ``q`` as Householder reflectors below it and in ``taus``."""
    out, taus = geqrf_p.bind(_as_array(a))
    return out, taus


@attrs.frozen(kw_only=True)
class HouseholderProductParams:
    """``householder_product``: no parameters."""


householder_product_p = Primitive("householder_product", params=HouseholderProductParams)


@householder_product_p.def_abstract_eval
def _householder_product_abstract_eval(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    _check_matrix("householder_product", a, square=False)
    *batch, m, n = a.shape
    if m < n:
        raise ValueError(f"The first argument to householder_product must have at least as many rows as columns, "
                         f"got shape {a.shape}")
    if taus.dtype != a.dtype or tuple(taus.shape[:-1]) != tuple(batch) or taus.shape[-1] > n:
        raise ValueError(f"The second argument to householder_product must be a [..., k] vector of {a.dtype} with "
                         f"k <= {n}, got {taus.str_short()}")
    return ShapedArray(a.shape, a.dtype)


_householder_product_run = _xla_impl(householder_product_p)


@checked_impl(householder_product_p)
def _householder_product_impl(a: NpArray, taus: NpArray) -> NpArray:
    return _householder_product_run(a, taus)[0]


@batching_rules.register(householder_product_p)
def _householder_product_batching(axis_size: int, vals: list[Array], dims: list[Dim]) -> tuple[Array, Dim]:
    moved = [broadcast_in_dim(v, (axis_size, *_shape(v)), tuple(range(1, len(_shape(v)) + 1))) if d is None
             else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    out: Array = householder_product_p.bind(*moved)
    return out, 0


@lowering_rules.register(householder_product_p)
def _householder_product_lowering(ctx: LoweringRuleContext, a: str, taus: str) -> str:
    aval = ctx.avals_in[0]
    name = "ungqr_ffi" if dtypes.is_complex(aval.dtype) else "orgqr_ffi"
    return lapack.custom_call(ctx, lapack.target(name, aval.dtype), [a, taus], ctx.avals_in, [aval], {}, {0: 0})[0]


def householder_product(a: ArrayLike, taus: ArrayLike) -> Array:
    """The product of the Householder reflectors of ``geqrf`` (LAPACK's ``orgqr``/``ungqr``)."""
    out: Array = householder_product_p.bind(_as_array(a), _as_array(taus))
    return out


# -- ormqr[left, transpose]: multiply by geqrf's Q without forming it -----------------------------
@attrs.frozen(kw_only=True)
class OrmqrParams:
    """``ormqr[left, transpose]``: ``Q @ c`` or ``c @ Q`` (``left``), with ``Q^T``/``Q^H`` when ``transpose``."""

    left: bool
    transpose: bool


ormqr_p = Primitive("ormqr", params=OrmqrParams)


@ormqr_p.def_abstract_eval
def _ormqr_abstract_eval(a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool,
                         transpose: bool) -> ShapedArray:
    for x, rank in ((a, 2), (taus, 1), (c, 2)):
        if not (dtypes.is_floating(x.dtype) or dtypes.is_complex(x.dtype)) or x.ndim < rank:
            raise TypeError(f"ormqr requires floating or complex operands of rank >= {rank}, got {x.str_short()}")
    if not (a.shape[:-2] == taus.shape[:-1] == c.shape[:-2]) or not (a.dtype == taus.dtype == c.dtype):
        raise ValueError(f"ormqr requires operands of one dtype and batch shape, got {a.str_short()}, "
                         f"{taus.str_short()} and {c.str_short()}")
    a_shape, c_shape = a.shape[-2:], c.shape[-2:]
    if left and c_shape[0] != a_shape[0]:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as the Householder matrix a. "
                         f"Got a shape {a_shape} and c shape {c_shape}.")
    if not left and c_shape[1] != a_shape[0]:
        raise ValueError("ormqr with left=False expects c to have the same number of columns as the Householder "
                         f"matrix a has rows. Got a shape {a_shape} and c shape {c_shape}.")
    return ShapedArray(c.shape, c.dtype)


_ormqr_run = _xla_impl(ormqr_p)


@checked_impl(ormqr_p)
def _ormqr_impl(a: NpArray, taus: NpArray, c: NpArray, *, left: bool, transpose: bool) -> NpArray:
    return _ormqr_run(a, taus, c, left=left, transpose=transpose)[0]


@batching_rules.register(ormqr_p)
def _ormqr_batching(axis_size: int, vals: list[Array], dims: list[Dim], *, left: bool,
                    transpose: bool) -> tuple[Array, Dim]:
    moved = [broadcast_in_dim(v, (axis_size, *_shape(v)), tuple(range(1, len(_shape(v)) + 1))) if d is None
             else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    out: Array = ormqr_p.bind(*moved, left=left, transpose=transpose)
    return out, 0


@lowering_rules.register(ormqr_p)
def _ormqr_lowering(ctx: LoweringRuleContext, a: str, taus: str, c: str, *, left: bool, transpose: bool) -> str:
    aval = ctx.avals_in[0]
    name = "unmqr_ffi" if dtypes.is_complex(aval.dtype) else "ormqr_ffi"
    config = {"left": str(left).lower(), "transpose": str(transpose).lower()}
    return lapack.custom_call(ctx, lapack.target(name, aval.dtype), [a, taus, c], ctx.avals_in, [ctx.avals_in[2]],
                              config, {0: 2})[0]


def ormqr(a: ArrayLike, taus: ArrayLike, c: ArrayLike, *, left: bool = True, transpose: bool = False) -> Array:
    """``Q @ c`` (``left``) or ``c @ Q``, ``Q`` (``Q^T``/``Q^H`` with ``transpose``) given by
    ``geqrf``'s reflectors ``a`` and ``taus`` (LAPACK's ``ormqr``/``unmqr``, ``lax.linalg.ormqr``)."""
    out: Array = ormqr_p.bind(_as_array(a), _as_array(taus), _as_array(c), left=bool(left), transpose=bool(transpose))
    return out


# -- eigh[algorithm, lower, sort_eigenvalues, subset_by_index] -------------------------------------
@attrs.frozen(kw_only=True)
class EighParams:
    """``eigh[algorithm, lower, sort_eigenvalues, subset_by_index]``: the implementation (CPU:
    ``None`` or ``QR``, LAPACK's ``syevd``), which triangle is read, whether the eigenvalues come
    sorted (LAPACK always sorts) and an optional index range of them."""

    algorithm: EighImplementation | None
    lower: bool
    sort_eigenvalues: bool
    subset_by_index: tuple[int, int] | None


@register_param_enum
class EighImplementation(enum.Enum):
    """Which eigh algorithm (``lax.linalg.EighImplementation``); the CPU has ``QR`` (LAPACK)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


eigh_p = Primitive("eigh", multiple_results=True, params=EighParams)


@eigh_p.def_abstract_eval
def _eigh_abstract_eval(x: ShapedArray, *, lower: bool, sort_eigenvalues: bool,
                        subset_by_index: tuple[int, int] | None, algorithm: EighImplementation | None) -> list[ShapedArray]:
    _check_matrix("eigh", x, square=False)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to symmetric eigendecomposition must have shape [..., n, n], got shape {x.shape}")
    n = x.shape[-1]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return [ShapedArray((*x.shape[:-1], d), x.dtype), ShapedArray((*x.shape[:-2], d), _real_dtype(x.dtype))]


_eigh_run = _xla_impl(eigh_p)


@checked_impl(eigh_p)
def _eigh_impl(x: NpArray, *, lower: bool, sort_eigenvalues: bool,
               subset_by_index: tuple[int, int] | None, algorithm: EighImplementation | None) -> list[NpArray]:
    return _eigh_run(x, lower=lower, sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index, algorithm=algorithm)


@jvp_rules.register(eigh_p)
def _eigh_jvp(primals: list[Array], tangents: list[Array], *, lower: bool, sort_eigenvalues: bool,
              subset_by_index: tuple[int, int] | None, algorithm: EighImplementation | None) -> tuple[list[Array], list[Array]]:
    """Nondegenerate perturbation theory: ``dw = diag(V^H dA V)``, ``dV = V (F * V^H dA V)``."""
    (a,), (a_dot,) = primals, tangents
    aval = get_aval(a)
    n = aval.shape[-1]
    if not (subset_by_index is None or subset_by_index == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    w = convert_element_type(w_real, aval.dtype)
    shape = aval.shape
    nb = len(shape) - 2
    eye_n = _eye(aval.dtype, shape)
    w_cols = broadcast_in_dim(w, shape, (*range(nb), nb + 1))  # w[..., newaxis, :]
    w_rows = broadcast_in_dim(w, shape, tuple(range(nb + 1)))  # w[..., :, newaxis]
    fmat = sub(integer_pow(add(eye_n, sub(w_cols, w_rows)), -1), eye_n)
    vdag_adot_v = _mm(_mm(_H(v), a_dot), v)
    dv = _mm(v, mul(fmat, vdag_adot_v))
    dw = _diag(real(vdag_adot_v) if dtypes.is_complex(aval.dtype) else vdag_adot_v)
    return [v, w_real], [dv, dw]


_batch_to_front(eigh_p)


@lowering_rules.register(eigh_p)
def _eigh_lowering(ctx: LoweringRuleContext, x: str, *, lower: bool, sort_eigenvalues: bool,
                   subset_by_index: tuple[int, int] | None, algorithm: EighImplementation | None) -> list[str]:
    aval = ctx.avals_in[0]
    v_aval, w_aval = ctx.avals_out
    n = aval.shape[-1]
    if not (subset_by_index is None or subset_by_index == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm == EighImplementation.QDWH or (algorithm == EighImplementation.JACOBI and not lapack.on_gpu()):
        raise NotImplementedError(f"the {algorithm.name} implementation of eigh is not supported on CPU")
    info = ShapedArray(aval.shape[:-2], dtypes.to_dtype(np.int32))
    fn = ("heevd_ffi" if dtypes.is_complex(aval.dtype) else "syevd_ffi")
    config: dict[str, int | str] = {"mode": ord("V"), "uplo": ord("L" if lower else "U")}
    if lapack.on_gpu():  # cuSOLVER's attributes: the triangle, and QR (1) or Jacobi (2), 0 its default
        config = {"lower": "true" if lower else "false",
                  "algorithm": {None: 0, EighImplementation.QR: 1}.get(algorithm, 2)}
    v, w, code = lapack.custom_call(ctx, lapack.target(fn, aval.dtype), [x], [aval], [v_aval, w_aval, info],
                                    config, {0: 0})
    return _inline(ctx, lambda a, b, i: _nan_where_failed(i, False, a, b), [v, w, code], [v_aval, w_aval, info],
                   "eigh_nan")



def eigh(x: ArrayLike, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None) -> tuple[Array, Array]:
    """Eigendecomposition of Hermitian matrices (``lax.linalg.eigh``): ``(v, w)``, eigenvectors
    as columns of ``v`` and ascending eigenvalues ``w`` (real)."""
    xa = _as_array(x)
    if symmetrize_input:
        _check_matrix("eigh", get_aval(xa))
        xa = symmetrize(xa)
    v, w = eigh_p.bind(xa, algorithm=implementation, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=None if subset_by_index is None else (int(subset_by_index[0]),
                                                                             int(subset_by_index[1])))
    return v, w


# -- svd[algorithm, compute_uv, full_matrices, subset_by_index] ------------------------------------
@attrs.frozen(kw_only=True)
class SvdParams:
    """``svd[algorithm, compute_uv, full_matrices, subset_by_index]``: the LAPACK driver (``gesdd``
    by default, ``gesvd`` for ``QR``), whether ``u``/``vh`` are computed at all (else only
    ``s``), square or reduced ``u``/``vh``, and an optional index range."""

    algorithm: SvdAlgorithm | None
    full_matrices: bool
    compute_uv: bool
    subset_by_index: tuple[int, int] | None


@register_param_enum
class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm (``lax.linalg.SvdAlgorithm``); the CPU has divide and conquer
    (``DEFAULT``, LAPACK's ``gesdd``) and ``QR`` (``gesvd``)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


svd_p = Primitive("svd", multiple_results=True, params=SvdParams)


@svd_p.def_abstract_eval
def _svd_abstract_eval(x: ShapedArray, *, full_matrices: bool, compute_uv: bool,
                       subset_by_index: tuple[int, int] | None, algorithm: SvdAlgorithm | None) -> list[ShapedArray]:
    _check_matrix("svd", x, square=False)
    *batch, m, n = x.shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and subset_by_index != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    s = ShapedArray((*batch, rank), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    return [s, ShapedArray((*batch, m, m if full_matrices else rank), x.dtype),
            ShapedArray((*batch, n if full_matrices else rank, n), x.dtype)]


_svd_run = _xla_impl(svd_p)


@checked_impl(svd_p)
def _svd_impl(x: NpArray, *, full_matrices: bool, compute_uv: bool,
              subset_by_index: tuple[int, int] | None, algorithm: SvdAlgorithm | None) -> list[NpArray]:
    return _svd_run(x, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index, algorithm=algorithm)


@jvp_rules.register(svd_p)
def _svd_jvp(primals: list[Array], tangents: list[Array], *, full_matrices: bool, compute_uv: bool,
             subset_by_index: tuple[int, int] | None, algorithm: SvdAlgorithm | None) -> tuple[list[Array], list[Array]]:
    (a,), (da,) = primals, tangents
    aval = get_aval(a)
    dt = aval.dtype
    s, U, Vt = svd_p.bind(a, full_matrices=False, compute_uv=True, subset_by_index=subset_by_index, algorithm=algorithm)
    *batch, m, n = aval.shape
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    Ut, V = _H(U), _H(Vt)
    dS = _mm(_mm(Ut, da), V)
    ds = _diag(real(dS) if dtypes.is_complex(dt) else dS)
    if not compute_uv:
        return [s], [ds]
    k = _shape(s)[-1]
    nb = len(batch)
    sq = (*batch, k, k)
    s_dim = broadcast_in_dim(s, sq, (*range(nb), nb + 1))  # s[..., None, :]
    s_dimT = broadcast_in_dim(s, sq, tuple(range(nb + 1)))
    s_diffs = mul(add(s_dim, s_dimT), sub(s_dim, s_dimT))
    eye_r = _eye(get_aval(s).dtype, sq)
    F = sub(div(_const(1, s_diffs), add(s_diffs, eye_r)), eye_r)
    s_dim_c = convert_element_type(s_dim, dt)
    dSS = mul(s_dim_c, dS)
    SdS = mul(convert_element_type(s_dimT, dt), dS)
    s_zeros = convert_element_type(eq(s, _const(0, s)), get_aval(s).dtype)
    s_inv = sub(div(_const(1, s), add(s, s_zeros)), s_zeros)
    s_inv_mat = mul(broadcast_in_dim(s_inv, sq, (*range(nb), nb + 1)), eye_r)
    dUdV_diag = mul(mul(_const(0.5, dS), sub(dS, _H(dS))), convert_element_type(s_inv_mat, dt))
    Fc = convert_element_type(F, dt)
    dU = _mm(U, add(mul(Fc, add(dSS, _H(dSS))), dUdV_diag))
    dV = _mm(V, mul(Fc, add(SdS, _H(SdS))))
    if m > n:
        dAV = _mm(da, V)
        corr = sub(dAV, _mm(U, _mm(Ut, dAV)))
        dU = add(dU, div(corr, broadcast_in_dim(convert_element_type(s, dt), _shape(corr), (*range(nb), nb + 1))))
    if n > m:
        dAHU = _mm(_H(da), U)
        corr = sub(dAHU, _mm(V, _mm(Vt, dAHU)))
        dV = add(dV, div(corr, broadcast_in_dim(convert_element_type(s, dt), _shape(corr), (*range(nb), nb + 1))))
    return [s, U, Vt], [ds, dU, _H(dV)]


_batch_to_front(svd_p)


@lowering_rules.register(svd_p)
def _svd_lowering(ctx: LoweringRuleContext, x: str, *, full_matrices: bool, compute_uv: bool,
                  subset_by_index: tuple[int, int] | None, algorithm: SvdAlgorithm | None) -> list[str]:
    aval = ctx.avals_in[0]
    *batch, m, n = aval.shape
    if not (subset_by_index is None or subset_by_index == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    s_aval = ctx.avals_out[0]
    if m == 0 or n == 0:
        def empty(a: Array) -> list[Array]:
            outs = [full(s_aval.shape, 0, s_aval.dtype)]
            if compute_uv:
                u_aval, vt_aval = ctx.avals_out[1:]
                for o in (u_aval, vt_aval):
                    outs.append(_eye(o.dtype, o.shape) if o.shape[-1] == o.shape[-2] and full_matrices
                                else full(o.shape, 0, o.dtype))
            return outs

        return _inline(ctx, empty, [x], [aval], "svd_empty")
    if lapack.on_gpu():
        return _svd_gesvdj(ctx, x, full_matrices=full_matrices, compute_uv=compute_uv, algorithm=algorithm)
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    driver = "gesvd_ffi" if algorithm == SvdAlgorithm.QR else "gesdd_ffi"
    mode = ord("N") if not compute_uv else ord("A") if full_matrices else ord("S")
    k = min(m, n)
    u_aval = ShapedArray((*batch, m, m if full_matrices else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if full_matrices else k, n), aval.dtype)
    info = ShapedArray(tuple(batch), dtypes.to_dtype(np.int32))
    _, s, u, vt, code = lapack.custom_call(ctx, lapack.target(driver, aval.dtype), [x], [aval],
                                           [aval, s_aval, u_aval, vt_aval, info], {"mode": mode}, {0: 0})
    if not compute_uv:
        return _inline(ctx, lambda a, i: _nan_where_failed(i, False, a), [s, code], [s_aval, info], "svd_nan")
    return _inline(ctx, lambda a, b, c, i: _nan_where_failed(i, False, a, b, c), [s, u, vt, code],
                   [s_aval, u_aval, vt_aval, info], "svd_nan")



def _svd_gesvdj(ctx: LoweringRuleContext, x: str, *, full_matrices: bool, compute_uv: bool,
                algorithm: SvdAlgorithm | None) -> list[str]:
    """On CUDA, cuSOLVER's Jacobi SVD (``gesvdj``), which JAX picks for matrices up to 1024 x 1024
    (it returns ``v``, not ``vh``; its economy mode only pays above 32 x 32)."""
    aval = ctx.avals_in[0]
    *batch, m, n = aval.shape
    if algorithm not in (None, SvdAlgorithm.JACOBI) or m > 1024 or n > 1024:
        raise NotImplementedError(
            "on CUDA fcore has cuSOLVER's Jacobi SVD only, for matrices up to 1024 x 1024 (JAX also calls gesvd "
            "and gesvdp there)"
        )
    k = min(m, n)
    econ = not full_matrices and m > 32 and n > 32
    s_aval = ctx.avals_out[0]
    u_aval = ShapedArray((*batch, m, k if econ else m), aval.dtype)
    v_aval = ShapedArray((*batch, n, k if econ else n), aval.dtype)
    info = ShapedArray(tuple(batch), dtypes.to_dtype(np.int32))
    flags: dict[str, int | str] = {"full_matrices": "false" if econ else "true",
                                   "compute_uv": "true" if compute_uv else "false"}
    _, s, u, v, code = lapack.custom_call(ctx, lapack.target("gesvdj_ffi", aval.dtype), [x], [aval],
                                          [aval, s_aval, u_aval, v_aval, info], flags, {0: 0})
    if not compute_uv:
        return _inline(ctx, lambda a, i: _nan_where_failed(i, False, a), [s, code], [s_aval, info], "svd_nan")

    def finish(s_: Array, u_: Array, v_: Array, i: Array) -> list[Array]:
        vt = _H(v_)
        if not full_matrices and not econ:
            u_, vt = _rows(u_, 0, k, -1), _rows(vt, 0, k, -2)
        return _nan_where_failed(i, False, s_, u_, vt)

    return _inline(ctx, finish, [s, u, v, code], [s_aval, u_aval, v_aval, info], "svd_gesvdj")


def svd(x: ArrayLike, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: SvdAlgorithm | None = None) -> Any:
    """Singular value decomposition (``lax.linalg.svd``): ``(u, s, vh)``, or ``s`` alone when
    not ``compute_uv`` (LAPACK's divide-and-conquer ``gesdd``)."""
    result = svd_p.bind(_as_array(x), algorithm=algorithm, full_matrices=bool(full_matrices),
                        compute_uv=bool(compute_uv),
                        subset_by_index=None if subset_by_index is None else (int(subset_by_index[0]),
                                                                              int(subset_by_index[1])))
    if compute_uv:
        s, u, v = result
        return u, s, v
    return result[0]


# -- eig[compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs, implementation] (CPU) ---
@attrs.frozen(kw_only=True)
class EigParams:
    """``eig[compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs,
    implementation]``: which eigenvectors (besides the eigenvalues) are computed, whether their
    derivatives are allowed (they rely on assumptions JAX cannot check) and the implementation
    (``None``: LAPACK's ``geev`` on the CPU)."""

    compute_left_eigenvectors: bool
    compute_right_eigenvectors: bool
    enable_eigvec_derivs: bool
    implementation: EigImplementation | None


@register_param_enum
class EigImplementation(enum.Enum):
    """Which eig implementation (``lax.linalg.EigImplementation``); the CPU has ``LAPACK``."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


eig_p = Primitive("eig", multiple_results=True, params=EigParams)


def _complex_dtype(dt: DType) -> DType:
    return dtypes.to_dtype(np.complex128) if dt in (np.float64, np.complex128) else dtypes.to_dtype(np.complex64)


@eig_p.def_abstract_eval
def _eig_abstract_eval(x: ShapedArray, *, compute_left_eigenvectors: bool,
                       compute_right_eigenvectors: bool,
                        enable_eigvec_derivs: bool, implementation: EigImplementation | None) -> list[ShapedArray]:
    _check_matrix("eig", x)
    c = _complex_dtype(x.dtype)
    outs = [ShapedArray(x.shape[:-1], c)]
    outs += [ShapedArray(x.shape, c)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    return outs


_eig_run = _xla_impl(eig_p)


@checked_impl(eig_p)
def _eig_impl(x: NpArray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
                        enable_eigvec_derivs: bool, implementation: EigImplementation | None) -> list[NpArray]:
    return _eig_run(x, compute_left_eigenvectors=compute_left_eigenvectors,
                    compute_right_eigenvectors=compute_right_eigenvectors,
                    enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)


def _solve(a: Array, b: Array) -> Array:
    """``a^-1 b`` through LU (``a``: ``[..., n, n]``, ``b``: ``[..., n, k]``)."""
    lu_, _, perm = lu(a)
    return _lu_solve(lu_, perm, b, adjoint=False)


def _eig_vec_jvp(w: Array, v: Array, da: Array) -> tuple[Array, Array]:
    """Nondegenerate perturbation theory for eigenvectors normalized as LAPACK's ``geev`` does
    (unit 2-norm, real largest-magnitude component); JAX's rule."""
    shape = _shape(v)
    nb = len(shape) - 2
    dt = get_aval(v).dtype
    eye_n = _eye(dt, shape)
    w_cols = broadcast_in_dim(w, shape, (*range(nb), nb + 1))
    w_rows = broadcast_in_dim(w, shape, tuple(range(nb + 1)))
    fmat = sub(div(_const(1, eye_n), add(eye_n, sub(w_cols, w_rows))), eye_n)
    P = _mm(_solve(v, da), v)
    dw = _diag(P)
    U = _mm(v, mul(fmat, P))
    k = argmax(abs_(v), nb, np.int32)
    mask = convert_element_type(eq(broadcasted_iota(np.int32, shape, nb), broadcast_in_dim(k, shape, (*range(nb), nb + 1))), dt)
    c = complex_(neg(real(reduce_sum(mul(conj(v), U), (nb,)))),
                 div(neg(imag(reduce_sum(mul(mask, U), (nb,)))), real(reduce_sum(mul(mask, v), (nb,)))))
    return dw, add(U, mul(v, broadcast_in_dim(c, shape, (*range(nb), nb + 1))))


@jvp_rules.register(eig_p)
def _eig_jvp(primals: list[Array], tangents: list[Array], *, compute_left_eigenvectors: bool,
             compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
             implementation: EigImplementation | None) -> tuple[list[Array], list[Array]]:
    (a,), (da,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the input that JAX "
            "cannot check (see the enable_eigvec_derivs argument to jax.lax.linalg.eig). Pass "
            "enable_eigvec_derivs=True to jax.lax.linalg.eig to opt in. See "
            "https://github.com/jax-ml/jax/issues/2748 for discussion.")
    outs = eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors, compute_right_eigenvectors=True,
                      enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    w, vr = outs[0], outs[-1]
    da_c = convert_element_type(da, get_aval(vr).dtype)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        nd = len(_shape(vr))
        return [w], [reduce_sum(mul(_solve(vr, da_c), _T(vr)), (nd - 1,))]
    dw, dvr = _eig_vec_jvp(w, vr, da_c)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vec_jvp(conj(w), outs[1], _H(da_c))
        primal_out.append(outs[1])
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


_batch_to_front(eig_p)


@lowering_rules.register(eig_p)
def _eig_lowering(ctx: LoweringRuleContext, x: str, *, compute_left_eigenvectors: bool,
                  compute_right_eigenvectors: bool,
                        enable_eigvec_derivs: bool, implementation: EigImplementation | None) -> list[str]:
    aval = ctx.avals_in[0]
    if not _on_cpu():
        raise NotImplementedError("eig is only implemented on CPU (as in JAX's default backend)")
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    c = _complex_dtype(aval.dtype)
    batch = aval.shape[:-2]
    n = aval.shape[-1]
    info = ShapedArray(batch, dtypes.to_dtype(np.int32))
    vec = ShapedArray(aval.shape, c)
    config = {"compute_left": ord("V" if compute_left_eigenvectors else "N"),
              "compute_right": ord("V" if compute_right_eigenvectors else "N")}
    real_input = not dtypes.is_complex(aval.dtype)
    if real_input:
        wpart = ShapedArray((*batch, n), aval.dtype)
        wr, wi, vl, vr, code = lapack.custom_call(ctx, lapack.target("geev_ffi", aval.dtype), [x], [aval],
                                                  [wpart, wpart, vec, vec, info], config)
        ins, in_avals = [wr, wi, vl, vr, code], [wpart, wpart, vec, vec, info]
    else:
        w_aval = ShapedArray((*batch, n), c)
        w, vl, vr, code = lapack.custom_call(ctx, lapack.target("geev_ffi", aval.dtype), [x], [aval],
                                             [w_aval, vec, vec, info], config)
        ins, in_avals = [w, vl, vr, code], [w_aval, vec, vec, info]

    def post(*vals: Array) -> list[Array]:
        if real_input:
            wr_, wi_, vl_, vr_, code_ = vals
            w_ = add(convert_element_type(wr_, c), mul(full(_shape(wi_), 1j, c), convert_element_type(wi_, c)))
        else:
            w_, vl_, vr_, code_ = vals
        outs = [w_]
        if compute_left_eigenvectors:
            outs.append(vl_)
        if compute_right_eigenvectors:
            outs.append(vr_)
        return _nan_where_failed(code_, False, *outs)

    return _inline(ctx, post, ins, in_avals, "eig_post")


def eig(x: ArrayLike, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None) -> list[Array]:
    """Eigendecomposition of general square matrices (``lax.linalg.eig``, CPU): ``[w, vl, vr]``
    (the eigenvector arrays only when requested), all complex."""
    if implementation and implementation != EigImplementation.LAPACK and _on_cpu():
        raise ValueError("Only the lapack implementation is supported on CPU.")
    out: list[Array] = eig_p.bind(_as_array(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                                  compute_right_eigenvectors=bool(compute_right_eigenvectors),
                                  enable_eigvec_derivs=bool(enable_eigvec_derivs), implementation=implementation)
    return list(out)


# -- schur[compute_schur_vectors, select_callable, sort_eig_vals] (CPU) ----------------------------
@attrs.frozen(kw_only=True)
class SchurParams:
    """``schur[compute_schur_vectors, select_callable, sort_eig_vals]``: whether the Schur vectors
    ``Q`` are computed besides ``T``; sorting is not implemented (as in JAX)."""

    compute_schur_vectors: bool
    select_callable: None
    sort_eig_vals: bool


schur_p = Primitive("schur", multiple_results=True, params=SchurParams)


@schur_p.def_abstract_eval
def _schur_abstract_eval(x: ShapedArray, *, compute_schur_vectors: bool, select_callable: None,
                        sort_eig_vals: bool) -> list[ShapedArray]:
    _check_matrix("schur", x)
    return [ShapedArray(x.shape, x.dtype)] * (2 if compute_schur_vectors else 1)


_schur_run = _xla_impl(schur_p)


@checked_impl(schur_p)
def _schur_impl(x: NpArray, *, compute_schur_vectors: bool, select_callable: None,
                        sort_eig_vals: bool) -> list[NpArray]:
    return _schur_run(x, compute_schur_vectors=compute_schur_vectors, select_callable=select_callable,
                      sort_eig_vals=sort_eig_vals)


_batch_to_front(schur_p)


@lowering_rules.register(schur_p)
def _schur_lowering(ctx: LoweringRuleContext, x: str, *, compute_schur_vectors: bool, select_callable: None,
                        sort_eig_vals: bool) -> list[str]:
    aval = ctx.avals_in[0]
    if not _on_cpu():
        raise NotImplementedError("schur is only implemented on CPU (as in JAX)")
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    info = ShapedArray(aval.shape[:-2], dtypes.to_dtype(np.int32))
    eigvals = ShapedArray(aval.shape[:-1], aval.dtype)
    outs = [aval, aval, eigvals] + ([eigvals] if not dtypes.is_complex(aval.dtype) else []) + [info, info]
    res = lapack.custom_call(ctx, lapack.target("gees_ffi", aval.dtype), [x], [aval], outs,
                             {"mode": ord("V" if compute_schur_vectors else "N"), "sort": ord("N")}, {0: 0})
    t, q, code = res[0], res[1], res[-1]
    if compute_schur_vectors:
        return _inline(ctx, lambda a, b, i: _nan_where_failed(i, False, a, b), [t, q, code], [aval, aval, info],
                       "schur_nan")
    return _inline(ctx, lambda a, i: _nan_where_failed(i, False, a), [t, code], [aval, info], "schur_nan")


def schur(x: ArrayLike, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> Any:
    """Schur decomposition ``x = Q T Q^H`` (``lax.linalg.schur``, CPU): ``(T, Q)``, or ``T`` alone."""
    if select_callable is not None:
        raise NotImplementedError("fcore: schur(select_callable=...) is not implemented")
    out = schur_p.bind(_as_array(x), compute_schur_vectors=bool(compute_schur_vectors), select_callable=None,
                       sort_eig_vals=bool(sort_eig_vals))
    return (out[0], out[1]) if compute_schur_vectors else out[0]


# -- hessenberg and tridiagonal: reductions for eigensolvers (CPU) ---------------------------------
@attrs.frozen(kw_only=True)
class HessenbergParams:
    """``hessenberg``: no parameters."""


hessenberg_p = Primitive("hessenberg", multiple_results=True, params=HessenbergParams)


@hessenberg_p.def_abstract_eval
def _hessenberg_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    _check_matrix("hessenberg", x, square=False)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], got shape {x.shape}")
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*x.shape[:-2], x.shape[-1] - 1), x.dtype)]


_hessenberg_run = _xla_impl(hessenberg_p)


@checked_impl(hessenberg_p)
def _hessenberg_impl(x: NpArray) -> list[NpArray]:
    return _hessenberg_run(x)


_batch_to_front(hessenberg_p)


@lowering_rules.register(hessenberg_p)
def _hessenberg_lowering(ctx: LoweringRuleContext, x: str) -> list[str]:
    aval = ctx.avals_in[0]
    if not _on_cpu():
        raise NotImplementedError("hessenberg is only implemented on CPU (as in JAX)")
    info = ShapedArray(aval.shape[:-2], dtypes.to_dtype(np.int32))
    a, taus, code = lapack.custom_call(ctx, lapack.target("gehrd_ffi", aval.dtype), [x], [aval],
                                       [*ctx.avals_out, info], {"low": "1 : i32", "high": f"{aval.shape[-1]} : i32"},
                                       {0: 0})
    return _inline(ctx, lambda u, t, i: _nan_where_failed(i, False, u, t), [a, taus, code], [*ctx.avals_out, info],
                   "hessenberg_nan")


def hessenberg(a: ArrayLike) -> tuple[Array, Array]:
    """Reduction to upper Hessenberg form (``lax.linalg.hessenberg``, CPU): ``(a, taus)``, the
    Hessenberg matrix in the upper part of ``a`` and the reflectors below it and in ``taus``."""
    out, taus = hessenberg_p.bind(_as_array(a))
    return out, taus


@attrs.frozen(kw_only=True)
class TridiagonalParams:
    """``tridiagonal[lower]``: which triangle of the Hermitian operand is read."""

    lower: bool


tridiagonal_p = Primitive("tridiagonal", multiple_results=True, params=TridiagonalParams)


@tridiagonal_p.def_abstract_eval
def _tridiagonal_abstract_eval(x: ShapedArray, *, lower: bool) -> list[ShapedArray]:
    _check_matrix("tridiagonal", x, square=False)
    n = x.shape[-1]
    if x.shape[-2] != n or n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {x.shape[-2:]}.")
    batch = x.shape[:-2]
    real_dt = _real_dtype(x.dtype)
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, n), real_dt), ShapedArray((*batch, n - 1), real_dt),
            ShapedArray((*batch, n - 1), x.dtype)]


_tridiagonal_run = _xla_impl(tridiagonal_p)


@checked_impl(tridiagonal_p)
def _tridiagonal_impl(x: NpArray, *, lower: bool) -> list[NpArray]:
    return _tridiagonal_run(x, lower=lower)


_batch_to_front(tridiagonal_p)


@lowering_rules.register(tridiagonal_p)
def _tridiagonal_lowering(ctx: LoweringRuleContext, x: str, *, lower: bool) -> list[str]:
    aval = ctx.avals_in[0]
    if not _on_cpu():
        raise NotImplementedError("fcore: tridiagonal is only implemented on CPU")
    info = ShapedArray(aval.shape[:-2], dtypes.to_dtype(np.int32))
    name = "hetrd_ffi" if dtypes.is_complex(aval.dtype) else "sytrd_ffi"
    *outs, code = lapack.custom_call(ctx, lapack.target(name, aval.dtype), [x], [aval], [*ctx.avals_out, info],
                                     {"uplo": ord("L" if lower else "U")}, {0: 0})
    return _inline(ctx, lambda a, d, e, t, i: _nan_where_failed(i, False, a, d, e, t), [*outs, code],
                   [*ctx.avals_out, info], "tridiagonal_nan")


def tridiagonal(a: ArrayLike, *, lower: bool = True) -> tuple[Array, Array, Array, Array]:
    """Reduction of a Hermitian matrix to tridiagonal form (``lax.linalg.tridiagonal``):
    ``(a, d, e, taus)``: reflectors in ``a`` and ``taus``, diagonal ``d``, off-diagonal ``e``."""
    arr, d, e, taus = tridiagonal_p.bind(_as_array(a), lower=bool(lower))
    return arr, d, e, taus


def symmetric_product(a_matrix: ArrayLike, c_matrix: ArrayLike, *, alpha: float = 1.0,
                      beta: float = 0.0) -> Array:
    """``alpha * a @ a^T + beta * c`` (``lax.linalg.symmetric_product``; JAX's CPU computation)."""
    a, c = _as_array(a_matrix), _as_array(c_matrix)
    for pos, v in enumerate((a, c)):
        if not dtypes.is_floating(v.dtype):
            raise TypeError(f"symmetric_product does not accept dtype {dtypes.dtype_name(v.dtype)} at position {pos}. "
                            f"Accepted dtypes at position {pos} are subtypes of floating.")
    prod = batch_matmul(a, _T(a))
    return add(mul(prod, const(prod, alpha)), mul(c, const(c, beta)))


# -- tridiagonal_solve[perturb_singular] -----------------------------------------------------------
@attrs.frozen(kw_only=True)
class TridiagonalSolveParams:
    """``tridiagonal_solve[perturb_singular]``: whether tiny pivots are perturbed (so numerically
    singular systems still solve, as inverse iteration needs)."""

    perturb_singular: bool


tridiagonal_solve_p = Primitive("tridiagonal_solve", params=TridiagonalSolveParams)


@tridiagonal_solve_p.def_abstract_eval
def _tridiagonal_solve_abstract_eval(dl: ShapedArray, d: ShapedArray, du: ShapedArray, b: ShapedArray, *,
                                     perturb_singular: bool) -> ShapedArray:
    for v in (dl, d, du, b):
        if not (dtypes.is_floating(v.dtype) or dtypes.is_complex(v.dtype)):
            raise TypeError(f"tridiagonal_solve requires floating point or complex operands, got {v.str_short()}")
    if not (dl.dtype == d.dtype == du.dtype == b.dtype):
        raise TypeError("tridiagonal_solve requires operands of one dtype, got "
                        + ", ".join(v.str_short() for v in (dl, d, du, b)))
    if dl.shape != d.shape or dl.shape != du.shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same shape.")
    if len(b.shape) < 2 or dl.shape != b.shape[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the dimensions of "
                        "the diagonal arguments.")
    return ShapedArray(b.shape, b.dtype)


_tridiagonal_solve_run = _xla_impl(tridiagonal_solve_p)


@checked_impl(tridiagonal_solve_p)
def _tridiagonal_solve_impl(dl: NpArray, d: NpArray, du: NpArray, b: NpArray, *, perturb_singular: bool) -> NpArray:
    return _tridiagonal_solve_run(dl, d, du, b, perturb_singular=perturb_singular)[0]


def _tridiagonal_product(dl: Array, d: Array, du: Array, b: Array) -> Array:
    """``A b`` for the tridiagonal ``A`` with diagonals ``dl``, ``d``, ``du``."""
    shape = _shape(b)
    nb = len(shape) - 2
    m = shape[-2]
    col = tuple(range(nb + 1))
    y = mul(broadcast_in_dim(d, shape, col), b)
    if m < 2:
        return y
    zero = np.zeros((), get_aval(b).dtype)
    lower = mul(broadcast_in_dim(_rows(dl, 1, m, -1), (*shape[:-2], m - 1, shape[-1]), col), _rows(b, 0, m - 1, -2))
    upper = mul(broadcast_in_dim(_rows(du, 0, m - 1, -1), (*shape[:-2], m - 1, shape[-1]), col), _rows(b, 1, m, -2))
    cfg_lo = [(0, 0, 0)] * nb + [(1, 0, 0), (0, 0, 0)]
    cfg_hi = [(0, 0, 0)] * nb + [(0, 1, 0), (0, 0, 0)]
    return add(add(y, pad(lower, zero, cfg_lo)), pad(upper, zero, cfg_hi))


@jvp_rules.register(tridiagonal_solve_p, symbolic_zeros=True)
def _tridiagonal_solve_jvp(primals: list[Array], tangents: list[Tangent], *,
                           perturb_singular: bool) -> tuple[Array, Tangent]:
    """The derivative of a linear solve: ``dx = A^-1 (db - dA x)``."""
    dl, d, du, _ = primals
    *diags_dot, b_dot = tangents
    ans: Array = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(isinstance(t, Zero) for t in diags_dot):
        if isinstance(b_dot, Zero):
            return ans, Zero(get_aval(ans))
        rhs = b_dot
    else:
        dots = [full(_shape(dl), 0, get_aval(dl).dtype) if isinstance(t, Zero) else t for t in diags_dot]
        matvec_dot = _tridiagonal_product(dots[0], dots[1], dots[2], ans)
        rhs = neg(matvec_dot) if isinstance(b_dot, Zero) else sub(b_dot, matvec_dot)
    out: Array = tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)
    return ans, out


@transpose_rules.register(tridiagonal_solve_p)
def _tridiagonal_solve_transpose(ct: Any, dl: Array, d: Array, du: Array, b: UndefinedPrimal, *,
                                 perturb_singular: bool) -> list[Any]:
    """Linear in ``b``: solve with the transposed matrix (``du`` shifted down, ``dl`` up)."""
    if isinstance(ct, Zero):
        return [None, None, None, Zero(b.aval)]
    m = _shape(d)[-1]
    last = len(_shape(d)) - 1
    zero_col = full((*_shape(d)[:-1], 1), 0, get_aval(d).dtype)
    dl_t = concatenate([zero_col, _rows(du, 0, m - 1, -1)], last)
    du_t = concatenate([_rows(dl, 1, m, -1), zero_col], last)
    return [None, None, None, tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


@batching_rules.register(tridiagonal_solve_p)
def _tridiagonal_solve_batching(axis_size: int, vals: list[Array], dims: list[Dim], *,
                                perturb_singular: bool) -> tuple[Array, Dim]:
    dl, d, du, b = vals
    bdl, bd, bdu, bb = dims
    if bdl is None and bd is None and bdu is None:
        assert bb is not None
        y = moveaxis(b, bb, len(_shape(b)) - 2)
        out_flat: Array = tridiagonal_solve_p.bind(dl, d, du, _merge_rows_last(y), perturb_singular=perturb_singular)
        return _reshape(out_flat, _shape(y)), len(_shape(y)) - 2

    def front(v: Array, dim: Dim) -> Array:
        if dim is None:
            return broadcast_in_dim(v, (axis_size, *_shape(v)), tuple(range(1, len(_shape(v)) + 1)))
        moved: Array = moveaxis(v, dim, 0)
        return moved

    out: Array = tridiagonal_solve_p.bind(front(dl, bdl), front(d, bd), front(du, bdu), front(b, bb),
                                          perturb_singular=perturb_singular)
    return out, 0


def _merge_rows_last(y: Array) -> Array:
    """``(..., m, B, n) -> (..., m, B * n)``."""
    s = _shape(y)
    return _reshape(y, (*s[:-2], s[-2] * s[-1]))


def _thomas(dl: Array, d: Array, du: Array, b: Array) -> list[Array]:
    """Thomas's algorithm without pivoting in lax operations (JAX's lowering off the CPU)."""
    nb = len(_shape(d)) - 1
    dlt, dt_, dut = (moveaxis(v, nb, 0) for v in (dl, d, du))
    bt = moveaxis(b, nb, 0)

    def fwd(carry: tuple[Array, Array], xs: tuple[Array, Array, Array, Array]) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
        cp_prev, dp_prev = carry
        a_i, b_i, c_i, r_i = xs
        denom = sub(b_i, mul(a_i, cp_prev))
        cp = div(c_i, denom)
        bshape = _shape(r_i)
        lead = tuple(range(len(bshape) - 1))
        dp = div(sub(r_i, mul(broadcast_in_dim(a_i, bshape, lead), dp_prev)), broadcast_in_dim(denom, bshape, lead))
        return (cp, dp), (cp, dp)

    zero_c = full(_shape(dt_)[1:], 0, get_aval(dt_).dtype)
    zero_d = full(_shape(bt)[1:], 0, get_aval(bt).dtype)
    _, (cps, dps) = scan(fwd, (zero_c, zero_d), (dlt, dt_, dut, bt))

    def bwd(x_next: Array, xs: tuple[Array, Array]) -> tuple[Array, Array]:
        cp, dp = xs
        bshape = _shape(dp)
        x = sub(dp, mul(broadcast_in_dim(cp, bshape, tuple(range(len(bshape) - 1))), x_next))
        return x, x

    _, xs = scan(bwd, zero_d, (cps, dps), reverse=True)
    return [moveaxis(xs, 0, nb)]


@lowering_rules.register(tridiagonal_solve_p)
def _tridiagonal_solve_lowering(ctx: LoweringRuleContext, dl: str, d: str, du: str, b: str, *,
                                perturb_singular: bool) -> str:
    avals = ctx.avals_in
    b_aval = avals[-1]
    if not (_on_cpu() and lapack.supports(b_aval.dtype)):
        if perturb_singular:
            raise NotImplementedError("perturb_singular=True is not supported on this platform.")
        return _inline(ctx, _thomas, [dl, d, du, b], avals, "tridiagonal_solve")[0]
    if perturb_singular:
        lapack.target("gtsv_ffi", b_aval.dtype)  # registers the handlers
        return lapack.custom_call(ctx, "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], avals, [b_aval])[0]
    info = ShapedArray(b_aval.shape[:-2], dtypes.to_dtype(np.int32))
    *_, out, code = lapack.custom_call(ctx, lapack.target("gtsv_ffi", b_aval.dtype), [dl, d, du, b], avals,
                                       [*avals, info], {}, {0: 0, 1: 1, 2: 2, 3: 3})
    return _inline(ctx, lambda x, i: _nan_where_failed(i, False, x), [out, code], [b_aval, info], "gtsv_nan")[0]


def tridiagonal_solve(dl: ArrayLike, d: ArrayLike, du: ArrayLike, b: ArrayLike, *,
                      perturb_singular: bool = False) -> Array:
    """Solve the tridiagonal systems ``A x = b`` (``lax.linalg.tridiagonal_solve``): ``dl``, ``d``,
    ``du`` are ``[..., m]`` diagonals (``dl[..., 0]`` and ``du[..., -1]`` unused), ``b`` is
    ``[..., m, n]`` (LAPACK's ``gtsv``, partial pivoting, on the CPU)."""
    out: Array = tridiagonal_solve_p.bind(*(_as_array(v) for v in (dl, d, du, b)),
                                          perturb_singular=bool(perturb_singular))
    return out

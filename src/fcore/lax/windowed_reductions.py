"""Windowed reductions: ``reduce_window`` and the primitives behind pooling, with JAX's rules.

``reduce_window_sum/max/min`` reduce each window of a (base-dilated, padded) operand with a
monoid; ``reduce_window`` takes any reducer, staged as a jaxpr (several operands reduce
together, as in XLA's variadic ReduceWindow). The gradients are JAX's: the sum's transpose is a
padded, strided ``reduce_window_sum`` of the cotangent; max/min differentiate through
``select_and_gather_add`` (the tangent at each window's extremum), whose transpose is
``select_and_scatter_add`` (the cotangent added back at that position).

The eager impls view every window at once with ``as_strided`` and reduce over the window axes;
the generic reducer is applied once per window offset (a loop over the window, never over the
output) on whole arrays, vectorised with ``vmap``. Ties pick the first element of a window in
row-major order, as XLA's CPU backend does.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore import tree_util
from fcore.backend.lowering import LoweringRuleContext, dense_attr, lowering_rules, tensor_type
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import get_aval
from fcore.interpreters.eval_jaxpr import jaxpr_as_fun
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.core import ClosedJaxpr
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.lax._base import NpArray, checked_impl, dtype_of, is_python_scalar, shape_of, weak_scalar
from fcore.lax._primitive import Primitive
from fcore.lax._region import RegionBody, compare_type
from fcore.lax._rule_helpers import Shape, bind, hlo_ints, index_tuple
from fcore.lax.convolution import padtype_to_pads
from fcore.lax.elementwise import add
from fcore.lax.elementwise import max as lax_max
from fcore.lax.elementwise import min as lax_min
from fcore.lax.shapes import pad
from fcore.lax.slicing import slice as lax_slice
from fcore.transforms.ad_util import Tangent, UndefinedPrimal, Zero, instantiate
from fcore.transforms.batching import Dim, batching_rules, bdim_at
from fcore.transforms.jvp import deflinear, defjvp, jvp_rules
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "reduce_window_p", "reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
    "select_and_gather_add_p", "select_and_scatter_add_p", "reduce_window", "reduce_window_shape_tuple",
]

Padding: TypeAlias = tuple[tuple[int, int], ...]
PaddingLike: TypeAlias = Union[str, Sequence[tuple[int, int]]]


# -- helpers shared by the blocks: shapes, identities, windows -----------------------------------
def _dilate_dim(d: int, dilation: int) -> int:
    return d if dilation == 1 else max(1 + dilation * (d - 1), 0)


def reduce_window_shape_tuple(
    operand_shape: Sequence[int], window_dimensions: Sequence[int], window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]], base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Shape:
    """The result shape of a windowed reduction (``lax.reduce_window_shape_tuple``)."""
    shape = list(operand_shape)
    window = list(window_dimensions)
    if base_dilation is not None:
        shape = [_dilate_dim(d, b) for d, b in zip(shape, base_dilation)]
    if window_dilation is not None:
        window = [_dilate_dim(w, r) for w, r in zip(window, window_dilation)]
    padded = [d + lo + hi for d, (lo, hi) in zip(shape, padding)]
    return tuple(max((p - w) // s + 1, 0) for p, w, s in zip(padded, window, window_strides))


def _check_shapelike(fun: str, arg: str, xs: Shape, positive: bool) -> None:
    bound, words = (1, "strictly positive") if positive else (0, "nonnegative")
    if not all(d >= bound for d in xs):
        raise TypeError(f"{fun} {arg} must have every element be {words}, got {xs}.")


def _window_shape(
    name: str, operand: ShapedArray, window_dimensions: Shape, window_strides: Shape, padding: Padding,
    base_dilation: Shape, window_dilation: Shape,
) -> Shape:
    """JAX's ``_common_reduce_window_shape_rule``: validate the window, give the result shape."""
    _check_shapelike(name, "window_dimensions", window_dimensions, True)
    _check_shapelike(name, "window_strides", window_strides, True)
    _check_shapelike(name, "base_dilation", base_dilation, True)
    _check_shapelike(name, "window_dilation", window_dilation, True)
    if operand.ndim != len(window_dimensions):
        raise TypeError(
            f"{name} got the wrong number of window_dimensions for operand: got operand shape {operand.shape} "
            f"with window_dimensions {window_dimensions}."
        )
    for arg, value in (("window_strides", window_strides), ("base_dilation", base_dilation),
                       ("window_dilation", window_dilation), ("padding", padding)):
        if len(value) != len(window_dimensions):
            raise TypeError(
                f"{name} got inconsistent {arg} and window_dimensions: got {arg} {value} and window_dimensions "
                f"{window_dimensions}."
            )
    return reduce_window_shape_tuple(
        operand.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )


def _max_identity(dt: DType) -> NpArray:
    if dtypes.is_inexact(dt):
        return np.array(-np.inf, dt)
    return np.array(False) if dtypes.is_bool(dt) else np.array(np.iinfo(dt).min, dt)


def _min_identity(dt: DType) -> NpArray:
    if dtypes.is_inexact(dt):
        return np.array(np.inf, dt)
    return np.array(True) if dtypes.is_bool(dt) else np.array(np.iinfo(dt).max, dt)


def _padded(x: NpArray, fill: NpArray, padding: Padding, base_dilation: Shape) -> NpArray:
    """``x`` base-dilated and padded (negative pads crop), holes and pads holding ``fill``."""
    if any(b != 1 for b in base_dilation):
        dilated = np.full(tuple(map(_dilate_dim, x.shape, base_dilation)), fill, x.dtype)
        dilated[tuple(slice(None, None, b) for b in base_dilation)] = x
        x = dilated
    if any(lo or hi for lo, hi in padding):
        x = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in padding], constant_values=fill)
        x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape, padding))]
    return x


def _windows(x: NpArray, window_dimensions: Shape, window_strides: Shape, window_dilation: Shape) -> NpArray:
    """A ``(*out_shape, *window_dimensions)`` read-only view of every window of ``x``."""
    out = tuple(
        max((n - _dilate_dim(w, r)) // s + 1, 0)
        for n, w, s, r in zip(x.shape, window_dimensions, window_strides, window_dilation)
    )
    strides = (*(s * t for s, t in zip(window_strides, x.strides)), *(r * t for r, t in zip(window_dilation, x.strides)))
    return np.lib.stride_tricks.as_strided(x, (*out, *window_dimensions), strides, writeable=False)


def _window_axes(ndim: int) -> Shape:
    return tuple(range(ndim, 2 * ndim))


def _first_extremum(view: NpArray, ndim: int, select: str) -> NpArray:
    """The flat in-window index of each window's first maximum (``ge``) or minimum (``le``)."""
    flat = view.reshape(*view.shape[:ndim], -1)
    return np.asarray(np.argmax(flat, axis=-1) if select == "ge" else np.argmin(flat, axis=-1))


def _window_attributes(
    window_dimensions: Shape, window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> str:
    nd = len(window_dimensions)
    pads = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in padding) + "]" if nd else "0"

    def arr(xs: Shape) -> str:
        return f"array<i64: {', '.join(map(str, xs))}>" if xs else "array<i64>"

    return (
        f"base_dilations = {arr(base_dilation)}, padding = dense<{pads}> : tensor<{nd}x2xi64>, "
        f"window_dilations = {arr(window_dilation)}, window_dimensions = {arr(window_dimensions)}, "
        f"window_strides = {arr(window_strides)}"
    )


def _crop_negative_padding(shape: Shape, padding: Padding, base_dilation: Shape) -> tuple[Padding, Padding]:
    """``(crops, padding)``: how many operand elements to cut off each end, and the non-negative
    padding that then gives the same windows. Padding and base-dilation holes are skipped by XLA's
    reduce_window (not reduced as init values), so a cut that ends inside a hole becomes padding."""
    crops, pads = [], []
    for d, b, (lo, hi) in zip(shape, base_dilation, padding):
        c_lo, c_hi = (-lo + b - 1) // b if lo < 0 else 0, (-hi + b - 1) // b if hi < 0 else 0
        p_lo, p_hi = c_lo * b + lo if lo < 0 else lo, c_hi * b + hi if hi < 0 else hi
        if c_lo + c_hi >= d:  # nothing of the operand is left: only (skipped) padding
            crops.append((d, 0))
            pads.append((0, max(_dilate_dim(d, b) + lo + hi, 0)))
        else:
            crops.append((c_lo, c_hi))
            pads.append((p_lo, p_hi))
    return tuple(crops), tuple(pads)


def _emit_reduce_window(
    ctx: LoweringRuleContext, operands: Sequence[str], inits: Sequence[str], body: RegionBody,
    block_args: Sequence[str], region: str, *, window_dimensions: Shape, window_strides: Shape, padding: Padding,
    base_dilation: Shape, window_dilation: Shape,
) -> list[str]:
    """A (variadic) ``stablehlo.reduce_window`` with the given one-block reducer region.

    Negative padding is taken off first by cropping the operands (``_crop_negative_padding``): XLA's
    algebraic simplifier aborts the process on some reduce windows with negative padding (a
    one-element window over ``f32[2]`` with padding ``(-1, 0)``)."""
    n = len(operands)
    avals = list(ctx.avals_in[:n])
    elems = [ShapedArray((), a.dtype) for a in avals]
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        crops, padding = _crop_negative_padding(avals[0].shape, padding, base_dilation)
        config = (
            f", low = {hlo_ints([-lo for lo, _ in crops])}, high = {hlo_ints([-hi for _, hi in crops])}, "
            f"interior = {hlo_ints([0] * len(crops))}"
        )
        cropped = [a.update(shape=tuple(d - lo - hi for d, (lo, hi) in zip(a.shape, crops))) for a in avals]
        operands = [
            ctx.op_typed("stablehlo.pad", [x, init], [a, e], c, config)
            for x, init, a, e, c in zip(operands, inits, avals, elems, cropped)
        ]
        avals = cropped
    attributes = _window_attributes(window_dimensions, window_strides, padding, base_dilation, window_dilation)
    args = ", ".join(f"{a}: {tensor_type(e)}" for a, e in zip(block_args, elems + elems))
    ins = ", ".join(tensor_type(a) for a in [*avals, *elems])
    outs = ", ".join(tensor_type(a) for a in ctx.avals_out)
    name = ctx.emit(
        f'"stablehlo.reduce_window"({", ".join([*operands, *inits])}) <{{{attributes}}}> ({{\n'
        f"    ^bb0({args}):\n{region}\n    }}) : ({ins}) -> ({outs})",
        n_results=n,
    )
    return [name] if n == 1 else [f"{name}#{i}" for i in range(n)]


def _monoid_lowering(op: str, identity: Callable[[DType], object]) -> Callable[..., str]:
    def rule(
        ctx: LoweringRuleContext, x: str, *, window_dimensions: Shape, window_strides: Shape, padding: Padding,
        base_dilation: Shape, window_dilation: Shape,
    ) -> str:
        dt = ctx.avals_in[0].dtype
        elem = ShapedArray((), dt)
        init = ctx.constant(identity(dt), dt)
        body = RegionBody(ctx)
        a, b = body.name(), body.name()
        region = body.ret([body.op(op, [a, b], elem)], [elem])
        return _emit_reduce_window(
            ctx, [x], [init], body, [a, b], region, window_dimensions=window_dimensions, window_strides=window_strides,
            padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
        )[0]

    return rule


def _window_batching(prim: Primitive) -> Callable[..., tuple[Array, Dim]]:
    """The batch axis gets a window of one element."""

    def rule(
        axis_size: int, vals: list[Array], dims: list[Dim], *, window_dimensions: Shape, window_strides: Shape,
        padding: Padding, base_dilation: Shape, window_dilation: Shape,
    ) -> tuple[Array, Dim]:
        (x,), (d,) = vals, dims
        assert d is not None
        out = bind(
            prim, x, window_dimensions=window_dimensions[:d] + (1,) + window_dimensions[d:],
            window_strides=window_strides[:d] + (1,) + window_strides[d:], padding=padding[:d] + ((0, 0),) + padding[d:],
            base_dilation=base_dilation[:d] + (1,) + base_dilation[d:],
            window_dilation=window_dilation[:d] + (1,) + window_dilation[d:],
        )
        return out, d

    return rule


@attrs.frozen(kw_only=True)
class WindowParams:
    """``reduce_window_{sum,max,min}[...]``: window size, strides, explicit ``(low, high)``
    padding, base (operand) dilation and window dilation, one entry per operand axis."""

    window_dimensions: Shape
    window_strides: Shape
    padding: Padding
    base_dilation: Shape
    window_dilation: Shape


def _window_abstract_eval(name: str, numbers_only: bool) -> Callable[..., ShapedArray]:
    def rule(
        x: ShapedArray, *, window_dimensions: Shape, window_strides: Shape, padding: Padding, base_dilation: Shape,
        window_dilation: Shape,
    ) -> ShapedArray:
        if numbers_only and not (dtypes.is_integer(x.dtype) or dtypes.is_inexact(x.dtype)):
            raise TypeError(f"operand to {name} must have a number dtype, got {dtypes.dtype_name(x.dtype)}")
        shape = _window_shape(name, x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
        return shaped_array(shape, x.dtype, x.weak_type)

    return rule


def _window_impl(
    identity: Callable[[DType], NpArray], reduce: Callable[[NpArray, Shape], NpArray]
) -> Callable[..., NpArray]:
    def impl(
        x: NpArray, *, window_dimensions: Shape, window_strides: Shape, padding: Padding, base_dilation: Shape,
        window_dilation: Shape,
    ) -> NpArray:
        fill = identity(x.dtype)
        view = _windows(_padded(x, fill, padding, base_dilation), window_dimensions, window_strides, window_dilation)
        return np.asarray(reduce(view, _window_axes(x.ndim))).astype(x.dtype, copy=False)

    return impl


def _zero_identity(dt: DType) -> NpArray:
    return np.zeros((), dt)


# -- reduce_window_sum[window_dimensions, window_strides, padding, base_dilation, window_dilation] --
reduce_window_sum_p = Primitive("reduce_window_sum", params=WindowParams)
reduce_window_sum_p.def_abstract_eval(_window_abstract_eval("reduce_window_sum", numbers_only=True))
checked_impl(reduce_window_sum_p)(_window_impl(_zero_identity, lambda v, axes: np.sum(v, axis=axes, dtype=v.dtype)))
deflinear(reduce_window_sum_p)


@transpose_rules.register(reduce_window_sum_p)
def _reduce_window_sum_transpose(
    ct: Array, operand: UndefinedPrimal, *, window_dimensions: Shape, window_strides: Shape, padding: Padding,
    base_dilation: Shape, window_dilation: Shape,
) -> list[Array]:
    """JAX's rule: pad the cotangent (strides become interior padding) and sum its windows."""
    in_shape = operand.aval.shape
    ct_shape = get_aval(ct).shape
    config = []
    for n, w, s, c, (lo, _), b, r in zip(
        in_shape, window_dimensions, window_strides, ct_shape, padding, base_dilation, window_dilation
    ):
        wd, nd, cd = _dilate_dim(w, r), _dilate_dim(n, b), _dilate_dim(c, s)
        before = wd - lo - 1
        config.append((before, nd + wd - 1 - cd - before, s - 1))
    padded = pad(ct, np.zeros((), get_aval(ct).dtype), config)
    ones = (1,) * len(in_shape)
    out = bind(
        reduce_window_sum_p, padded, window_dimensions=window_dimensions, window_strides=base_dilation,
        padding=((0, 0),) * len(in_shape), base_dilation=ones, window_dilation=window_dilation,
    )
    return [out]


batching_rules.register(reduce_window_sum_p)(_window_batching(reduce_window_sum_p))
lowering_rules.register(reduce_window_sum_p)(_monoid_lowering("stablehlo.add", lambda dt: 0))


# -- reduce_window_max[...] ----------------------------------------------------------------------
reduce_window_max_p = Primitive("reduce_window_max", params=WindowParams)
reduce_window_max_p.def_abstract_eval(_window_abstract_eval("reduce_window_max", numbers_only=False))
checked_impl(reduce_window_max_p)(_window_impl(_max_identity, lambda v, axes: np.max(v, axis=axes)))


def _reduce_window_max_jvp(
    g: Array, operand: Array, *, window_dimensions: Shape, window_strides: Shape, padding: Padding,
    base_dilation: Shape, window_dilation: Shape,
) -> Array:
    return bind(
        select_and_gather_add_p, g, operand, select_prim="ge", window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
    )


defjvp(reduce_window_max_p, _reduce_window_max_jvp)
batching_rules.register(reduce_window_max_p)(_window_batching(reduce_window_max_p))
lowering_rules.register(reduce_window_max_p)(_monoid_lowering("stablehlo.maximum", _max_identity))


# -- reduce_window_min[...] ----------------------------------------------------------------------
reduce_window_min_p = Primitive("reduce_window_min", params=WindowParams)
reduce_window_min_p.def_abstract_eval(_window_abstract_eval("reduce_window_min", numbers_only=False))
checked_impl(reduce_window_min_p)(_window_impl(_min_identity, lambda v, axes: np.min(v, axis=axes)))


def _reduce_window_min_jvp(
    g: Array, operand: Array, *, window_dimensions: Shape, window_strides: Shape, padding: Padding,
    base_dilation: Shape, window_dilation: Shape,
) -> Array:
    return bind(
        select_and_gather_add_p, g, operand, select_prim="le", window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
    )


defjvp(reduce_window_min_p, _reduce_window_min_jvp)
batching_rules.register(reduce_window_min_p)(_window_batching(reduce_window_min_p))
lowering_rules.register(reduce_window_min_p)(_monoid_lowering("stablehlo.minimum", _min_identity))


# -- select_and_gather_add[select_prim, window_dimensions, window_strides, padding, base_dilation,
#    window_dilation]: the tangent at each window's maximum (ge) or minimum (le) -----------------------
@attrs.frozen(kw_only=True)
class SelectAndGatherAddParams:
    """``select_and_gather_add[...]``: ``select_prim`` is ``ge`` (max) or ``le`` (min); the window
    parameters are those of the ``reduce_window_max``/``min`` it differentiates."""

    select_prim: str
    window_dimensions: Shape
    window_strides: Shape
    padding: Padding
    base_dilation: Shape
    window_dilation: Shape


select_and_gather_add_p = Primitive("select_and_gather_add", params=SelectAndGatherAddParams)


def _check_select_prim(select_prim: str) -> None:
    if select_prim not in ("ge", "le"):
        raise TypeError(f"select_prim must be 'ge' or 'le', got {select_prim!r}")


@select_and_gather_add_p.def_abstract_eval
def _select_and_gather_add_abstract_eval(
    tangents: ShapedArray, operand: ShapedArray, *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> ShapedArray:
    _check_select_prim(select_prim)
    if tangents.shape != operand.shape:
        raise TypeError(
            f"select_and_gather_add tangents and operand shapes must match, got {tangents.shape} and {operand.shape}."
        )
    shape = _window_shape(
        "select_and_gather_add", operand, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    return shaped_array(shape, tangents.dtype, tangents.weak_type)


@checked_impl(select_and_gather_add_p)
def _select_and_gather_add_impl(
    tangents: NpArray, operand: NpArray, *, select_prim: str, window_dimensions: Shape, window_strides: Shape,
    padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> NpArray:
    fill = _max_identity(operand.dtype) if select_prim == "ge" else _min_identity(operand.dtype)
    x = _windows(_padded(operand, fill, padding, base_dilation), window_dimensions, window_strides, window_dilation)
    t = _windows(
        _padded(tangents, np.zeros((), tangents.dtype), padding, base_dilation), window_dimensions, window_strides,
        window_dilation,
    )
    nd = operand.ndim
    pick = _first_extremum(x, nd, select_prim)
    flat = t.reshape(*t.shape[:nd], -1)
    return np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]


@jvp_rules.register(select_and_gather_add_p, symbolic_zeros=True)
def _select_and_gather_add_jvp(
    primals: list[Array], tangents: list[Tangent], *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> tuple[Array, Tangent]:
    (source, operand), (g_source, _) = primals, tangents
    params: dict[str, ParamValue] = dict(
        select_prim=select_prim, window_dimensions=window_dimensions, window_strides=window_strides,
        padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
    )
    out = bind(select_and_gather_add_p, source, operand, **params)
    if type(g_source) is Zero:
        return out, Zero(get_aval(out).strip_weak_type())
    return out, bind(select_and_gather_add_p, instantiate(g_source), operand, **params)


@transpose_rules.register(select_and_gather_add_p)
def _select_and_gather_add_transpose(
    ct: Array, tangents: UndefinedPrimal, operand: Array, *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> list[Array | None]:
    """JAX's rule: scatter the cotangent back to each window's extremum (``select_and_scatter_add``)."""
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "VJP not implemented for select_and_gather (MaxPool) with window dilation, got "
            f"window_dilation={window_dilation}."
        )
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        fill = _max_identity if select_prim == "ge" else _min_identity
        dt = get_aval(operand).dtype
        operand = pad(operand, fill(dt), tuple((0, 0, d - 1) for d in base_dilation))
    result = bind(
        select_and_scatter_add_p, ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding,
    )
    if dilated:
        shape = get_aval(result).shape
        result = lax_slice(result, (0,) * len(shape), shape, base_dilation)
    return [result, None]


@batching_rules.register(select_and_gather_add_p)
def _select_and_gather_add_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> tuple[Array, Dim]:
    t, x = (bdim_at(v, d, axis_size, 0) for v, d in zip(vals, dims))
    out = bind(
        select_and_gather_add_p, t, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding), base_dilation=(1, *base_dilation),
        window_dilation=(1, *window_dilation),
    )
    return out, 0


@lowering_rules.register(select_and_gather_add_p)
def _select_and_gather_add_lowering(
    ctx: LoweringRuleContext, tangents: str, operand: str, *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> str:
    """A two-operand ``reduce_window`` over (operand, tangent) pairs keeping the extremum's pair."""
    t_aval, x_aval = ctx.avals_in
    elem_x, elem_t = ShapedArray((), x_aval.dtype), ShapedArray((), t_aval.dtype)
    fill = _max_identity(x_aval.dtype) if select_prim == "ge" else _min_identity(x_aval.dtype)
    inits = [ctx.constant(fill, x_aval.dtype), ctx.constant(0, t_aval.dtype)]
    body = RegionBody(ctx)
    kx, vx, ky, vy = (body.name() for _ in range(4))
    which = body.compare("GE" if select_prim == "ge" else "LE", kx, ky, elem_x)
    region = body.ret([body.select(which, kx, ky, elem_x), body.select(which, vx, vy, elem_t)], [elem_x, elem_t])
    out = ctx.avals_out[0]
    pair_ctx = LoweringRuleContext(ctx.module, ctx.fn, [x_aval, t_aval], [out.update(dtype=x_aval.dtype), out])
    return _emit_reduce_window(
        pair_ctx, [operand, tangents], inits, body, [kx, vx, ky, vy], region, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
    )[1]


# -- select_and_scatter_add[select_prim, window_dimensions, window_strides, padding] -------------
@attrs.frozen(kw_only=True)
class SelectAndScatterAddParams:
    """``select_and_scatter_add[...]``: ``select_prim`` (``ge``/``le``), window, strides, padding."""

    select_prim: str
    window_dimensions: Shape
    window_strides: Shape
    padding: Padding


select_and_scatter_add_p = Primitive("select_and_scatter_add", params=SelectAndScatterAddParams)


@select_and_scatter_add_p.def_abstract_eval
def _select_and_scatter_add_abstract_eval(
    source: ShapedArray, operand: ShapedArray, *, select_prim: str, window_dimensions: Shape, window_strides: Shape,
    padding: Padding,
) -> ShapedArray:
    _check_select_prim(select_prim)
    ones = (1,) * len(window_dimensions)
    shape = _window_shape("select_and_scatter_add", operand, window_dimensions, window_strides, padding, ones, ones)
    if source.shape != shape:
        raise TypeError(
            f"select_and_scatter_add source shape {source.shape} must be the windowed shape {shape} of the operand "
            f"{operand.str_short()}"
        )
    return shaped_array(operand.shape, source.dtype, source.weak_type)


@checked_impl(select_and_scatter_add_p)
def _select_and_scatter_add_impl(
    source: NpArray, operand: NpArray, *, select_prim: str, window_dimensions: Shape, window_strides: Shape,
    padding: Padding,
) -> NpArray:
    nd = operand.ndim
    ones = (1,) * nd
    fill = _max_identity(operand.dtype) if select_prim == "ge" else _min_identity(operand.dtype)
    padded = _padded(operand, fill, padding, ones)
    view = _windows(padded, window_dimensions, window_strides, ones)
    pick = _first_extremum(view, nd, select_prim)
    offsets: Sequence[NpArray] = np.unravel_index(pick, window_dimensions) if nd else ()
    grids: Sequence[NpArray] = np.indices(pick.shape, sparse=True) if nd else ()
    target = tuple(g * s + o for g, s, o in zip(grids, window_strides, offsets))
    out = np.zeros(padded.shape, source.dtype)
    np.add.at(out, target, source)
    # Undo the padding: low pads were prepended, negative pads cropped (those rows get zeros back).
    full = np.zeros(operand.shape, source.dtype)
    src = tuple(
        slice(max(lo, 0), max(lo, 0) + n - max(-lo, 0) - max(-hi, 0)) for n, (lo, hi) in zip(operand.shape, padding)
    )
    dst = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(operand.shape, padding))
    full[dst] = out[src]
    return full


@jvp_rules.register(select_and_scatter_add_p, symbolic_zeros=True)
def _select_and_scatter_add_jvp(
    primals: list[Array], tangents: list[Tangent], *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding,
) -> tuple[Array, Tangent]:
    (source, operand), (g_source, _) = primals, tangents
    params: dict[str, ParamValue] = dict(
        select_prim=select_prim, window_dimensions=window_dimensions, window_strides=window_strides, padding=padding
    )
    out = bind(select_and_scatter_add_p, source, operand, **params)
    if type(g_source) is Zero:
        return out, Zero(get_aval(out).strip_weak_type())
    return out, bind(select_and_scatter_add_p, instantiate(g_source), operand, **params)


@transpose_rules.register(select_and_scatter_add_p)
def _select_and_scatter_add_transpose(
    ct: Array, source: UndefinedPrimal, operand: Array, *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding,
) -> list[Array | None]:
    ones = (1,) * len(window_dimensions)
    out = bind(
        select_and_gather_add_p, ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=ones, window_dilation=ones,
    )
    return [out, None]


@batching_rules.register(select_and_scatter_add_p)
def _select_and_scatter_add_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding,
) -> tuple[Array, Dim]:
    s, x = (bdim_at(v, d, axis_size, 0) for v, d in zip(vals, dims))
    out = bind(
        select_and_scatter_add_p, s, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding),
    )
    return out, 0


@lowering_rules.register(select_and_scatter_add_p)
def _select_and_scatter_add_lowering(
    ctx: LoweringRuleContext, source: str, operand: str, *, select_prim: str, window_dimensions: Shape,
    window_strides: Shape, padding: Padding,
) -> str:
    """As JAX on CPU: pad the operand with the select identity, ``select_and_scatter`` with no
    padding, take the padding off again."""
    s_aval, x_aval = ctx.avals_in
    out = ctx.avals_out[0]
    fill = _max_identity(x_aval.dtype) if select_prim == "ge" else _min_identity(x_aval.dtype)
    padded_shape = tuple(n + lo + hi for n, (lo, hi) in zip(x_aval.shape, padding))
    padded_aval = x_aval.update(shape=padded_shape)
    x = operand
    if any(lo or hi for lo, hi in padding):
        lows, highs = [lo for lo, _ in padding], [hi for _, hi in padding]
        x = ctx.op_typed(
            "stablehlo.pad", [operand, ctx.constant(fill, x_aval.dtype)], [x_aval, ShapedArray((), x_aval.dtype)],
            padded_aval, f", low = {hlo_ints(lows)}, high = {hlo_ints(highs)}, interior = {hlo_ints([0] * len(lows))}",
        )
    zero = ctx.constant(0, s_aval.dtype)
    elem_x, elem_s = ShapedArray((), x_aval.dtype), ShapedArray((), s_aval.dtype)
    select = RegionBody(ctx)
    a, b = select.name(), select.name()
    chosen = select.compare("GE" if select_prim == "ge" else "LE", a, b, elem_x)
    select_region = select.ret([chosen], [ShapedArray((), dtypes.bool_)])
    scatter = RegionBody(ctx)
    c, d = scatter.name(), scatter.name()
    combine = "stablehlo.or" if dtypes.is_bool(s_aval.dtype) else "stablehlo.add"
    scatter_region = scatter.ret([scatter.op(combine, [c, d], elem_s)], [elem_s])
    nd = len(window_dimensions)
    scattered_aval = out.update(shape=padded_shape)
    attributes = (
        f"padding = dense<0> : tensor<{nd}x2xi64>, window_dimensions = array<i64: {', '.join(map(str, window_dimensions))}>, "
        f"window_strides = array<i64: {', '.join(map(str, window_strides))}>"
    )
    ex, es = tensor_type(elem_x), tensor_type(elem_s)
    result = ctx.emit(
        f'"stablehlo.select_and_scatter"({x}, {source}, {zero}) <{{{attributes}}}> ({{\n'
        f"    ^bb0({a}: {ex}, {b}: {ex}):\n{select_region}\n    }}, {{\n"
        f"    ^bb0({c}: {es}, {d}: {es}):\n{scatter_region}\n    }}) : "
        f"({tensor_type(padded_aval)}, {tensor_type(s_aval)}, {es}) -> {tensor_type(scattered_aval)}"
    )
    if not any(lo or hi for lo, hi in padding):
        return result
    # The opposite padding takes the pads off again (and gives cropped elements zeros).
    lows, highs = [-lo for lo, _ in padding], [-hi for _, hi in padding]
    return ctx.op_typed(
        "stablehlo.pad", [result, zero], [scattered_aval, elem_s], out,
        f", low = {hlo_ints(lows)}, high = {hlo_ints(highs)}, interior = {hlo_ints([0] * len(lows))}",
    )


# -- reduce_window[jaxpr, consts, window_dimensions, window_strides, padding, base_dilation,
#    window_dilation]: any reducer, over one or more operands ---------------------------------------
@attrs.frozen(kw_only=True)
class ReduceWindowParams:
    """``reduce_window[...]``: the reducer as a closed jaxpr (accumulators then values in,
    accumulators out), JAX's (always empty here) ``consts``, and the window parameters."""

    jaxpr: ClosedJaxpr
    consts: tuple[ParamValue, ...]
    window_dimensions: Shape
    window_strides: Shape
    padding: Padding
    base_dilation: Shape
    window_dilation: Shape


reduce_window_p = Primitive("reduce_window", multiple_results=True, params=ReduceWindowParams)


@reduce_window_p.def_abstract_eval
def _reduce_window_abstract_eval(
    *avals: ShapedArray, jaxpr: ClosedJaxpr, consts: tuple[ParamValue, ...], window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> list[ShapedArray]:
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    if not n or len(avals) % 2:
        raise TypeError(f"reduce_window takes operands and as many init_values, got {len(avals)} arguments")
    if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
        raise TypeError(
            "reduce_window got inconsistent dtypes for operands and init_values: got operand dtypes "
            f"{[dtypes.dtype_name(o.dtype) for o in operands]} and init_value dtypes "
            f"{[dtypes.dtype_name(i.dtype) for i in inits]}."
        )
    if any(i.shape for i in inits):
        raise TypeError(
            f"reduce_window expected init_values to be scalars but init_values have shapes {[i.shape for i in inits]}."
        )
    if any(o.shape != operands[0].shape for o in operands):
        raise TypeError(f"reduce_window operands must have equal shapes, got {[o.shape for o in operands]}")
    shape = _window_shape(
        "reduce_window", operands[0], window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    return [shaped_array(shape, o.dtype, o.weak_type) for o in operands]


@checked_impl(reduce_window_p)
def _reduce_window_impl(
    *args: NpArray, jaxpr: ClosedJaxpr, consts: tuple[ParamValue, ...], window_dimensions: Shape,
    window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> list[NpArray]:
    """Fold the reducer over the window offsets, each step on every window at once. As in XLA,
    padding and base-dilation holes are skipped (not combined), so ``init`` enters once."""
    from fcore.api.vectorize import vmap  # the public transformation; imported here, as it imports fcore.lax

    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    params = (window_dimensions, window_strides, window_dilation)
    views = [_windows(_padded(x, init, padding, base_dilation), *params) for x, init in zip(operands, inits)]
    valid = _windows(_padded(np.ones(operands[0].shape, bool), np.array(False), padding, base_dilation), *params)
    nd = len(window_dimensions)
    out_shape = views[0].shape[:nd]
    size = int(np.prod(out_shape))
    step = vmap(jaxpr_as_fun(jaxpr))
    acc: list[NpArray] = [np.broadcast_to(init, (size,)) for init in inits]
    for offset in np.ndindex(*window_dimensions):
        keep = valid[(Ellipsis, *offset)].reshape(size)
        if not keep.any():
            continue
        values = [np.ascontiguousarray(v[(Ellipsis, *offset)]).reshape(size) for v in views]
        new = step(*acc, *values)
        acc = [np.where(keep, np.asarray(a_new, a.dtype), a) for a_new, a in zip(new, acc)]
    return [np.asarray(a, x.dtype).reshape(out_shape) for a, x in zip(acc, operands)]


@jvp_rules.register(reduce_window_p, symbolic_zeros=True)
def _reduce_window_jvp(
    primals: list[Array], tangents: list[Tangent], *, jaxpr: ClosedJaxpr, consts: tuple[ParamValue, ...],
    window_dimensions: Shape, window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> tuple[list[Array], list[Tangent]]:
    """JAX's rule: reduce (primal, tangent) pairs with the jvp of the reducer."""
    from fcore.api.autodiff import jvp  # the public transformation; imported here, as it imports fcore.lax

    n = len(primals) // 2
    operands, inits = primals[:n], primals[n:]
    if not all(type(t) is Zero for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    op_tangents = [instantiate(t) for t in tangents[:n]]
    reducer = jaxpr_as_fun(jaxpr)

    def pair_reducer(*args: Array) -> list[Array]:
        pl, tl, pr, tr = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
        outs, touts = jvp(lambda *xs: reducer(*xs), (*pl, *pr), (*tl, *tr))
        return [*outs, *touts]

    elems = [ShapedArray((), get_aval(x).dtype) for x in operands]
    pair_jaxpr = trace_to_jaxpr(pair_reducer, elems * 4, "reduce_window jvp reducer")
    zeros = [np.zeros((), e.dtype) for e in elems]
    outs = reduce_window_p.bind(
        *operands, *op_tangents, *inits, *zeros, jaxpr=pair_jaxpr, consts=(), window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
    )
    return list(outs[:n]), list(outs[n:])


@batching_rules.register(reduce_window_p)
def _reduce_window_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, jaxpr: ClosedJaxpr, consts: tuple[ParamValue, ...],
    window_dimensions: Shape, window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> tuple[list[Array], list[Dim]]:
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial values")
    operands = [bdim_at(v, d, axis_size, 0) for v, d in zip(vals[:n], dims[:n])]
    outs = reduce_window_p.bind(
        *operands, *vals[n:], jaxpr=jaxpr, consts=consts, window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding), base_dilation=(1, *base_dilation),
        window_dilation=(1, *window_dilation),
    )
    return list(outs), [0] * n


@lowering_rules.register(reduce_window_p)
def _reduce_window_lowering(
    ctx: LoweringRuleContext, *args: str, jaxpr: ClosedJaxpr, consts: tuple[ParamValue, ...],
    window_dimensions: Shape, window_strides: Shape, padding: Padding, base_dilation: Shape, window_dilation: Shape,
) -> list[str]:
    """A variadic ``stablehlo.reduce_window`` whose region calls the reducer as a private function
    (its constants written inside the region)."""
    n = len(args) // 2
    elems = [ShapedArray((), a.dtype) for a in ctx.avals_in[:n]]
    sym = ctx.module.private_function(jaxpr.jaxpr, "reduce_window_reducer")
    body = RegionBody(ctx)
    block_args = [body.name() for _ in range(2 * n)]
    const_names = []
    const_avals = [v.aval for v in jaxpr.jaxpr.constvars]
    for c, a in zip(jaxpr.consts, const_avals):
        const_names.append(body.emit(f"stablehlo.constant {dense_attr(np.asarray(c, a.dtype))} : {tensor_type(a)}"))
    ins = ", ".join(tensor_type(a) for a in [*const_avals, *elems, *elems])
    outs = ", ".join(tensor_type(a) for a in elems)
    call = body.emit(f"func.call @{sym}({', '.join([*const_names, *block_args])}) : ({ins}) -> ({outs})")
    results = [call] if n == 1 else [f"{call}#{i}" for i in range(n)]
    if n > 1:
        body.lines[-1] = body.lines[-1].replace(f"{call} = ", f"{call}:{n} = ", 1)
    region = body.ret(results, elems)
    return _emit_reduce_window(
        ctx, args[:n], args[n:], body, block_args, region, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
    )


# -- the user function ---------------------------------------------------------------------------
def _concrete_scalar(x: object) -> NpArray | None:
    """The value of a concrete 0-d init value (``None`` for a traced one)."""
    if isinstance(x, Array):
        return np.asarray(x) if isinstance(x, ArrayImpl) and x.shape == () else None
    value = np.asarray(x)
    return value if value.ndim == 0 else None


def _monoid_primitive(computation: object, init: object, dt: DType) -> Primitive | None:
    """The ``reduce_window_*`` primitive when ``computation`` is ``add``/``max``/``min`` and the
    init value is its identity (JAX's ``_get_monoid_window_reducer``)."""
    value = _concrete_scalar(init)
    if value is None:
        return None
    if computation is add and value == 0:
        return reduce_window_sum_p
    if computation is lax_max and value == _max_identity(dt):
        return reduce_window_max_p
    if computation is lax_min and value == _min_identity(dt):
        return reduce_window_min_p
    return None


def reduce_window(
    operand: Any, init_value: Any, computation: Callable[[Any, Any], Any], window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None, padding: PaddingLike = "VALID",
    base_dilation: Sequence[int] | None = None, window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce every window of ``operand`` (an array or pytree of arrays) with ``computation``,
    starting from ``init_value`` (``lax.reduce_window``)."""
    flat, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    if len(flat) != len(inits):
        raise ValueError(f"Must have same total number of operands as init_values:  {len(flat)} vs. {len(inits)}")
    if not flat:
        raise ValueError("reduce_window must have at least one operand.")
    wd = index_tuple(window_dimensions)
    if isinstance(padding, str):
        dilated = wd if window_dilation is None else tuple(map(_dilate_dim, wd, index_tuple(window_dilation)))
        pads: Padding = tuple(padtype_to_pads(shape_of(flat[0]), dilated, index_tuple(window_strides or ()), padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (TypeError, ValueError) as e:
            raise ValueError(f"reduce_window padding must be a string or (low, high) pairs, got {padding}") from e
    ones = (1,) * len(wd)
    params: dict[str, ParamValue] = dict(
        window_dimensions=wd, window_strides=index_tuple(window_strides) if window_strides is not None else ones,
        padding=pads, base_dilation=index_tuple(base_dilation) if base_dilation is not None else ones,
        window_dilation=index_tuple(window_dilation) if window_dilation is not None else ones,
    )
    if len(flat) == 1:
        prim = _monoid_primitive(computation, inits[0], dtype_of(flat[0]))
        if prim is not None:
            return tree_util.tree_unflatten(tree, [bind(prim, flat[0], **params)])
    init_arrays = [weak_scalar(i, dtype_of(i)) if is_python_scalar(i) else i for i in inits]
    elems = [ShapedArray((), dtype_of(x)) for x in flat]
    n = len(flat)

    def reducer(*args: Array) -> list[Array]:
        out = computation(tree_util.tree_unflatten(tree, args[:n]), tree_util.tree_unflatten(tree, args[n:]))
        leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError(
                f"reduce_window output must have the same tree structure as the operands {tree} vs. {out_tree}"
            )
        return list(leaves)

    jaxpr = trace_to_jaxpr(reducer, elems * 2, "reduce_window computation")
    outs = reduce_window_p.bind(*flat, *init_arrays, jaxpr=jaxpr, consts=(), **params)
    return tree_util.tree_unflatten(tree, list(outs))

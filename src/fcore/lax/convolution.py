"""``conv_general_dilated``: XLA's general convolution, with JAX's parameters and rules.

Dimension numbers are ``ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)``: for the input and
output, ``(batch axis, feature axis, spatial axes...)``; for the kernel, ``(output feature axis,
input feature axis, spatial axes...)``. Padding reaches the primitive as explicit ``(low, high)``
pairs (``'SAME'``, ``'SAME_LOWER'`` and ``'VALID'`` are resolved by the user function, as in JAX).

The eager impl is an im2col: the (dilated, padded) input is viewed as windows with
``as_strided`` and each group becomes one batched matrix product (BLAS for floats; bfloat16 and
float16 accumulate in float32 and round once, like XLA's CPU backend). The jvp is bilinear; the
transposes are JAX's (a convolution of the cotangent with the reversed kernel for the input, a
convolution of the input with the cotangent for the kernel, groups reshaped between feature and
batch axes).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType, DTypeLike
from fcore.ir.params import ParamStruct, ParamValue
from fcore.ir.parser import register_param_struct
from fcore.lax._base import ArrayLike, NpArray, checked_impl, dtype_of, same_dtypes, shape_of
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import Shape, bind, hlo_ints, index_tuple, prod
from fcore.lax.dot import CanonicalPrecision, Precision, PrecisionLike, canonicalize_precision
from fcore.lax.elementwise import convert_element_type
from fcore.lax.shapes import full, reshape, rev
from fcore.transforms.ad_util import UndefinedPrimal, Zero
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import defjvp
from fcore.transforms.transpose import transpose_rules

__all__ = [
    "ConvDimensionNumbers", "conv_general_dilated_p", "conv_general_dilated", "conv", "conv_with_general_padding",
    "conv_transpose", "conv_dimension_numbers", "conv_general_permutations", "padtype_to_pads",
    "conv_general_dilated_patches", "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple",
]

Padding: TypeAlias = tuple[tuple[int, int], ...]
#: What the user functions accept as ``padding``: a padding string or ``(low, high)`` pairs.
PaddingLike: TypeAlias = Union[str, Sequence[tuple[int, int]]]


@register_param_struct
@attrs.frozen(slots=True)
class ConvDimensionNumbers(ParamStruct):
    """Where the batch, feature and spatial axes of a convolution's operands and result are
    (``lax.ConvDimensionNumbers``); unpacks as ``lhs_spec, rhs_spec, out_spec`` like JAX's tuple."""

    lhs_spec: Shape = attrs.field(converter=index_tuple)
    rhs_spec: Shape = attrs.field(converter=index_tuple)
    out_spec: Shape = attrs.field(converter=index_tuple)

    def __iter__(self) -> Iterator[Shape]:
        return iter((self.lhs_spec, self.rhs_spec, self.out_spec))

    def __len__(self) -> int:
        return 3

    def __getitem__(self, i: int) -> Shape:
        return (self.lhs_spec, self.rhs_spec, self.out_spec)[i]


#: What ``dimension_numbers`` may be: ``None`` (``NCHW``/``OIHW``/``NCHW``), three layout
#: strings such as ``('NHWC', 'HWIO', 'NHWC')``, or ``ConvDimensionNumbers``.
ConvGeneralDilatedDimensionNumbers: TypeAlias = Union[None, ConvDimensionNumbers, Sequence[str]]


# -- helpers: dimension numbers, padding and shapes ---------------------------------------------
def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple[Shape, Shape, Shape]:
    """The ``(lhs_spec, rhs_spec, out_spec)`` axis permutations that three layout strings name."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' exactly once, "
                f"got {dimension_numbers[i]}."
            )
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {dimension_numbers[i]}."
            )
    if not set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"} == set(out_spec) - {"N", "C"}:
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of spatial characters, "
            f"got {tuple(dimension_numbers)}."
        )

    def getperm(spec: str, pair: tuple[str, str]) -> Shape:
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair), key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    lhs_perm, rhs_perm, out_perm = (getperm(s, p) for s, p in zip(dimension_numbers, charpairs))
    return lhs_perm, rhs_perm, out_perm


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: ConvGeneralDilatedDimensionNumbers
) -> ConvDimensionNumbers:
    """``dimension_numbers`` in canonical form (``lax.conv_dimension_numbers``)."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got {len(dimension_numbers)}.")
        if not all(isinstance(elt, str) for elt in dimension_numbers):
            raise TypeError(
                "convolution dimension_numbers elements must be strings, got "
                f"{tuple(type(e) for e in dimension_numbers)}."
            )
        for i, elt in enumerate(dimension_numbers):
            if len(elt) != len(lhs_shape):
                raise TypeError(
                    f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and rhs, got "
                    f"{len(elt)} for lhs and rhs shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}."
                )
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}.")


def padtype_to_pads(
    in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int], padding: str
) -> list[tuple[int, int]]:
    """Explicit ``(low, high)`` pads for ``'SAME'``, ``'SAME_LOWER'`` or ``'VALID'`` (``lax.padtype_to_pads``)."""
    mode = padding.upper()
    if mode not in ("SAME", "SAME_LOWER", "VALID"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}.")
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        size = max((out - 1) * s + k - n, 0)
        pads.append((size // 2, size - size // 2) if mode == "SAME" else (size - size // 2, size // 2))
    return pads


def _dilate_dim(d: int, dilation: int) -> int:
    return d if dilation == 1 else max(1 + dilation * (d - 1), 0)


def _stride_dim(d: int, window: int, stride: int) -> int:
    return max((d - window) // stride + 1, 0)


def _check_dilation(name: str, dilation: Shape, nspatial: int) -> None:
    if len(dilation) != nspatial:
        raise ValueError(
            f"conv_general_dilated {name} must have one entry per spatial dimension ({nspatial}), got {dilation}."
        )
    if any(d <= 0 for d in dilation):
        raise TypeError(f"All dilations must be positive, got {dilation}.")


def _check_spec(name: str, spec: Shape, ndim: int) -> None:
    if sorted(spec) != list(range(ndim)):
        raise TypeError(
            f"conv_general_dilated dimension_numbers.{name} must be a permutation of the {ndim} axes of its "
            f"operand, got {spec}."
        )


def _check_preferred(input_dtype: DType, preferred: DType) -> None:
    """JAX's ``_validate_preferred_element_type``."""
    if not (dtypes.is_integer(input_dtype) and dtypes.is_floating(preferred)):
        for kind in (dtypes.is_integer, dtypes.is_floating, dtypes.is_complex):
            if kind(input_dtype) and not kind(preferred):
                raise TypeError(
                    "Input type is incompatible with `preferred_element_type`. The compatible combinations of "
                    "(input_type, preferred_element_type) are (integral, integral), (integral, floating), "
                    "(floating, floating), (complex, complex."
                )
        if dtypes.is_signed_int(input_dtype) and not dtypes.is_signed_int(preferred):
            raise TypeError("`preferred_element_type` must have the same signedness as the original type.")
    if preferred.itemsize < input_dtype.itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _conv_sdims(spec: Shape) -> Shape:
    return spec[2:]


def _conv_spec_transpose(spec: Shape) -> Shape:
    return (spec[1], spec[0], *spec[2:])


def _reshape_axis_into(src: int, dst: int, x: Array) -> Array:
    """Merge axis ``src`` of ``x`` into axis ``dst`` (as its major part)."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [s for i, s in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return reshape(x, new_shape, perm)


def _reshape_axis_out_of(src: int, size1: int, x: Array) -> Array:
    """Split axis ``src`` of ``x`` into ``(size1, rest)``."""
    shape = list(get_aval(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape(x, shape)


def _vjp_lhs_padding(
    in_shape: Shape, window: Shape, strides: Shape, out_shape: Shape, padding: Padding,
    lhs_dilation: Shape, rhs_dilation: Shape,
) -> Padding:
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
        kd, nd, od = _dilate_dim(k, rd), _dilate_dim(n, ld), _dilate_dim(o, s)
        before = kd - lo - 1
        pads.append((before, nd + kd - 1 - od - before))
    return tuple(pads)


def _vjp_rhs_padding(
    in_shape: Shape, window: Shape, strides: Shape, out_shape: Shape, padding: Padding,
    lhs_dilation: Shape, rhs_dilation: Shape,
) -> Padding:
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding, lhs_dilation, rhs_dilation):
        kd, nd, od = _dilate_dim(k, rd), _dilate_dim(n, ld), _dilate_dim(o, s)
        pads.append((lo, od - nd + kd - lo - 1))
    return tuple(pads)


def _compute_dtype(operand: DType, out: DType) -> DType:
    """The dtype NumPy multiplies in: integers wrap in the output type; inexact math runs in
    at least float32 (XLA's CPU accumulation for bfloat16/float16)."""
    if not dtypes.is_inexact(out) and not dtypes.is_inexact(operand):
        return out
    return np.dtype(np.promote_types(out, dtypes.float32))


def _windows(x: NpArray, kernel: Shape, strides: Shape, rhs_dilation: Shape) -> NpArray:
    """A ``(N, C, *out_spatial, *kernel)`` view of ``x`` ``(N, C, *spatial)``: every window."""
    spatial = x.shape[2:]
    out = tuple(_stride_dim(n, _dilate_dim(k, r), s) for n, k, s, r in zip(spatial, kernel, strides, rhs_dilation))
    st = x.strides
    view_strides = (st[0], st[1], *(s * t for s, t in zip(strides, st[2:])), *(r * t for r, t in zip(rhs_dilation, st[2:])))
    return np.lib.stride_tricks.as_strided(x, (*x.shape[:2], *out, *kernel), view_strides, writeable=False)


# -- conv_general_dilated[window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
#    feature_group_count, batch_group_count, precision, preferred_element_type] ----------------------
@attrs.frozen(kw_only=True)
class ConvGeneralDilatedParams:
    """``conv_general_dilated[...]``: window strides, explicit ``(low, high)`` padding, input
    (transposed-conv) and kernel (atrous) dilation, axis layout, the feature and batch group
    counts, one ``Precision`` per operand (or ``None``), and the result dtype asked for."""

    window_strides: Shape
    padding: Padding
    lhs_dilation: Shape
    rhs_dilation: Shape
    dimension_numbers: ConvDimensionNumbers
    feature_group_count: int
    batch_group_count: int
    precision: CanonicalPrecision
    preferred_element_type: DType | None


conv_general_dilated_p = Primitive("conv_general_dilated", params=ConvGeneralDilatedParams)


@conv_general_dilated_p.def_abstract_eval
def _conv_general_dilated_abstract_eval(
    lhs: ShapedArray, rhs: ShapedArray, *, window_strides: Shape, padding: Padding, lhs_dilation: Shape,
    rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers, feature_group_count: int, batch_group_count: int,
    precision: CanonicalPrecision, preferred_element_type: DType | None,
) -> ShapedArray:
    dn = dimension_numbers
    if lhs.ndim != rhs.ndim:
        raise ValueError(
            "conv_general_dilated lhs and rhs must have the same number of dimensions, but got "
            f"{lhs.shape} and {rhs.shape}."
        )
    if lhs.ndim < 2:
        raise TypeError(f"conv_general_dilated needs operands of rank at least 2, got {lhs.shape} and {rhs.shape}.")
    for name, spec in (("lhs_spec", dn.lhs_spec), ("rhs_spec", dn.rhs_spec), ("out_spec", dn.out_spec)):
        _check_spec(name, spec, lhs.ndim)
    if not feature_group_count > 0:
        raise ValueError(f"conv_general_dilated feature_group_count must be a positive integer, got {feature_group_count}.")
    lhs_features = lhs.shape[dn.lhs_spec[1]]
    quot, rem = divmod(lhs_features, feature_group_count)
    if rem:
        raise ValueError(
            "conv_general_dilated feature_group_count must divide lhs feature dimension size, but "
            f"{feature_group_count} does not divide {lhs_features}."
        )
    rhs_in, rhs_out = rhs.shape[dn.rhs_spec[1]], rhs.shape[dn.rhs_spec[0]]
    if quot != rhs_in:
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs "
            f"input feature dimension size, but {lhs_features} // {feature_group_count} != {rhs_in}."
        )
    if rhs_out % feature_group_count:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of feature_group_count, "
            f"but {rhs_out} is not a multiple of {feature_group_count}."
        )
    if not batch_group_count > 0:
        raise ValueError(f"conv_general_dilated batch_group_count must be a positive integer, got {batch_group_count}.")
    lhs_batch = lhs.shape[dn.lhs_spec[0]]
    if batch_group_count > 1 and lhs_batch % batch_group_count:
        raise ValueError(
            "conv_general_dilated batch_group_count must divide lhs batch dimension size, but "
            f"{batch_group_count} does not divide {lhs_batch}."
        )
    if rhs_out % batch_group_count:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of batch_group_count, "
            f"but {rhs_out} is not a multiple of {batch_group_count}."
        )
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got "
            f"batch_group_count={batch_group_count} and feature_group_count={feature_group_count}"
        )
    nsp = lhs.ndim - 2
    if nsp != len(window_strides):
        raise ValueError(
            "conv_general_dilated window and window_strides must have the same number of dimensions, but got "
            f"{nsp} and {len(window_strides)}"
        )
    if any(s <= 0 for s in window_strides):
        raise ValueError(f"conv_general_dilated window_strides must be positive, got {window_strides}.")
    _check_dilation("lhs_dilation", lhs_dilation, nsp)
    _check_dilation("rhs_dilation", rhs_dilation, nsp)
    if len(padding) != nsp:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {nsp}, got {len(padding)}.")
    in_sp = [_dilate_dim(lhs.shape[d], r) for d, r in zip(dn.lhs_spec[2:], lhs_dilation)]
    padded = [n + lo + hi for n, (lo, hi) in zip(in_sp, padding)]
    if any(p < 0 for p in padded):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: "
            f"got padding={list(padding)} for lhs_shape[2:]={tuple(in_sp)}"
        )
    window = [_dilate_dim(rhs.shape[d], r) for d, r in zip(dn.rhs_spec[2:], rhs_dilation)]
    out_sp = [_stride_dim(p, k, s) for p, k, s in zip(padded, window, window_strides)]
    out_trans = (lhs_batch // batch_group_count, rhs_out, *out_sp)
    shape = tuple(out_trans[int(i)] for i in np.argsort(dn.out_spec))
    dt = same_dtypes("conv_general_dilated", [lhs, rhs])
    if preferred_element_type is not None:
        _check_preferred(dt, preferred_element_type)
        dt = preferred_element_type
    return shaped_array(shape, dt, lhs.weak_type and rhs.weak_type)


@checked_impl(conv_general_dilated_p)
def _conv_general_dilated_impl(
    lhs: NpArray, rhs: NpArray, *, window_strides: Shape, padding: Padding, lhs_dilation: Shape,
    rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers, feature_group_count: int, batch_group_count: int,
    precision: CanonicalPrecision, preferred_element_type: DType | None,
) -> NpArray:
    out_dtype = preferred_element_type if preferred_element_type is not None else lhs.dtype
    compute = _compute_dtype(lhs.dtype, out_dtype)
    dn = dimension_numbers
    x = np.transpose(lhs, dn.lhs_spec).astype(compute)
    w = np.transpose(rhs, dn.rhs_spec).astype(compute)
    if any(d != 1 for d in lhs_dilation):
        dilated = np.zeros((*x.shape[:2], *map(_dilate_dim, x.shape[2:], lhs_dilation)), compute)
        dilated[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dilation))] = x
        x = dilated
    if any(lo or hi for lo, hi in padding):
        x = np.pad(x, ((0, 0), (0, 0), *((max(lo, 0), max(hi, 0)) for lo, hi in padding)))
        crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape[2:], padding))
        x = x[(slice(None), slice(None), *crop)]
    kernel = w.shape[2:]
    view = _windows(x, kernel, window_strides, rhs_dilation)  # (N, C, *out, *kernel)
    n, c = x.shape[:2]
    out_sp = view.shape[2:2 + len(kernel)]
    nsp, o, i = len(kernel), w.shape[0], w.shape[1]
    groups = max(feature_group_count, batch_group_count)
    if batch_group_count > 1:
        patches = view.reshape(groups, n // groups, c, *out_sp, *kernel)
    else:
        patches = view.reshape(n, groups, c // groups, *out_sp, *kernel).swapaxes(0, 1)
    nb = patches.shape[1]
    # (G, Nb, I, *out, *kernel) -> (G, Nb * prod(out), I * prod(kernel)): one matrix per group.
    perm = (0, 1, *range(3, 3 + nsp), 2, *range(3 + nsp, 3 + 2 * nsp))
    cols = patches.transpose(perm).reshape(groups, nb * prod(out_sp), i * prod(kernel))
    mats = w.reshape(groups, o // groups, i * prod(kernel)).transpose(0, 2, 1)
    out = np.matmul(cols, mats).reshape(groups, nb, *out_sp, o // groups)
    out = out.transpose(1, 0, 2 + nsp, *range(2, 2 + nsp)).reshape(nb, o, *out_sp)
    out = np.transpose(out, np.argsort(dn.out_spec))
    if out.dtype == out_dtype:
        return np.ascontiguousarray(out)
    with np.errstate(invalid="ignore", over="ignore"):
        return out.astype(out_dtype)


def _conv_general_dilated_jvp_lhs(g: Array, lhs: Array, rhs: Array, **params: ParamValue) -> Array:
    return bind(conv_general_dilated_p, g, rhs, **params)


def _conv_general_dilated_jvp_rhs(g: Array, lhs: Array, rhs: Array, **params: ParamValue) -> Array:
    return bind(conv_general_dilated_p, lhs, g, **params)


defjvp(conv_general_dilated_p, _conv_general_dilated_jvp_lhs, _conv_general_dilated_jvp_rhs)  # bilinear


def _conv_general_dilated_transpose_lhs(
    g: Array, lhs: UndefinedPrimal, rhs: Array, *, window_strides: Shape, padding: Padding, lhs_dilation: Shape,
    rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers, feature_group_count: int, batch_group_count: int,
    precision: CanonicalPrecision, preferred_element_type: DType | None,
) -> Array:
    """The input's cotangent: ``g`` convolved with the spatially reversed kernel (JAX's rule)."""
    rhs_shape, lhs_aval = get_aval(rhs).shape, lhs.aval
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if feature_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        feature_group_count = batch_group_count
    trans = ConvDimensionNumbers(out_spec, _conv_spec_transpose(rhs_spec), lhs_spec)
    g_shape = get_aval(g).shape
    pads = _vjp_lhs_padding(
        tuple(lhs_aval.shape[d] for d in lhs_spec[2:]), tuple(rhs_shape[d] for d in rhs_spec[2:]), window_strides,
        tuple(g_shape[d] for d in out_spec[2:]), padding, lhs_dilation, rhs_dilation,
    )
    revd = rev(rhs, rhs_spec[2:])
    if get_aval(revd).dtype != get_aval(g).dtype:
        revd = convert_element_type(revd, get_aval(g).dtype)
    out = bind(
        conv_general_dilated_p, g, revd, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation, dimension_numbers=trans, feature_group_count=feature_group_count,
        batch_group_count=1, precision=precision, preferred_element_type=preferred_element_type,
    )
    if get_aval(out).dtype != lhs_aval.dtype:
        out = convert_element_type(out, lhs_aval.dtype)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_general_dilated_transpose_rhs(
    g: Array, lhs: Array, rhs: UndefinedPrimal, *, window_strides: Shape, padding: Padding, lhs_dilation: Shape,
    rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers, feature_group_count: int, batch_group_count: int,
    precision: CanonicalPrecision, preferred_element_type: DType | None,
) -> Array | Zero:
    """The kernel's cotangent: the input convolved with ``g``, groups turned into batch groups."""
    g_aval = get_aval(g)
    if g_aval.size == 0:
        return Zero(rhs.aval)
    lhs_shape, rhs_aval = get_aval(lhs).shape, rhs.aval
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        feature_group_count, batch_group_count = 1, feature_group_count
    trans = ConvDimensionNumbers(
        _conv_spec_transpose(lhs_spec), _conv_spec_transpose(out_spec), _conv_spec_transpose(rhs_spec)
    )
    pads = _vjp_rhs_padding(
        tuple(lhs_shape[d] for d in lhs_spec[2:]), tuple(rhs_aval.shape[d] for d in rhs_spec[2:]), window_strides,
        tuple(g_aval.shape[d] for d in out_spec[2:]), padding, lhs_dilation, rhs_dilation,
    )
    if get_aval(lhs).dtype != g_aval.dtype:
        lhs = convert_element_type(lhs, g_aval.dtype)
    out = bind(
        conv_general_dilated_p, lhs, g, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides, dimension_numbers=trans, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision, preferred_element_type=preferred_element_type,
    )
    if get_aval(out).dtype != rhs_aval.dtype:
        out = convert_element_type(out, rhs_aval.dtype)
    return out


@transpose_rules.register(conv_general_dilated_p)
def _conv_general_dilated_transpose(
    ct: Array, lhs: Array | UndefinedPrimal, rhs: Array | UndefinedPrimal, *, window_strides: Shape,
    padding: Padding, lhs_dilation: Shape, rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int, batch_group_count: int, precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> list[Array | Zero | None]:
    if isinstance(lhs, UndefinedPrimal):
        if isinstance(rhs, UndefinedPrimal):
            raise ValueError("conv_general_dilated is not linear in both operands at once")
        lhs_bar = _conv_general_dilated_transpose_lhs(
            ct, lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
            rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
            batch_group_count=batch_group_count, precision=precision, preferred_element_type=preferred_element_type,
        )
        return [lhs_bar, None]
    assert isinstance(rhs, UndefinedPrimal)
    rhs_bar = _conv_general_dilated_transpose_rhs(
        ct, lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision, preferred_element_type=preferred_element_type,
    )
    return [None, rhs_bar]


@batching_rules.register(conv_general_dilated_p)
def _conv_general_dilated_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, window_strides: Shape, padding: Padding,
    lhs_dilation: Shape, rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
    batch_group_count: int, precision: CanonicalPrecision, preferred_element_type: DType | None,
) -> tuple[Array, Dim]:
    """JAX's rule: the vmapped axis is folded into the batch axis, the feature axis (as more
    groups) or the kernel's output features, and split out of the result again."""
    lhs, rhs = vals
    lbd, rbd = dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers

    def conv(x: Array, y: Array, fgc: int, bgc: int) -> Array:
        return bind(
            conv_general_dilated_p, x, y, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
            rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers, feature_group_count=fgc,
            batch_group_count=bgc, precision=precision, preferred_element_type=preferred_element_type,
        )

    if axis_size == 0:
        ls = [s for i, s in enumerate(get_aval(lhs).shape) if i != lbd]
        rs = [s for i, s in enumerate(get_aval(rhs).shape) if i != rbd]
        out_aval = _conv_general_dilated_abstract_eval(
            ShapedArray(tuple(ls), get_aval(lhs).dtype), ShapedArray(tuple(rs), get_aval(rhs).dtype),
            window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
            dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
            batch_group_count=batch_group_count, precision=precision, preferred_element_type=preferred_element_type,
        )
        return full((0, *out_aval.shape), 0, out_aval.dtype), 0
    if lbd is not None and rbd is not None:
        if batch_group_count > 1:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[0], lhs)
            batch_group_count *= axis_size
        else:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[1], lhs)
            feature_group_count *= axis_size
        new_rhs = _reshape_axis_into(rbd, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[1], axis_size, out), out_spec[1]
    if lbd is not None:
        if batch_group_count == 1:
            new_lhs = _reshape_axis_into(lbd, lhs_spec[0], lhs)
            out = conv(new_lhs, rhs, feature_group_count, 1)
            return _reshape_axis_out_of(out_spec[0], axis_size, out), out_spec[0]
        new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lbd <= lhs_spec[0]), batch_group_count, lhs)
        new_lhs = _reshape_axis_into(lbd + int(lhs_spec[0] < lbd), lhs_spec[0] + 1, new_lhs)
        new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return _reshape_axis_out_of(out_spec[0], axis_size, out), out_spec[0]
    assert rbd is not None
    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = _reshape_axis_into(rbd, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs, 1, 1)
        return _reshape_axis_out_of(out_spec[1], axis_size, out), out_spec[1]
    group_count = max(feature_group_count, batch_group_count)
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rbd <= rhs_spec[0]), group_count, rhs)
    new_rhs = _reshape_axis_into(rbd + int(rhs_spec[0] < rbd), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
    out = _reshape_axis_out_of(out_spec[1], group_count, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, axis_size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


def _dim_labels(spec: Shape, major: str, minor: str) -> str:
    labels = [""] * len(spec)
    labels[spec[0]], labels[spec[1]] = major, minor
    for i, d in enumerate(spec[2:]):
        labels[d] = str(i)
    return "[" + ", ".join(labels) + "]"


@lowering_rules.register(conv_general_dilated_p)
def _conv_general_dilated_lowering(
    ctx: LoweringRuleContext, lhs: str, rhs: str, *, window_strides: Shape, padding: Padding, lhs_dilation: Shape,
    rhs_dilation: Shape, dimension_numbers: ConvDimensionNumbers, feature_group_count: int, batch_group_count: int,
    precision: CanonicalPrecision, preferred_element_type: DType | None,
) -> str:
    """``stablehlo.convolution``, typed with the result dtype (the preferred one when given)."""
    dn = dimension_numbers
    dims = (
        f"dim_numbers = {_dim_labels(dn.lhs_spec, 'b', 'f')}x{_dim_labels(dn.rhs_spec, 'o', 'i')}"
        f"->{_dim_labels(dn.out_spec, 'b', 'f')}"
    )
    pads = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in padding) + "]"
    reverse = "[" + ", ".join(["false"] * len(window_strides)) + "]"
    window = (
        f", window = {{stride = {hlo_ints(window_strides)}, pad = {pads}, lhs_dilate = {hlo_ints(lhs_dilation)}, "
        f"rhs_dilate = {hlo_ints(rhs_dilation)}, reverse = {reverse}}}"
    )
    p0, p1 = precision if precision is not None else (Precision.DEFAULT, Precision.DEFAULT)
    attributes = (
        f" {{batch_group_count = {batch_group_count} : i64, feature_group_count = {feature_group_count} : i64, "
        f"precision_config = [#stablehlo<precision {p0.name}>, #stablehlo<precision {p1.name}>]}}"
    )
    return ctx.op_typed(f"stablehlo.convolution({lhs}, {rhs})", [], ctx.avals_in, ctx.avals_out[0],
                        dims + window + attributes)


def conv_general_dilated(
    lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int], padding: PaddingLike,
    lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None, feature_group_count: int = 1,
    batch_group_count: int = 1, precision: PrecisionLike = None, preferred_element_type: DTypeLike | None = None,
) -> Array:
    """General n-dimensional convolution with strides, padding and dilations (``lax.conv_general_dilated``)."""
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nsp = len(rhs_shape) - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * (len(lhs_shape) - 2)
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError(
            "String padding is not implemented for transposed convolution using this op. Please either exactly "
            "specify the required padding or use conv_transpose."
        )
    if rhs_dilation is None:
        rhs_dilation = (1,) * nsp
    pads: Padding
    if isinstance(padding, str):
        window = [_dilate_dim(rhs_shape[d], r) for d, r in zip(dn.rhs_spec[2:], index_tuple(rhs_dilation))]
        in_sp = [lhs_shape[d] for d in dn.lhs_spec[2:]]
        pads = tuple(padtype_to_pads(in_sp, window, index_tuple(window_strides), padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError(
                "padding argument to conv_general_dilated should be a string or a sequence of (low, high) pairs, "
                f"got {padding}"
            ) from e
    pref = None if preferred_element_type is None else dtypes.canonicalize_dtype(dtypes.to_dtype(preferred_element_type))
    return bind(
        conv_general_dilated_p, lhs, rhs, window_strides=index_tuple(window_strides), padding=pads,
        lhs_dilation=index_tuple(lhs_dilation), rhs_dilation=index_tuple(rhs_dilation), dimension_numbers=dn,
        feature_group_count=operator.index(feature_group_count), batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=pref,
    )


# -- conveniences built from the primitive above ------------------------------------------------
def conv(
    lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int], padding: str,
    precision: PrecisionLike = None, preferred_element_type: DTypeLike | None = None,
) -> Array:
    """``lax.conv``: an ``NCHW``/``OIHW`` convolution with strides and string padding."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type
    )


def conv_with_general_padding(
    lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int], padding: PaddingLike,
    lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
    precision: PrecisionLike = None, preferred_element_type: DTypeLike | None = None,
) -> Array:
    """``lax.conv_with_general_padding``: ``conv`` with explicit padding and dilations."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        precision=precision, preferred_element_type=preferred_element_type,
    )


def _conv_transpose_padding(k: int, s: int, padding: str | tuple[int, int]) -> tuple[int, int]:
    """Before and after padding of one spatial axis of a transposed convolution (JAX's rule)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_TRANSPOSE_DEFAULTS: dict[int, tuple[str, str, str]] = {
    2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: ArrayLike, rhs: ArrayLike, strides: Sequence[int], padding: PaddingLike,
    rhs_dilation: Sequence[int] | None = None, dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
    transpose_kernel: bool = False, precision: PrecisionLike = None,
    preferred_element_type: DTypeLike | None = None, use_consistent_padding: bool = False,
) -> Array:
    """``lax.conv_transpose``: a fractionally strided convolution (TensorFlow's layouts by default)."""
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise ValueError(
            f"conv_transpose needs operands of equal rank, at least 2; got shapes {lhs_shape} and {rhs_shape}"
        )
    ndims = len(lhs_shape)
    if dimension_numbers is None:
        if ndims not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[ndims]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    k_sdims = [rhs_shape[d] for d in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndims - 2)
    pads: PaddingLike
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        effective = [_dilate_dim(k, r) for k, r in zip(k_sdims, rhs_dilation)]
        replicated: list[str | tuple[int, int]] = (
            [padding] * len(strides) if isinstance(padding, str) else [(int(lo), int(hi)) for lo, hi in padding]
        )
        pads = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(effective, strides, replicated))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, dn.rhs_spec[2:])
        perm = list(range(ndims))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = reshape(rhs, [rhs_shape[p] for p in perm], perm)
    return conv_general_dilated(
        lhs, rhs, (1,) * (ndims - 2), pads, strides, rhs_dilation, dn, precision=precision,
        preferred_element_type=preferred_element_type,
    )



def conv_general_dilated_patches(
    lhs: ArrayLike, filter_shape: Sequence[int], window_strides: Sequence[int], padding: PaddingLike,
    lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: ConvGeneralDilatedDimensionNumbers = None, precision: Precision | None = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """The patches ``conv_general_dilated`` would multiply, flattened into the feature axis
    (``lax.conv_general_dilated_patches``): a grouped convolution with a one-hot kernel."""
    filter_shape = index_tuple(filter_shape)
    lhs_shape = shape_of(lhs)
    dn = conv_dimension_numbers(lhs_shape, (1, 1, *filter_shape), dimension_numbers)
    spatial, channels = prod(filter_shape), lhs_shape[dn.lhs_spec[1]]
    eye = np.broadcast_to(np.eye(spatial, dtype=dtype_of(lhs)), (channels, spatial, spatial))
    kernel = np.moveaxis(eye.reshape(channels * spatial, 1, *filter_shape), (0, 1), (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(
        lhs, np.ascontiguousarray(kernel), window_strides, padding, lhs_dilation, rhs_dilation, dn,
        feature_group_count=channels, precision=None if precision is None else (precision, Precision.DEFAULT),
        preferred_element_type=preferred_element_type,
    )


def conv_shape_tuple(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], strides: Sequence[int], pads: PaddingLike,
    batch_group_count: int = 1,
) -> Shape:
    """The result shape of a convolution of operands in canonical (``NCHW``/``OIHW``) order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(
            f"Negative padding is larger than the size of the corresponding dimension: got padding={pads} for "
            f"lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    out_space = tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *out_space)


def conv_general_shape_tuple(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int], padding: PaddingLike,
    dimension_numbers: Sequence[str],
) -> Shape:
    """``conv_shape_tuple`` for operands laid out as ``dimension_numbers`` (three strings) name."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm], window_strides, padding)
    return tuple(out[int(i)] for i in np.argsort(out_perm))


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int], padding: PaddingLike,
    dimension_numbers: Sequence[str],
) -> Shape:
    """The result shape of ``conv_transpose`` for operands laid out as ``dimension_numbers`` name."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = [lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    totals = [lo + hi for lo, hi in padding]
    out_space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals)]
    out = (lhs_t[0], rhs_t[0], *out_space)
    return tuple(out[int(i)] for i in np.argsort(out_perm))

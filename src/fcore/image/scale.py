"""Resampling by separable weight matrices, as ``jax._src.image.scale``: for each resized
dimension a ``[input, output]`` matrix of kernel weights is built with ``fcore.numpy`` ops
and contracted against the image; nearest-neighbour resizing gathers instead."""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Callable, Sequence

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.lax.dot import PrecisionLike
from fcore.scipy._util import promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

Kernel = Callable[[Array], Array]


def _fill_lanczos_kernel(radius: float, x: Array) -> Array:
    y = radius * fnp.sin(np.pi * x) * fnp.sin(np.pi * x / radius)
    out = fnp.where(x > 1e-3, fnp.divide(y, fnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
    return fnp.where(x > radius, 0.0, out)


def _fill_keys_cubic_kernel(x: Array) -> Array:
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = fnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return fnp.where(x >= 2.0, 0.0, out)


def _fill_opencv_cubic_kernel(x: Array) -> Array:
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = fnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return fnp.where(x >= 2.0, 0.0, out)


def _fill_triangle_kernel(x: Array) -> Array:
    return fnp.maximum(0, 1 - fnp.abs(x))


def _fill_lanczos3_kernel(x: Array) -> Array:
    return _fill_lanczos_kernel(3.0, x)


def _fill_lanczos5_kernel(x: Array) -> Array:
    return _fill_lanczos_kernel(5.0, x)


class ResizeMethod(enum.Enum):
    """Image resize method: ``NEAREST``, ``LINEAR``, ``LANCZOS3``, ``LANCZOS5``, ``CUBIC``
    (Keys' cubic kernel), ``CUBIC_PYTORCH`` (OpenCV's, with edge padding when not
    antialiased) and ``AREA`` (the average over each output pixel's area)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for (``"bilinear"`` is ``LINEAR``, and so on)."""
        if s == "nearest":
            return ResizeMethod.NEAREST
        if s in ("linear", "bilinear", "trilinear", "triangle"):
            return ResizeMethod.LINEAR
        if s == "lanczos3":
            return ResizeMethod.LANCZOS3
        if s == "lanczos5":
            return ResizeMethod.LANCZOS5
        if s in ("cubic", "bicubic", "tricubic"):
            return ResizeMethod.CUBIC
        if s in ("cubic-pytorch", "bicubic-pytorch"):
            return ResizeMethod.CUBIC_PYTORCH
        if s == "area":
            return ResizeMethod.AREA
        raise ValueError(f'Unknown resize method "{s}"')


#: The area kernel is not a function of the distance; this marker selects its own weights.
def _AREA(x: Array) -> Array:
    raise AssertionError("the area kernel's weights are built by compute_weight_mat")


_KERNELS: dict[ResizeMethod, tuple[int, Kernel]] = {
    ResizeMethod.LINEAR: (1, _fill_triangle_kernel),
    ResizeMethod.LANCZOS3: (3, _fill_lanczos3_kernel),
    ResizeMethod.LANCZOS5: (5, _fill_lanczos5_kernel),
    ResizeMethod.CUBIC: (2, _fill_keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _fill_opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _AREA),
}

_TINY = 1000.0 * float(np.finfo(np.float32).eps)


def _normalize(weights: Array) -> Array:
    """Columns scaled to sum to one; columns whose weights (nearly) cancel become zero."""
    total = fnp.sum(weights, axis=0, keepdims=True)
    return fnp.where(fnp.abs(total) > _TINY, fnp.divide(weights, fnp.where(total != 0, total, 1)), 0)


def compute_weight_mat(
    input_size: int,
    output_size: int,
    scale: ArrayLike,
    translation: ArrayLike,
    kernel: Kernel,
    antialias: bool,
    edge_padding: bool,
    radius: int | None,
) -> Array:
    """The ``[input_size, output_size]`` resampling weights of one dimension."""
    dtype = fnp.result_type(scale, translation)
    inv_scale = 1.0 / fnp.asarray(scale)
    kernel_scale = fnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = (fnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    if edge_padding:
        assert radius is not None
        # Needs a concrete scale: float() of a tracer raises fcore's ConcretizationError.
        k = math.ceil(radius * max(1.0 / float(fnp.asarray(scale)), 1.0)) if antialias else radius
    else:
        k = 0
    expanded_indices = fnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _AREA:
        left_i = fnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right_i = left_i + inv_scale
        left_j = fnp.arange(input_size, dtype=dtype)
        right_j = left_j + 1.0
        weights = fnp.maximum(
            0.0,
            fnp.minimum(right_i[np.newaxis, :], right_j[:, np.newaxis])
            - fnp.maximum(left_i[np.newaxis, :], left_j[:, np.newaxis]),
        )
    else:
        x = fnp.abs(sample_f[np.newaxis, :] - expanded_indices[:, np.newaxis])
        weights = kernel(x / kernel_scale)
    if edge_padding:
        clamped = fnp.clip(expanded_indices.astype(fnp.int32), 0, input_size - 1)
        out_idx = lax.broadcast_in_dim(fnp.arange(output_size), (expanded_indices.shape[0], output_size), (1,))
        weight_mat = fnp.zeros((input_size, output_size), dtype=dtype).at[clamped[:, np.newaxis], out_idx].add(weights)
        return _normalize(weight_mat)
    weights = _normalize(weights)
    inside = fnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return fnp.where(inside[np.newaxis, :], weights, 0)


def _contract(x: Array, w: Array, d: int, precision: PrecisionLike) -> Array:
    """``x`` with dimension ``d`` replaced by its product with ``w`` (``[in, out]``)."""
    y = lax.dot_general(x, w, (((d,), (0,)), ((), ())), precision=precision)
    return fnp.moveaxis(y, -1, d)


def _scale_and_translate(
    x: Array,
    output_shape: tuple[int, ...],
    spatial_dims: Sequence[int],
    scale: Sequence[ArrayLike],
    translation: Sequence[ArrayLike],
    kernel: Kernel,
    antialias: bool,
    precision: PrecisionLike,
    edge_padding: bool,
    radius: int | None,
) -> Array:
    for i, d in enumerate(spatial_dims):
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {x.ndim}")
        d %= x.ndim
        w = compute_weight_mat(
            x.shape[d], output_shape[d], scale[i], translation[i], kernel, antialias, edge_padding, radius
        ).astype(x.dtype)
        x = _contract(x, w, d, precision)
    return x


def _canonical_shape(shape: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None


def _resolve(method: str | ResizeMethod, antialias: bool) -> tuple[ResizeMethod, int, Kernel, bool]:
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    return method, radius, kernel, method == ResizeMethod.CUBIC_PYTORCH and not antialias


def scale_and_translate(
    image: ArrayLike,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: ArrayLike,
    translation: ArrayLike,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: PrecisionLike = lax.Precision.HIGHEST,
) -> Array:
    """Resample ``image`` to ``shape`` under the map ``x -> x * scale + translation`` on
    ``spatial_dims`` (``jax.image.scale_and_translate``); samples outside the input are zero."""
    out_shape = _canonical_shape(shape)
    image = fnp.asarray(image)
    if len(out_shape) != image.ndim:
        raise ValueError(
            f"shape must have length equal to the number of dimensions of x;  {out_shape} vs {image.shape}"
        )
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    method, radius, kernel, edge_padding = _resolve(method, antialias)
    (image,) = promote_dtypes_inexact(image)
    scale_arr, translation_arr = promote_dtypes_inexact(scale, translation)
    if len(spatial_dims) == 0:
        return image
    scales = [scale_arr[i] for i in range(len(spatial_dims))]
    translations = [translation_arr[i] for i in range(len(spatial_dims))]
    return _scale_and_translate(
        image, out_shape, spatial_dims, scales, translations, kernel, antialias, precision, edge_padding, radius
    )


def _resize_nearest(x: Array, output_shape: tuple[int, ...]) -> Array:
    for d, (m, n) in enumerate(zip(x.shape, output_shape)):
        if m == n:
            continue
        offsets = (fnp.arange(n, dtype=np.float32) + 0.5) * m / n
        index = fnp.floor(offsets.astype(np.float32)).astype(np.int32)
        x = fnp.take(x, index, axis=d)
    return x


def _resize_impl(
    image: Array, shape: tuple[int, ...], method: str | ResizeMethod, antialias: bool, precision: PrecisionLike
) -> Array:
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x;  {shape} vs {image.shape}")
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_dtypes_inexact(image)
    spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    method, radius, kernel, edge_padding = _resolve(method, antialias)
    scale: list[ArrayLike] = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    translation: list[ArrayLike] = [0.0] * len(spatial_dims)
    return _scale_and_translate(
        image, shape, spatial_dims, scale, translation, kernel, antialias, precision, edge_padding, radius
    )


_resize = jit(_resize_impl, static_argnums=(1, 2, 3, 4))


def resize(
    image: ArrayLike,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: PrecisionLike = lax.Precision.HIGHEST,
) -> Array:
    """Resize ``image`` to ``shape`` (every dimension, batch and channels included) with
    ``method`` (``jax.image.resize``). ``"nearest"`` keeps the dtype; the others promote to
    an inexact dtype and, with ``antialias``, widen the kernel when downsampling."""
    return _resize(fnp.asarray(image), _canonical_shape(shape), method, antialias, precision)


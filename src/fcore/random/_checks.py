"""Argument checks shared by the samplers: shapes, dtypes and parameter broadcasting, with
JAX's messages."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from fcore.errors import TypePromotionError
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.numpy._dtypes import canonical_dtype, result_type

__all__ = ["Shape", "canonicalize_shape", "broadcast_shapes", "check_shape", "check_broadcast_shapes", "user_dtype",
           "check_safe_to_cast", "shape_of", "float_dtype", "normalize_axis"]

Shape = tuple[int, ...]


def canonicalize_shape(shape: Any) -> Shape:
    """A shape argument as a tuple of non-negative ints (an int is a 1-d shape)."""
    try:
        if isinstance(shape, (int, np.integer)):
            dims: Shape = (operator.index(shape),)
        else:
            dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"Shapes must have non-negative dimensions, got {dims}.")
    return dims


def shape_of(x: Any) -> Shape:
    return tuple(x.shape) if isinstance(x, Array) else tuple(np.shape(x))


def broadcast_shapes(*shapes: Shape) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def check_shape(name: str, shape: Shape, *param_shapes: Shape) -> None:
    """The parameters' shapes must broadcast to exactly ``shape``."""
    if param_shapes:
        joined = broadcast_shapes(shape, *param_shapes)
        if joined != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and the result of "
                f"broadcasting the shapes must equal the shape argument, but got result {joined} for shape "
                f"argument {shape}."
            )


def check_broadcast_shapes(name: str, shape: Any, *args: Any) -> Shape:
    """``shape`` checked against the parameters, or (``None``) their broadcast shape."""
    arg_shapes = [shape_of(a) for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    out = canonicalize_shape(shape)
    check_shape(name, out, *arg_shapes)
    return out


def user_dtype(dtype: Any, default: type) -> DType:
    """A requested dtype, canonicalized for the 64-bit mode (``default`` when ``None``)."""
    if isinstance(dtype, Array):
        raise ValueError(
            "Passing an array as a dtype argument is no longer supported; instead of dtype=arr use dtype=arr.dtype."
        )
    return canonical_dtype(default if dtype is None else dtype)


def float_dtype(name: str, dtype: Any) -> DType:
    """The dtype of a float sampler's result (default: the default float), or JAX's error."""
    dt = user_dtype(dtype, float)
    if not dtypes.is_floating(dt):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def check_safe_to_cast(name: str, dtype: DType, *args: Any) -> None:
    """Parameters must convert to ``dtype`` without loss under the promotion rules."""
    for arg in args:
        if result_type(arg, dtype) != dtype:
            src = getattr(arg, "dtype", None)
            src = canonical_dtype(type(arg)) if src is None else src
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument of type {src} to {dtype}")


def normalize_axis(axis: int, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


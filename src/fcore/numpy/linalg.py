"""``fcore.numpy.linalg``: the parts of ``jnp.linalg`` that need no factorizations."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax import ArrayLike
from fcore.numpy import reductions, ufuncs_binary, ufuncs_unary
from fcore.numpy._promotion import convert, normalize_axis, operand, to_inexact
from fcore.numpy.products import matmul as matmul, tensordot as tensordot, vecdot as vecdot
from fcore.numpy.shape_ops import matrix_transpose as matrix_transpose

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "tensordot", "vecdot", "matrix_transpose", "outer", "trace"]


def _inexact(x: ArrayLike) -> Array:
    dt, weak = operand(x, "norm")
    return convert(x, to_inexact(dt), weak)


def _abs2(x: Array) -> Array:
    if dtypes.is_complex(x.dtype):
        return lax.real(lax.mul(x, lax.conj(x)))
    return lax.mul(x, x)


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A002
    """Vector and matrix norms (``jnp.linalg.norm``), without the SVD-based ones (2, -2, 'nuc' on matrices)."""
    a = _inexact(x)
    if axis is None:
        if ord is None:
            return lax.sqrt(reductions.sum(_abs2(a), keepdims=keepdims))
        axes: tuple[int, ...] = tuple(range(a.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(i, a.ndim) for i in axis)
    else:
        axes = (normalize_axis(operator.index(axis), a.ndim),)
    if len(axes) == 1:
        return vector_norm(a, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        return matrix_norm(a, axes=axes, keepdims=keepdims, ord="fro" if ord is None else ord)
    raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")


def vector_norm(x: ArrayLike, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:  # noqa: A002
    a = _inexact(x)
    if ord is None or ord == 2:
        return lax.sqrt(reductions.sum(_abs2(a), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return reductions.max(ufuncs_unary.abs(a), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return reductions.min(ufuncs_unary.abs(a), axis=axis, keepdims=keepdims)
    if ord == 0:
        nz = lax.ne(a, convert(0, a.dtype))
        return reductions.sum(nz, axis=axis, dtype=lax.real(a).dtype if dtypes.is_complex(a.dtype) else a.dtype, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(ufuncs_unary.abs(a), axis=axis, keepdims=keepdims)
    absx = ufuncs_unary.abs(a)
    p = float(ord)
    return ufuncs_binary.power(reductions.sum(ufuncs_binary.power(absx, p), axis=axis, keepdims=keepdims), 1.0 / p)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro", axes: tuple[int, int] = (-2, -1)) -> Array:  # noqa: A002
    a = _inexact(x)
    r, c = (normalize_axis(axes[0], a.ndim), normalize_axis(axes[1], a.ndim))
    if ord in ("fro", "f", None):
        return lax.sqrt(reductions.sum(_abs2(a), axis=(r, c), keepdims=keepdims))
    absx = ufuncs_unary.abs(a)
    if ord in (1, -1):
        s = reductions.sum(absx, axis=r, keepdims=True)
        f = reductions.max if ord == 1 else reductions.min
        out = f(s, axis=c, keepdims=True)
    elif ord in (np.inf, -np.inf):
        s = reductions.sum(absx, axis=c, keepdims=True)
        f = reductions.max if ord == np.inf else reductions.min
        out = f(s, axis=r, keepdims=True)
    else:
        raise NotImplementedError(f"fnp.linalg.norm: ord={ord!r} for matrices needs an SVD, which fcore lacks")
    return out if keepdims else lax.squeeze(out, tuple(sorted((r, c))))


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    from fcore.numpy.products import outer as _outer

    return _outer(x1, x2)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    from fcore.numpy.creation import trace as _trace

    return _trace(x, offset, -2, -1, dtype)

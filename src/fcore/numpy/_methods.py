"""The ``fcore.Array`` operator/method table, installed when ``fcore.numpy`` is imported.

Binary operators defer (return ``NotImplemented``) when the other operand is not array-like,
as JAX's do, so that ``x == "a"`` is ``False`` and unknown types can implement the reflected
operator themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from fcore.interpreters.array import Array, ArrayMethod, register_array_methods
from fcore.numpy import creation, indexing, products, reductions, searching, shape_ops, sorting, statistics, ufuncs_binary, ufuncs_logic, ufuncs_parts, ufuncs_unary
from fcore.numpy._dtypes import canonical_dtype
from fcore.numpy._promotion import convert

_ARRAYLIKE = (Array, np.ndarray, np.generic, bool, int, float, complex)
_OK: set[type] = {bool, int, float, complex, np.ndarray}
"""Classes seen to be array-like (a set lookup instead of an ABC ``isinstance`` check)."""


def _arraylike(x: object) -> bool:
    if isinstance(x, _ARRAYLIKE):
        _OK.add(type(x))
        return True
    return False


_REJECTED = (list, tuple, set, dict)
"""Containers an operator refuses outright (as jax does) instead of deferring to them."""


def _defer(fn: Callable[[Any, Any], Array], symbol: str) -> ArrayMethod:
    def op(x: Any, y: Any) -> Any:
        if (type(x) in _OK or _arraylike(x)) and (type(y) in _OK or _arraylike(y)):
            return fn(x, y)
        if type(x) in _REJECTED or type(y) in _REJECTED:
            raise TypeError(f"unsupported operand type(s) for {symbol}: {type(x).__name__!r} and {type(y).__name__!r}")
        return NotImplemented

    op.__name__ = op.__qualname__ = getattr(fn, "__name__", "op")
    op.__doc__ = fn.__doc__
    return op


def astype(x: Array, dtype: Any, copy: bool = False) -> Array:
    """``x`` converted to ``dtype`` (strongly typed)."""
    return convert(x, canonical_dtype(dtype), False)


def _transpose(x: Array, axes: Any = None) -> Array:
    return shape_ops.transpose(x, axes)


def _reshape(x: Array, shape: Any) -> Array:
    return shape_ops.reshape(x, shape)


def _squeeze(x: Array, axis: Any = None) -> Array:
    return shape_ops.squeeze(x, axis)


def _clip(x: Array, min: Any = None, max: Any = None) -> Array:  # noqa: A002
    return ufuncs_binary.clip(x, min, max)


def _round(x: Array, decimals: int = 0) -> Array:
    return ufuncs_unary.round(x, decimals)


def _at(x: Array) -> Any:
    return indexing.at(x)


def _getitem(x: Array, idx: object) -> Array:
    return indexing.getitem(x, idx)


TABLE: dict[str, ArrayMethod] = {
    "negative": ufuncs_unary.negative,
    "abs": ufuncs_unary.absolute,
    "invert": ufuncs_logic.invert,
    "add": _defer(ufuncs_binary.add, "+"),
    "subtract": _defer(ufuncs_binary.subtract, "-"),
    "multiply": _defer(ufuncs_binary.multiply, "*"),
    "true_divide": _defer(ufuncs_binary.true_divide, "/"),
    "floor_divide": _defer(ufuncs_binary.floor_divide, "//"),
    "remainder": _defer(ufuncs_binary.remainder, "%"),
    "power": _defer(ufuncs_binary.power, "**"),
    "matmul": _defer(products.matmul, "@"),
    "bitwise_and": _defer(ufuncs_logic.bitwise_and, "&"),
    "bitwise_or": _defer(ufuncs_logic.bitwise_or, "|"),
    "bitwise_xor": _defer(ufuncs_logic.bitwise_xor, "^"),
    "left_shift": _defer(ufuncs_logic.left_shift, "<<"),
    "right_shift": _defer(ufuncs_logic.right_shift, ">>"),
    "less": _defer(ufuncs_logic.less, "<"),
    "less_equal": _defer(ufuncs_logic.less_equal, "<="),
    "greater": _defer(ufuncs_logic.greater, ">"),
    "greater_equal": _defer(ufuncs_logic.greater_equal, ">="),
    "equal": _defer(ufuncs_logic.equal, "=="),
    "not_equal": _defer(ufuncs_logic.not_equal, "!="),
    "getitem": _getitem,
    "transpose": _transpose,
    "at": _at,
    "real": ufuncs_parts.real,
    "imag": ufuncs_parts.imag,
    "conj": ufuncs_parts.conjugate,
    "astype": astype,
    "reshape": _reshape,
    "ravel": shape_ops.ravel,
    "squeeze": _squeeze,
    "swapaxes": shape_ops.swapaxes,
    "dot": products.dot,
    "sum": reductions.sum,
    "prod": reductions.prod,
    "mean": reductions.mean,
    "max": reductions.max,
    "min": reductions.min,
    "all": reductions.all,
    "any": reductions.any,
    "argmax": reductions.argmax,
    "argmin": reductions.argmin,
    "var": reductions.var,
    "std": reductions.std,
    "cumsum": reductions.cumsum,
    "cumprod": reductions.cumprod,
    "sort": sorting.sort,
    "argsort": sorting.argsort,
    "argpartition": sorting.argpartition,
    "searchsorted": sorting.searchsorted,
    "nonzero": cast(ArrayMethod, searching.nonzero),  # returns a tuple of arrays
    "compress": searching.compress,
    "ptp": statistics.ptp,
    "take": indexing.take,
    "repeat": shape_ops.repeat,
    "diagonal": creation.diagonal,
    "trace": creation.trace,
    "clip": _clip,
    "round": _round,
}


def install() -> None:
    register_array_methods(TABLE)

"""``mode``, ``rankdata`` and ``sem`` of ``fcore.scipy.stats``, as JAX's (jitted, with its
``nan_policy`` handling; NaNs count as one value in ``mode``)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fcore import lax
import fcore.numpy as fnp
from fcore.api.jit import jit
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.scipy._util import promote_args_inexact

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    mode: Array
    count: Array  # type: ignore[assignment]  # shadows tuple.count, as in JAX


def _check_nan_policy(nan_policy: str, name: str) -> None:
    if nan_policy not in ["propagate", "omit", "raise"]:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {{'propagate', 'omit', 'raise'}}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function.")


def _mode_of_column(x: Array) -> tuple[Array, Array]:
    """The most frequent value (the smallest of ties) and its count, as ``jnp.unique`` counts."""
    if x.size == 0:
        return fnp.array(np.nan, dtype=dtypes.default_float_dtype()), fnp.array(0, dtype=dtypes.default_float_dtype())
    s = fnp.sort(x)
    both_nan = fnp.isnan(s[1:]) & fnp.isnan(s[:-1])
    starts = fnp.concatenate([fnp.array([True]), (s[1:] != s[:-1]) & ~both_nan])
    run = fnp.cumsum(starts) - 1
    counts = fnp.zeros(x.size, dtype=dtypes.default_int_dtype()).at[run].add(1)
    best = fnp.argmax(counts)
    return s[fnp.argmax(run == best)], counts.max()


def _mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    x = fnp.atleast_1d(a)
    _check_nan_policy(nan_policy, "mode")
    if axis is not None:
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
        axis = axis % x.ndim
    input_shape = x.shape
    if keepdims:
        output_shape = (tuple(1 for _ in input_shape) if axis is None
                        else tuple(1 if i == axis else s for i, s in enumerate(input_shape)))
    else:
        output_shape = () if axis is None else tuple(s for i, s in enumerate(input_shape) if i != axis)
    if axis is None:
        axis, x = 0, x.ravel()
    x = fnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    vals, counts = vmap(_mode_of_column, in_axes=1)(x)
    return ModeResult(vals.reshape(output_shape), counts.reshape(output_shape))


_mode_jit = jit(_mode, static_argnames=("axis", "nan_policy", "keepdims"))


def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (the smallest of ties) and how often it occurs."""
    if not isinstance(a, (Array, np.ndarray, np.generic, int, float, complex, bool)):
        raise TypeError(f"mode requires ndarray or scalar arguments, got {type(a)} at position 0.")
    out: ModeResult = _mode_jit(a, axis=axis, nan_policy=nan_policy, keepdims=keepdims)
    return out


def _rank_1d(a: Array, method: str) -> Array:
    out_dtype = dtypes.default_float_dtype()

    def ranks(a: Array) -> Array:
        arr, sorter = lax.sort_key_val(a, fnp.arange(a.size))
        inv: Array = fnp.empty_like(sorter).at[sorter].set(fnp.arange(sorter.size, dtype=sorter.dtype))
        if method == "ordinal":
            return (inv + 1).astype(out_dtype)
        obs = fnp.concatenate([fnp.array([True]), arr[1:] != arr[:-1]])
        dense = obs.cumsum()[inv]
        if method == "dense":
            return dense.astype(out_dtype)
        count = fnp.nonzero(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
        if method == "max":
            return count[dense]
        if method == "min":
            return count[dense - 1] + 1
        return 0.5 * (count[dense] + count[dense - 1] + 1)

    def all_nan(a: Array) -> Array:
        return fnp.full_like(a, np.nan, out_dtype)

    out: Array = lax.cond(fnp.any(fnp.isnan(a)), all_nan, ranks, a)
    return out


def _rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
              nan_policy: str = "propagate") -> Array:
    _check_nan_policy(nan_policy, "rankdata")
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    x = fnp.asarray(a)
    if axis is None:
        return _rank_1d(fnp.ravel(x), method)
    axis = axis % x.ndim if -x.ndim <= axis < x.ndim else axis
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    moved = fnp.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    ranked = vmap(lambda row: _rank_1d(row, method))(flat)
    return fnp.moveaxis(ranked.reshape(moved.shape), -1, axis)


_rankdata_jit = jit(_rankdata, static_argnames=("method", "axis", "nan_policy"))


def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate") -> Array:
    """Ranks of the data (``method``: average, min, max, dense or ordinal), NaN if any is NaN."""
    out: Array = _rankdata_jit(a, method, axis=axis, nan_policy=nan_policy)
    return out


def _sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
         keepdims: bool = False) -> Array:
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~fnp.isnan(b)).sum(axis, keepdims=keepdims)
        return fnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")


# ``ddof`` is static too: ``fcore.numpy.std`` needs a concrete ``ddof`` (JAX's takes a traced one).
_sem_jit = jit(_sem, static_argnames=("axis", "ddof", "nan_policy", "keepdims"))


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)``."""
    out: Array = _sem_jit(a, axis=axis, ddof=ddof, nan_policy=nan_policy, keepdims=keepdims)
    return out

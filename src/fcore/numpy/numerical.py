"""Numerical routines of ``fcore.numpy``: 1-D ``convolve``/``correlate``, ``interp``,
``gradient``, ``trapezoid``, ``unwrap``, ``geomspace`` and ``cov``/``corrcoef`` — ``jnp``'s formulas."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert, normalize_axis, promote_dtypes, result_of, to_inexact
from fcore.numpy.ufuncs_binary import add, clip, floor_divide, multiply, remainder, subtract, true_divide
from fcore.numpy.ufuncs_logic import equal, greater, less, less_equal, logical_and, where
from fcore.numpy.ufuncs_parts import conjugate, imag, real
from fcore.numpy.ufuncs_unary import absolute, log10, negative, sign, sqrt


def _ndim(x: object) -> int:
    return x.ndim if isinstance(x, (Array, np.ndarray, np.generic)) else np.ndim(np.asarray(x))


def _conv(x: ArrayLike, y: ArrayLike, mode: str, op: str, precision: Any, preferred_element_type: Any) -> Array:
    """1-D convolution/correlation as one ``lax.conv_general_dilated`` (``jnp``'s formulation)."""
    a, v = asarray(x, op), asarray(y, op, 1)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    a, v = promote_dtypes(a, v, name=op, inexact=preferred_element_type is None)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {a.shape} and {v.shape}.")
    reverse_out = False
    if op == "correlate":
        v = conjugate(v)
        if a.shape[0] < v.shape[0]:
            a, v = v, a
            reverse_out = True
    else:
        if a.shape[0] < v.shape[0]:
            a, v = v, a
        v = lax.rev(v, (0,))
    k = v.shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(k // 2, k - k // 2 - 1)]
    elif mode == "full":
        padding = [(k - 1, k - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(
        lax.reshape(a, (1, 1, a.shape[0])), lax.reshape(v, (1, 1, k)), (1,), padding, precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, (out.shape[2],))
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Array:
    """Discrete linear convolution of two 1-D arrays."""
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """Cross-correlation of two 1-D arrays."""
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Array:
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (``xp`` increasing)."""
    from fcore.numpy.indexing import getitem
    from fcore.numpy.shape_ops import concatenate
    from fcore.numpy.sorting import searchsorted

    xa, xpa, fpa = asarray(x, "interp"), asarray(xp, "interp", 1), asarray(fp, "interp", 2)
    if xpa.shape != fpa.shape or xpa.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    xa, xpa = promote_dtypes(xa, xpa, name="interp", inexact=True)
    (fpa,) = promote_dtypes(fpa, name="interp", inexact=True)
    for side, value in (("left", left), ("right", right)):
        if isinstance(value, str) and value != "extrapolate":
            raise ValueError(f"the only valid string value of `{side}` is 'extrapolate', but got: {value!r}")
    if dtypes.is_complex(xa.dtype):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if _ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        per = absolute(period)
        xa, xpa = remainder(xa, per), remainder(xpa, per)
        xpa, fpa = lax.sort_key_val(xpa, fpa)
        n = xpa.shape[0]
        xpa = concatenate([subtract(lax.slice_in_dim(xpa, n - 1, n), per), xpa, add(lax.slice_in_dim(xpa, 0, 1), per)])
        fpa = concatenate([lax.slice_in_dim(fpa, n - 1, n), fpa, lax.slice_in_dim(fpa, 0, 1)])
    n = xpa.shape[0]
    i = clip(searchsorted(xpa, xa, side="right"), 1, n - 1)
    im1 = subtract(i, 1)
    f_lo, x_lo = getitem(fpa, im1), getitem(xpa, im1)
    df = subtract(getitem(fpa, i), f_lo)
    dx = subtract(getitem(xpa, i), x_lo)
    delta = subtract(xa, x_lo)
    eps = np.spacing(np.finfo(np.float32 if xpa.dtype == dtypes.bfloat16 else xpa.dtype).eps)
    dx0 = less_equal(absolute(dx), eps)
    f = where(dx0, f_lo, add(f_lo, multiply(true_divide(delta, where(dx0, 1, dx)), df)))
    if not isinstance(left, str) and period is None:
        f = where(less(xa, getitem(xpa, 0)), getitem(fpa, 0) if left is None else left, f)
    if not isinstance(right, str) and period is None:
        f = where(greater(xa, getitem(xpa, -1)), getitem(fpa, -1) if right is None else right, f)
    return f


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Array:
    """Integral of ``y`` by the trapezoidal rule (samples at ``x``, or spaced ``dx``)."""
    from fcore.numpy.manipulation import diff
    from fcore.numpy.reductions import sum as _sum
    from fcore.numpy.shape_ops import moveaxis

    if x is None:
        (ya,) = promote_dtypes(y, name="trapezoid", inexact=True)
        dxa = asarray(dx, "trapezoid", 2)
        if dxa.ndim > 0:
            dxa = lax.expand_dims(dxa, tuple(range(ya.ndim - dxa.ndim)))
            dxa = moveaxis(dxa, axis, -1)
    else:
        ya, xa = promote_dtypes(y, x, name="trapezoid", inexact=True)
        dxa = diff(xa) if xa.ndim == 1 else moveaxis(diff(xa, axis=axis), axis, -1)
    ya = moveaxis(ya, axis, -1)
    n = ya.shape[-1]
    last = ya.ndim - 1
    if dxa.ndim == 0 or dxa.shape[-1] == 1:
        d = dxa if dxa.ndim == 0 else lax.index_in_dim(dxa, 0, dxa.ndim - 1, keepdims=False)
        ends = add(lax.index_in_dim(ya, 0, last, keepdims=False), lax.index_in_dim(ya, n - 1, last, keepdims=False))
        return multiply(d, subtract(_sum(ya, -1), multiply(0.5, ends)))
    pair = add(lax.slice_in_dim(ya, 1, n, axis=last), lax.slice_in_dim(ya, 0, max(n - 1, 0), axis=last))
    return multiply(0.5, _sum(multiply(dxa, pair), -1))


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Array:
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop``."""
    from fcore.numpy._dtypes import canonical_dtype
    from fcore.numpy.creation import logspace

    num = operator.index(num)
    dt = to_inexact(result_of(start, stop, name="geomspace")[0]) if dtype is None else canonical_dtype(dtype)
    comp = to_inexact(dt)
    s, e = convert(start, comp), convert(stop, comp)
    sgn = sign(s)
    res = multiply(sgn, logspace(log10(true_divide(s, sgn)), log10(true_divide(e, sgn)), num,
                                 endpoint=endpoint, base=10.0, dtype=comp, axis=0))
    ax = normalize_axis(axis, res.ndim)
    if ax != 0:
        res = lax.transpose(res, (*range(1, ax + 1), 0, *range(ax + 1, res.ndim)))
    return lax.convert_element_type(res, dt)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: ArrayLike | None = None, aweights: ArrayLike | None = None, dtype: Any = None) -> Array:
    """Covariance matrix of the variables in the rows (or columns) of ``m`` (and ``y``)."""
    from fcore.numpy.creation import full
    from fcore.numpy.products import dot
    from fcore.numpy.reductions import average, sum as _sum
    from fcore.numpy.shape_ops import atleast_2d, concatenate, squeeze

    if y is not None:
        ma, ya = promote_dtypes(m, y, name="cov", inexact=True)
        if ya.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (ma,) = promote_dtypes(m, name="cov", inexact=True)
    if ma.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.is_inexact(np.dtype(dtype)):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    X = atleast_2d(ma)
    if not rowvar and ma.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return ArrayImpl(np.zeros((0, 0), dtypes.canonicalize_dtype(dtypes.float64)), False)
    if y is not None:
        yy = atleast_2d(ya)
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        X = concatenate((X, yy), axis=0)
    if X.shape[1] == 0:
        return full(() if X.shape[0] == 1 else (X.shape[0], X.shape[0]), np.nan, dtype=X.dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w: Array | None = None
    aw: Array | None = None
    if fweights is not None:
        fw = asarray(fweights, "cov")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.is_integer(fw.dtype):
            raise TypeError("fweights must be integer.")
        w = absolute(fw)
    if aweights is not None:
        aw = asarray(aweights, "cov")
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = absolute(aw)
        w = aw if w is None else multiply(w, aw)
    if dtype is not None:
        from fcore.numpy._dtypes import canonical_dtype

        X = convert(X, canonical_dtype(dtype))
        w = convert(w, canonical_dtype(dtype)) if w is not None else None
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    f: ArrayLike
    if w is None:
        f = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aw is None:
        f = subtract(w_sum, ddof)
    else:
        f = subtract(w_sum, true_divide(multiply(ddof, _sum(multiply(w, aw))), w_sum))
    X = subtract(X, lax.expand_dims(avg, (1,)))
    X_T = X.T if w is None else multiply(X, lax.expand_dims(w, (0,))).T
    return squeeze(true_divide(dot(X, conjugate(X_T)), f))


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, dtype: Any = None) -> Array:
    """Pearson correlation coefficients (clipped to ``[-1, 1]``)."""
    from fcore.numpy.creation import diag

    if dtype is not None and not dtypes.is_inexact(np.dtype(dtype)):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return true_divide(c, c)
    d = diag(c)
    stddev = convert(sqrt(real(d)), c.dtype)
    c = true_divide(true_divide(c, lax.expand_dims(stddev, (1,))), lax.expand_dims(stddev, (0,)))
    real_part = clip(real(c), -1, 1)
    if dtypes.is_complex(c.dtype):
        return lax.complex(real_part, clip(imag(c), -1, 1))
    return real_part


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Array:
    """``p`` with jumps larger than ``discont`` unwrapped by multiples of ``period``."""
    from fcore.numpy._promotion import normalize_axis
    from fcore.numpy.manipulation import diff
    from fcore.numpy.reductions import cumsum
    from fcore.numpy.shape_ops import concatenate

    dt, weak = result_of(p, period, name="unwrap")
    arr, per = convert(p, dt, weak), convert(period, dt, weak)
    if dtypes.is_complex(dt):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    ax = normalize_axis(axis, arr.ndim)
    if arr.shape[ax] == 0:
        return arr
    disc: ArrayLike = true_divide(per, 2) if discont is None else discont
    interval = floor_divide(per, 2) if dtypes.is_integer(dt) else true_divide(per, 2)
    dd = diff(arr, axis=ax)
    ddmod = subtract(remainder(add(dd, interval), per), interval)
    ddmod = where(logical_and(equal(ddmod, negative(interval)), greater(dd, 0)), interval, ddmod)
    correct = where(less(absolute(dd), disc), 0, subtract(ddmod, dd))
    n = arr.shape[ax]
    return concatenate(
        (lax.slice_in_dim(arr, 0, 1, axis=ax), add(lax.slice_in_dim(arr, 1, n, axis=ax), cumsum(correct, axis=ax))),
        axis=ax,
    )


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Array | list[Array]:
    """The gradient of sampled ``f`` by central differences inside and one-sided differences at
    the edges, along each of ``axis`` (one array per axis, or the array itself for one axis).
    ``varargs`` are the sample spacings: one scalar for all axes, or one scalar or 1-D
    coordinate array per axis."""
    from fcore.numpy.shape_ops import concatenate

    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promote_dtypes(f, *varargs, name="gradient", inexact=True)

    def along(a: Array, h: Array, ax: int) -> Array:
        n = a.shape[ax]

        def sl(x: Array, start: int, stop: int) -> Array:
            return lax.slice_in_dim(x, start % x.shape[ax] if start < 0 else start, stop if stop >= 0 else x.shape[ax] + stop, axis=ax)

        upper = subtract(sl(a, 1, 2), sl(a, 0, 1))
        lower = subtract(sl(a, n - 1, n), sl(a, n - 2, n - 1))
        if h.ndim == 0:
            inner = true_divide(multiply(subtract(sl(a, 2, n), sl(a, 0, n - 2)), 0.5), h)
            lower, upper = true_divide(lower, h), true_divide(upper, h)
        elif h.ndim == 1:
            if h.shape[0] != n:
                raise ValueError("Spacing arrays must have the same length as the dimension along which the gradient is calculated.")
            hs = h.reshape(tuple(n if i == ax else 1 for i in range(a.ndim)))
            upper = true_divide(upper, subtract(sl(hs, 1, 2), sl(hs, 0, 1)))
            lower = true_divide(lower, subtract(sl(hs, n - 1, n), sl(hs, n - 2, n - 1)))
            dx1 = subtract(sl(hs, 1, n - 1), sl(hs, 0, n - 2))
            dx2 = subtract(sl(hs, 2, n), sl(hs, 1, n - 1))
            ca = true_divide(negative(dx2), multiply(dx1, add(dx1, dx2)))
            cb = true_divide(subtract(dx2, dx1), multiply(dx1, dx2))
            cc = true_divide(dx1, multiply(dx2, add(dx1, dx2)))
            inner = add(add(multiply(ca, sl(a, 0, n - 2)), multiply(cb, sl(a, 1, n - 1))), multiply(cc, sl(a, 2, n)))
        else:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        return concatenate((upper, inner, lower), axis=ax)

    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(normalize_axis(i, a.ndim) for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if not axes:
        return []
    if min(a.shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements are required.")
    if not spacing:
        dx: list[Array] = [convert(1.0, a.dtype, a.weak_type)] * len(axes)
    elif len(spacing) == 1:
        dx = spacing * len(axes)
    elif len(spacing) == len(axes):
        dx = spacing
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [along(a, h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads

"""Numerical routines of ``fcore.numpy``: polynomials (``polyval``, ``polyadd``, ``polymul``,
``polyder``, ``polyint``, ``vander``), 1-D ``convolve``/``correlate``, ``interp``,
``trapezoid``, ``geomspace``, ``cov``/``corrcoef`` and ``histogram`` — ``jnp``'s formulas."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.lax import ArrayLike
from fcore.numpy._promotion import asarray, convert, normalize_axis, result_of, to_inexact
from fcore.numpy.ufuncs_binary import add, clip, floor_divide, multiply, power, remainder, subtract, true_divide
from fcore.numpy.ufuncs_logic import equal, greater, less, less_equal, logical_and, where
from fcore.numpy.ufuncs_parts import conjugate, imag, real
from fcore.numpy.ufuncs_unary import absolute, log10, negative, sign, sqrt



def _promote(*args: ArrayLike, name: str, inexact: bool = False) -> list[Array]:
    dt, weak = result_of(*args, name=name)
    if inexact:
        dt = to_inexact(dt)
    return [convert(a, dt, weak) for a in args]


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Array:
    """The polynomial with coefficients ``p`` (highest degree first) at ``x`` (Horner)."""
    from fcore.numpy.shape_ops import broadcast_shapes

    pa, xa = _promote(p, x, name="polyval")
    shape = broadcast_shapes(pa.shape[1:], xa.shape)
    y: Array = lax.broadcast_in_dim(ArrayImpl(np.zeros((), xa.dtype), xa.weak_type), shape, ())
    for i in range(pa.shape[0]):
        y = add(multiply(y, xa), lax.index_in_dim(pa, i, keepdims=False))
    return y


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Sum of two polynomials."""
    x, y = _promote(a1, a2, name="polyadd")
    if y.shape[0] <= x.shape[0]:
        out: Array = x.at[-y.shape[0]:].add(y)
    else:
        out = y.at[-x.shape[0]:].add(x)
    return out


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Difference of two polynomials."""
    x, y = _promote(a1, a2, name="polysub")
    return polyadd(x, negative(y))


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Array:
    """Product of two polynomials."""
    from fcore.numpy.creation import zeros
    from fcore.numpy.manipulation import trim_zeros

    x, y = _promote(a1, a2, name="polymul", inexact=True)
    if trim_leading_zeros and (x.shape[0] > 1 or y.shape[0] > 1):
        x, y = trim_zeros(x, trim="f"), trim_zeros(y, trim="f")
    if x.shape[0] == 0:
        x = zeros(1, dtype=y.dtype)
    if y.shape[0] == 0:
        y = zeros(1, dtype=x.dtype)
    return convolve(x, y, mode="full")


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The ``m``-th derivative of a polynomial."""
    (pa,) = _promote(p, name="polyder", inexact=True)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return pa
    n = pa.shape[0]
    coeff = (np.arange(m, n)[None] - np.arange(m)[:, None]).prod(0)
    return multiply(lax.slice_in_dim(pa, 0, max(n - m, 0)), ArrayImpl(coeff[::-1].astype(pa.dtype), False))


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """The ``m``-th antiderivative, with integration constants ``k``."""
    from fcore.numpy.creation import full
    from fcore.numpy.shape_ops import atleast_1d, concatenate

    m = operator.index(m)
    pa, ka = _promote(p, 0 if k is None else k, name="polyint", inexact=True)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ka = atleast_1d(ka)
    if ka.shape[0] == 1:
        ka = full((m,), ka[0])
    if ka.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return pa
    grid = np.arange(pa.shape[0] + m)[None] - np.arange(m)[:, None]
    coeff = np.maximum(1, grid).prod(0)[::-1]
    return true_divide(concatenate((pa, ka)), ArrayImpl(coeff.astype(pa.dtype), False))


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of ``x`` (powers decreasing unless ``increasing``)."""
    xa = asarray(x, "vander")
    if xa.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = xa.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = np.arange(n) if increasing else (n - 1) - np.arange(n)
    iota = ArrayImpl(powers.astype(xa.dtype), False)
    return power(lax.expand_dims(xa, (1,)), lax.expand_dims(iota, (0,)))


def _conv(x: ArrayLike, y: ArrayLike, mode: str, op: str, preferred_element_type: Any) -> Array:
    """1-D convolution/correlation as a matrix of sliding windows times the kernel."""
    from fcore.numpy.indexing import getitem
    from fcore.numpy.products import matmul

    a, v = asarray(x, op), asarray(y, op, 1)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    a, v = _promote(a, v, name=op, inexact=preferred_element_type is None)
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
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = k // 2, k - k // 2 - 1
    elif mode == "full":
        lo, hi = k - 1, k - 1
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    padded = lax.pad(a, ArrayImpl(np.zeros((), a.dtype), False), [(lo, hi, 0)])
    n_out = padded.shape[0] - k + 1
    windows = getitem(padded, np.arange(n_out)[:, None] + np.arange(k)[None, :])
    if preferred_element_type is not None:
        from fcore.numpy._dtypes import canonical_dtype

        pdt = canonical_dtype(preferred_element_type)
        windows, v = convert(windows, pdt), convert(v, pdt)
    out = matmul(windows, v)
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Array:
    """Discrete linear convolution of two 1-D arrays."""
    return _conv(a, v, mode, "convolve", preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """Cross-correlation of two 1-D arrays."""
    return _conv(a, v, mode, "correlate", preferred_element_type)


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Array:
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (``xp`` increasing)."""
    from fcore.numpy.indexing import getitem
    from fcore.numpy.shape_ops import concatenate
    from fcore.numpy.sorting import searchsorted

    xa, xpa, fpa = asarray(x, "interp"), asarray(xp, "interp", 1), asarray(fp, "interp", 2)
    if xpa.shape != fpa.shape or xpa.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    xa, xpa = _promote(xa, xpa, name="interp", inexact=True)
    (fpa,) = _promote(fpa, name="interp", inexact=True)
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
        (ya,) = _promote(y, name="trapezoid", inexact=True)
        dxa = asarray(dx, "trapezoid", 2)
        if dxa.ndim > 0:
            dxa = lax.expand_dims(dxa, tuple(range(ya.ndim - dxa.ndim)))
            dxa = moveaxis(dxa, axis, -1)
    else:
        ya, xa = _promote(y, x, name="trapezoid", inexact=True)
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
        ma, ya = _promote(m, y, name="cov", inexact=True)
        if ya.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (ma,) = _promote(m, name="cov", inexact=True)
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


def _ndim(x: object) -> int:
    return x.ndim if isinstance(x, (Array, np.ndarray, np.generic)) else np.ndim(np.asarray(x))


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10, range: Sequence[ArrayLike] | None = None,  # noqa: A002
                        weights: ArrayLike | None = None) -> Array:
    """The edges of the histogram bins (``bins`` edges given, or a static count)."""
    from fcore.numpy.creation import array, linspace
    from fcore.numpy.statistics import ptp

    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    arr = asarray(a, "histogram_bin_edges")
    dt = to_inexact(arr.dtype)
    if _ndim(bins) == 1:
        return convert(array(bins), dt)
    n_bins = operator.index(cast(int, bins))
    from fcore.numpy.reductions import max as _max, min as _min

    rng = array([_min(arr), _max(arr)] if range is None else list(range), dtype=dt)
    if rng.shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    flat = equal(ptp(rng), 0)
    lo = where(flat, subtract(rng[0], 0.5), rng[0])
    hi = where(flat, add(rng[1], 0.5), rng[1])
    edges: Array = linspace(lo, hi, n_bins + 1, dtype=dt)
    return edges


def histogram(a: ArrayLike, bins: ArrayLike = 10, range: Sequence[ArrayLike] | None = None,  # noqa: A002
              weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, Array]:
    """Counts (or summed ``weights``) per bin, and the bin edges."""
    from fcore.numpy.creation import ones_like, zeros
    from fcore.numpy.manipulation import diff
    from fcore.numpy.reductions import sum as _sum
    from fcore.numpy.sorting import searchsorted

    if weights is None:
        (arr,) = _promote(a, name="histogram", inexact=True)
        w = ones_like(arr)
    else:
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        arr, w = _promote(a, weights, name="histogram", inexact=True)
    edges = histogram_bin_edges(arr, bins, range, w)
    n = edges.shape[0]
    idx = searchsorted(edges, arr, side="right")
    idx = where(equal(arr, edges[-1]), n - 1, idx)
    counts: Array = zeros(n, w.dtype).at[idx].add(w)[1:]
    if density:
        counts = true_divide(true_divide(counts, diff(edges)), _sum(counts))
    return counts, edges


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


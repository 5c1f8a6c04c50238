"""Histograms of ``fcore.numpy``: ``histogram``, ``histogram_bin_edges``, ``histogram2d`` and
``histogramdd`` — ``jnp``'s formulas (the number of bins must be static; with it they work
under ``jit``)."""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray, convert, promote_dtypes, to_inexact
from fcore.numpy.ufuncs_binary import add, subtract, true_divide
from fcore.numpy.numerical import _ndim
from fcore.numpy.ufuncs_logic import equal, where


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
        (arr,) = promote_dtypes(a, name="histogram", inexact=True)
        w = ones_like(arr)
    else:
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        arr, w = promote_dtypes(a, weights, name="histogram", inexact=True)
    edges = histogram_bin_edges(arr, bins, range, w)
    n = edges.shape[0]
    idx = searchsorted(edges, arr, side="right")
    idx = where(equal(arr, edges[-1]), n - 1, idx)
    counts: Array = zeros(n, w.dtype).at[idx].add(w)[1:]
    if density:
        counts = true_divide(true_divide(counts, diff(edges)), _sum(counts))
    return counts, edges


def histogramdd(sample: ArrayLike, bins: ArrayLike | list[ArrayLike] = 10,
                range: Sequence[None | Array | Sequence[ArrayLike]] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, list[Array]]:
    """The ``D``-dimensional histogram of ``N`` points ``sample[N, D]``, and the bin edges of
    each dimension."""
    from fcore.numpy.index_tricks import ix_, ravel_multi_index
    from fcore.numpy.manipulation import diff
    from fcore.numpy.reductions import sum as _sum
    from fcore.numpy.searching import bincount
    from fcore.numpy.sorting import searchsorted

    if weights is None:
        (pts,) = promote_dtypes(asarray(sample, "histogramdd"), name="histogramdd", inexact=True)
        w: Array | None = None
    else:
        s_arr, w_arr = asarray(sample, "histogramdd"), asarray(weights, "histogramdd", 1)
        if w_arr.shape != s_arr.shape[:1]:
            raise ValueError("should have one weight for each sample.")
        pts, w = promote_dtypes(s_arr, w_arr, name="histogramdd", inexact=True)
    n, d = pts.shape
    if range is not None and (len(range) != d or any(r is not None and np.shape(cast(Any, r))[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; got range={range}")
    try:
        bins_per_dim = list(cast(Any, bins))
    except TypeError:
        bins_per_dim = d * [bins]
    else:
        if len(bins_per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    idx_by_dim: list[Array] = []
    edges_by_dim: list[Array] = []
    for i in builtins.range(d):
        column = pts[:, i]
        edges = histogram_bin_edges(column, bins_per_dim[i], None if range is None else cast(Any, range[i]), w)
        idx = searchsorted(edges, column, side="right")
        idx_by_dim.append(where(equal(column, edges[-1]), subtract(idx, 1), idx))
        edges_by_dim.append(edges)
    nbins = tuple(e.shape[0] + 1 for e in edges_by_dim)
    flat = ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    hist = bincount(flat, w, length=math.prod(nbins)).reshape(nbins)
    hist = hist[d * (slice(1, -1),)]
    if density:
        hist = true_divide(hist.astype(pts.dtype), _sum(hist))
        for norm in ix_(*(diff(e) for e in edges_by_dim)):
            hist = true_divide(hist, norm)
    return hist, edges_by_dim


def histogram2d(x: ArrayLike, y: ArrayLike, bins: ArrayLike | list[ArrayLike] = 10,
                range: Sequence[None | Array | Sequence[ArrayLike]] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, Array, Array]:
    """The 2-D histogram of the points ``(x[i], y[i])``, and the bin edges along x and y."""
    from fcore.numpy.creation import asarray as to_array
    from fcore.numpy.shape_ops import stack

    xa, ya = asarray(x, "histogram2d"), asarray(y, "histogram2d", 1)
    try:
        count = len(cast(Any, bins))
    except TypeError:
        count = 1
    if count not in (1, 2):
        edges = to_array(bins)
        bins = [edges, edges]
    hist, edges_xy = histogramdd(stack([xa, ya], axis=1), bins, range, weights, density)
    return hist, edges_xy[0], edges_xy[1]

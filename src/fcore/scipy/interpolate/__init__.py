"""``fcore.scipy.interpolate``: ``RegularGridInterpolator``, linear and nearest-neighbour
interpolation on a rectilinear grid (JAX's port of SciPy's class, a pytree)."""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import asarray
from fcore.scipy._util import promote_dtypes_inexact
from fcore.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _ndim_coords_from_arrays(points: Any, ndim: int | None = None) -> Array:
    """The sample points as one ``(..., ndim)`` array (a tuple holds one array per axis)."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        parts = fnp.broadcast_arrays(*points)
        for other in parts[1:]:
            if other.shape != parts[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        out = fnp.empty(parts[0].shape + (len(points),), dtype=float)
        for j, item in enumerate(parts):
            out = out.at[..., j].set(item)
        return out
    out = asarray(points, "_ndim_coords_from_arrays", 0)
    if out.ndim == 1:
        out = out.reshape(-1, 1) if ndim is None else out.reshape(-1, ndim)
    return out


class RegularGridInterpolator:
    """Interpolation on a regular grid in arbitrary dimensions.

    ``points`` holds the grid's coordinates along each axis (strictly ascending), ``values``
    the data on the grid; calling the interpolator with sample points ``xi`` (``(..., ndim)``)
    interpolates by ``method`` (``"linear"`` or ``"nearest"``); points outside the grid get
    ``fill_value`` (``None``: extrapolate). ``bounds_error=True`` is not supported, as in JAX.
    """

    def __init__(self, points: Any, values: ArrayLike, method: str = "linear", bounds_error: bool = False,
                 fill_value: ArrayLike | None = np.nan) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values_arr = asarray(values, "RegularGridInterpolator", 1)
        if len(points) > values_arr.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {values_arr.ndim} dimensions")
        (values_arr,) = promote_dtypes_inexact(values_arr)
        fill: Array | None = None
        if fill_value is not None:
            fill = asarray(fill_value, "RegularGridInterpolator", 4)
            if not fnp.can_cast(fill.dtype, values_arr.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill
        self.grid = tuple(asarray(p, "RegularGridInterpolator", 0) for p in points)
        self.values = values_arr

    def __call__(self, xi: Any, method: str | None = None) -> Array:
        """The interpolated values at ``xi`` (``method`` overrides the interpolator's)."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        points = _ndim_coords_from_arrays(xi, ndim=ndim)
        if points.shape[-1] != len(self.grid):
            raise ValueError(f"the requested sample points xi have dimension {points.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        shape = points.shape
        points = points.reshape(-1, shape[-1])
        indices, norm_distances, out_of_bounds = self._find_indices(points.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if not self.bounds_error and self.fill_value is not None:
            result = fnp.where(out_of_bounds.reshape(result.shape[:1] + (1,) * (result.ndim - 1)), self.fill_value, result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices: list[Array], norm_distances: list[Array]) -> Array:
        vslice = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        values = fnp.asarray(0.0)
        for edge_indices in product(*[[i, i + 1] for i in indices]):
            weight = fnp.asarray(1.0)
            for ei, i, yi in zip(edge_indices, indices, norm_distances):
                weight = weight * fnp.where(ei == i, 1 - yi, yi)
            values = values + self.values[edge_indices] * weight[vslice]
        return values

    def _evaluate_nearest(self, indices: list[Array], norm_distances: list[Array]) -> Array:
        return self.values[tuple(fnp.where(yi <= 0.5, i, i + 1) for i, yi in zip(indices, norm_distances))]

    def _find_indices(self, xi: Array) -> tuple[list[Array], list[Array], Array]:
        indices: list[Array] = []
        norm_distances: list[Array] = []
        out_of_bounds = fnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = fnp.searchsorted(g, x) - 1
            i = fnp.where(i < 0, 0, i)
            i = fnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                out_of_bounds = out_of_bounds | (x < g[0]) | (x > g[-1])
        return indices, norm_distances, out_of_bounds


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(children[0], children[1], aux[0], aux[1], children[2]),
)

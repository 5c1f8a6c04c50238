"""``fcore.scipy.ndimage``: ``map_coordinates``, interpolation of an array at arbitrary
coordinates (orders 0 and 1, SciPy's boundary modes), one staged program per static
``order``/``mode``/``cval``, as in JAX."""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence

import numpy as np

import fcore.numpy as fnp
from fcore import lax
from fcore.api.jit import jit
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike

__all__ = ["map_coordinates"]


def _mirror_index_fixer(index: Array, size: int) -> Array:
    s = size - 1  # half-wavelength of the triangular wave
    return fnp.abs((index + s) % (2 * s) - s)


def _reflect_index_fixer(index: Array, size: int) -> Array:
    return fnp.floor_divide(_mirror_index_fixer(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS: dict[str, Callable[[Array, int], Array]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: fnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index_fixer,
    "reflect": _reflect_index_fixer,
}

Node = tuple[Array, ArrayLike]


def _round_half_away_from_zero(a: Array) -> Array:
    return a if fnp.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nearest_indices_and_weights(coordinate: Array) -> list[Node]:
    index = _round_half_away_from_zero(coordinate).astype(np.int32)
    return [(index, coordinate.dtype.type(1))]


def _linear_indices_and_weights(coordinate: Array) -> list[Node]:
    lower = fnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _map_coordinates(input: ArrayLike, coordinates: Sequence[ArrayLike], order: int, mode: str, cval: ArrayLike) -> Array:
    input_arr = fnp.asarray(input)
    coordinate_arrs = [fnp.asarray(c) for c in coordinates]
    cval_arr = fnp.asarray(cval, input_arr.dtype)
    if len(coordinates) != input_arr.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but {len(coordinates)} != {input_arr.ndim}")
    index_fixer = _INDEX_FIXERS.get(mode)
    if index_fixer is None:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
                                  f"Currently supported modes are {set(_INDEX_FIXERS)}.")
    if order == 0:
        interp_fun = _nearest_indices_and_weights
    elif order == 1:
        interp_fun = _linear_indices_and_weights
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis: list[list[tuple[Array, Array | bool, ArrayLike]]] = []
    for coordinate, size in zip(coordinate_arrs, input_arr.shape):
        per_axis.append([(index_fixer(index, size), (0 <= index) & (index < size) if mode == "constant" else True, weight)
                         for index, weight in interp_fun(coordinate)])
    outputs = []
    for items in itertools.product(*per_axis):
        indices = tuple(item[0] for item in items)
        validities = [item[1] for item in items]
        weights = [item[2] for item in items]
        if all(valid is True for valid in validities):
            contribution = input_arr[indices]
        else:
            all_valid = functools.reduce(operator.and_, validities)
            contribution = fnp.where(all_valid, input_arr[indices], cval_arr)
        outputs.append(functools.reduce(operator.mul, weights) * contribution)
    result: Array = sum(outputs[1:], outputs[0])
    if fnp.issubdtype(input_arr.dtype, np.integer):
        result = _round_half_away_from_zero(result)
    return result.astype(input_arr.dtype)


_map_coordinates_jit = jit(_map_coordinates, static_argnums=(2, 3, 4))


def map_coordinates(input: ArrayLike, coordinates: Sequence[ArrayLike], order: int, mode: str = "constant",
                    cval: ArrayLike = 0.0) -> Array:
    """Map ``input`` to the points ``coordinates`` (one array per axis) by nearest-neighbour
    (``order=0``) or linear (``order=1``) interpolation; outside, ``mode`` decides
    (``"constant"`` gives ``cval``; ``"nearest"``, ``"wrap"``, ``"mirror"``, ``"reflect"``)."""
    return _map_coordinates_jit(input, coordinates, order, mode, cval)

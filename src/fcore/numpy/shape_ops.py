"""Shape manipulation of ``fcore.numpy``: reshape, transpose, concatenate, stack, broadcast...

Shapes are static, so all shape arithmetic is plain Python/NumPy on tuples; the data moves
only through ``fcore.lax`` structural primitives.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike
from fcore.numpy._promotion import (
    Shape,
    asarray,
    broadcast_shapes as _broadcast_shapes,
    broadcast_to as _broadcast_to,
    convert,
    normalize_axis,
    result_of,
    shape_of,
)


def _canonical_shape(shape: Any) -> Shape:
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "__index__") and not isinstance(shape, (tuple, list))):
        return (operator.index(shape),)
    return tuple(operator.index(d) for d in shape)


def shape(a: ArrayLike) -> Shape:
    """The shape of an array-like (``()`` for Python scalars)."""
    if isinstance(a, (Array, np.ndarray, np.generic)):
        return tuple(a.shape)
    if isinstance(a, (bool, int, float, complex)):
        return ()
    raise TypeError(f"shape requires ndarray or scalar arguments, got {type(a)}")


def ndim(a: ArrayLike) -> int:
    """The number of dimensions of an array-like."""
    return len(shape(a))


def size(a: ArrayLike, axis: int | None = None) -> int:
    """The number of elements (along ``axis``, if given)."""
    s = shape(a)
    if axis is None:
        return math.prod(s)
    return s[normalize_axis(axis, len(s))]


def _resolve_shape(newshape: Shape, total: int) -> Shape:
    """Replace a ``-1`` in ``newshape`` by the inferred size; check the element count."""
    neg = [i for i, d in enumerate(newshape) if d == -1]
    if len(neg) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(d < -1 for d in newshape):
        raise ValueError(f"negative dimensions not allowed in reshape: {newshape}")
    if neg:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape array of size {total} into shape {newshape}")
        newshape = tuple(total // known if d == -1 else d for d in newshape)
    if math.prod(newshape) != total:
        raise ValueError(f"cannot reshape array of size {total} into shape {newshape}")
    return newshape


def reshape(a: ArrayLike, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: bool | None = None) -> Array:
    """``a`` with a new shape (one ``-1`` is inferred); C order only (and "F")."""
    if shape is None:
        if newshape is None:
            raise TypeError("reshape() missing required argument 'shape'")
        shape = newshape
    x = asarray(a, "reshape")
    new = _resolve_shape(_canonical_shape(shape), x.size)
    if order == "F":
        rev = tuple(reversed(range(x.ndim)))
        y = lax.reshape(lax.transpose(x, rev), tuple(reversed(new))) if x.ndim else lax.reshape(x, tuple(reversed(new)))
        return lax.transpose(y, tuple(reversed(range(len(new)))))
    if order not in ("C", "A"):
        raise ValueError(f"reshape: unsupported order {order!r}")
    if new == x.shape:
        return x
    return lax.reshape(x, new)


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """The flattened (1-D) array."""
    x = asarray(a, "ravel")
    if order == "F":
        return reshape(x, (x.size,), order="F")
    return x if x.ndim == 1 else lax.reshape(x, (x.size,))


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Permute the axes (reverse them when ``axes`` is None)."""
    x = asarray(a, "transpose")
    nd = x.ndim
    perm = tuple(reversed(range(nd))) if axes is None else tuple(normalize_axis(i, nd) for i in axes)
    if sorted(perm) != list(range(nd)):
        # A TypeError, as jnp's (raised by lax.transpose).
        raise TypeError(f"transpose permutation {tuple(perm)} isn't a permutation of the dimensions of an array of shape {x.shape}")
    if perm == tuple(range(nd)):
        return x
    return lax.transpose(x, perm)


def permute_dims(a: ArrayLike, /, axes: Sequence[int]) -> Array:
    return transpose(a, axes)


def matrix_transpose(x: ArrayLike, /) -> Array:
    a = asarray(x, "matrix_transpose")
    if a.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={a.ndim}")
    perm = (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2)
    return lax.transpose(a, perm)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Exchange two axes."""
    x = asarray(a, "swapaxes")
    i, j = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Move axes to new positions, keeping the order of the others."""
    x = asarray(a, "moveaxis")
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("Inconsistent number of elements: {} vs {}".format(len(src), len(dst)))
    src = tuple(normalize_axis(s, x.ndim, "source") for s in src)
    dst = tuple(normalize_axis(d, x.ndim, "destination") for d in dst)
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(x, perm)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    x = asarray(a, "rollaxis")
    axis = normalize_axis(axis, x.ndim)
    start = start + x.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start)


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Remove size-1 axes (all of them, or those in ``axis``)."""
    x = asarray(a, "squeeze")
    if axis is None:
        dims = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        dims = tuple(sorted(normalize_axis(i, x.ndim) for i in axes))
        for d in dims:
            if x.shape[d] != 1:
                raise ValueError(
                    f"cannot select an axis to squeeze out which has size not equal to one, got shape={x.shape} and dimensions={dims}"
                )
    return lax.squeeze(x, dims) if dims else x


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Array:
    """Insert size-1 axes at the positions ``axis`` of the result."""
    x = asarray(a, "expand_dims")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_nd = x.ndim + len(axes)
    dims = tuple(sorted(normalize_axis(i, out_nd) for i in axes))
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    return lax.expand_dims(x, dims)


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """The NumPy broadcast of shapes."""
    if not shapes:
        return ()
    return _broadcast_shapes(*(_canonical_shape(s) for s in shapes))


def broadcast_to(array: ArrayLike, shape: Any) -> Array:
    """``array`` broadcast to ``shape`` (NumPy rules)."""
    x = asarray(array, "broadcast_to")
    target = _canonical_shape(shape)
    if len(target) < x.ndim:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={x.shape} shape={target}")
    return _broadcast_to(x, target)


def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """All arguments broadcast to their common shape."""
    arrays = [asarray(a, "broadcast_arrays", i) for i, a in enumerate(args)]
    if not arrays:
        return []
    target = _broadcast_shapes(*(a.shape for a in arrays))
    return [_broadcast_to(a, target) for a in arrays]


def _promote_all(name: str, arrays: Sequence[ArrayLike], dtype: Any) -> list[Array]:
    if dtype is None:
        dt, weak = result_of(*arrays, name=name)
    else:
        from fcore.numpy._dtypes import canonical_dtype

        dt, weak = canonical_dtype(dtype), False
    return [convert(a, dt, weak) for a in arrays]


def concatenate(arrays: Sequence[ArrayLike] | Array | np.ndarray[Any, Any], axis: int | None = 0, dtype: Any = None) -> Array:
    """Join arrays along an existing axis (flattening them first when ``axis`` is None)."""
    if isinstance(arrays, (Array, np.ndarray)):
        return concatenate([arrays[i] for i in range(len(arrays))], axis, dtype)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    xs = _promote_all("concatenate", arrays, dtype)
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    for x in xs[1:]:
        if x.ndim != nd:
            raise TypeError(  # as jnp's, which lax.concatenate raises
                f"Cannot concatenate arrays with different numbers of dimensions: got {', '.join(str(x.shape) for x in xs)}."
            )
    ax = normalize_axis(axis, nd)
    if len(xs) == 1:
        return xs[0]
    return lax.concatenate(xs, ax)


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Array:
    return concatenate(arrays, axis)


def stack(arrays: Sequence[ArrayLike] | Array | np.ndarray[Any, Any], axis: int = 0, out: None = None, dtype: Any = None) -> Array:
    """Join arrays of one shape along a new axis."""
    if isinstance(arrays, (Array, np.ndarray)):
        return stack([arrays[i] for i in range(len(arrays))], axis, out, dtype)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("All input arrays must have the same shape.")
    xs = _promote_all("stack", arrays, dtype)
    return lax.stack(xs, normalize_axis(axis, xs[0].ndim + 1))


def atleast_1d(*arys: ArrayLike) -> Any:
    """Arrays with at least one dimension (one array, or a list of them)."""
    out = [x if x.ndim >= 1 else lax.reshape(x, (1,)) for x in (asarray(a, "atleast_1d") for a in arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: ArrayLike) -> Any:
    """Arrays with at least two dimensions (a 1-D array becomes a row)."""
    out: list[Array] = []
    for a in arys:
        x = asarray(a, "atleast_2d")
        if x.ndim == 0:
            x = lax.reshape(x, (1, 1))
        elif x.ndim == 1:
            x = lax.expand_dims(x, (0,))
        out.append(x)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: ArrayLike) -> Any:
    out: list[Array] = []
    for a in arys:
        x = asarray(a, "atleast_3d")
        if x.ndim == 0:
            x = lax.reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = lax.expand_dims(x, (0, 2))
        elif x.ndim == 2:
            x = lax.expand_dims(x, (2,))
        out.append(x)
    return out[0] if len(out) == 1 else out


def hstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Array:
    """Stack horizontally (along axis 1; axis 0 for 1-D inputs)."""
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype)


def vstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Array:
    """Stack vertically (along axis 0, after making inputs at least 2-D)."""
    return concatenate([atleast_2d(a) for a in tup], 0, dtype)




def dstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Array:
    return concatenate([atleast_3d(a) for a in tup], 2, dtype)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    arrs = []
    for a in tup:
        x = asarray(a, "column_stack")
        arrs.append(lax.reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return concatenate(arrs, 1)


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    x = asarray(m, "flip")
    if axis is None:
        dims = tuple(range(x.ndim))
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        dims = tuple(normalize_axis(a, x.ndim) for a in axes)
    return lax.rev(x, dims) if dims else x


def fliplr(m: ArrayLike) -> Array:
    return flip(m, 1)


def flipud(m: ArrayLike) -> Array:
    return flip(m, 0)


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Repeat the whole array ``reps`` times along each axis."""
    x = asarray(A, "tile")
    r = (operator.index(reps),) if isinstance(reps, (int, np.integer)) else tuple(operator.index(i) for i in reps)
    nd = max(x.ndim, len(r))
    r = (1,) * (nd - len(r)) + r
    x = lax.reshape(x, (1,) * (nd - x.ndim) + x.shape) if x.ndim < nd else x
    # Broadcast each axis i of size n to (r_i, n), then merge.
    inter: list[int] = []
    dims: list[int] = []
    for i, (rep, n) in enumerate(zip(r, x.shape)):
        inter += [rep, n]
        dims.append(2 * i + 1)
    y = lax.broadcast_in_dim(x, tuple(inter), tuple(dims))
    return lax.reshape(y, tuple(rep * n for rep, n in zip(r, x.shape)))



def repeat(a: ArrayLike, repeats: int | Array | np.ndarray[Any, Any], axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Array:
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array when None).

    ``repeats`` must be concrete unless ``total_repeat_length`` is given; then the result has
    that length (truncated, or padded by repeating the last element), as in ``jnp.repeat``.
    """
    x = asarray(a, "repeat")
    if axis is None:
        x = ravel(x)
        axis = 0
    if total_repeat_length is None:
        from fcore.numpy.searching import concrete

        if isinstance(repeats, Array):
            reps_host = concrete(
                repeats,
                "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix this, "
                "either specify a static value for `repeats`, or pass a static value to `total_repeat_length`",
            )
        elif isinstance(repeats, (int, np.integer, np.ndarray)):
            reps_host = np.asarray(repeats)
        else:
            raise TypeError(f"repeat requires ndarray or scalar arguments, got {type(repeats)} at position 1.")
        if reps_host.ndim == 0 and x.ndim != 0:
            return _repeat_scalar(x, operator.index(reps_host.item()), normalize_axis(axis, x.ndim))
        flat = np.ravel(reps_host)
        if x.ndim != 0:
            flat = np.broadcast_to(flat, (x.shape[normalize_axis(axis, x.ndim)],))
        total = int(np.sum(flat))
        reps: Array = _asarray_int(flat)
    else:
        total = operator.index(total_repeat_length)
        r = asarray(repeats, "repeat", 1)
        reps = ravel(r)
        if x.ndim != 0:
            reps = _broadcast_to(reps, (x.shape[normalize_axis(axis, x.ndim)],))
    if x.ndim == 0:
        if reps.shape == (1,):
            from fcore.numpy.creation import full

            return full((total,), x)
        raise ValueError(
            "`repeat` with a scalar parameter `a` is only implemented for scalar values of the parameter `repeats`."
        )
    ax = normalize_axis(axis, x.ndim)
    if total == 0:
        from fcore.numpy.creation import zeros

        return zeros(x.shape[:ax] + (0,) + x.shape[ax + 1:], x.dtype)
    if x.shape[ax] == 0:
        return x
    return _repeat_general(x, reps, total, ax)


def _asarray_int(values: np.ndarray[Any, Any]) -> Array:
    from fcore.interpreters.array import ArrayImpl
    from fcore.ir import dtypes

    return ArrayImpl(values.astype(dtypes.default_int_dtype()), False)


def _repeat_scalar(x: Array, rep: int, ax: int) -> Array:
    shp = x.shape
    inter = shp[: ax + 1] + (rep,) + shp[ax + 1:]
    dims = tuple(range(ax + 1)) + tuple(range(ax + 2, len(inter)))
    y = lax.broadcast_in_dim(x, inter, dims)
    return lax.reshape(y, shp[:ax] + (shp[ax] * rep,) + shp[ax + 1:])


def _repeat_general(x: Array, reps: Array, total: int, ax: int) -> Array:
    """jnp's scheme: mark where each element's block starts, and take by the running count."""
    from fcore.interpreters.array import ArrayImpl
    from fcore.ir import dtypes
    from fcore.numpy.creation import zeros
    from fcore.numpy.indexing import take
    from fcore.numpy.reductions import cumsum

    exclusive = roll(reps, 1).at[0].set(0)
    starts = cumsum(exclusive)
    indicators = zeros((total,), dtypes.int32).at[starts].add(1)
    gather = lax.sub(cumsum(indicators), ArrayImpl(np.ones((), np.int32), False))
    return take(x, gather, axis=ax)


def split(ary: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """Split into equal sections, or at the given indices (static)."""
    x = asarray(ary, "split")
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = operator.index(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError("array split does not result in an equal division")
        cuts = [i * (n // k) for i in range(k + 1)]
    else:
        cuts = [0, *(min(max(operator.index(i) if i >= 0 else n + operator.index(i), 0), n) for i in indices_or_sections), n]
    return lax.split(x, [max(s, e) - s for s, e in zip(cuts[:-1], cuts[1:])], ax)


def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    x = asarray(ary, "array_split")
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = operator.index(indices_or_sections)
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        cuts = [0]
        for s in sizes:
            cuts.append(cuts[-1] + s)
        return [lax.slice_in_dim(x, s, e, axis=ax) for s, e in zip(cuts[:-1], cuts[1:])]
    return split(x, indices_or_sections, axis)


def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    x = asarray(ary, "hsplit")
    return split(x, indices_or_sections, 0 if x.ndim == 1 else 1)


def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    return split(ary, indices_or_sections, 0)


def roll(a: ArrayLike, shift: int | Sequence[int], axis: int | Sequence[int] | None = None) -> Array:
    """Roll elements along ``axis`` (static shifts)."""
    x = asarray(a, "roll")
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(ax, x.ndim)
        n = x.shape[ax]
        if n == 0:
            continue
        k = operator.index(s) % n
        if k:
            x = lax.concatenate(
                [lax.slice_in_dim(x, n - k, n, axis=ax), lax.slice_in_dim(x, 0, n - k, axis=ax)], ax
            )
    return x


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: a Python/NumPy scalar or a 0-d array."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array)):
        return element.ndim == 0
    return False


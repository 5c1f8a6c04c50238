"""``fnp.ufunc``, ``fnp.frompyfunc``, and the functions ``jnp`` makes ufunc objects (``add``,
``multiply``, ``maximum``, ``logical_and``, ... and ``negative``): callables that also carry
``nin``/``nout``/``identity`` and the ``reduce``, ``accumulate``, ``at``, ``reduceat`` and
``outer`` methods, as NumPy's ufuncs do.

A method without a dedicated implementation is derived from the scalar function as ``jnp``
derives it: ``reduce`` and ``reduceat`` with a ``fori_loop``, ``accumulate`` with a ``scan``,
``at`` with a ``scan`` over the indices, ``outer`` with two nested ``vmap`` calls. The
library's own code calls the plain functions (``fcore.numpy.ufuncs_binary.add``), so it does
not pay for the object.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from fcore import lax
from fcore.api.vectorize import vmap
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy import ufuncs_binary as _binary, ufuncs_logic as _logic, ufuncs_unary as _unary
from fcore.numpy._dtypes import canonical_dtype
from fcore.numpy._promotion import asarray, broadcast_to, normalize_axis
from fcore.numpy._ufunc_helpers import _promote_inexact1
from fcore.numpy.creation import full
from fcore.numpy.indexing import at as _at
from fcore.numpy.manipulation import append
from fcore.numpy.reductions import _cast_to_bool, _reduction, cumprod, cumsum, max as _max, prod, sum as _sum
from fcore.numpy.shape_ops import moveaxis, ravel
from fcore.numpy.vectorize import vectorize

_AT_INPLACE_WARNING = """\
Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like
np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.
>>> arr = jnp.add.at(arr, ind, val, inplace=False)
"""

Func = Callable[..., Any]


class ufunc:  # noqa: N801  # NumPy's name
    """A universal function: ``func`` applied elementwise to broadcast arrays, with NumPy's
    ufunc attributes and methods. ``call``, ``reduce``, ``accumulate``, ``at`` and ``reduceat``
    optionally give faster implementations than the generic ones derived from ``func``."""

    def __init__(self, func: Func, /, nin: int, nout: int, *, name: str | None = None, nargs: int | None = None,
                 identity: Any = None, call: Func | None = None, reduce: Func | None = None,
                 accumulate: Func | None = None, at: Func | None = None, reduceat: Func | None = None) -> None:
        self.__doc__ = func.__doc__
        self.__name__: str = name or func.__name__
        self._func = func
        self._nin = operator.index(nin)
        self._nout = operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._call = call or self._call_vectorized
        self._reduce = reduce
        self._accumulate = accumulate
        self._at = at
        self._reduceat = reduceat

    nin = property(lambda self: self._nin, doc="Number of inputs.")
    nout = property(lambda self: self._nout, doc="Number of outputs.")
    nargs = property(lambda self: self._nargs, doc="Number of arguments.")
    identity = property(lambda self: self._identity, doc="The identity of the operation, or None.")

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: ArrayLike, out: None = None, where: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return self._call(*args)

    def _call_vectorized(self, *args: ArrayLike) -> Any:
        for i, a in enumerate(args):
            asarray(a, self.__name__, i)  # TypeError for non-array-likes, as jnp
        return vectorize(self._func)(*args)

    def _binary_only(self, method: str) -> None:
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, *args: Array) -> Any:
        ones = [lax.full((), 1, a.dtype) for a in args]
        return asarray(self._func(*ones)).dtype

    def reduce(self, a: ArrayLike, axis: int | None = 0, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
        """The reduction of ``a`` along ``axis`` by this binary ufunc (``jnp.add.reduce`` is ``sum``)."""
        arr = asarray(a, f"{self.__name__}.reduce")
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            asarray(initial, f"{self.__name__}.reduce")
        if where is not None:
            w = asarray(where, f"{self.__name__}.reduce")
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                                 "so to use a where mask one has to specify 'initial'.")
            if w.dtype != np.dtype(bool):
                raise ValueError(f"where argument must have dtype=bool; got dtype={w.dtype}")
        reduce = self._reduce or self._reduce_via_loop
        out_: Array = reduce(arr, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        return out_

    def _reduce_via_loop(self, arr: Array, axis: int | tuple[int, ...] | None = 0, dtype: Any = None,
                         keepdims: bool = False, initial: ArrayLike | None = None,
                         where: ArrayLike | None = None) -> Array:
        init = self._identity if initial is None else initial
        dt = self._result_dtype(arr, arr) if dtype is None else canonical_dtype(dtype)
        w = None if where is None else broadcast_to(asarray(where), arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape: tuple[int, ...] = (1,) * arr.ndim if keepdims else ()
            arr, w, ax = ravel(arr), None if w is None else ravel(w), 0
        else:
            ax = normalize_axis(axis, arr.ndim)
            final_shape = (*arr.shape[:ax], 1, *arr.shape[ax + 1:]) if keepdims else (*arr.shape[:ax], *arr.shape[ax + 1:])
        if ax != 0:
            arr = moveaxis(arr, ax, 0)
            w = None if w is None else moveaxis(w, ax, 0)
        if arr.shape[0] == 0:
            if init is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            return full(final_shape, init, dt)
        mask = w

        def body(i: Array, val: Array) -> Array:
            new = self(val, arr[i].astype(dt))
            return new if mask is None else _logic.where(mask[i], new, val)

        start = 1 if init is None else 0
        start_value = broadcast_to(asarray(arr[0] if init is None else init).astype(dt), arr.shape[1:])
        result: Array = lax.fori_loop(start, arr.shape[0], body, start_value)
        return result.reshape(final_shape) if keepdims else result

    def accumulate(self, a: ArrayLike, axis: int = 0, dtype: Any = None, out: None = None) -> Array:
        """The running reduction along ``axis`` (``jnp.add.accumulate`` is ``cumsum``)."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        accumulate = self._accumulate or self._accumulate_via_scan
        result: Array = accumulate(a, axis=axis, dtype=dtype)
        return result

    def _accumulate_via_scan(self, a: ArrayLike, axis: Any = 0, dtype: Any = None) -> Array:
        arr = asarray(a, f"{self.__name__}.accumulate")
        dt = self._result_dtype(arr, arr) if dtype is None else canonical_dtype(dtype)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        ax = normalize_axis(axis, arr.ndim)
        if arr.size == 0:
            return full(arr.shape, 0, dt)
        arr = moveaxis(arr, ax, 0)

        def step(carry: tuple[Array, Array], _: Any) -> tuple[tuple[Array, Array], Array]:
            i, x = carry
            y = _logic.where(i == 0, arr[0].astype(dt), self(x.astype(dt), arr[i].astype(dt)))
            return (i + 1, y), y

        _, result = lax.scan(step, (asarray(0), arr[0].astype(dt)), None, length=arr.shape[0])
        return moveaxis(result, 0, ax)

    def at(self, a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *, inplace: bool = True) -> Array:
        """``a`` with this ufunc applied at ``indices`` (unbuffered: repeated indices accumulate);
        fcore arrays are immutable, so ``inplace=False`` is required and the result returned."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE_WARNING)
        at = self._at or self._at_via_scan
        result: Array = at(a, indices) if b is None else at(a, indices, b)
        return result

    def _at_via_scan(self, a: ArrayLike, indices: Any, *args: ArrayLike) -> Array:
        x = asarray(a, f"{self.__name__}.at")
        vals = [asarray(v, f"{self.__name__}.at", 1) for v in args]
        dt = self._result_dtype(x, *vals)
        x = x.astype(dt)
        vals = [v.astype(dt) for v in vals]
        idx = indices if isinstance(indices, tuple) else (indices,)
        if not idx:
            return x
        shapes = [np.shape(i) for i in idx if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return _at(x)[indices].set(self(_at(x)[indices].get(), *vals))
        n = math.prod(shape)
        if vals:
            v0 = broadcast_to(vals[0], (*shape, *vals[0].shape[len(shape):]))
            vals = [v0.reshape(n, *vals[0].shape[len(shape):])]
        flat = [i if isinstance(i, slice) else ravel(broadcast_to(asarray(i), shape)) for i in idx]

        def step(carry: tuple[Array, Array], _: Any) -> tuple[tuple[Array, Array], None]:
            i, arr = carry
            where = tuple(j if isinstance(j, slice) else j[i] for j in flat)
            arr = _at(arr)[where].set(self(_at(arr)[where].get(), *(v[i] for v in vals)))
            return (i + 1, arr), None

        (_, result), _ = lax.scan(step, (asarray(0), x), None, length=n)
        out: Array = result
        return out

    def reduceat(self, a: ArrayLike, indices: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Array:
        """Reductions of ``a`` between consecutive ``indices`` along ``axis``."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        reduceat = self._reduceat or self._reduceat_via_loop
        result: Array = reduceat(a, indices, axis=axis, dtype=dtype)
        return result

    def _reduceat_via_loop(self, a: ArrayLike, indices: Any, axis: Any = 0, dtype: Any = None) -> Array:
        from fcore.numpy.indexing import take

        arr = asarray(a, f"{self.__name__}.reduceat")
        ind = asarray(indices, f"{self.__name__}.reduceat", 1)
        if arr.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={arr.shape}")
        if ind.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape={ind.shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        ax = normalize_axis(axis, arr.ndim)
        out = take(arr, ind, axis=ax)
        bounds = lax.expand_dims(append(ind, arr.shape[ax]), tuple(d for d in range(out.ndim) if d != ax))
        start = lax.slice_in_dim(bounds, 0, bounds.shape[ax] - 1, axis=ax)
        end = lax.slice_in_dim(bounds, 1, bounds.shape[ax], axis=ax)

        def body(i: Array, acc: Array) -> Array:
            inside = _logic.logical_and(i > start, i < end)
            return _logic.where(inside, self(acc, take(arr, lax.expand_dims(i, (0,)), axis=ax)), acc)

        result: Array = lax.fori_loop(0, arr.shape[ax], body, out)
        return result

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Array:  # noqa: N803  # NumPy's names
        """This binary ufunc applied to every pair of elements of ``A`` and ``B``."""
        self._binary_only("outer")
        a, b = asarray(A, f"{self.__name__}.outer"), asarray(B, f"{self.__name__}.outer", 1)
        result: Array = vmap(vmap(self, (None, 0)), (0, None))(ravel(a), ravel(b))
        return result.reshape(*a.shape, *b.shape)


def frompyfunc(func: Func, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A ``ufunc`` from a scalar function of ``nin`` arguments (vectorized with ``vmap``)."""
    return ufunc(func, nin, nout, identity=identity)


# -- the ufuncs of fnp ---------------------------------------------------------------------
def _add_at(a: ArrayLike, indices: Any, b: ArrayLike) -> Array:
    x = asarray(a, "add.at")
    if x.dtype == np.dtype(bool):
        y = lax.convert_element_type(asarray(b), bool).astype("int32")
        return _at(x.astype("int32"))[indices].add(y).astype(bool)
    return _at(x)[indices].add(b)


def _multiply_at(a: ArrayLike, indices: Any, b: ArrayLike) -> Array:
    x = asarray(a, "multiply.at")
    if x.dtype == np.dtype(bool):
        y = lax.convert_element_type(asarray(b), bool).astype("int32")
        return _at(x.astype("int32"))[indices].multiply(y).astype(bool)
    return _at(x)[indices].multiply(b)


def _subtract_at(a: ArrayLike, indices: Any, b: ArrayLike) -> Array:
    return _at(asarray(a, "subtract.at"))[indices].subtract(b)


def _require_integer(x: Array) -> Array:
    if not (dtypes.is_bool(x.dtype) or dtypes.is_integer(x.dtype)):
        raise ValueError(f"integer argument required; got dtype={x.dtype}")
    return x


def _reducer(name: str, op: Callable[[ArrayLike, tuple[int, ...]], Array], identity: Any, binary: Callable[[Array, Array], Array],
             preproc: Callable[[Array], Array], has_identity: bool = True) -> Func:
    def reduce(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
        arr = asarray(a, name)
        # The identity in the accumulation dtype: -1 is all bits set, True for bools (as jnp).
        ident = np.asarray(identity).astype(arr.dtype if dtype is None else canonical_dtype(dtype)) if identity == -1 else identity
        return _reduction(arr, name, op, op, ident, has_identity=has_identity, axis=axis, dtype=dtype, keepdims=keepdims,
                          initial=initial, where_=where, preproc=preproc, binary=binary)

    return reduce


def _same(x: Array) -> Array:
    return x


def _logsumexp(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """``log(sum(exp(a)))`` without overflow (``jnp.logaddexp.reduce``; ``dtype`` is ignored, as in jnp)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp.reduce is not supported.")
    if dtype is not None:
        canonical_dtype(dtype)
    from fcore.numpy._promotion import normalize_axes
    from fcore.numpy.ufuncs_parts import real

    x = _promote_inexact1(a, "logsumexp")
    dims = normalize_axes(axis, x.ndim)
    amax = _max(real(x), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select_n(lax.is_finite(amax), lax.full_like(amax, 0), amax))
    amax_dims = amax if keepdims else lax.expand_dims(amax, dims)
    sumexp = _sum(lax.exp(_binary.subtract(x, amax_dims.astype(x.dtype))), axis=dims, keepdims=keepdims, where=where)
    result = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    return result if initial is None else _binary.logaddexp(initial, result)


def _logsumexp2(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
                initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """``log2(sum(2 ** a))`` via ``logsumexp`` (``jnp.logaddexp2.reduce``)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp2.reduce is not supported.")
    ln2 = float(np.log(2))
    init = None if initial is None else _binary.multiply(initial, ln2)
    return _binary.true_divide(_logsumexp(_binary.multiply(a, ln2), axis=axis, dtype=dtype, keepdims=keepdims,
                                          where=where, initial=init), ln2)


class _BinaryUfunc(ufunc):
    """The binary ufuncs of fnp: called with two array-likes, they return one array."""

    # Narrower than ufunc.__call__(*args): exactly two operands, so the result type is known.
    def __call__(self, x: ArrayLike, y: ArrayLike, /, *, out: None = None, where: None = None) -> Array:  # type: ignore[override]
        if out is not None or where is not None:
            raise NotImplementedError(f"{'out' if out is not None else 'where'} argument of {self}")
        result: Array = self._call(x, y)
        return result


class _UnaryUfunc(ufunc):
    """The unary ufunc of fnp (``negative``)."""

    # Narrower than ufunc.__call__(*args): exactly one operand.
    def __call__(self, x: ArrayLike, /, *, out: None = None, where: None = None) -> Array:  # type: ignore[override]
        if out is not None or where is not None:
            raise NotImplementedError(f"{'out' if out is not None else 'where'} argument of {self}")
        result: Array = self._call(x)
        return result


def _binary_ufunc(func: Func, identity: Any, reduce: Func | None = None, accumulate: Func | None = None,
                  at: Func | None = None) -> _BinaryUfunc:
    return _BinaryUfunc(func, name=func.__name__, nin=2, nout=1, identity=identity, call=func, reduce=reduce,
                        accumulate=accumulate, at=at)


def _reduce_extremum(name: str, op: Callable[[ArrayLike, tuple[int, ...]], Array], binary: Callable[[Array, Array], Array],
                     identity: float) -> Func:
    return _reducer(name, op, identity, binary, _same, has_identity=False)


add = _binary_ufunc(_binary.add, 0, _sum, cumsum, _add_at)
multiply = _binary_ufunc(_binary.multiply, 1, prod, cumprod, _multiply_at)
subtract = _binary_ufunc(_binary.subtract, None, at=_subtract_at)
maximum = _binary_ufunc(_binary.maximum, None, _reduce_extremum("max", lax.reduce_max, lax.max, -np.inf))
minimum = _binary_ufunc(_binary.minimum, None, _reduce_extremum("min", lax.reduce_min, lax.min, np.inf))
bitwise_and = _binary_ufunc(_logic.bitwise_and, -1, _reducer("reduce_bitwise_and", lax.reduce_and, -1, lax.and_, _require_integer))
bitwise_or = _binary_ufunc(_logic.bitwise_or, 0, _reducer("reduce_bitwise_or", lax.reduce_or, 0, lax.or_, _require_integer))
bitwise_xor = _binary_ufunc(_logic.bitwise_xor, 0, _reducer("reduce_bitwise_xor", lax.reduce_xor, 0, lax.xor, _require_integer))
logical_and = _binary_ufunc(_logic.logical_and, True, _reducer("reduce_logical_and", lax.reduce_and, True, lax.and_, _cast_to_bool))
logical_or = _binary_ufunc(_logic.logical_or, False, _reducer("reduce_logical_or", lax.reduce_or, False, lax.or_, _cast_to_bool))
logical_xor = _binary_ufunc(_logic.logical_xor, False, _reducer("reduce_logical_xor", lax.reduce_xor, False, lax.xor, _cast_to_bool))
logaddexp = _binary_ufunc(_binary.logaddexp, -np.inf, _logsumexp)
logaddexp2 = _binary_ufunc(_binary.logaddexp2, -np.inf, _logsumexp2)
negative = _UnaryUfunc(_unary.negative, name="negative", nin=1, nout=1, call=_unary.negative)

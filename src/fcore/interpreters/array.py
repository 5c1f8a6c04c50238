"""``fcore.Array``: the abstract array type shared by concrete arrays and tracers.

As in JAX, ``isinstance(x, fcore.Array)`` holds for concrete arrays and for tracers,
so user code can be annotated with ``fcore.Array`` throughout. Operators and methods
dispatch to the NumPy layer through a table that ``fcore.numpy`` fills when it is
imported (this layer cannot import the layers above it).
"""

from __future__ import annotations

import abc
from types import NotImplementedType
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np

from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType

ArrayMethod = Callable[..., "Array"]
_methods: dict[str, ArrayMethod] = {}
#: Puts a host-only array on the default device (installed by ``fcore.lax.call``).
_device_placer: list[Callable[["ArrayImpl"], "DeviceValue"]] = []
#: How arrays report their sharding and shards (installed by ``fcore.api.placement``).
_sharding_views: list["ShardingView"] = []


#: Operators whose implementation takes the array first: once ``fcore.numpy`` provides them
#: they are installed on ``Array`` itself, so each use skips the ``_m`` lookup (the eager
#: hot path). The class body's definitions stay as their typed documentation.
_DIRECT_OPERATORS = {
    "__neg__": "negative", "__abs__": "abs", "__invert__": "invert", "__add__": "add",
    "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "true_divide",
    "__floordiv__": "floor_divide", "__mod__": "remainder", "__pow__": "power", "__matmul__": "matmul",
    "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__lshift__": "left_shift",
    "__rshift__": "right_shift", "__lt__": "less",
    "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal", "__eq__": "equal",
    "__ne__": "not_equal", "__getitem__": "getitem",
}


def register_array_methods(table: dict[str, ArrayMethod]) -> None:
    """Install the implementations of operators/methods (called by ``fcore.numpy``)."""
    _methods.update(table)
    for dunder, name in _DIRECT_OPERATORS.items():
        if name in table:
            setattr(Array, dunder, table[name])


def register_device_placer(place: Callable[[ArrayImpl], DeviceValue]) -> None:
    """Install how ``ArrayImpl.device`` gets a device copy (this layer cannot import the backend)."""
    _device_placer[:] = [place]


class ShardingView(Protocol):
    """What ``fcore.api.placement`` provides: an array's sharding and its addressable shards."""

    def sharding(self, x: ArrayImpl) -> Any: ...

    def addressable_shards(self, x: ArrayImpl) -> list[Any]: ...


def register_sharding_view(view: ShardingView) -> None:
    _sharding_views[:] = [view]


def _m(name: str) -> ArrayMethod:
    try:
        return _methods[name]
    except KeyError:
        raise NotImplementedError(f"Array.{name} needs fcore.numpy to be imported") from None


class Array(abc.ABC):
    """An n-dimensional array: concrete (``ArrayImpl``) or traced (``Tracer``)."""

    __slots__ = ()
    __array_priority__ = 100

    @property
    @abc.abstractmethod
    def aval(self) -> ShapedArray: ...

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> DType:
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    # Conversions to Python scalars: concrete arrays convert, tracers may refuse.
    def __bool__(self) -> bool:
        raise NotImplementedError

    def __int__(self) -> int:
        raise NotImplementedError

    def __float__(self) -> float:
        raise NotImplementedError

    def __complex__(self) -> complex:
        raise NotImplementedError

    def __index__(self) -> int:
        raise NotImplementedError

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Array]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, other: object) -> bool:
        """``x in a`` for a 1-D ``a`` and a scalar ``x``, as jax (which rejects NumPy's oddities)."""
        if other is None or isinstance(other, str):
            raise TypeError(f"Array.__contains__: unsupported operand type {type(other)}.")
        if self.ndim != 1:
            raise ValueError(f"Array.__contains__: search array must be one-dimensional, got arr.shape={self.shape}.")
        if isinstance(other, (Array, np.ndarray, np.generic)):
            query_shape: tuple[int, ...] = other.shape
        elif isinstance(other, (bool, int, float, complex)):
            query_shape = ()
        else:
            raise TypeError(f"Array.__contains__ requires ndarray or scalar arguments, got {type(other)} at position 0.")
        if query_shape:
            raise ValueError(f"Array.__contains__: query value must be a scalar, got query.shape={query_shape}")
        return bool(_m("any")(self == other))

    # Arithmetic and comparison operators.
    def __neg__(self) -> Array: return _m("negative")(self)
    def __pos__(self) -> Array: return self
    def __abs__(self) -> Array: return _m("abs")(self)
    def __invert__(self) -> Array: return _m("invert")(self)
    def __add__(self, o: object) -> Array: return _m("add")(self, o)
    def __radd__(self, o: object) -> Array: return _m("add")(o, self)
    def __sub__(self, o: object) -> Array: return _m("subtract")(self, o)
    def __rsub__(self, o: object) -> Array: return _m("subtract")(o, self)
    def __mul__(self, o: object) -> Array: return _m("multiply")(self, o)
    def __rmul__(self, o: object) -> Array: return _m("multiply")(o, self)
    def __truediv__(self, o: object) -> Array: return _m("true_divide")(self, o)
    def __rtruediv__(self, o: object) -> Array: return _m("true_divide")(o, self)
    def __floordiv__(self, o: object) -> Array: return _m("floor_divide")(self, o)
    def __rfloordiv__(self, o: object) -> Array: return _m("floor_divide")(o, self)
    def __mod__(self, o: object) -> Array: return _m("remainder")(self, o)
    def __rmod__(self, o: object) -> Array: return _m("remainder")(o, self)
    def __pow__(self, o: object) -> Array: return _m("power")(self, o)
    def __rpow__(self, o: object) -> Array: return _m("power")(o, self)
    def __matmul__(self, o: object) -> Array: return _m("matmul")(self, o)
    def __rmatmul__(self, o: object) -> Array: return _m("matmul")(o, self)
    def __and__(self, o: object) -> Array: return _m("bitwise_and")(self, o)
    def __rand__(self, o: object) -> Array: return _m("bitwise_and")(o, self)
    def __or__(self, o: object) -> Array: return _m("bitwise_or")(self, o)
    def __ror__(self, o: object) -> Array: return _m("bitwise_or")(o, self)
    def __xor__(self, o: object) -> Array: return _m("bitwise_xor")(self, o)
    def __rxor__(self, o: object) -> Array: return _m("bitwise_xor")(o, self)
    def __lshift__(self, o: object) -> Array: return _m("left_shift")(self, o)
    def __rlshift__(self, o: object) -> Array: return _m("left_shift")(o, self)
    def __rshift__(self, o: object) -> Array: return _m("right_shift")(self, o)
    def __rrshift__(self, o: object) -> Array: return _m("right_shift")(o, self)
    def __lt__(self, o: object) -> Array: return _m("less")(self, o)
    def __le__(self, o: object) -> Array: return _m("less_equal")(self, o)
    def __gt__(self, o: object) -> Array: return _m("greater")(self, o)
    def __ge__(self, o: object) -> Array: return _m("greater_equal")(self, o)
    def __eq__(self, o: object) -> Array: return _m("equal")(self, o)  # type: ignore[override]  # elementwise, as in NumPy
    def __ne__(self, o: object) -> Array: return _m("not_equal")(self, o)  # type: ignore[override]  # elementwise, as in NumPy
    def __getitem__(self, idx: object) -> Array: return _m("getitem")(self, idx)

    def __divmod__(self, o: object) -> tuple[Array, Array] | NotImplementedType:
        q = _m("floor_divide")(self, o)
        if q is NotImplemented:
            return NotImplemented
        return q, _m("remainder")(self, o)

    def __rdivmod__(self, o: object) -> tuple[Array, Array] | NotImplementedType:
        q = _m("floor_divide")(o, self)
        if q is NotImplemented:
            return NotImplemented  # type: ignore[no-any-return]  # mypy types NotImplemented as Any outside binary dunders
        return q, _m("remainder")(o, self)

    def __round__(self, ndigits: int | None = None) -> Array:
        """``round(a)`` is an integer array, ``round(a, n)`` keeps the dtype (as jax)."""
        out = _m("round")(self, ndigits or 0)
        return out if ndigits is not None else _m("astype")(out, int)

    __hash__ = None  # type: ignore[assignment]  # arrays are unhashable, as in NumPy and JAX

    # Methods mirroring jax.Array.
    @property
    def T(self) -> Array: return _m("transpose")(self)
    @property
    def mT(self) -> Array:
        if self.ndim < 2:
            raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={self.ndim}")
        return _m("swapaxes")(self, -1, -2)
    @property
    def at(self) -> Any: return _m("at")(self)
    @property
    def real(self) -> Array: return _m("real")(self)
    @property
    def imag(self) -> Array: return _m("imag")(self)
    def conj(self) -> Array: return _m("conj")(self)
    def astype(self, dtype: Any) -> Array: return _m("astype")(self, dtype)
    def reshape(self, *shape: Any, order: str = "C") -> Array:
        new = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return _m("reshape")(self, new)
    def transpose(self, *axes: Any) -> Array:
        perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None)
        return _m("transpose")(self, perm)
    def ravel(self) -> Array: return _m("ravel")(self)
    def copy(self) -> Array:
        """A copy (values are immutable, so a traced value is its own copy)."""
        return self
    def flatten(self) -> Array: return _m("ravel")(self)
    def squeeze(self, axis: Any = None) -> Array: return _m("squeeze")(self, axis)
    def swapaxes(self, a: int, b: int) -> Array: return _m("swapaxes")(self, a, b)
    def dot(self, other: object) -> Array: return _m("dot")(self, other)
    def sum(self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            initial: Any = None, where: Any = None, promote_integers: bool = True) -> Array:
        _no_out(out)
        return _m("sum")(self, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where,
                         promote_integers=promote_integers)
    def prod(self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
             initial: Any = None, where: Any = None, promote_integers: bool = True) -> Array:
        _no_out(out)
        return _m("prod")(self, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where,
                          promote_integers=promote_integers)
    def mean(self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False, *,
             where: Any = None) -> Array:
        _no_out(out)
        return _m("mean")(self, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    def max(self, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
            where: Any = None) -> Array:
        _no_out(out)
        return _m("max")(self, axis=axis, keepdims=keepdims, initial=initial, where=where)
    def min(self, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
            where: Any = None) -> Array:
        _no_out(out)
        return _m("min")(self, axis=axis, keepdims=keepdims, initial=initial, where=where)
    def all(self, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None) -> Array:
        _no_out(out)
        return _m("all")(self, axis=axis, keepdims=keepdims, where=where)
    def any(self, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = None) -> Array:
        _no_out(out)
        return _m("any")(self, axis=axis, keepdims=keepdims, where=where)
    def argmax(self, axis: Any = None, out: None = None, keepdims: bool = False) -> Array:
        _no_out(out)
        return _m("argmax")(self, axis=axis, keepdims=keepdims)
    def argmin(self, axis: Any = None, out: None = None, keepdims: bool = False) -> Array:
        _no_out(out)
        return _m("argmin")(self, axis=axis, keepdims=keepdims)
    def var(self, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False, *,
            where: Any = None, correction: Any = None) -> Array:
        _no_out(out)
        return _m("var")(self, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, correction=correction)
    def std(self, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False, *,
            where: Any = None, correction: Any = None) -> Array:
        _no_out(out)
        return _m("std")(self, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, correction=correction)
    def cumsum(self, axis: Any = None, dtype: Any = None, out: None = None) -> Array:
        _no_out(out)
        return _m("cumsum")(self, axis=axis, dtype=dtype)
    def cumprod(self, axis: Any = None, dtype: Any = None, out: None = None) -> Array:
        _no_out(out)
        return _m("cumprod")(self, axis=axis, dtype=dtype)
    def clip(self, min: Any = None, max: Any = None, out: None = None) -> Array:
        _no_out(out)
        return _m("clip")(self, min, max)
    def round(self, decimals: int = 0, out: None = None) -> Array:
        _no_out(out)
        return _m("round")(self, decimals)
    def conjugate(self) -> Array: return _m("conj")(self)
    def sort(self, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
             descending: bool = False) -> Array:
        return _m("sort")(self, axis, order=order, stable=stable, descending=descending)
    def argsort(self, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
                descending: bool = False) -> Array:
        return _m("argsort")(self, axis, order=order, stable=stable, descending=descending)
    def argpartition(self, kth: int, axis: int = -1) -> Array: return _m("argpartition")(self, kth, axis)
    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan") -> Array:
        return _m("searchsorted")(self, v, side, sorter, method=method)
    def nonzero(self, *, fill_value: Any = None, size: int | None = None) -> Any:
        return _m("nonzero")(self, size=size, fill_value=fill_value)
    def ptp(self, axis: Any = None, out: None = None, keepdims: bool = False) -> Array:
        _no_out(out)
        return _m("ptp")(self, axis, keepdims=keepdims)
    def take(self, indices: Any, axis: int | None = None, out: None = None, mode: str | None = None,
             unique_indices: bool = False, indices_are_sorted: bool = False, fill_value: Any = None) -> Array:
        _no_out(out)
        return _m("take")(self, indices, axis, mode=mode, fill_value=fill_value)
    def repeat(self, repeats: Any, axis: int | None = None, *, total_repeat_length: int | None = None,
               out: None = None) -> Array:
        _no_out(out)
        return _m("repeat")(self, repeats, axis, total_repeat_length=total_repeat_length)
    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
        return _m("diagonal")(self, offset, axis1, axis2)
    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: None = None) -> Array:
        _no_out(out)
        return _m("trace")(self, offset, axis1, axis2, dtype)
    def compress(self, condition: Any, axis: int | None = None, *, out: None = None, size: int | None = None,
                 fill_value: Any = 0) -> Array:
        _no_out(out)
        return _m("compress")(condition, self, axis, size=size, fill_value=fill_value)
    def __setitem__(self, idx: object, value: object) -> None:
        raise TypeError(
            f"{type(self).__name__!r} object does not support item assignment. fcore arrays are immutable: "
            "instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)``."
        )


def _no_out(out: object) -> None:
    """NumPy's reductions pass ``out=None`` to the array's method; a real ``out`` cannot work
    (fcore arrays are immutable)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument is not supported: fcore arrays are immutable.")


class DeviceLike(Protocol):
    """A device as the backend names it (jaxlib's ``Device``)."""

    @property
    def id(self) -> int: ...

    @property
    def platform(self) -> str: ...


class DeviceValue(Protocol):
    """A device buffer as the backend provides it (``fcore.backend``)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def dtype(self) -> np.dtype[Any]: ...

    @property
    def device(self) -> DeviceLike: ...

    @property
    def placed(self) -> bool:
        """Whether eager operations on the value run where it lives (committed to a device
        other than the default one, or sharded), as in JAX, rather than on a host copy."""
        ...

    def to_numpy(self) -> np.ndarray[Any, Any]: ...

    def block_until_ready(self) -> object: ...

    def is_deleted(self) -> bool: ...

    def delete(self) -> None: ...


class _DeletedValue:
    """Stands in for the buffers of a deleted array: every read raises, as in jax."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self.shape = shape
        self.dtype = dtype

    def _gone(self) -> RuntimeError:
        from fcore.ir.dtypes import dtype_name

        dims = ",".join(map(str, self.shape))
        return RuntimeError(f"Array has been deleted with shape={dtype_name(self.dtype)}[{dims}].")

    @property
    def device(self) -> DeviceLike:
        raise self._gone()

    @property
    def placed(self) -> bool:
        return False  # (reading the value raises)

    def to_numpy(self) -> np.ndarray[Any, Any]:
        raise self._gone()

    def block_until_ready(self) -> object:
        raise self._gone()

    def is_deleted(self) -> bool:
        return True

    def delete(self) -> None:
        pass


def _rebuild(value: np.ndarray[Any, Any], weak_type: bool) -> ArrayImpl:
    """Unpickling: the host value and the weak type (the device copy is made on use)."""
    value.flags.writeable = False
    return ArrayImpl(value, weak_type)


class ArrayImpl(Array):
    """A concrete array: host NumPy data and/or a device buffer, plus a weak-type flag.

    Eager operations compute on the host copy; jitted calls run on the device copy.
    Whichever is missing is made on first use and kept (the value never changes), except the
    host copy of a *placed* value (committed to another device than the default one, or
    sharded): operations on it run on its devices, as JAX's do (``runs_on_device``).
    """

    __slots__ = ("_np", "_device", "_weak", "_aval")

    def __init__(
        self,
        value: np.ndarray[Any, Any] | None,
        weak_type: bool = False,
        device: DeviceValue | None = None,
        aval: ShapedArray | None = None,
    ) -> None:
        self._np = value
        self._device = device
        self._weak = weak_type
        self._aval = aval

    def runs_on_device(self) -> bool:
        """Whether eager operations on this array run on its devices (see the class docstring)."""
        device = self._device
        return self._np is None and device is not None and device.placed

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is not None:
            return aval
        host = self._np
        aval = shaped_array(host.shape, host.dtype, self._weak) if host is not None else self._device_aval()
        self._aval = aval
        return aval

    def _device_aval(self) -> ShapedArray:
        dev = self._device
        assert dev is not None
        return shaped_array(tuple(dev.shape), np.dtype(dev.dtype), self._weak)

    @property
    def shape(self) -> tuple[int, ...]:
        host = self._np
        return host.shape if host is not None else self.aval.shape

    @property
    def dtype(self) -> DType:
        host = self._np
        return host.dtype if host is not None else self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self._weak

    def host(self) -> np.ndarray[Any, Any]:
        """The value as a read-only NumPy array (copied from the device once)."""
        host = self._np
        if host is None:
            device = self._device
            assert device is not None
            host = device.to_numpy()
            if not device.placed:  # (a placed value's operations run on its devices: no host copy kept)
                self._np = host
        return host

    def __iter__(self) -> Iterator[Array]:
        """The rows, read from one host copy (no indexing operation per row), as JAX unstacks
        a concrete array; ``k, sub = random.split(k)`` is the common case."""
        host = self.host()
        if not host.shape:
            raise TypeError("iteration over a 0-d array")
        row = shaped_array(host.shape[1:], host.dtype, self._weak)
        return (ArrayImpl(np.asarray(r), self._weak, None, row) for r in host)

    def device_buffer(self) -> DeviceValue | None:
        return self._device

    def set_device_buffer(self, buf: DeviceValue) -> None:
        """Cache the device copy of this (immutable) value."""
        self._device = buf

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        host = self.host()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return host.astype(dtype)
        return host.copy() if copy else host

    def block_until_ready(self) -> ArrayImpl:
        try:
            # A one-device buffer's jaxlib array (``_array``) waits by itself: one Python call
            # less on jit's dispatch-and-wait path. Other device values wait their own way.
            self._device._array.block_until_ready()  # type: ignore[union-attr]  # a DeviceBuffer's, if it is one
        except AttributeError:
            dev = self._device
            if dev is not None:
                dev.block_until_ready()
        return self

    def copy_to_host_async(self) -> None:
        """Accepted for jax compatibility; the host copy is made when first read."""

    # Device placement and lifetime (jax.Array's methods).
    def _placed(self) -> DeviceValue:
        dev = self._device
        if dev is None:
            dev = _device_placer[0](self)
        return dev

    @property
    def device(self) -> Any:
        """The device holding this array (a host-only array is put on the default device);
        for an array over several devices, its sharding (as jax)."""
        placed = self._placed()
        if getattr(placed, "sharding", None) is not None:
            return self.sharding
        return placed.device

    def devices(self) -> set[DeviceLike]:
        placed = self._placed()
        if getattr(placed, "sharding", None) is not None:
            found: set[DeviceLike] = self.sharding.device_set
            return found
        return {placed.device}

    @property
    def sharding(self) -> Any:
        """How the array is laid over devices (``fcore.sharding``)."""
        return _sharding_views[0].sharding(self)

    @property
    def addressable_shards(self) -> list[Any]:
        """This process's pieces: ``Shard`` s with ``.device``, ``.index``, ``.data``, ``.replica_id``."""
        return _sharding_views[0].addressable_shards(self)

    @property
    def global_shards(self) -> list[Any]:
        return self.addressable_shards

    @property
    def is_fully_addressable(self) -> bool:
        return bool(self.sharding.is_fully_addressable) if self._is_sharded() else True

    @property
    def is_fully_replicated(self) -> bool:
        return bool(self.sharding.is_fully_replicated) if self._is_sharded() else True

    def _is_sharded(self) -> bool:
        return getattr(self._device, "sharding", None) is not None

    def on_device_size_in_bytes(self) -> int:
        return self.nbytes

    def addressable_data(self, index: int) -> ArrayImpl:
        """The data of addressable shard ``index``."""
        if self._is_sharded():
            data: ArrayImpl = self.addressable_shards[index].data
            return data
        if index != 0:
            raise IndexError(f"addressable_data({index}): the array lives on one device")
        return self

    def is_deleted(self) -> bool:
        dev = self._device
        return dev is not None and dev.is_deleted()

    def delete(self) -> None:
        """Free the device memory now; any later use raises ``RuntimeError``, as in jax."""
        dev = self._device
        aval = self.aval
        if dev is not None:
            dev.delete()
        self._np = None
        self._device = _DeletedValue(aval.shape, aval.dtype)

    def copy(self) -> ArrayImpl:
        """A new array with the same value (its own device copy, made on use)."""
        return ArrayImpl(self.host(), self._weak, None, self._aval)

    def __copy__(self) -> ArrayImpl:
        return self.copy()

    def __deepcopy__(self, memo: object) -> ArrayImpl:
        return self.copy()

    def __reduce__(self) -> tuple[Callable[[np.ndarray[Any, Any], bool], ArrayImpl], tuple[np.ndarray[Any, Any], bool]]:
        return (_rebuild, (np.array(self.host()), self._weak))

    def __dlpack__(self, *, stream: object = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> object:
        # NumPy refuses to export its read-only host copy without copying.
        return np.array(self.host()).__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU: the export is of the host copy

    # Conversions to Python values.
    def __bool__(self) -> bool:
        return bool(self.host())

    def __int__(self) -> int:
        return int(self.host())

    def __float__(self) -> float:
        return float(self.host())

    def __complex__(self) -> complex:
        return complex(self.host())

    def __index__(self) -> int:
        return self.host().__index__()

    def item(self, *args: int) -> Any:
        return self.host().item(*args)

    def tolist(self) -> Any:
        return self.host().tolist()

    def __format__(self, spec: str) -> str:
        return format(self.host().item() if self.ndim == 0 else self.host(), spec)

    def __repr__(self) -> str:
        """Exactly jax's ``Array.__repr__``: NumPy's layout, then the dtype (and weak type)."""
        from fcore.ir.dtypes import dtype_name

        host = self.host()
        prefix = "Array("
        dtype_str = f"dtype={dtype_name(host.dtype)}" + (", weak_type=True" if self._weak else "")
        line_width = np.get_printoptions()["linewidth"]
        if host.size == 0:
            body = f"[], shape={host.shape}"
        else:
            body = np.array2string(host, prefix=prefix, suffix=",", separator=", ", max_line_width=line_width)
        last_line_len = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line_len + len(dtype_str) + 2 > line_width else " "
        return f"{prefix}{body},{sep}{dtype_str})"

    def __str__(self) -> str:
        return str(self.host())


_new = object.__new__


def device_array(buffer: DeviceValue, weak_type: bool, aval: ShapedArray) -> ArrayImpl:
    """``ArrayImpl(None, weak_type, buffer, aval)`` without the ``__init__`` call that a class
    call makes (half the cost): how jit's cached path wraps each result."""
    x: ArrayImpl = _new(ArrayImpl)
    x._np = None
    x._device = buffer
    x._weak = weak_type
    x._aval = aval
    return x

"""Key arrays: JAX's two kinds of PRNG key, and the checks that tell them apart.

* A *raw* key (``PRNGKey(seed)``) is a ``uint32`` array whose last axis holds the two words
  of a threefry2x32 key: ``uint32[..., 2]``.
* A *typed* key (``key(seed)``) is a ``PRNGKeyArray``: an array of keys whose shape leaves
  that axis out and whose dtype is ``key<fry>``, a subtype of ``fcore.dtypes.prng_key``.

fcore's IR has no key dtype: a typed key is a pytree node whose one leaf is its ``uint32``
key data, so it passes through ``jit``, ``vmap``, ``grad`` and ``scan`` by flattening and
shows in a jaxpr as ``u32[..., 2]`` where JAX prints ``key<fry>[...]`` (docs/guide.md,
"Random numbers"). Like JAX's key arrays it supports the structural array operations
(indexing, iteration, ``reshape``, ``ravel``, ``squeeze``, ``transpose``, ``==``) and
rejects arithmetic with a ``TypeError``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import attrs
import numpy as np

from fcore import numpy as fnp
from fcore import tree_util
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import current_trace
from fcore.ir import dtypes
from fcore.ir.dtypes import ExtendedDType, prng_key
from fcore.lax._base import is_python_scalar
from fcore.random._compiled import specialize

__all__ = [
    "PRNGImpl", "THREEFRY", "KeyTy", "PRNGKeyArray", "PRNGSpec", "check_prng_key", "check_key_data", "resolve_impl",
]


@attrs.frozen
class PRNGImpl:
    """A PRNG implementation's identity: its key data shape, name and short tag."""

    key_shape: tuple[int, ...]
    name: str
    tag: str

    def __str__(self) -> str:
        return self.tag


#: The one implementation, JAX's default (``jax_default_prng_impl = "threefry2x32"``).
THREEFRY = PRNGImpl((2,), "threefry2x32", "fry")
PRNGS: dict[str, PRNGImpl] = {THREEFRY.name: THREEFRY}


class KeyTy(ExtendedDType):
    """The dtype of typed keys: ``key<fry>`` for threefry2x32."""

    type = prng_key

    def __init__(self, impl: PRNGImpl) -> None:
        self._impl = impl

    @property
    def name(self) -> str:
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:
        return math.prod(self._impl.key_shape) * 4

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return type(other) is KeyTy and self._impl == other._impl

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl))


class PRNGSpec:
    """Names a PRNG implementation (what ``key_impl`` returns for unregistered ones)."""

    __slots__ = ("_impl",)

    def __init__(self, impl: PRNGImpl) -> None:
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


def resolve_impl(spec: object) -> PRNGImpl:
    """The implementation named by ``impl=``/``dtype=`` arguments (``None``: the default)."""
    if spec is None:
        return THREEFRY
    if isinstance(spec, PRNGImpl):
        return spec
    if isinstance(spec, PRNGSpec):
        return spec._impl
    if isinstance(spec, KeyTy):
        return spec._impl
    if isinstance(spec, str):
        if spec in PRNGS:
            return PRNGS[spec]
        names = ", ".join(f'"{s}"' for s in PRNGS)
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?')
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def check_key_data(impl: PRNGImpl, data: object) -> None:
    """JAX's checks of key data: an array of ``uint32`` whose shape ends with the key shape."""
    if not all(hasattr(data, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError(
            "fcore encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype "
            f"attributes. Got {data}"
        )
    shape = tuple(getattr(data, "shape"))
    if len(shape) < 1:
        raise TypeError(f"fcore encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={len(shape)}")
    n = len(impl.key_shape)
    if shape[-n:] != impl.key_shape:
        raise TypeError(
            f"fcore encountered invalid PRNG key data: expected key_data.shape to end with {impl.key_shape}; "
            f"got shape={shape} for impl={impl.name}"
        )
    if getattr(data, "dtype") != dtypes.uint32:
        raise TypeError(
            "fcore encountered invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={getattr(data, 'dtype')}"
        )


def _as_array(data: object) -> Array:
    return data if isinstance(data, Array) else fnp.asarray(data)


class PRNGKeyArray:
    """An array of typed PRNG keys (``fcore.random.key``): key data ``uint32[*shape, 2]``
    presented as an array of ``shape`` and dtype ``key<fry>``."""

    __slots__ = ("_impl", "_base_array")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]  # mutable-array semantics, as JAX's key arrays

    _impl: PRNGImpl
    _base_array: Array

    def __init__(self, impl: PRNGImpl, key_data: object) -> None:
        check_key_data(impl, key_data)
        self._impl = impl
        self._base_array = _as_array(key_data)

    @classmethod
    def _unchecked(cls, impl: PRNGImpl, key_data: Any) -> PRNGKeyArray:
        """Rebuild from a pytree leaf, which may be a tracer or a placeholder (no checks)."""
        out = cls.__new__(cls)
        out._impl = impl
        out._base_array = key_data
        return out

    # -- the array's type -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._base_array.shape[: -len(self._impl.key_shape)])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> KeyTy:
        return KeyTy(self._impl)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.itemsize * self.size

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}"

    __str__ = __repr__

    # -- structural operations ----------------------------------------------------------------
    def _wrap(self, data: Array) -> PRNGKeyArray:
        return PRNGKeyArray._unchecked(self._impl, data)

    def _is_scalar(self) -> bool:
        return self._base_array.ndim == len(self._impl.key_shape)

    def __len__(self) -> int:
        if self._is_scalar():
            raise TypeError("len() of unsized object")
        return int(self._base_array.shape[0])

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        if self._is_scalar():
            raise TypeError("iteration over a 0-d key array")
        base = self._base_array
        if type(base) is ArrayImpl and base.device_buffer() is not None and current_trace() is EVAL_TRACE:
            rows = specialize(_unstack, len(self))(base)  # keys on the device stay there
            return (self._wrap(row) for row in rows)
        return (self._wrap(row) for row in base)

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        index = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in index):  # the key data axis stays after whatever `...` covers
            index = (*index, slice(None))
        return self._wrap(self._base_array[index])

    def reshape(self, *shape: Any, order: str = "C") -> PRNGKeyArray:
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self._wrap(self._base_array.reshape(*dims, *self._impl.key_shape, order=order))

    def ravel(self, order: str = "C") -> PRNGKeyArray:
        return self.reshape(-1, order=order)

    def flatten(self, order: str = "C") -> PRNGKeyArray:
        return self.reshape(-1, order=order)

    def _axis(self, axis: int) -> int:
        a = operator.index(axis)
        if not -self.ndim <= a < self.ndim:
            raise ValueError(f"axis {a} is out of bounds for a key array of dimension {self.ndim}")
        return a % self.ndim

    def squeeze(self, axis: int | Sequence[int] | None = None) -> PRNGKeyArray:
        if axis is None:
            axes: tuple[int, ...] = tuple(i for i, d in enumerate(self.shape) if d == 1)
        else:
            axes = tuple(self._axis(a) for a in ((axis,) if isinstance(axis, int) else axis))
        return self._wrap(fnp.squeeze(self._base_array, axes))

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        perm = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        order = tuple(self._axis(a) for a in perm) if perm else tuple(reversed(range(self.ndim)))
        trailing = tuple(range(self.ndim, self._base_array.ndim))
        return self._wrap(fnp.transpose(self._base_array, (*order, *trailing)))

    @property
    def T(self) -> PRNGKeyArray:  # noqa: N802  (the array attribute's name)
        return self.transpose()

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        order = list(range(self.ndim))
        a, b = self._axis(axis1), self._axis(axis2)
        order[a], order[b] = order[b], order[a]
        return self.transpose(order)

    def take(self, indices: Any, axis: int | None = None) -> PRNGKeyArray:
        if axis is None:
            return self.ravel().take(indices, 0)
        return self._wrap(fnp.take(self._base_array, indices, axis=self._axis(axis)))

    def copy(self) -> PRNGKeyArray:
        return self._wrap(fnp.array(self._base_array))

    def block_until_ready(self) -> PRNGKeyArray:
        block = getattr(self._base_array, "block_until_ready", None)
        if block is not None:
            block()
        return self

    # -- comparisons of keys ------------------------------------------------------------------
    def _same(self, other: object) -> Array:
        if not isinstance(other, PRNGKeyArray):
            raise TypeError(f"cannot compare a key array with a value of type {type(other).__name__}")
        return fnp.all(fnp.equal(self._base_array, other._base_array), axis=-1)

    def __eq__(self, other: object) -> Array:  # type: ignore[override]
        return self._same(other)

    def __ne__(self, other: object) -> Array:  # type: ignore[override]
        return fnp.logical_not(self._same(other))

    # -- no arithmetic, no conversions ---------------------------------------------------------
    def __bool__(self) -> NoReturn:
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype: object = None, copy: object = None) -> NoReturn:
        raise TypeError(
            "An array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "fcore.random.key_data(arr) if you wish to extract the underlying integer array."
        )


def _operand_dtype(x: object) -> str:
    if isinstance(x, PRNGKeyArray):
        return x.dtype.name
    if is_python_scalar(x):  # its weak type's dtype
        return str(dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x)))
    dt = getattr(x, "dtype", None)
    return str(dt) if dt is not None else type(x).__name__


def _no_binary(name: str, reflected: bool) -> Any:
    def method(self: PRNGKeyArray, other: object) -> NoReturn:
        first, second = (other, self) if reflected else (self, other)
        raise TypeError(f"{name} does not accept dtypes {_operand_dtype(first)}, {_operand_dtype(second)}.")

    return method


def _no_unary(name: str) -> Any:
    def method(self: PRNGKeyArray) -> NoReturn:
        raise TypeError(
            f"{name} does not accept dtype {self.dtype.name}. Accepted dtypes are subtypes of integer, floating, "
            "complexfloating."
        )

    return method


_BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide", "mod": "rem",
    "divmod": "divmod", "pow": "pow", "matmul": "dot_general", "and": "and", "or": "or", "xor": "xor",
    "lshift": "shift_left", "rshift": "shift_right_arithmetic",
}
for _dunder, _lax_name in _BINARY.items():
    setattr(PRNGKeyArray, f"__{_dunder}__", _no_binary(_lax_name, False))
    setattr(PRNGKeyArray, f"__r{_dunder}__", _no_binary(_lax_name, True))
for _dunder, _lax_name in {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}.items():
    setattr(PRNGKeyArray, f"__{_dunder}__", _no_binary(_lax_name, False))
for _dunder, _lax_name in {"neg": "neg", "pos": "pos", "abs": "abs", "invert": "not"}.items():
    setattr(PRNGKeyArray, f"__{_dunder}__", _no_unary(_lax_name))


def _unstack(data: Array, n: int) -> list[Array]:
    """The keys of a key array along its first axis, as separate arrays (one compiled call)."""
    return [data[i] for i in range(n)]


def _flatten_keys(keys: PRNGKeyArray) -> tuple[tuple[Array], PRNGImpl]:
    return (keys._base_array,), keys._impl


def _unflatten_keys(impl: PRNGImpl, children: Sequence[Any]) -> PRNGKeyArray:
    return PRNGKeyArray._unchecked(impl, children[0])


tree_util.register_pytree_node(PRNGKeyArray, _flatten_keys, _unflatten_keys)


def _is_arraylike(x: object) -> bool:
    return isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex))


def check_prng_key(name: str, key: object, *, allow_batched: bool = False) -> tuple[Array, bool]:
    """The raw key data of ``key`` (typed or raw) and whether it was raw (JAX's
    ``_check_prng_key``): raw data is checked as ``wrap_key_data`` checks it, and only
    functions that accept arrays of keys (``allow_batched``) take more than one."""
    if isinstance(key, PRNGKeyArray):
        data, raw, shape = key._base_array, False, key.shape
    elif _is_arraylike(key):
        check_key_data(THREEFRY, key)
        data, raw = _as_array(key), True
        shape = tuple(data.shape)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and (len(shape) > 1 if raw else shape):
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape {shape} != (). "
            "Use fcore.vmap for batching."
        )
    return data, raw

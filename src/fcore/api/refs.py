"""Mutable array references: ``fcore.new_ref``, ``fcore.Ref`` and ``fcore.ref``'s operations.

As in JAX 0.10 (``jax.new_ref``), a ``Ref`` is a mutable box for an array, read with
``ref[idx]`` and written with ``ref[idx] = v`` / ``ref[idx] += v``. fcore discharges refs while
tracing (``fcore.interpreters.ref_frames``): a ref holds its current value, reads return it,
writes rebind it (``x.at[idx].set``), so staged programs hold no ref primitives. A ref is not an
array: arithmetic on it is a ``TypeError``, as in JAX.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, overload

import attrs
import numpy as np

from fcore.api._diff_args import type_str, typeof as _typeof
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import to_numpy_arg
from fcore.interpreters.ref_frames import RefFrame, RefHolder, current_frame, ref_frame
from fcore.interpreters.staging import StagingTrace
from fcore.interpreters.stack import current_trace
from fcore.interpreters.trace import Trace, Tracer
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.transforms.batching import BatchTrace
from fcore.transforms.ad_util import Zero
from fcore.transforms.jvp import JVPTrace, JVPTracer


@attrs.frozen(slots=True)
class AbstractRef:
    """The type of a ``Ref``: ``Ref{float32[3]}`` (JAX's ``jax.ref.AbstractRef``)."""

    inner_aval: ShapedArray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.inner_aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.inner_aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.inner_aval.weak_type

    @property
    def ndim(self) -> int:
        return len(self.inner_aval.shape)

    @property
    def size(self) -> int:
        return self.inner_aval.size

    def __str__(self) -> str:
        return f"Ref{{{type_str(self.shape, self.dtype)}}}"

    def __repr__(self) -> str:
        return str(self)


Index = Any  # what NumPy indexing accepts: ints, slices, arrays, ``...``, ``None``, tuples


class Ref(RefHolder):
    """A mutable array reference (``jax.Ref``); made by ``new_ref``."""

    __slots__ = ()

    def __init__(self, value: Array) -> None:
        self._inner_aval = ShapedArray(value.shape, value.dtype, False)
        self._frame = current_frame.get()
        self._home = current_trace()
        self._value = value
        self._valid = ""

    # -- type ---------------------------------------------------------------------------
    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(self._inner_aval)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._inner_aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._inner_aval.dtype

    @property
    def ndim(self) -> int:
        return len(self._inner_aval.shape)

    @property
    def size(self) -> int:
        return self._inner_aval.size

    def __len__(self) -> int:
        if not self._inner_aval.shape:
            raise TypeError("len() of unsized object")
        return self._inner_aval.shape[0]

    # -- access ---------------------------------------------------------------------------
    def __getitem__(self, idx: Index) -> Array:
        return get(self, idx)

    def __setitem__(self, idx: Index, value: Any) -> None:
        _store(self, idx, value, "ref_set")

    @property
    def at(self) -> Any:
        raise NotImplementedError  # as JAX's ``Ref.at``: index the ref itself instead

    def __repr__(self) -> str:
        value = self._value
        if type(value) is ArrayImpl:
            text = repr(value)
            return "Ref" + text[len("Array"):] if text.startswith("Array(") else f"Ref({text})"
        return f"Ref({value!r})"

    __str__ = __repr__


def is_ref(x: object) -> bool:
    return isinstance(x, Ref)


_ARRAY_LIKE = (np.ndarray, np.generic, bool, int, float, complex)


def as_array(x: object) -> Array:
    """``x`` as an fcore array (tracers as they are); ``TypeError`` for anything else. (Array
    methods and operators are used below; ``fcore.numpy`` installs them, and imports this.)"""
    if isinstance(x, Array):
        return x
    if isinstance(x, _ARRAY_LIKE):
        arr, weak = to_numpy_arg(x)
        return ArrayImpl(arr, weak)
    raise TypeError(f"Value of type {type(x)} cannot be stored in a Ref.")


# -- the value as seen here ----------------------------------------------------------------
def _frame_of(ref: Ref) -> RefFrame | None:
    """The frame through which ``ref`` is seen here; ``None`` where it is its own frame."""
    frame = current_frame.get()
    return None if frame is ref._frame or frame is None else frame


def _check_valid(ref: Ref, op: str) -> None:
    if ref._valid:
        weak = "~" if ref._valid == "frozen" else ""
        raise ValueError(f"`{op}` must be called on `Ref` types: {weak}{ref._inner_aval.str_short()}.")


def read(ref: Ref, op: str = "get") -> Any:
    """The ref's whole current value where it is used now (lifted into a staged program)."""
    _check_valid(ref, op)
    frame = _frame_of(ref)
    return ref._value if frame is None else frame.read(ref)


def _home_trace(ref: Ref, frame: RefFrame | None) -> Trace:
    """The trace the ref's value lives in here: its own, or the staged program it is lifted into."""
    if frame is None or frame.home is None:
        return ref._home
    return frame.home


def _outside_value(ref: Ref, value: Any, home: Trace) -> Any:
    """``value`` as stored into a ref whose value lives in trace ``home``: a tangent-free value
    of a ``grad``/``jvp`` inside loses its (zero) tangent; a differentiated one, or any value
    written inside a ``vmap``, is JAX's error."""
    trace: Trace | None = current_trace()
    inner: set[int] = set()
    batched = False
    while trace is not None and trace is not home:
        inner.add(id(trace))
        batched = batched or isinstance(trace, BatchTrace)
        trace = getattr(trace, "parent", None)
    if not inner:
        return value
    ty = f"Ref{{{ref._inner_aval.str_short()}}}"
    if batched:
        raise Exception(  # noqa: TRY002 - JAX raises a plain Exception here
            f"performing a set/swap operation with vmapped value on an unbatched array reference of type {ty}. "
            "Move the array reference to be an argument to the vmapped function?"
        )
    while type(value) is JVPTracer and id(value._trace) in inner and type(value.tangent) is Zero:
        value = value.primal
    if isinstance(value, Tracer) and id(value._trace) in inner:
        what = "a differentiated value" if isinstance(value._trace, JVPTrace) else "a traced value"
        raise Exception(  # noqa: TRY002 - JAX raises a plain Exception here
            f"performing a set/swap operation with {what} on a non-differentiated array reference of type {ty}. "
            "Move the array reference to be an argument of the differentiated function?"
        )
    return value


def write(ref: Ref, value: Any, op: str = "swap") -> None:
    """Rebind the ref's whole value where it is used now."""
    _check_valid(ref, op)
    frame = _frame_of(ref)
    if frame is not None and frame.trace is None:
        frame.read(ref)  # a body that refuses outer refs: its error
    value = _outside_value(ref, value, _home_trace(ref, frame))
    if frame is None:
        ref._value = value
    else:
        frame.write(ref, value)


# -- the public operations -----------------------------------------------------------------
def _whole(idx: Index) -> bool:
    """Whether ``idx`` selects the whole ref (compared by identity: an index may hold arrays)."""
    return idx is None or idx is Ellipsis or (type(idx) is tuple and (not idx or (len(idx) == 1 and idx[0] is Ellipsis)))


def _check_ref(ref: object, op: str) -> Ref:
    if not isinstance(ref, Ref):
        raise ValueError(f"Can only call `{op}` on a `Ref`: {ref}.")
    return ref


def _check_bounds(ref: Ref, idx: Index) -> None:
    """JAX's error for a static integer index past the end of its axis."""
    items = idx if type(idx) is tuple else (idx,)
    if any(i is Ellipsis or i is None for i in items):
        return  # positions no longer line up with axes (NumPy's indexing checks these)
    for dim, i in zip(ref._inner_aval.shape, items):
        if type(i) is int and i >= dim:
            raise ValueError(f"Out of bound indexer: idx={i}, dim={dim}.")


def get(ref: Ref, idx: Index = None) -> Array:
    """``ref[idx]``: the indexed part of the ref's current value."""
    _check_ref(ref, "ref_get")
    value = read(ref)
    if _whole(idx):
        return value  # type: ignore[no-any-return]
    _check_bounds(ref, idx)
    return value[idx]  # type: ignore[no-any-return]


def _weak_kind(dt: np.dtype[Any]) -> str:
    return "int" if dtypes.is_integer(dt) else np.dtype(dt).kind


def _indexed_shape(ref: Ref, idx: Index, current: Any) -> tuple[int, ...]:
    """The shape of ``current[idx]``; found on a zero-size NumPy view where the index is static
    (so no indexing is staged just for a check)."""
    if _whole(idx):
        return ref._inner_aval.shape
    items = idx if type(idx) is tuple else (idx,)
    if all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items):
        view: np.ndarray[Any, Any] = np.broadcast_to(np.empty((), np.bool_), ref._inner_aval.shape)
        return view[idx].shape
    return current[idx].shape  # type: ignore[no-any-return]


def _coerce(ref: Ref, idx: Index, value: Any, op: str, current: Any) -> Array:
    """``value`` as an array of the ref's dtype and indexed shape, or JAX's ``ValueError``."""
    val = as_array(value)
    expected = _indexed_shape(ref, idx, current)
    if val.shape != expected:
        transforms = "()" if _whole(idx) else f"({idx!r},)"
        raise ValueError(
            f"Invalid shape for `{op}`. Ref shape: {ref._inner_aval.shape}. Expected shape: {expected}. "
            f"Value shape: {val.shape}. Transforms: {transforms}. "
        )
    dt, ref_dt = val.dtype, ref._inner_aval.dtype
    if dt != ref_dt:
        weak = isinstance(value, (int, float, complex)) and not isinstance(value, bool) or val.weak_type
        if weak and _weak_kind(dt) == _weak_kind(ref_dt):
            val = val.astype(ref_dt)
        else:
            what = "dtype" if op == "swap" else "shape"  # JAX's message says "Value shape" for addupdate
            raise ValueError(f"Invalid dtype for `{op}`. Ref dtype: {dtypes.dtype_name(ref_dt)}. "
                             f"Value {what}: {dtypes.dtype_name(dt)}. ")
    return val


def _store(ref: Ref, idx: Index, value: Any, function_name: str) -> Any:
    """Store ``value`` at ``ref[idx]``; return the ref's value before."""
    _check_ref(ref, function_name)
    current = read(ref, "swap")
    if not _whole(idx):
        _check_bounds(ref, idx)
    val = _coerce(ref, idx, value, "swap", current)
    write(ref, val if _whole(idx) else current.at[idx].set(val), "swap")
    return current


def swap(ref: Ref, idx: Index, value: Any, _function_name: str = "ref_swap") -> Array:
    """Store ``value`` at ``ref[idx]``; return what was there."""
    current = _store(ref, idx, value, _function_name)
    return current if _whole(idx) else current[idx]  # type: ignore[no-any-return]


def ref_set(ref: Ref, idx: Index, value: Any) -> None:
    """``ref[idx] = value`` (``fcore.ref.set``)."""
    _store(ref, idx, value, "ref_set")


def addupdate(ref: Ref, idx: Index, x: Any) -> None:
    """``ref[idx] += x``, as one update."""
    _check_ref(ref, "ref_addupdate")
    current = read(ref, "addupdate")
    if not _whole(idx):
        _check_bounds(ref, idx)
    val = _coerce(ref, idx, x, "addupdate", current)
    new = current + val if _whole(idx) else current.at[idx].add(val)
    write(ref, new, "addupdate")


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A new mutable reference holding ``init_val`` (any array-like; its dtype and weak type)."""
    if isinstance(init_val, Ref):
        raise TypeError("new_ref expects an array, not a Ref: read it first (ref[...]).")
    if not isinstance(init_val, (Array, *_ARRAY_LIKE)):
        raise TypeError(
            "Error interpreting argument to new_ref as a JAX value. The problematic value is of type "
            f"{type(init_val)} and was passed to new_ref at position 0.\n"
        )
    return Ref(as_array(init_val))


def _check_own(ref: Ref, op: str) -> None:
    """Ending a ref's life inside a staged program that it was made outside of would end it
    at trace time only: refused."""
    frame = _frame_of(ref)
    if frame is not None:
        raise NotImplementedError(
            f"`{op}` of a mutable array reference (Ref{{{ref._inner_aval.str_short()}}}) created outside "
            f"{frame.trace.description if frame.trace is not None else frame.refused}: fcore ends a ref's life "
            "only where it was created."
        )


def freeze(ref: Ref | Array) -> Array:
    """The ref's current value; the ref cannot be used afterwards (an array: itself)."""
    if not isinstance(ref, Ref):
        return as_array(ref)
    value = read(ref, "freeze")
    _check_own(ref, "freeze")
    ref._valid = "frozen"
    return value  # type: ignore[no-any-return]


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A new ref of ``ty``'s shape and dtype (a ``ShapeDtypeStruct`` or aval), contents unspecified
    (fcore fills it with zeros)."""
    return Ref(ArrayImpl(np.zeros(ty.shape, dtypes.canonicalize_dtype(ty.dtype))))


def free_ref(ref: Ref) -> None:
    """Mark ``ref`` as no longer used: any later use is an error."""
    _check_ref(ref, "free_ref")
    _check_valid(ref, "free_ref")
    _check_own(ref, "free_ref")
    ref._valid = "freed"


@overload
def typeof(x: Ref) -> AbstractRef: ...
@overload
def typeof(x: Any) -> ShapedArray: ...


def typeof(x: Any) -> ShapedArray | AbstractRef:
    """``fcore.typeof``: a ref's ``AbstractRef``, any other value's aval."""
    if isinstance(x, Ref):
        return x.aval
    return _typeof(x)


# -- staged programs (jit, make_jaxpr) -------------------------------------------------------
def ref_positions(flat: Sequence[object]) -> tuple[int, ...]:
    """Where the flat arguments of a staged function are refs."""
    return tuple([i for i, x in enumerate(flat) if isinstance(x, Ref)])


def check_unaliased(flat: Sequence[object], positions: tuple[int, ...], names: Sequence[str], where: str) -> None:
    """JAX's error for one ref passed as two arguments."""
    seen: dict[int, int] = {}
    for i in positions:
        first = seen.setdefault(id(flat[i]), i)
        if first != i:
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a function, but when "
                f"tracing {where} for jit the mutable array reference of type {typeof(flat[i])} appeared at both "
                f"{names[first]} and {names[i]}."
            )


def check_not_ref_output(leaf: object, where: str, args: Sequence[object], names: Sequence[str]) -> None:
    """JAX's error for a ref among a jitted function's results (``args``: the flat arguments
    as the function saw them, ``names`` theirs)."""
    if isinstance(leaf, Ref):
        at = [i for i, a in enumerate(args) if a is leaf]
        origin = f"was passed in as the argument {names[at[0]]}" if at else "was created inside the function"
        raise ValueError(
            f"function {where} traced for jit returned a mutable array reference of type {leaf.aval}, but mutable "
            f"array references cannot be returned.\n\nThe returned mutable array {origin}."
        )


class RefStaging:
    """The refs of one staged function: its ref arguments become inputs (fresh refs inside,
    holding the input tracers) and so do the refs from outside it uses (``closed``, found while
    tracing); the final value of each is an extra output, after the function's own."""

    __slots__ = ("positions", "names", "where", "inner", "frame", "closed", "written", "written_closed")

    def __init__(self, positions: tuple[int, ...], names: Sequence[str] = (), where: str = "") -> None:
        self.positions = positions
        #: For the aliasing error: the flat arguments' names, the function's name and place.
        self.names = names
        self.where = where
        self.inner: list[Ref] = []
        self.frame: RefFrame | None = None
        self.closed: list[Ref] = []
        self.written: list[int] = []
        self.written_closed: list[Ref] = []

    @contextmanager
    def staging(self, leaves: Sequence[Any]) -> Iterator[list[Any]]:
        """While the function is traced: ``leaves`` with a ref at each ref position."""
        trace = current_trace()
        assert isinstance(trace, StagingTrace)
        self.frame = frame = RefFrame(trace)
        with ref_frame(frame):
            leaves = list(leaves)
            for i in self.positions:
                ref = Ref(leaves[i])
                leaves[i] = ref
                self.inner.append(ref)
            yield leaves

    def extra_outputs(self, leaves: Sequence[Any]) -> list[Any]:
        """The final values of the refs written to, to append to the traced function's outputs
        (called still inside; ``leaves`` are the input tracers)."""
        frame = self.frame
        assert frame is not None
        self.closed = [ref for ref in frame.outer_refs() if isinstance(ref, Ref)]
        self.written = [i for i, ref in zip(self.positions, self.inner) if ref._value is not leaves[i]]
        self.written_closed = [ref for ref in self.closed if frame.written(ref)]
        finals = [ref._value for i, ref in zip(self.positions, self.inner) if i in self.written]
        return finals + [frame.read(ref) for ref in self.written_closed]

    def call_args(self, flat: Sequence[Any]) -> list[Any]:
        """``flat`` with each ref argument's value, then the outer refs' values, read here."""
        args = list(flat)
        for i in self.positions:
            if any(args[i] is ref for ref in self.closed):
                raise ValueError(
                    f"when tracing {self.where} for jit, a mutable array reference of type {typeof(args[i])} was "
                    f"both closed over and passed as the argument {self.names[i] if self.names else i}"
                )
            args[i] = read(args[i])
        return args + [read(ref) for ref in self.closed]

    def write_back(self, flat: Sequence[Any], outs: Sequence[Any]) -> list[Any]:
        """Store the extra outputs into the refs written to; return the function's own outputs."""
        targets: list[Ref] = [flat[i] for i in self.written] + self.written_closed
        if not targets:
            return list(outs)
        n = len(targets)
        for ref, value in zip(targets, outs[len(outs) - n :]):
            write(ref, value)
        return list(outs[: len(outs) - n])

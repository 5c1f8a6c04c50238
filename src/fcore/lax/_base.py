"""Shared helpers for defining primitive families: operand conversion and shape rules
(docs/adding_a_primitive.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Union

import numpy as np
from typing_extensions import TypeAlias, TypeGuard

from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array, typematch
from fcore.ir.dtypes import DType
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive

#: A NumPy array of any shape and dtype (what eager impls compute on).
NpArray: TypeAlias = np.ndarray[Any, Any]
#: What lax functions accept: fcore arrays (concrete or traced), NumPy values, Python scalars.
ArrayLike: TypeAlias = Union[Array, NpArray, np.generic, bool, int, float, complex]
PYTHON_SCALARS = (bool, int, float, complex)


def dtype_of(x: ArrayLike) -> DType:
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(x.dtype)
    return dtypes.python_scalar_dtype(x)


def shape_of(x: ArrayLike) -> tuple[int, ...]:
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return tuple(x.shape)
    return ()


def weak_scalar(value: bool | int | float | complex, dtype: DType) -> ArrayImpl:
    """A Python scalar as a weakly typed 0-d array of ``dtype`` (staged as a literal)."""
    return ArrayImpl(np.asarray(value, dtype), not isinstance(value, bool))


def const(example: ArrayLike, value: bool | int | float | complex) -> ArrayImpl:
    """``value`` typed as ``example``'s dtype (JAX's ``lax._const``), weakly: what internal
    code passes to lax functions instead of a Python scalar, which has its default dtype.
    Integers out of the dtype's range wrap, as JAX's conversions do."""
    return ArrayImpl(np.asarray(value).astype(dtype_of(example)), not isinstance(value, bool))


def is_python_scalar(x: object) -> TypeGuard[bool | int | float | complex]:
    """True for Python's own scalars (not NumPy scalars, which subclass ``float``)."""
    return type(x) in PYTHON_SCALARS


def broadcast_shapes_scalar(name: str, avals: Sequence[ShapedArray]) -> tuple[int, ...]:
    """Elementwise shape rule, as JAX's ``broadcasting_shape_rule``: rank-0 operands
    broadcast; the others share a rank, and size-1 dimensions broadcast against any size."""
    shape: tuple[int, ...] = ()
    for a in avals:
        s = a.shape
        if s == () or s == shape:
            continue
        if shape == ():
            shape = s
        elif len(s) != len(shape):
            ranks = sorted({b.ndim for b in avals if b.ndim})
            raise TypeError(f"{name}: arrays must have the same number of dimensions, got {{{', '.join(map(str, ranks))}}}")
        else:
            out = []
            for d, e in zip(shape, s):
                if d != e and d != 1 and e != 1:
                    raise TypeError(
                        f"{name} got incompatible shapes for broadcasting: "
                        + ", ".join(str(tuple(b.shape)) for b in avals if b.shape) + "."
                    )
                out.append(e if d == 1 else d)
            shape = tuple(out)
    return shape


#: The fcore.numpy function that promotes its inputs, named in ``same_dtypes``' tip (JAX's list).
_NUMPY_EQUIVALENTS = {
    "add": "add", "atan2": "arctan2", "concatenate": "concatenate", "div": "divide", "eq": "equal", "max": "maximum",
    "min": "minimum", "mul": "multiply", "ne": "not_equal", "nextafter": "nextafter", "pow": "float_power",
    "select": "where", "shift_left": "left_shift", "shift_right_logical": "right_shift",
    "shift_right_arithmetic": "right_shift", "sub": "subtract",
}


def same_dtypes(name: str, avals: Sequence[ShapedArray]) -> DType:
    """The operands' common dtype; JAX's ``TypeError`` where they differ."""
    dt = avals[0].dtype
    if any(a.dtype != dt for a in avals[1:]):
        msg = f"lax.{name} requires arguments to have the same dtypes, got {', '.join(dtypes.dtype_name(b.dtype) for b in avals)}."
        if name in _NUMPY_EQUIVALENTS:
            msg += (f" (Tip: fcore.numpy.{_NUMPY_EQUIVALENTS[name]} is a similar function that does automatic"
                    " type promotion on inputs).")
        raise TypeError(msg)
    return dt


def check_operands(what: str, got: Sequence[ShapedArray], want: Sequence[ShapedArray]) -> None:
    """Operands must match a nested jaxpr's inputs in shape and dtype (weak types may differ)."""
    if len(got) != len(want):
        raise TypeError(f"{what} takes {len(want)} operands, got {len(got)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if not typematch(g, w):
            raise TypeError(f"{what}: operand {i} has type {g.str_short()}, expected {w.str_short()}")


def normalize_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


#: What an eager impl returns: one array, or one per result of a multiple-results primitive.
ImplResult: TypeAlias = Union[NpArray, Sequence[NpArray]]
_F = TypeVar("_F", bound=Callable[..., ImplResult])


def checked_impl(p: Primitive) -> Callable[[_F], _F]:
    """Register ``f`` as ``p``'s eager impl, preceded by ``p``'s abstract evaluation.

    Eager evaluation calls impls directly; running the (cheap) shape rule first gives eager
    code the same errors as staged code, instead of NumPy's (or no error where NumPy is lax).
    """

    def register(f: _F) -> _F:
        rule = p.abstract_eval_rule
        assert rule is not None, f"define the abstract eval of {p.name} before its impl"

        def impl(*args: NpArray, **params: ParamValue) -> ImplResult:
            rule(*[shaped_array(a.shape, a.dtype) for a in args], **params)
            return f(*args, **params)

        p.def_impl(impl)
        return f

    return register

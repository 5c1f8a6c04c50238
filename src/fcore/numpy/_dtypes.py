"""Scalar types and dtype utilities of ``fcore.numpy`` (``fnp.float32``, ``fnp.finfo``, ...).

The scalar types are classes (as ``jnp.float32`` is): ``fnp.float32.dtype`` is the NumPy dtype,
``np.dtype(fnp.float32)`` works through that attribute, and *calling* one makes a strongly
typed fcore array of that dtype (``fnp.int16(1) + 1`` is int16). ``isinstance(x, fnp.float32)``
holds for fcore arrays of that dtype.
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType


# NumPy's abstract scalar classes, for ``issubdtype`` (as ``jnp.floating`` etc.).
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating


class ScalarMeta(type):
    """Metaclass of the scalar types: calling the class builds an fcore array."""

    dtype: DType

    def __call__(cls, x: Any = 0) -> Array:  # returns an Array, as jnp
        from fcore.numpy.creation import asarray

        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, (Array, np.ndarray, np.generic)) and np.dtype(instance.dtype) == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'fcore.numpy.{cls.__name__}'>"


class ScalarType(metaclass=ScalarMeta):
    """Base of ``fnp.float32`` and friends (never instantiated: calling returns an Array)."""

    dtype: DType = np.dtype(np.float32)


def _scalar_type(name: str, dt: DType) -> ScalarMeta:
    return ScalarMeta(name, (ScalarType,), {"dtype": dt, "__module__": "fcore.numpy"})


bool_ = _scalar_type("bool_", dtypes.bool_)
int8 = _scalar_type("int8", dtypes.int8)
int16 = _scalar_type("int16", dtypes.int16)
int32 = _scalar_type("int32", dtypes.int32)
int64 = _scalar_type("int64", dtypes.int64)
uint8 = _scalar_type("uint8", dtypes.uint8)
uint16 = _scalar_type("uint16", dtypes.uint16)
uint32 = _scalar_type("uint32", dtypes.uint32)
uint64 = _scalar_type("uint64", dtypes.uint64)
bfloat16 = _scalar_type("bfloat16", dtypes.bfloat16)
float16 = _scalar_type("float16", dtypes.float16)
float32 = _scalar_type("float32", dtypes.float32)
float64 = _scalar_type("float64", dtypes.float64)
complex64 = _scalar_type("complex64", dtypes.complex64)
complex128 = _scalar_type("complex128", dtypes.complex128)
# The ml_dtypes storage formats: only Python scalars promote with them implicitly.
int1 = _scalar_type("int1", dtypes.int1)
int2 = _scalar_type("int2", dtypes.int2)
int4 = _scalar_type("int4", dtypes.int4)
uint1 = _scalar_type("uint1", dtypes.uint1)
uint2 = _scalar_type("uint2", dtypes.uint2)
uint4 = _scalar_type("uint4", dtypes.uint4)
float4_e2m1fn = _scalar_type("float4_e2m1fn", dtypes.float4_e2m1fn)
float6_e2m3fn = _scalar_type("float6_e2m3fn", dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type("float6_e3m2fn", dtypes.float6_e3m2fn)
float8_e3m4 = _scalar_type("float8_e3m4", dtypes.float8_e3m4)
float8_e4m3 = _scalar_type("float8_e4m3", dtypes.float8_e4m3)
float8_e4m3b11fnuz = _scalar_type("float8_e4m3b11fnuz", dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _scalar_type("float8_e4m3fn", dtypes.float8_e4m3fn)
float8_e4m3fnuz = _scalar_type("float8_e4m3fnuz", dtypes.float8_e4m3fnuz)
float8_e5m2 = _scalar_type("float8_e5m2", dtypes.float8_e5m2)
float8_e5m2fnuz = _scalar_type("float8_e5m2fnuz", dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _scalar_type("float8_e8m0fnu", dtypes.float8_e8m0fnu)
# NumPy-style aliases (the 64-bit types, narrowed when 64-bit mode is off, as in jnp).
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128


def to_dtype(x: Any) -> DType:
    """A dtype specifier (dtype, scalar type, fnp scalar type, name, Python type) as a dtype.

    Not canonicalized. Raises ``TypeError`` for dtypes fcore does not support.
    """
    if isinstance(x, np.dtype):
        if not dtypes.is_supported(x):
            raise TypeError(f"dtype {x!r} is not supported by fcore")
        return x
    if isinstance(x, ScalarMeta):
        return x.dtype
    inner = getattr(x, "dtype", None)
    if isinstance(inner, np.dtype) and not (isinstance(x, type) and issubclass(x, np.generic)):
        return to_dtype(inner)  # objects carrying a dtype, e.g. jnp.float32
    if isinstance(x, str):
        # NumPy's reading of the name, as jnp's ("i4" is int32 here; in a jaxpr it is int4).
        try:
            named = np.dtype(x)
        except TypeError:
            raise TypeError(f"data type {x!r} not understood") from None
        return to_dtype(named)
    if isinstance(x, type):
        return dtypes.to_dtype(x)
    raise TypeError(f"cannot interpret {x!r} as a data type")


def canonical_dtype(x: Any) -> DType:
    """``to_dtype`` followed by canonicalization for the current 64-bit mode."""
    return dtypes.canonicalize_dtype(to_dtype(x))


def dtype(x: Any, align: bool = False) -> DType:
    """``jnp.dtype`` (which is ``np.dtype``): a dtype specifier as a dtype, not canonicalized
    (``fnp.dtype(float)`` is float64 in either mode); fnp's scalar types are accepted."""
    if isinstance(x, ScalarMeta):
        return x.dtype
    out: DType = np.dtype(x)
    if not dtypes.is_supported(out):
        raise TypeError(f"dtype {out!r} is not supported by fcore")
    return out



def _as_dtype_arg(x: Any) -> DType:
    """A dtype from a dtype specifier or a value (for issubdtype/can_cast/isdtype)."""
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return np.dtype(x.dtype)
    return to_dtype(x)


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """``jnp.issubdtype``: ``arg2`` may be an abstract class such as ``fnp.floating``."""
    if isinstance(arg1, dtypes.ExtendedDType):  # a PRNG key dtype: its scalar type decides
        return isinstance(arg2, type) and issubclass(arg1.type, arg2) or builtins.bool(arg1 == arg2)
    if isinstance(arg2, type) and issubclass(arg2, dtypes.extended):
        return False  # no NumPy dtype is a key dtype
    d1 = _as_dtype_arg(arg1)
    if isinstance(arg2, type) and issubclass(arg2, np.generic) and arg2 in _ABSTRACT:
        return builtins.bool(_ABSTRACT[arg2](d1))
    d2 = _as_dtype_arg(arg2)
    return d1 == d2


_ABSTRACT: dict[type, Any] = {
    np.generic: lambda d: True,
    np.number: lambda d: not dtypes.is_bool(d),
    np.integer: dtypes.is_integer,
    np.signedinteger: dtypes.is_signed_int,
    np.unsignedinteger: dtypes.is_unsigned_int,
    np.inexact: dtypes.is_inexact,
    np.floating: dtypes.is_floating,
    np.complexfloating: dtypes.is_complex,
    np.bool_: dtypes.is_bool,
}

_KIND_NAMES: dict[str, Any] = {
    "bool": dtypes.is_bool,
    "signed integer": dtypes.is_signed_int,
    "unsigned integer": dtypes.is_unsigned_int,
    "integral": dtypes.is_integer,
    "real floating": dtypes.is_floating,
    "complex floating": dtypes.is_complex,
    "numeric": lambda d: not dtypes.is_bool(d),
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """Array-API ``isdtype``: ``kind`` is a dtype, a kind name, or a tuple of those."""
    d = _as_dtype_arg(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str) and k in _KIND_NAMES:
            if _KIND_NAMES[k](d):
                return True
        elif to_dtype(k) == d:
            return True
    return False


_ml_finfo: Any = ml_dtypes.finfo


class finfo:  # noqa: N801  # NumPy's name
    """Machine limits of a floating dtype (bfloat16 included, via ``ml_dtypes``)."""

    def __init__(self, dtype: Any) -> None:
        d = _as_dtype_arg(dtype)
        if dtypes.is_complex(d):
            d = dtypes.float64 if d == dtypes.complex128 else dtypes.float32
        if not dtypes.is_floating(d):
            raise ValueError(f"finfo: data type {d} not inexact")
        info: Any = _ml_finfo(d)
        self.dtype: DType = d
        self.bits: int = int(info.bits)
        self.eps: Any = info.eps
        self.max: Any = info.max
        self.min: Any = info.min
        self.tiny: Any = info.tiny
        self.smallest_normal: Any = info.smallest_normal
        self.smallest_subnormal: Any = info.smallest_subnormal
        self.resolution: Any = info.resolution
        self.precision: int = int(info.precision)
        self.nmant: int = int(info.nmant)
        self.nexp: int = int(info.nexp)
        self.maxexp: int = int(info.maxexp)
        self.minexp: int = int(info.minexp)
        self.epsneg: Any = info.epsneg

    def __repr__(self) -> str:
        return f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, dtype={self.dtype.name})"


class iinfo:  # noqa: N801  # NumPy's name
    """Machine limits of an integer dtype."""

    def __init__(self, dtype: Any) -> None:
        d = _as_dtype_arg(dtype)
        if dtypes.is_bool(d):
            self.dtype: DType = d
            self.min: int = 0
            self.max: int = 1
            self.bits: int = 8
            return
        if not dtypes.is_integer(d):
            raise ValueError(f"Invalid integer data type {d.name!r}.")
        self.dtype = d
        self.min, self.max = dtypes.int_range(d)
        self.bits = dtypes.bit_width(d)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


def promote_types(a: Any, b: Any) -> DType:
    """``jnp.promote_types``: the lattice join of two (strong) dtypes (not canonicalized)."""
    return dtypes.promote_types(to_dtype(a), to_dtype(b))


def _operand_of(x: Any) -> dtypes.Operand:
    if isinstance(x, Array):
        aval = x.aval
        return aval.dtype, aval.weak_type
    if type(x) in (int, float, complex, builtins.bool):
        return dtypes.python_scalar_operand(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(np.dtype(x.dtype)), False
    return dtypes.canonicalize_dtype(to_dtype(x)), False


def result_type(*args: Any, return_weak_type_flag: builtins.bool = False) -> Any:
    """``jnp.result_type``: the canonical dtype of combining arrays, scalars and dtypes.

    Python scalars (and weakly typed arrays) are weak, as in JAX; with
    ``return_weak_type_flag=True`` the result is a ``(dtype, weak_type)`` pair.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    dt, weak = dtypes.result_type(*(_operand_of(a) for a in args))
    return (dt, weak) if return_weak_type_flag else dt


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    """``np.can_cast`` (which ``jnp.can_cast`` is), accepting fnp's scalar types; values are
    taken by their dtype. bfloat16 casts are the ones ``ml_dtypes`` registers with NumPy."""
    src = _as_dtype_arg(from_)
    dst = to_dtype(to)
    return builtins.bool(np.can_cast(src, dst, casting=casting))  # type: ignore[arg-type]


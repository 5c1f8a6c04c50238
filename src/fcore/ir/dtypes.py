"""The dtype layer of fcore's IR: the supported dtypes, their names, and JAX's promotion rules.

fcore supports the dtypes JAX does, as ``np.dtype`` objects so that they interoperate with NumPy
and ``ml_dtypes`` directly: the fifteen of everyday programs (``bool``, the signed and unsigned
integers, ``bfloat16``, ``float16/32/64`` and ``complex64/128``) and ``ml_dtypes``' narrow ones
(``int1/2/4``, ``uint1/2/4``, ``float4_e2m1fn``, the ``float6_*`` and ``float8_*`` formats).

Type promotion follows JAX's *type promotion lattice* (docs/guide.md, "Dtypes and promotion"):
the result of combining operands is the least upper bound of their nodes in a small DAG whose
nodes are the strong dtypes plus the three *weak* categories ``i*``, ``f*`` and ``c*`` (the types
of Python ``int``, ``float`` and ``complex`` scalars, which adapt to the other operand instead of
forcing their 64-bit width). The narrow dtypes hang below the weak categories only, so a Python
scalar adapts to them but nothing else promotes with them (``int4 + int8`` is an error, as in
JAX: they are storage formats, converted explicitly). An operand is a ``(dtype, weak_type)``
pair; a weakly typed operand stands for the weak category of its dtype's kind (so a weak
``int16`` is ``i*``), except that ``bool`` is never weak.

Promotion sits on every hot path (each binary ``jnp`` op asks for it), so nothing here walks the
lattice at call time: the least upper bounds of every pair of operands are computed once, at
import, into flat dicts keyed by ``((dtype, weak), (dtype, weak))``, one per combination of the
two settings that affect them (64-bit mode and strict promotion).

This module imports only NumPy, ``ml_dtypes`` and fcore's two leaf modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Final, TypeAlias, TypeVar, cast

import ml_dtypes
import numpy as np

from fcore.config import promotion_mode, x64_enabled
from fcore.errors import TypePromotionError

__all__ = [
    "DType",
    "DTypeLike",
    "Operand",
    "SUPPORTED_DTYPES",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int1",
    "int2",
    "int4",
    "uint1",
    "uint2",
    "uint4",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "NARROW_DTYPES",
    "extended",
    "prng_key",
    "ExtendedDType",
    "short_name",
    "from_short_name",
    "dtype_name",
    "to_dtype",
    "canonicalize_dtype",
    "is_supported",
    "is_bool",
    "is_signed_int",
    "is_unsigned_int",
    "is_integer",
    "is_floating",
    "is_complex",
    "is_inexact",
    "is_narrow",
    "bit_width",
    "int_range",
    "float_format",
    "default_int_dtype",
    "default_float_dtype",
    "default_complex_dtype",
    "python_scalar_dtype",
    "python_scalar_operand",
    "promote_types",
    "promote_weak",
    "result_type",
]

DType: TypeAlias = np.dtype[Any]
"""The type of every dtype in fcore: a plain ``np.dtype`` (``ml_dtypes`` registers bfloat16)."""

DTypeLike: TypeAlias = DType | type | str
"""What :func:`to_dtype` accepts: a dtype, a NumPy/Python scalar type, or a dtype name."""

Operand: TypeAlias = tuple[DType, bool]
"""A ``(dtype, weak_type)`` pair: what type promotion needs to know about one operand."""

bool_: Final[DType] = np.dtype(np.bool_)
int8: Final[DType] = np.dtype(np.int8)
int16: Final[DType] = np.dtype(np.int16)
int32: Final[DType] = np.dtype(np.int32)
int64: Final[DType] = np.dtype(np.int64)
uint8: Final[DType] = np.dtype(np.uint8)
uint16: Final[DType] = np.dtype(np.uint16)
uint32: Final[DType] = np.dtype(np.uint32)
uint64: Final[DType] = np.dtype(np.uint64)
bfloat16: Final[DType] = np.dtype(ml_dtypes.bfloat16)
float16: Final[DType] = np.dtype(np.float16)
float32: Final[DType] = np.dtype(np.float32)
float64: Final[DType] = np.dtype(np.float64)
complex64: Final[DType] = np.dtype(np.complex64)
complex128: Final[DType] = np.dtype(np.complex128)
int1: Final[DType] = np.dtype(ml_dtypes.int1)
int2: Final[DType] = np.dtype(ml_dtypes.int2)
int4: Final[DType] = np.dtype(ml_dtypes.int4)
uint1: Final[DType] = np.dtype(ml_dtypes.uint1)
uint2: Final[DType] = np.dtype(ml_dtypes.uint2)
uint4: Final[DType] = np.dtype(ml_dtypes.uint4)
float4_e2m1fn: Final[DType] = np.dtype(ml_dtypes.float4_e2m1fn)
float6_e2m3fn: Final[DType] = np.dtype(ml_dtypes.float6_e2m3fn)
float6_e3m2fn: Final[DType] = np.dtype(ml_dtypes.float6_e3m2fn)
float8_e3m4: Final[DType] = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3: Final[DType] = np.dtype(ml_dtypes.float8_e4m3)
float8_e4m3b11fnuz: Final[DType] = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn: Final[DType] = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz: Final[DType] = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2: Final[DType] = np.dtype(ml_dtypes.float8_e5m2)
float8_e5m2fnuz: Final[DType] = np.dtype(ml_dtypes.float8_e5m2fnuz)
float8_e8m0fnu: Final[DType] = np.dtype(ml_dtypes.float8_e8m0fnu)

_NARROW_INTS: Final[tuple[DType, ...]] = (int1, int2, int4, uint1, uint2, uint4)
_NARROW_FLOATS: Final[tuple[DType, ...]] = (
    float4_e2m1fn,
    float6_e2m3fn,
    float6_e3m2fn,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
)
NARROW_DTYPES: Final[tuple[DType, ...]] = _NARROW_INTS + _NARROW_FLOATS
"""The ``ml_dtypes`` storage formats: only Python scalars promote with them implicitly."""

SUPPORTED_DTYPES: Final[tuple[DType, ...]] = (
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    bfloat16,
    float16,
    float32,
    float64,
    complex64,
    complex128,
    *NARROW_DTYPES,
)


class extended(np.generic):  # noqa: N801  (JAX's name: ``jax.dtypes.extended``)
    """Scalar type of the dtypes NumPy does not have; PRNG key dtypes are its subtypes."""


class prng_key(extended):  # noqa: N801  (JAX's name: ``jax.dtypes.prng_key``)
    """Scalar type of PRNG key dtypes (the ``key<fry>`` of ``fcore.random.key``)."""


class ExtendedDType:
    """A dtype NumPy does not have (a PRNG key dtype): ``type`` is a subclass of ``extended``,
    so ``issubdtype(d, fcore.dtypes.prng_key)`` holds for key dtypes, as in JAX."""

    type: ClassVar[type] = extended

    @property
    def name(self) -> str:
        raise NotImplementedError


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------

_SHORT_NAMES: Final[dict[DType, str]] = {
    bool_: "bool",
    int8: "i8",
    int16: "i16",
    int32: "i32",
    int64: "i64",
    uint8: "u8",
    uint16: "u16",
    uint32: "u32",
    uint64: "u64",
    bfloat16: "bf16",
    float16: "f16",
    float32: "f32",
    float64: "f64",
    complex64: "c64",
    complex128: "c128",
    # JAX's spelling: "float" -> "f", "uint" -> "u", "int" -> "i" (f8_e4m3fn, u4, i2).
    **{d: d.name.replace("float", "f").replace("uint", "u").replace("int", "i") for d in NARROW_DTYPES},
}
_FROM_SHORT_NAMES: Final[dict[str, DType]] = {s: d for d, s in _SHORT_NAMES.items()}
# Strings to_dtype accepts: short names first, then NumPy names. NumPy's one-letter codes
# ("i8" is int64 to NumPy, int8 in a jaxpr) are deliberately not accepted, to avoid that clash.
_FROM_STRINGS: Final[dict[str, DType]] = {
    **{d.name: d for d in SUPPORTED_DTYPES},
    **_FROM_SHORT_NAMES,
}
_SUPPORTED: Final[frozenset[DType]] = frozenset(SUPPORTED_DTYPES)


def _unsupported(dtype: object) -> TypeError:
    names = ", ".join(d.name for d in SUPPORTED_DTYPES)
    return TypeError(f"dtype {dtype!r} is not supported by fcore (supported: {names})")


def short_name(dtype: DType) -> str:
    """The jaxpr spelling of ``dtype``: ``bool``, ``i32``, ``u8``, ``bf16``, ``f32``, ``c64``..."""
    try:
        return _SHORT_NAMES[dtype]
    except KeyError:
        raise _unsupported(dtype) from None


def from_short_name(name: str) -> DType:
    """Inverse of :func:`short_name` (used by the jaxpr parser); ``ValueError`` if unknown."""
    try:
        return _FROM_SHORT_NAMES[name]
    except KeyError:
        known = ", ".join(_FROM_SHORT_NAMES)
        raise ValueError(f"unknown short dtype name {name!r} (expected one of: {known})") from None


def dtype_name(dtype: DType) -> str:
    """NumPy's name of ``dtype`` (``float32``, ``bfloat16``, ``bool``), as in error messages."""
    if dtype not in _SUPPORTED:
        raise _unsupported(dtype)
    return dtype.name


# --------------------------------------------------------------------------------------------
# Defaults, canonicalization, conversion
# --------------------------------------------------------------------------------------------


def _x64(x64: bool | None) -> bool:
    return x64_enabled() if x64 is None else x64


def default_int_dtype(x64: bool | None = None) -> DType:
    """The dtype of a Python ``int``: int64 in 64-bit mode, int32 otherwise (as JAX)."""
    return int64 if _x64(x64) else int32


def default_float_dtype(x64: bool | None = None) -> DType:
    """The dtype of a Python ``float``: float64 in 64-bit mode, float32 otherwise."""
    return float64 if _x64(x64) else float32


def default_complex_dtype(x64: bool | None = None) -> DType:
    """The dtype of a Python ``complex``: complex128 in 64-bit mode, complex64 otherwise."""
    return complex128 if _x64(x64) else complex64


_CANON_X64: Final[dict[DType, DType]] = {d: d for d in SUPPORTED_DTYPES}
_CANON_X32: Final[dict[DType, DType]] = {
    **_CANON_X64,
    int64: int32,
    uint64: uint32,
    float64: float32,
    complex128: complex64,
}


def canonicalize_dtype(dtype: DType, x64: bool | None = None) -> DType:
    """The dtype a value of ``dtype`` really gets: without 64-bit mode, 64-bit types narrow.

    ``x64=None`` reads :func:`fcore.config.x64_enabled`. A dict lookup, since it is on hot paths.
    """
    if x64 is None:
        x64 = x64_enabled()
    try:
        return (_CANON_X64 if x64 else _CANON_X32)[dtype]
    except KeyError:
        raise _unsupported(dtype) from None


_PYTHON_SCALAR_DTYPES: Final[dict[type, Callable[[bool | None], DType]]] = {
    bool: lambda x64: bool_,
    int: default_int_dtype,
    float: default_float_dtype,
    complex: default_complex_dtype,
}


def to_dtype(x: DTypeLike) -> DType:
    """Turn a dtype specifier into a supported ``np.dtype``; ``TypeError`` if it is not one.

    Accepts ``np.dtype`` objects, NumPy scalar types (``np.float32``, ``ml_dtypes.bfloat16``),
    the Python types ``bool``/``int``/``float``/``complex`` (mapped to the default dtypes of the
    current 64-bit mode, as JAX does) and names, either NumPy's (``"float32"``, ``"bfloat16"``)
    or the jaxpr short names (``"f32"``, ``"bf16"``). The result is not canonicalized.
    """
    dtype: DType
    if isinstance(x, np.dtype):
        dtype = x
    elif isinstance(x, str):
        found = _FROM_STRINGS.get(x)
        if found is None:
            raise TypeError(f"unknown dtype name {x!r}")
        return found
    elif isinstance(x, type) and (x in _PYTHON_SCALAR_DTYPES or issubclass(x, np.generic)):
        default = _PYTHON_SCALAR_DTYPES.get(x)
        if default is not None:
            return default(None)
        dtype = np.dtype(x)
    elif isinstance(carried := getattr(x, "dtype", None), np.dtype):
        dtype = carried  # objects carrying a dtype: fcore.numpy.float32, jax.numpy.float32
    elif isinstance(x, type):
        raise TypeError(f"{x!r} is not a dtype or scalar type")
    else:
        raise TypeError(f"cannot interpret {x!r} of type {type(x).__name__} as a dtype")
    if dtype not in _SUPPORTED:
        raise _unsupported(x)
    return dtype


def is_supported(dtype: DType) -> bool:
    """Whether ``dtype`` is one of :data:`SUPPORTED_DTYPES`."""
    return dtype in _SUPPORTED


# --------------------------------------------------------------------------------------------
# Kind predicates (frozenset membership: they run in printers and type rules)
# --------------------------------------------------------------------------------------------

_BOOL: Final[frozenset[DType]] = frozenset({bool_})
_SIGNED: Final[frozenset[DType]] = frozenset({int1, int2, int4, int8, int16, int32, int64})
_UNSIGNED: Final[frozenset[DType]] = frozenset({uint1, uint2, uint4, uint8, uint16, uint32, uint64})
_INTEGER: Final[frozenset[DType]] = _SIGNED | _UNSIGNED
_FLOATING: Final[frozenset[DType]] = frozenset({bfloat16, float16, float32, float64, *_NARROW_FLOATS})
_NARROW: Final[frozenset[DType]] = frozenset(NARROW_DTYPES)
_COMPLEX: Final[frozenset[DType]] = frozenset({complex64, complex128})
_INEXACT: Final[frozenset[DType]] = _FLOATING | _COMPLEX


def is_bool(dtype: DType) -> bool:
    """``dtype`` is ``bool``."""
    return dtype in _BOOL


def is_signed_int(dtype: DType) -> bool:
    """``dtype`` is int1/2/4/8/16/32/64."""
    return dtype in _SIGNED


def is_unsigned_int(dtype: DType) -> bool:
    """``dtype`` is uint1/2/4/8/16/32/64."""
    return dtype in _UNSIGNED


def is_integer(dtype: DType) -> bool:
    """``dtype`` is a signed or unsigned integer (not ``bool``)."""
    return dtype in _INTEGER


def is_floating(dtype: DType) -> bool:
    """``dtype`` is a real floating type, bfloat16, float16 and the narrow formats included."""
    return dtype in _FLOATING


def is_narrow(dtype: DType) -> bool:
    """``dtype`` is one of the ``ml_dtypes`` storage formats of :data:`NARROW_DTYPES`."""
    return dtype in _NARROW


_ml_iinfo: Any = ml_dtypes.iinfo  # untyped; accepts the narrow integers and NumPy's
_ml_finfo: Any = ml_dtypes.finfo


def bit_width(dtype: DType) -> int:
    """Bits of one element (``int4``: 4, ``bool``: 8 as stored, ``complex64``: 64)."""
    if dtype in _NARROW:
        return int((_ml_iinfo if dtype in _INTEGER else _ml_finfo)(dtype).bits)
    return dtype.itemsize * 8


def int_range(dtype: DType) -> tuple[int, int]:
    """``(min, max)`` of an integer dtype, narrow ones included (``np.iinfo`` rejects those)."""
    info = _ml_iinfo(dtype)
    return int(info.min), int(info.max)


def float_format(dtype: DType) -> tuple[int, int, int]:
    """``(max exponent, mantissa bits, width)`` of a real floating dtype, as ``finfo`` has them."""
    info = _ml_finfo(dtype)
    return int(info.maxexp), int(info.nmant), int(info.bits)


def is_complex(dtype: DType) -> bool:
    """``dtype`` is complex64 or complex128."""
    return dtype in _COMPLEX


def is_inexact(dtype: DType) -> bool:
    """``dtype`` is floating or complex."""
    return dtype in _INEXACT


def python_scalar_dtype(x: bool | int | float | complex) -> DType:
    """The dtype JAX gives a Python scalar: bool, or the default int/float/complex dtype.

    Only exact Python types count (a NumPy scalar such as ``np.float64(1)`` is a strongly typed
    value with its own dtype, even though it subclasses ``float``).
    """
    default = _PYTHON_SCALAR_DTYPES.get(type(x))
    if default is None:
        raise TypeError(f"{x!r} of type {type(x).__name__} is not a Python scalar")
    return default(None)


def python_scalar_operand(x: bool | int | float | complex) -> Operand:
    """``(dtype, weak_type)`` of a Python scalar: ``int``/``float``/``complex`` are weak, bool not."""
    return python_scalar_dtype(x), type(x) is not bool


# --------------------------------------------------------------------------------------------
# The promotion lattice
# --------------------------------------------------------------------------------------------
# Nodes are small ints: 0..14 index SUPPORTED_DTYPES, then the weak categories.
_N_STRONG: Final = len(SUPPORTED_DTYPES)
_I_WEAK: Final = _N_STRONG
_F_WEAK: Final = _N_STRONG + 1
_C_WEAK: Final = _N_STRONG + 2
_NODES: Final = range(_N_STRONG + 3)
_INDEX: Final[dict[DType, int]] = {d: i for i, d in enumerate(SUPPORTED_DTYPES)}


def _n(dtype: DType) -> int:
    return _INDEX[dtype]


def _standard_lattice(x64: bool) -> dict[int, tuple[int, ...]]:
    """Each node's immediate successors in JAX's standard lattice (its ``_type_promotion_lattice``).

    Without 64-bit mode the single edge that forms a 64-bit type from 32-bit inputs,
    ``u32 -> i64``, is replaced by ``u32 -> i32`` (so ``int32 ⊔ uint32`` is int32 there).
    The narrow dtypes are leaves under the weak categories: only Python scalars reach them.
    """
    n = _n
    narrow_ints = tuple(n(d) for d in _NARROW_INTS)
    narrow_floats = tuple(n(d) for d in _NARROW_FLOATS)
    return {
        n(bool_): (_I_WEAK,),
        _I_WEAK: (n(uint8), n(int8), *narrow_ints),
        n(uint8): (n(int16), n(uint16)),
        n(uint16): (n(int32), n(uint32)),
        n(uint32): (n(int64) if x64 else n(int32), n(uint64)),
        n(uint64): (_F_WEAK,),
        n(int8): (n(int16),),
        n(int16): (n(int32),),
        n(int32): (n(int64),),
        n(int64): (_F_WEAK,),
        _F_WEAK: (*narrow_floats, n(bfloat16), n(float16), _C_WEAK),
        n(bfloat16): (n(float32),),
        n(float16): (n(float32),),
        n(float32): (n(float64), n(complex64)),
        n(float64): (n(complex128),),
        _C_WEAK: (n(complex64),),
        n(complex64): (n(complex128),),
        n(complex128): (),
        **{node: () for node in narrow_ints + narrow_floats},
    }


def _strict_lattice() -> dict[int, tuple[int, ...]]:
    """JAX's strict lattice: only weak categories promote (to a dtype of their kind or above)."""
    ints = tuple(_n(d) for d in SUPPORTED_DTYPES if d in _INTEGER)
    floats = tuple(_n(d) for d in SUPPORTED_DTYPES if d in _FLOATING)
    complexes = tuple(_n(d) for d in SUPPORTED_DTYPES if d in _COMPLEX)
    out: dict[int, tuple[int, ...]] = {i: () for i in _NODES}
    out[_I_WEAK] = (_F_WEAK, *ints)
    out[_F_WEAK] = (_C_WEAK, *floats)
    out[_C_WEAK] = complexes
    return out


def _upper_bounds(lattice: Mapping[int, Iterable[int]]) -> dict[int, frozenset[int]]:
    """Reflexive-transitive closure: every node's set of upper bounds."""
    out: dict[int, frozenset[int]] = {}
    for node in lattice:
        seen = {node}
        todo = [node]
        while todo:
            for succ in lattice[todo.pop()]:
                if succ not in seen:
                    seen.add(succ)
                    todo.append(succ)
        out[node] = frozenset(seen)
    return out


_JOINS: dict[tuple[int, int, int], int | None] = {}
"""Memo of :func:`_join` (keyed by the lattice's id): the tables below ask for each pair of
nodes many times, once per combination of weak flags and canonicalizations."""


def _join(ubs: Mapping[int, frozenset[int]], a: int, b: int) -> int | None:
    """Least upper bound of two nodes, or ``None`` when they have no common upper bound."""
    key = (id(ubs), a, b)
    if key in _JOINS:
        return _JOINS[key]
    common = ubs[a] & ubs[b]
    least = [c for c in common if common <= ubs[c]]
    assert len(least) <= 1, f"promotion lattice is ill-formed at {a}, {b}: {least}"
    out = least[0] if least else None
    _JOINS[key] = out
    return out


def _node(op: Operand) -> int:
    """Lattice node of an operand: its dtype, or its kind's weak category (bool is never weak)."""
    dtype, weak = op
    if not weak or dtype == bool_:
        return _n(dtype)
    if dtype in _INTEGER:
        return _I_WEAK
    if dtype in _FLOATING:
        return _F_WEAK
    return _C_WEAK


def _operand_of(node: int, x64: bool) -> Operand:
    """Representative operand of a node: a weak category becomes its kind's default dtype."""
    if node == _I_WEAK:
        return default_int_dtype(x64), True
    if node == _F_WEAK:
        return default_float_dtype(x64), True
    if node == _C_WEAK:
        return default_complex_dtype(x64), True
    return SUPPORTED_DTYPES[node], False


_ALL_OPERANDS: Final[tuple[Operand, ...]] = tuple(
    (d, w) for d in SUPPORTED_DTYPES for w in (False, True)
)
_CORE_DTYPES: Final[tuple[DType, ...]] = SUPPORTED_DTYPES[: len(SUPPORTED_DTYPES) - len(NARROW_DTYPES)]
_CORE_OPERANDS: Final[tuple[Operand, ...]] = tuple((d, w) for d in _CORE_DTYPES for w in (False, True))

_STANDARD_UBS: Final = (_upper_bounds(_standard_lattice(False)), _upper_bounds(_standard_lattice(True)))
_STRICT_UBS: Final = _upper_bounds(_strict_lattice())

_PairKey: TypeAlias = tuple[object, ...]
"""Key of the pair tables: ``(a, b)``; typed loosely so ``result_type``'s ``*operands`` is one."""

_Entry = TypeVar("_Entry")


class _PairTable(dict[_PairKey, _Entry]):
    """A promotion table: filled at import for the fifteen core dtypes, and on first use for a
    pair with a narrow dtype (all 32 dtypes would make the import-time tables 4.5 times larger,
    and NumPy dtypes hash slowly). A key that is not a pair of supported dtypes or operands
    raises ``KeyError``, which the callers turn into a ``TypeError`` naming the bad operand."""

    def __init__(self, entry: Callable[[Any, Any], _Entry], keys: Iterable[Any]) -> None:
        super().__init__({(a, b): entry(a, b) for a in keys for b in keys})
        self._entry = entry

    def __missing__(self, key: _PairKey) -> _Entry:
        if len(key) != 2 or not all(_is_supported_key(k) for k in key):
            raise KeyError(key)
        value = self._entry(key[0], key[1])
        self[key] = value
        return value


def _is_supported_key(k: object) -> bool:
    if isinstance(k, np.dtype):
        return k in _SUPPORTED
    return (
        isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], np.dtype) and k[0] in _SUPPORTED
        and isinstance(k[1], (bool, np.bool_))
    )


def _promote_entry(ubs: Mapping[int, frozenset[int]]) -> Callable[[DType, DType], DType | None]:
    def entry(a: DType, b: DType) -> DType | None:
        j = _join(ubs, _n(a), _n(b))
        # The only weak result of two strong dtypes is u64 ⊔ i64 = f*, which
        # jnp.promote_types reports as np.dtype(float), i.e. float64 in either mode.
        return None if j is None else (float64 if j == _F_WEAK else SUPPORTED_DTYPES[j])

    return entry


def _lattice_entry(
    ubs: Mapping[int, frozenset[int]], x64: bool, canonicalize: bool
) -> Callable[[Operand, Operand], Operand | None]:
    """Pure lattice join of two operands (optionally canonicalizing them first)."""
    canon = _CANON_X64 if x64 else _CANON_X32

    def entry(a: Operand, b: Operand) -> Operand | None:
        ca, cb = ((canon[a[0]], a[1]), (canon[b[0]], b[1])) if canonicalize else (a, b)
        j = _join(ubs, _node(ca), _node(cb))
        return None if j is None else _operand_of(j, x64)

    return entry


def _all_weak_result(dtypes: Iterable[DType], x64: bool) -> Operand | None:
    """JAX's shortcut when every operand is weak (standard mode only): join the dtypes as if
    strong, then give the result its kind's default dtype, weakly typed (``None`` when the
    strong dtypes do not join, as for two different narrow dtypes). It differs from the
    lattice only for weak *unsigned* operands (JAX keeps them unsigned: weak uint8 alone is weak
    uint32; and weak uint64 with a weak signed int is weak float64), which fcore never creates
    from Python scalars; see ``result_type``.
    """
    canon = _CANON_X64 if x64 else _CANON_X32
    ubs = _STANDARD_UBS[x64]
    node: int | None = None
    for i, d in enumerate(dtypes):
        n = _n(canon[d])
        node = n if i == 0 else (None if node is None else _join(ubs, node, n))
    if node is None:
        return None
    if node == _F_WEAK or (node < _N_STRONG and SUPPORTED_DTYPES[node] in _FLOATING):
        return default_float_dtype(x64), True
    dtype = SUPPORTED_DTYPES[node]
    if dtype == bool_:
        return bool_, False
    if dtype in _SIGNED:
        return default_int_dtype(x64), True
    if dtype in _UNSIGNED:
        return (uint64 if x64 else uint32), True
    return default_complex_dtype(x64), True


def _result_entry(x64: bool) -> Callable[[Operand, Operand], Operand | None]:
    """``jax.dtypes.result_type`` of two operands in standard mode: the lattice join, except
    JAX's all-weak shortcut (``_all_weak_result``) when both are weak."""
    join = _lattice_entry(_STANDARD_UBS[x64], x64, canonicalize=True)

    def entry(a: Operand, b: Operand) -> Operand | None:
        return _all_weak_result((a[0], b[0]), x64) if a[1] and b[1] else join(a, b)

    return entry


# Index: 2 * strict + x64.
_PROMOTE_TABLES: Final = (
    _PairTable(_promote_entry(_STANDARD_UBS[0]), _CORE_DTYPES),
    _PairTable(_promote_entry(_STANDARD_UBS[1]), _CORE_DTYPES),
    _PairTable(_promote_entry(_STRICT_UBS), _CORE_DTYPES),
    _PairTable(_promote_entry(_STRICT_UBS), _CORE_DTYPES),
)
# promote_weak: pure lattice, no canonicalization; index x64.
_JOIN_TABLES: Final = (
    _PairTable(_lattice_entry(_STANDARD_UBS[0], False, canonicalize=False), _CORE_OPERANDS),
    _PairTable(_lattice_entry(_STANDARD_UBS[1], True, canonicalize=False), _CORE_OPERANDS),
)
# result_type folds over three or more operands: pure lattice on canonicalized operands.
_FOLD_TABLES: Final = (
    _PairTable(_lattice_entry(_STANDARD_UBS[0], False, canonicalize=True), _CORE_OPERANDS),
    _PairTable(_lattice_entry(_STANDARD_UBS[1], True, canonicalize=True), _CORE_OPERANDS),
    _PairTable(_lattice_entry(_STRICT_UBS, False, canonicalize=True), _CORE_OPERANDS),
    _PairTable(_lattice_entry(_STRICT_UBS, True, canonicalize=True), _CORE_OPERANDS),
)
# result_type of two operands, exactly as JAX (strict mode has no all-weak shortcut).
_RESULT_TABLES: Final = (
    _PairTable(_result_entry(False), _CORE_OPERANDS),
    _PairTable(_result_entry(True), _CORE_OPERANDS),
    _FOLD_TABLES[2],
    _FOLD_TABLES[3],
)
# result_type of one operand (the same in both promotion modes: JAX keeps a lone weak operand's
# kind, so a weak uint8 is a weak uint32/uint64); index x64.
_SINGLE_TABLES: Final[tuple[dict[object, Operand], ...]] = tuple(
    {
        op: cast(Operand, _all_weak_result((op[0],), x64)) if op[1] else ((_CANON_X64 if x64 else _CANON_X32)[op[0]], False)
        for op in _ALL_OPERANDS
    }
    for x64 in (False, True)
)


def _describe(op: object) -> str:
    if isinstance(op, tuple) and len(op) == 2 and isinstance(op[0], np.dtype):
        return f"weakly-typed {op[0].name}" if op[1] and op[0] != bool_ else op[0].name
    return repr(op)


def _strict_error(operands: Iterable[object]) -> TypePromotionError:
    names = ", ".join(dict.fromkeys(_describe(op) for op in operands))
    return TypePromotionError(
        f"no implicit dtype promotion between {names} under numpy_dtype_promotion='strict': "
        "strict mode only lets Python scalars (weak types) adapt to an array's dtype. "
        "Cast explicitly (e.g. x.astype(...)) or use numpy_dtype_promotion('standard')."
    )


def _no_path_error(operands: Iterable[object]) -> TypePromotionError:
    """JAX's error for operands without a common upper bound in the standard lattice: one of
    them is a narrow dtype, which promotes with nothing but Python scalars."""
    ops = list(operands)
    names = ", ".join(dict.fromkeys(_describe(op) for op in ops))
    narrow = [op[0] for op in ops if isinstance(op, tuple) and isinstance(op[0], np.dtype) and op[0] in _NARROW]
    kind = "int32" if narrow and narrow[0] in _INTEGER else "float32"
    return TypePromotionError(
        f"no implicit dtype promotion path between {names}: to avoid unintended promotion, the "
        "narrow dtypes (int1/2/4, uint1/2/4, float4, float6, float8) promote only with Python "
        f"scalars. Convert explicitly, e.g. x.astype('{kind}')."
    )


def _promotion_error(operands: Iterable[object], strict: bool) -> TypePromotionError:
    return _strict_error(operands) if strict else _no_path_error(operands)


def _check_operands(operands: Iterable[object]) -> None:
    """Slow path after a table miss: raise a ``TypeError`` naming the malformed operand."""
    for op in operands:
        if not (isinstance(op, tuple) and len(op) == 2):
            raise TypeError(f"an operand must be a (dtype, weak_type) pair, got {op!r}")
        dtype, weak = op
        if not isinstance(dtype, np.dtype) or dtype not in _SUPPORTED:
            raise _unsupported(dtype)
        if not isinstance(weak, (bool, np.bool_)):
            raise TypeError(f"weak_type must be a bool, got {weak!r}")


def promote_types(a: DType, b: DType) -> DType:
    """``jnp.promote_types`` on two (strong) dtypes: their least upper bound in the lattice.

    Like JAX it reads the 64-bit mode (``int32 ⊔ uint32`` is int64 with it, int32 without)
    and the promotion mode (``TypePromotionError`` in strict mode for distinct dtypes), but it
    does not canonicalize: ``int64 ⊔ int8`` is int64 and ``uint64 ⊔ int64`` is float64 always.
    """
    idx = 2 * (promotion_mode() == "strict") + x64_enabled()
    try:
        out = _PROMOTE_TABLES[idx][(a, b)]
    except KeyError:
        raise _unsupported(b if a in _SUPPORTED else a) from None
    if out is None:
        raise _promotion_error(((a, False), (b, False)), idx >= 2)
    return out


def promote_weak(a: Operand, b: Operand, *, x64: bool | None = None) -> Operand:
    """Join of two ``(dtype, weak_type)`` operands in the standard lattice, without canonicalizing.

    A weak operand is its kind's weak category, so ``(int16, False) ⊔ (int32, True)`` is
    ``(int16, False)``; a weak result is reported as its kind's default dtype for ``x64``
    (``None``: the current mode), e.g. ``(int8, False) ⊔ (float32, True) = (float32, True)``
    without 64-bit mode. Strictness is :func:`result_type`'s; this raises only for a narrow dtype
    meeting another strong dtype (``TypePromotionError``), which no lattice joins.
    """
    try:
        out = _JOIN_TABLES[_x64(x64)][(a, b)]
    except (KeyError, TypeError):
        _check_operands((a, b))
        raise
    if out is None:
        raise _no_path_error((a, b))
    return out


def result_type(*operands: Operand) -> Operand:
    """The ``(dtype, weak_type)`` of combining ``operands``, exactly as ``jax.dtypes.result_type``.

    Operands are canonicalized for the current 64-bit mode first (as JAX does), then joined in
    the lattice; the result is canonical and a weak result carries its kind's default dtype.
    In strict mode (:func:`fcore.config.numpy_dtype_promotion`) only weak operands may promote;
    anything else raises :class:`fcore.errors.TypePromotionError` naming the dtypes.

    When *every* operand is weak, JAX joins them as strong dtypes and makes the result weak
    (standard mode only), and so does this function; it differs from the plain lattice join
    (:func:`promote_weak`) only for weak unsigned operands, which Python scalars never produce.
    One or two operands cost one dict lookup.
    """
    strict = promotion_mode() == "strict"
    x64 = x64_enabled()
    n = len(operands)
    try:
        if n == 2:
            out = _RESULT_TABLES[2 * strict + x64][operands]
        elif n == 1:
            return _SINGLE_TABLES[x64][operands[0]]
        elif n == 0:
            raise ValueError("result_type needs at least one operand")
        else:
            _check_operands(operands)
            if not strict and all(weak for _, weak in operands):
                out = _all_weak_result([d for d, _ in operands], x64)
                if out is None:
                    raise _no_path_error(operands)
                return out
            table = _FOLD_TABLES[2 * strict + x64]
            out = table[(operands[0], operands[1])]
            for op in operands[2:]:
                if out is None:
                    break
                out = table[(out, op)]
    except (KeyError, TypeError):
        _check_operands(operands)
        raise
    if out is None:
        raise _promotion_error(operands, strict)
    return out

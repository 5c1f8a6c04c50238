"""Operand handling shared by ``fcore.numpy``: dtype promotion, conversion and broadcasting.

Every ``fnp`` function reads its operands as ``(dtype, weak_type)`` pairs, promotes them with
:func:`fcore.ir.dtypes.result_type` (JAX's lattice, 64-bit and strict modes included), converts
each to the result dtype and broadcasts NumPy-style with ``lax.broadcast_in_dim``. Binary
operations sit on the tracing hot path, so :func:`promote2` does no work beyond what the
operands need: same-dtype operands of equal shape (or a rank-0 one) go straight to ``lax``.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any, cast

from typing_extensions import TypeGuard

import numpy as np

from fcore import lax
from fcore.config_options import RANK_PROMOTION
from fcore.interpreters.array import Array, ArrayImpl
from fcore.ir import dtypes
from fcore.ir.dtypes import DType, Operand

NpArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]
Axis = int | Sequence[int] | None

_PY_SCALARS = (bool, int, float, complex)
_INT_FLOAT = (int, float)
INEXACT_DTYPES = frozenset(d for d in dtypes.SUPPORTED_DTYPES if dtypes.is_inexact(d))
_canon = dtypes.canonicalize_dtype
_result_type = dtypes.result_type
_bool = dtypes.bool_


_ARRAY_TYPES: set[type] = set()
"""Concrete classes known to be ``Array`` subclasses: ``type(x) in _ARRAY_TYPES`` is much
cheaper than ``isinstance(x, Array)`` (an ABC check) on the hot path."""


_OTHER_TYPES: set[type] = set()
"""Concrete classes known not to be ``Array`` subclasses (Python scalars, NumPy arrays, ...)."""


def is_array(x: object) -> TypeGuard[Array]:
    """``isinstance(x, Array)``, memoized per concrete class."""
    t = type(x)
    if t in _ARRAY_TYPES:
        return True
    if t in _OTHER_TYPES:
        return False
    if isinstance(x, Array):
        _ARRAY_TYPES.add(t)
        return True
    _OTHER_TYPES.add(t)
    return False


def _not_arraylike(name: str, x: object, pos: int = 0) -> TypeError:
    return TypeError(
        f"{name} requires ndarray or scalar arguments, got {type(x)} at position {pos}."
    )


def operand(x: object, name: str = "fcore.numpy", pos: int = 0) -> Operand:
    """``(dtype, weak_type)`` of an array-like: fcore arrays, NumPy values, Python scalars."""
    t = type(x)
    if t is float or t is int or t is complex:
        return dtypes.python_scalar_dtype(x), True  # type: ignore[arg-type]
    if t is bool:
        return _bool, False
    if is_array(x):
        aval = x.aval
        return aval.dtype, aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return _canon(np.dtype(x.dtype)), False
    raise _not_arraylike(name, x, pos)


def shape_of(x: object) -> Shape:
    if type(x) in _PY_SCALARS:
        return ()
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return tuple(x.shape)
    return ()



def asarray(x: object, name: str = "fcore.numpy", pos: int = 0) -> Array:
    """An array-like as an fcore ``Array`` (``lax.asarray``): Python scalars are weak."""
    if is_array(x):
        return x
    t = type(x)
    if t in _PY_SCALARS:
        return ArrayImpl(np.asarray(x, dtypes.python_scalar_dtype(x)), t is not bool)  # type: ignore[arg-type]
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        dt = _canon(arr.dtype)
        return ArrayImpl(arr if dt == arr.dtype else _host_cast(arr, dt), False)
    raise _not_arraylike(name, x, pos)


def _kind(dt: DType) -> int:
    if dtypes.is_bool(dt):
        return 0
    if dtypes.is_integer(dt):
        return 1
    if dtypes.is_floating(dt):
        return 2
    return 3


def _host_cast(x: object, dt: DType) -> NpArray:
    """Cast a host value the way JAX does (``np.asarray(x).astype(dt)``: ints wrap around)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(x).astype(dt)


_FMAX: dict[DType, float] = {
    d: float(np.finfo(d).max) if d != dtypes.bfloat16 else 3.3895313892515355e38
    for d in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
}
_FMAX[dtypes.complex64] = _FMAX[dtypes.float32]
_FMAX[dtypes.complex128] = _FMAX[dtypes.float64]
_IRANGE: dict[DType, tuple[int, int]] = {
    d: (int(np.iinfo(d).min), int(np.iinfo(d).max))
    for d in (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
              dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
}


def convert(x: object, dt: DType, weak: bool = False) -> Array:
    """``x`` with dtype ``dt`` and weak type ``weak`` (JAX's ``_convert_element_type``).

    Host values (Python scalars, NumPy arrays) are cast on the host when the cast does not
    go down a kind (bool < int < float < complex); other casts go through
    ``lax.convert_element_type`` so that they follow its semantics (NaN to int is 0, ...).
    """
    t = type(x)
    if t in _ARRAY_TYPES or (t not in _PY_SCALARS and is_array(x)):
        aval = cast(Array, x).aval
        if aval.dtype == dt and aval.weak_type == weak:
            return cast(Array, x)
        return lax.convert_element_type(cast(Array, x), dt, weak)
    if t is float:
        fmax = _FMAX.get(dt)  # present for every inexact dtype
        if fmax is not None:
            if -fmax <= x <= fmax or x != x:  # type: ignore[operator]
                return ArrayImpl(np.asarray(x, dt), weak)
            return ArrayImpl(_host_cast(x, dt), weak)
        return lax.convert_element_type(asarray(x), dt, weak)
    if t is int:
        rng = _IRANGE.get(dt)
        if rng is not None:
            if rng[0] <= x <= rng[1]:  # type: ignore[operator]
                return ArrayImpl(np.asarray(x, dt), weak)
            return ArrayImpl(_host_cast(x, dt), weak)
        fmax = _FMAX.get(dt)
        if fmax is not None and -fmax <= x <= fmax and -(2**53) <= x <= 2**53:  # type: ignore[operator]
            return ArrayImpl(np.asarray(x, dt), weak)
        return ArrayImpl(_host_cast(x, dt), weak)
    if t is bool:
        return ArrayImpl(np.asarray(x, dt), weak)
    if t is complex:
        if dtypes.is_complex(dt):
            return ArrayImpl(_host_cast(x, dt), weak)
        if weak:  # JAX converts with the primitive: the real part
            return lax.convert_element_type(asarray(x), dt, weak)
        # As JAX (np.asarray): a TypeError for int/float targets, nonzero-ness for bool.
        return ArrayImpl(np.asarray(x, dt), weak)
    if isinstance(x, (np.ndarray, np.generic)):
        src = _canon(np.dtype(x.dtype))
        if _kind(src) <= _kind(dt):
            return ArrayImpl(_host_cast(x, dt), weak)
        return lax.convert_element_type(asarray(x), dt, weak)
    raise _not_arraylike("convert", x)


# -- dtype categories ---------------------------------------------------------------------
def to_inexact(dt: DType) -> DType:
    """JAX's ``to_inexact_dtype`` (then canonicalized): ints and bool become floating."""
    if dtypes.is_inexact(dt):
        return dt
    if dt in (dtypes.int64, dtypes.uint64):
        return _canon(dtypes.float64)
    return dtypes.float32


def to_numeric(dt: DType) -> DType:
    """JAX's ``to_numeric_dtype``: bool becomes int32."""
    return dtypes.int32 if dtypes.is_bool(dt) else dt



# -- shapes -----------------------------------------------------------------------------
def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy's broadcasting of shapes; ``ValueError`` if they are incompatible."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if o == 1:
                out[off + i] = d
            elif d != 1 and d != o:
                raise ValueError(
                    "Incompatible shapes for broadcasting: shapes="
                    + str([tuple(t) for t in shapes])
                )
    return tuple(out)


def check_rank_promotion(name: str, shapes: Sequence[Shape]) -> None:
    """``jax_numpy_rank_promotion``: operands of ``name`` of different (non-zero) ranks are a
    warning (``"warn"``) or an error (``"raise"``), with JAX's messages; ``"allow"``: nothing."""
    mode = RANK_PROMOTION.get()
    if mode == "allow":
        return
    shown = " ".join(map(str, (tuple(s) for s in shapes)))
    if mode == "warn":
        warnings.warn(
            f"Following NumPy automatic rank promotion for {name} on shapes {shown}. Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more information, "
            "see https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
            stacklevel=4,
        )
    else:
        raise ValueError(
            f"Operands could not be broadcast together for {name} on shapes {shown} and with the config option "
            "jax_numpy_rank_promotion='raise'. For more information, see "
            "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
        )


def broadcast_to(x: Array, shape: Shape) -> Array:
    """``x`` broadcast NumPy-style to ``shape`` (one ``broadcast_in_dim``, or ``x`` itself)."""
    xs = x.shape
    if xs == shape:
        return x
    nd = len(shape)
    off = nd - len(xs)
    if off < 0 or any(d != 1 and d != shape[off + i] for i, d in enumerate(xs)):
        raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape {shape}")
    return lax.broadcast_in_dim(x, shape, tuple(range(off, nd)))


def normalize_axis(axis: object, ndim: int, name: str = "axis") -> int:
    """``axis`` in ``[0, ndim)``; out of bounds is NumPy's ``AxisError``, which is both the
    ``ValueError`` and the ``IndexError`` that different ``jnp`` functions raise."""
    a = operator.index(axis)  # type: ignore[arg-type]
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(f"{name} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


def normalize_axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    """Reduction axes: ``None`` is all axes; ints may be negative; duplicates are an error."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim) for a in axis)
    else:
        axes = (normalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes


# -- promotion --------------------------------------------------------------------------
def promote2(x: object, y: object, name: str = "fcore.numpy") -> tuple[Array, Array, DType]:
    """Promote two operands to their common dtype and lax-compatible shapes.

    Returns the converted operands and their dtype; their shapes are equal, or one is rank 0
    (lax broadcasts rank-0 operands itself). The hot path of every binary operator: an
    operand already of the result dtype is passed through untouched.
    """
    if type(x) is ArrayImpl and type(y) is float:
        # The eager ``x * 0.9``: an inexact host array absorbs a weak Python float (``convert``
        # inlined; out-of-range floats take the general path, which casts them as JAX does).
        host = x._np
        if host is not None:
            dt = host.dtype
            fmax = _FMAX.get(dt)
            if fmax is not None and -fmax <= y <= fmax:
                return x, ArrayImpl(np.asarray(y, dt), x._weak), dt
    xarr: Array | None = None
    yarr: Array | None = None
    if is_array(x):
        ax = x.aval
        ty = type(y)
        if (ty is float or ty is int) and ax.dtype in INEXACT_DTYPES:
            # The common ``x * 0.9``: an inexact array absorbs a weak Python scalar.
            return x, convert(y, ax.dtype, ax.weak_type), ax.dtype
        xarr = x
        ox: Operand = (ax.dtype, ax.weak_type)
        sx = ax.shape
    else:
        ox = operand(x, name, 0)
        sx = shape_of(x)
    if is_array(y):
        yarr = y
        ay = y.aval
        oy: Operand = (ay.dtype, ay.weak_type)
        sy = ay.shape
    else:
        oy = operand(y, name, 1)
        sy = shape_of(y)
    if yarr is not None and xarr is None and type(x) in _INT_FLOAT and oy[0] in INEXACT_DTYPES:
        dt, weak = oy  # ``0.9 * x``
    else:
        dt, weak = _result_type(ox, oy)
    cx = xarr if (xarr is not None and ox[0] == dt) else convert(x, dt, weak)
    cy = yarr if (yarr is not None and oy[0] == dt) else convert(y, dt, weak)
    if sx == sy or not sx or not sy:
        return cx, cy, dt
    shape = _binary_shape(name, sx, sy, dt)
    return broadcast_to(cx, shape), broadcast_to(cy, shape), dt


def promote2_dtype(x: object, y: object, dt: DType, weak: bool) -> tuple[Array, Array]:
    """Convert two operands to ``(dt, weak)`` and lax-compatible shapes."""
    cx, cy = convert(x, dt, weak), convert(y, dt, weak)
    sx, sy = cx.shape, cy.shape
    if sx == sy or not sx or not sy:
        return cx, cy
    shape = _binary_shape("fcore.numpy", sx, sy, dt)
    return broadcast_to(cx, shape), broadcast_to(cy, shape)


def _binary_shape(name: str, sx: Shape, sy: Shape, dt: DType) -> Shape:
    """The broadcast shape of a binary operation's operands. When they do not broadcast, as JAX
    0.10: operands of one rank reach the primitive, whose ``TypeError`` names the operation,
    the shapes and the dtype (docs/guide.md, "Bad input"); operands of different ranks fail in
    ``jnp``'s rank promotion first, a ``ValueError`` naming the shapes (JAX's tutorials catch it)."""
    if len(sx) != len(sy):
        check_rank_promotion(name, (sx, sy))
    try:
        return broadcast_shapes(sx, sy)
    except ValueError:
        if len(sx) != len(sy):
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[sx, sy]}") from None
        raise TypeError(f"{name} got incompatible shapes for broadcasting: {sx}, {sy} (dtype {dt}).") from None


def result_of(*args: object, name: str = "fcore.numpy") -> Operand:
    return _result_type(*(operand(a, name, i) for i, a in enumerate(args)))


def promote_dtypes(*args: object, name: str = "fcore.numpy", inexact: bool = False) -> list[Array]:
    """The operands converted to their promoted ``(dtype, weak_type)`` (an inexact one with
    ``inexact``), not broadcast: ``jnp``'s ``promote_dtypes``/``promote_dtypes_inexact``."""
    dt, weak = result_of(*args, name=name)
    if inexact:
        dt = to_inexact(dt)
    return [convert(a, dt, weak) for a in args]


def promote_n(name: str, *args: object, dt: DType | None = None, weak: bool = False, full: bool = False) -> list[Array]:
    """Promote any number of operands to one dtype (``dt`` if given) and broadcast them.

    With ``full=False`` rank-0 operands are left unbroadcast (lax accepts them).
    """
    if dt is None:
        dt, weak = result_of(*args, name=name)
    conv = [convert(a, dt, weak) for a in args]
    shapes = [c.shape for c in conv]
    if full:
        shape = broadcast_shapes(*shapes)
        return [broadcast_to(c, shape) for c in conv]
    nonscalar = [s for s in shapes if s]
    if not nonscalar or all(s == nonscalar[0] for s in nonscalar):
        return conv
    if any(len(s) != len(nonscalar[0]) for s in nonscalar):
        check_rank_promotion(name, shapes)
    shape = broadcast_shapes(*shapes)
    return [c if not c.shape else broadcast_to(c, shape) for c in conv]

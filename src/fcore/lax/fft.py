"""``fft[fft_type, fft_lengths]``: XLA's FFT over the trailing ``len(fft_lengths)`` axes.

One primitive with four kinds (``lax.FftType``): complex-to-complex forward and inverse,
real-to-complex (``RFFT``, last axis halved plus one) and its inverse (``IRFFT``). It lowers
to ``stablehlo.fft``; the eager impl is NumPy's pocketfft in the operand's precision. The
transpose rules are JAX's (``RFFT`` and ``IRFFT`` transpose to each other, with the
half-spectrum's doubled bins weighted). One block (docs/adding_a_primitive.md).
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Sequence

import attrs
import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType
from fcore.ir.parser import register_param_enum
from fcore.lax._base import ArrayLike, NpArray, checked_impl, dtype_of
from fcore.lax._primitive import Primitive
from fcore.lax.elementwise import conj, convert_element_type, mul
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import Dim, batching_rules, moveaxis
from fcore.transforms.jvp import deflinear
from fcore.transforms.transpose import transpose_rules


__all__ = ["FftType", "fft_p", "fft"]


@register_param_enum
class FftType(enum.IntEnum):
    """Which FFT ``fft`` computes (``lax.FftType``)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _fft_type(t: FftType | str) -> FftType:
    if isinstance(t, FftType):
        return t
    if isinstance(t, str) and t.upper() in FftType.__members__:
        return FftType[t.upper()]
    if isinstance(t, str):
        raise ValueError(f"Unknown FFT type '{t}'")
    raise TypeError(f"Unknown FFT type value '{t}'")


def _complex_of(dt: DType) -> DType:
    return dtypes.to_dtype(np.complex128) if dt in (np.float64, np.complex128) else dtypes.to_dtype(np.complex64)


def _real_of(dt: DType) -> DType:
    return dtypes.to_dtype(np.float64) if dt == np.complex128 else dtypes.to_dtype(np.float32)


# -- fft[fft_type, fft_lengths] ----------------------------------------------------------------
@attrs.frozen(kw_only=True)
class FftParams:
    """``fft[fft_type, fft_lengths]``: the kind of transform and the logical lengths of the
    trailing axes it transforms."""

    fft_type: FftType
    fft_lengths: tuple[int, ...]


fft_p = Primitive("fft", params=FftParams)


@fft_p.def_abstract_eval
def _fft_abstract_eval(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> ShapedArray:
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions as fft_lengths {fft_lengths}."
        )
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {dtypes.dtype_name(x.dtype)}")
        if x.shape[x.ndim - k:] != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}")
        shape = x.shape[: x.ndim - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _complex_of(x.dtype))
    if not dtypes.is_complex(x.dtype):
        raise ValueError(f"{fft_type.name} input must be complex64 or complex128, got {dtypes.dtype_name(x.dtype)}")
    if fft_type == FftType.IRFFT:
        if x.shape[x.ndim - k: x.ndim - 1] != fft_lengths[:-1]:
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be equal to all except the last fft_length, "
                f"got fft_lengths={fft_lengths}"
            )
        return ShapedArray(x.shape[: x.ndim - k] + fft_lengths, _real_of(x.dtype))
    if x.shape[x.ndim - k:] != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}")
    return ShapedArray(x.shape, x.dtype)


@checked_impl(fft_p)
def _fft_impl(x: NpArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> NpArray:
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        out = np.fft.fftn(x, axes=axes)
        return out.astype(x.dtype)
    if fft_type == FftType.IFFT:
        return np.fft.ifftn(x, axes=axes).astype(x.dtype)
    if fft_type == FftType.RFFT:
        return np.fft.rfftn(x, axes=axes).astype(_complex_of(x.dtype))
    return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(_real_of(x.dtype))


deflinear(fft_p)


def _half_spectrum_weights(m: int, n: int) -> NpArray:
    """Weights of the ``m = n // 2 + 1`` bins of a real signal's half spectrum: 2 for the
    bins that stand for a conjugate pair, 1 for the DC bin (and the Nyquist bin, ``n`` even)."""
    w = np.full((m,), 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[m - 1] = 1.0
    return w


@transpose_rules.register(fft_p)
def _fft_transpose(ct: Array, x: UndefinedPrimal, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> list[Array]:
    aval = get_aval(ct)
    if fft_type == FftType.RFFT:
        w = _half_spectrum_weights(aval.shape[-1], fft_lengths[-1]).astype(aval.dtype)
        scaled = mul(conj(ct), np.broadcast_to(1 / w, aval.shape).astype(aval.dtype))
        out = fft_p.bind(scaled, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
        n = math.prod(fft_lengths)
        return [mul(out, np.full(get_aval(out).shape, n, _real_of(aval.dtype)))]
    if fft_type == FftType.IRFFT:
        y = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        yaval = get_aval(y)
        w = _half_spectrum_weights(yaval.shape[-1], fft_lengths[-1]) / math.prod(fft_lengths)
        return [conj(mul(y, np.broadcast_to(w, yaval.shape).astype(yaval.dtype)))]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


@batching_rules.register(fft_p)
def _fft_batching(
    axis_size: int, vals: list[Array], dims: list[Dim], *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> tuple[Array, Dim]:
    (x,), (d,) = vals, dims
    assert d is not None
    return fft_p.bind(moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


@lowering_rules.register(fft_p)
def _fft_lowering(ctx: LoweringRuleContext, x: str, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> str:
    lengths = ", ".join(map(str, fft_lengths))
    return ctx.op_typed("stablehlo.fft", [x], ctx.avals_in, ctx.avals_out[0], f", type = {fft_type.name}, length = [{lengths}]")


def fft(x: ArrayLike, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    """``lax.fft``: ``x`` is converted to the transform's input dtype (real for ``RFFT``,
    complex otherwise) and transformed over its trailing ``len(fft_lengths)`` axes."""
    typ = _fft_type(fft_type)
    dt = dtype_of(x)
    if typ == FftType.RFFT and dtypes.is_complex(dt):
        raise ValueError("only real valued inputs supported for rfft")
    # JAX's to_inexact_dtype: integers and bool become float32 (float64 from 64-bit ones).
    inexact = dt if dtypes.is_inexact(dt) else dtypes.canonicalize_dtype(
        dtypes.to_dtype(np.float64 if dtypes.bit_width(dt) == 64 else np.float32)
    )
    target = inexact if typ == FftType.RFFT else (inexact if dtypes.is_complex(inexact) else _complex_of(inexact))
    xc = convert_element_type(x, target)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    if not lengths:
        return xc
    out: Array = fft_p.bind(xc, fft_type=typ, fft_lengths=lengths)
    return out

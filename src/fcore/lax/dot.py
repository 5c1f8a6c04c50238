"""``dot_general``: XLA's general tensor contraction, with JAX's parameters.

``dimension_numbers`` is ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``, tuples of
ints; the result's axes are the batch axes, then lhs's free axes, then rhs's free axes, each in
operand order. The result dtype follows JAX (XLA's "higher precision type" of the two operands,
or ``preferred_element_type`` when given); ``preferred_element_type`` is recorded as the user
gave it (``None`` by default), exactly as ``jax.lax.dot_general`` does.

The primitive is one block (docs/adding_a_primitive.md), after the helpers its rules use;
``batch_matmul`` follows it. The eager impl reduces every contraction to one batched
``np.matmul`` (BLAS for floats), and computes bfloat16/float16 products in float32 like XLA's
CPU backend, rounding once at the end.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Union

import attrs
import numpy as np
from typing_extensions import TypeAlias

from fcore.config import default_matmul_precision_value
from fcore.lax.precision_types import DotAlgorithm, DotAlgorithmPreset, unsupported_algorithm
from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.interpreters.eval import get_aval
from fcore.ir import dtypes
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.ir.dtypes import DType, DTypeLike
from fcore.lax._base import ArrayLike, NpArray, checked_impl, shape_of
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import aval_of, bind, prod
from fcore.lax.elementwise import convert_element_type
from fcore.lax.shapes import transpose
from fcore.lax.sharding_constraint import with_sharding_constraint
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import Dim, batching_rules
from fcore.transforms.jvp import defjvp
from fcore.transforms.transpose import transpose_rules

Dims = tuple[int, ...]
DotDimensionNumbers: TypeAlias = tuple[tuple[Dims, Dims], tuple[Dims, Dims]]
#: What ``dot``/``dot_general`` accept: ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``,
#: each an int or a sequence of ints.
DotDimensionNumbersLike: TypeAlias = Sequence[Sequence[Union[int, Sequence[int]]]]

__all__ = [
    "Precision", "DotDimensionNumbers", "dot_general_p", "dot_general", "dot",
    "batch_matmul", "canonicalize_precision",
]


class Precision(enum.Enum):
    """Matmul precision hint (``lax.Precision``): recorded in the jaxpr, no effect on CPU."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_STRINGS.get(value) if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS: dict[str, Precision] = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
}

PrecisionLike: TypeAlias = Union[
    None, str, Precision, tuple[Union[str, Precision], Union[str, Precision]], DotAlgorithm, DotAlgorithmPreset,
]
CanonicalPrecision: TypeAlias = Union[None, tuple[Precision, Precision]]


def canonicalize_precision(precision: PrecisionLike) -> CanonicalPrecision:
    """``None``, or one ``Precision`` per operand (strings such as ``"highest"`` accepted);
    ``None`` takes the ``default_matmul_precision`` setting where one is in force, as in JAX."""
    if precision is None:
        default = default_matmul_precision_value()
        if default is None:
            return None
        if default in DotAlgorithmPreset.__members__:
            return canonicalize_precision(DotAlgorithmPreset[default])
        p = _PRECISION_STRINGS[default]
        return p, p
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        precision = DotAlgorithmPreset[precision]
    if precision is DotAlgorithmPreset.DEFAULT:
        return None  # XLA's choice of algorithm: what no precision asks for
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        raise unsupported_algorithm(precision)
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, str) and precision in _PRECISION_STRINGS:
        p = _PRECISION_STRINGS[precision]
        return p, p
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        a, b = precision
        if isinstance(a, (str, Precision)) and isinstance(b, (str, Precision)):
            pa, pb = canonicalize_precision(a), canonicalize_precision(b)
            if pa is not None and pb is not None:
                return pa[0], pb[0]
    raise ValueError(
        "dot_general: precision must be None, a string in "
        f"{list(_PRECISION_STRINGS)}, a lax.Precision value, a pair of these, or a lax.DotAlgorithmPreset "
        f"or its name; got {precision!r}."
    )


# -- dtype rules ------------------------------------------------------------------------------
#: (max exponent, mantissa bits, width) of the real floating types, as ``finfo`` reports them.
_FLOAT_INFO: dict[DType, tuple[int, int, int]] = {
    d: dtypes.float_format(d) for d in dtypes.SUPPORTED_DTYPES if dtypes.is_floating(d)
}


def _real(dt: DType) -> DType:
    if dt == dtypes.complex64:
        return dtypes.float32
    return dtypes.float64 if dt == dtypes.complex128 else dt


def _bit_width(dt: DType) -> int:
    """Bits of ``dt`` (of its real part for complex types), as JAX's ``_bit_width``."""
    dt = _real(dt)
    if dtypes.is_bool(dt):
        return 1
    if dtypes.is_integer(dt):
        return dtypes.bit_width(dt)
    return _FLOAT_INFO[dt][2]


def _type_properties(dt: DType) -> tuple[bool, int, int, int, bool]:
    """XLA's ``HigherPrecisionType`` key: complex first, then exponent, mantissa, width, signedness."""
    real = _real(dt)
    maxexp, nmant, _ = _FLOAT_INFO.get(real, (-1, -1, 0))
    return (dtypes.is_complex(dt), maxexp, nmant, _bit_width(real), not dtypes.is_unsigned_int(real))


_PROPS: dict[DType, tuple[bool, int, int, int, bool]] = {d: _type_properties(d) for d in dtypes.SUPPORTED_DTYPES}


def _operand_result_dtype(lhs: DType, rhs: DType) -> DType:
    lp, rp = _PROPS[lhs], _PROPS[rhs]
    if lp > rp:
        return lhs
    if rp > lp:
        return rhs
    if lhs != rhs:
        raise TypeError(
            f"dot_general argument type error: {dtypes.dtype_name(lhs)}, {dtypes.dtype_name(rhs)}"
        )
    return lhs


def _result_dtype(lhs: DType, rhs: DType, preferred: DType | None) -> DType:
    result = _operand_result_dtype(lhs, rhs)
    if preferred is None or preferred == result:
        return result
    if not dtypes.is_floating(result) and _bit_width(preferred) < _bit_width(result):
        raise TypeError(
            "dot_general: `preferred_element_type` must not be narrower than the original type, got "
            f"preferred_element_type of {dtypes.dtype_name(preferred)} for result type of "
            f"{dtypes.dtype_name(result)}."
        )
    return preferred


def _compute_dtype(lhs: DType, rhs: DType, out: DType) -> DType:
    """The dtype NumPy multiplies in: the output type, widened to at least float32 for inexact math."""
    base = _operand_result_dtype(lhs, rhs)
    if not dtypes.is_inexact(out) and not dtypes.is_inexact(base):
        return out  # integer/bool: wrapping arithmetic in the output type is exact modulo 2**bits
    wide = np.promote_types(base, dtypes.float32) if dtypes.is_inexact(base) else dtypes.float32
    if dtypes.is_inexact(out):
        wide = np.promote_types(wide, np.promote_types(out, dtypes.float32))
    return np.dtype(wide)


def _check_dims(side: str, ndim: int, contracting: Dims, batch: Dims) -> None:
    for d in (*contracting, *batch):
        if not 0 <= d < ndim:
            raise TypeError(
                f"dot_general requires {side} dimension numbers to be nonnegative and less than the number "
                f"of axes of the {side} value, got {side}_batch of {batch} and {side}_contracting of "
                f"{contracting} for {side} of rank {ndim}"
            )
    if len(set(batch)) != len(batch):
        raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got {side}_batch {batch}.")
    if len(set(contracting)) != len(contracting):
        raise TypeError(
            f"dot_general requires {side} contracting dimensions to be distinct, got {side}_contracting {contracting}."
        )
    if set(contracting) & set(batch):
        raise TypeError(
            f"dot_general requires {side} batch dimensions to be disjoint from contracting dimensions, got "
            f"{side}_batch {batch} and {side}_contracting {contracting}."
        )


def _dims(d: int | Sequence[int]) -> Dims:
    return (operator.index(d),) if isinstance(d, int) else tuple(operator.index(i) for i in d)


def _remaining(n: int, *taken: Dims) -> Dims:
    skip = set().union(*taken)
    return tuple(i for i in range(n) if i not in skip)


def _bump(dims: Dims, b: int) -> Dims:
    return tuple(d + 1 if d >= b else d for d in dims)


def _dims_list(dims: Dims) -> str:
    return f"[{', '.join(map(str, dims))}]"


def _dot_general_transpose_lhs(
    ct: Array,
    x: Array | UndefinedPrimal,
    y: Array,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: DType | None,
    swap_ans: bool = False,
) -> Array:
    """The cotangent of ``x`` in ``dot_general(x, y)`` (JAX's ``_dot_general_transpose_lhs``).

    ``ct``'s axes are (batch, x free, y free) (or (batch, y free, x free) when ``swap_ans``);
    contracting ``ct``'s y-free axes with y's free axes (and batching the batch axes) gives
    (batch, x free, x contracting ordered as y's), which a transpose puts back in x's order.
    """
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    xa = aval_of(x)
    x_kept = _remaining(xa.ndim, x_contract, x_batch)
    y_kept = _remaining(aval_of(y).ndim, y_contract, y_batch)
    nb = len(x_batch)
    ans_batch = tuple(range(nb))
    if swap_ans:
        ans_y = tuple(range(nb, nb + len(y_kept)))
    else:
        ans_y = tuple(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    dims: DotDimensionNumbers = ((ans_y, y_kept), (ans_batch, y_batch))
    x_contract_sorted_by_y = tuple(x_contract[i] for i in np.argsort(y_contract, kind="stable"))
    unsorted_axes = (*x_batch, *x_kept, *x_contract_sorted_by_y)
    out_axes = tuple(int(i) for i in np.argsort(unsorted_axes))
    out = bind(
        dot_general_p, ct, y, dimension_numbers=dims, precision=precision, preferred_element_type=preferred_element_type
    )
    x_bar = transpose(out, out_axes)
    if aval_of(x_bar).dtype != xa.dtype:
        x_bar = convert_element_type(x_bar, xa.dtype, xa.weak_type)
    return x_bar


def _dot_general_batch_dim_nums(
    ndims: tuple[int, int], bdims: tuple[Dim, Dim], dimension_numbers: DotDimensionNumbers
) -> tuple[DotDimensionNumbers, int]:
    """New dimension numbers and the result's batch axis (JAX's ``_dot_general_batch_dim_nums``).

    Both operands batched: the vmapped axes become a new leading batch dimension of the
    dot_general. One batched: its vmapped axis is one more free axis of that operand, and the
    result's batch axis is where that free axis lands among the result's axes.
    """
    lhs_ndim, rhs_ndim = ndims
    lbd, rbd = bdims
    (lc, rc), (lb, rb) = dimension_numbers
    if lbd is not None and rbd is not None:
        lb, rb = (lbd,) + _bump(lb, lbd), (rbd,) + _bump(rb, rbd)
        lc, rc = _bump(lc, lbd), _bump(rc, rbd)
        out_dim = 0
    elif lbd is not None:
        lhs_free = _remaining(lhs_ndim, lb, lc)  # of the batched lhs: its free axes include lbd
        out_dim = len(lb) + sum(1 for d in lhs_free if d < lbd)
        lb, lc = _bump(lb, lbd), _bump(lc, lbd)
    else:
        assert rbd is not None
        rhs_free = _remaining(rhs_ndim, rb, rc)
        out_dim = lhs_ndim - len(lc) + sum(1 for d in rhs_free if d < rbd)
        rb, rc = _bump(rb, rbd), _bump(rc, rbd)
    return ((lc, rc), (lb, rb)), out_dim


# -- dot_general[dimension_numbers, precision, preferred_element_type] ----------------------
@attrs.frozen(kw_only=True)
class DotGeneralParams:
    """``dot_general[dimension_numbers, precision, preferred_element_type]``: the contracting and
    batch axes, one ``Precision`` per operand (or ``None``), and the result dtype asked for."""

    dimension_numbers: DotDimensionNumbers
    precision: CanonicalPrecision
    preferred_element_type: DType | None


dot_general_p = Primitive("dot_general", params=DotGeneralParams)

_aval_cache: dict[tuple[ShapedArray, ShapedArray, DotDimensionNumbers, DType | None], ShapedArray] = {}


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> ShapedArray:
    key = (lhs, rhs, dimension_numbers, preferred_element_type)
    out = _aval_cache.get(key)
    if out is not None:
        return out
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = lhs.shape, rhs.shape
    _check_dims("lhs", len(ls), lc, lb)
    _check_dims("rhs", len(rs), rc, rb)
    if len(lb) != len(rb):
        raise TypeError(
            f"dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch {lb} "
            f"and rhs_batch {rb}."
        )
    if len(lc) != len(rc):
        raise TypeError(
            f"dot_general requires equal numbers of lhs and rhs contracting dimensions, got {lc} and {rc}."
        )
    batch = tuple(ls[i] for i in lb)
    if batch != tuple(rs[i] for i in rb):
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got "
            f"{batch} and {tuple(rs[i] for i in rb)} (operands {lhs.str_short()}, {rhs.str_short()})."
        )
    if tuple(ls[i] for i in lc) != tuple(rs[i] for i in rc):
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{tuple(ls[i] for i in lc)} and {tuple(rs[i] for i in rc)} (operands {lhs.str_short()}, "
            f"{rhs.str_short()})."
        )
    dt = _result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    lskip, rskip = set(lc) | set(lb), set(rc) | set(rb)
    shape = (
        batch
        + tuple(s for i, s in enumerate(ls) if i not in lskip)
        + tuple(s for i, s in enumerate(rs) if i not in rskip)
    )
    out = shaped_array(shape, dt, lhs.weak_type and rhs.weak_type)
    if len(_aval_cache) < 4096:
        _aval_cache[key] = out
    return out


_dtype_cache: dict[tuple[DType, DType, DType | None], tuple[DType, DType]] = {}


def _impl_dtypes(lhs: DType, rhs: DType, preferred: DType | None) -> tuple[DType, DType]:
    key = (lhs, rhs, preferred)
    found = _dtype_cache.get(key)
    if found is None:
        out = _result_dtype(lhs, rhs, preferred)
        found = (out, _compute_dtype(lhs, rhs, out))
        _dtype_cache[key] = found
    return found


@checked_impl(dot_general_p)
def _dot_general_impl(
    lhs: NpArray,
    rhs: NpArray,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> NpArray:
    out_dtype, compute = _impl_dtypes(lhs.dtype, rhs.dtype, preferred_element_type)
    if lhs.dtype != compute:
        lhs = lhs.astype(compute)
    if rhs.dtype != compute:
        rhs = rhs.astype(compute)
    (lc, rc), (lb, rb) = dimension_numbers
    if not lb and lc == (1,) and rc == (0,) and lhs.ndim == 2 and rhs.ndim == 2:
        out = lhs @ rhs  # the common matrix product: straight to BLAS
    else:
        ls, rs = lhs.shape, rhs.shape
        lfree = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
        rfree = [i for i in range(rhs.ndim) if i not in rc and i not in rb]
        b, k = prod([ls[i] for i in lb]), prod([ls[i] for i in lc])
        m, n = prod([ls[i] for i in lfree]), prod([rs[i] for i in rfree])
        lmat = np.transpose(lhs, (*lb, *lfree, *lc)).reshape(b, m, k)
        rmat = np.transpose(rhs, (*rb, *rc, *rfree)).reshape(b, k, n)
        shape = tuple(ls[i] for i in lb) + tuple(ls[i] for i in lfree) + tuple(rs[i] for i in rfree)
        out = np.matmul(lmat, rmat).reshape(shape)
    if out.dtype == out_dtype:
        return out
    if dtypes.is_complex(out.dtype) and not dtypes.is_complex(out_dtype):
        out = out.real
    with np.errstate(invalid="ignore", over="ignore"):
        return out.astype(out_dtype)


def _dot_general_jvp_lhs(
    g: Array, x: Array, y: Array, *, dimension_numbers: DotDimensionNumbers, precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> Array:
    return bind(
        dot_general_p, g, y, dimension_numbers=dimension_numbers, precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _dot_general_jvp_rhs(
    g: Array, x: Array, y: Array, *, dimension_numbers: DotDimensionNumbers, precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> Array:
    return bind(
        dot_general_p, x, g, dimension_numbers=dimension_numbers, precision=precision,
        preferred_element_type=preferred_element_type,
    )


defjvp(dot_general_p, _dot_general_jvp_lhs, _dot_general_jvp_rhs)  # bilinear


@transpose_rules.register(dot_general_p)
def _dot_general_transpose(
    ct: Array,
    x: Array | UndefinedPrimal,
    y: Array | UndefinedPrimal,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> list[Array | None]:
    if isinstance(x, UndefinedPrimal):
        if isinstance(y, UndefinedPrimal):
            raise ValueError("dot_general is not linear in both operands at once")
        x_bar = _dot_general_transpose_lhs(
            ct, x, y, dimension_numbers=dimension_numbers, precision=precision,
            preferred_element_type=preferred_element_type,
        )
        return [x_bar, None]
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped: DotDimensionNumbers = ((y_contract, x_contract), (y_batch, x_batch))
    y_bar = _dot_general_transpose_lhs(
        ct, y, x, dimension_numbers=swapped, precision=precision, preferred_element_type=preferred_element_type,
        swap_ans=True,
    )
    return [None, y_bar]


@batching_rules.register(dot_general_p)
def _dot_general_batching(
    axis_size: int,
    vals: list[Array],
    dims: list[Dim],
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> tuple[Array, Dim]:
    lhs, rhs = vals
    lbd, rbd = dims
    if lbd is None and rbd is None:
        out = bind(
            dot_general_p, lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
            preferred_element_type=preferred_element_type,
        )
        return out, None
    ndims = (get_aval(lhs).ndim, get_aval(rhs).ndim)
    new_dims, out_dim = _dot_general_batch_dim_nums(ndims, (lbd, rbd), dimension_numbers)
    out = bind(
        dot_general_p, lhs, rhs, dimension_numbers=new_dims, precision=precision,
        preferred_element_type=preferred_element_type,
    )
    return out, out_dim


@lowering_rules.register(dot_general_p)
def _dot_general_lowering(
    ctx: LoweringRuleContext,
    lhs: str,
    rhs: str,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision,
    preferred_element_type: DType | None,
) -> str:
    """``stablehlo.dot_general`` typed with the result dtype (the preferred one when given);
    operands of different dtypes are first converted to it, as JAX does on CPU and GPU."""
    la, ra = ctx.avals_in
    out = ctx.avals_out[0]
    if la.dtype != ra.dtype:
        lhs, rhs = ctx.convert(lhs, la, out.dtype), ctx.convert(rhs, ra, out.dtype)
        la, ra = la.update(dtype=out.dtype), ra.update(dtype=out.dtype)
    (lc, rc), (lb, rb) = dimension_numbers
    attributes = ", "
    if lb:
        attributes += f"batching_dims = {_dims_list(lb)} x {_dims_list(rb)}, "
    attributes += f"contracting_dims = {_dims_list(lc)} x {_dims_list(rc)}"
    p0, p1 = precision if precision is not None else (Precision.DEFAULT, Precision.DEFAULT)
    attributes += f", precision = [{p0.name}, {p1.name}]"
    return ctx.op_typed("stablehlo.dot_general", [lhs, rhs], [la, ra], out, attributes)


def dot(
    lhs: ArrayLike,
    rhs: ArrayLike,
    *,
    dimension_numbers: DotDimensionNumbersLike | None = None,
    precision: PrecisionLike = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: object = None,
) -> Array:
    """``lax.dot``: a matrix/vector product, or any contraction given ``dimension_numbers``;
    ``out_sharding`` lays the result out (a sharding constraint: fcore's mesh axes are ``Auto``)."""
    if dimension_numbers is None:
        ls, rs = shape_of(lhs), shape_of(rhs)
        if 1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]:
            dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "dot: dimension_numbers must be specified when not performing simple un-batched "
                f"matrix-matrix, matrix-vector, or vector-vector products; got lhs_shape={ls} rhs_shape={rs}"
            )
    (lc, rc), (lb, rb) = dimension_numbers
    dn: DotDimensionNumbers = ((_dims(lc), _dims(rc)), (_dims(lb), _dims(rb)))
    pref = None if preferred_element_type is None else dtypes.canonicalize_dtype(dtypes.to_dtype(preferred_element_type))
    result: Array = dot_general_p.bind(
        lhs, rhs, dimension_numbers=dn, precision=canonicalize_precision(precision), preferred_element_type=pref
    )
    if out_sharding is not None:
        result = with_sharding_constraint(result, out_sharding)
    return result


def dot_general(
    lhs: ArrayLike,
    rhs: ArrayLike,
    dimension_numbers: DotDimensionNumbersLike,
    precision: PrecisionLike = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: object = None,
) -> Array:
    """``lax.dot_general``: contract ``lhs`` with ``rhs`` over the given contracting and batch axes."""
    return dot(
        lhs, rhs, dimension_numbers=dimension_numbers, precision=precision, preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


# -- conveniences built from the primitive above ----------------------------------------------
def batch_matmul(lhs: ArrayLike, rhs: ArrayLike, precision: PrecisionLike = None) -> Array:
    """Batched matrix product of ``[..., m, k]`` and ``[..., k, n]`` arrays of equal rank
    and batch shape (``lax.batch_matmul``)."""
    ls = tuple(np.shape(lhs)) if not isinstance(lhs, Array) else lhs.shape
    rs = tuple(np.shape(rhs)) if not isinstance(rhs, Array) else rhs.shape
    if len(ls) < 2 or len(ls) != len(rs):
        raise ValueError(f"Arguments to batch_matmul must be at least 2D and agree on their rank, got {len(ls)} and {len(rs)}.")
    if ls[:-2] != rs[:-2]:
        raise ValueError(f"Argument shapes to batch_matmul must agree on leading dimensions, got {ls[:-2]} and {rs[:-2]}.")
    nd = len(ls)
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision=precision)

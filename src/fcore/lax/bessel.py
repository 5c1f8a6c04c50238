"""Exponentially scaled modified Bessel functions of the first kind, ``bessel_i0e`` and
``bessel_i1e`` (``i0e(x) = exp(-|x|) I0(x)``), with JAX's lowerings: ``bessel_i0e`` is
Cephes' Chebyshev expansions in lax operations (traced, as JAX's ``lower_fun``),
``bessel_i1e`` is CHLO's ``bessel_i1e``. Both run eagerly through XLA, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcore.backend.lowering import lowering_rules
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.lax._decomposed import elementwise_run_by_xla, lower_decomposed
from fcore.lax.elementwise import (
    _lower_unary, abs, add, convert_element_type, div, gt, le, mul, reciprocal, select, sign, sqrt, sub,
)
from fcore.lax.shapes import full_like
from fcore.transforms.batching import defvectorized
from fcore.transforms.jvp import defjvp_with_output

__all__ = ["bessel_i0e", "bessel_i1e", "bessel_i0e_p", "bessel_i1e_p"]

_I0E_A32 = [
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6,
    -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5, 1.88502885095841655729E-4,
    -5.76375574538582365885E-4, 1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1,
    -3.04682672343198398683E-1, 6.76795274409476084995E-1,
]
_I0E_B32 = [
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7, 2.89137052083475648297E-6,
    6.88975834691682398426E-5, 3.36911647825569408990E-3, 8.04490411014108831608E-1,
]
_I0E_A64 = [
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14, -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    *_I0E_A32,
]
_I0E_B64 = [
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17, 3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15, 3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11, 4.94060238822496958910E-10, *_I0E_B32,
]


def _chebyshev(x: Array, coefficients: Sequence[float]) -> Array:
    """Clenshaw's recurrence for ``sum c_k T_k`` (Cephes' ``chbevl``)."""
    b0, b1, b2 = full_like(x, 0), full_like(x, 0), full_like(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = add(sub(mul(x, b1), b2), full_like(x, c))
    return mul(full_like(x, 0.5), sub(b0, b2))


def _i0e(x: Array, a: Sequence[float], b: Sequence[float]) -> Array:
    x = abs(x)
    small = _chebyshev(sub(mul(full_like(x, 0.5), x), full_like(x, 2.0)), a)
    large = div(_chebyshev(sub(div(full_like(x, 32.0), x), full_like(x, 2.0)), b), sqrt(x))
    return select(le(x, full_like(x, 8.0)), small, large)


def _bessel_i0e_impl(x: Array) -> Array:
    if x.dtype == dtypes.float64:
        return _i0e(x, _I0E_A64, _I0E_B64)
    if x.dtype == dtypes.float32:
        return _i0e(x, _I0E_A32, _I0E_B32)
    # 16-bit floats lack the precision for Cephes' coefficients: computed in float32.
    return convert_element_type(_i0e(convert_element_type(x, dtypes.float32), _I0E_A32, _I0E_B32), x.dtype)


#: Machine epsilon of the float types (NumPy's ``finfo`` does not know bfloat16).
_EPS = {dtypes.bfloat16: 2.0 ** -7, dtypes.float16: 2.0 ** -10, dtypes.float32: 2.0 ** -23, dtypes.float64: 2.0 ** -52}


# -- bessel_i0e ---------------------------------------------------------------------------------
bessel_i0e_p = elementwise_run_by_xla("bessel_i0e", 1)
defjvp_with_output(bessel_i0e_p, lambda g, y, x: mul(g, sub(bessel_i1e(x), mul(sign(x), y))))
defvectorized(bessel_i0e_p)
lowering_rules.register(bessel_i0e_p)(lower_decomposed(_bessel_i0e_impl, "bessel_i0e"))


def bessel_i0e(x: ArrayLike) -> Array:
    """``exp(-|x|) I0(x)``."""
    out: Array = bessel_i0e_p.bind(x)
    return out


# -- bessel_i1e ---------------------------------------------------------------------------------
bessel_i1e_p = elementwise_run_by_xla("bessel_i1e", 1)


def _i1e_jvp(g: Any, y: Array, x: Array) -> Array:
    """``i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x)``, and 1/2 at 0."""
    eps = _EPS[x.dtype]
    not_tiny = gt(abs(x), full_like(x, eps))
    safe_x = select(not_tiny, x, full_like(x, eps))
    dy_dx = sub(bessel_i0e(safe_x), mul(y, add(sign(safe_x), reciprocal(safe_x))))
    return mul(g, select(not_tiny, dy_dx, full_like(x, 0.5)))


defjvp_with_output(bessel_i1e_p, _i1e_jvp)
defvectorized(bessel_i1e_p)
lowering_rules.register(bessel_i1e_p)(_lower_unary("chlo.bessel_i1e"))


def bessel_i1e(x: ArrayLike) -> Array:
    """``exp(-|x|) I1(x)``."""
    out: Array = bessel_i1e_p.bind(x)
    return out

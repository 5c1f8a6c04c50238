"""``fcore.scipy.special``: special functions (``jax.scipy.special``)."""

from __future__ import annotations

from fcore import lax
from fcore.interpreters.array import Array
from fcore.lax import ArrayLike
from fcore.nn import logsumexp as logsumexp
from fcore.numpy._promotion import convert, operand, to_inexact

__all__ = ["logsumexp", "erf", "erfc", "expit", "logit"]


def _inexact(x: ArrayLike) -> Array:
    dt, weak = operand(x, "special")
    return convert(x, to_inexact(dt), weak)


def erf(x: ArrayLike) -> Array:
    """The error function."""
    return lax.erf(_inexact(x))


def erfc(x: ArrayLike) -> Array:
    """``1 - erf(x)``."""
    a = _inexact(x)
    return lax.sub(convert(1, a.dtype, a.weak_type), lax.erf(a))


def expit(x: ArrayLike) -> Array:
    """The logistic sigmoid."""
    return lax.logistic(_inexact(x))


def logit(x: ArrayLike) -> Array:
    """``log(x / (1 - x))``."""
    a = _inexact(x)
    return lax.log(lax.div(a, lax.sub(convert(1, a.dtype, a.weak_type), a)))

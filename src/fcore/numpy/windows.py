"""Window functions of ``fcore.numpy`` (``bartlett``, ``blackman``, ``hamming``, ``hanning``,
``kaiser``): ``M`` samples of the default floating dtype, by ``jnp``'s formulas."""

from __future__ import annotations

import operator

import numpy as np

from fcore import lax
from fcore.errors import ConcretizationError
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.lax._base import ArrayLike
from fcore.numpy.ufuncs_binary import multiply, power, subtract, true_divide
from fcore.numpy.ufuncs_unary import absolute, cos, i0, sqrt


def _samples(M: int, name: str) -> tuple[int, Array | None]:
    """``M`` as an int, and ``0, 1, ..., M-1`` in the default float dtype (``None`` when
    ``M <= 1``, where every window is ``M`` ones)."""
    try:
        m = operator.index(M)
    except TypeError:
        raise ConcretizationError(f"M argument of jnp.{name} must be a concrete integer; got {M!r}") from None
    if m <= 1:
        return m, None
    return m, lax.iota(dtypes.default_float_dtype(), m)


def _ones(m: int) -> Array:
    return lax.full((max(m, 0),), 1, dtypes.default_float_dtype())


def bartlett(M: int) -> Array:
    """The triangular (Bartlett) window."""
    m, n = _samples(M, "bartlett")
    if n is None:
        return _ones(m)
    return subtract(1, true_divide(absolute(subtract(multiply(2, n) + 1, m)), m - 1))


def blackman(M: int) -> Array:
    """The Blackman window."""
    m, n = _samples(M, "blackman")
    if n is None:
        return _ones(m)
    return (0.42 - 0.5 * cos(2 * np.pi * n / (m - 1))) + 0.08 * cos(4 * np.pi * n / (m - 1))


def hamming(M: int) -> Array:
    """The Hamming window."""
    m, n = _samples(M, "hamming")
    if n is None:
        return _ones(m)
    return 0.54 - 0.46 * cos(2 * np.pi * n / (m - 1))


def hanning(M: int) -> Array:
    """The Hann window."""
    m, n = _samples(M, "hanning")
    if n is None:
        return _ones(m)
    return 0.5 * (1 - cos(2 * np.pi * n / (m - 1)))


def kaiser(M: int, beta: ArrayLike) -> Array:
    """The Kaiser window of shape parameter ``beta``."""
    m, n = _samples(M, "kaiser")
    if n is None:
        return _ones(m)
    alpha = 0.5 * (m - 1)
    return true_divide(i0(multiply(beta, sqrt(1 - power((n - alpha) / alpha, 2)))), i0(beta))

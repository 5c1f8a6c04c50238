"""``fcore.scipy.integrate``: ``trapezoid``, the composite trapezoidal rule (``jnp.trapezoid``)."""

from __future__ import annotations

import fcore.numpy as fnp
from fcore.interpreters.array import Array
from fcore.lax._base import ArrayLike

__all__ = ["trapezoid"]


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Array:
    """Integrate ``y`` along ``axis`` by the composite trapezoidal rule, at the sample points
    ``x`` or, without them, at spacing ``dx``."""
    return fnp.trapezoid(y, x, dx, axis)

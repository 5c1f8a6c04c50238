"""fcore's named exceptions (docs/guide.md, "Bad input").

A leaf module: every layer may import it, it imports nothing of fcore.
"""

from __future__ import annotations


class FcoreError(Exception):
    """Base class of the errors fcore raises on purpose."""


class ConcretizationError(FcoreError, TypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""


#: JAX's name for the same error.
ConcretizationTypeError = ConcretizationError


class TracerBoolConversionError(ConcretizationError):
    """``bool()`` (an ``if``, ``and``/``or``) of a traced value; JAX raises the same class."""


class TracerIntegerConversionError(ConcretizationError):
    """``__index__`` (e.g. ``range(x)``, indexing a list) of a traced value; JAX raises the same class."""


class TracerArrayConversionError(ConcretizationError):
    """NumPy conversion (``np.asarray``) of a traced value; JAX raises the same class."""


class UnexpectedTracerError(FcoreError, TypeError, RuntimeError):
    """A tracer escaped the transformation that created it and was used later (a TypeError
    as in JAX, and a RuntimeError as fcore has always raised it)."""


class TypePromotionError(FcoreError, TypeError, ValueError):
    """Implicit dtype promotion was refused (``numpy_dtype_promotion("strict")``); a ValueError
    as JAX's class of the same name, and a TypeError as fcore has always raised it."""


class JaxprTypeError(FcoreError, TypeError):
    """A jaxpr is ill-typed; the message names the offending equation."""


class JaxprParseError(FcoreError, ValueError):
    """Jaxpr text could not be parsed; the message names line, column and expectation."""


class JaxprArgumentError(FcoreError, TypeError, ValueError):
    """Arguments given to a jaxpr do not match its inputs (count, shape or dtype); a ValueError as
    JAX's ``eval_jaxpr`` raises for a wrong count, and a TypeError as fcore raised it before."""


class InvalidShapeError(FcoreError, TypeError, ValueError):
    """A shape with a negative dimension, or more elements than int64 can count; a TypeError as
    JAX's shape checks raise for negative dimensions, and a ValueError as a bad value."""

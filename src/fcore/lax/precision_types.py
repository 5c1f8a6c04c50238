"""The option types ``jax.lax`` takes for matmul algorithms, rounding and accuracy.

``DotAlgorithm`` and ``DotAlgorithmPreset`` name a dot product's algorithm (``precision=`` of
``dot_general``). fcore's ``dot_general`` has no algorithm parameter: it accepts
``DotAlgorithmPreset.DEFAULT`` (XLA's choice, what ``precision=None`` gives) and raises
``NotImplementedError`` for any other algorithm. ``RoundingMethod`` is ``lax.round``'s argument;
``AccuracyMode`` and ``Tolerance`` are the accuracy requests of JAX's transcendental functions.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import numpy as np

from fcore.ir import dtypes

__all__ = ["AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "RoundingMethod", "Tolerance", "unsupported_algorithm"]


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties: away from zero (0) or to the nearest even value (1)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class AccuracyMode(enum.Enum):
    """A requested accuracy of a transcendental function's implementation."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Tolerances of a unary function's implementation: at most two of ``atol``, ``rtol``, ``ulps``."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps


class DotAlgorithm(NamedTuple):
    """A dot product's algorithm: the types the operands are rounded to, the accumulation type,
    and how many components and operations emulate a higher precision."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F8 = ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM")


class DotAlgorithmPreset(enum.Enum):
    """The named dot algorithms (``LHS_RHS_ACCUM``) known to some platform."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[Any, ...] | None:
        """The operand types the algorithm takes (``None``: any)."""
        if self is DotAlgorithmPreset.DEFAULT or self.name in _F8:
            return None
        if self.name.startswith("F16_"):
            return (np.float16,)
        if self in (DotAlgorithmPreset.BF16_BF16_BF16, DotAlgorithmPreset.BF16_BF16_F32):
            return (dtypes.bfloat16.type, np.float32)
        if self is DotAlgorithmPreset.F64_F64_F64:
            return (np.float64,)
        return (np.float32,)

    @property
    def supported_rhs_types(self) -> tuple[Any, ...] | None:
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> Any:
        """The accumulation type (``None``: chosen from ``preferred_element_type``)."""
        if self in (DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.ANY_F8_ANY_F8_ANY,
                    DotAlgorithmPreset.ANY_F8_ANY_F8_ANY_FAST_ACCUM):
            return None
        return {DotAlgorithmPreset.F16_F16_F16: np.float16, DotAlgorithmPreset.BF16_BF16_BF16: dtypes.bfloat16.type,
                DotAlgorithmPreset.F64_F64_F64: np.float64}.get(self, np.float32)


def unsupported_algorithm(algorithm: DotAlgorithm | DotAlgorithmPreset) -> NotImplementedError:
    """The error for a dot algorithm fcore cannot request of XLA."""
    return NotImplementedError(
        f"dot_general: precision={algorithm!r} asks for a dot algorithm, and fcore's dot_general has no "
        "algorithm parameter (only DotAlgorithmPreset.DEFAULT, the same as precision=None, is accepted). "
        "Use precision=None or a lax.Precision value."
    )

"""Exporting jaxprs as StableHLO text, without compiling them; and ``export`` (JAX's
``jax.export`` for static shapes, in ``fcore.api.export``).

The text is what ``fcore.jit`` hands to XLA, so it can be saved, diffed, inspected or fed to
other StableHLO tools. It is produced by the lowering interpreter
(``fcore.backend.lowering.lower_jaxpr``) — exporting is not a second implementation of lowering.
"""

from __future__ import annotations

from fcore.backend.lowering import lower_jaxpr
from fcore.api.export import (
    DisabledSafetyCheck as DisabledSafetyCheck,
    Exported as Exported,
    default_export_platform as default_export_platform,
    deserialize as deserialize,
    export as export,
    maximum_supported_calling_convention_version as maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version as minimum_supported_calling_convention_version,
)
from fcore.ir.core import ClosedJaxpr, Jaxpr
from fcore.ir.typecheck import typecheck

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "default_export_platform",
    "deserialize",
    "export",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "to_stablehlo",
]


def to_stablehlo(closed: ClosedJaxpr | Jaxpr, name: str = "main") -> str:
    """The StableHLO module text of ``closed``; nothing is compiled or run.

    The module is named ``@jit_<name>`` and its public function is ``@main``. The jaxpr's
    constants are **not** embedded: ``@main`` takes the constvars as its leading parameters,
    then the invars (a module does not hold the values of a ``ClosedJaxpr``'s consts, which
    may be large; pass ``closed.consts`` first when calling the compiled module). Nested
    ``jit`` jaxprs become private functions, one per distinct structure.

    The jaxpr is type-checked first, so that an ill-typed jaxpr is reported as a
    ``JaxprTypeError`` naming its equation rather than as invalid StableHLO. A primitive
    without a lowering rule raises ``fcore.backend.lowering.LoweringError``.
    """
    typecheck(closed)
    return lower_jaxpr(closed, name)

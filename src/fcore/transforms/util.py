"""Small helpers shared by the passes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fcore.config import verify_enabled
from fcore.interpreters.array import ArrayImpl
from fcore.ir.core import ClosedJaxpr, Literal
from fcore.ir.typecheck import typecheck


def bools(flags: bool | Sequence[bool], n: int, name: str) -> list[bool]:
    """Broadcast a bool or check a per-item list of bools."""
    if isinstance(flags, (bool, np.bool_)):
        return [bool(flags)] * n
    out = [bool(f) for f in flags]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} entries but {n} are needed")
    return out


def literal_value(lit: Literal) -> ArrayImpl:
    """A literal as a concrete 0-d array that rules can compute with (staged back as a literal)."""
    return ArrayImpl(np.asarray(lit.val), lit.aval.weak_type)


def verified(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Type-check a pass's output when verify-each is on."""
    if verify_enabled():
        typecheck(closed)
    return closed

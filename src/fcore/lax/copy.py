"""``copy_p``: an explicit copy of an array (what ``fnp.copy`` binds, as ``jnp.copy`` does).

fcore's arrays are immutable, so a copy changes no value; the equation keeps the program's
shape the same as JAX's. Linear (its jvp and transpose are copies), vectorized, and lowered
to its operand itself, as JAX lowers it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.interpreters.array import Array
from fcore.ir.avals import ShapedArray
from fcore.ir.params import NoParams
from fcore.lax._base import ArrayLike, NpArray, checked_impl
from fcore.lax._primitive import Primitive
from fcore.lax._rule_helpers import bind
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import defvectorized
from fcore.transforms.jvp import deflinear
from fcore.transforms.transpose import transpose_rules

__all__ = ["copy_p", "copy"]

copy_p = Primitive("copy", params=NoParams)


@copy_p.def_abstract_eval
def _copy_abstract_eval(x: ShapedArray) -> ShapedArray:
    return x


@checked_impl(copy_p)
def _copy_impl(x: NpArray) -> NpArray:
    return np.array(x, copy=True)


deflinear(copy_p)


@transpose_rules.register(copy_p)
def _copy_transpose(ct: Array, x: UndefinedPrimal) -> list[Any]:
    return [copy(ct)]


defvectorized(copy_p)


@lowering_rules.register(copy_p)
def _copy_lowering(ctx: LoweringRuleContext, x: str) -> str:
    return x


def copy(x: ArrayLike) -> Array:
    """A copy of ``x`` (one ``copy`` equation when traced)."""
    return bind(copy_p, x)

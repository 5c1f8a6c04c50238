"""``fcore.extend.core`` as ``jax.extend.core``: the IR's types, ``Primitive``, and the
functions that run or check a jaxpr."""

from __future__ import annotations

from fcore.errors import JaxprTypeError as JaxprTypeError
from fcore.extend.core import primitives as primitives
from fcore.interpreters.eval_jaxpr import jaxpr_as_fun as jaxpr_as_fun
from fcore.interpreters.stack import set_current_trace as set_current_trace
from fcore.ir.core import (
    ClosedJaxpr as ClosedJaxpr,
    Jaxpr as Jaxpr,
    JaxprEqn as JaxprEqn,
    Literal as Literal,
    Var as Var,
)
from fcore.ir.effects import NO_EFFECTS
from fcore.ir.effects import Effect as Effect, Effects as Effects
from fcore.ir.typecheck import typecheck
from fcore.lax._primitive import Primitive as Primitive


no_effects = NO_EFFECTS  # JAX's name for the empty effect set


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise ``JaxprTypeError`` if ``jaxpr`` is ill-typed (``fcore.core.typecheck``, result dropped)."""
    typecheck(jaxpr)

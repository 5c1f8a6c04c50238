"""``fcore.extend.core`` as ``jax.extend.core``: the IR's types, ``Primitive``, and the
functions that run or check a jaxpr."""

from __future__ import annotations

from fcore.errors import JaxprTypeError as JaxprTypeError
from fcore.extend.core import primitives as primitives
from fcore.extend.core.call_primitive import CallPrimitive as CallPrimitive, call_impl as call_impl
from fcore.extend.core.debug_info import DebugInfo as DebugInfo
from fcore.extend.core.ir_helpers import (
    DropVar as DropVar,
    array_types as array_types,
    concrete_or_error as concrete_or_error,
    gensym as gensym,
    jaxprs_in_params as jaxprs_in_params,
    mapped_aval as mapped_aval,
    new_jaxpr_eqn as new_jaxpr_eqn,
    primal_dtype_to_tangent_dtype as primal_dtype_to_tangent_dtype,
    subjaxprs as subjaxprs,
    unmapped_aval as unmapped_aval,
    valid_jaxtype as valid_jaxtype,
)
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

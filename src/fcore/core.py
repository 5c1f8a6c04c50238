"""``fcore.core``: the IR as a toolkit (docs/embedding.md)."""

from fcore.interpreters.eval import EvalTrace as EvalTrace
from fcore.interpreters.stack import current_trace as current_trace, set_current_trace as set_current_trace
from fcore.interpreters.trace import Trace as Trace, Tracer as Tracer
from fcore.ir.avals import ShapedArray as ShapedArray
from fcore.ir.core import (
    Atom as Atom, ClosedJaxpr as ClosedJaxpr, Jaxpr as Jaxpr, JaxprEqn as JaxprEqn,
    Literal as Literal, Var as Var, new_eqn as new_eqn,
)
from fcore.ir.builder import JaxprBuilder as JaxprBuilder
from fcore.ir.effects import Effect as Effect, Effects as Effects, NO_EFFECTS
from fcore.ir.params import Params as Params, ParamStruct as ParamStruct
from fcore.ir.parser import parse_jaxpr as parse_jaxpr, register_param_enum as register_param_enum
from fcore.ir.parser import register_param_struct as register_param_struct
from fcore.ir.primitive import lookup_primitive as lookup_primitive
from fcore.lax._primitive import Primitive as Primitive
from fcore.ir.printer import pp_jaxpr
from fcore.ir.typecheck import JaxprType as JaxprType, typecheck as typecheck
from fcore.interpreters.eval_jaxpr import eval_jaxpr as eval_jaxpr, jaxpr_as_fun as jaxpr_as_fun
from fcore.transforms.ad_util import UndefinedPrimal as UndefinedPrimal, Zero as Zero
from fcore.transforms.ad_util import is_undefined

pretty_print = pp_jaxpr  # the toolkit name of the printer
no_effects = NO_EFFECTS  # JAX's name for the empty effect set
is_undefined_primal = is_undefined  # JAX's name: is this transpose-rule input a linear one?

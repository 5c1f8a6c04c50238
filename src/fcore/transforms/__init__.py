"""Pure ``jaxpr -> jaxpr`` transformations (docs/design.md); each takes and returns ``ClosedJaxpr``."""

from fcore.transforms.autodiff import linearize_jaxpr as linearize_jaxpr, vjp_jaxpr as vjp_jaxpr
from fcore.transforms.batching import batch_jaxpr as batch_jaxpr
from fcore.transforms.dce import dce_jaxpr as dce_jaxpr
from fcore.transforms.jvp import jvp_jaxpr as jvp_jaxpr
from fcore.transforms.partial_eval import partial_eval_jaxpr as partial_eval_jaxpr
from fcore.transforms.transpose import transpose_jaxpr as transpose_jaxpr
from fcore.transforms.simplify import (
    cse as cse,
    dce as dce,
    fold_constants as fold_constants,
    inline_calls as inline_calls,
    pipeline as pipeline,
    simplify_algebra as simplify_algebra,
)

"""``fcore.custom_derivatives`` as ``jax.custom_derivatives`` (the names fcore has)."""

from fcore.api.closures import closure_convert as closure_convert, custom_gradient as custom_gradient
from fcore.api.custom import custom_jvp as custom_jvp, custom_vjp as custom_vjp
from fcore.lax.custom_derivatives import custom_jvp_call_p as custom_jvp_call_p, custom_vjp_call_p as custom_vjp_call_p

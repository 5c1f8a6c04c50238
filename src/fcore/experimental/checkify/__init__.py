"""``fcore.experimental.checkify``: runtime checks that survive ``jit`` (JAX's
``jax.experimental.checkify``). See docs/checkify.md."""

from fcore.experimental.checkify._errors import (
    DivisionByZeroError as DivisionByZeroError,
    Error as Error,
    ErrorCategory as ErrorCategory,
    FailedCheckError as FailedCheckError,
    JaxException as JaxException,
    JaxRuntimeError as JaxRuntimeError,
    NaNError as NaNError,
    OOBError as OOBError,
    all_checks as all_checks,
    automatic_checks as automatic_checks,
    div_checks as div_checks,
    float_checks as float_checks,
    index_checks as index_checks,
    init_error as init_error,
    nan_checks as nan_checks,
    user_checks as user_checks,
)
from fcore.experimental.checkify._primitive import (
    check as check,
    check_error as check_error,
    debug_check as debug_check,
)
from fcore.experimental.checkify._transform import checkify as checkify
import fcore.experimental.checkify._automatic as _automatic  # noqa: F401  (registers the automatic checks)
import fcore.experimental.checkify._control_flow as _control_flow  # noqa: F401  (and the higher-order rules)

__all__ = [
    "DivisionByZeroError", "Error", "ErrorCategory", "FailedCheckError", "JaxException", "JaxRuntimeError",
    "NaNError", "OOBError", "all_checks", "automatic_checks", "check", "check_error", "checkify",
    "debug_check", "div_checks", "float_checks", "index_checks", "init_error", "nan_checks", "user_checks",
]

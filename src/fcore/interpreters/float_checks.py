"""``jax_debug_nans`` / ``jax_debug_infs``: the checks of eager results and jitted outputs.

Only reached when a check is on (``fcore.config.eager_checks``): an eager primitive's floating
outputs are tested and the primitive named, as JAX's ``dispatch.check_special``; a compiled
call whose outputs hold a NaN (or Inf) is re-run op by op ("de-optimized") so that the
primitive that made it raises, as JAX's ``maybe_recursive_nan_check``. An AOT ``Compiled``
call and an eager ``shard_map`` (so ``pmap``) check their outputs without re-running, as JAX's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from fcore.config import check_enabled, debug_infs, debug_nans
from fcore.ir.dtypes import is_inexact


def special_kind(values: Sequence[object]) -> str | None:
    """``"nan"`` or ``"inf"`` if a floating value among ``values`` holds one that a check that
    is on looks for (NaNs first, as JAX), else None."""
    nans, infs = check_enabled("nans"), check_enabled("infs")
    for v in values:
        arr = _host(v)
        if arr is None or not is_inexact(arr.dtype):  # bfloat16 and the float8s too
            continue
        if nans and np.isnan(arr).any():
            return "nan"
        if infs and np.isinf(arr).any():
            return "inf"
    return None


def _host(v: object) -> np.ndarray[Any, Any] | None:
    from fcore.interpreters.eval import to_numpy_arg  # lazy: eval imports this module

    if isinstance(v, np.ndarray):
        return v
    try:
        arr, _ = to_numpy_arg(v)
    except TypeError:
        return None
    return arr


def check_primitive(name: str, outs: Sequence[object]) -> None:
    """Raise JAX's ``FloatingPointError`` if an eager result of primitive ``name`` is special."""
    kind = special_kind(outs)
    if kind is not None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


def check_call(name: str, outs: Sequence[object], rerun: Callable[[], object], backward: bool = False) -> None:
    """The check of a compiled call's outputs: when one is special, ``rerun`` the call op by
    op, whose first special primitive raises; if none does, say so (JAX's message)."""
    kind = special_kind(outs)
    if kind is None:
        return
    if backward:
        print("Invalid nan value encountered in the backward pass of a jax.jit function. "
              "Calling the de-optimized backward pass.")
    else:
        print("Invalid nan value encountered in the output of a jax.jit function. "
              "Calling the de-optimized version.")
    try:
        rerun()
    except (FloatingPointError, ZeroDivisionError) as e:
        raise e from None
    raise_no_special_in_deoptimized(name, kind)


def check_compiled(name: str, outs: Sequence[object]) -> None:
    """The check of an AOT ``Compiled`` call's outputs: no re-run, the ``(name, kind)`` pair as
    the message (JAX raises its ``InternalFloatingPointError`` with that text here)."""
    kind = special_kind(outs)
    if kind is not None:
        raise FloatingPointError(str((name, kind)))


def check_sharded(outs: Sequence[object]) -> None:
    """The check of an eager ``shard_map``'s outputs (``pmap`` re-runs into it): JAX's message."""
    kind = special_kind(outs)
    if kind is not None:
        raise FloatingPointError(f"Invalid value ({kind}) encountered in sharded computation.")


@contextlib.contextmanager
def float_checks_off() -> Iterator[None]:
    """Run a jitted call whose caller checks its outputs itself: a re-run op by op would run the
    caller again (an eager ``shard_map`` is a jitted ``shard_map``), without end."""
    with debug_nans(False), debug_infs(False):
        yield


def raise_no_special_in_deoptimized(name: str, kind: str) -> NoReturn:
    """JAX's error when the de-optimized re-run made no NaN/Inf (XLA's optimizations did, or
    the value was an input or a literal)."""
    raise FloatingPointError(
        f"{(name, kind)}. Because jax_config.debug_nans.value and/or config.jax_debug_infs is set, the "
        "de-optimized function (i.e., the function as if the `jit` decorator were removed) was called in an "
        "attempt to get a more precise error message. However, the de-optimized function did not produce "
        "invalid values during its execution. This behavior can result from `jit` optimizations causing the "
        "invalid value to be produced. It may also arise from having nan/inf literals as inputs or outputs, "
        "like `jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the invalid value by "
        "removing the `jit` decorator, at the cost of losing optimizations. \n\nIf you see this error, "
        "consider opening a bug report at https://github.com/jax-ml/jax."
    ) from None

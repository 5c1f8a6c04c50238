"""``fwd_and_bwd``: ``vjp`` split into a forward and a backward function, each jitted once.

As ``jax.fwd_and_bwd``: ``fwd(*args)`` returns ``(out, residuals)`` (``residuals`` is the
function ``vjp`` returns, a pytree), ``bwd(residuals, out_ct)`` the cotangents of the
arguments named by ``argnums``; both compile once and are reused across calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fcore.api._diff_args import argnums_partial, check_callable, ensure_index
from fcore.api.autodiff import vjp
from fcore.api.jit import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(
    fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False, jitted: bool = True
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(fwd, bwd)``: ``fwd(*args)`` is ``(fun(*args), residuals[, aux])``, ``bwd(residuals, ct)``
    the cotangents of ``args[argnums]`` (one value for an int ``argnums``, else a tuple)."""
    check_callable(fun)
    nums = ensure_index(argnums)

    def fwd(*args: Any) -> Any:
        f_partial, dyn_args = argnums_partial(fun, nums, args, {})
        if has_aux:
            return vjp(f_partial, *dyn_args, has_aux=True)
        return vjp(f_partial, *dyn_args)

    def bwd(f_vjp: Callable[[Any], tuple[Any, ...]], outgrad: Any) -> Any:
        g = f_vjp(outgrad)
        return g[0] if isinstance(nums, int) else g

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd

"""``fcore.scipy.optimize``: ``jax.scipy.optimize``'s ``minimize`` (BFGS and the experimental
L-BFGS) with its ``OptimizeResults``, written on ``fcore.lax`` loops so it runs under ``jit``."""

from fcore.scipy.optimize._minimize import OptimizeResults as OptimizeResults, minimize as minimize

__all__ = ["OptimizeResults", "minimize"]

"""``lax.platform_dependent``: one branch per backend platform, chosen for the platform the
program runs on.

JAX stages every branch into a ``cond`` whose index a ``platform_index`` primitive resolves
when lowering; eagerly that index is concrete and JAX just calls the chosen branch. fcore
compiles for the one platform its client runs (``cpu`` or ``cuda``), known when tracing: it
calls the branch eagerly and, under a transformation, stages all branches as a ``switch`` on
that constant index (so the branches are traced and checked as JAX traces them, and XLA
folds the choice away).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fcore.backend.runtime import platform
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import current_trace
from fcore.lax.control_flow.conditionals import switch

__all__ = ["platform_dependent"]


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None, **per_platform: Callable[..., Any]) -> Any:
    """``per_platform[p](*args)`` for the platform ``p`` the computation runs on (``"cpu"``,
    ``"cuda"``, ``"rocm"``, ``"tpu"``), else ``default(*args)``; no match and no default is a
    ``NotImplementedError``."""
    groups: list[tuple[list[str], Callable[..., Any]]] = []  # identical branches joined, as in JAX
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, known in groups:
            if known == branch:
                names.append(name)
                break
        else:
            groups.append(([name], branch))
    branches = [branch for _, branch in groups]
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        branches.append(default)
    here = platform()
    index = next((i for i, (names, _) in enumerate(groups) if here in names), None)
    if index is None:
        if default is None:
            raise NotImplementedError(
                f"lax.platform_dependent: no branch for platform '{here}' and no default branch "
                f"(branches for {[tuple(names) for names, _ in groups]})"
            )
        index = len(groups)
    if current_trace() is EVAL_TRACE:
        return branches[index](*args)
    return switch(np.int32(index), branches, *args)

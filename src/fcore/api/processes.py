"""The processes of a job: ``process_indices`` and JAX's older ``host_*`` spellings of the
process queries, which warn as JAX's do."""

from __future__ import annotations

import warnings

from fcore.api.devices import process_count, process_index

__all__ = ["host_count", "host_id", "host_ids", "process_indices"]


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of every process of the job: ``[0, ..., process_count() - 1]``."""
    return list(range(process_count()))


def host_id(backend: str | None = None) -> int:
    """``process_index()`` under its old name (warns, as JAX)."""
    warnings.warn(
        "jax.process_index has been renamed to jax.process_index. This alias will eventually be removed; "
        "please update your code."
    )
    return process_index()


def host_count(backend: str | None = None) -> int:
    """``process_count()`` under its old name (warns, as JAX)."""
    warnings.warn(
        "jax.process_count has been renamed to jax.process_count. This alias will eventually be removed; "
        "please update your code."
    )
    return process_count()


def host_ids(backend: str | None = None) -> list[int]:
    """``process_indices()`` under its old name (warns, as JAX)."""
    warnings.warn(
        "jax.process_indexs has been renamed to jax.process_indices. This alias will eventually be removed; "
        "please update your code."
    )
    return process_indices()

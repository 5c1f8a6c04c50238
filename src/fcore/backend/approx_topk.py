"""XLA's size rule for ``ApproxTopK``'s unaggregated output (``lax.approx_max_k`` with
``aggregate_to_topk=False``), as jaxlib exports it: the number of candidates kept along the
reduction dimension depends on the input size, rank, ``k`` and recall target."""

from __future__ import annotations

from jaxlib import _jax

__all__ = ["reduction_output_size"]


def reduction_output_size(input_size: int, rank: int, k: int, recall_target: float, aggregate_to_topk: bool,
                          input_size_override: int) -> int:
    """The size of the reduction dimension of ``ApproxTopK``'s results."""
    size, _ = _jax.approx_top_k_reduction_output_size(input_size, rank, k, recall_target, aggregate_to_topk,
                                                      input_size_override)
    return int(size)

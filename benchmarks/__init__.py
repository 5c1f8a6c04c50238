"""fcore vs jax benchmarks, measured side by side in one process (``python -m benchmarks``)."""

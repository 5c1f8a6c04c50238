"""``fcore.experimental.compilation_cache``: JAX's older entry point to the persistent cache."""

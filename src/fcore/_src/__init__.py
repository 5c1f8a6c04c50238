"""A few helpers at the private paths JAX's own tutorials import them from (``jax._src.util``).

Not a mirror of ``jax._src``: only what the published tutorials reach for."""

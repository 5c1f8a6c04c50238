"""``fcore.example_libraries``: JAX's small reference libraries, :mod:`optimizers` (gradient
descent variants as ``(init, update, get_params)`` triples) and :mod:`stax` (neural-network
layers as ``(init_fun, apply_fun)`` pairs), with the same names and numbers as
``jax.example_libraries``."""

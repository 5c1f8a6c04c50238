# Hand-written stubs for the parts of jaxlib that fcore's backend uses.
#
# The jaxlib wheel ships `py.typed` but only has .pyi files under
# `jaxlib/mlir/_mlir_libs/`; `jaxlib._jax` (nanobind) and `jaxlib.xla_client`
# come out untyped.  This package is put on mypy's search path (`mypy_path =
# stubs`); modules missing here (e.g. `jaxlib.mlir.*`) still resolve to the
# installed, typed package.  Declare only what fcore calls, so a jaxlib upgrade
# that changes one of these shows up as a typing or test failure.

__version__: str

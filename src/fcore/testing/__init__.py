"""Random well-typed programs and differential/invariant checks, for testing fcore and code
built on it (docs/testing.md).

``programs()`` is a hypothesis strategy of small straight-line ``Program`` s over float32,
float16, bfloat16, int32, int8, uint32 and bool inputs with weakly typed Python scalars mixed
in, using numpy and lax ops, reductions, indexing and einsum (``fcore.testing.ops``); a
program runs on any library with JAX's API (``Program.function(fcore)``,
``Program.function(jax)``) and stages to a jaxpr (``Program.jaxpr()``; ``jaxprs()`` draws
jaxprs directly). ``check_against`` compares fcore with a reference library in the modes
eager, jit, grad, vmap and jvp; the ``check_*`` invariants need no reference. The long run
against jax is ``python -m fcore.testing.run``. Requires hypothesis (the ``test`` extra).
"""

from fcore.testing.checks import (
    MODES as MODES,
    PASSES as PASSES,
    assert_same as assert_same,
    check_against as check_against,
    check_eager_equals_jit as check_eager_equals_jit,
    check_invariants as check_invariants,
    check_jvp_finite_differences as check_jvp_finite_differences,
    check_passes_typecheck as check_passes_typecheck,
    check_print_parse_round_trip as check_print_parse_round_trip,
    check_transpose_is_adjoint as check_transpose_is_adjoint,
    check_vmap_equals_loop as check_vmap_equals_loop,
    input_dtypes as input_dtypes,
    run_mode as run_mode,
)
from fcore.testing.ops import OPS as OPS, Op as Op
from fcore.testing.programs import DTYPES as DTYPES, Program as Program, jaxprs as jaxprs, programs as programs

__all__ = [
    "DTYPES",
    "MODES",
    "OPS",
    "PASSES",
    "Op",
    "Program",
    "assert_same",
    "check_against",
    "check_eager_equals_jit",
    "check_invariants",
    "check_jvp_finite_differences",
    "check_passes_typecheck",
    "check_print_parse_round_trip",
    "check_transpose_is_adjoint",
    "check_vmap_equals_loop",
    "input_dtypes",
    "jaxprs",
    "programs",
    "run_mode",
]

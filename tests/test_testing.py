"""``fcore.testing`` round two (issue 23): the generator's dtype/op coverage, jaxprs, and the
invariant checkers (adjoint, print/parse, passes, vmap/loop, eager/jit), each shown to catch
a planted bug. Fixed seeds and few examples: deterministic and a few seconds."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import fcore
from fcore import testing
from fcore.ir.core import ClosedJaxpr

LINEAR_OPS = [op for op in testing.OPS if op.linear]


def test_the_generator_covers_dtypes_weak_scalars_and_ops() -> None:
    seen_dtypes: set[str] = set()
    seen_ops: set[str] = set()
    weak = 0

    @seed(5)
    @settings(max_examples=60, deadline=None, database=None)
    @given(testing.programs(max_steps=6))
    def collect(program: testing.Program) -> None:
        nonlocal weak
        for a in program.inputs:
            if isinstance(a, np.ndarray):
                seen_dtypes.add(str(a.dtype))
            else:
                weak += 1
        seen_ops.update(name for name, _ in program.steps)

    collect()
    assert seen_dtypes == {str(np.dtype(d)) for d in testing.DTYPES}
    assert weak > 0
    assert {"lax_add", "einsum_dot", "take_rows", "floor_divide", "logical_not", "where"} & seen_ops
    assert len(seen_ops) > len(testing.OPS) // 2


@seed(31)
@settings(max_examples=4, deadline=None, database=None)
@given(testing.programs(max_steps=6))
def test_programs_agree_with_jax_in_every_mode(program: testing.Program) -> None:
    testing.check_against(program.function(fcore), program.function(jax), jax, program.inputs, rtol=2e-4, atol=2e-4)


@seed(32)
@settings(max_examples=4, deadline=None, database=None)
@given(testing.jaxprs(max_steps=6))
def test_random_jaxprs_round_trip_and_survive_every_pass(closed: ClosedJaxpr) -> None:
    assert isinstance(closed, ClosedJaxpr)
    testing.check_print_parse_round_trip(closed)
    testing.check_passes_typecheck(closed)


@seed(33)
@settings(max_examples=4, deadline=None, database=None)
@given(testing.programs(max_steps=6, dtypes=[np.dtype(np.float32)], ops=LINEAR_OPS, weak_scalars=False))
def test_transpose_of_random_linear_programs_is_the_adjoint(program: testing.Program) -> None:
    testing.check_transpose_is_adjoint(program.raw_function(fcore), program.inputs)


@seed(34)
@settings(max_examples=3, deadline=None, database=None)
@given(testing.programs(max_steps=5, dtypes=[np.dtype(np.float32), np.dtype(np.int32)]))
def test_programs_satisfy_the_invariants(program: testing.Program) -> None:
    testing.check_invariants(program.function(fcore), program.inputs)


X = np.array([0.3, -1.2, 2.0], np.float32)


def test_adjoint_check_catches_a_wrong_transpose() -> None:
    def f(x: Any) -> Any:
        return fcore.numpy.cumsum(x)[::-1]

    testing.check_transpose_is_adjoint(f, (X,))
    testing.check_transpose_is_adjoint(f, (X,), transpose=lambda ct: (np.cumsum(ct)[::-1],))  # the adjoint
    with pytest.raises(AssertionError, match="adjoint"):
        testing.check_transpose_is_adjoint(f, (X,), transpose=lambda ct: (np.cumsum(ct),))


def test_vmap_and_jit_checks_catch_a_function_that_depends_on_how_it_runs() -> None:
    def odd(x: Any) -> Any:  # Python-level shape logic that vmap and a loop see differently
        return x * x.shape[0] if isinstance(x, fcore.core.Tracer) else x

    with pytest.raises(AssertionError, match="jit vs eager"):
        testing.check_eager_equals_jit(odd, (X,))
    with pytest.raises(AssertionError, match="vmap vs loop"):
        testing.check_vmap_equals_loop(odd, (X,))


def test_check_against_accepts_matching_errors_and_reports_one_sided_ones() -> None:
    testing.check_against(lambda x: fcore.numpy.reshape(x, (2, 2)).sum(), lambda x: jax.numpy.reshape(x, (2, 2)).sum(),
                          jax, (X,), modes=("eager", "jit"))
    with pytest.raises(AssertionError, match="eager: fcore gave"):
        testing.check_against(lambda x: fcore.numpy.reshape(x, (2, 2)).sum(), lambda x: jax.numpy.sum(x), jax, (X,),
                              modes=("eager",))


def test_tolerances_follow_the_compared_dtype_and_the_dtypes_it_was_computed_from() -> None:
    """A float32 result of bfloat16 arithmetic carries bfloat16's rounding; complex results
    are compared at their precision, not bit for bit."""
    bf16 = np.dtype(ml_dtypes.bfloat16)
    one, off = np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0 + 2**-7], np.float32)  # a bfloat16 ulp apart
    testing.assert_same("from bf16", off, one, 2e-4, 2e-4, inputs=(bf16,))
    with pytest.raises(AssertionError):
        testing.assert_same("from f32", off, one, 2e-4, 2e-4)
    testing.assert_same("complex", np.array([1 + 1j], np.complex64), np.array([1 + 1j], np.complex64) * np.float32(1 + 2**-22))
    with pytest.raises(AssertionError):
        testing.assert_same("complex", np.array([1 + 1j], np.complex64), np.array([1 + 1.01j], np.complex64))

    def ours(x: Any) -> Any:
        return fcore.numpy.asarray(x, np.float32) * 2

    def theirs(x: Any) -> Any:  # off by a bfloat16 ulp: a rounding, not a bug, for bfloat16 inputs
        return jax.numpy.asarray(x, np.float32) * (2 + 2**-7)

    testing.check_against(ours, theirs, jax, (np.array([1.0, 2.0], bf16),), modes=("eager",), rtol=2e-4, atol=2e-4)
    with pytest.raises(AssertionError, match="eager"):
        testing.check_against(ours, theirs, jax, (np.array([1.0, 2.0], np.float32),), modes=("eager",),
                              rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("mode", testing.MODES)
def test_run_mode_differentiates_float_inputs_only(mode: str) -> None:
    n = np.array([1, 2, 3], np.int32)
    out = testing.run_mode(fcore, lambda x, k: (x * k).sum(), (X, n), mode)
    want = testing.run_mode(jax, lambda x, k: (x * k).sum(), (X, n), mode)
    testing.assert_same(mode, out, want)


def test_the_long_run_entry_point_reports_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    from fcore.testing.run import main

    assert main(["--programs", "2", "--seed", "3", "--max-steps", "3", "--modes", "eager,jit"]) == 0
    assert "2 programs x 2 modes" in capsys.readouterr().out
    _ = st  # hypothesis strategies are importable alongside


def test_the_long_run_survives_a_program_that_kills_the_reference() -> None:
    """jax 0.10.2 dies with SIGFPE jitting ``lax.div(abs(x - x), x - x)`` on int32 (XLA folds
    0 / 0 while compiling); jax runs in a child process, which is restarted."""
    from fcore.testing.run import _Reference

    x = np.array([3, 1, 9], np.int32)
    deadly = testing.Program((x,), (("subtract", (0, 0)), ("abs", (1,)), ("lax_div", (2, 1))))
    harmless = testing.Program((x,), (("subtract", (0, 0)),))
    reference = _Reference(("eager", "jit"))
    try:
        reference.submit(deadly)
        why = reference.result()
        assert isinstance(why, str) and "died" in why
        reference.submit(harmless)
        outcomes = reference.result()
        assert isinstance(outcomes, list) and [float(v) for v in outcomes] == [0.0, 0.0]
    finally:
        reference.close()
    # fcore gives JAX's integer division by zero (-1 for 0 / 0) in both modes, and survives
    assert [float(testing.run_mode(fcore, deadly.function(fcore), (x,), m)) for m in ("eager", "jit")] == [-3.0, -3.0]

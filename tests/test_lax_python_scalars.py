"""``fcore.lax`` functions of two or more operands with Python-scalar operands, against
``jax.lax``: a Python scalar is a weakly typed value of its default dtype (int32, float32,
bool, complex64), so ``lax.add(int8_array, 2)`` is a dtype mismatch, as in JAX 0.10.

fcore runs eagerly (its host path); jax runs ``eval_shape`` (the same type rules, and no
XLA compile per case). Both must give the same dtype and weak type, or the same exception
type with a message close to JAX's."""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.lax as jlax
import numpy as np
import pytest

import fcore
from fcore import lax

BINARY = (
    "add sub mul div rem pow max min atan2 nextafter eq ne lt le gt ge bitwise_and bitwise_or bitwise_xor "
    "shift_left shift_right_logical shift_right_arithmetic complex igamma igammac igamma_grad_a zeta polygamma"
).split()
ARRAYS = (np.array([1, 2], np.float16), np.array([1, 2], np.int8), np.array([1, 2], np.float32),
          np.array([True, False]), np.float64(2.0))  # NumPy scalars canonicalize like arrays: float32
SCALARS = (2, 2.5, True)
#: Computed by XLA even eagerly (a compile per case): typed by ``eval_shape`` on both sides.
STAGED = {"igamma", "igammac", "igamma_grad_a", "zeta", "polygamma", "betainc"}

#: The other functions of several operands, each with its array ``x`` and Python scalar ``s``.
OTHERS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "clamp_bounds": lambda L, x, s: L.clamp(s, x, s),
    "clamp_lo": lambda L, x, s: L.clamp(s, x, x),
    "clamp_operand": lambda L, x, s: L.clamp(x[0], s, x[1]),
    "pad": lambda L, x, s: L.pad(x, s, [(1, 1, 0)]),
    "select_n": lambda L, x, s: L.select_n(np.bool_(True), s, x[0]),
    "concatenate": lambda L, x, s: L.concatenate([x[:1], np.full(1, s)], 0),
    "betainc": lambda L, x, s: L.betainc(x, s, x),
    "dynamic_update_slice": lambda L, x, s: L.dynamic_update_slice(x, s, (0,)),
    "dynamic_slice_index": lambda L, x, s: L.dynamic_slice(x, (s,), (1,)),
}


def _outcome(f: Callable[[], Any]) -> tuple[str, str, Any]:
    try:
        r = f()
        return ("ok", str(np.dtype(r.dtype)), bool(r.weak_type))
    except Exception as e:
        return ("error", type(e).__name__, str(e).replace("jnp.", "fcore.numpy."))


def _agree(ours: tuple[str, str, Any], theirs: tuple[str, str, Any]) -> bool:
    if ours[0] == "ok" or ours[:2] != theirs[:2]:
        return ours == theirs
    return difflib.SequenceMatcher(None, ours[2], theirs[2]).ratio() >= 0.8


def _fcore_type(f: Callable[[], fcore.Array]) -> Callable[[], Any]:
    def run() -> Any:
        r = f()
        return fcore.ShapeDtypeStruct(r.shape, r.dtype, weak_type=r.aval.weak_type)
    return run


def _disagreements(cases: Sequence[tuple[str, Callable[..., Any], tuple[Any, ...]]]) -> list[str]:
    bad = []
    for name, call, args in cases:
        typed = (lambda: fcore.eval_shape(lambda: call(lax))) if name in STAGED else _fcore_type(lambda: call(lax))
        ours = _outcome(typed)
        theirs = _outcome(lambda: jax.eval_shape(lambda: call(jlax)))
        if not _agree(ours, theirs):
            bad.append(f"{name}{tuple(getattr(a, 'dtype', a) for a in args)}: fcore {ours}, jax {theirs}")
    return bad


@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_type_python_scalars_as_jax(name: str) -> None:
    pairs = [*((x, s) for x, s in itertools.product(ARRAYS, SCALARS)),
             *((s, x) for x, s in itertools.product(ARRAYS, SCALARS)),
             *itertools.product(SCALARS, SCALARS)]
    pairs += [(np.array([1, 2], np.complex64), 1j), (1j, 2.5)] if name != "atan2" else []  # (JAX's atan2
    # accepts complex operand kinds, then rejects the mix)
    cases = [(name, lambda L, x=x, y=y: getattr(L, name)(x, y), (x, y)) for x, y in pairs]
    assert _disagreements(cases) == []


def test_other_functions_type_python_scalars_as_jax() -> None:
    arrays = (np.array([1, 2], np.float16), np.array([1, 2], np.float32), np.array([1, 2], np.int8))
    cases = [(name, lambda L, f=f, x=x, s=s: f(L, x, s), (x, s))
             for (name, f), x, s in itertools.product(OTHERS.items(), arrays, SCALARS)]
    assert _disagreements(cases) == []


def test_python_scalar_operands_in_the_issue() -> None:
    """The examples of issue 23's brief, messages included, eagerly and under jit."""
    f16 = np.array([1, 2], np.float16)
    msg = ("lax.add requires arguments to have the same dtypes, got int8, int32. (Tip: fcore.numpy.add is a "
           "similar function that does automatic type promotion on inputs).")
    for run in (lambda f: f, fcore.jit):
        with pytest.raises(TypeError) as info:
            run(lambda x: lax.add(x, 2))(np.array([1, 2], np.int8))
        assert str(info.value) == msg
        with pytest.raises(TypeError, match="pad operand and padding_value must be same dtype: got float16 and float32"):
            run(lambda x: lax.pad(x, 0.0, [(1, 1, 0)]))(f16)
        with pytest.raises(TypeError, match="lax.clamp requires arguments to have the same dtypes"):
            run(lambda x: lax.clamp(0.0, x, 1.0))(f16)
        with pytest.raises(TypeError, match="two inexact dtypes must match, but got float16 and float32"):
            run(lambda x: lax.pow(x, 2.0))(f16)
        assert run(lambda x: lax.pow(x, 2))(f16).dtype == np.float16
        out = run(lambda x: lax.add(x, 2.5))(np.array([1], np.float32))
        assert (out.dtype, out.aval.weak_type) == (np.dtype(np.float32), False)
        assert run(lambda x: lax.complex(x, 1.0))(np.array([1], np.float32)).dtype == np.complex64
    both_weak = lax.add(2, 3)
    assert (both_weak.dtype, both_weak.aval.weak_type) == (np.dtype(np.int32), True)
    with fcore.enable_x64(True):
        with pytest.raises(TypeError, match="got int32, int64"):
            lax.add(np.array([1], np.int32), 2)


def test_internal_constants_take_the_operand_dtype() -> None:
    """fcore's own lax calls pass typed constants (``lax._base.const``), not Python scalars,
    so they work on operands of any dtype: int8 loop counters, indices and predicates,
    float16 matrices."""
    m = np.array([[1, 2], [3, 4]], np.float16)
    sym = lax.linalg.symmetrize(fcore.numpy.asarray(m))
    assert sym.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(sym), (m + m.T) / np.float16(2))
    i8 = np.int8
    assert int(lax.fori_loop(i8(0), i8(4), lambda i, c: c + i, i8(0))) == 6
    assert int(fcore.jit(lambda n: lax.fori_loop(i8(0), n, lambda i, c: c + i, i8(0)))(i8(4))) == 6
    x = np.arange(5, dtype=np.float32)
    got = fcore.jit(lambda i: lax.dynamic_slice(x, (i,), (2,)))(i8(-2))
    np.testing.assert_array_equal(np.asarray(got), [3, 4])
    picked = fcore.jit(lambda p: lax.cond(p, lambda: np.float32(1), lambda: np.float32(0)))(i8(2))
    assert float(picked) == 1.0

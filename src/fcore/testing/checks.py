"""Differential and invariant checks on functions (and ``Program`` s): each raises
``AssertionError`` naming what disagreed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

import fcore
from fcore.ir.core import ClosedJaxpr
from fcore.ir.parser import parse_jaxpr
from fcore.ir.typecheck import typecheck
from fcore.transforms import cse, dce, fold_constants, inline_calls, simplify_algebra
from fcore.transforms.simplify import Pass

MODES: tuple[str, ...] = ("eager", "jit", "grad", "vmap", "jvp")

#: The passes ``check_passes_typecheck`` runs, in order, type-checking after each.
PASSES: tuple[tuple[str, Pass], ...] = (
    ("inline_calls", inline_calls),
    ("fold_constants", fold_constants),
    ("simplify_algebra", simplify_algebra),
    ("cse", cse),
    ("dce", dce),
)


def _is_float(dtype: np.dtype[Any]) -> bool:
    return dtype == ml_dtypes.bfloat16 or np.issubdtype(dtype, np.floating)


def _is_inexact(dtype: np.dtype[Any]) -> bool:
    return _is_float(dtype) or np.issubdtype(dtype, np.complexfloating)


#: The relative tolerance of values of a dtype: a few units in its last place (eager fcore
#: computes on the host, jit with XLA; low-precision floats round differently on each).
_DTYPE_RTOL: dict[str, float] = {"bfloat16": 4e-2, "float16": 1e-2, "float32": 0.0, "float64": 0.0,
                                 "complex64": 0.0, "complex128": 0.0}


def _tolerance(dtype: np.dtype[Any], rtol: float, inputs: Sequence[np.dtype[Any]] = ()) -> float:
    """``rtol``, raised to the precision of ``dtype`` and of the float ``inputs`` the value
    was computed from (a float32 result of bfloat16 arithmetic carries bfloat16's rounding)."""
    return max([rtol] + [_DTYPE_RTOL.get(np.dtype(d).name, 0.0) for d in (dtype, *inputs) if _is_inexact(np.dtype(d))])


def input_dtypes(args: Sequence[Any]) -> tuple[np.dtype[Any], ...]:
    """The float and complex dtypes of ``args``' arrays: what ``assert_same``'s ``inputs`` takes."""
    return tuple({np.asarray(a).dtype for a in args if isinstance(a, (np.ndarray, np.generic))
                  and _is_inexact(np.asarray(a).dtype)})


def assert_same(
    what: str, got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-5, inputs: Sequence[np.dtype[Any]] = ()
) -> None:
    """Same pytree structure, shapes and dtypes; values equal (integers, bools) or close
    (floats and complex numbers, at the precision of their dtype and of the float dtypes
    ``inputs`` they were computed from); NaNs in the same places."""
    got_leaves, want_leaves = fcore.tree_util.tree_leaves(got), fcore.tree_util.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        raise AssertionError(f"{what}: {len(got_leaves)} results, the reference has {len(want_leaves)}")
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            raise AssertionError(f"{what}: got {g.dtype}{list(g.shape)}, the reference {w.dtype}{list(w.shape)}")
        if _is_inexact(g.dtype):
            tol = _tolerance(g.dtype, rtol, inputs)
            wide = np.complex128 if np.issubdtype(g.dtype, np.complexfloating) else np.float64
            g64, w64 = g.astype(wide), w.astype(wide)
            scale = np.nanmax(np.abs(np.where(np.isfinite(w64), w64, 0)), initial=0)
            np.testing.assert_allclose(g64, w64, rtol=tol, atol=max(atol, tol) * (1 + scale), err_msg=what)
        elif g.dtype == np.dtype("V") or g.dtype.name == "float0":
            continue
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)


def _second_sample(a: Any) -> Any:
    """A second, different batch element: reversed along the last axis (same dtype)."""
    arr = np.asarray(a)
    return arr[..., ::-1].copy() if arr.ndim else arr


def run_mode(
    lib: Any, f: Callable[..., Any], args: Sequence[Any], mode: str, diff: Sequence[int] | None = None
) -> Any:
    """``f`` under ``lib`` (fcore, jax) in ``mode``. ``diff`` lists the float array inputs
    grad and jvp differentiate (default: every float array); the rest are closed over.
    vmap maps over a batch of two of every array input (Python scalars stay unbatched)."""
    if mode == "eager":
        return f(*args)
    if mode == "jit":
        return lib.jit(f)(*args)
    if mode == "vmap":
        batched = [np.stack([np.asarray(a), _second_sample(a)]) if isinstance(a, np.ndarray) else a for a in args]
        in_axes = [0 if isinstance(a, np.ndarray) else None for a in args]
        return lib.vmap(f, in_axes=in_axes)(*batched)
    if diff is None:
        diff = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and _is_float(a.dtype)]

    def g(*d: Any) -> Any:
        full = list(args)
        for i, v in zip(diff, d):
            full[i] = v
        return f(*full)

    primals = tuple(args[i] for i in diff)
    if not primals:
        return None
    if mode == "grad":
        return lib.grad(g, argnums=tuple(range(len(primals))))(*primals)
    if mode == "jvp":
        tangents = tuple(np.full_like(np.asarray(p), 0.5) for p in primals)
        return lib.jvp(g, primals, tangents)
    raise ValueError(f"unknown mode {mode!r}; the modes are {MODES}")


def check_against(
    f: Callable[..., Any],
    reference_f: Callable[..., Any],
    reference: Any,
    args: Sequence[Any],
    modes: Sequence[str] = MODES,
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> None:
    """``f`` under fcore and ``reference_f`` under ``reference`` (a module with JAX's ``jit``,
    ``grad``, ``vmap``, ``jvp``, e.g. ``jax``) agree in each of ``modes``: the same values,
    dtypes and shapes, or the same exception type. ``f`` must be scalar-valued for ``grad``.
    Raises ``AssertionError`` naming the mode."""
    for mode in modes:
        compare_outcomes(mode, outcome(fcore, f, args, mode), outcome(reference, reference_f, args, mode),
                         rtol, atol, input_dtypes(args))


def compare_outcomes(
    mode: str, ours: Any, theirs: Any, rtol: float = 1e-5, atol: float = 1e-5, inputs: Sequence[np.dtype[Any]] = ()
) -> None:
    """Two ``outcome`` s of one mode agree: both raised (an error type only one side raised is
    a disagreement), or ``assert_same``."""
    if isinstance(ours, BaseException) or isinstance(theirs, BaseException):
        if type(ours).__name__ != type(theirs).__name__ and not (
            isinstance(ours, BaseException) and isinstance(theirs, BaseException)
        ):
            raise AssertionError(f"{mode}: fcore gave {ours!r}, the reference {theirs!r}")
        return
    assert_same(mode, ours, theirs, rtol, atol, inputs)


def outcome(lib: Any, f: Callable[..., Any], args: Sequence[Any], mode: str) -> Any:
    """``run_mode``'s result, or the error a user could meet there (``TypeError``,
    ``ValueError``, ...) as a value; other exceptions propagate."""
    try:
        return run_mode(lib, f, args, mode)
    except (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError) as e:
        return e


def check_eager_equals_jit(f: Callable[..., Any], args: Sequence[Any], rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """``jit(f)`` computes what ``f`` does eagerly."""
    assert_same("jit vs eager", fcore.jit(f)(*args), f(*args), rtol, atol, input_dtypes(args))


def check_vmap_equals_loop(f: Callable[..., Any], args: Sequence[Any], rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """``vmap(f)`` over a batch of two equals ``f`` applied to each element."""
    batched = run_mode(fcore, f, args, "vmap")
    second = [_second_sample(a) if isinstance(a, np.ndarray) else a for a in args]
    loop = fcore.tree_util.tree_map(lambda *xs: fcore.numpy.stack(xs), f(*args), f(*second))
    assert_same("vmap vs loop", batched, loop, rtol, atol, input_dtypes(args))


def check_jvp_finite_differences(
    f: Callable[..., Any], args: Sequence[Any], eps: float = 1e-3, rtol: float = 1e-2, atol: float = 1e-2
) -> None:
    """The jvp of ``f`` (along tangents of 0.5 on its float32 array inputs) equals central
    finite differences computed in float64 on the host."""
    diff = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and np.asarray(a).dtype == np.float32]
    if not diff:
        return
    tangents = [np.full_like(np.asarray(args[i]), 0.5) for i in diff]  # run_mode's tangents
    _, jvp_out = run_mode(fcore, f, args, "jvp", diff)

    def shifted(sign: float) -> np.ndarray[Any, Any]:
        full = list(args)
        for i, t in zip(diff, tangents):
            full[i] = np.asarray(args[i], np.float64) + sign * eps * t
        with fcore.enable_x64(True):
            return np.asarray(f(*full), np.float64)

    fd = (shifted(1.0) - shifted(-1.0)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(jvp_out, np.float64), fd, rtol=rtol, atol=atol,
                               err_msg="jvp vs finite differences")


def check_transpose_is_adjoint(
    f: Callable[..., Any],
    args: Sequence[Any],
    transpose: Callable[..., Any] | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    seed: int = 0,
) -> None:
    """For ``f`` linear in its (float) arguments: ``<f(x), ct> == <x, f^T(ct)>`` for random
    ``x`` and ``ct``, with ``f^T`` the given ``transpose`` (ct -> tuple of cotangents) or
    fcore's ``linear_transpose(f)``."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(np.shape(a)).astype(np.asarray(a).dtype) for a in args]
    out = fcore.eval_shape(f, *xs)
    ct = rng.standard_normal(out.shape).astype(out.dtype)
    cts = (transpose or fcore.linear_transpose(f, *xs))(ct)
    lhs = float(np.vdot(np.asarray(f(*xs), np.float64), ct.astype(np.float64)))
    rhs = sum(float(np.vdot(x.astype(np.float64), np.asarray(c, np.float64))) for x, c in zip(xs, cts))
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol, err_msg="transpose is not the adjoint")


def check_print_parse_round_trip(closed: ClosedJaxpr, structural: bool = True) -> None:
    """``parse_jaxpr(str(j))`` prints the same text and (with ``structural``) equals ``j``.
    Parameters that hold Python callables (``custom_jvp_call``'s ``jvp``) print as names,
    so such jaxprs round-trip as text only."""
    text = str(closed.jaxpr)
    parsed = parse_jaxpr(text)
    if str(parsed) != text:
        raise AssertionError(f"print -> parse -> print changed the text:\n{text}\n---\n{parsed}")
    if structural and parsed != closed.jaxpr:
        raise AssertionError(f"parse_jaxpr(str(j)) != j for\n{text}")


def check_passes_typecheck(closed: ClosedJaxpr, args: Sequence[Any] | None = None) -> None:
    """Every simplification pass (``PASSES``) keeps the jaxpr well typed and, given ``args``,
    computing the same values."""
    typecheck(closed)
    want = fcore.core.jaxpr_as_fun(closed)(*args) if args is not None else None
    computed_in = tuple({np.dtype(v.aval.dtype) for e in closed.jaxpr.eqns for v in (*e.invars, *e.outvars)
                         if hasattr(v, "aval") and _is_inexact(np.dtype(v.aval.dtype))})
    for name, p in PASSES:
        closed = p(closed)
        try:
            typecheck(closed)
        except Exception as e:
            raise AssertionError(f"after {name}: {e}") from e
        if args is not None:
            assert_same(f"after {name}", fcore.core.jaxpr_as_fun(closed)(*args), want, inputs=computed_in)


def check_invariants(f: Callable[..., Any], args: Sequence[Any], rtol: float = 1e-3, atol: float = 1e-3) -> None:
    """The reference-free properties of ``f`` at ``args``: jit equals eager, vmap equals a
    loop, its jaxpr prints and parses back and stays well typed through every pass, and jvp
    equals finite differences (float32 inputs)."""
    check_eager_equals_jit(f, args, rtol, atol)
    check_vmap_equals_loop(f, args, rtol, atol)
    closed = fcore.make_jaxpr(f)(*args)
    check_print_parse_round_trip(closed, structural=False)
    check_passes_typecheck(closed, [a for a in args if isinstance(a, np.ndarray)] if all(
        isinstance(a, np.ndarray) for a in args) else None)
    check_jvp_finite_differences(f, args, rtol=10 * rtol, atol=10 * atol)

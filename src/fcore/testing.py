"""Random well-typed programs and differential checks, for testing fcore and code built on it.

``programs()`` is a hypothesis strategy of small ``Program`` s (elementwise, broadcasting and
reduction ops over float32 inputs, with weakly typed Python scalars mixed in); a program runs
on any library with JAX's API (``Program.function(fcore)``, ``Program.function(jax)``) and
stages to a jaxpr (``Program.jaxpr()``). ``check_against`` runs a function under fcore and
under a reference library in the modes eager, jit, grad, vmap and jvp and compares values,
dtypes and shapes; ``check_invariants`` needs no reference (jit equals eager, vmap equals a
loop, jvp equals finite differences). Requires hypothesis (the ``test`` extra).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import attrs
import numpy as np
from hypothesis import strategies as st

import fcore
from fcore.ir.core import ClosedJaxpr

__all__ = ["Program", "check_against", "check_invariants", "programs"]

#: ``name -> (arity, fn(numpy_namespace, *operands))``: smooth where the inputs live, so
#: every mode (grad and jvp included) is comparable.
OPS: dict[str, tuple[int, Callable[..., Any]]] = {
    "sin": (1, lambda m, x: m.sin(x)),
    "tanh": (1, lambda m, x: m.tanh(x)),
    "exp_neg_square": (1, lambda m, x: m.exp(-(x * x))),
    "log1p_square": (1, lambda m, x: m.log1p(x * x)),
    "negative": (1, lambda m, x: m.negative(x)),
    "add": (2, lambda m, x, y: m.add(x, y)),
    "subtract": (2, lambda m, x, y: m.subtract(x, y)),
    "multiply": (2, lambda m, x, y: m.multiply(x, y)),
    "add_weak_scalar": (1, lambda m, x: x + 1.5),
    "scale_weak_scalar": (1, lambda m, x: 0.5 * x),
    "sum_keepdims": (1, lambda m, x: m.sum(x, axis=-1, keepdims=True) if m.ndim(x) else x),
    "mean_keepdims": (1, lambda m, x: m.mean(x, axis=0, keepdims=True) if m.ndim(x) else x),
    "where_positive": (2, lambda m, x, y: m.where(x > 0, x, y)),
}


@attrs.frozen
class Program:
    """A straight-line program: value ``i`` is input ``i``; each step applies an op of
    ``OPS`` to earlier values and appends its result; the last value is the output."""

    inputs: tuple[np.ndarray[Any, Any], ...]
    steps: tuple[tuple[str, tuple[int, ...]], ...]

    def function(self, lib: ModuleType) -> Callable[..., Any]:
        """The program over ``lib.numpy`` (``fcore``, ``jax``, ...): a scalar-valued function
        (the output summed), so that ``grad`` applies."""
        m = lib.numpy

        def f(*args: Any) -> Any:
            values = list(args)
            for name, operands in self.steps:
                values.append(OPS[name][1](m, *(values[i] for i in operands)))
            return m.sum(values[-1])

        return f

    def jaxpr(self) -> ClosedJaxpr:
        """The program staged by fcore."""
        return fcore.make_jaxpr(self.function(fcore))(*self.inputs)

    def __str__(self) -> str:
        shapes = ", ".join(str(a.shape) for a in self.inputs)
        body = "; ".join(f"v{len(self.inputs) + k} = {n}({', '.join(f'v{i}' for i in ops)})"
                         for k, (n, ops) in enumerate(self.steps))
        return f"Program(inputs {shapes}: {body})"


@st.composite
def programs(draw: st.DrawFn, max_steps: int = 8, max_inputs: int = 3) -> Program:
    """A random ``Program`` over float32 inputs of broadcast-compatible shapes."""
    base = draw(st.sampled_from([(), (3,), (2, 3), (4, 1)]))
    shapes = [base] + [draw(st.sampled_from([base, (), tuple(1 for _ in base)]))
                       for _ in range(draw(st.integers(0, max_inputs - 1)))]
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    inputs = tuple(rng.uniform(-2.0, 2.0, s).astype(np.float32) for s in shapes)
    steps = []
    for k in range(draw(st.integers(1, max_steps))):
        name = draw(st.sampled_from(sorted(OPS)))
        available = len(inputs) + k
        operands = tuple(draw(st.integers(0, available - 1)) for _ in range(OPS[name][0]))
        steps.append((name, operands))
    return Program(inputs, tuple(steps))


def _compare(what: str, got: Any, want: Any, rtol: float, atol: float) -> None:
    got_leaves, want_leaves = fcore.tree_util.tree_leaves(got), fcore.tree_util.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        raise AssertionError(f"{what}: {len(got_leaves)} results, the reference has {len(want_leaves)}")
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            raise AssertionError(f"{what}: got {g.dtype}{list(g.shape)}, the reference {w.dtype}{list(w.shape)}")
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)


def _modes(lib: Any, f: Callable[..., Any], args: Sequence[Any]) -> dict[str, Callable[[], Any]]:
    tangents = tuple(np.ones_like(np.asarray(a)) for a in args)
    batched = tuple(np.stack([np.asarray(a), np.asarray(a) * 0.5]) for a in args)
    return {
        "eager": lambda: f(*args),
        "jit": lambda: lib.jit(f)(*args),
        "grad": lambda: lib.grad(f, argnums=tuple(range(len(args))))(*args),
        "vmap": lambda: lib.vmap(f)(*batched),
        "jvp": lambda: lib.jvp(f, tuple(args), tangents),
    }


def check_against(
    f: Callable[..., Any], reference_f: Callable[..., Any], reference: Any, args: Sequence[Any],
    modes: Sequence[str] = ("eager", "jit", "grad", "vmap", "jvp"), rtol: float = 1e-5, atol: float = 1e-5,
) -> None:
    """``f`` under fcore and ``reference_f`` under ``reference`` (a module with JAX's ``jit``,
    ``grad``, ``vmap``, ``jvp``, e.g. ``jax``) agree in each of ``modes``; ``f`` must be
    scalar-valued for ``grad``. Raises ``AssertionError`` naming the mode."""
    ours, theirs = _modes(fcore, f, args), _modes(reference, reference_f, args)
    for mode in modes:
        _compare(mode, ours[mode](), theirs[mode](), rtol, atol)


def check_invariants(f: Callable[..., Any], args: Sequence[Any], rtol: float = 1e-3, atol: float = 1e-3,
                     eps: float = 1e-3) -> None:
    """Properties that need no reference: jit equals eager, vmap equals a loop, the jaxpr
    type-checks, and jvp equals central finite differences (float inputs)."""
    _compare("jit vs eager", fcore.jit(f)(*args), f(*args), rtol, atol)
    batched = [np.stack([np.asarray(a), np.asarray(a) * 0.5]) for a in args]
    loop = [f(*[b[i] for b in batched]) for i in range(2)]
    _compare("vmap vs loop", fcore.vmap(f)(*batched), fcore.numpy.stack(loop), rtol, atol)
    fcore.core.typecheck(fcore.make_jaxpr(f)(*args))
    tangents = [np.ones_like(np.asarray(a)) for a in args]
    _, jvp_out = fcore.jvp(f, tuple(args), tuple(tangents))
    up = f(*[np.asarray(a, np.float64) + eps * t for a, t in zip(args, tangents)])
    down = f(*[np.asarray(a, np.float64) - eps * t for a, t in zip(args, tangents)])
    fd = (np.asarray(up, np.float64) - np.asarray(down, np.float64)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(jvp_out, np.float64), fd, rtol=10 * rtol, atol=10 * atol,
                               err_msg="jvp vs finite differences")

"""Random well-typed straight-line programs (a hypothesis strategy), as Python functions
that run on any library with JAX's API and as jaxprs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import attrs
import ml_dtypes
import numpy as np
from hypothesis import strategies as st

import fcore
from fcore.ir.core import ClosedJaxpr
from fcore.testing.ops import OPS, OPS_BY_NAME, Op

#: The input dtypes the generator draws from (bf16 through ml_dtypes, as numpy has none).
DTYPES: tuple[np.dtype[Any], ...] = tuple(
    np.dtype(d) for d in (np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8, np.uint32, np.bool_)
)
SHAPES: tuple[tuple[int, ...], ...] = ((), (3,), (2, 3), (4, 1))

Input = Any  # an np.ndarray, or a Python scalar (weakly typed)


def kind(dtype: np.dtype[Any]) -> str:
    """``f``, ``i``, ``u`` or ``b``: the dtype kinds of ``fcore.testing.ops``."""
    if dtype == ml_dtypes.bfloat16 or np.issubdtype(dtype, np.floating):
        return "f"
    return {"i": "i", "u": "u", "b": "b"}[dtype.kind]


def random_value(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Values where every op of the table is smooth and exact integer paths stay small."""
    if kind(dtype) == "f":
        return rng.uniform(-2.0, 2.0, shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    low = 0 if kind(dtype) == "u" else -9
    return rng.integers(low, 10, shape).astype(dtype)


@attrs.frozen
class Program:
    """Value ``i`` is input ``i``; each step applies a named op of ``fcore.testing.ops`` to
    earlier values and appends its result; the output is the last value."""

    inputs: tuple[Input, ...]
    steps: tuple[tuple[str, tuple[int, ...]], ...]

    def raw_function(self, lib: ModuleType) -> Callable[..., Any]:
        """The program over ``lib`` (``fcore``, ``jax``), returning the last value as is."""

        def f(*args: Any) -> Any:
            # host arrays become lib's arrays first: ``x % y`` on two numpy inputs is numpy's
            values = [lib.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
            for name, operands in self.steps:
                values.append(OPS_BY_NAME[name].fn(lib, *(values[i] for i in operands)))
            return values[-1]

        return f

    def function(self, lib: ModuleType) -> Callable[..., Any]:
        """A scalar float function (the last value summed; converted to float32 first when it
        is not a float), so that ``grad`` applies to every program."""
        raw = self.raw_function(lib)

        def f(*args: Any) -> Any:
            out = lib.numpy.asarray(raw(*args))
            if not lib.numpy.issubdtype(out.dtype, lib.numpy.floating):
                out = out.astype(np.float32)
            return lib.numpy.sum(out)

        return f

    @property
    def float_inputs(self) -> tuple[int, ...]:
        """Indices of the float array inputs: the ones grad and jvp differentiate."""
        return tuple(i for i, a in enumerate(self.inputs) if isinstance(a, np.ndarray) and kind(a.dtype) == "f")

    def jaxpr(self) -> ClosedJaxpr:
        """The program staged by fcore, its array inputs as the jaxpr's arguments. The Python
        scalar inputs stay Python scalars, as ops see them when the program runs eagerly (traced
        as arguments they would be weakly typed default-dtype values, which lax ops type
        differently)."""
        arrays = [i for i, a in enumerate(self.inputs) if isinstance(a, np.ndarray)]
        raw = self.raw_function(fcore)

        def staged(*xs: Any) -> Any:
            full = list(self.inputs)
            for i, x in zip(arrays, xs):
                full[i] = x
            return raw(*full)

        return fcore.make_jaxpr(staged)(*[self.inputs[i] for i in arrays])

    def __str__(self) -> str:
        ins = ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in self.inputs)
        body = "; ".join(
            f"v{len(self.inputs) + k} = {n}({', '.join(f'v{i}' for i in ops)})" for k, (n, ops) in enumerate(self.steps)
        )
        return f"Program(inputs {ins}: {body})"


def _result(op: Op, operands: Sequence[Any]) -> Any:
    """The abstract result of ``op`` on ``operands`` (``ShapeDtypeStruct`` s, and Python
    scalars kept as they are, as they reach the op eagerly), or None where fcore's type rules
    reject it."""
    slots = [i for i, a in enumerate(operands) if isinstance(a, fcore.ShapeDtypeStruct)]

    def call(*arrays: Any) -> Any:
        full = list(operands)
        for i, a in zip(slots, arrays):
            full[i] = a
        return op.fn(fcore, *full)

    try:
        return fcore.eval_shape(call, *[operands[i] for i in slots])
    except (TypeError, ValueError, IndexError, AttributeError):
        return None


def _abstract(x: Any) -> Any:
    return x if not isinstance(x, np.ndarray) else fcore.ShapeDtypeStruct(x.shape, x.dtype)


@st.composite
def programs(
    draw: st.DrawFn,
    max_steps: int = 8,
    max_inputs: int = 3,
    dtypes: Sequence[np.dtype[Any]] = DTYPES,
    ops: Sequence[Op] = OPS,
    weak_scalars: bool = True,
) -> Program:
    """A random ``Program``: array inputs of broadcast-compatible shapes and dtypes drawn from
    ``dtypes`` (plus, with ``weak_scalars``, Python scalars), then up to ``max_steps`` ops of
    ``ops`` that fcore's type rules accept on the operands drawn for them."""
    base = draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    first = draw(st.sampled_from(list(dtypes)))
    inputs: list[Input] = [random_value(rng, first, base)]
    for _ in range(draw(st.integers(0, max_inputs - 1))):
        if weak_scalars and draw(st.integers(0, 4)) == 0:
            inputs.append(draw(st.sampled_from([1.5, -0.75, 2, 3, True])))
            continue
        shape = draw(st.sampled_from([base, (), tuple(1 for _ in base)]))
        inputs.append(random_value(rng, draw(st.sampled_from(list(dtypes))), shape))
    avals: list[Any] = [_abstract(x) for x in inputs]
    steps: list[tuple[str, tuple[int, ...]]] = []
    for _ in range(draw(st.integers(1, max_steps))):
        for _attempt in range(8):
            op = draw(st.sampled_from(list(ops)))
            operands = tuple(draw(st.integers(0, len(avals) - 1)) for _ in range(op.arity))
            picked = [avals[i] for i in operands]
            if not all(_kind_of(a) in k for a, k in zip(picked, op.kinds)):
                continue
            out = _result(op, picked)
            if not isinstance(out, fcore.ShapeDtypeStruct):
                continue
            steps.append((op.name, operands))
            avals.append(out)
            break
    if not steps or not isinstance(avals[-1], fcore.ShapeDtypeStruct):
        steps.append(("add_weak_int", (len(avals) - 1,)) if steps else ("negative", (0,)))
    return Program(tuple(inputs), tuple(steps))


def _kind_of(a: Any) -> str:
    if isinstance(a, bool):
        return "b"
    if isinstance(a, int):
        return "i"
    if isinstance(a, float):
        return "f"
    return kind(np.dtype(a.dtype))


@st.composite
def jaxprs(draw: st.DrawFn, max_steps: int = 8, max_inputs: int = 3) -> ClosedJaxpr:
    """Random well-typed jaxprs: ``programs()`` staged by fcore."""
    return draw(programs(max_steps, max_inputs)).jaxpr()

"""Python callbacks inside compiled programs, through jaxlib's host-callback mechanism.

JAX lowers ``debug.print``, ``pure_callback`` and ``io_callback`` to a custom call of the FFI
target ``xla_ffi_python_cpu_callback`` whose ``backend_config = {index = i : ui64}`` names the
``i``-th Python callable handed to ``Client.compile_and_load(..., host_callbacks)``; fcore
does the same. Lowering rules cannot return those callables alongside the StableHLO text,
so a callback is *registered* here (weakly: the jaxpr that holds it keeps it alive) and its
custom call carries the registry key as its index; :func:`prepare` renumbers the keys of a
module to positions and returns the callables in that order, just before compiling.

A callback with an ordered effect takes and returns a ``!stablehlo.token`` (its first operand
and result), which threads program order through the calls; XLA passes the token to the
Python function, which hands it back.
"""

from __future__ import annotations

import itertools
import re
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

#: The FFI targets of jaxlib's Python callbacks, by platform.
CPU_TARGET = "xla_ffi_python_cpu_callback"
GPU_TARGET = "xla_ffi_python_gpu_callback"


class HostFunction(Protocol):
    """What a callback equation holds: a flat function of host arrays returning host arrays."""

    @property
    def ordered(self) -> bool: ...

    def __call__(self, *args: np.ndarray[Any, Any]) -> Sequence[np.ndarray[Any, Any]]: ...


_registry: weakref.WeakValueDictionary[int, HostFunction] = weakref.WeakValueDictionary()
_keys = itertools.count()
_lock = threading.Lock()


def register(fun: HostFunction) -> int:
    """A key for ``fun``: the index its custom call carries until :func:`prepare` renumbers it."""
    with _lock:
        key = next(_keys)
        _registry[key] = fun
    return key


def custom_call(
    key: int,
    operands: Sequence[str],
    operand_types: Sequence[str],
    result_types: Sequence[str],
    ranks: tuple[Sequence[int], Sequence[int]],
    side_effect: bool = True,
    sharding: str = "",
) -> str:
    """The text of a callback custom call (without the ``%N =`` binder). ``ranks`` gives the
    rank of each operand and result (row-major layouts, as JAX passes); a pure call (no
    ``has_side_effect``) may be removed by XLA when its results are unused; ``sharding`` is an
    extra attribute placing the call in a program over several devices."""
    ins = ", ".join(operand_types)
    outs = ", ".join(result_types)
    out = result_types[0] if len(result_types) == 1 else f"({outs})"
    in_layouts, out_layouts = (", ".join(_layout(r) for r in rs) for rs in ranks)
    effect = ", has_side_effect = true" if side_effect else ""
    placed = f", {sharding}" if sharding else ""
    return (
        f"stablehlo.custom_call @{CPU_TARGET}({', '.join(operands)}) "
        f"{{api_version = 4 : i32, operand_layouts = [{in_layouts}], result_layouts = [{out_layouts}], "
        f"backend_config = {{index = {key} : ui64}}{effect}{placed}}} : ({ins}) -> {out}"
    )


def _layout(rank: int) -> str:
    if rank == 0:
        return "dense<> : tensor<0xindex>"
    return f"dense<[{', '.join(str(d) for d in reversed(range(rank)))}]> : tensor<{rank}xindex>"


_INDEX = re.compile(r"backend_config = \{index = (\d+) : ui64\}")


def has_callbacks(text: str) -> bool:
    return CPU_TARGET in text


def prepare(text: str, platform: str) -> tuple[str, list[Callable[..., Any]]]:
    """The module text with registry keys renumbered to positions, and the host callables
    (adapted to jaxlib's calling convention) in that order."""
    positions: dict[int, int] = {}
    callables: list[Callable[..., Any]] = []

    def renumber(m: re.Match[str]) -> str:
        key = int(m.group(1))
        pos = positions.get(key)
        if pos is None:
            fun = _registry.get(key)
            if fun is None:
                raise RuntimeError(f"host callback {key} of this program no longer exists")
            pos = positions[key] = len(callables)
            callables.append(_adapt(fun))
        return f"backend_config = {{index = {pos} : ui64}}"

    text = _INDEX.sub(renumber, text)
    if platform != "cpu":
        text = text.replace(CPU_TARGET, GPU_TARGET)
    return text, callables


def _adapt(fun: HostFunction) -> Callable[..., Any]:
    """jaxlib calls with the operands (the token first, if any) and expects a tuple back."""
    if fun.ordered:

        def with_token(token: object, *args: np.ndarray[Any, Any]) -> tuple[object, ...]:
            return (token, *fun(*args))

        return with_token

    def plain(*args: np.ndarray[Any, Any]) -> tuple[object, ...]:
        return tuple(fun(*args))

    return plain

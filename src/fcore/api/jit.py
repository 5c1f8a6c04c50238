"""``jit``: stage once per (argument types, static args, x64 mode), compile with XLA, run.

``jit(f)`` returns a ``Jitted`` callable; ``.trace(*args)``, ``.lower()``, ``.compile()``
expose the ahead-of-time stages as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs

from fcore import tree_util
from fcore.api.staging import abstractify, fun_name, merge_static, normalize_argnums, split_static
from fcore.backend import runtime
from fcore.backend.lowering import lower_jaxpr
from fcore.config import x64_enabled
from fcore.interpreters.array import ArrayImpl
from fcore.interpreters.eval import EVAL_TRACE
from fcore.interpreters.stack import current_trace
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.ir.avals import ShapedArray
from fcore.ir.core import ClosedJaxpr
from fcore.lax.call import bind_jit, clear_executable_cache, compile_jaxpr, execute, hoist_consts, to_device


@attrs.frozen(slots=True)
class _Entry:
    """A traced specialization: the jaxpr (consts hoisted), its consts and output tree."""

    closed: ClosedJaxpr
    hoisted: ClosedJaxpr
    consts: tuple[Any, ...]
    out_tree: tree_util.PyTreeDef


@attrs.frozen(slots=True)
class Compiled:
    """A compiled specialization: call it with the same kinds of arguments."""

    _jitted: Jitted
    _entry: _Entry
    _executable: runtime.Executable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._jitted(*args, **kwargs)

    def as_text(self) -> str:
        """XLA's optimized HLO."""
        return self._executable.as_text()

    def cost_analysis(self) -> dict[str, float]:
        return self._executable.cost_analysis()


@attrs.frozen(slots=True)
class Lowered:
    """The StableHLO module of a specialization."""

    _jitted: Jitted
    _entry: _Entry

    def as_text(self) -> str:
        return lower_jaxpr(self._entry.hoisted, self._jitted.name)

    def compile(self) -> Compiled:
        exe = compile_jaxpr(self._entry.hoisted, self._jitted.name)
        return Compiled(self._jitted, self._entry, exe)


@attrs.frozen(slots=True)
class Traced:
    """The staged jaxpr of a specialization (``.jaxpr``)."""

    _jitted: Jitted
    _entry: _Entry

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.closed

    def lower(self) -> Lowered:
        return Lowered(self._jitted, self._entry)


class Jitted:
    """A jit-compiled function (see ``fcore.jit``)."""

    def __init__(
        self, fun: Callable[..., Any], static_argnums: tuple[int, ...], donate_argnums: tuple[int, ...]
    ) -> None:
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.name = fun_name(fun)
        self.static_argnums = static_argnums
        self.donate_argnums = donate_argnums  # accepted; buffers are not reused yet
        self._cache: dict[Hashable, _Entry] = {}
        self._fast: dict[Hashable, _Entry] = {}

    def _specialize(self, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[_Entry, list[Any]]:
        if self.static_argnums:
            dyn, static = split_static(args, self.static_argnums)
            for i, v in static.items():
                try:
                    hash(v)
                except TypeError:
                    raise TypeError(
                        f"jit({self.name}): static argument {i} of type {type(v).__name__} is not hashable; "
                        "static arguments must be hashable"
                    ) from None
        else:
            dyn, static = list(args), {}
        flat, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
        avals = tuple(abstractify(x) for x in flat)
        key = (in_tree, avals, tuple(sorted(static.items())), x64_enabled())
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(avals, in_tree, static)
            self._cache[key] = entry
        return entry, flat

    def _trace(self, avals: Sequence[ShapedArray], in_tree: tree_util.PyTreeDef, static: dict[int, Any]) -> _Entry:
        out_trees: list[tree_util.PyTreeDef] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            dyn_args, kw = tree_util.tree_unflatten(in_tree, leaves)
            out = self.fun(*merge_static(dyn_args, static), **kw)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, avals, f"jit({self.name})")
        hoisted, consts = hoist_consts(closed)
        return _Entry(closed, hoisted, tuple(consts), out_trees[0])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entry = None
        if not kwargs and not self.static_argnums:
            # Fast path (the common cached call): positional fcore arrays, keyed by avals alone.
            for a in args:
                if type(a) is not ArrayImpl:
                    break
            else:
                fast_key = (tuple([a.aval for a in args]), x64_enabled())
                entry = self._fast.get(fast_key)
                if entry is None:
                    entry, _ = self._specialize(args, kwargs)
                    self._fast[fast_key] = entry
                flat: Sequence[Any] = args
        if entry is None:
            entry, flat = self._specialize(args, kwargs)
        operands = [*entry.consts, *flat]
        if current_trace() is EVAL_TRACE:
            exe = compile_jaxpr(entry.hoisted, self.name)
            outs: list[Any] = execute(exe, entry.hoisted.out_avals, operands)
        else:
            outs = bind_jit(entry.hoisted, operands, self.name)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        entry, _ = self._specialize(args, kwargs)
        return Traced(self, entry)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def __repr__(self) -> str:
        return f"<jit({self.name})>"


def jit(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    donate_argnums: int | Sequence[int] = (),
) -> Jitted:
    """Compile ``fun`` with XLA; re-traced only for new argument types or static values."""
    return Jitted(fun, normalize_argnums(static_argnums), normalize_argnums(donate_argnums))


def device_put(x: Any) -> Any:
    """Put every array leaf of ``x`` on the default device."""
    def put(leaf: Any) -> ArrayImpl:
        aval = abstractify(leaf)
        arr = ArrayImpl(None, aval.weak_type, to_device(leaf))
        return arr

    return tree_util.tree_map(put, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array leaf of ``x`` to be computed."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, ArrayImpl):
            leaf.block_until_ready()
    return x


def clear_caches() -> None:
    """Forget compiled executables (as ``jax.clear_caches``); traced specializations live on
    their ``Jitted`` objects and go away with them."""
    clear_executable_cache()


def devices() -> list[runtime.Device]:
    return runtime.devices()

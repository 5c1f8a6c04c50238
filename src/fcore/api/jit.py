"""``jit``: stage once per (argument types, static args, x64 mode), compile with XLA, run.

``jit(f)`` returns a ``Jitted`` callable; ``.trace(*args)``, ``.lower()``, ``.compile()``
expose the ahead-of-time stages as in JAX.
"""

from __future__ import annotations

import functools
import weakref
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
from fcore.lax.call import Launch, bind_jit, clear_executable_cache, compile_jaxpr, hoist_consts, launch_for, to_device

DeviceBuffer = runtime.DeviceBuffer


@attrs.define(slots=True, eq=False)
class _Entry:
    """A traced specialization: the jaxpr (consts hoisted), its consts and output tree, and
    once it has run outside transformations, its ``Launch`` (dropped by ``clear_caches``)."""

    closed: ClosedJaxpr
    hoisted: ClosedJaxpr
    consts: tuple[Any, ...]
    out_tree: tree_util.PyTreeDef
    leaf_out: bool  # out_tree is a single leaf: the result is the one output itself
    launch: Launch | None = None


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
        self._positional = not static_argnums
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
        out_tree = out_trees[0]
        return _Entry(closed, hoisted, tuple(consts), out_tree, tree_util.treedef_is_leaf(out_tree))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and self._positional:
            # Fast path, the common cached call: positional fcore arrays that already live on
            # the device, keyed by their avals alone, outside any transformation. Everything
            # else (and a first call) goes through ``_call``, which fills ``_fast``.
            for a in args:
                if type(a) is not ArrayImpl:
                    break
            else:
                # ``_aval`` is None until an array's aval is first asked for: such a key misses
                # and ``_call`` computes the avals (so the next call hits).
                entry = self._fast.get((tuple([a._aval for a in args]), x64_enabled()))
                if entry is not None:
                    launch = entry.launch
                    if launch is not None and current_trace() is EVAL_TRACE:
                        try:  # the jaxlib arrays (``DeviceBuffer.raw_array()``, inlined)
                            raw: list[runtime.RawArray] = [a._device._array for a in args]
                        except AttributeError:  # an argument without its device copy yet
                            pass
                        else:
                            if launch.consts:
                                raw[:0] = launch.consts
                            outs = launch.run(raw).consume_with_handlers(launch.handlers)
                            one = launch.single
                            if one is not None and entry.leaf_out:
                                return ArrayImpl(None, one[0], DeviceBuffer(outs[0], one[1]), one[2])
                            return tree_util.tree_unflatten(
                                entry.out_tree,
                                [ArrayImpl(None, w, DeviceBuffer(o, r), av) for o, (w, r, av) in zip(outs, launch.outs)],
                            )
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        entry = None
        if not kwargs and self._positional:
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
        if current_trace() is EVAL_TRACE:
            launch = entry.launch
            if launch is None:
                launch = launch_for(entry.hoisted, self.name, entry.consts)
                entry.launch = launch
                _with_launches.add(self)
            outs: list[Any] = launch(flat)
        else:
            outs = bind_jit(entry.hoisted, [*entry.consts, *flat], self.name)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _drop_launches(self) -> None:
        for entry in self._cache.values():
            entry.launch = None

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        entry, _ = self._specialize(args, kwargs)
        return Traced(self, entry)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def __repr__(self) -> str:
        return f"<jit({self.name})>"


#: Jitted functions holding ``Launch``es (compiled executables) that ``clear_caches`` must drop.
_with_launches: weakref.WeakSet[Jitted] = weakref.WeakSet()


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
        return ArrayImpl(None, aval.weak_type, to_device(leaf), aval)

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
    for jitted in list(_with_launches):
        jitted._drop_launches()
    _with_launches.clear()
    clear_executable_cache()


def devices() -> list[runtime.Device]:
    return runtime.devices()

"""``jit``: stage once per (argument types, static args, x64 mode), compile with XLA, run.

``jit(f)`` returns a ``Jitted`` callable; ``.trace(*args)``, ``.lower()``, ``.compile()``
expose the ahead-of-time stages (``fcore.api.stages``) as in JAX. As in JAX, jitted
functions built from the same function with the same options share their traces.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import inspect
import logging
import time
import types
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, NoReturn, ParamSpec, TypeVar, overload

import numpy as np

from fcore import tree_util
from fcore.api._float0 import float0, float0_zeros, is_float0
from fcore.api.committed import committed_device, on_other_device
from fcore.api.devices import devices as devices
from fcore.api.placement import to_sharding
from fcore.api.cache_miss import Key as TraceKey, explain as explain_cache_miss
from fcore.api.jit_args import ArgSpec, CallArgs, dynamic_leaf_info, resolve_argnums, signature_of, split_call
from fcore.api.staging import ShapeDtypeStruct, abstractify, fun_name
from fcore.api.stages import Lowered, Specialization, Traced
from fcore.backend import runtime
from fcore.config import EAGER_CHECKS, eager_checks, jit_disabled, trace_context
from fcore.config_options import EXPLAIN_CACHE_MISSES, compile_log_level
from fcore.api.transfer_guard import check_host_to_device, host_to_device_guard
from fcore.interpreters.array import Array, ArrayImpl
from fcore.interpreters.eval import EVAL_TRACE, to_numpy_arg
from fcore.interpreters.float_checks import check_call
from fcore.interpreters.stack import CURRENT_TRACE, current_trace
from fcore.interpreters.staging import trace_to_jaxpr
from fcore.interpreters.trace import Tracer
from fcore.ir.avals import ShapedArray, shaped_array
from fcore.sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, get_abstract_mesh, resolve_spec
from fcore.api.spmd import SpmdLaunch, jaxpr_mesh, spmd_launch
from fcore.api.spmd_stages import SpmdLowered
from fcore.backend.sharded import ShardedBuffer
from fcore.lax.call import Launch, bind_jit, clear_executable_cache, hoist_consts, to_device
from fcore.api.refs import Ref, RefStaging, check_not_ref_output, check_unaliased, ref_positions

try:
    from fcore import _fastjit

    #: Whether jit's cached call runs in C (``fcore._fastjit``, built at install where a C
    #: compiler is); where not, ``Jitted._dispatch`` serves every call.
    CACHED_CALL_IN_C = True
except ImportError:
    CACHED_CALL_IN_C = False

#: jaxlib's C++ flattener, called directly on this hot path (no Python frame in between).
_flatten = tree_util.default_registry.flatten

DeviceBuffer = runtime.DeviceBuffer
#: ``object.__new__``, typed, looked up once (on a class each lookup makes a method object).
_new_buffer = DeviceBuffer.__new__
_new_array = ArrayImpl.__new__
if CACHED_CALL_IN_C:
    _fastjit.configure(CURRENT_TRACE, EAGER_CHECKS, ArrayImpl, DeviceBuffer)
#: ``current_trace``, bound once: a method looked up on a ``ContextVar`` makes a method object
#: per call.
_trace_now = CURRENT_TRACE.get

#: What a traced function may return as a leaf (anything else is a ``TypeError``).
_OUTPUT_TYPES = (Array, np.ndarray, np.generic, bool, int, float, complex)


P = ParamSpec("P")
R = TypeVar("R")
_logger = logging.getLogger(__name__)


class _TraceCache:
    """The specializations of one function under one set of jit options: by full key, and
    for the fast path (calls whose every leaf is an fcore array on one device) by argument
    tree, then by the leaves' avals (see ``Jitted._dispatch``)."""

    __slots__ = ("entries", "fast", "fast_flat", "__weakref__")

    def __init__(self) -> None:
        self.entries: dict[TraceKey, Specialization] = {}
        self.fast: dict[tree_util.PyTreeDef, list[_FastEntry]] = {}
        #: For calls with positional array arguments only, of any number (most recent first:
        #: the avals' list comparison tells the numbers apart, so no lookup by number).
        self.fast_flat: list[_FastEntry] = []

    def drop_launches(self) -> None:
        for entry in self.entries.values():
            entry.launch = None
        self.fast.clear()  # their candidates hold the launches
        self.fast_flat.clear()


#: A fast-path candidate: the flat argument avals (compared as a list, which compares
#: element by element and identical objects without a Python call: avals are interned, so
#: a hit costs one C loop), the state a call may take it in (``_DispatchState``), and the
#: specialization's launch in parts (``Launch.fast_parts``). ``fcore._fastjit`` reads it too.
_FastEntry = tuple[
    list[ShapedArray], "_DispatchState", runtime.LaunchFn, list[runtime.ResultHandler],
    tuple[tuple[runtime.OutAval, bool, ShapedArray], ...], "Callable[[list[ArrayImpl]], object] | None",
]


#: What a cached call compares in one tuple comparison: the current trace (the eager one), and
#: the context's settings (``eager_checks().jit_key``: no NaN/Inf check, jit enabled, and the
#: settings traced under).
_DispatchState = tuple[object, tuple[bool, bool, bool, "str | None"]]


#: Fast-path candidates kept per argument tree (most recent first), and trees per function.
_FAST_PER_TREE = 8
_FAST_TREES = 64


#: The refs of each specialization that has ref arguments or uses refs from outside.
_ref_staging: weakref.WeakKeyDictionary[Specialization, RefStaging] = weakref.WeakKeyDictionary()

#: Trace caches by function, then by options: jit objects of one function share traces.
_shared: weakref.WeakKeyDictionary[Callable[..., Any], dict[ArgSpec, _TraceCache]] = weakref.WeakKeyDictionary()
#: Caches holding ``Launch``es (compiled executables) that ``clear_caches`` must drop.
_with_launches: weakref.WeakSet[_TraceCache] = weakref.WeakSet()


#: Python scalars a cached call takes as host values (NumPy arrays and scalars too).
_HOST_SCALARS = (float, int, bool, complex)


def _host_value(x: object) -> tuple[ShapedArray, np.ndarray[Any, Any]] | None:
    """A NumPy array or a scalar argument as the slow path sees it: its (interned) aval and its
    host value at that aval's dtype; None for anything else, or for a value the slow path must
    refuse with its own message (an out-of-range int)."""
    if type(x) is not np.ndarray and type(x) not in _HOST_SCALARS and not isinstance(x, np.generic):
        return None
    try:
        arr, weak = to_numpy_arg(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return shaped_array(arr.shape, arr.dtype, weak), arr


def _leaf_parts(leaves: Sequence[Any]) -> tuple[list[ShapedArray | None], list[runtime.RawArray]] | None:
    """For the cached call: the leaves' avals and jaxlib arrays, when each leaf is an fcore
    array on one device or a host value (put on the default device here, as the slow path
    would, unless ``jax_transfer_guard`` watches such transfers); None sends the call to the
    slow path. JAX's C++ dispatch takes NumPy arguments on its fast path too."""
    avals: list[ShapedArray | None] = []
    raw: list[runtime.RawArray] = []
    guard_checked = False
    for x in leaves:
        if type(x) is ArrayImpl:
            dev = x._device
            if type(dev) is not DeviceBuffer:
                return None
            avals.append(x._aval)
            raw.append(dev._array)
            continue
        if not guard_checked:
            if host_to_device_guard() != "allow":
                return None
            guard_checked = True
        host = _host_value(x)
        if host is None:
            return None
        avals.append(host[0])
        raw.append(runtime.device_put_raw(host[1]))
    return avals, raw


def _trace_cache(fun: Callable[..., Any], spec: ArgSpec) -> _TraceCache:
    try:
        per_fun = _shared.setdefault(fun, {})
    except TypeError:  # not weakly referenceable or not hashable: a cache of its own
        return _TraceCache()
    cache = per_fun.get(spec)
    if cache is None:
        cache = per_fun[spec] = _TraceCache()
    return cache


class _PythonCall:
    """``Jitted``'s base where ``fcore._fastjit`` is not built: its ``__call__`` is ``_dispatch``."""

    __slots__ = ()


if TYPE_CHECKING or not CACHED_CALL_IN_C:
    _CallBase = _PythonCall
else:  # the cached call in C: its ``__call__`` falls back to ``Jitted._dispatch``
    _CallBase = _fastjit.FastCall


class Jitted(_CallBase, Generic[P, R]):
    """A jit-compiled function (see ``fcore.jit``): called as ``fun`` is, returns what it returns."""

    fun: Callable[P, R]

    def __init__(
        self, fun: Callable[P, R], spec: ArgSpec, in_shardings: Any = None, out_shardings: Any = None
    ) -> None:
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.name = fun_name(fun)
        self._sig = signature_of(fun)
        self._spec = spec
        self.static_argnums = spec.static_argnums
        self.static_argnames = spec.static_argnames
        self.donate_argnums = spec.donate_argnums
        self.donate_argnames = spec.donate_argnames
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self._sharded = in_shardings is not None or out_shardings is not None
        # Calls with static or donated arguments never take the fast path (``__call__``).
        self._plain = not (
            spec.static_argnums or spec.static_argnames or spec.donate_argnums or spec.donate_argnames or self._sharded
        )
        self._caches = _TraceCache() if self._sharded else _trace_cache(fun, spec)
        self._spmd: weakref.WeakKeyDictionary[Specialization, dict[Any, SpmdLaunch]] = weakref.WeakKeyDictionary()
        self._one_device: weakref.WeakSet[Specialization] = weakref.WeakSet()
        self._spmd_asked: weakref.WeakKeyDictionary[Specialization, tuple[list[Any], list[Any] | None]] = (
            weakref.WeakKeyDictionary()
        )
        self._cache = self._caches.entries
        self._fast = self._caches.fast
        self._fast_flat = self._caches.fast_flat

    # -- specialization -------------------------------------------------------------------
    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CallArgs:
        return split_call(self._spec, self.name, args, kwargs)

    def _specialize(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Specialization, list[Any]]:
        spec = self._spec
        call: CallArgs | None = None
        if spec.static_argnums or (kwargs and spec.static_argnames):
            call = self._split(args, kwargs)
            flat, in_tree = _flatten((call.dyn_args, call.dyn_kwargs))
            static_key = call.static_key
        else:  # no static arguments in this call (the common case): nothing to split
            flat, in_tree = _flatten((args, kwargs))
            static_key = ()
        float0_in: tuple[tuple[int, tuple[int, ...]], ...] = ()
        refs_at = ref_positions(flat)
        try:
            avals = tuple([x._inner_aval if isinstance(x, Ref) else abstractify(x) for x in flat]) if refs_at else (
                tuple([abstractify(x) for x in flat])
            )
        except (TypeError, OverflowError):
            float0_in = tuple((i, tuple(x.shape)) for i, x in enumerate(flat) if is_float0(x))
            if not float0_in:
                self._raise_argument_error(flat, call or CallArgs(args, kwargs, {}, {}, ()))
            flat = [x for x in flat if not is_float0(x)]
            avals = tuple([abstractify(x) for x in flat])
        # Where ref arguments are (they are passed by value) is part of the last entry.
        key = (in_tree, avals, static_key, trace_context(), (float0_in, refs_at) if refs_at else float0_in)
        entry = self._cache.get(key)
        if entry is None:  # a failed trace raises here and caches nothing
            call = call or CallArgs(args, kwargs, {}, {}, ())
            if EXPLAIN_CACHE_MISSES.get():
                names, _ = dynamic_leaf_info(self._spec, self._sig, call)
                explain_cache_miss(self.fun, self.name, list(self._cache), key, names)
            if refs_at:
                check_unaliased(flat, refs_at, dynamic_leaf_info(self._spec, self._sig, call)[0], self._where())
            entry = self._trace(avals, in_tree, call, float0_in, refs_at)
            self._cache[key] = entry
        return entry, flat

    def _raise_argument_error(self, flat: Sequence[Any], call: CallArgs) -> NoReturn:
        """Re-abstractify to find the culprit and name its argument, as jax does."""
        for i, x in enumerate(flat):
            try:
                abstractify(x)
            except OverflowError:
                raise OverflowError(
                    "An overflow was encountered while parsing an argument to a jitted computation, whose "
                    f"argument path is {self._arg_name(call, i)}. Got {type(x)} with value {x}"
                ) from None
            except TypeError:
                raise TypeError(
                    f"Error interpreting argument to {self.fun} as an abstract array. The problematic value is "
                    f"of type {type(x)} and was passed to the function at path {self._arg_name(call, i)}.\n"
                    "This typically means that a jit-wrapped function was called with a non-array argument, "
                    "and this argument was not marked as static using the static_argnums or static_argnames "
                    "parameters of jit."
                ) from None
        raise AssertionError("abstractify failed once but not twice")  # pragma: no cover

    def _arg_name(self, call: CallArgs, leaf: int) -> str:
        names, _ = dynamic_leaf_info(self._spec, self._sig, call)
        return names[leaf]

    def _trace(
        self, avals: Sequence[ShapedArray], in_tree: tree_util.PyTreeDef, call: CallArgs,
        float0_in: Sequence[tuple[int, tuple[int, ...]]] = (), refs_at: tuple[int, ...] = (),
    ) -> Specialization:
        """Stage the function for ``avals``. ``float0`` arguments (tangents of integer values,
        at ``float0_in``) carry no data: they are not program inputs, and the function sees
        ``float0`` zeros of their shapes, as in JAX. Ref arguments (at ``refs_at``) and the refs
        from outside the function uses become extra inputs and outputs (``RefStaging``)."""
        out_trees: list[tree_util.PyTreeDef] = []
        float0_outs: list[tuple[int, tuple[int, ...]]] = []
        refs = RefStaging(refs_at, dynamic_leaf_info(self._spec, self._sig, call)[0], self._where())

        def flat_fun(*leaves: Any) -> list[Any]:
            if float0_in:
                leaves = _with_float0_inputs(leaves, float0_in)
            with refs.staging(leaves) as with_refs:
                return staged_fun(with_refs) + refs.extra_outputs(leaves)

        def staged_fun(leaves: Sequence[Any]) -> list[Any]:
            dyn_args, dyn_kwargs = in_tree.unflatten(leaves)
            args, kwargs = call.merge(dyn_args, dyn_kwargs)
            out_leaves, out_tree = _flatten(self.fun(*args, **kwargs))
            staged = []
            for i, leaf in enumerate(out_leaves):
                check_not_ref_output(leaf, self._where(), leaves, refs.names)
                if is_float0(leaf):
                    float0_outs.append((i, leaf.shape))
                    continue
                if not isinstance(leaf, _OUTPUT_TYPES):
                    raise TypeError(
                        f"function {self._where()} traced for jit returned a value of type {type(leaf)}, "
                        "which is not a valid array type"
                    )
                staged.append(leaf)
            out_trees.append(out_tree)
            return staged

        start = time.perf_counter()
        closed = trace_to_jaxpr(flat_fun, avals, f"jit({self.name})")
        level = compile_log_level()  # ``jax_log_compiles``: JAX's log line
        if _logger.isEnabledFor(level):
            _logger.log(level, "Finished tracing %s for jit in %.9f sec", self.name, time.perf_counter() - start)
        hoisted, consts = hoist_consts(closed)
        out_tree = out_trees[0]
        names, donated = dynamic_leaf_info(self._spec, self._sig, call)
        if float0_in:
            dropped = {i for i, _ in float0_in}
            names = tuple(n for i, n in enumerate(names) if i not in dropped)
            donated = tuple(d for i, d in enumerate(donated) if i not in dropped)
        entry = Specialization(
            self.name, closed, hoisted, tuple(consts), in_tree, out_tree, tree_util.treedef_is_leaf(out_tree),
            names, donated, float0_outs=tuple(float0_outs),
        )
        if refs.positions or refs.closed:
            _ref_staging[entry] = refs
        return entry

    def _where(self) -> str:
        code = getattr(self.fun, "__code__", None)
        return f"{self.name} at {code.co_filename}:{code.co_firstlineno}" if code is not None else self.name

    # -- calls ----------------------------------------------------------------------------
    def _dispatch(self, *args: Any, **kwargs: Any) -> Any:
        # Fast path, the common cached call: fcore arrays that already live on one device,
        # outside any transformation, with jit enabled and no NaN/Inf check on (``_call`` does
        # those). The candidates for the call's argument tree are compared by the leaves' avals
        # in one list comparison, and by the dispatch state (the trace, and the context's
        # settings snapshot: checks, disable_jit, the settings traced under) in one tuple
        # comparison. A leaf that is not an fcore array has no ``_aval``: NumPy arrays and
        # scalars are converted and put on the device by ``_leaf_parts``, anything else (and an
        # fcore array without its one-device copy: host only, sharded, deleted) takes the slow
        # path, which also skips the unused ones. ``_aval`` is None until an array's aval is first asked for, and such a list
        # matches nothing. Everything else (and a first call) goes through ``_call``, which
        # fills the fast caches (only for jit objects without static, donated or sharded
        # arguments: the others never have candidates). Each bytecode here costs ~30 machine
        # instructions (CPython 3.11), so this path is written for few of them: loops, not
        # comprehensions (a function object per call), getters bound once, no lookup by count.
        candidates = None if kwargs else self._fast_flat
        if candidates:  # positional arrays only (the commonest call): no tree to build
            avals: list[ShapedArray | None] = []
            raw: list[runtime.RawArray] = []
            try:
                for x in args:
                    avals.append(x._aval)
                    raw.append(x._device._array)
            except AttributeError:  # a NumPy array or a scalar among them (or the slow path's)
                parts = _leaf_parts(args)
                if parts is None:
                    candidates = None
                else:
                    avals, raw = parts
        else:
            candidates = None
        if candidates is None:  # a pytree argument, or keywords: jaxlib's C++ flattener
            if jit_disabled():
                return self.fun(*args, **kwargs)  # ``disable_jit``: op by op, as plain Python
            candidates, avals, raw = self._tree_candidates(args, kwargs)
        if candidates is not None:
            state = (_trace_now(), eager_checks().jit_key)  # a check on matches no candidate
            for c_avals, c_state, run, handlers, wraps, unflatten in candidates:
                if c_avals == avals and c_state == state:
                    try:
                        outs = run(raw).consume_with_handlers(handlers)
                    except Exception as e:
                        return self._fast_path_failed(e, args, kwargs)
                    # ``ArrayImpl(None, weak, DeviceBuffer(o, rt_aval), aval)`` for each result,
                    # without the two ``__init__`` calls (half the cost of the wrapping)
                    results: list[ArrayImpl] = []
                    for o, (rt_aval, weak, aval) in zip(outs, wraps):
                        buf = _new_buffer(DeviceBuffer)
                        buf._array = o
                        buf._aval = rt_aval
                        out = _new_array(ArrayImpl)
                        out._np = None
                        out._device = buf
                        out._weak = weak
                        out._aval = aval
                        results.append(out)
                    return results[0] if unflatten is None else unflatten(results)
        if jit_disabled():
            return self.fun(*args, **kwargs)  # ``disable_jit``: op by op, as plain Python
        return self._call(args, kwargs)

    if TYPE_CHECKING:  # called as ``fun`` is; at runtime ``FastCall``'s (C) or ``_dispatch`` itself
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    elif not CACHED_CALL_IN_C:
        __call__ = _dispatch

    def _fast_path_failed(self, error: Exception, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
        """A cached launch raised ``error``: XLA refuses arguments committed to another device
        before running anything, and ``_call`` runs those (turning the cached path off, as XLA
        logs this refusal once); any other error is the call's."""
        if isinstance(error, runtime.XlaRuntimeError) and on_other_device(_flatten((args, kwargs or {}))[0]):
            return self._call(args, kwargs or {})
        raise error

    def _tree_candidates(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[list[_FastEntry] | None, list[ShapedArray | None], list[runtime.RawArray]]:
        """The fast path's candidates for a call with a pytree argument or keywords (None: take
        the slow path), with the argument leaves' avals and jaxlib arrays (``_dispatch``)."""
        flat, tree = _flatten((args, kwargs))
        candidates = self._fast.get(tree)
        avals: list[ShapedArray | None] = []
        raw: list[runtime.RawArray] = []
        if candidates is not None:
            try:
                for x in flat:
                    avals.append(x._aval)
                    raw.append(x._device._array)
            except AttributeError:  # host values among the leaves (or the slow path's)
                parts = _leaf_parts(flat)
                if parts is None:
                    return None, avals, raw
                return candidates, parts[0], parts[1]
        return candidates, avals, raw

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        entry, flat = self._specialize(args, kwargs)
        refs = _ref_staging.get(entry) if _ref_staging else None
        if refs is not None:  # the refs' values in, their final values written back
            return entry.results(refs.write_back(flat, self._run(entry, refs.call_args(flat), args, kwargs, False)))
        return entry.results(self._run(entry, flat, args, kwargs, self._plain))

    def _run(self, entry: Specialization, flat: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             remember: bool) -> list[Any]:
        """The staged program's flat outputs for its flat inputs (compiled, or bound under a trace)."""
        if current_trace() is EVAL_TRACE:
            guard = host_to_device_guard()  # ``jax_transfer_guard``: host arguments are transfers
            if guard != "allow":
                check_host_to_device(flat, False, guard)
            launch = entry.launch
            if launch is None or _has_sharded(flat):
                spmd = self._spmd_launch(entry, args, flat)
                if spmd is not None:
                    outs: list[Any] = spmd(flat)
                    if eager_checks().floats:
                        self._check_outputs(outs, args, kwargs)
                    return outs
            if launch is None:
                launch = entry.get_launch()
                _with_launches.add(self._caches)
            device = committed_device(flat, entry.arg_names, getattr(self.fun, "__qualname__", self.name))
            if device is not None:
                launch = entry.launch_on(device)
                # The cached path runs on the default device only: off for a function used
                # on several devices (rare), rather than a device check in every cached call.
                self._plain = False
                self._fast.clear()
                self._fast_flat.clear()
            outs = launch(flat)
            if eager_checks().floats:
                self._check_outputs(outs, args, kwargs)
            elif remember and self._plain and not entry.float0_outs and device is None:
                self._remember(entry, launch, flat)
        else:
            outs = bind_jit(entry.hoisted, [*entry.consts, *flat], self.name)
        return list(outs)

    def _check_outputs(self, outs: Sequence[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """``debug_nans``/``debug_infs``: a special output re-runs ``fun`` op by op, as JAX."""
        check_call(f"jit({self.name})", outs, lambda: self.fun(*args, **kwargs))

    def _remember(self, entry: Specialization, launch: Launch, flat: Sequence[Any]) -> None:
        """Make ``entry`` a fast-path candidate for calls like this one, if every argument
        leaf is an fcore array on one device (``launch`` has just put host ones there)."""
        if len(flat) != entry.in_tree.num_leaves:  # float0 arguments were dropped
            return
        avals: list[ShapedArray] = []
        for x in flat:
            if type(x) is ArrayImpl:
                if type(x._device) is not DeviceBuffer or x._aval is None:
                    return
                avals.append(x._aval)
            else:  # a host value, which a cached call puts on the device itself (``_leaf_parts``)
                host = _host_value(x)
                if host is None:
                    return
                avals.append(host[0])
        if entry.in_tree == _positional_tree(len(flat)):
            candidates = self._fast_flat
        else:
            fast = self._fast
            found = fast.get(entry.in_tree)
            if found is None:
                if len(fast) >= _FAST_TREES:
                    fast.clear()
                found = fast[entry.in_tree] = []
            candidates = found
        state: _DispatchState = (EVAL_TRACE, eager_checks().jit_key)
        candidates[:] = [c for c in candidates if not (c[1] == state and c[0] == avals)]  # a stale one
        one = entry.leaf_out and entry.out_tree.num_leaves == 1  # (``None`` is a leaf tree of no leaves)
        candidates.insert(0, (avals, state, *launch.fast_parts(None if one else entry.out_tree.unflatten)))
        _with_launches.add(self._caches)  # ``clear_caches`` must drop the candidate's launch
        del candidates[_FAST_PER_TREE:]

    def _spmd_launch(self, entry: Specialization, args: tuple[Any, ...], flat: Sequence[Any]) -> SpmdLaunch | None:
        """The launch over a mesh, when shardings are involved (None: the one-device path)."""
        named = self._sharded or jaxpr_mesh(entry.hoisted.jaxpr) is not None
        if not named and (not _has_sharded(flat) or entry in self._one_device):
            return None
        try:
            return self._spmd_launch_for(entry, args, flat)
        except NotImplementedError:
            if named:
                raise
            self._one_device.add(entry)  # e.g. host callbacks: sharded arguments are gathered instead
            return None

    def _spmd_launch_for(self, entry: Specialization, args: tuple[Any, ...], flat: Sequence[Any]) -> SpmdLaunch:
        cache = self._spmd.get(entry)
        if cache is None:
            cache = self._spmd[entry] = {}
        # The flat shardings asked for depend only on the specialization (its trees).
        asked = self._spmd_asked.get(entry)
        if asked is None:
            in_flat = self._flat_in_shardings(args, len(flat))
            out_flat = None
            if self.out_shardings is not None:
                dummy = entry.out_tree.unflatten([0] * entry.out_tree.num_leaves)
                out_flat = [
                    _resolve(s) for s in tree_util.broadcast_prefix(self.out_shardings, dummy, is_leaf=_is_sharding_leaf)
                ]
            asked = self._spmd_asked[entry] = (in_flat, out_flat)
        return spmd_launch(entry.hoisted, self.name, entry.consts, flat, asked[0], asked[1], cache)

    def _flat_in_shardings(self, args: tuple[Any, ...], n_flat: int) -> list[Any]:
        if self.in_shardings is None:
            return [None] * n_flat
        statics = set(self.static_argnums)
        dyn = tuple(a for i, a in enumerate(args) if i not in statics)
        spec = self.in_shardings
        if isinstance(spec, (list, tuple)) and not isinstance(spec, PartitionSpec) and len(spec) == len(args) != len(dyn):
            spec = tuple(s for i, s in enumerate(spec) if i not in statics)
        if isinstance(spec, list):
            spec = tuple(spec)
        flat = tree_util.broadcast_prefix(spec, dyn, is_leaf=_is_sharding_leaf)
        if len(flat) > n_flat:
            raise ValueError(f"jit of {self.name}: in_shardings has more leaves than the arguments")
        return [_resolve(s) for s in flat] + [None] * (n_flat - len(flat))

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Jitted[P, R]: ...

    @overload  # a bound method: its result is typed, its arguments (``self`` dropped) are not
    def __get__(self, obj: object, objtype: type | None = None) -> Callable[..., R]: ...

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        """Decorated methods bind ``self`` as their first argument, as functions do."""
        return self if obj is None else types.MethodType(self, obj)

    # -- ahead of time --------------------------------------------------------------------
    def trace(self, *args: P.args, **kwargs: P.kwargs) -> Traced[P, R]:
        entry, _ = self._specialize(args, kwargs)
        return Traced(entry)

    def lower(self, *args: P.args, **kwargs: P.kwargs) -> Lowered[P, R]:
        entry, flat = self._specialize(args, kwargs)
        if self._sharded or _has_sharded(flat) or jaxpr_mesh(entry.hoisted.jaxpr) is not None:
            def make_launch() -> SpmdLaunch:
                launch = self._spmd_launch(entry, args, flat)
                assert launch is not None
                return launch

            return SpmdLowered(entry, make_launch)
        return Traced(entry).lower()

    def eval_shape(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """The results' shapes and dtypes (``ShapeDtypeStruct``s), without running anything."""
        entry, _ = self._specialize(args, kwargs)
        structs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in entry.out_avals]
        return entry.out_tree.unflatten(entry.with_float0(structs, lambda s: ShapeDtypeStruct(s, float0)))

    def clear_cache(self) -> None:
        """Forget this function's traces (and their executables)."""
        self._cache.clear()
        self._fast.clear()
        self._fast_flat.clear()

    def __repr__(self) -> str:
        return f"<jit({self.name})>"


@overload
def jit(
    fun: Callable[P, R],
    /,
    static_argnums: int | Sequence[int] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    *,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Jitted[P, R]: ...


@overload
def jit(
    fun: None = None,
    /,
    static_argnums: int | Sequence[int] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    *,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Callable[[Callable[P, R]], Jitted[P, R]]: ...


def jit(
    fun: Callable[P, R] | None = None,
    /,
    static_argnums: int | Sequence[int] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    *,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Jitted[P, R] | Callable[[Callable[P, R]], Jitted[P, R]]:
    """Compile ``fun`` with XLA; re-traced only for new argument types or static values.

    Static arguments (``static_argnums`` / ``static_argnames``, each completed from the
    other through ``fun``'s signature) must be hashable and are passed to ``fun`` as
    Python values. ``keep_unused`` and ``inline`` are accepted for JAX compatibility; they
    change no result. ``in_shardings`` (a prefix of the positional arguments) and
    ``out_shardings`` (a prefix of the result) compile the function over their mesh with
    XLA's SPMD partitioner (``fcore.sharding``). Without ``fun``, returns a decorator.
    """
    if fun is None:
        def decorator(f: Callable[P, R]) -> Jitted[P, R]:
            return jit(
                f, static_argnums=static_argnums, donate_argnums=donate_argnums, static_argnames=static_argnames,
                donate_argnames=donate_argnames, keep_unused=keep_unused, inline=inline, in_shardings=in_shardings,
                out_shardings=out_shardings,
            )

        return decorator
    _check_callable(fun)
    spec = resolve_argnums(signature_of(fun), static_argnums, static_argnames, donate_argnums, donate_argnames)
    return Jitted(fun, spec, in_shardings, out_shardings)


def _check_callable(fun: object) -> None:
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun}")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")


def device_put(x: Any, device: Any = None) -> Any:
    """Put every array leaf of ``x`` on ``device`` (default: the first device), or lay it
    out as the ``fcore.sharding`` sharding ``device`` says (a sharding, or a tree of them
    that is a prefix of ``x``).

    An fcore array already there is returned as is; Python scalars stay weakly typed.
    Under a transformation, traced values pass through unchanged.
    """
    if isinstance(device, PartitionSpec):
        if get_abstract_mesh() is None:
            raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put")
        device = resolve_spec(device, "device_put")
    elif isinstance(device, str):  # a leaf of no tree of shardings: it would recurse forever
        raise ValueError(
            "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, `Format`, "
            f"`jax.memory.Space` or a pytree of these values. Received invalid value: {device}"
        )
    if isinstance(device, Sharding):
        sharding = device
        return tree_util.tree_map(lambda leaf: leaf if isinstance(leaf, Tracer) else to_sharding(leaf, sharding), x)
    if device is not None and not isinstance(device, runtime.Device):
        shardings = tree_util.broadcast_prefix(device, x, is_leaf=lambda s: s is None or isinstance(s, Sharding))
        leaves, tree = tree_util.tree_flatten(x)
        return tree.unflatten([device_put(leaf, s) for leaf, s in zip(leaves, shardings)])

    def put(leaf: Any) -> Any:
        if isinstance(leaf, Tracer):
            return leaf
        if type(leaf) is ArrayImpl:
            if leaf.is_deleted():
                return leaf  # as jax: the error comes when it is used
            if device is None or leaf.device == device:
                to_device(leaf)  # makes and keeps its device copy
                return leaf
            return ArrayImpl(None, leaf.weak_type, runtime.device_put(leaf.host(), device), leaf.aval)
        if guard != "allow":
            check_host_to_device([leaf], True, guard)
        host, weak = to_numpy_arg(leaf)
        return ArrayImpl(None, weak, runtime.device_put(host, device), ShapedArray(host.shape, host.dtype, weak))

    guard = host_to_device_guard()
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
    for cache in list(_with_launches):
        cache.drop_launches()
    _with_launches.clear()
    clear_executable_cache()
    gc.collect()  # executables in reference cycles (traced closures) go now, not later
    _return_freed_memory()


def _return_freed_memory() -> None:
    """Give the memory of freed executables back to the system, not only to ``malloc``'s free
    lists (glibc keeps them otherwise: RSS would not drop after ``clear_caches``)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


@functools.lru_cache(maxsize=64)
def _positional_tree(n: int) -> tree_util.PyTreeDef:
    """The argument tree of a call with ``n`` positional array arguments and no keywords."""
    return _flatten(((0,) * n, {}))[1]


def _has_sharded(flat: Sequence[Any]) -> bool:
    """Whether an argument is laid out over a mesh: a sharded array, or (``lower``) a
    ``ShapeDtypeStruct`` carrying a mesh sharding."""
    for x in flat:
        if type(x) is ArrayImpl and type(x._device) is ShardedBuffer:
            return True
        if type(x) is ShapeDtypeStruct and isinstance(x._sharding, (NamedSharding, PartitionSpec)):
            return True
    return False


def _is_sharding_leaf(x: object) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _resolve(s: object) -> NamedSharding | SingleDeviceSharding | None:
    if s is None or isinstance(s, (NamedSharding, SingleDeviceSharding)):
        return s
    return resolve_spec(s, "jit")


def _with_float0_inputs(leaves: Sequence[Any], float0_in: Sequence[tuple[int, tuple[int, ...]]]) -> tuple[Any, ...]:
    """The program's inputs with ``float0`` zeros put back at their argument positions."""
    out = list(leaves)
    for i, shape in float0_in:
        out.insert(i, float0_zeros(shape))
    return tuple(out)

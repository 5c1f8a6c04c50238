"""Configuration: 64-bit mode, promotion mode, verify-each.

A leaf module (imports nothing of fcore). As in JAX, the JAX settings (x64, promotion) have
a process-wide value, set by ``config.update`` (or an environment variable at start-up), and
the context managers (``enable_x64``, ``numpy_dtype_promotion``) override it
*context-locally*: each setting is a ``ContextVar`` whose unset state means "the global
value", so threads and asyncio tasks each see their own override (docs/design.md) while
``config.update`` reaches every thread, including ones started later.

Verify-each is fcore's own test switch (JAX's ``jax_enable_checks``): the ``FCORE_VERIFY``
(or ``JAX_ENABLE_CHECKS``) environment variable, read once, and
``config.update("jax_enable_checks", ...)`` give its process-wide value; ``verify_each``,
``enable_checks`` and ``config.update("verify", ...)`` set it for the current context only.

The eager checks (verify-each, ``jax_debug_nans``, ``jax_debug_infs``) share one more
``ContextVar`` whose value, a ``_Checks`` list of the checks on, is what an eager primitive
application tests: an empty list when all are off, so a check that is off costs one
``ContextVar.get`` and a C truth test (see ``eager_checks``). The same object carries the
snapshot of the settings a cached jit call depends on (``_Checks.jit_key``), so that call
reads one ``ContextVar`` for all of them. The other JAX options, and the
ones fcore accepts only at their default value, are in ``fcore.config_options``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Literal

from fcore import config_options as _options
from fcore.config_options import OPTIONS, transfer_guard as transfer_guard

PromotionMode = Literal["standard", "strict"]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0") in ("1", "true", "True")


def bool_env(name: str, default: bool) -> bool:
    """An environment variable read as JAX's ``bool_env`` reads it (y/yes/t/true/on/1 and
    n/no/f/false/off/0, any case; anything else is a ``ValueError``)."""
    val = os.getenv(name, str(default)).lower()
    if val in ("y", "yes", "t", "true", "on", "1"):
        return True
    if val in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"invalid truth value {val!r} for environment {name!r}")


def _promotion_mode(value: object) -> PromotionMode:
    if value == "standard" or value == "strict":
        return value
    raise ValueError(f"numpy_dtype_promotion must be 'standard' or 'strict', got {value!r}")


class _Globals:
    """The process-wide values (what ``config.update`` sets)."""

    __slots__ = ("x64", "promotion", "disable_jit", "cache_dir", "cache_max_size", "cache_min_secs", "matmul_precision")

    def __init__(self) -> None:
        self.x64 = _env_flag("FCORE_ENABLE_X64") or bool_env("JAX_ENABLE_X64", False)
        self.promotion: PromotionMode = _promotion_mode(os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard"))
        self.disable_jit = _env_flag("JAX_DISABLE_JIT")
        # The persistent compilation cache (fcore.backend.compilation_cache): off when None.
        self.cache_dir: str | None = os.environ.get("JAX_COMPILATION_CACHE_DIR") or None
        self.cache_max_size = int(os.environ.get("JAX_COMPILATION_CACHE_MAX_SIZE", -1))  # bytes; -1: unbounded
        # compiles faster than this are not stored, as in jax
        self.cache_min_secs = float(os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", 1.0))
        self.matmul_precision: str | None = os.environ.get("JAX_DEFAULT_MATMUL_PRECISION") or None


_globals = _Globals()


#: The eager checks, in the order ``_Checks`` lists them.
CHECK_NAMES = ("verify", "nans", "infs")
#: Their process-wide values: verify-each from ``FCORE_VERIFY``, the others from JAX's variables.
_global_checks: dict[str, bool] = {
    "verify": _env_flag("FCORE_VERIFY") or bool_env("JAX_ENABLE_CHECKS", False),
    "nans": bool_env("JAX_DEBUG_NANS", False),
    "infs": bool_env("JAX_DEBUG_INFS", False),
}


class _Checks(list[str]):
    """The eager checks on in one context: truthy when any is (the hot path's one test).

    ``overrides`` are the context's own settings (``with debug_nans(...)``, ``verify_each``,
    and the ``enable_x64``/``disable_jit``/``default_matmul_precision`` blocks); the rest follow
    the process-wide values, so a ``config.update`` refreshes every live ``_Checks`` in place
    (``_live``) and reaches threads and contexts already running.
    ``floats`` says whether the NaN or Inf check is on (what a jitted call tests); ``jit_key``
    is everything a cached jit call depends on besides the trace: (``floats``, disable_jit,
    x64, matmul precision), read by jit's fast path with one ``ContextVar.get`` (each read of
    an unset ``ContextVar`` costs a method call and a lookup: ~250 instructions).
    """

    def __init__(self, overrides: dict[str, object]) -> None:
        super().__init__()
        self.overrides = overrides
        self.floats = False
        self.jit_key: tuple[bool, bool, bool, str | None] = (False, False, False, None)
        with _live_lock:
            self.refresh()
            _live[id(self)] = self

    def refresh(self) -> None:
        overrides = self.overrides
        on = [n for n in CHECK_NAMES if overrides.get(n, _global_checks[n])]
        self[:] = on
        self.floats = "nans" in on or "infs" in on
        precision = overrides.get("matmul_precision", _globals.matmul_precision)
        assert precision is None or isinstance(precision, str)
        self.jit_key = (
            self.floats, bool(overrides.get("disable_jit", _globals.disable_jit)),
            bool(overrides.get("x64", _globals.x64)), precision,
        )


_live: weakref.WeakValueDictionary[int, _Checks] = weakref.WeakValueDictionary()
_live_lock = threading.Lock()
_checks: ContextVar[_Checks] = ContextVar("fcore_eager_checks", default=_Checks({}))

#: The eager checks on here: an empty list (falsy) when none is. Read on every eager
#: primitive application; a bare ``ContextVar.get``.
eager_checks = _checks.get
#: The variable itself, for jit's cached call in C (``fcore._fastjit``), which reads it directly.
EAGER_CHECKS = _checks


def float_checks_enabled() -> bool:
    """Whether ``jax_debug_nans`` or ``jax_debug_infs`` is on here."""
    return _checks.get().floats


def check_enabled(name: str) -> bool:
    """Whether the eager check ``name`` (``"verify"``, ``"nans"``, ``"infs"``) is on here."""
    return name in _checks.get()


def _set_global_check(name: str, value: bool) -> None:
    with _live_lock:
        _global_checks[name] = value
    _refresh_live()


def _refresh_live() -> None:
    """After a process-wide change: every context's ``_Checks`` follows it."""
    with _live_lock:
        for checks in list(_live.values()):
            checks.refresh()


def _override_checks(name: str, value: object) -> _Checks:
    return _Checks({**_checks.get().overrides, name: value})


@contextlib.contextmanager
def _checks_override(name: str, value: object) -> Iterator[None]:
    token = _checks.set(_override_checks(name, value))
    try:
        yield
    finally:
        _checks.reset(token)


@contextlib.contextmanager
def debug_nans(new_val: bool = True) -> Iterator[None]:
    """Inside the block, every eager primitive checks its floating outputs for NaNs and a jitted
    call checks its outputs (re-running the function op by op to name the primitive that made
    the NaN), raising ``FloatingPointError``: ``jax.debug_nans``, context-local."""
    with _checks_override("nans", bool(new_val)):
        yield


@contextlib.contextmanager
def debug_infs(new_val: bool = True) -> Iterator[None]:
    """As ``debug_nans``, for infinities: ``jax.debug_infs``."""
    with _checks_override("infs", bool(new_val)):
        yield


# Context-local overrides; no default, so ``get(global value)`` falls back to the global.
_x64: ContextVar[bool] = ContextVar("fcore_enable_x64")
_promotion: ContextVar[PromotionMode] = ContextVar("fcore_numpy_dtype_promotion")
_jit_disabled: ContextVar[bool] = ContextVar("fcore_disable_jit")
_matmul_precision: ContextVar[str | None] = ContextVar("fcore_default_matmul_precision")

# The getters are read on every primitive application: one ContextVar lookup each.


def x64_enabled() -> bool:
    """Whether 64-bit dtypes are kept (off by default, as in JAX)."""
    return _x64.get(_globals.x64)


def promotion_mode() -> PromotionMode:
    """``"standard"`` or ``"strict"`` dtype promotion."""
    return _promotion.get(_globals.promotion)


def verify_enabled() -> bool:
    """Whether every jaxpr fcore produces is type-checked (MLIR's verify-each)."""
    return "verify" in _checks.get()


def jit_disabled() -> bool:
    """Whether ``jit`` runs functions op by op (``disable_jit``), as plain Python calls."""
    return _jit_disabled.get(_globals.disable_jit)


def default_matmul_precision_value() -> str | None:
    """The precision of dots and convolutions that pass ``precision=None`` (None: the backend's)."""
    return _matmul_precision.get(_globals.matmul_precision)


#: The XLA frontend attributes ``set_xla_metadata(**kw)`` puts in force (JAX's
#: ``xla_metadata_context_manager``): ``(key, value)`` pairs sorted by key, which equations
#: staged meanwhile carry in their source info.
xla_metadata_context: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("fcore_xla_metadata", default=())


def trace_context() -> tuple[bool, str | None, tuple[tuple[str, str], ...]]:
    """The settings a traced program depends on (JAX's trace context): a function jitted under
    other settings is traced again."""
    return _x64.get(_globals.x64), _matmul_precision.get(_globals.matmul_precision), xla_metadata_context.get()


#: The values ``default_matmul_precision`` takes, as JAX's (its DotAlgorithmPreset names aside).
MATMUL_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32")


def _matmul_precision_value(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value in MATMUL_PRECISIONS:
        return value
    raise ValueError(f"new enum value must be None or in {list(MATMUL_PRECISIONS)}, got {value} of type {type(value)}.")


def compilation_cache_dir() -> str | None:
    """The persistent compilation cache's directory, or None when the cache is off (no
    directory, or ``jax_enable_compilation_cache`` False)."""
    return _globals.cache_dir if _options.ENABLE_COMPILATION_CACHE.get() else None


def compilation_cache_max_size() -> int:
    """The cache's size bound in bytes (least recently used entries go first); -1: none."""
    return _globals.cache_max_size


def persistent_cache_min_compile_time_secs() -> float:
    """Programs that compile faster than this are not written to the persistent cache."""
    return _globals.cache_min_secs


def _cache_dir(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        return str(os.fspath(value))
    raise TypeError(f"compilation_cache_dir must be a path or None, got {value!r}")


_ALIASES = {
    "jax_enable_x64": "enable_x64",
    "jax_numpy_dtype_promotion": "numpy_dtype_promotion",
    "fcore_verify": "verify",
    "jax_num_cpu_devices": "num_cpu_devices",
    "jax_disable_jit": "disable_jit",
    "jax_compilation_cache_dir": "compilation_cache_dir",
    "jax_compilation_cache_max_size": "compilation_cache_max_size",
    "jax_persistent_cache_min_compile_time_secs": "persistent_cache_min_compile_time_secs",
    "jax_default_matmul_precision": "default_matmul_precision",
    "jax_debug_nans": "debug_nans",
    "jax_debug_infs": "debug_infs",
    "jax_enable_checks": "enable_checks",
}

#: Called with the new value of ``num_cpu_devices`` (installed by ``fcore.backend``, which
#: refuses a change once the client exists, as jax does).
_num_cpu_devices_hook: list["Callable[[int], None]"] = []
_num_cpu_devices_value: list[int] = [-1]


class Config:
    """``fcore.config``: ``update(name, value)`` and ``read(name)`` as in ``jax.config``.

    Names: ``enable_x64`` (alias ``jax_enable_x64``), ``numpy_dtype_promotion`` (alias
    ``jax_numpy_dtype_promotion``), ``disable_jit`` (alias ``jax_disable_jit``), ``verify``
    (alias ``fcore_verify``), ``num_cpu_devices`` (alias ``jax_num_cpu_devices``: the CPU device
    count, settable only before the first computation), ``compilation_cache_dir`` (alias
    ``jax_compilation_cache_dir``, env ``JAX_COMPILATION_CACHE_DIR``; None turns the persistent
    cache off), ``compilation_cache_max_size`` (bytes, -1 for no bound) and
    ``persistent_cache_min_compile_time_secs`` (with their ``jax_`` aliases), and
    ``default_matmul_precision`` (alias ``jax_default_matmul_precision``), ``debug_nans`` /
    ``debug_infs`` / ``enable_checks`` (their ``jax_`` aliases), and every other JAX 0.10 option
    by its JAX name (``fcore.config_options``; docs/config.md says what each does in fcore). An
    update of a JAX setting is process-wide (a ``with`` block of the matching context manager
    still overrides it); ``verify`` is set for the current context only. Unknown names raise
    JAX's ``AttributeError``; ``config.<name>`` reads a setting as ``read`` does.
    """

    def update(self, name: str, value: object) -> None:
        key = _ALIASES.get(name, name)
        if key == "enable_x64":
            _globals.x64 = bool(value)
            _refresh_live()
        elif key == "numpy_dtype_promotion":
            _globals.promotion = _promotion_mode(value)
        elif key == "disable_jit":
            _globals.disable_jit = bool(value)
            _refresh_live()
        elif key == "verify":
            _checks.set(_override_checks("verify", bool(value)))  # context-local: see the module docstring
        elif key == "enable_checks":
            _set_global_check("verify", bool(value))
        elif key == "debug_nans":
            _set_global_check("nans", bool(value))
        elif key == "debug_infs":
            _set_global_check("infs", bool(value))
        elif key == "num_cpu_devices":
            n = int(value)  # type: ignore[call-overload]  # any int-like value, as jax
            for hook in _num_cpu_devices_hook:
                hook(n)
            _num_cpu_devices_value[0] = n
        elif key == "compilation_cache_dir":
            _globals.cache_dir = _cache_dir(value)
        elif key == "compilation_cache_max_size":
            _globals.cache_max_size = int(value)  # type: ignore[call-overload]  # any int-like value
        elif key == "persistent_cache_min_compile_time_secs":
            _globals.cache_min_secs = float(value)  # type: ignore[arg-type]  # any float-like value
        elif key == "default_matmul_precision":
            _globals.matmul_precision = _matmul_precision_value(value)
            _refresh_live()
        elif name in OPTIONS:
            OPTIONS[name].update(value)
        else:
            raise AttributeError(f"Unrecognized config option: {name}")

    def read(self, name: str) -> bool | str | int | float | None:
        """The value in effect here (the context-local override, else the global value)."""
        key = _ALIASES.get(name, name)
        if key == "enable_x64":
            return x64_enabled()
        if key == "numpy_dtype_promotion":
            return promotion_mode()
        if key == "disable_jit":
            return jit_disabled()
        if key == "verify" or key == "enable_checks":
            return verify_enabled()
        if key == "debug_nans":
            return check_enabled("nans")
        if key == "debug_infs":
            return check_enabled("infs")
        if key == "num_cpu_devices":
            return _num_cpu_devices_value[0]
        if key == "compilation_cache_dir":
            return _globals.cache_dir
        if key == "compilation_cache_max_size":
            return _globals.cache_max_size
        if key == "persistent_cache_min_compile_time_secs":
            return _globals.cache_min_secs
        if key == "default_matmul_precision":
            return default_matmul_precision_value()
        option = OPTIONS.get(name)
        if option is not None:
            value = option.get()
            return value if value is None or isinstance(value, (bool, str, int, float)) else str(value)
        raise AttributeError(f"Unrecognized config option: {name}")

    def __getattr__(self, name: str) -> bool | str | int | float | None:
        """``config.jax_debug_nans`` and the like: the value in effect here, as ``read``."""
        try:
            return self.read(name)
        except AttributeError:
            raise AttributeError(f"'Config' object has no attribute '{name}'") from None

    @property
    def values(self) -> dict[str, bool | str | int | float | None]:
        """Every setting's value in effect here, by name (as ``jax.config.values``)."""
        names = [*dict.fromkeys(_ALIASES.values()), *OPTIONS]
        return {name: self.read(name) for name in names}

    @property
    def enable_x64(self) -> bool:
        return x64_enabled()

    @property
    def jax_enable_x64(self) -> bool:
        return x64_enabled()

    @property
    def numpy_dtype_promotion(self) -> PromotionMode:
        return promotion_mode()

    @property
    def jax_numpy_dtype_promotion(self) -> PromotionMode:
        return promotion_mode()


config = Config()


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Turn 64-bit mode on (or off) inside a ``with`` block, context-locally."""
    token = _x64.set(bool(new_val))
    try:
        with _checks_override("x64", bool(new_val)):
            yield
    finally:
        _x64.reset(token)


@contextlib.contextmanager
def numpy_dtype_promotion(mode: PromotionMode) -> Iterator[None]:
    """``"standard"`` or ``"strict"`` implicit dtype promotion inside a ``with`` block."""
    token = _promotion.set(_promotion_mode(mode))
    try:
        yield
    finally:
        _promotion.reset(token)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside the block, jitted functions run as plain Python, op by op (for debugging with
    ``print`` and breakpoints), as ``jax.disable_jit``; context-local."""
    token = _jit_disabled.set(bool(disable))
    try:
        with _checks_override("disable_jit", bool(disable)):
            yield
    finally:
        _jit_disabled.reset(token)


@contextlib.contextmanager
def default_matmul_precision(precision: str | None) -> Iterator[None]:
    """Inside the block, dots and convolutions with ``precision=None`` use ``precision``
    (``"default"``/``"bfloat16"``, ``"high"``/``"tensorfloat32"``, ``"highest"``/``"float32"``),
    context-locally, as ``jax.default_matmul_precision``."""
    value = _matmul_precision_value(precision)
    token = _matmul_precision.set(value)
    try:
        with _checks_override("matmul_precision", value):
            yield
    finally:
        _matmul_precision.reset(token)


@contextlib.contextmanager
def verify_each(on: bool = True) -> Iterator[None]:
    """Type-check every jaxpr produced inside the block."""
    with _checks_override("verify", bool(on)):
        yield


@contextlib.contextmanager
def enable_checks(new_val: bool = True) -> Iterator[None]:
    """``jax.enable_checks``: fcore's verify-each (every jaxpr type-checked, eager impl results
    checked against their abstract evaluation) inside the block."""
    with _checks_override("verify", bool(new_val)):
        yield


@contextlib.contextmanager
def log_compiles(new_val: bool = True) -> Iterator[None]:
    """Log each jit trace and XLA compile at WARNING level inside the block: ``jax.log_compiles``."""
    with _options.LOG_COMPILES.override(new_val):
        yield


@contextlib.contextmanager
def numpy_rank_promotion(new_val: str) -> Iterator[None]:
    """``"allow"``, ``"warn"`` or ``"raise"`` on implicit rank promotion in ``fcore.numpy``."""
    with _options.RANK_PROMOTION.override(new_val):
        yield


@contextlib.contextmanager
def default_prng_impl(new_val: str) -> Iterator[None]:
    """The PRNG of new keys inside the block (``"threefry2x32"``, the one fcore has)."""
    with _options.PRNG_IMPL.override(new_val):
        yield


@contextlib.contextmanager
def checking_leaks() -> Iterator[None]:
    """``jax.checking_leaks``: ``jax_check_tracer_leaks`` on (not supported: ``NotImplementedError``)."""
    with _options.CHECK_TRACER_LEAKS.override(True):
        yield


@contextlib.contextmanager
def default_device(new_val: object) -> Iterator[None]:
    """``jax.default_device``: where arrays are placed and jit runs when no device is given."""
    with _options.DEFAULT_DEVICE.override(new_val):
        yield


@contextlib.contextmanager
def transfer_guard_host_to_device(new_val: str) -> Iterator[None]:
    """The guard of host-to-device transfers inside the block (see ``transfer_guard``)."""
    with _options.TRANSFER_GUARD_H2D.override(new_val):
        yield


@contextlib.contextmanager
def transfer_guard_device_to_device(new_val: str) -> Iterator[None]:
    """The guard of device-to-device transfers (accepted; fcore has no implicit ones)."""
    with _options.TRANSFER_GUARD_D2D.override(new_val):
        yield


@contextlib.contextmanager
def transfer_guard_device_to_host(new_val: str) -> Iterator[None]:
    """The guard of device-to-host transfers (accepted; not enforced by fcore)."""
    with _options.TRANSFER_GUARD_D2H.override(new_val):
        yield


def _option_context(name: str) -> Callable[[object], contextlib.AbstractContextManager[None]]:
    """The context manager JAX exposes for option ``name`` (``jax.<name without jax_>``)."""
    option = OPTIONS[name]

    def context(new_val: object = True) -> contextlib.AbstractContextManager[None]:
        return option.override(new_val)

    context.__name__ = context.__qualname__ = name.removeprefix("jax_")
    context.__doc__ = f"``{name}`` inside a ``with`` block, context-locally. {option.doc}"
    return context


# JAX's context managers of the options fcore accepts only at their default value (or that
# change nothing in fcore): entering one with another value raises ``NotImplementedError``.
allow_f16_reductions = _option_context("jax_allow_f16_reductions")
array_garbage_collection_guard = _option_context("jax_array_garbage_collection_guard")
auto_pcast = _option_context("jax_auto_pcast")
check_tracer_leaks = _option_context("jax_check_tracer_leaks")
debug_key_reuse = _option_context("jax_debug_key_reuse")
enable_custom_prng = _option_context("jax_enable_custom_prng")
explain_cache_misses = _option_context("jax_explain_cache_misses")
jax2tf_associative_scan_reductions = _option_context("jax2tf_associative_scan_reductions")
legacy_prng_key = _option_context("jax_legacy_prng_key")
no_execution = _option_context("jax_no_execution")
no_tracing = _option_context("jax_no_tracing")
remove_size_one_mesh_axis_from_type = _option_context("jax_remove_size_one_mesh_axis_from_type")
softmax_custom_jvp = _option_context("jax_softmax_custom_jvp")
thread_guard = _option_context("jax_thread_guard")
threefry_partitionable = _option_context("jax_threefry_partitionable")

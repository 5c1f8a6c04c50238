"""The JAX 0.10 configuration options that ``fcore.config`` holds besides its own fast ones.

A leaf module (imports nothing of fcore). Each option is an ``Option``: its JAX name, JAX's
default, a parser that checks a new value as JAX does (JAX's ``ValueError`` messages), the
environment variable JAX reads at start-up (the name upper-cased), and, where JAX has a
context manager for it, a ``ContextVar`` for context-local overrides. The layers that give an
option its meaning read it (``Option.get``) or install a hook that runs on every new value
(``Option.hooks``: the backend checks platforms and devices there).

Options fcore cannot honour are *default-only*: their default value is accepted (a JAX
program that sets it runs unchanged), any other value raises ``NotImplementedError`` naming
the option. A few options that only tune backends fcore lacks, or diagnostics, are *inert*:
any valid value is kept and read back, and changes nothing (docs/config.md lists which).
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar

#: What an option holds (``jax_default_device`` holds a device or a platform name).
Value = object


def _bool_env(name: str, raw: str) -> bool:
    val = raw.lower()
    if val in ("y", "yes", "t", "true", "on", "1"):
        return True
    if val in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"invalid truth value {val!r} for environment {name!r}")


class Option:
    """One JAX option: global value, optional context-local override, and its checks."""

    __slots__ = ("name", "default", "parse", "from_env", "value", "local", "unsupported", "hooks", "doc")

    def __init__(
        self,
        name: str,
        default: Value,
        parse: Callable[[Value], Value],
        *,
        from_env: Callable[[str], Value] | None = None,
        local: bool = False,
        unsupported: Callable[[Value], str | None] | None = None,
        doc: str = "",
    ) -> None:
        self.name = name
        self.default = default
        self.parse = parse
        self.from_env = from_env if from_env is not None else parse
        self.value = default
        self.local: ContextVar[Value] | None = ContextVar(f"fcore_{name}") if local else None
        #: Why a value cannot be honoured (None: it can); default-only options refuse all but
        #: the default.
        self.unsupported = unsupported
        #: Called with each accepted new value (global or context-local), before it is kept.
        self.hooks: list[Callable[[Value], None]] = []
        self.doc = doc

    def get(self) -> Value:
        """The value in effect here: the context-local override, else the global value."""
        local = self.local
        return self.value if local is None else local.get(self.value)

    def accept(self, raw: Value) -> Value:
        value = self.parse(raw)
        if self.unsupported is not None:
            reason = self.unsupported(value)
            if reason is not None:
                raise NotImplementedError(f"fcore does not support {self.name}={value!r}: {reason}")
        for hook in self.hooks:
            hook(value)
        return value

    def update(self, raw: Value) -> None:
        self.value = self.accept(raw)

    @contextlib.contextmanager
    def override(self, raw: Value) -> Iterator[None]:
        """The option's context manager: ``raw`` inside the block, context-locally."""
        assert self.local is not None, self.name
        token = self.local.set(self.accept(raw))
        try:
            yield
        finally:
            self.local.reset(token)

    def read_env(self) -> None:
        """Take the value of the environment variable JAX reads for this option, if set. A
        value fcore cannot honour is a warning here (an error would make the import fail)."""
        raw = os.environ.get(self.name.upper())
        if raw is None:
            return
        try:
            self.value = self.accept(self.from_env(raw))
        except NotImplementedError as e:
            warnings.warn(f"{self.name.upper()}={raw!r} ignored: {e}", RuntimeWarning, stacklevel=2)


# ------------------------------------------------------------------------------ parsers
def parse_bool(raw: Value) -> Value:
    return bool(raw)


def parse_int(raw: Value) -> Value:
    return int(raw)  # type: ignore[call-overload]  # any int-like value, as jax


def parse_float(raw: Value) -> Value:
    return float(raw)  # type: ignore[arg-type]  # any float-like value, as jax


def parse_str(raw: Value) -> Value:
    if not isinstance(raw, str):
        raise TypeError(f"new string config value must be of type str, got {raw} of type {type(raw)}.")
    return raw


def parse_optional_str(raw: Value) -> Value:
    return None if raw is None else parse_str(raw)


def parse_optional_int(raw: Value) -> Value:
    return None if raw is None else parse_int(raw)


def enum(values: Sequence[str], optional: bool = False) -> Callable[[Value], Value]:
    """A parser of one of ``values`` (or None), with JAX's ``enum_state`` message."""

    def parse(raw: Value) -> Value:
        if (optional and raw is None) or (isinstance(raw, str) and raw in values):
            return raw
        none = "None or " if optional else ""
        raise ValueError(f"new enum value must be {none}in {list(values)}, got {raw} of type {type(raw)}.")

    return parse


def _env_bool(name: str) -> Callable[[str], Value]:
    return lambda raw: _bool_env(name, raw)


def _env_optional(parse: Callable[[Value], Value]) -> Callable[[str], Value]:
    return lambda raw: parse(raw or None)


def default_only(default: Value, reason: str) -> Callable[[Value], str | None]:
    """``unsupported`` for an option fcore cannot honour: anything but ``default`` is refused."""
    return lambda value: None if value == default else reason


# ------------------------------------------------------------------------------- registry
OPTIONS: dict[str, Option] = {}


def define(
    name: str,
    default: Value,
    parse: Callable[[Value], Value],
    *,
    local: bool = True,
    unsupported: Callable[[Value], str | None] | None = None,
    doc: str = "",
) -> Option:
    """Register ``name`` (read from its environment variable, as JAX)."""
    from_env: Callable[[str], Value] | None = None
    if parse is parse_bool:
        from_env = _env_bool(name.upper())
    elif parse in (parse_int, parse_float):
        from_env = parse
    elif default is None:
        from_env = _env_optional(parse)
    option = Option(name, default, parse, from_env=from_env, local=local, unsupported=unsupported, doc=doc)
    OPTIONS[name] = option
    return option


# Honoured options (their meaning lives in the layers named).
PLATFORM_NAME = define(
    "jax_platform_name", "", parse_str, local=False,
    doc="The platform of the default backend ('cpu', 'cuda'/'gpu'): fcore.backend creates that client.",
)
PLATFORMS = define(
    "jax_platforms", None, parse_optional_str,
    doc="Comma-separated platforms in priority order; fcore's one client is the first one's.",
)
def _device_or_platform(raw: Value) -> Value:
    if raw is None or isinstance(raw, str) or (hasattr(raw, "platform") and hasattr(raw, "id")):
        return raw
    raise ValueError(
        "jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) or a platform "
        f"name string like 'cpu' or 'gpu', got: {raw!r}"
    )


DEFAULT_DEVICE = define(
    "jax_default_device", None, _device_or_platform,
    doc="Where arrays are placed and jit runs when no device is given: fcore runs on its first device "
        "only, so only that device (or its platform name) is accepted.",
)
LOG_COMPILES = define(
    "jax_log_compiles", False, parse_bool,
    doc="Log (WARNING, Python logging) each jit trace and XLA compile, as JAX.",
)


EXPLAIN_CACHE_MISSES = define(
    "jax_explain_cache_misses", False, parse_bool,
    doc="Log (WARNING) why jit traces a function again, against its closest earlier cache key, as JAX.",
)


def compile_log_level() -> int:
    """The level of jit's trace and compile log lines: WARNING under ``jax_log_compiles``, else
    DEBUG (JAX's loggers do the same)."""
    return logging.WARNING if LOG_COMPILES.get() else logging.DEBUG


RANK_PROMOTION = define(
    "jax_numpy_rank_promotion", "allow", enum(("allow", "warn", "raise")),
    doc="fcore.numpy's implicit rank promotion in broadcasting: allowed, warned about, or an error.",
)
TRACEBACK_FILTERING = define(
    "jax_traceback_filtering", "auto", enum(("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")),
    doc="Accepted with any of JAX's values; fcore never filters tracebacks (every value behaves as 'off').",
)
PRNG_IMPL = define(
    "jax_default_prng_impl", "threefry2x32",
    enum(("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")),
    unsupported=default_only("threefry2x32", "fcore.random implements threefry2x32 only"),
    doc="The PRNG of new keys: threefry2x32 (fcore.random has no other implementation).",
)
THREEFRY_PARTITIONABLE = define(
    "jax_threefry_partitionable", True, parse_bool,
    unsupported=default_only(
        True, "fcore.random derives bits, splits and fold_ins only in JAX's partitionable scheme (JAX 0.10's "
        "default); JAX's legacy scheme gives different numbers for the same key"
    ),
    doc="True (JAX 0.10's default) only: fcore's bits match JAX's partitionable scheme.",
)
CHECK_TRACER_LEAKS = define(
    "jax_check_tracer_leaks", False, parse_bool,
    unsupported=default_only(
        False, "fcore does not track leaked tracers at the end of a transformation; a leaked tracer raises "
        "UnexpectedTracerError when it is used"
    ),
    doc="False only; a leaked tracer raises UnexpectedTracerError where it is used.",
)
PERSISTENT_CACHE_MIN_ENTRY_SIZE = define(
    "jax_persistent_cache_min_entry_size_bytes", 0, parse_int,
    unsupported=lambda v: None if isinstance(v, int) and v <= 0 else "fcore's persistent cache keeps entries of any size",
    doc="0 or -1 (JAX's 'no size restriction'): fcore's persistent cache keeps entries of any size.",
)
ENABLE_COMPILATION_CACHE = define(
    "jax_enable_compilation_cache", True, parse_bool,
    doc="False turns the persistent compilation cache off even where jax_compilation_cache_dir is set.",
)
_GUARD = enum(("allow", "log", "disallow", "log_explicit", "disallow_explicit"), optional=True)
TRANSFER_GUARD = define(
    "jax_transfer_guard", None, _GUARD,
    doc="Sets the three transfer guards below at once (their own value, when set, wins).",
)
TRANSFER_GUARD_H2D = define(
    "jax_transfer_guard_host_to_device", None, _GUARD,
    doc="NumPy arrays and Python scalars passed to a jitted function (implicit), or to device_put (explicit).",
)
TRANSFER_GUARD_D2D = define(
    "jax_transfer_guard_device_to_device", None, _GUARD,
    doc="Accepted; fcore moves arrays between devices only explicitly (device_put), which every value allows.",
)
TRANSFER_GUARD_D2H = define(
    "jax_transfer_guard_device_to_host", None, _GUARD,
    doc="Accepted; fcore's device-to-host copies are not guarded.",
)


def transfer_guard_level(option: Option) -> str:
    """The guard in effect for one direction: its own value, else ``jax_transfer_guard``'s."""
    level = option.get()
    if level is None:
        level = TRANSFER_GUARD.get()
    return "allow" if level is None else str(level)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """All three transfer guards inside the block: ``jax.transfer_guard``."""
    with TRANSFER_GUARD.override(new_val):
        yield


# Inert: tuning of backends fcore lacks, and diagnostics; any valid value is kept.
_INERT: tuple[tuple[str, Value, Callable[[Value], Value]], ...] = (
    ("jax_pprint_use_color", True, parse_bool),
    ("jax_logging_level", "NOTSET", parse_str),
    ("jax_debug_log_modules", "", parse_str),
    ("jax_compiler_detailed_logging_min_ops", 10, parse_int),
    ("jax_include_debug_info_in_dumps", True, parse_bool),
    ("jax_include_full_tracebacks_in_locations", True, parse_bool),
    ("jax_traceback_in_locations_limit", 100, parse_int),
    ("jax_tracer_error_num_traceback_frames", 5, parse_int),
    ("jax_hlo_source_file_canonicalization_regex", None, parse_optional_str),
    ("jax_captured_constants_report_frames", 0, parse_int),
    ("jax_captured_constants_warn_bytes", 2000000000, parse_int),
    ("jax_cpu_enable_async_dispatch", True, parse_bool),
    ("jax_check_proxy_envs", True, parse_bool),
    ("jax_exec_time_optimization_effort", 0.0, parse_float),
    ("jax_memory_fitting_effort", 0.0, parse_float),
    ("jax_compiler_enable_remat_pass", True, parse_bool),
    ("jax_raise_persistent_cache_errors", False, parse_bool),
    ("jax_compilation_cache_include_metadata_in_key", False, parse_bool),
    ("jax_compilation_cache_check_contents", False, parse_bool),
    ("jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir", parse_str),
    ("jax_bcoo_cusparse_lowering", False, parse_bool),
    ("jax_ragged_dot_use_gpu_pallas_triton_lowering", False, parse_bool),
    ("jax_threefry_gpu_kernel_lowering", False, parse_bool),
    ("jax_use_magma", "auto", enum(("off", "on", "auto"))),
    ("jax_pallas_use_mosaic_gpu", True, parse_bool),
    ("jax_pallas_verbose_errors", False, parse_bool),
    ("jax_pallas_enable_debug_checks", False, parse_bool),
    ("jax_cuda_visible_devices", "all", parse_str),
    ("jax_rocm_visible_devices", "all", parse_str),
    ("jax_oneapi_visible_devices", "all", parse_str),
    ("jax_use_shardy_partitioner", True, parse_bool),
    ("jax_enable_preemption_service", True, parse_bool),
    ("jax_cpu_get_global_topology_timeout_minutes", 5, parse_int),
    ("jax_cpu_get_local_topology_timeout_minutes", 2, parse_int),
    ("jax_share_binary_between_hosts_timeout_ms", 1200000, parse_int),
    ("jax_pgle_profiling_runs", 3, parse_int),
    ("jax_pgle_aggregation_percentile", 90, parse_int),
    # JAX's rewrite of remat (same policies, residuals and values); fcore has one remat.
    ("jax_remat3", False, parse_bool),
)
INERT = frozenset(name for name, _, _ in _INERT)
for _name, _default, _parse in _INERT:
    define(_name, _default, _parse, doc="Accepted, no effect in fcore (a backend or diagnostic it lacks).")

# Default-only: they change what a program computes or how it is staged, in ways fcore does not.
_DEFAULT_ONLY: tuple[tuple[str, Value, Callable[[Value], Value]], ...] = (
    ("check_vma", False, parse_bool),
    ("eager_constant_folding", False, parse_bool),
    ("jax2tf_associative_scan_reductions", False, parse_bool),
    ("jax2tf_default_native_serialization", True, parse_bool),
    ("jax_allow_f16_reductions", True, parse_bool),
    ("jax_array_garbage_collection_guard", None, enum(("allow", "log", "fatal"), optional=True)),
    ("jax_auto_pcast", True, parse_bool),
    ("jax_backend_target", "", parse_str),
    ("jax_check_static_indices", False, parse_bool),
    ("jax_compilation_cache_expect_pgle", False, parse_bool),
    ("jax_cpu_collectives_implementation", "gloo", enum(("gloo", "mpi", "megascale"))),
    ("jax_cross_host_transfer_socket_address", "", parse_str),
    ("jax_cross_host_transfer_timeout_seconds", None, parse_optional_int),
    ("jax_cross_host_transfer_transfer_size", None, parse_optional_int),
    ("jax_cross_host_transport_addresses", "", parse_str),
    ("jax_custom_vjp3", False, parse_bool),
    ("jax_debug_key_reuse", False, parse_bool),
    ("jax_debug_leaked_clients_on_clear_backends", False, parse_bool),
    ("jax_disable_bwd_checks", False, parse_bool),
    ("jax_disable_most_optimizations", False, parse_bool),
    ("jax_disable_vmap_shmap_error", False, parse_bool),
    ("jax_disallow_mesh_context_manager", False, parse_bool),
    ("jax_distributed_debug", False, parse_bool),
    ("jax_dump_ir_modes", "stablehlo", parse_str),
    ("jax_dump_ir_to", "", parse_str),
    ("jax_embedded_constants_max_bytes", 32, parse_int),
    ("jax_enable_custom_prng", False, parse_bool),
    ("jax_enable_pgle", False, parse_bool),
    ("jax_enable_recoverability", False, parse_bool),
    ("jax_error_checking_behavior_divide", "ignore", enum(("ignore", "raise"))),
    ("jax_error_checking_behavior_nan", "ignore", enum(("ignore", "raise"))),
    ("jax_error_checking_behavior_oob", "ignore", enum(("ignore", "raise"))),
    ("jax_experimental_unsafe_xla_runtime_errors", False, parse_bool),
    ("jax_explicit_x64_dtypes", "warn", enum(("allow", "warn", "error"))),
    ("jax_export_calling_convention_version", 10, parse_int),
    ("jax_export_ignore_forward_compatibility", False, parse_bool),
    ("jax_force_dcn_cross_host_transfers", False, parse_bool),
    ("jax_high_dynamic_range_gumbel", False, parse_bool),
    ("jax_legacy_prng_key", "allow", enum(("allow", "warn", "error"))),
    ("jax_log_checkpoint_residuals", False, parse_bool),
    ("jax_memory_fitting_level", "O2", parse_str),
    ("jax_mock_gpu_topology", "", parse_str),
    ("jax_mosaic_allow_hlo", False, parse_bool),
    ("jax_mutable_array_checks", True, parse_bool),
    ("jax_no_execution", False, parse_bool),
    ("jax_no_tracing", False, parse_bool),
    ("jax_optimization_level", "UNKNOWN", parse_str),
    ("jax_pallas_poison_buffers", False, parse_bool),
    ("jax_pjrt_client_create_options", None, parse_optional_str),
    ("jax_random_seed_offset", 0, parse_int),
    ("jax_ragged_dot_use_ragged_dot_instruction", True, parse_bool),
    ("jax_refs_to_pins", False, parse_bool),
    ("jax_remove_custom_partitioning_ptr_from_cache_key", False, parse_bool),
    ("jax_remove_size_one_mesh_axis_from_type", False, parse_bool),
    ("jax_scan3", False, parse_bool),
    ("jax_send_traceback_to_runtime", "off", enum(("off", "on", "full"))),
    ("jax_serialization_version", 0, parse_int),
    ("jax_share_binary_between_hosts", False, parse_bool),
    ("jax_softmax_custom_jvp", False, parse_bool),
    ("jax_sort_devices_by_process_index", True, parse_bool),
    ("jax_source_url_schema", None, parse_optional_str),
    ("jax_thread_guard", False, parse_bool),
    ("jax_use_direct_linearize", True, parse_bool),
    ("jax_use_emit_pipeline_primitive", False, parse_bool),
    ("jax_use_simplified_jaxpr_constants", False, parse_bool),
    ("jax_xla_backend", "", parse_str),
    ("jax_xla_profile_version", 0, parse_int),
    ("mock_num_gpu_processes", 0, parse_int),
)
for _name, _default, _parse in _DEFAULT_ONLY:
    define(
        _name, _default, _parse, unsupported=default_only(_default, "fcore cannot honour this option"),
        doc="Accepted at its default value only.",
    )

for _option in OPTIONS.values():
    _option.read_env()

"""JAX 0.10's configuration options in ``fcore.config``: every one is accepted, the ones fcore
honours do what JAX's do (differential against jax), and the rest refuse all but their default."""

from __future__ import annotations

import enum
import logging
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.config import compilation_cache_dir, verify_enabled
from fcore.config_options import OPTIONS, INERT

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    yield
    for name in ("jax_numpy_rank_promotion", "jax_log_compiles", "jax_transfer_guard", "jax_traceback_filtering"):
        fcore.config.update(name, OPTIONS[name].default)
        jax.config.update(name, OPTIONS[name].default)  # type: ignore[no-untyped-call]
    fcore.config.update("jax_enable_checks", False)


def _jax_value(name: str) -> object:
    value = jax.config.values[name]
    return value.value if isinstance(value, enum.Enum) else value


def test_every_jax_option_is_read_back_at_its_default() -> None:
    short = {"jax_enable_x64": "enable_x64", "jax_disable_jit": "disable_jit", "jax_num_cpu_devices": "num_cpu_devices",
             "jax_numpy_dtype_promotion": "numpy_dtype_promotion"}
    missing = []
    for name in jax.config.values:
        try:
            value = fcore.config.read(name)
        except AttributeError:
            missing.append(name)
            continue
        expected = _jax_value(name)
        if name == "jax_explicit_x64_dtypes":
            expected = "warn"  # an IntEnum in jax: its name
        if name not in short and name != "jax_enable_checks":  # verify-each is on in the tests (conftest)
            assert value == expected, name
        # Setting the default again is always accepted (a JAX program that does so runs).
        if name not in short:
            fcore.config.update(name, value)
    assert missing == []
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_option"):
        fcore.config.update("jax_no_such_option", 1)
    with pytest.raises(AttributeError, match="'Config' object has no attribute 'jax_no_such_option'"):
        fcore.config.jax_no_such_option  # noqa: B018


def test_options_fcore_cannot_honour_refuse_other_values() -> None:
    with pytest.raises(NotImplementedError, match="jax_no_tracing=True"):
        fcore.config.update("jax_no_tracing", True)
    with pytest.raises(NotImplementedError, match="jax_threefry_partitionable=False"):
        fcore.config.update("jax_threefry_partitionable", False)
    with pytest.raises(NotImplementedError, match="jax_check_tracer_leaks=True"):
        with fcore.checking_leaks():
            pass
    with pytest.raises(NotImplementedError, match="'rbg': fcore.random implements threefry2x32 only"):
        fcore.config.update("jax_default_prng_impl", "rbg")
    with fcore.default_prng_impl("threefry2x32"), fcore.threefry_partitionable(True):
        assert fcore.config.jax_default_prng_impl == "threefry2x32"
    # Invalid values are JAX's ValueError, with JAX's message.
    for name, bad in (("jax_default_prng_impl", "x"), ("jax_numpy_rank_promotion", "x"), ("jax_transfer_guard", "x"),
                      ("jax_traceback_filtering", "x")):
        with pytest.raises(ValueError) as expected:
            jax.config.update(name, bad)  # type: ignore[no-untyped-call]
        with pytest.raises(ValueError) as got:
            fcore.config.update(name, bad)
        assert str(got.value) == str(expected.value)
    # Inert options keep any valid value.
    assert "jax_pprint_use_color" in INERT
    fcore.config.update("jax_remat3", True)  # as JAX's own remat tutorial does first; same checkpoint
    assert fcore.config.jax_remat3 is True
    fcore.config.update("jax_remat3", False)
    fcore.config.update("jax_traceback_filtering", "off")
    assert fcore.config.jax_traceback_filtering == "off"


def test_enable_checks_is_verify_each() -> None:
    with fcore.enable_checks(False):
        assert not verify_enabled()
        fcore.config.update("jax_enable_checks", True)  # process-wide, yet the block's own setting wins
        assert not verify_enabled()
    assert verify_enabled() and fcore.config.jax_enable_checks is True


def test_enable_compilation_cache_false_turns_the_cache_off(tmp_path: Path) -> None:
    fcore.config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        assert compilation_cache_dir() == str(tmp_path)
        fcore.config.update("jax_enable_compilation_cache", False)
        assert compilation_cache_dir() is None and fcore.config.jax_compilation_cache_dir == str(tmp_path)
    finally:
        fcore.config.update("jax_enable_compilation_cache", True)
        fcore.config.update("jax_compilation_cache_dir", None)


def test_default_device_accepts_fcores_device() -> None:
    first = fcore.devices()[0]
    with fcore.default_device(first), fcore.default_device(first.platform):
        assert fcore.device_put(fnp.ones(2)).device == first
    with pytest.raises(ValueError, match="must be passed either a Device object"):
        fcore.config.update("jax_default_device", 3)
    assert fcore.devices(first.platform) == fcore.local_devices(backend=first.platform) == fcore.devices()
    with pytest.raises(RuntimeError, match=r"Unknown backend foo. Available backends are \["):
        fcore.device_count("foo")


def _both(f: Callable[[object, object], object]) -> tuple[list[str], list[str]]:
    """``f(lib, lib.numpy)``'s outcome and warnings, in jax and in fcore."""
    out = []
    for lib, np_ in ((jax, jnp), (fcore, fnp)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                f(lib, np_)
                outcome = "ok"
            except (ValueError, RuntimeError) as e:
                outcome = f"{type(e).__name__}: {e}"
        out.append([outcome, *(str(w.message) for w in caught)])
    return out[0], out[1]


def test_rank_promotion_as_jax() -> None:
    for mode in ("warn", "raise"):
        def program(lib: object, np_: object, mode: str = mode) -> object:
            with getattr(lib, "numpy_rank_promotion")(mode):
                x = getattr(np_, "ones")((2, 3))
                assert (getattr(np_, "ones")(3) + 1.0).shape == (3,)  # a scalar is no rank promotion
                return getattr(np_, "add")(getattr(np_, "ones")(3), x)

        expected, got = _both(program)
        assert got == expected and "rank_promotion" in got[-1], (mode, got)


def test_transfer_guard_and_log_compiles(caplog: pytest.LogCaptureFixture) -> None:
    x = np.ones(3, np.float32)

    def program(lib: object, np_: object) -> object:
        f = getattr(lib, "jit")(lambda a: a * 2)
        f(x)  # compiled outside the guard
        with getattr(lib, "transfer_guard")("disallow"):
            getattr(lib, "device_put")(x)  # explicit: allowed
            return f(x)

    expected, got = _both(program)
    assert got == expected and got[0].startswith("JaxRuntimeError: INVALID_ARGUMENT: Disallowed host-to-device")
    with caplog.at_level(logging.DEBUG), fcore.transfer_guard_host_to_device("log"), fcore.log_compiles():
        fcore.jit(lambda a: a - 2)(x)
    text = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [t.split(" in ")[0] for t in text if t.startswith("Finished")] == [
        "Finished tracing <lambda> for jit", "Finished jaxpr to MLIR module conversion jit(<lambda>)",
        "Finished XLA compilation of jit(<lambda>)",
    ]
    assert ("Compiling jit(<lambda>) with global shapes and types (ShapedArray(float32[3])). "
            "Argument mapping: (UnspecifiedValue).") in text
    assert any(t.startswith("host-to-device transfer: aval=ShapedArray(float32[3])") for t in text)


def test_environment_and_platforms_at_start_up() -> None:
    """A fresh process: JAX's environment variables are read, and the platform is chosen at the
    first computation (an unavailable one raises JAX's error)."""
    script = textwrap.dedent("""
        import fcore, fcore.numpy as fnp
        assert fcore.config.jax_debug_nans and fcore.config.jax_numpy_rank_promotion == "raise"
        assert fcore.config.read("jax_log_compiles") is True and fcore.config.jax_platforms == "tpu"
        assert fcore.config.jax_compilation_cache_max_size == 1000 and fcore.config.jax_enable_checks
        assert fcore.config.jax_persistent_cache_min_compile_time_secs == 0.5
        try:
            fcore.devices()
        except RuntimeError as e:
            print(e)
        fcore.config.update("jax_platforms", "")
        fcore.config.update("jax_platform_name", "cpu")
        print(fcore.jit(fnp.sin)(1.0).devices().pop().platform)
        try:
            fcore.config.update("jax_platforms", "cuda")
        except RuntimeError as e:
            print("after", e)
    """)
    env = {**os.environ, "JAX_DEBUG_NANS": "true", "JAX_NUMPY_RANK_PROMOTION": "raise", "JAX_LOG_COMPILES": "1",
           "JAX_PLATFORMS": "tpu", "JAX_COMPILATION_CACHE_MAX_SIZE": "1000", "JAX_ENABLE_CHECKS": "on",
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5", "PYTHONPATH": str(ROOT / "src")}
    env.pop("FCORE_PLATFORM", None)
    env.pop("FCORE_VERIFY", None)  # verify-each from JAX_ENABLE_CHECKS alone
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("Unable to initialize backend 'tpu': fcore has no tpu backend "
                        "(set JAX_PLATFORMS='' to automatically choose an available backend)")
    assert lines[1] == "cpu"
    assert lines[2].startswith("after fcore's backend is already 'cpu'")

"""The persistent compilation cache: a second process loads what the first compiled, a bad
entry recompiles, concurrent writers leave whole entries, the size bound evicts LRU first."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.backend import compilation_cache as cc
from fcore.backend import runtime

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

#: A program with enough ops that its compile is worth caching; prints its first value.
PROGRAM = """
import sys
import fcore
import fcore.numpy as fnp
fcore.config.update("jax_persistent_cache_min_compile_time_secs", 0)

def f(x):
    for i in range(40):
        x = fnp.sin(x) * 1.0001 + i
    return x
"""


def _run(code: str, cache_dir: Path) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
    env["FCORE_PLATFORM"] = "cpu"
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM + textwrap.dedent(code)],
        capture_output=True, text=True, timeout=240, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def _expected() -> float:
    x = np.ones(3, np.float32)
    for i in range(40):
        x = (np.sin(x) * np.float32(1.0001) + np.float32(i)).astype(np.float32)
    return float(x[0])


def _entries(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.suffix == ".xla" and not p.name.startswith(".tmp-"))


@pytest.fixture
def cache_dir(tmp_path: Path) -> Iterator[Path]:
    """The cache on in this process (every compile stored), off and cleared afterwards."""
    d = tmp_path / "cache"
    fcore.config.update("compilation_cache_dir", d)
    fcore.config.update("persistent_cache_min_compile_time_secs", 0)
    fcore.clear_caches()
    try:
        yield d
    finally:
        fcore.config.update("compilation_cache_dir", None)
        fcore.config.update("persistent_cache_min_compile_time_secs", 1.0)
        fcore.clear_caches()


def test_second_process_loads_instead_of_compiling(tmp_path: Path) -> None:
    first = _run("print(float(fcore.jit(f)(fnp.ones(3))[0]))", tmp_path)
    assert len(_entries(tmp_path)) == 1
    # The second process may not compile at all: XLA's compiler is replaced by a failure.
    second = _run(
        """
        from fcore.backend import runtime
        def no_compile(*args: object) -> None:
            raise AssertionError("compiled although the cache holds the program")
        runtime._compile_exe = no_compile
        print(float(fcore.jit(f)(fnp.ones(3))[0]))
        """,
        tmp_path,
    )
    assert float(first) == float(second) == pytest.approx(_expected(), rel=1e-5)


def test_config_names_and_env_var(tmp_path: Path) -> None:
    out = _run('print(fcore.config.read("compilation_cache_dir"))', tmp_path)
    assert out.strip() == str(tmp_path)
    try:
        fcore.config.update("jax_compilation_cache_dir", str(tmp_path))
        assert fcore.config.read("compilation_cache_dir") == str(tmp_path)
        fcore.config.update("jax_compilation_cache_max_size", 1000)
        assert fcore.config.read("compilation_cache_max_size") == 1000
    finally:
        fcore.config.update("compilation_cache_dir", None)
        fcore.config.update("compilation_cache_max_size", -1)
    assert fcore.config.read("jax_compilation_cache_dir") is None
    with pytest.raises(TypeError, match="compilation_cache_dir"):
        fcore.config.update("compilation_cache_dir", 3)
    # JAX's older entry point, and its "no size restriction" (-1): fcore keeps entries of any size
    from fcore.experimental.compilation_cache import compilation_cache as cc

    cc.set_cache_dir(str(tmp_path))
    assert fcore.config.read("compilation_cache_dir") == str(tmp_path)
    cc.reset_cache()
    assert fcore.config.read("compilation_cache_dir") is None
    fcore.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    fcore.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    with pytest.raises(NotImplementedError, match="any size"):
        fcore.config.update("jax_persistent_cache_min_entry_size_bytes", 100)


def _f(x: fcore.Array) -> fcore.Array:
    for i in range(40):
        x = fnp.sin(x) * 1.0001 + i
    return x


@pytest.mark.parametrize("damage", ["truncate", "flip_byte", "garbage_with_valid_checksum", "empty"])
def test_bad_entry_recompiles(cache_dir: Path, damage: str) -> None:
    np.testing.assert_allclose(np.asarray(fcore.jit(_f)(fnp.ones(3))[0]), _expected(), rtol=1e-5)
    (entry,) = _entries(cache_dir)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip_byte":
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "garbage_with_valid_checksum":
        payload = b"\x08\x01not an executable" * 50
        entry.write_bytes(cc.MAGIC + hashlib.sha256(payload).digest() + payload)
    else:
        entry.write_bytes(b"")
    fcore.clear_caches()
    np.testing.assert_allclose(np.asarray(fcore.jit(_f)(fnp.ones(3))[0]), _expected(), rtol=1e-5)
    assert cc.get(str(cache_dir), entry.stem) is not None  # rewritten whole


def test_fast_compiles_are_not_stored_by_default(cache_dir: Path) -> None:
    fcore.config.update("persistent_cache_min_compile_time_secs", 1e9)
    fcore.jit(lambda x: x + 1)(fnp.ones(2)).block_until_ready()
    assert not cache_dir.exists() or _entries(cache_dir) == []


def test_concurrent_writers_leave_whole_entries(tmp_path: Path) -> None:
    code = "print(float(fcore.jit(f)(fnp.ones(3))[0]))"
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_COMPILATION_CACHE_DIR=str(tmp_path), FCORE_PLATFORM="cpu")
    procs = [
        subprocess.Popen([sys.executable, "-c", PROGRAM + code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    assert [float(out) for out, _ in outs] == [pytest.approx(_expected(), rel=1e-5)] * 3
    (entry,) = _entries(tmp_path)
    assert cc.get(str(tmp_path), entry.stem) is not None


def test_size_bound_evicts_least_recently_used(tmp_path: Path) -> None:
    d = str(tmp_path)
    entry_size = len(cc.MAGIC) + 32 + 100
    for i, key in enumerate("abc"):
        cc.put(d, key, bytes([i]) * 100)
        os.utime(tmp_path / f"{key}.xla", (1000 + i, 1000 + i))
    assert cc.get(d, "a") == bytes([0]) * 100  # "a" is now the most recently used
    cc.put(d, "d", b"\x03" * 100, max_size=3 * entry_size)
    assert [p.stem for p in _entries(tmp_path)] == ["a", "c", "d"]
    cc.put(d, "huge", b"\x04" * 1000, max_size=3 * entry_size)  # larger than the bound: not stored
    assert cc.get(d, "huge") is None and len(_entries(tmp_path)) == 3


def test_unwritable_directory_still_compiles(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    fcore.config.update("compilation_cache_dir", blocker / "cache")
    fcore.config.update("persistent_cache_min_compile_time_secs", 0)
    try:
        fcore.clear_caches()
        np.testing.assert_allclose(np.asarray(fcore.jit(_f)(fnp.ones(3))[0]), _expected(), rtol=1e-5)
    finally:
        fcore.config.update("compilation_cache_dir", None)
        fcore.config.update("persistent_cache_min_compile_time_secs", 1.0)
        fcore.clear_caches()


def test_key_depends_on_every_part() -> None:
    keys = {
        cc.cache_key("module", "0.10.2", "cpu", "cpu", b"opts"),
        cc.cache_key("module2", "0.10.2", "cpu", "cpu", b"opts"),
        cc.cache_key("module", "0.10.3", "cpu", "cpu", b"opts"),
        cc.cache_key("module", "0.10.2", "cuda", "cpu", b"opts"),
        cc.cache_key("module", "0.10.2", "cpu", "H100", b"opts"),
        cc.cache_key("module", "0.10.2", "cpu", "cpu", b"opts2"),
    }
    assert len(keys) == 6
    assert runtime.jaxlib_version()  # part of every key

"""The persistent compilation cache: serialized XLA executables on disk, so that a second
process's first call of a program loads it instead of compiling it again.

On when ``config.update("compilation_cache_dir", path)`` (or ``JAX_COMPILATION_CACHE_DIR``)
names a directory. An entry's key hashes everything the executable depends on: the
program text, jaxlib's version, the platform and device kind, the serialized compile options
and ``XLA_FLAGS``. An entry is ``MAGIC + sha256(payload) + payload``: a truncated or corrupt
file fails the checksum and is dropped (the program recompiles) before XLA ever sees it.
Writes go to a temporary file renamed into place, so two processes writing the same entry
at once each leave a whole file. With ``compilation_cache_max_size`` set, the least recently
used entries (by modification time, refreshed on each hit) are evicted to stay under it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

MAGIC = b"fcore-xla-cache-v1\n"
_DIGEST = 32
_SUFFIX = ".xla"


# An op's location, `` loc("names/prim"("file.py":3:12))`` or `` loc("main.eqn0.sin")``: strings
# may hold parentheses, and a name location nests one more level.
_STRING = r'"(?:[^"\\]|\\.)*"'
_LOCATION = re.compile(rf' loc\((?:[^()"]|{_STRING}|\((?:[^()"]|{_STRING})*\))*\)')


def cache_key(program: str | bytes, jaxlib_version: str, platform: str, device_kind: str, options: bytes) -> str:
    """The hex digest naming one entry. The ops' locations (the user's lines) are left out, as
    JAX strips debug info from its key: the same program traced from other lines is a hit."""
    h = hashlib.sha256()
    for part in (
        _LOCATION.sub("", program).encode() if isinstance(program, str) else program,
        jaxlib_version.encode(),
        platform.encode(),
        device_kind.encode(),
        options,
        os.environ.get("XLA_FLAGS", "").encode(),
    ):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _entry(directory: str, key: str) -> Path:
    return Path(directory) / f"{key}{_SUFFIX}"


def get(directory: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None (missing, truncated or corrupt: a bad
    entry is removed so the next write replaces it)."""
    path = _entry(directory, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + _DIGEST
    payload = data[head:]
    if data[: len(MAGIC)] != MAGIC or hashlib.sha256(payload).digest() != data[len(MAGIC) : head]:
        _unlink(path)
        return None
    try:
        os.utime(path)  # a hit makes it the most recently used
    except OSError:
        pass
    return payload


def put(directory: str, key: str, payload: bytes, max_size: int = -1) -> None:
    """Store ``payload`` atomically; errors (read-only or full disk) leave the cache as it was."""
    data = MAGIC + hashlib.sha256(payload).digest() + payload
    if 0 <= max_size < len(data):
        return
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=_SUFFIX)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, _entry(directory, key))
    except OSError:
        _unlink(Path(tmp))
        return
    if max_size >= 0:
        evict(directory, max_size)


def evict(directory: str, max_size: int) -> None:
    """Remove least recently used entries until the total size is at most ``max_size``."""
    entries: list[tuple[float, int, Path]] = []
    for path in Path(directory).glob(f"*{_SUFFIX}"):
        if path.name.startswith(".tmp-"):
            continue
        try:
            st = path.stat()
        except OSError:
            continue  # another process evicted it
        entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= max_size:
            break
        _unlink(path)
        total -= size


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass

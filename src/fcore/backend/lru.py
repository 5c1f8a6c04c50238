"""A bounded, thread-safe least-recently-used mapping, for the in-memory executable caches:
a loop jitting fresh functions keeps at most ``maxsize`` executables alive, not all of them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: The default bound of fcore's executable caches (jax's C++ jit cache keeps 4096 too).
DEFAULT_MAXSIZE = 4096


class LruCache(Generic[K, V]):
    """``get`` marks an entry used; ``setdefault`` inserts and evicts the least recently used
    entries beyond ``maxsize`` (a public attribute: lowering it takes effect on the next insert)."""

    __slots__ = ("_data", "_lock", "maxsize")

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.maxsize = maxsize

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            try:
                self._data.move_to_end(key)
            except KeyError:
                pass  # evicted by another thread meanwhile; the caller still has the value
        return value

    def setdefault(self, key: K, value: V) -> V:
        """The value already cached under ``key`` (another thread won the race), else ``value``."""
        with self._lock:
            kept = self._data.setdefault(key, value)
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
            return kept

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

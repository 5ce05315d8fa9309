"""A bounded mapping that forgets its least recently used entries.

Used for the per-function cache of specialized programs (bounded by count) and the
process's cache of native code (bounded by bytes): a long-running process that keeps
meeting new signatures must not keep every program it ever compiled.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class LRU(OrderedDict):
    """An ``OrderedDict`` with at most ``maxsize`` entries (``None``: unbounded) and at
    most ``maxbytes`` total ``weigh(value)``; reading an entry with ``get`` or ``[]``
    makes it the most recent.  ``evicted`` counts what was dropped.

    Safe to share between threads (the specialization cache of a function called from
    several, the process's kernel caches): each operation reads and reorders or evicts
    under one lock, where the unlocked steps raced (a key evicted between the lookup
    and ``move_to_end``; "mutated during iteration" while evicting; ``nbytes`` drifting).
    """

    def __init__(self, maxsize: int | None = None, maxbytes: int | None = None,
                 weigh: Callable[[Any], int] = len):
        super().__init__()
        self._lock = threading.RLock()
        self.maxsize = maxsize
        self.maxbytes = maxbytes
        self.weigh = weigh
        self.nbytes = 0
        self.evicted = 0

    def __getitem__(self, key: Any) -> Any:
        with self._lock:
            value = super().__getitem__(key)
            self.move_to_end(key)
            return value

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: Any, value: Any) -> None:
        with self._lock:
            self._set(key, value)

    def _set(self, key: Any, value: Any) -> None:
        if key in self:
            self.__delitem__(key)
        super().__setitem__(key, value)
        if self.maxbytes is not None:
            self.nbytes += self.weigh(value)
        while len(self) > 1 and (
                (self.maxsize is not None and len(self) > self.maxsize) or
                (self.maxbytes is not None and self.nbytes > self.maxbytes)):
            self.popitem(last=False)
            self.evicted += 1

    def __delitem__(self, key: Any) -> None:
        with self._lock:
            if self.maxbytes is not None:
                self.nbytes -= self.weigh(super().__getitem__(key))
            super().__delitem__(key)

    def popitem(self, last: bool = True) -> tuple[Any, Any]:
        with self._lock:
            key = next(reversed(self)) if last else next(iter(self))
            value = super().__getitem__(key)
            self.__delitem__(key)
            return key, value

    _absent = object()

    def pop(self, key: Any, default: Any = _absent) -> Any:
        with self._lock:
            if key not in self:
                if default is LRU._absent:
                    raise KeyError(key)
                return default
            value = super().__getitem__(key)
            self.__delitem__(key)
            return value

    def clear(self) -> None:
        with self._lock:
            super().clear()
            self.nbytes = 0

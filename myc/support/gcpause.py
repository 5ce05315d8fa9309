"""Python's cyclic garbage collector made rarer while a program compiles.

Why: compiling builds graphs of tens of thousands of small objects (nodes, their input
lists, users tables) that live through the compile.  CPython runs a collection every
700 allocations, and its periodic full collections scan the whole heap, which the
compile itself grows -- so the collector's share grew with the program: the gradient of
a chain of 800 layers took 14.1 s to compile, 5.9 s with collections rarer (200
layers: 2.7 -> 1.8 s; the compile time then grows linearly with the program).  During
a compile (``compiling()``, reentrant and shared by threads) the youngest generation's
threshold is raised; the caller's settings come back when the last compile ends, so the
user's own code sees the collector as it set it.  A collector the user disabled
(``gc.disable()``) or tuned higher is left as it is.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLD0 = 100_000  # allocations between young collections while compiling (CPython: 700)

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def compiling() -> Iterator[None]:
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if 0 < _saved[0] < THRESHOLD0:
                gc.set_threshold(THRESHOLD0, *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                if gc.get_threshold()[0] == THRESHOLD0:  # (unless changed meanwhile)
                    gc.set_threshold(*_saved)
                _saved = None

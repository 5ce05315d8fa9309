"""Python's recursion limit raised while myc evaluates, shared safely between threads.

The evaluator and stepped typed functions recurse once per call of the user's program,
so they need more than Python's default limit.  The limit is process-wide: a plain
save/raise/restore around each call races when threads call concurrently (one thread
saves the value another raised, restores it last, and leaves it raised for good, where
later unrelated deep recursion can overflow the C stack).  Here the first caller in
saves it, the last one out restores it, under a lock.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_users = 0
_saved = 0
_raised = 0  # the limit set while users are in (0: left as it was)


@contextmanager
def raised_recursion_limit(limit: int) -> Iterator[None]:
    """Python's recursion limit at least ``limit`` inside, restored when the last
    concurrent user leaves (unless someone else changed it meanwhile)."""
    global _users, _saved, _raised
    with _lock:
        if _users == 0:
            _saved = sys.getrecursionlimit()
            _raised = 0
            if _saved < limit:
                sys.setrecursionlimit(limit)
                _raised = limit
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _raised and sys.getrecursionlimit() == _raised:
                sys.setrecursionlimit(_saved)

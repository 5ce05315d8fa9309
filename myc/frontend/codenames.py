"""The names a function's code reads from its globals (the disk-cache key and the
rebound-globals watch both need them)."""

from __future__ import annotations

import dis
import types
import weakref

_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"})


# code object -> its names: disassembling is most of what watching a program's globals
# and keying it on disk cost (12 ms for a function reaching NumPy's library code)
_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _names(code: types.CodeType) -> tuple[set[str], frozenset[str]]:
    """Global names the code (and its nested code) loads, and every other name it uses
    (attribute names: ``np.tanh``, ``helpers.f``).  (A new set each call: callers may
    change it.)"""
    seen = _SEEN.get(code)
    if seen is None:
        seen = _SEEN[code] = _read_names(code)
    return set(seen[0]), seen[1]


def _read_names(code: types.CodeType) -> tuple[frozenset[str], frozenset[str]]:
    gnames: set[str] = set()
    others: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in _GLOBAL_OPS:
                gnames.add(ins.argval)
        others.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(gnames), frozenset(others)

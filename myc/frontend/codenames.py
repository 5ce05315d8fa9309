"""The names a function's code reads from its globals (the disk-cache key and the
rebound-globals watch both need them)."""

from __future__ import annotations

import dis
import types

_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"})


def _names(code: types.CodeType) -> tuple[set[str], frozenset[str]]:
    """Global names the code (and its nested code) loads, and every other name it uses
    (attribute names: ``np.tanh``, ``helpers.f``)."""
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
    return gnames, frozenset(others)

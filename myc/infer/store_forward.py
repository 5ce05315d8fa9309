"""Reads of an element past stores made at other places.

An item assignment is a new array (``x[0, i] = v`` is ``index_set(x, (0, i), v)`` at a
run-time place, a ``where`` by a constant mask at a static one), so a program that
writes one element then reads another -- Stam's boundary loop::

    for i in range(1, N + 1):
        x[0, i] = x[1, i]
        x[N + 1, i] = x[N, i]      # reads the array the first store made
        ...

-- reads each element from the result of the store before it.  Where the element read
provably is not the one stored (``(N, i)`` is not ``(0, i)`` for any ``i``), it is the
same element of the array before the store, and the read is made there instead.  Values
are unchanged; what changes is the program's shape: the stores form a chain, each read
only by the next, which a native loop makes in place in the state's buffer (it copied
the array per store when an element of a stored array was read in between:
``myc.lower.placement.Placement._rows_in_place``), and unrolled stores at static
places form one chain of ``where`` s whose values all read the first array: one kernel,
not a kernel and a pass over the array per element.

Two places differ when some axis gives two different constants, or one int computed at
run time plus two different constants (``i + 1``, ``i``), or when the constants they are
compared with on different axes ask two different values of the same run-time int
(``(i, 0)`` against ``(N + 1, i)``).  NumPy's negative indices count from the end: an
int computed at run time may be negative, so it is taken to name the element ``c`` when
it equals ``c`` or ``c - n`` (``n`` the axis length), and two offsets of one int differ
only when they do not differ by a multiple of ``n``."""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.ir.nodes import Apply, Constant, Node
from myc.prims import P

_LOOK = 64  # stores looked through per read (a longer chain is read where it stands)


def read_through(x: Any, key: Any) -> Any:
    """The earliest array, along ``x``'s chain of element stores, whose element at
    ``key`` (ints and run-time ints only) is ``x[key]``: ``x`` itself if none."""
    parts = _key_parts(key)
    if parts is None or not isinstance(x, Apply):
        return x
    for _ in range(_LOOK):
        base = _past(x, parts)
        if base is None:
            return x
        x = base
    return x


def _past(x: Any, parts: list) -> Any:
    """The array ``x`` was made from by a store at a place other than ``parts``."""
    if not isinstance(x, Apply) or not isinstance(x.inputs[0], Constant):
        return None
    prim, ins = x.inputs[0].value, x.inputs
    shape = getattr(x.abstract, "shape", None)
    if shape is None:
        return None
    if prim is P.index_set and len(ins) == 4:
        base, at = ins[1], ins[2]
    elif prim is P.guarded and len(ins) == 7 and isinstance(ins[2], Constant) and \
            ins[2].value is P.index_set:
        base, at = ins[4], ins[5]  # stored where its path holds: elsewhere x is base
    elif prim is P.where and len(ins) == 4 and isinstance(ins[1], Constant) and \
            isinstance(ins[1].value, np.ndarray) and ins[1].value.shape == shape:
        base = ins[3]
        if not isinstance(base, Node) or base.abstract != x.abstract:
            return None
        hits = _places(ins[1].value)
        if hits is None:
            return None
        return base if all(_differ(parts, h, shape) for h in hits) else None
    else:
        return None
    if not isinstance(base, Node) or base.abstract != x.abstract:
        return None
    stored = _key_parts(at)
    if stored is None or not _differ(parts, stored, shape):
        return None
    return base


_PLACES: dict[int, tuple[np.ndarray, list | None]] = {}


def _places(mask: np.ndarray) -> list | None:
    """The places a constant store mask sets (at most 4; None past that), remembered
    per mask: a chain of stores is looked through once per element read."""
    hit = _PLACES.get(id(mask))
    if hit is not None and hit[0] is mask:
        return hit[1]
    if len(_PLACES) > 4096:
        _PLACES.clear()
    found = np.argwhere(mask) if np.count_nonzero(mask) <= 4 else None
    places = None if found is None else [[int(v) for v in h] for h in found]
    _PLACES[id(mask)] = (mask, places)
    return places


def _key_parts(key: Any) -> list | None:
    """An index of ints and run-time ints as its parts (``int`` or ``(node, offset)``);
    None for anything else (a slice, ``None``, an array)."""
    if isinstance(key, Constant):
        key = key.value
    if isinstance(key, Apply) and isinstance(key.inputs[0], Constant) and \
            key.inputs[0].value is P.make_tuple:
        key = tuple(k.value if isinstance(k, Constant) else k for k in key.inputs[1:])
    if not isinstance(key, tuple):
        key = (key,)
    out: list = []
    for k in key:
        if isinstance(k, Constant):
            k = k.value
        if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            out.append(int(k))
        elif isinstance(k, Node) and _is_int(k):
            out.append(_offset(k))
        else:
            return None
    return out


def _is_int(n: Node) -> bool:
    a = n.abstract
    return getattr(a, "shape", None) == () and getattr(getattr(a, "dtype", None), "kind",
                                                       "") in "iu"


def _offset(n: Node) -> tuple[Node, int]:
    """``n`` as ``(m, c)`` with ``n == m + c`` (through adds and subtractions of ints)."""
    c = 0
    for _ in range(16):
        if not (isinstance(n, Apply) and isinstance(n.inputs[0], Constant) and
                len(n.inputs) == 3):
            break
        prim, a, b = n.inputs[0].value, n.inputs[1], n.inputs[2]
        ka, kb = _const_int(a), _const_int(b)
        if prim is P.add and kb is not None and isinstance(a, Node) and _is_int(a):
            n, c = a, c + kb
        elif prim is P.add and ka is not None and isinstance(b, Node) and _is_int(b):
            n, c = b, c + ka
        elif prim is P.sub and kb is not None and isinstance(a, Node) and _is_int(a):
            n, c = a, c - kb
        else:
            break
    return n, c


def _const_int(v: Any) -> int | None:
    if isinstance(v, Constant):
        v = v.value
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    return None


def _differ(a: list, b: list, shape: tuple) -> bool:
    """Do indices ``a`` and ``b`` (parts, over their common leading axes) name places
    that differ, whatever the run-time ints?"""
    wanted: dict[int, set[int]] = {}  # a run-time int's values that name the same place
    for axis, (p, q) in enumerate(zip(a, b, strict=False)):
        n = int(shape[axis]) if axis < len(shape) else 0
        if n <= 0:
            return False
        if isinstance(p, int) and isinstance(q, int):
            if p % n != q % n:
                return True
            continue
        if isinstance(p, tuple) and isinstance(q, tuple):
            if p[0] is q[0] and (p[1] - q[1]) % n != 0:
                return True
            continue
        (node, off), c = (p, q) if isinstance(p, tuple) else (q, p)
        c %= n  # the place: node + off is c or c - n
        vals = {c - off, c - n - off}
        prev = wanted.get(id(node))
        vals = vals if prev is None else prev & vals
        if not vals:
            return True
        wanted[id(node)] = vals
    return False

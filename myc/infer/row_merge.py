"""A row stored on one side of an if-converted branch, merged as a row store.

``if c: H[t] = h`` inside a loop makes ``H`` either ``index_set(H, t, h)`` (guarded by
the side's path where the index could fail) or ``H`` itself; merged by a ``select`` of
the whole array, the loop makes a pass over ``H`` per iteration (a preallocated array
written row by row becomes quadratic in the trip count) and a native loop cannot store
the row in place.  The merge is exactly

    index_set(H, t', select(q, h, H[t']))

with ``q`` the condition under which the store happened (the side's condition and the
store's own path) and ``t'`` the index where ``q`` can fail (its path false) replaced by
0: where ``q`` does not hold, row 0 (or the row at ``t``) is written back with its own
value.  The store is then one row: a native loop does it in place
(``lower.placement.Placement._rows_in_place``), and its adjoint reads and zeroes one row of the
cotangent."""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.ir.nodes import Apply, Constant, Node
from myc.prims import P
from myc.prims.abstract import AArray, AScalar


def _row_store(n: Any, base: Any) -> tuple[Any, Any, Any] | None:
    """``(path or None, index, value)`` where node ``n`` is ``base`` with a row stored
    (``index_set``, guarded or not); else None."""
    if not isinstance(n, Apply) or not isinstance(n.inputs[0], Constant):
        return None
    prim = n.inputs[0].value
    if prim is P.index_set and len(n.inputs) == 4 and n.inputs[1] is base:
        return None, n.inputs[2], n.inputs[3]
    if prim is P.guarded and len(n.inputs) == 7 and isinstance(n.inputs[2], Constant) \
            and n.inputs[2].value is P.index_set and n.inputs[4] is base:
        return n.inputs[1], n.inputs[5], n.inputs[6]
    return None


def _safe_index(t: Any, index: Any, path: Any, loc: Any) -> Any:
    """``index`` with each computed int replaced by ``select(path, i, 0)``."""
    if path is None:
        return index
    if isinstance(index, Apply) and isinstance(index.inputs[0], Constant) and \
            index.inputs[0].value is P.make_tuple:
        parts = [p.value if isinstance(p, Constant) else p for p in index.inputs[1:]]
        return t.emit(P.make_tuple, [_safe_index(t, p, path, loc) if isinstance(p, Node)
                                     else p for p in parts], loc)
    if isinstance(index, Node):
        return t.emit(P.select, [path, index, 0], loc, abstract=index.abstract)
    return index


def merge_row_store(t: Any, c: Node, x: Any, y: Any, loc: Any) -> Node | None:
    """The value that is ``x`` where ``c`` holds and ``y`` elsewhere, as one row store,
    where one of them is the other with a row stored, or both are the same array with
    the same row stored (``if c: H[t] = a`` ``else: H[t] = b``); else None (a
    ``select``)."""
    fx, fy = _row_store(x, y), _row_store(y, x)
    if fx is not None:
        base, stores = y, [(fx, True)]
    elif fy is not None:
        base, stores = x, [(fy, False)]
    else:
        into = _stored_into(x)
        sx, sy = _row_store(x, into), _row_store(y, into)
        if into is None or sx is None or sy is None or _parts(sx[1]) != _parts(sy[1]):
            return None
        base, stores = _stored_into(x), [(sx, True), (sy, False)]
    a = getattr(base, "abstract", None)
    if not isinstance(base, Node) or not isinstance(a, AArray) or a.ndim == 0 or \
            0 in a.shape:
        return None
    conds = []
    for (path, _index, _value), taken in stores:  # where each store happened
        side = c if taken else t.emit(P.eq, [c, False], loc)
        conds.append(side if path is None else t.emit(P.and_, [path, side], loc))
    guards = [path for (path, _i, _v), _taken in stores]
    index = stores[0][0][1]
    if isinstance(index, Constant):
        index = index.value
    either = None
    if any(g is not None for g in guards):  # the index is valid where a store happened
        either = conds[0] if len(conds) == 1 else t.emit(P.or_, conds, loc)
    at = _safe_index(t, index, either, loc)
    row = t.emit(P.getitem, [base, at], loc)
    for q, ((_path, _index, value), _taken) in reversed(list(zip(conds, stores,
                                                                   strict=True))):
        if row.abstract != getattr(value, "abstract", None):
            return None
        row = t.emit(P.select, [q, value, row], loc, abstract=value.abstract)
    return t.emit(P.index_set, [base, at, row], loc, abstract=a)


def _stored_into(n: Any) -> Any:
    """The array a row store ``n`` stores into (``index_set``, guarded or not), or None."""
    if not isinstance(n, Apply) or not isinstance(n.inputs[0], Constant):
        return None
    prim = n.inputs[0].value
    if prim is P.index_set and len(n.inputs) == 4:
        return n.inputs[1]
    if prim is P.guarded and len(n.inputs) == 7 and isinstance(n.inputs[2], Constant) \
            and n.inputs[2].value is P.index_set:
        return n.inputs[4]
    return None


# -- the adjoint of a row read ---------------------------------------------------------
def _parts(index: Any) -> Any:
    """An index as comparable parts: a ``make_tuple`` node's pieces, a constant's value."""
    if isinstance(index, Apply) and isinstance(index.inputs[0], Constant) and \
            index.inputs[0].value is P.make_tuple:
        return tuple(_parts(p) for p in index.inputs[1:])
    if isinstance(index, Constant):
        return ("const", repr(index.value))
    if isinstance(index, Apply) and isinstance(index.inputs[0], Constant) and \
            index.inputs[0].value in _INT_ARITHMETIC and \
            isinstance(index.abstract, AScalar) and index.abstract.dtype.kind in "iu":
        # the same int computed twice (``H[t + 1]`` on both sides of an ``if``): equal
        return ("apply", index.inputs[0].value.name, tuple(_parts(i) for i in index.inputs[1:]))
    return ("node", id(index))


# pure int arithmetic: two applications on equal operands are equal (``_parts``)
_INT_ARITHMETIC = frozenset((P.add, P.sub, P.mul, P.neg, P.floordiv, P.mod))


def read_row(n: Apply) -> tuple[Any, Any, Any] | None:
    """``(path or None, array, index)`` of a row read ``x[i]`` by a computed int
    (``getitem``, guarded or not); else None."""
    prim = n.inputs[0].value
    if prim is P.getitem and len(n.inputs) == 3:
        path, x, index = None, n.inputs[1], n.inputs[2]
    elif prim is P.guarded and len(n.inputs) == 6 and isinstance(n.inputs[2], Constant) \
            and n.inputs[2].value is P.getitem:
        path, x, index = n.inputs[1], n.inputs[4], n.inputs[5]
    else:
        return None
    if not isinstance(x, Node) or not isinstance(x.abstract, AArray) or \
            "node" not in repr(_parts(index)):
        return None
    return path, x, index


def zeroed_row(old: Any, path: Any, index: Any) -> Any:
    """The array ``old`` zeroes the row of where ``old`` is ``index_set(a, index, 0)``
    under the same ``path`` (``index_set``'s adjoint: the cotangent of an array whose row
    the primal overwrote); else None."""
    if not isinstance(old, Apply) or not isinstance(old.inputs[0], Constant):
        return None
    prim = old.inputs[0].value
    if prim is P.index_set and len(old.inputs) == 4 and path is None:
        a, at, v = old.inputs[1:]
    elif prim is P.guarded and len(old.inputs) == 7 and old.inputs[1] is path and \
            isinstance(old.inputs[2], Constant) and old.inputs[2].value is P.index_set:
        a, at, v = old.inputs[4:]
    else:
        return None
    if not (isinstance(v, Constant) and np.ndim(v.value) == 0 and v.value == 0) or \
            _parts(at) != _parts(index):
        return None
    return a


def row_of_stores(t: Any, old: Any, at: Any, row: Any, loc: Any, depth: int = 4) -> Any:
    """Row ``at`` of ``old`` -- a chain of row stores into an array ``B`` (``index_set``,
    guarded or not, at int indices) -- read from ``B`` and the stored rows (``select(at
    == w, v, B[at])`` per store at ``w``), never from the chain's results; None where
    ``old`` is not such a chain (or a stored value is not a row of type ``row``).  A row
    store whose value reads only the array it stores into is a row store updated in
    place by a native loop (``lower.placement.Placement._rows_in_place``): the backward loop of
    ``H[t + 1] = f(H[t])`` adds the cotangent of row ``t`` and zeroes that of row ``t +
    1``, two row stores per iteration into the cotangent, not a pass over it."""
    into = _stored_into(old)
    if into is None:
        return None
    _path, w, v = _row_store(old, into)
    w = w.value if isinstance(w, Constant) else w
    if isinstance(v, Constant) and np.ndim(v.value) == 0:
        v = np.full(row.shape, v.value, row.dtype) if row.shape else row.dtype.type(v.value)
    elif getattr(v, "abstract", None) != row:
        return None
    if not _int_index(w) or not _int_index(at):
        return None
    below = into if depth == 0 or _stored_into(into) is None else \
        row_of_stores(t, into, at, row, loc, depth - 1)
    if below is None:
        return None
    if below is into:
        below = t.emit(P.getitem, [into, at], loc, abstract=row)
    same = t.emit(P.eq, [at, w], loc)
    return t.emit(P.select, [same, v, below], loc, abstract=row)


def _int_index(i: Any) -> bool:
    a = getattr(i, "abstract", None)
    if isinstance(i, Node):
        return a is not None and getattr(a, "shape", None) == () and a.dtype.kind in "iu"
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)

"""Lists that a loop appends to, carried by a ``loop`` node as stacked arrays.

``hs = []; for t in range(n): h = step(h, x[t]); hs.append(h)`` changes the list's
length every iteration, and a list's length is part of a value's structure: such a loop
could only be unrolled, every iteration its own operations (an RNN over 50 steps, an
ODE solver's 48 stages: thousands of operations, seconds of compile time).  JAX makes
users write ``lax.scan``; here the tracer sees the same thing in the plain loop.

When a loop's trip count is static (a ``for`` over a ``range`` whose bounds are known,
no data-dependent exit) and each iteration appends the same number of arrays of one
type, each append slot becomes a ``(trips, *shape)`` buffer carried by the loop with a
count of the iterations done: an append writes row ``count``.  After the loop the list
is its items from before the loop followed by the buffers' rows, in the order they were
appended -- an ordinary list again, so nothing after the loop changes.  Inside the loop
the list can be appended to and read as ``hs[-1]``, ``hs[i]`` of an item from before the
loop and ``len(hs)`` (``read``); any other read stops the conversion (a ``GraphBreak``),
and the loop is unrolled as before.

Each append is a row store at the run-time count (``index_set``): native loops store
the row into the state's own buffer as the state advances, no copy of the buffer
(``Placement._rows_in_place``), and the store's adjoint reads the cotangent's row and
zeroes it -- nothing of the buffer -- so a gradient's tape does not store the buffers
(``LoopBody.taped_states``): time and memory linear in the trip count.  A loop that
reads the list (``hs[-1]``) tapes the row each append overwrites instead, and its
backward loop carries the buffers, restoring a row per iteration (an undo log,
``myc.infer.undo_log``): linear too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.infer.signature import GraphBreak
from myc.ir.nodes import Apply, Node, Parameter
from myc.prims import P
from myc.prims.abstract import AArray, AScalar, abstract_of
from myc.prims.containers import ListValue


class StackMeta:
    """The structure of a stacked list: compared by identity between iterations."""

    __slots__ = ("prefix", "k", "slots", "trips", "grown", "reads")

    def __init__(self, prefix: tuple, k: int, grown: Any, slots: list | None = None,
                 trips: int | None = None, reads: bool = False):
        self.prefix = prefix  # the items before the loop (values of the outer program)
        self.k = k  # items appended per iteration
        self.grown = grown  # (variable name, "list"): for the error of a dynamic loop
        self.slots = slots  # the abstract value of each append slot
        self.trips = trips  # the loop's static trip count, once known
        # the loop reads an earlier iteration's item (``hs[-1]``): a gradient tapes the
        # rows each append overwrites (``myc.infer.undo_log``)
        self.reads = reads


class StackList:
    """A list inside a loop body: its items from before the loop (``meta.prefix``), the
    buffers of the items appended by earlier iterations, and this iteration's appends
    (``pending``).  It only supports being appended to."""

    __slots__ = ("meta", "count", "buffers", "pending")
    myc_container_kind = "list"  # what ``container_kind`` reports (``list.append``)

    def __init__(self, meta: StackMeta, count: Any, buffers: tuple, pending: tuple = ()):
        self.meta = meta
        self.count = count
        self.buffers = buffers
        self.pending = pending

    def __add__(self, other: Any) -> StackList:
        # ``x + [value]``: myc/frontend/py_library.py ``append``
        if type(other) is not ListValue:
            _read()
        return StackList(self.meta, self.count, self.buffers, self.pending + tuple(other))

    def __len__(self) -> int:
        _read()

    def __iter__(self):
        _read()

    def __getitem__(self, key: Any) -> Any:
        _read()

    def __radd__(self, other: Any) -> Any:
        _read()

    def __eq__(self, other: Any) -> bool:
        _read()

    __hash__ = None  # type: ignore[assignment]


def _read() -> Any:
    raise GraphBreak("a list appended to in a loop is read inside the loop")


def read(tracer: Any, name: str, args: list, loc: Any) -> Any:
    """``hs[-1]``, ``hs[i]`` of an item from before the loop, or ``len(hs)`` inside the
    loop that appends to ``hs``: the last item appended (this iteration's, else the
    previous iteration's -- a row of the last slot's buffer -- or, before any, the last
    item from before the loop), the item, or the length as a run-time int.  Other reads
    stop the conversion (the loop unrolls)."""
    x = args[0]
    meta = x.meta
    if name == "len":
        n = len(meta.prefix) + len(x.pending)
        if isinstance(x.count, Node):
            return tracer.emit(P.add, [tracer.emit(P.mul, [x.count, meta.k], loc), n], loc)
        return n + x.count * meta.k
    index = args[1]
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        if 0 <= index < len(meta.prefix):
            return meta.prefix[index]
        if index == -1:
            if x.pending:
                return x.pending[-1]
            if not meta.prefix:
                _read()
            meta.reads = True
            first = meta.prefix[-1]
            if meta.trips is None or not isinstance(x.count, Node):
                if meta.slots is not None and _abstract(first) != meta.slots[-1]:
                    _read()
                if x.count == 0 or meta.trips is None:
                    return first  # (while the shapes are learned: a value of the type)
            last = tracer.emit(P.getitem, [x.buffers[-1],
                                           tracer.emit(P.sub, [x.count, 1], loc)], loc)
            if _abstract(first) != last.abstract:
                _read()
            if not isinstance(x.count, Node):
                return last
            some = tracer.emit(P.gt, [x.count, 0], loc)
            return tracer.call_prim(P.where, [some, last, first], loc)
    _read()


def _abstract(v: Any) -> Any:
    return v.abstract if isinstance(v, Node) else abstract_of(v)


def _any(v: Any, test) -> bool:
    """Does ``test`` hold for a stacked list inside ``v`` (tuples, lists, dicts)?"""
    if isinstance(v, StackList):
        return test(v)
    if isinstance(v, (tuple, list)):
        return any(_any(x, test) for x in v)
    if isinstance(v, dict):
        return any(_any(x, test) for x in v.values())
    return False


def holds_stack(v: Any) -> bool:
    return _any(v, lambda s: True)


def convert(args: list[Any], inputs: list[Any], nxt: list[Any], grown: Any) -> list | None:
    """``args`` with each top-level list that one iteration only appended to (``inputs``
    as the body saw them, ``nxt`` what it passed on) made a ``StackList`` whose trip
    count is not yet known; None if there is none."""
    out = list(args)
    changed = False
    for i, (a, seen, n) in enumerate(zip(args, inputs, nxt, strict=True)):
        if type(a) is ListValue and type(n) is ListValue and type(seen) is ListValue:
            n0 = len(a)
            if len(n) > n0 and all(x is y for x, y in zip(n[:n0], seen, strict=False)):
                out[i] = StackList(StackMeta(tuple(a), len(n) - n0, grown), 0, ())
                changed = True
                continue
    # (another variable changing structure fails the next iteration's check)
    return out if changed else None


def commit(tracer: Any, nxt: list[Any], loc: Any) -> list[Any]:
    """One iteration's appends written into the buffers (into the body being traced)."""
    out = []
    for v in nxt:
        if not isinstance(v, StackList):
            if holds_stack(v):
                raise GraphBreak("a list appended to in a loop is held in another value",
                                 loc)
            out.append(v)
            continue
        meta = v.meta
        if len(v.pending) != meta.k:
            raise GraphBreak("a loop appends to a list a different number of times on "
                             "different paths", loc)
        slots = []
        for x in v.pending:
            a = _abstract(x)
            if not isinstance(a, (AArray, AScalar)) or getattr(a, "weak", False):
                raise GraphBreak("a loop appends a Python value to a list", loc)
            slots.append(a)
        count = tracer.emit(P.add, [v.count, 1], loc) if isinstance(v.count, Node) \
            else v.count + 1
        if meta.trips is None:  # the shapes are being learned: nothing is stored yet
            meta.slots = slots
            out.append(StackList(meta, count, ()))
            continue
        if slots != meta.slots:
            raise GraphBreak("a loop appends values of different types to a list", loc)
        # each append a row store at the run-time count: its adjoint reads the
        # cotangent's row and zeroes it, and it reads nothing of the buffer, so a
        # gradient's tape does not store the buffer (``LoopBody.taped_states``)
        # (the body also runs once with ``count == trips``, the run that finds the loop
        # done: its next state is discarded, so its row goes anywhere in range)
        at = v.count
        if isinstance(at, Node):
            last = meta.trips - 1
            at = tracer.emit(P.select, [tracer.emit(P.lt, [at, last], loc), at, last], loc,
                             abstract=at.abstract)
        bufs = [tracer.emit(P.index_set, [buf, at, x], loc, abstract=buf.abstract)
                for buf, x in zip(v.buffers, v.pending, strict=True)]
        out.append(StackList(meta, count, tuple(bufs)))
    return out


def check_exits(payloads: dict, loc: Any) -> None:
    for v in payloads.values():
        if _any(v, lambda s: bool(s.pending)):
            raise GraphBreak("a loop leaves right after appending to a list", loc)


def unsized(args: list[Any]) -> list[int]:
    return [i for i, a in enumerate(args) if isinstance(a, StackList) and
            a.meta.trips is None]


def trip_count(go: Any, state: list[Any], leaves0: list[Any], leaves1: list[Any]) -> int | None:
    """The static trip count of a loop whose condition is ``counter < n`` with ``n`` a
    constant and the counter a loop variable starting at a constant, stepped by 1."""
    if isinstance(go, Apply) and go.inputs[0].value is P.select and \
            getattr(go.inputs[2], "value", None) is True and \
            getattr(go.inputs[3], "value", None) is False:
        go = go.inputs[1]  # ``True if c else False``: the branch to the body or the exit
    if not isinstance(go, Apply) or go.inputs[0].value is not P.lt:
        return None
    c, n = go.inputs[1], go.inputs[2]
    n = getattr(n, "value", n)
    if not isinstance(c, Parameter) or isinstance(n, Node) or \
            not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        return None
    for j, p in enumerate(state):
        if p is not c:
            continue
        c0, c1 = leaves0[j], leaves1[j]
        if isinstance(c0, Node) or not isinstance(c0, (int, np.integer)):
            return None
        if not (isinstance(c1, Apply) and c1.inputs[0].value is P.add and
                c1.inputs[1] is c and getattr(c1.inputs[2], "value", None) == 1):
            return None
        return max(int(n) - int(c0), 0)
    return None


def size(tracer: Any, args: list[Any], trips: int, loc: Any) -> list[Any]:
    """``args`` with the unsized stacked lists given their trip count and buffers."""
    out = list(args)
    for i in unsized(args):
        meta = args[i].meta
        if meta.slots is None:
            raise GraphBreak("a loop's appends were never traced", loc)
        new = StackMeta(meta.prefix, meta.k, meta.grown, meta.slots, trips, meta.reads)
        bufs = tuple(tracer.emit(P.zeros, [(trips,) + _shape(a), a.dtype], loc,
                                 abstract=AArray(a.dtype, (trips,) + _shape(a)))
                     for a in meta.slots)
        out[i] = StackList(new, 0, bufs)
    return out


def _shape(a: Any) -> tuple:
    return tuple(a.shape) if isinstance(a, AArray) else ()


def materialize(tracer: Any, v: Any, loc: Any) -> Any:
    """``v`` with each stacked list after its loop made the list it stands for."""
    if isinstance(v, StackList):
        meta = v.meta
        rows = []
        for t in range(meta.trips):
            for buf, a in zip(v.buffers, meta.slots, strict=True):
                rows.append(tracer.emit(P.getitem, [buf, t], loc, abstract=a))
        return ListValue(meta.prefix + tuple(rows))
    if isinstance(v, tuple) and holds_stack(v):
        from myc.prims.containers import like

        return like(v, [materialize(tracer, x, loc) for x in v])
    if isinstance(v, list) and holds_stack(v):
        return [materialize(tracer, x, loc) for x in v]
    return v


def whole_rows(parts: tuple, item_of) -> list:
    """``parts`` with each run of rows that covers arrays ``B_0..B_k-1`` of one type,
    row ``t`` of each in turn (``B_0[0], B_1[0], B_0[1], ...``: the order a loop
    appending ``k`` items an iteration made them) replaced by ``RowsOf(B_0..B_k-1)``
    (``item_of(part)``: ``(array, row)`` or None).  Exact -- the same values -- so any
    program, a transform's too, may be rewritten so."""
    out: list[Any] = []
    i = 0
    while i < len(parts):
        bufs = _run_at(parts, i, item_of)
        if bufs is not None:
            out.append(RowsOf(bufs))
            i += len(bufs) * bufs[0].abstract.shape[0]
            continue
        out.append(parts[i])
        i += 1
    return out


class RowsOf:
    """The rows of ``bufs``, row ``t`` of each in turn (``whole_rows``)."""

    def __init__(self, bufs: list):
        self.bufs = bufs


def _run_at(parts: tuple, i: int, item_of) -> list | None:
    bufs: list[Any] = []
    while i + len(bufs) < len(parts):
        hit = item_of(parts[i + len(bufs)])
        if hit is None or hit[1] != 0 or any(hit[0] is b for b in bufs) or (
                bufs and hit[0].abstract != bufs[0].abstract):
            break
        bufs.append(hit[0])
    if not bufs:
        return None
    trips, k = bufs[0].abstract.shape[0], len(bufs)
    if i + trips * k > len(parts):
        return None
    for t in range(trips):
        for j, b in enumerate(bufs):
            hit = item_of(parts[i + t * k + j])
            if hit is None or hit[0] is not b or hit[1] != t:
                return None
    return bufs


def emit_rows(tracer: Any, rows: RowsOf, loc: Any) -> Any:
    """The array of ``rows``: one buffer itself; several, interleaved by row."""
    bufs = rows.bufs
    if len(bufs) == 1:
        return bufs[0]
    shape = tuple(bufs[0].abstract.shape)
    cols = tuple(tracer.emit(P.reshape, [b, (shape[0], 1, *shape[1:])], loc) for b in bufs)
    return tracer.emit(P.reshape, [tracer.emit(P.concatenate, [cols, 1], loc),
                                   (shape[0] * len(bufs), *shape[1:])], loc)


def row_of(v: Any) -> tuple | None:
    """``(B, t)`` when ``v`` is ``B[t]`` for a constant ``t`` (``B`` an array)."""
    if isinstance(v, Apply) and v.inputs[0].value is P.getitem:
        b, t = v.inputs[1], v.inputs[2]
        t = getattr(t, "value", None) if not isinstance(t, Apply) else None
        if isinstance(b.abstract, AArray) and isinstance(t, int) and \
                not isinstance(t, bool) and t >= 0:
            return b, t
    return None


def unit_row_of(v: Any) -> tuple | None:
    """``(B, t)`` when ``v`` is ``B[t]`` reshaped with a leading axis of 1."""
    if isinstance(v, Apply) and v.inputs[0].value is P.reshape:
        hit = row_of(v.inputs[1])
        if hit is not None and isinstance(v.abstract, AArray) and \
                tuple(v.abstract.shape) == (1, *hit[0].abstract.shape[1:]):
            return hit
    return None

"""An undo log for a taped loop's arrays updated a row per iteration.

A loop that writes a row of a preallocated array and reads rows it wrote --
``H[t + 1] = np.tanh(W @ H[t] + x[t])``, an appended list's ``ys[-1]`` -- has a body
reading its state ``H``, so the backward loop that recomputes iteration ``k`` needs
``H`` as it was then.  Taping ``H`` whole every iteration makes the gradient quadratic
in the trip count (``trips x trips x row`` elements stored and copied).  But iteration
``k`` changes ``H`` by one row only: ``H_{k+1} = index_set(H_k, i_k, v_k)``.  So the
taped loop stores instead the row it overwrites, ``H_k[i_k]``, and its index ``i_k``
(two more carried states, ``r`` and ``ri``, whose value at the start of iteration
``k + 1`` is iteration ``k``'s), and the backward loop carries ``H`` itself: it starts
from the final ``H`` and, after recomputing iteration ``k`` from ``H_k``, restores
that row, ``H_{k-1} = index_set(H_k, ri_k, r_k)`` -- a row store updated in place in
a native loop.  Time and memory linear in the trip count, and exact whatever the body
reads of ``H`` (a row, a slice, the whole array)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from myc.infer.row_merge import _row_store, _safe_index
from myc.infer.rules import infer
from myc.ir.manager import Manager
from myc.ir.nodes import Apply, Constant, Graph, Node, Parameter
from myc.prims import P
from myc.prims.abstract import AArray, AScalar


@dataclass
class Undo:
    """State ``j`` of a loop body, whose next value is itself with one row stored at
    ``index`` (under ``path``, None where unguarded)."""

    j: int
    path: Any
    index: Node
    row: Any = None  # the abstract of the row overwritten (set when the body is made)


def undo_states(g: Graph, ns: int) -> list[Undo]:
    """The states of loop body ``g`` (``ns`` carried) that an undo log can restore: an
    array whose next value is one row stored into it at a computed int index, and
    that the body also reads otherwise (only written, its backward loop never reads
    it and it is not taped anyway: ``LoopBody.taped_states``)."""
    outs = g.output.inputs[1:]
    users: dict[int, int] = {}
    for n in Manager(g).owned.get(g, []):
        if isinstance(n, Apply) and n is not g.output:
            for i in n.inputs[1:]:
                users[i.id] = users.get(i.id, 0) + 1
    found = []
    for j in range(ns):
        p = g.parameters[j]
        a = p.abstract
        if not isinstance(a, AArray) or a.ndim == 0 or a.shape[0] == 0:
            continue
        store = _row_store(outs[1 + j], p)
        if store is None:
            continue
        path, index, _value = store
        ia = getattr(index, "abstract", None)
        if not isinstance(index, (Apply, Parameter)) or not isinstance(ia, AScalar) or \
                ia.dtype.kind not in "iu":
            continue
        if users.get(p.id, 0) < 2:  # the row store its only reader
            continue
        found.append(Undo(j, path, index))
    return found


def undo_body(t: Any, adj: Any, g: Graph, ns: int, undos: list[Undo], loc: Any) -> Graph:
    """Loop body ``g`` with the undo log's states: parameters ``(*states, *r, *ri,
    *invariants)``, output ``(go_on, *next_states, *r_next, *ri_next, *exits, *H,
    *r, *ri)`` -- each undone state's row about to be overwritten and its index, and,
    as extra exit values, the undone states and the log's last entries as the last run
    found them (the backward loop starts from those).  ``adj.inline`` re-emits ``g``."""
    g2 = Graph(f"{g.name}:undo", None, loc)
    params = []
    for p in g.parameters[:ns]:
        q = g2.add_parameter(p.name)
        q.abstract = p.abstract
        params.append(q)
    saved = t.trace, t.path
    t.trace, t.path = g2, None
    try:
        r_params, ri_params = [], []
        for d in undos:  # the row's type: as a read at the index makes it
            d.row = infer(P.getitem, [params[d.j].abstract, d.index.abstract])
        for d in undos:
            q = g2.add_parameter(f"undo{d.j}")
            q.abstract = d.row
            r_params.append(q)
        for d in undos:
            q = g2.add_parameter(f"undo_at{d.j}")
            q.abstract = d.index.abstract
            ri_params.append(q)
        invs = []
        for p in g.parameters[ns:]:
            q = g2.add_parameter(p.name)
            q.abstract = p.abstract
            invs.append(q)
        _nodes, m = adj.inline(g, params + invs)
        r_next, ri_next = [], []
        for d in undos:
            path = m.get(d.path.id, d.path) if isinstance(d.path, Node) else d.path
            at = _safe_index(t, m.get(d.index.id, d.index), path, loc)
            r_next.append(t.emit(P.getitem, [params[d.j], at], loc, abstract=d.row))
            ri_next.append(at)
        outs = [m.get(o.id, o) if isinstance(o, (Apply, Parameter)) else _const(o)
                for o in g.output.inputs[1:]]
        go, nexts, exits = outs[0], outs[1:1 + ns], outs[1 + ns:]
        tail = [params[d.j] for d in undos] + r_params + ri_params
        g2.output = g2.apply(P.make_tuple, *[t.as_node(v, loc) for v in (
            go, *nexts, *r_next, *ri_next, *exits, *tail)], loc=loc)
    finally:
        t.trace, t.path = saved
    return g2


def _const(o: Node) -> Any:
    return o.value if isinstance(o, Constant) else o


def undo_inits(undos: list[Undo]) -> tuple[list[Any], list[Any]]:
    """The log's entries before the first iteration (never restored: the backward loop
    stops after iteration 0, whose restore would make the state before the loop)."""
    zeros = []
    for d in undos:
        z = np.zeros(d.row.shape, d.row.dtype)
        zeros.append(z if d.row.shape != () else z[()])
    return zeros, [0 for _ in undos]

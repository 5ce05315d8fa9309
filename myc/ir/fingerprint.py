"""A content hash of a program: its graphs, their structure and every constant's value.

Two programs with the same fingerprint compute the same thing, so a compiled
specialization of one serves the other (the disk cache's key).  Array constants are
hashed by their bytes, graphs and nodes by their position, never by identity.
"""

from __future__ import annotations

import hashlib

import numpy as np

from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Constant, Graph, Node
from myc.prims import Primitive


def fingerprint(root: Graph) -> str:
    mng = Manager(root)
    gidx = {g: i for i, g in enumerate(mng.graphs)}
    h = hashlib.sha256()
    for g in mng.graphs:
        nidx: dict[int, int] = {}
        parent = gidx.get(g.parent, -1) if g.parent is not None else -1
        h.update(f"G{gidx[g]} p{parent} n{len(g.parameters)} {g.flags.get('defaults')!r}|"
                 .encode())
        for i, p in enumerate(g.parameters):
            nidx[p.id] = i
        order = schedule(g, mng.owned.get(g, []))
        for k, n in enumerate(order):
            nidx[n.id] = len(g.parameters) + k
        for n in order:
            h.update(b"(" + b",".join(_ref(i, g, nidx, gidx).encode() for i in n.inputs) + b")")
        h.update(b"->" + _ref(g.output, g, nidx, gidx).encode())
    return h.hexdigest()


def _ref(n: Node, g: Graph, nidx: dict[int, int], gidx: dict[Graph, int]) -> str:
    if isinstance(n, Constant):
        v = n.value
        if isinstance(v, Graph):
            return f"@{gidx.get(v, '?')}"
        if isinstance(v, Primitive):
            return f"!{v.name}"
        if isinstance(v, np.ndarray):
            digest = hashlib.sha1(np.ascontiguousarray(v).tobytes()).hexdigest()
            return f"A{v.dtype.str}{v.shape}{digest}"
        return f"c{type(v).__name__}:{v!r}"
    if n.graph is g:
        return f"%{nidx.get(n.id, '?')}"
    return f"^{gidx.get(n.graph, '?')}.{n.id if n.graph is None else _outer(n)}"


def _outer(n: Node) -> str:
    # a free variable: identified by its owner graph and its position there
    g = n.graph
    if n in g.parameters:
        return f"p{g.parameters.index(n)}"
    return f"n{getattr(n, 'debug_name', None)}:{n.loc.line if n.loc else '?'}:" \
        f"{n.loc.col if n.loc else '?'}"

"""Reachability between execution units (fusion groups and the nodes outside them) that
stays exact while units merge, so that sibling merging asks "is there a path from one to
the other through a third unit?" in constant time instead of walking the program.

Units are numbered; each keeps its descendants (``desc``), the units reachable through at
least one other unit (``desc2``: a path of length >= 2) and its ancestors (``anc``) as
Python ints used as bit sets.  Merging two units updates only their ancestors and
descendants.  Nothing here recurses, so the program's depth does not matter.
"""

from __future__ import annotations

import numpy as np


def bits(x: int) -> list[int]:
    """The indices of the set bits of ``x`` (ascending)."""
    if not x:
        return []
    raw = x.to_bytes((x.bit_length() + 7) // 8, "little")
    return np.flatnonzero(np.unpackbits(np.frombuffer(raw, np.uint8),
                                        bitorder="little")).tolist()


class UnitReach:
    """Reachability over a DAG of ``n`` units given by successor sets, under merging."""

    def __init__(self, n: int, succ: list[set[int]]):
        self.succ = succ
        self.pred: list[set[int]] = [set() for _ in range(n)]
        for u, ss in enumerate(succ):
            for s in ss:
                self.pred[s].add(u)
        indeg = [len(p) for p in self.pred]
        topo = [u for u in range(n) if not indeg[u]]
        for u in topo:  # (grows while iterated: Kahn's algorithm)
            for s in succ[u]:
                indeg[s] -= 1
                if not indeg[s]:
                    topo.append(s)
        if len(topo) != n:
            raise ValueError("the unit graph has a cycle")
        self.mask = [1 << u for u in range(n)]  # a merged unit: all its original bits
        self.desc = [0] * n
        self.desc2 = [0] * n
        self.anc = [0] * n
        for u in reversed(topo):
            d = d2 = 0
            for s in succ[u]:
                d |= self.desc[s] | (1 << s)
                d2 |= self.desc[s]
            self.desc[u], self.desc2[u] = d, d2
        for u in topo:
            a = self.anc[u] | (1 << u)
            for s in succ[u]:
                self.anc[s] |= a
        self.live = [True] * n

    def indirect(self, a: int, b: int) -> bool:
        """A path between ``a`` and ``b`` (either way) through a third unit."""
        return bool(self.desc2[a] & self.mask[b]) or bool(self.desc2[b] & self.mask[a])

    def direct(self, a: int, b: int) -> bool:
        """An edge ``a -> b`` or ``b -> a``."""
        return b in self.succ[a] or a in self.succ[b]

    def merge(self, a: int, b: int) -> None:
        """Unit ``b`` joins ``a`` (no path through a third unit may join them)."""
        m = self.mask[a] | self.mask[b]
        self.mask[a] = m
        self.live[b] = False
        succ = (self.succ[a] | self.succ[b]) - {a, b}
        pred = (self.pred[a] | self.pred[b]) - {a, b}
        for p in self.pred[b]:
            if p != a:
                self.succ[p].discard(b)
                self.succ[p].add(a)
        for s in self.succ[b]:
            if s != a:
                self.pred[s].discard(b)
                self.pred[s].add(a)
        self.succ[a], self.pred[a] = succ, pred
        self.succ[b], self.pred[b] = set(), set()
        desc = (self.desc[a] | self.desc[b]) & ~m
        anc = (self.anc[a] | self.anc[b]) & ~m
        self.desc[a], self.anc[a] = desc, anc
        d2 = 0
        for s in succ:
            d2 |= self.desc[s]
        self.desc2[a] = d2
        below = desc | m
        ancestors = [u for u in bits(anc) if self.live[u]]
        for u in ancestors:  # everything that reached a or b reaches all of both now
            self.desc[u] |= below
        for u in ancestors:
            if u in pred:  # a direct predecessor: recompute exactly
                d2 = 0
                for s in self.succ[u]:
                    d2 |= self.desc[s]
                self.desc2[u] = d2
            else:
                self.desc2[u] |= below
        above = anc | m
        for v in bits(desc):
            if self.live[v]:
                self.anc[v] |= above

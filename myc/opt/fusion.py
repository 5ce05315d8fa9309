"""Grouping of elementwise, broadcast and reduction nodes into convex fusion groups.

A group is a set of nodes over one iteration *domain* (an elementwise node's output
shape; a reduction's input shape) that a backend compiles into a single kernel: one pass
over the domain, intermediates kept in registers, only the values needed outside the
group stored. Nodes are visited inputs-first; a node joins the group of one of its
producers when the domains agree and the group stays *convex* -- no path leaves the
group and comes back (it would need a value the kernel has not produced yet). A
reduction's result is consumed inside its own group only when it is a *row reduction*
(over the last axis, kept as size 1): the kernel then computes it row by row before the
row's main loop (kernel IR ``RowReduce``), as a softmax needs its row max and row sum.
Groups run as units, so convexity must also hold between groups: should the node-level
test leave two groups waiting on each other, grouping is redone checking the unit graph
at every join, and recomputed cones (rematerialization) that would close such a cycle
are stored instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.opt.rewrite import prim_of
from myc.prims import REGISTRY
from myc.prims.abstract import AArray
from myc.timings import timed

# what ``myc.lower.groups`` turns into kernel IR: the primitives the table declares with a
# scalar op, and the few (casts, where, clip) it declares ``fusible`` otherwise
ELEMENTWISE = frozenset(n for n, p in REGISTRY.items() if p.fusible)
REDUCTIONS = frozenset("sum max min mean sum_to".split())
MIN_FUSED_SIZE = 256
# LLVM's optimizer (its loop vectorizer above all) takes time superlinear in a loop
# body's size: a 4,000-operation kernel took 44 s, 1,000 operations 3.3 s.  Groups stop
# growing here, so a long chain becomes several kernels and compile time stays linear
# (W6's Horner gradient, 317 members, stays one kernel).
MAX_GROUP_MEMBERS = 384


@dataclass
class FusionGroup:
    id: int
    domain: tuple[int, ...]
    members: list[Apply] = field(default_factory=list)
    outputs: list[Apply] = field(default_factory=list)
    # members recomputed here although another group computes them too (never stored)
    borrowed: set[int] = field(default_factory=set)

    def __repr__(self) -> str:
        ops = ", ".join(prim_of(m).name for m in self.members)  # type: ignore[union-attr]
        return f"group{self.id}{list(self.domain)}[{ops}]"


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def row_reduction(n: Node) -> bool:
    """Whether ``n`` reduces a float array over its last axis only, keeping it as size 1:
    a node over the reduced array's domain can read it in the same kernel."""
    p = prim_of(n)
    if p is None or p.name not in ("sum", "max", "min", "mean", "sum_to"):
        return False
    xa, na = n.inputs[1].abstract, n.abstract
    if not isinstance(xa, AArray) or not isinstance(na, AArray) or xa.ndim < 2 or \
            xa.dtype.kind != "f" or na.dtype != xa.dtype or xa.shape[-1] == 1 or \
            na.shape != (*xa.shape[:-1], 1):
        return False
    if p.name == "sum_to":
        return True
    axis, keepdims = n.inputs[2], n.inputs[3]
    if not isinstance(axis, Constant) or not isinstance(keepdims, Constant) or \
            keepdims.value is not True:
        return False
    a = axis.value
    a = a[0] if isinstance(a, tuple) and len(a) == 1 else a
    return isinstance(a, (int, np.integer)) and not isinstance(a, bool) and \
        int(a) % xa.ndim == xa.ndim - 1


def row_member(n: Node, kind: str, grp: FusionGroup, group_of: dict[int, FusionGroup],
               row_level: set[int]) -> bool:
    """Whether ``n`` (elementwise over ``grp``'s domain with the last axis 1) computes from
    ``grp``'s row reductions only: the kernel then computes it once per row (a layer
    norm's ``sqrt(var + eps)``) instead of a kernel of its own between two passes."""
    d = grp.domain
    if kind != "ew" or len(d) < 2 or d[-1] == 1 or n.abstract.shape != (*d[:-1], 1):
        return False
    inside = [i for i in n.inputs[1:] if group_of.get(i.id) is grp]
    return bool(inside) and all(row_reduction(i) or i.id in row_level for i in inside)


def kind_and_domain(n: Node) -> tuple[str, tuple[int, ...]] | None:
    """``("ew"|"red", domain)`` for a fusible node, else ``None``."""
    p = prim_of(n)
    if p is None or n.abstract is None or not hasattr(n.abstract, "dtype"):
        return None
    if p.name in ELEMENTWISE and isinstance(n.abstract, AArray):
        if p.name == "pow" and n.abstract.dtype.kind in "iu" and not (
                isinstance(n.inputs[2], Constant) and np.all(np.asarray(n.inputs[2].value) >= 0)):
            return None  # NumPy raises on negative integer powers: keep its step
        return ("ew", n.abstract.shape)
    if p.name in REDUCTIONS:
        x = n.inputs[1]
        if not isinstance(x.abstract, AArray):
            return None
        return ("red", x.abstract.shape)
    return None


@timed("fusion")
def fuse(g: Graph, min_size: int = MIN_FUSED_SIZE, careful: bool = False
         ) -> list[FusionGroup]:
    """The fusion groups of the flat typed graph ``g``, in a valid execution order.

    Arrays under ``min_size`` elements stay NumPy steps, except where a caller (a loop
    body that should run natively) asks for every array op in a kernel.
    """
    mng = Manager(g)
    order = schedule(g, mng.owned.get(g, []))
    group_of: dict[int, FusionGroup] = {}
    reach: dict[int, frozenset[int]] = {}
    groups: list[FusionGroup] = []
    is_red: set[int] = set()
    row_level: set[int] = set()  # members computed once per row (``row_member``)
    units = _UnitGraph(group_of, {n.id for n in order}) if careful else None
    for n in order:
        kd = kind_and_domain(n)
        dep: set[int] = set()
        for i in n.inputs:
            dep |= reach.get(i.id, frozenset())
        if kd is None:
            reach[n.id] = frozenset(dep)
            if units is not None:
                units.place(n)
            continue
        kind, domain = kd
        chosen = None
        producers = [i for i in (n.inputs[1:2] if kind == "red" else n.inputs[1:])
                     if i.id in group_of and (i.id not in is_red or row_reduction(i))]
        small = _size(domain) < min_size
        for p in producers:
            cand = group_of[p.id]
            if cand.domain != domain and not row_member(n, kind, cand, group_of, row_level):
                continue
            if small and cand.domain == domain:
                continue
            if len(cand.members) >= MAX_GROUP_MEMBERS:
                continue
            ok = True
            for i in n.inputs:
                gi = group_of.get(i.id)
                if gi is cand:
                    if i.id in is_red and not row_reduction(i):
                        ok = False
                        break
                elif cand.id in reach.get(i.id, frozenset()):
                    ok = False
                    break
            if ok and units is not None:
                # groups run as units: a node joining one may close a cycle through
                # another group that the node-level test above cannot see
                ok = not units.closes_cycle(n, cand)
            if ok:
                chosen = cand
                break
        if chosen is None and small:
            reach[n.id] = frozenset(dep)
            if units is not None:
                units.place(n)
            continue
        if chosen is None:
            chosen = FusionGroup(len(groups), domain)
            groups.append(chosen)
        if chosen.domain != domain:
            row_level.add(n.id)
        chosen.members.append(n)
        group_of[n.id] = chosen
        if units is not None:
            units.place(n)
        if kind == "red":
            is_red.add(n.id)
        reach[n.id] = frozenset(dep | {chosen.id})
    if not careful and _cyclic(groups, group_of, order):
        return fuse(g, min_size, careful=True)
    groups = _merge_siblings(groups, group_of, reach, is_red, order)
    saved = [(grp, list(grp.members), set(grp.borrowed)) for grp in groups]
    _rematerialize(g, groups, group_of, is_red, order, mng)
    if _cyclic(groups, group_of, order):
        # a recomputed cone read a value computed downstream of the group that borrowed
        # it (the groups would wait on each other): store such values instead
        for grp, members, borrowed in saved:
            grp.members, grp.borrowed = members, borrowed
    # what is read from memory: inputs of a group's members that the group does not
    # compute itself (rematerialized values are computed where they are borrowed), and
    # inputs of the nodes outside every group
    grouped: set[int] = set()
    needed: set[int] = set()
    for grp in groups:
        mem = {m.id for m in grp.members}
        grouped |= mem
        for m in grp.members:
            needed.update(i.id for i in m.inputs[1:] if i.id not in mem)
    for n in mng.owned.get(g, []):
        if isinstance(n, Apply) and n.id not in grouped:
            needed.update(i.id for i in n.inputs)
    for grp in groups:
        for m in grp.members:
            if m.id in grp.borrowed:
                continue
            outside = m.id in needed or m is g.output
            if outside or m.id in is_red:
                grp.outputs.append(m)
    return groups


class _UnitGraph:
    """The graph of units (groups, and nodes outside every group) over the nodes placed
    so far, kept as nodes are placed (inputs first), for grouping that checks it at every
    join.  The nodes not placed yet never lead back to placed ones, so the graph is
    acyclic while every join keeps it so: a join of ``n`` to a group closes a cycle
    exactly when the group already reaches a unit ``n`` reads.  (Rebuilding the whole
    unit graph per join -- ``_cyclic`` -- was quadratic: 0.9 of the 1.8 s a mixture
    model's Hessian-vector product spent grouping.)"""

    def __init__(self, group_of: dict[int, FusionGroup], ids: set[int]):
        self.group_of = group_of
        self.ids = ids
        self.succ: dict[tuple, set[tuple]] = {}

    def unit(self, n: Node) -> tuple:
        grp = self.group_of.get(n.id)
        return ("g", grp.id) if grp is not None else ("n", n.id)

    def _sources(self, n: Apply, own: tuple) -> set[tuple]:
        return {u for i in n.inputs if isinstance(i, Apply) and i.id in self.ids
                for u in (self.unit(i),) if u != own}

    def place(self, n: Apply) -> None:
        """``n`` is in its unit (its group's, or its own): its reads become edges."""
        own = self.unit(n)
        for src in self._sources(n, own):
            self.succ.setdefault(src, set()).add(own)

    def closes_cycle(self, n: Apply, grp: FusionGroup) -> bool:
        """Would ``n`` joining ``grp`` make units wait on each other?"""
        start = ("g", grp.id)
        targets = self._sources(n, start)
        if not targets:
            return False
        seen = {start}
        stack = [start]
        while stack:
            for v in self.succ.get(stack.pop(), ()):
                if v in targets:
                    return True
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return False


def _cyclic(groups: list[FusionGroup], group_of: dict[int, FusionGroup],
            order: list[Apply]) -> bool:
    """Do the groups (with the members they recompute) and the nodes outside them wait
    on each other?  A group reads what its members read from outside it, from the group
    that stores it (or the node itself)."""
    def unit(i: Node):
        grp = group_of.get(i.id)
        return ("g", grp.id) if grp is not None else ("n", i.id)

    ids = {n.id for n in order}
    succ: dict = {}
    sources = [(("g", grp.id), grp.members) for grp in groups] + [
        (("n", n.id), [n]) for n in order if n.id not in group_of]
    for u, members in sources:
        own = {m.id for m in members}
        for m in members:
            for i in m.inputs:
                if isinstance(i, Apply) and i.id in ids and i.id not in own:
                    src = unit(i)
                    if src != u:
                        succ.setdefault(src, set()).add(u)
    state: dict = {}  # 1: on the stack, 2: done
    for start in [u for u, _ in sources]:
        if start in state:
            continue
        stack = [(start, iter(succ.get(start, ())))]
        state[start] = 1
        while stack:
            u, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[u] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return True
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(succ.get(nxt, ()))))
    return False


MAX_RECOMPUTE = 12


def _rematerialize(g: Graph, groups: list[FusionGroup], group_of: dict[int, FusionGroup],
                   is_red: set[int], order: list[Apply], mng: Manager) -> None:
    """Recompute instead of store: an elementwise value that only later groups over the
    same domain read is recomputed there from its (small) cone of producers, so it is
    neither written to nor read back from memory -- the loads of its inputs replace the
    load of the value.  (The softmax backward re-deriving exp(x - m) is the typical case.)
    """
    rank = {n.id: k for k, n in enumerate(order)}
    for grp in groups:
        mem = {m.id for m in grp.members}
        for v in list(grp.members):
            if v.id in is_red or v is g.output or v.id in grp.borrowed:
                continue
            outside = [u for u, _ in mng.users.get(v, []) if u.id not in mem]
            if not outside:
                continue
            found = [group_of.get(u.id) for u in outside]
            if any(t is None for t in found):
                continue
            targets = list({t.id: t for t in found}.values())  # type: ignore[union-attr]
            if any(t.domain != grp.domain or t is grp for t in targets):
                continue
            if any(u.id in is_red and u.inputs[1] is not v for u in outside):
                continue
            cone = _cone(v, mem, is_red)
            if cone is None:
                continue
            for t in targets:
                have = {m.id for m in t.members}
                extra = [c for c in cone if c.id not in have]
                t.members = sorted(t.members + extra, key=lambda n: rank[n.id])
                t.borrowed |= {c.id for c in extra}


def _cone(v: Apply, mem: set[int], is_red: set[int]) -> list[Apply] | None:
    """``v`` and the members of its group it is computed from, if few and no reductions."""
    seen: dict[int, Apply] = {}
    stack = [v]
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        if n.id in is_red:
            if n is not v and row_reduction(n):
                continue  # stored by its group: the borrower reads it from memory
            return None
        seen[n.id] = n
        if len(seen) > MAX_RECOMPUTE:
            return None
        stack += [i for i in n.inputs[1:] if isinstance(i, Apply) and i.id in mem]
    return list(seen.values())


def _merge_siblings(groups: list[FusionGroup], group_of: dict[int, FusionGroup],
                    reach: dict[int, frozenset[int]], is_red: set[int],
                    order: list[Apply]) -> list[FusionGroup]:
    """Merge groups over the same domain when no path leaves one and enters the other.

    Producer-consumer edges between the two are fine (the value stays in registers)
    unless the value is a reduction's result; a path through a unit outside both would
    make the merged group non-convex.  The unit graph's reachability is kept as bit sets
    (``UnitReach``) updated per merge, so a candidate pair costs a few bit operations, not
    a walk over the program.  A pair that cannot merge never can later (merging only adds
    paths and members), so one sweep over the pairs finds every merge.
    """
    from myc.opt.unitreach import UnitReach

    ng = len(groups)
    unit: dict[int, int] = {}  # node id -> unit index (groups first, by id)
    k = ng
    for n in order:
        grp = group_of.get(n.id)
        if grp is not None:
            unit[n.id] = grp.id
        else:
            unit[n.id] = k
            k += 1
    succ: list[set[int]] = [set() for _ in range(k)]
    for n in order:
        un = unit[n.id]
        for i in n.inputs:
            ui = unit.get(i.id) if isinstance(i, Apply) else None
            if ui is not None and ui != un:
                succ[ui].add(un)
    ur = UnitReach(k, succ)
    by_id = {grp.id: grp for grp in groups}

    def reads_reduction(x: FusionGroup, y: FusionGroup) -> bool:
        """Does ``y`` read a (non-row) reduction's result computed by ``x``?"""
        xm = {m.id for m in x.members}
        for m in y.members:
            for i in m.inputs:
                if i.id in xm and i.id in is_red and not row_reduction(i):
                    return True
        return False

    changed: set[int] = set()
    for a in range(ng):
        if not ur.live[a]:
            continue
        ga = by_id[a]
        for b in range(a + 1, ng):
            gb = by_id[b]
            if not ur.live[b] or gb.domain != ga.domain or ur.indirect(a, b) or \
                    len(ga.members) + len(gb.members) > MAX_GROUP_MEMBERS:
                continue
            if ur.direct(a, b) and (reads_reduction(ga, gb) or reads_reduction(gb, ga)):
                continue
            ur.merge(a, b)
            ga.members += gb.members
            for m in gb.members:
                group_of[m.id] = ga
            changed.add(a)
    if changed:
        rank = {n.id: k for k, n in enumerate(order)}
        for a in changed:
            by_id[a].members.sort(key=lambda n: rank[n.id])
    out = [by_id[i] for i in range(ng) if ur.live[i]]
    for k, grp in enumerate(out):
        grp.id = k
    return out

"""Whole-program facts about a set of graphs: which graphs exist, which nodes each
graph owns, users of every node, free variables and lexical nesting.

The manager is a snapshot: build it after a transform, not during one.  Facts are
computed once on construction; ``schedule`` orders a graph's own nodes for evaluation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterable
from operator import attrgetter

from myc.ir.nodes import Apply, Constant, Graph, Node


def graphs_used_by(node: Node) -> Graph | None:
    if isinstance(node, Constant) and isinstance(node.value, Graph):
        return node.value
    return None


class Manager:
    """Index of every graph reachable from ``roots`` through graph constants.

    ``graphs`` and ``owned`` are built on construction; ``users`` and ``constants``
    (which most passes never read: they cost as much again as the walk) on first read,
    from the walk's record of the nodes it visited.  Read them before changing the graph.
    """

    def __init__(self, roots: Graph | Iterable[Graph], stop: frozenset[Graph] = frozenset()):
        if isinstance(roots, Graph):
            roots = [roots]
        self.roots = list(roots)
        # graphs left out of the program (the enclosing scopes of a transformed closure):
        # their nodes are free variables, never owned
        self.stop = stop
        self.graphs: list[Graph] = []
        self.owned: dict[Graph, list[Node]] = defaultdict(list)
        self._users: dict[Node, list[tuple[Apply, int]]] | None = None
        self._constants: dict[Graph, list[Constant]] | None = None
        # the Apply nodes in the order the walk expanded them, and for each graph walked
        # from its output, where its share of them starts and ends
        self._expanded: list[Apply] = []
        self._walks: list[tuple[Graph, int, int]] = []
        self._fvs: dict[Graph, list[Node]] | None = None
        self._collect()

    def _collect(self) -> None:
        # (nodes and graphs hash by identity; locals bound for the hot loop: this walk
        # runs a few dozen times per compile over the whole program)
        stop = self.stop
        owned = self.owned
        expanded = self._expanded
        seen_graphs: set[Graph] = set()
        seen_nodes: set[Node] = set()
        seen = seen_nodes.add
        graph_stack = list(reversed(self.roots))
        while graph_stack:
            g = graph_stack.pop()
            if g in seen_graphs or g in stop:
                continue
            seen_graphs.add(g)
            self.graphs.append(g)
            # parents are part of the program even when referenced only lexically
            if g.parent is not None and g.parent not in seen_graphs:
                graph_stack.append(g.parent)
            for p in g.parameters:
                if p not in seen_nodes:
                    seen(p)
                    owned[p.graph].append(p)
            assert g.output is not None, f"graph {g.name} has no output"
            start = len(expanded)
            stack: list[Node] = [g.output]
            pop, push = stack.pop, stack.extend
            while stack:
                n = pop()
                if n in seen_nodes:
                    continue
                seen(n)
                cls = type(n)
                if cls is Constant:
                    sub = n.value  # type: ignore[attr-defined]
                    if type(sub) is Graph and sub not in seen_graphs:
                        graph_stack.append(sub)
                    continue
                ng = n.graph
                if ng is not None:
                    if ng in stop:
                        continue
                    owned[ng].append(n)
                    if ng not in seen_graphs:
                        graph_stack.append(ng)
                if cls is Apply:
                    expanded.append(n)  # type: ignore[arg-type]
                    push(n.inputs)  # type: ignore[attr-defined]
            self._walks.append((g, start, len(expanded)))

    @property
    def users(self) -> dict[Node, list[tuple[Apply, int]]]:
        """Every node's users: ``(apply, input index)``, in the walk's order."""
        if self._users is None:
            users: dict[Node, list[tuple[Apply, int]]] = defaultdict(list)
            for n in self._expanded:
                for i, inp in enumerate(n.inputs):
                    users[inp].append((n, i))
            self._users = users
        return self._users

    @property
    def constants(self) -> dict[Graph, list[Constant]]:
        """The constant inputs met walking from each graph's output, in order."""
        if self._constants is None:
            consts: dict[Graph, list[Constant]] = defaultdict(list)
            for g, start, end in self._walks:
                for n in self._expanded[start:end]:
                    for inp in n.inputs:
                        if type(inp) is Constant:
                            consts[g].append(inp)
            self._constants = consts
        return self._constants

    def free_variables(self, g: Graph) -> list[Node]:
        """Nodes of enclosing graphs that ``g`` needs: those it or graphs nested in it use,
        and those needed by any closure it builds (a graph constant it uses), transitively.

        These are exactly the values whose sensitivities a closure of ``g`` carries.
        """
        if self._fvs is None:
            self._fvs = self._compute_free_variables()
        return self._fvs[g]

    def _compute_free_variables(self) -> dict[Graph, list[Node]]:
        direct: dict[Graph, dict[int, Node]] = {g: {} for g in self.graphs}
        uses: dict[Graph, set[Graph]] = {g: set() for g in self.graphs}
        for h in self.graphs:
            nodes = [n for n in self.owned.get(h, []) if isinstance(n, Apply)]
            inputs = [i for n in nodes for i in n.inputs]
            if h.output is not None:
                inputs.append(h.output)
            for inp in inputs:
                if isinstance(inp, Constant):
                    sub = graphs_used_by(inp)
                    if sub is not None and sub in uses:
                        uses[h].add(sub)
                elif inp.graph is not None and inp.graph is not h:
                    direct[h][inp.id] = inp
        fvs: dict[Graph, dict[int, Node]] = {g: dict(direct[g]) for g in self.graphs}
        changed = True
        while changed:
            changed = False
            for h in self.graphs:
                acc = fvs[h]
                sources = list(uses[h]) + [c for c in self.graphs if c.parent is h]
                for src in sources:
                    for nid, n in fvs[src].items():
                        if nid not in acc and not _owned_within(n, h):
                            acc[nid] = n
                            changed = True
        return {g: sorted(fvs[g].values(), key=lambda n: n.id) for g in self.graphs}

    def children(self, g: Graph) -> list[Graph]:
        return [h for h in self.graphs if h.parent is g]

    def applies(self, g: Graph) -> list[Apply]:
        return [n for n in self.owned.get(g, []) if isinstance(n, Apply)]


def _owned_within(n: Node, g: Graph) -> bool:
    return n.graph is not None and n.graph.is_within(g)


def schedule(g: Graph, owned: list[Node]) -> list[Apply]:
    """Topological order of the ``Apply`` nodes ``g`` owns (inputs before users): from
    each of them in the order they were made, its inputs depth-first, then itself."""
    applies = [n for n in owned if type(n) is Apply]
    mine = set(applies)
    # the output goes last, so that when it is a call it can be a tail call
    roots: list[Node] = sorted(applies, key=_node_id)
    if g.output is not None:
        roots.append(g.output)
    order: list[Apply] = []
    done: set[Node] = set()
    opened: set[Node] = set()  # inputs pushed, itself not yet placed
    for root in roots:
        if root not in mine or root in done:
            continue
        stack: list[Node] = [root]
        pop, push = stack.pop, stack.append
        while stack:
            n = pop()
            if n in done:
                continue
            if n in opened:  # its inputs are placed (a DAG: none of them is n)
                done.add(n)
                order.append(n)  # type: ignore[arg-type]
                continue
            opened.add(n)
            push(n)
            for inp in reversed(n.inputs):  # type: ignore[attr-defined]
                if inp in mine and inp not in done:
                    push(inp)
    return order


_node_id = attrgetter("id")


_ORDER = "program order"  # the flag holding a settled program's schedules


def settle(root: Graph) -> Graph:
    """Declare that ``root``'s program no longer changes: a function's parsed and
    differentiated program, which its fingerprint and every trace of every signature
    walk.  :func:`program_order` then walks it once (kept in ``root.flags``)."""
    root.flags.setdefault(_ORDER, None)
    return root


def program_order(root: Graph, skip: Container[Graph] = ()
                  ) -> Iterable[tuple[Graph, list[Apply]]]:
    """Every graph reachable from ``root`` (``Manager.graphs``' order) with its
    :func:`schedule`; computed once for a :func:`settle` d root.  ``skip``: graphs the
    caller has already seen, not scheduled again (read as the result is iterated) --
    except in a settled root's kept list, which holds them all."""
    kept = root.flags.get(_ORDER)
    if kept is not None:
        return kept
    mng = Manager(root)
    if _ORDER in root.flags:
        kept = [(g, schedule(g, mng.owned.get(g, []))) for g in mng.graphs]
        root.flags[_ORDER] = kept
        return kept
    return ((g, schedule(g, mng.owned.get(g, []))) for g in mng.graphs if g not in skip)


def node_count(graph: Graph) -> int:
    """How many nodes ``graph`` and the graphs it owns hold (a size for ``MYC_TIMINGS``)."""
    return sum(len(v) for v in Manager(graph).owned.values())

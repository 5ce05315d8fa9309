"""Whole-program facts about a set of graphs: which graphs exist, which nodes each
graph owns, users of every node, free variables and lexical nesting.

The manager is a snapshot: build it after a transform, not during one.  Facts are
computed once on construction; ``schedule`` orders a graph's own nodes for evaluation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from myc.ir.nodes import Apply, Constant, Graph, Node


def graphs_used_by(node: Node) -> Graph | None:
    if isinstance(node, Constant) and isinstance(node.value, Graph):
        return node.value
    return None


class Manager:
    """Index of every graph reachable from ``roots`` through graph constants."""

    def __init__(self, roots: Graph | Iterable[Graph]):
        if isinstance(roots, Graph):
            roots = [roots]
        self.roots = list(roots)
        self.graphs: list[Graph] = []
        self.owned: dict[Graph, list[Node]] = defaultdict(list)
        self.users: dict[Node, list[tuple[Apply, int]]] = defaultdict(list)
        self.constants: dict[Graph, list[Constant]] = defaultdict(list)
        self._collect()

    def _collect(self) -> None:
        seen_graphs: set[int] = set()
        seen_nodes: set[int] = set()
        graph_stack = list(reversed(self.roots))
        while graph_stack:
            g = graph_stack.pop()
            if g.id in seen_graphs:
                continue
            seen_graphs.add(g.id)
            self.graphs.append(g)
            # parents are part of the program even when referenced only lexically
            if g.parent is not None and g.parent.id not in seen_graphs:
                graph_stack.append(g.parent)
            for p in g.parameters:
                if p.id not in seen_nodes:
                    seen_nodes.add(p.id)
                    self.owned[p.graph].append(p)
            assert g.output is not None, f"graph {g.name} has no output"
            stack: list[Node] = [g.output]
            while stack:
                n = stack.pop()
                if n.id in seen_nodes:
                    continue
                seen_nodes.add(n.id)
                if isinstance(n, Constant):
                    sub = graphs_used_by(n)
                    if sub is not None and sub.id not in seen_graphs:
                        graph_stack.append(sub)
                    continue
                if n.graph is not None:
                    self.owned[n.graph].append(n)
                    if n.graph.id not in seen_graphs:
                        graph_stack.append(n.graph)
                if isinstance(n, Apply):
                    for i, inp in enumerate(n.inputs):
                        self.users[inp].append((n, i))
                        if isinstance(inp, Constant):
                            self.constants[g].append(inp)
                        stack.append(inp)

    def free_variables(self, g: Graph) -> list[Node]:
        """Nodes owned by a lexical ancestor and used by ``g`` or graphs nested in it."""
        fvs: dict[int, Node] = {}
        for h in self.graphs:
            if not h.is_within(g):
                continue
            for n in self.owned.get(h, []):
                if isinstance(n, Apply):
                    for inp in n.inputs:
                        if inp.graph is not None and not inp.graph.is_within(g):
                            fvs[inp.id] = inp
            out = h.output
            if out is not None and out.graph is not None and not out.graph.is_within(g):
                fvs[out.id] = out
        return list(fvs.values())

    def children(self, g: Graph) -> list[Graph]:
        return [h for h in self.graphs if h.parent is g]

    def applies(self, g: Graph) -> list[Apply]:
        return [n for n in self.owned.get(g, []) if isinstance(n, Apply)]


def schedule(g: Graph, owned: list[Node]) -> list[Apply]:
    """Topological order of the ``Apply`` nodes ``g`` owns (inputs before users)."""
    mine = {n.id for n in owned if isinstance(n, Apply)}
    order: list[Apply] = []
    done: set[int] = set()
    # the output goes last, so that when it is a call it can be a tail call
    roots: list[Node] = sorted((n for n in owned if isinstance(n, Apply)), key=lambda n: n.id)
    if g.output is not None:
        roots.append(g.output)
    for root in roots:
        if root.id not in mine or root.id in done:
            continue
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            n, expanded = stack.pop()
            if n.id in done:
                continue
            if expanded:
                done.add(n.id)
                order.append(n)  # type: ignore[arg-type]
                continue
            stack.append((n, True))
            for inp in reversed(n.inputs):  # type: ignore[attr-defined]
                if inp.id in mine and inp.id not in done:
                    stack.append((inp, False))
    return order

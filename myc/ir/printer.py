"""A readable, stable text form of graph IR: one line per node, source line shown.

    graph loss(w, x, y)                                    # model.py:4
      %12 = matmul(x, w)                                   # 5: h = np.tanh(x @ w)
      %13 = tanh(%12)                                      # 5: h = np.tanh(x @ w)
      return %17

Nested graphs (branches, loop bodies, closures) print after their parent with
``parent=`` naming the graph whose frame they capture.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.prims import Primitive

_COL = 56


def _const(v: Any) -> str:
    if isinstance(v, Graph):
        return f"@{v.name}"
    if isinstance(v, Primitive):
        return v.name
    if isinstance(v, np.ndarray):
        if v.size <= 6:
            return f"array({np.array2string(v, separator=', ')}, {v.dtype})"
        return f"array<{v.dtype}{list(v.shape)}>"
    if isinstance(v, type):
        return v.__name__
    if isinstance(v, str):
        return repr(v)
    return repr(v)


class Namer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, n: Node) -> str:
        if isinstance(n, Constant):
            return _const(n.value)
        if n.id not in self.names:
            if hasattr(n, "name") and not isinstance(n, Apply):
                self.names[n.id] = n.name  # type: ignore[attr-defined]
            else:
                self.names[n.id] = f"%{len(self.names) + 1}"
        return self.names[n.id]


def _comment(node: Node | Graph) -> str:
    loc = node.loc
    if loc is None:
        return ""
    text = loc.source_line.strip()
    return f"# {loc.line}: {text}" if text else f"# {loc.line}"


def _line(body: str, comment: str) -> str:
    if not comment:
        return body
    return f"{body.ljust(_COL)} {comment}"


def print_graph(g: Graph, mng: Manager | None = None, namer: Namer | None = None,
                _shown: set[int] | None = None) -> str:
    shown = set() if _shown is None else _shown  # a recursive function calls itself
    shown.add(id(g))
    mng = mng or Manager(g)
    namer = namer or Namer()
    params = ", ".join(namer(p) + (f": {p.abstract}" if p.abstract is not None else "")
                       for p in g.parameters)
    head = f"graph {g.name}({params})"
    if g.parent is not None:
        head += f" parent={g.parent.name}"
    loc = f"# {g.loc.filename.rsplit('/', 1)[-1]}:{g.loc.line}" if g.loc else ""
    lines = [_line(head, loc)]
    subgraphs = []
    for node in schedule(g, mng.owned.get(g, [])):
        subgraphs += [a.value.__myc_subgraph__ for a in node.inputs
                      if isinstance(a, Constant) and hasattr(a.value, "__myc_subgraph__")]
        fn, *args = node.inputs
        call = f"{namer(fn)}({', '.join(namer(a) for a in args)})"
        tag = f"  [{node.debug_name}]" if node.debug_name else ""
        if node.abstract is not None and hasattr(node.abstract, "dtype"):
            tag += f" : {node.abstract}"
        lines.append(_line(f"  {namer(node)} = {call}{tag}", _comment(node)))
    out = g.output
    lines.append(f"  return {namer(out)}" if out is not None else "  return <none>")
    # typed programs hold separate graphs as values (a loop's body): printed after
    for sub in subgraphs:
        if id(sub) not in shown:
            lines += ["", print_graph(sub, None, namer, shown)]
    return "\n".join(lines)


def print_program(root: Graph) -> str:
    """Every graph reachable from ``root``, parents before the graphs nested in them."""
    mng = Manager(root)
    namer = Namer()
    order: list[Graph] = []

    def visit(g: Graph) -> None:
        order.append(g)
        for h in mng.graphs:
            if h.parent is g:
                visit(h)

    for g in mng.graphs:
        if g.parent is None:
            visit(g)
    return "\n\n".join(print_graph(g, mng, namer) for g in order)

"""Local rewriting of a flat typed graph.

``rewrite(graph, rules)`` walks the graph's nodes inputs-first, rebuilds each node on
its (possibly replaced) inputs, and offers it to every rule; a rule returns a
replacement node or ``None``.  Replacements must have the same abstract value
(dtype, shape, scalar kind) as the node they replace -- ``same()`` checks it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.prims import Primitive

Rule = Callable[[Graph, Apply], Node | None]


def prim_of(n: Node) -> Primitive | None:
    if isinstance(n, Apply) and isinstance(n.inputs[0], Constant):
        v = n.inputs[0].value
        if isinstance(v, Primitive):
            return v
    return None


def is_prim(n: Node, *names: str) -> bool:
    # (prim_of inlined: every rule asks this of every node, each pass)
    if isinstance(n, Apply):
        f = n.inputs[0]
        if isinstance(f, Constant):
            v = f.value
            return isinstance(v, Primitive) and v.name in names
    return False


def const_value(n: Node, default: Any = None) -> Any:
    return n.value if isinstance(n, Constant) else default


def is_const(n: Node, value: Any) -> bool:
    if not isinstance(n, Constant):
        return False
    v = n.value
    try:
        return type(v) in (int, float, bool) and v == value and not isinstance(v, bool)
    except Exception:  # noqa: BLE001
        return False


def same(a: Node, b: Node) -> bool:
    """Whether ``b`` can stand for ``a``: equal abstract values."""
    return getattr(a, "abstract", None) == getattr(b, "abstract", None) and \
        getattr(a, "abstract", None) is not None


def make(g: Graph, prim: Primitive, *args: Any, like: Node, abstract: Any = None) -> Apply:
    n = g.apply(prim, *args, loc=like.loc)
    n.abstract = like.abstract if abstract is None else abstract
    return n


def typed(g: Graph, prim: Primitive, *args: Any, like: Node) -> Apply:
    """``prim(*args)`` in ``g`` at ``like``'s location, its abstract value inferred."""
    from myc.infer.rules import infer

    n = g.apply(prim, *args, loc=like.loc)
    n.abstract = infer(prim, [_argument(a) for a in args])
    return n


def _argument(a: Any) -> Any:
    """What shape rules take for ``a``: its abstract value, constant, or tuple of those."""
    if getattr(a, "abstract", None) is not None:
        return a.abstract
    if is_prim(a, "make_tuple"):
        return tuple(_argument(x) for x in a.inputs[1:])
    return getattr(a, "value", a)


def rewrite(g: Graph, rules: list[Rule]) -> int:
    """Apply ``rules`` once over ``g``; return how many nodes were replaced."""
    mng = Manager(g)
    order = schedule(g, mng.owned.get(g, []))
    new: dict[Node, Node] = {}  # (nodes hash and compare by identity)
    get = new.get
    changes = 0
    for n in order:
        cur: Node = n
        if new:  # (nothing replaced yet: every input is itself)
            inputs = [get(i, i) for i in n.inputs]
            if inputs != n.inputs:
                cur = Apply(inputs, g, n.loc)
                cur.abstract = n.abstract
                cur.debug_name = n.debug_name
        for rule in rules:
            if not isinstance(cur, Apply):
                break
            r = rule(g, cur)
            if r is not None and r is not cur:
                changes += 1
                cur = r
        if cur is not n:
            new[n] = cur
    if g.output is not None and g.output in new:
        g.output = new[g.output]
    return changes

"""Common-subexpression elimination: one node per (primitive, inputs)."""

from __future__ import annotations

import numpy as np

from myc.ir.nodes import Apply, Constant, Graph, Node


def _key(n: Node):
    if isinstance(n, Constant):
        v = n.value
        if isinstance(v, np.ndarray):
            return ("arr", id(v))
        try:
            hash(v)
        except TypeError:
            return ("obj", id(v))
        return ("c", type(v).__name__, v)
    return ("n", n.id)


def _effect(n: Apply) -> bool:
    p = n.inputs[0].value if isinstance(n.inputs[0], Constant) else None
    if p is not None and getattr(p, "name", None) == "guarded" and len(n.inputs) > 2:
        p = n.inputs[2].value if isinstance(n.inputs[2], Constant) else None
    return p is not None and not getattr(p, "pure", True)


def cse(g: Graph) -> int:
    seen: dict = {}

    def rule(_g: Graph, n: Apply) -> Node | None:
        if _effect(n):
            return None  # two draws (prints) with the same inputs are two draws
        key = tuple(_key(i) for i in n.inputs)
        other = seen.get(key)
        if other is not None and other.abstract == n.abstract:
            return other
        seen[key] = n
        return None

    from myc.opt.rewrite import rewrite

    return rewrite(g, [rule])

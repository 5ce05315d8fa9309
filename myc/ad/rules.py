"""The derivative rules of primitives as graphs: the one rule set of every AD mode.

A primitive carries its reverse rule (``prim.bprop``) and forward rule (``prim.jvp``) as
Python functions in the myc subset (``myc.prims.registry``); these functions parse them
(once) into graphs.  The graph transforms (``myc.ad.reverse``, ``myc.ad.forward``) and the
typed adjoint of loops (``myc.infer.adjoint``, which sweeps a specialized program
backwards) all take their rules from here.
"""

from __future__ import annotations

from myc.errors import MycTypeError
from myc.ir.nodes import Graph
from myc.prims import Primitive


def reverse_rule_graph(prim: Primitive) -> Graph | None:
    """``prim``'s reverse rule ``(*inputs, out, dout) -> (sensitivity per input,)`` as a
    graph, or ``None`` when it has none."""
    from myc.frontend.lower import parse

    return parse(prim.bprop) if prim.bprop is not None else None


def forward_rule_graph(prim: Primitive) -> Graph:
    """``prim``'s forward rule ``(*inputs, *tangents, out) -> tangent`` as a graph."""
    from myc.frontend.lower import parse

    if prim.jvp is None:
        raise MycTypeError(f"primitive '{prim.name}' has no forward-mode rule")
    return parse(prim.jvp)

"""Algebraic simplification and the cleanup of what AD leaves behind.

x*1, 1*x, x+0, 0+x, x-0, x/1, x**1 -> x;  x**2 -> x*x;  -(-x) -> x;
transpose(transpose(x)) -> x for inverse permutations;  reshape/broadcast_to/sum_to/
expand_reduced/cast_grad/astype/grad_cast/tangent_out/array (np.asarray) to x's own type -> x;
sum of a broadcast scalar -> scalar * count;  select(c, select(c, x, y), z) ->
select(c, x, z).  Every rule keeps the abstract value.
"""

from __future__ import annotations

import numpy as np

from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.opt.rewrite import is_const, is_prim, make, prim_of, same
from myc.prims import P
from myc.prims.abstract import AArray

_IDENTITY_ON_SAME = ("reshape", "broadcast_to", "sum_to", "expand_reduced", "cast_grad",
                     "astype", "grad_cast", "tangent_out", "to_weak", "pos",
                     "check_scalar_output", "array")


def identities(g: Graph, n: Apply) -> Node | None:
    p = prim_of(n)
    if p is None:
        return None
    a = n.inputs[1:]
    name = p.name
    if name in _IDENTITY_ON_SAME and a and same(n, a[0]):
        return a[0]
    if name == "mul":
        if is_const(a[1], 1) and same(n, a[0]):
            return a[0]
        if is_const(a[0], 1) and same(n, a[1]):
            return a[1]
    if name in ("add", "sub") and is_const(a[1], 0) and same(n, a[0]):
        return a[0]
    if name == "add" and is_const(a[0], 0) and same(n, a[1]):
        return a[1]
    if name == "truediv" and is_const(a[1], 1) and same(n, a[0]):
        return a[0]
    if name == "pow":
        if is_const(a[1], 1) and same(n, a[0]):
            return a[0]
        x = a[0]
        if x.abstract is not None and x.abstract.dtype.kind == "f":
            # small integer powers as products: NumPy's float pow is a slow libm call
            if is_const(a[1], 2):
                r = make(g, P.mul, x, x, like=n)
                return r if same(n, r) else None
            if is_const(a[1], 3):
                sq = make(g, P.mul, x, x, like=n, abstract=x.abstract)
                r = make(g, P.mul, sq, x, like=n)
                return r if same(n, r) and same(x, sq) else None
            if isinstance(a[1], Constant) and type(a[1].value) is float and a[1].value == 0.5:
                r = make(g, P.sqrt, x, like=n)
                return r if same(n, r) else None
    if name == "neg" and is_prim(a[0], "neg") and same(n, a[0].inputs[1]):
        return a[0].inputs[1]
    if name == "transpose" and is_prim(a[0], "transpose"):
        inner = a[0]
        x = inner.inputs[1]
        ax1, ax2 = inner.inputs[2], n.inputs[2]
        if getattr(ax1, "value", 0) is None and getattr(ax2, "value", 0) is None and \
                same(n, x):
            return x
    return None


def sum_of_broadcast(g: Graph, n: Apply) -> Node | None:
    """sum(broadcast_to(s, shape)) over everything -> s * size (s a scalar)."""
    if not is_prim(n, "sum") or not is_prim(n.inputs[1], "broadcast_to", "expand_reduced"):
        return None
    if getattr(n.inputs[2], "value", 0) is not None:
        return None
    b = n.inputs[1]
    src = b.inputs[1]
    if not isinstance(b.abstract, AArray) or getattr(src.abstract, "shape", None) != ():
        return None
    size = 1
    for d in b.abstract.shape:
        size *= d
    r = make(g, P.mul, src, size, like=n)
    from myc.infer.rules import infer

    try:
        r.abstract = infer(P.mul, [src.abstract, size])
    except Exception:  # noqa: BLE001
        return None
    return r if same(n, r) else None


def _broadcast_scalar(n: Node):
    """The scalar a node broadcasts (expand_reduced/broadcast_to/full of a constant)."""
    if is_prim(n, "expand_reduced", "broadcast_to") and isinstance(n.inputs[1], Constant):
        v = n.inputs[1].value
    elif is_prim(n, "full") and isinstance(n.inputs[2], Constant):
        v = n.inputs[2].value
    else:
        return None
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    return v if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) else None


def mul_by_broadcast(g: Graph, n: Apply) -> Node | None:
    """x * broadcast(1) -> x; x * broadcast(c) -> x * c (when the type is unchanged)."""
    if not is_prim(n, "mul"):
        return None
    for i, j in ((1, 2), (2, 1)):
        c = _broadcast_scalar(n.inputs[i])
        if c is None:
            continue
        other = n.inputs[j]
        if c == 1 and same(n, other):
            return other
        r = make(g, P.mul, other, n.inputs[i].inputs[1] if not is_prim(n.inputs[i], "full")
                 else n.inputs[i].inputs[2], like=n)
        from myc.infer.rules import infer

        try:
            r.abstract = infer(P.mul, [other.abstract, r.inputs[2].value])
        except Exception:  # noqa: BLE001
            return None
        return r if same(n, r) else None
    return None


def nested_choice(g: Graph, n: Apply) -> Node | None:
    """``select(c, select(c, x, y), z)`` -> ``select(c, x, z)`` (and on the other side;
    ``where`` alike): the inner choice on the same condition is decided already.  A
    gradient's backward loop masks each cotangent by the iteration's path at every step
    that adds to it: chains of the same ``select`` (hundreds in soft-DTW's)."""
    p = prim_of(n)
    if p is None or p.name not in ("select", "where") or len(n.inputs) != 4:
        return None
    c, a, b = n.inputs[1:]
    if is_prim(a, p.name) and len(a.inputs) == 4 and a.inputs[1] is c:
        r = make(g, p, c, a.inputs[2], b, like=n)
        return r if same(n, r) else None
    if is_prim(b, p.name) and len(b.inputs) == 4 and b.inputs[1] is c:
        r = make(g, p, c, a, b.inputs[3], like=n)
        return r if same(n, r) else None
    return None


RULES = [identities, sum_of_broadcast, mul_by_broadcast, nested_choice]

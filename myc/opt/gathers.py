"""Gathers moved ahead of the elementwise arithmetic they pick from.

``z = x - m; z[np.arange(n), labels]`` picks n elements of z, but written that way z
must exist in memory in full for the gather to read it: the fused kernel that computes
``exp(z)`` for the softmax has to store all of z too (16 MB for W3's 4096x1024 logits).
Picking first and computing after touches only the n picked elements:

    (a op b)[i, j] -> a[i, j] op b'[i]       for op in +, -, *, and -a[i, j]

where an operand broadcast along the second axis, shape (n, 1), is read as ``b[:, 0][i]``
and a scalar stays a scalar.  Only float arithmetic is moved (it raises nothing, so
computing fewer elements cannot skip an error), and only for a 2-d operand indexed by
two integer arrays of the same 1-d shape, the common "pick one per row" form.
"""

from __future__ import annotations

import numpy as np

from myc.ir.nodes import Apply, Constant, Graph, Node, Parameter
from myc.opt.reductions import array_type, index_parts, is_arange
from myc.opt.rewrite import is_prim, same, typed
from myc.prims import P
from myc.prims.abstract import AArray, AScalar

_BINARY = {"add": P.add, "sub": P.sub, "mul": P.mul}


def _int_vector(n: Node) -> tuple[int, ...] | None:
    """The shape of ``n`` when it is a 1-d int64 array (constant or computed)."""
    a = array_type(n)
    if a is not None and a.ndim == 1 and a.dtype == np.dtype(np.int64):
        return a.shape
    return None


def _picked(g: Graph, n: Apply, v: Node, index: Node, rows: Node) -> Node | None:
    """``v`` (an operand of the elementwise node) indexed as the node is."""
    a = getattr(v, "abstract", None)
    if isinstance(v, Constant) and not isinstance(v.value, np.ndarray):
        return v  # a Python scalar broadcasts to anything
    if isinstance(a, AScalar):
        return v
    if not isinstance(a, AArray) or a.ndim != 2:
        return None
    full = n.inputs[1].abstract.shape
    if a.shape == full:
        return typed(g, P.getitem, v, index, like=n)
    if a.shape == (full[0], 1):
        col = typed(g, P.reshape, v, (full[0],), like=n)
        return typed(g, P.getitem, col, rows, like=n)
    return None


def gather_first(g: Graph, n: Apply) -> Node | None:
    """getitem(a op b, (i, j)) -> getitem(a, (i, j)) op getitem(b, ...) (float a op b)."""
    if not is_prim(n, "getitem") or not is_prim(n.inputs[2], "make_tuple"):
        return None
    z, index = n.inputs[1], n.inputs[2]
    za = getattr(z, "abstract", None)
    if not isinstance(za, AArray) or za.ndim != 2 or za.dtype.kind != "f":
        return None
    parts = index.inputs[1:]
    if len(parts) != 2:
        return None
    shapes = [_int_vector(p) for p in parts]
    if shapes[0] is None or shapes[0] != shapes[1]:
        return None
    if is_prim(z, "neg"):
        inner = _picked(g, n, z.inputs[1], index, parts[0]) if same(z, z.inputs[1]) else None
        if inner is None:
            return None
        r = typed(g, P.neg, inner, like=n)
        return r if same(n, r) else None
    for name, prim in _BINARY.items():
        if is_prim(z, name):
            try:
                ops = [_picked(g, n, v, index, parts[0]) for v in z.inputs[1:]]
                if any(o is None for o in ops):
                    return None
                r = typed(g, prim, *ops, like=n)
            except Exception:  # noqa: BLE001 - a type the rule does not cover: leave it
                return None
            return r if same(n, r) else None
    return None


def _same_type_input(x: Node, depth: int = 4) -> Node | None:
    """An operand (or operand's operand) of ``x`` with exactly ``x``'s type."""
    if depth == 0 or not isinstance(x, Apply):
        return None
    for v in x.inputs[1:]:
        if isinstance(v, Apply | Parameter) and same(x, v):
            return v if isinstance(v, Parameter) else _same_type_input(v, depth - 1) or v
    return None


def scatter_base(g: Graph, n: Apply) -> Node | None:
    """getitem_grad(x, i, d) reads only x's type: x an input of the same type instead.

    Otherwise the array x (``logits - m`` in a softmax's gradient) must be stored in
    full just so that the scatter can read its shape.
    """
    if not is_prim(n, "getitem_grad") or not isinstance(n.inputs[1], Apply) or \
            is_prim(n.inputs[1], "make_tuple"):
        return None
    v = _same_type_input(n.inputs[1])
    if v is None:
        return None
    r = typed(g, P.getitem_grad, v, n.inputs[2], n.inputs[3], like=n)
    return r if same(n, r) else None


def one_hot_scatter(g: Graph, n: Apply) -> Node | None:
    """getitem_grad(x, (arange(n), j), d) -> where(arange(c) == j', d[:, None], 0).

    The scatter allocates and zero-fills an array of x's size, then writes one element a
    row; the kernel reading it reads it all back.  As a ``where`` against a column index
    it fuses into that kernel and costs a compare a element.  Rows are distinct, so no
    two values land on one element; ``j' = j + c`` where ``j < 0`` (NumPy's negative
    indices).  The forward ``getitem`` with the same index has checked the bounds.
    Run late (``LATE``): a sum over the scatter simplifies better in its scatter form.
    """
    if not is_prim(n, "getitem_grad"):
        return None
    na = getattr(n, "abstract", None)
    parts = index_parts(n.inputs[2])
    d = n.inputs[3]
    da = array_type(d)
    if not isinstance(na, AArray) or na.ndim != 2 or na.dtype.kind != "f" or \
            parts is None or len(parts) != 2 or not isinstance(da, AArray):
        return None
    rows, cols = na.shape
    if not is_arange(parts[0], rows) or \
            _int_vector(parts[1]) != (rows,) or da.shape != (rows,) or da.dtype != na.dtype \
            or cols >= 1 << 24:
        return None
    try:
        j = typed(g, P.reshape, parts[1], (rows, 1), like=n)
        j = typed(g, P.where, typed(g, P.lt, j, 0, like=n), typed(g, P.add, j, cols, like=n),
                  j, like=n)
        # compared as floats of d's type (exact below 2^24): an int64 compare runs at
        # half the vector width and costs more than the scatter it replaces
        j = typed(g, P.astype, j, na.dtype, like=n)
        hit = typed(g, P.eq, Constant(np.arange(cols, dtype=na.dtype), n.loc), j, like=n)
        r = typed(g, P.where, hit, typed(g, P.reshape, d, (rows, 1), like=n),
                  Constant(np.zeros((), na.dtype), n.loc), like=n)
    except Exception:  # noqa: BLE001 - a type the rule does not cover: leave it
        return None
    return r if same(n, r) else None


RULES = [gather_first, scatter_base]
LATE = [one_hot_scatter]

"""Algebra of sums, so that reverse mode's adjoint of a max-shift cancels.

A user's softmax or logsumexp subtracts the row maximum ``m`` before ``exp``.  Its
gradient then holds a term for ``m``: ``dm = -sum(dz, axis)`` pushed back through the
max's argmax mask.  Mathematically ``dm`` is zero (the result does not depend on the
shift), but computed as written it costs a whole extra pass over the array with an
``exp`` per element -- a third of W7's time.  These rules let the optimizer see it
(Theano's ``local_sum_prod_mul_by_scalar`` and its canonizer's cancellations did the
same job):

    sum(-y)                          -> -sum(y)
    sum(a + b)                       -> sum(a) + sum(b)   (when a term then simplifies)
    sum(expand(a) * e, axes)         -> a * sum(e, axes)  (a constant along the axes)
    sum(getitem_grad(x, i, d))       -> sum(d)            (a scatter keeps the total)
    sum(getitem_grad(x, (arange(n), j), d), axis=1) -> d  (one element per row)
    getitem_grad(x, (:, 0), d)       -> reshape(d)        (a size-1 axis: a reshape)
    (c / s) * s                      -> c                 (s = sum(exp(x - max(x))) >= 1)
    neg/add/sub/mul/reshape of constant arrays -> the constant

Each sum is either ``sum(y, axis, keepdims)`` or reverse mode's ``sum_to(y, shape)``.
``(c / s) * s -> c`` is not exact in IEEE arithmetic when ``s`` is 0, infinite or NaN;
it is applied only where ``s`` is a sum of ``exp`` of values shifted by their own maximum,
which is at least 1 whenever it is not NaN.  Every other rule either keeps the value
bit for bit (negation, reshapes, a scatter's total over one row) or changes only the
rounding of a sum.  CSE, run between rounds, joins the new ``sum(e, axes)`` with the
forward pass's identical sum; that is how ``(c / s) * s`` meets its ``s``.
"""

from __future__ import annotations

import numpy as np

from myc.ir.nodes import Apply, Constant, Graph, Node
from myc.opt.rewrite import const_value, is_prim, prim_of, same, typed
from myc.prims import P
from myc.prims.abstract import AArray

_FOLD = ("neg", "add", "sub", "mul", "reshape")
_FOLD_LIMIT = 1 << 20  # elements: a folded constant is embedded in the program


def array_type(n: Node) -> AArray | None:
    """The array type of ``n``; a constant array's, taken from its value."""
    a = getattr(n, "abstract", None)
    if a is None and isinstance(n, Constant) and isinstance(n.value, np.ndarray):
        return AArray(n.value.dtype, n.value.shape)
    return a if isinstance(a, AArray) else None


def _axes(axis, nd: int) -> tuple[int, ...] | None:
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return ((int(axis) % nd),) if nd else None
    if isinstance(axis, tuple) and all(isinstance(a, (int, np.integer)) for a in axis):
        return tuple(sorted({int(a) % nd for a in axis})) if nd else None
    return None


def _reduction(n: Node) -> tuple[Node, tuple[int, ...], bool] | None:
    """``(operand, reduced axes, keepdims)`` of a ``sum`` or ``sum_to`` node."""
    if is_prim(n, "sum"):
        y = n.inputs[1]
        ya = array_type(y)
        kd = const_value(n.inputs[3])
        if ya is None or not isinstance(kd, bool) or not isinstance(n.inputs[2], Constant):
            return None
        axes = _axes(n.inputs[2].value, ya.ndim)
        return None if axes is None else (y, axes, kd)
    if is_prim(n, "sum_to"):
        y = n.inputs[1]
        ya, na = array_type(y), array_type(n)
        if ya is None or na is None or ya.ndim != na.ndim:
            return None
        if any(b not in (1, a) for a, b in zip(ya.shape, na.shape, strict=True)):
            return None
        return y, tuple(i for i, (a, b) in enumerate(zip(ya.shape, na.shape, strict=True))
                        if b == 1 and a != 1), True
    return None


def _resum(g: Graph, n: Apply, y: Node) -> Apply:
    """``n``'s reduction applied to ``y`` instead (same axes, same result type)."""
    if is_prim(n, "sum"):
        return typed(g, P.sum, y, n.inputs[2].value, n.inputs[3].value, like=n)
    return typed(g, P.sum_to, y, n.inputs[2].value, like=n)


def _sum_over(g: Graph, n: Apply, e: Node, axes: tuple[int, ...]) -> Apply:
    """``sum(e, axes, keepdims=False)`` spelled as the forward pass spells it (for CSE)."""
    nd = array_type(e).ndim
    axis = None if axes == tuple(range(nd)) else axes[0] if len(axes) == 1 else axes
    return typed(g, P.sum, e, axis, False, like=n)


def _reshaped(g: Graph, n: Apply, x: Node) -> Node:
    """``x`` reshaped to ``n``'s shape, or ``x`` itself when the shapes agree."""
    if array_type(x) is not None and array_type(x).shape == array_type(n).shape:
        return x
    return typed(g, P.reshape, x, array_type(n).shape, like=n)


def _expand_axes(f: Node) -> tuple[Node, tuple[int, ...], bool] | None:
    """``(a, axes, keepdims)`` of ``expand_reduced(a, shape, axis, keepdims)``."""
    if not is_prim(f, "expand_reduced") or array_type(f) is None:
        return None
    if not all(isinstance(i, Constant) for i in f.inputs[2:]):
        return None
    axes = _axes(f.inputs[3].value, array_type(f).ndim)
    kd = f.inputs[4].value
    return None if axes is None or not isinstance(kd, bool) else (f.inputs[1], axes, kd)


def _factorable(t: Node) -> bool:
    if is_prim(t, "neg"):
        return _factorable(t.inputs[1])
    if is_prim(t, "getitem_grad"):
        return True
    return is_prim(t, "mul") and any(_expand_axes(f) is not None for f in t.inputs[1:])


def push_neg_and_add(g: Graph, n: Apply) -> Node | None:
    """sum(-y) -> -sum(y); sum(a +- b) -> sum(a) +- sum(b) when a term factors out."""
    red = _reduction(n)
    if red is None:
        return None
    y = red[0]
    if is_prim(y, "neg") and same(y, y.inputs[1]):
        r = typed(g, P.neg, _resum(g, n, y.inputs[1]), like=n)
        return r if same(n, r) else None
    if is_prim(y, "add", "sub"):
        a, b = y.inputs[1:]
        if not (same(y, a) and same(y, b)) or not (_factorable(a) or _factorable(b)):
            return None
        r = typed(g, P.add if is_prim(y, "add") else P.sub, _resum(g, n, a), _resum(g, n, b),
                  like=n)
        return r if same(n, r) else None
    return None


def factor_broadcast(g: Graph, n: Apply) -> Node | None:
    """sum(expand_reduced(a) * e, axes) -> a * sum(e, axes) when a is constant along axes."""
    red = _reduction(n)
    if red is None or not is_prim(red[0], "mul"):
        return None
    y, axes, _ = red
    for f, e in ((y.inputs[1], y.inputs[2]), (y.inputs[2], y.inputs[1])):
        ex = _expand_axes(f)
        if ex is None or ex[1] != axes or not same(y, e) or not same(y, f):
            continue
        a, _, kd = ex
        if array_type(a) is None and axes != tuple(range(array_type(y).ndim)):
            continue
        if kd and array_type(a) is not None:
            kept = tuple(d for i, d in enumerate(array_type(a).shape) if i not in axes)
            a = typed(g, P.reshape, a, kept, like=n)
        try:
            r = _reshaped(g, n, typed(g, P.mul, a, _sum_over(g, n, e, axes), like=n))
        except Exception:  # noqa: BLE001 - a type the rule does not cover: leave it
            return None
        return r if same(n, r) else None
    return None


def is_arange(node: Node, n: int) -> bool:
    """Whether ``node`` is the constant ``np.arange(n)`` (an integer array)."""
    v = const_value(node)
    return isinstance(v, np.ndarray) and v.shape == (n,) and v.dtype.kind == "i" and \
        bool(np.array_equal(v, np.arange(n)))


def index_parts(index: Node) -> tuple | None:
    """The parts of an index tuple (a constant tuple or a ``make_tuple``), else None."""
    if isinstance(index, Constant):
        return index.value if isinstance(index.value, tuple) else (index.value,)
    if is_prim(index, "make_tuple"):
        return tuple(index.inputs[1:])
    return None


def sum_of_scatter(g: Graph, n: Apply) -> Node | None:
    """A scatter's total is its values' total; over a row, (arange(n), j) puts one each."""
    red = _reduction(n)
    if red is None or not is_prim(red[0], "getitem_grad"):
        return None
    y, axes, _ = red
    x, index, d = y.inputs[1:]
    da, ya = array_type(d), array_type(y)
    if da is None or ya is None or da.dtype != ya.dtype:
        return None
    if axes == tuple(range(ya.ndim)):
        r = _reshaped(g, n, typed(g, P.sum, d, None, False, like=n))
        return r if same(n, r) else None
    parts = index_parts(index)
    if ya.ndim == 2 and axes == (1,) and parts is not None and len(parts) == 2 and \
            is_arange(parts[0], ya.shape[0]) and da.shape == (ya.shape[0],):
        ja = array_type(parts[1])
        if ja is not None and ja.shape == da.shape and ja.dtype.kind == "i":
            r = _reshaped(g, n, d)
            return r if same(n, r) else None
    return None


def scatter_into_unit_axes(g: Graph, n: Apply) -> Node | None:
    """getitem_grad(x, (:, 0), d) with x's indexed axes of size 1 -> reshape(d)."""
    if not is_prim(n, "getitem_grad") or not isinstance(n.inputs[2], Constant):
        return None
    xa, d = array_type(n), n.inputs[3]
    parts = n.inputs[2].value if isinstance(n.inputs[2].value, tuple) else (n.inputs[2].value,)
    if xa is None or len(parts) > xa.ndim:
        return None
    for p, size in zip(parts, xa.shape, strict=False):
        if isinstance(p, slice):
            if p != slice(None):
                return None
        elif not (isinstance(p, int) and not isinstance(p, bool) and size == 1 and p in (0, -1)):
            return None
    da = array_type(d)
    if da is None or da.dtype != xa.dtype or int(np.prod(da.shape)) != int(np.prod(xa.shape)):
        return None
    r = _reshaped(g, n, d)
    return r if same(n, r) else None


def _shifted_exp_sum(s: Node) -> bool:
    """Whether ``s`` is ``sum(exp(x - max(x, axes, keepdims=True)), axes)``: >= 1 or NaN."""
    red = _reduction(s)
    if red is None or not is_prim(red[0], "exp"):
        return False
    z = red[0].inputs[1]
    if not is_prim(z, "sub") or not is_prim(z.inputs[2], "max"):
        return False
    x, m = z.inputs[1], z.inputs[2]
    if m.inputs[1] is not x or const_value(m.inputs[3]) is not True or array_type(x) is None:
        return False
    return isinstance(m.inputs[2], Constant) and \
        _axes(m.inputs[2].value, array_type(x).ndim) == red[1] and \
        all(array_type(x).shape[i] > 0 for i in red[1])


def cancel_reciprocal(g: Graph, n: Apply) -> Node | None:
    """(c / s) * s -> c, where s (a shifted sum of exps) is never 0 or infinite."""
    if not is_prim(n, "mul"):
        return None
    for q, s in ((n.inputs[1], n.inputs[2]), (n.inputs[2], n.inputs[1])):
        if is_prim(q, "truediv") and q.inputs[2] is s and _shifted_exp_sum(s):
            c = q.inputs[1]
            if array_type(c) == n.abstract:
                return c
    return None


def fold_constants(g: Graph, n: Apply) -> Node | None:
    """Elementwise arithmetic and reshapes of constant arrays, computed now."""
    p = prim_of(n)
    if p is None or p.name not in _FOLD or array_type(n) is None:
        return None
    args = n.inputs[1:]
    if not all(isinstance(a, Constant) for a in args) or \
            not any(isinstance(a.value, np.ndarray) for a in args):
        return None
    if int(np.prod(array_type(n).shape)) > _FOLD_LIMIT:
        return None
    with np.errstate(all="ignore"):
        v = np.asarray(p.impl(*[a.value for a in args]))
    if v.shape != array_type(n).shape or v.dtype != array_type(n).dtype:
        return None
    c = Constant(np.ascontiguousarray(v), n.loc)
    c.abstract = n.abstract
    return c


RULES = [push_neg_and_add, factor_broadcast, sum_of_scatter, scatter_into_unit_axes,
         cancel_reciprocal, fold_constants]

"""Numerical-stability rewrites, on by default (PyTensor's "stabilize" phase).

log(1 + x) -> log1p(x);  exp(x) - 1 -> expm1(x);
log(1 / (1 + exp(-x))) (log of a sigmoid) -> -softplus(-x), with the stable
softplus(z) = max(z, 0) + log1p(exp(-|z|));
log(sum(exp(x), axis)) -> m + log(sum(exp(x - m), axis)), m = max(x, axis) (logsumexp;
m = 0 where the maximum is infinite or nan).
"""

from __future__ import annotations

import os

from myc.infer.rules import infer
from myc.ir.nodes import Apply, Graph, Node
from myc.opt.rewrite import is_const, is_prim, make, rewrite, same
from myc.opt.rewrite import typed as _typed
from myc.prims import P
from myc.prims.abstract import AArray


def log1p_expm1(g: Graph, n: Apply) -> Node | None:
    if is_prim(n, "log") and is_prim(n.inputs[1], "add"):
        a, b = n.inputs[1].inputs[1:]
        x = b if is_const(a, 1) else a if is_const(b, 1) else None
        if x is not None:
            r = make(g, P.log1p, x, like=n)
            return r if _ok(n, r, x) else None
    if is_prim(n, "sub") and is_const(n.inputs[2], 1) and is_prim(n.inputs[1], "exp"):
        x = n.inputs[1].inputs[1]
        r = make(g, P.expm1, x, like=n)
        return r if _ok(n, r, x) else None
    return None


def _ok(n: Node, r: Node, x: Node) -> bool:
    try:
        return infer(r.inputs[0].value, [x.abstract]) == n.abstract
    except Exception:  # noqa: BLE001
        return False


def log_sigmoid(g: Graph, n: Apply) -> Node | None:
    """log(1/(1+exp(-x))) -> -(max(-x, 0) + log1p(exp(-|x|)))."""
    if not (is_prim(n, "log") and is_prim(n.inputs[1], "truediv")):
        return None
    num, den = n.inputs[1].inputs[1:]
    if not is_const(num, 1) or not is_prim(den, "add"):
        return None
    a, b = den.inputs[1:]
    e = b if is_const(a, 1) else a if is_const(b, 1) else None
    if e is None or not is_prim(e, "exp") or not is_prim(e.inputs[1], "neg"):
        return None
    x = e.inputs[1].inputs[1]
    try:
        negx = _typed(g, P.neg, x, like=n)
        m = _typed(g, P.maximum, negx, 0.0, like=n)
        t = _typed(g, P.log1p, _typed(g, P.exp, _typed(g, P.neg, _typed(g, P.abs, x, like=n),
                                                       like=n), like=n), like=n)
        r = _typed(g, P.neg, _typed(g, P.add, m, t, like=n), like=n)
    except Exception:  # noqa: BLE001
        return None
    return r if same(n, r) else None


def logsumexp(g: Graph, n: Apply) -> Node | None:
    """log(sum(exp(x), axis, keepdims)) -> m + log(sum(exp(x - m), axis, keepdims))."""
    if not (is_prim(n, "log") and is_prim(n.inputs[1], "sum")):
        return None
    s = n.inputs[1]
    if not is_prim(s.inputs[1], "exp"):
        return None
    x = s.inputs[1].inputs[1]
    if not isinstance(x.abstract, AArray) or x.abstract.dtype.kind != "f":
        return None
    if is_prim(x, "sub") and _max_of(x.inputs[2], x.inputs[1]):
        return None  # already shifted by its maximum
    axis, keepdims = s.inputs[2], s.inputs[3]
    try:
        mk = _finite_or_zero(g, _typed(g, P.max, x, axis, True, like=n), n)
        shifted = _typed(g, P.sub, x, mk, like=n)
        ss = _typed(g, P.sum, _typed(g, P.exp, shifted, like=n), axis, keepdims, like=n)
        m = mk if keepdims.value else _finite_or_zero(
            g, _typed(g, P.max, x, axis, False, like=n), n)
        r = _typed(g, P.add, m, _typed(g, P.log, ss, like=n), like=n)
    except Exception:  # noqa: BLE001
        return None
    return r if same(n, r) else None


def _max_of(shift: Node, x: Node) -> bool:
    """Is ``shift`` ``x``'s maximum, or ``where(c, max(x), 0)`` (the maximum where it is
    finite, as ``scipy.special.logsumexp`` shifts)?"""
    if is_prim(shift, "where"):
        shift = shift.inputs[2]
    return is_prim(shift, "max") and shift.inputs[1] is x


def _finite_or_zero(g: Graph, m: Node, n: Apply) -> Node:
    """The shift ``m`` where it is finite, else 0: an infinite or nan maximum shifts by
    nothing, so all ``-inf`` stays ``log(0) = -inf`` (not ``-inf - -inf = nan``), as
    NumPy computes it unshifted."""
    finite = _typed(g, P.lt, _typed(g, P.abs, m, like=n), float("inf"), like=n)
    return _typed(g, P.where, finite, m, 0.0, like=n)


RULES = [log1p_expm1, log_sigmoid, logsumexp]


def decision_cone(g: Graph) -> set[int]:
    """Ids of the nodes a guard of ``g`` reads (its last ``len(flags["guards"])``
    outputs, transitively).  A guard re-checks, on every call, a decision the tracer took
    with NumPy's arithmetic; computed more accurately (``log1p`` for ``log(1 + y)``) it
    can come out the other way on the very call it was taken on (y = 1e-100: 1e-100 > 0,
    where NumPy's log(1 + y) is 0), and the call goes to the evaluator."""
    k = len(g.flags.get("guards", []))
    out = g.output
    if not k or not (isinstance(out, Apply) and is_prim(out, "make_tuple")):
        return set()
    seen: set[int] = set()
    todo = list(out.inputs[-k:])
    while todo:
        n = todo.pop()
        if n.id in seen or not isinstance(n, Apply) or n.graph is not g:
            continue
        seen.add(n.id)
        todo.extend(n.inputs[1:])
    return seen


def stabilize(g: Graph) -> int:
    """The stability rewrites, except where a guard reads the value (``decision_cone``).

    ``MYC_NO_STABILITY=1`` turns them off: NumPy's arithmetic, rounding for rounding
    (the fuzz checks compile so to tell a more accurate result from a wrong one)."""
    if os.environ.get("MYC_NO_STABILITY"):
        return 0
    cone = decision_cone(g)
    if not cone:
        return rewrite(g, RULES)

    def outside(rule):
        def apply(gr: Graph, n: Apply) -> Node | None:
            return None if n.id in cone else rule(gr, n)
        return apply

    return rewrite(g, [outside(r) for r in RULES])

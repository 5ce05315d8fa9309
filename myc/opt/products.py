"""Sums of matrix products accumulate in one buffer: ``x + s * (a @ b)`` -> ``matmul_acc(a,
b, x, s)``.

A reverse pass through an unrolled loop sums a product per step -- a weight's gradient
``dW = h_0.T @ g_0 + h_1.T @ g_1 + ...``, a state's ``dy = dy' + g @ W.T + ...``.  Left
as ``add`` nodes, the sums become fused elementwise kernels reading every product's
buffer: one kernel per distinct way the sums are grouped (each a separate LLVM module to
optimize, the largest cost of such a program's first call), and a buffer per product.
GEMM computes ``C = alpha * A @ B + beta * C``: with ``beta = 1`` a product (scaled by a
number: ``alpha``) accumulates into the sum so far, so a chain of sums of products is a
chain of GEMM calls and no kernel.

The rewrite keeps the order of the sum: ``(x + p1) + p2`` becomes ``acc(p2, acc(p1,
x))``, each step adding one product to the sum so far (GEMM adds the product to ``C``
as it computes it: where its sum over ``k`` is split in blocks, the last bits may differ
from adding a stored product -- float rounding).  A product is folded only where nothing
else reads it (else it would be computed twice); ``x`` must already have the product's
dtype and shape (no broadcast).
Native code writes the accumulation in place where ``x`` has no other reader, else
into a copy (``myc.backends.cpu.loopgen``).

It runs at lowering, for backends whose host code has GEMM with ``beta``
(``Target.gemm_accumulate``: the CPU's), and in ahead-of-time plans
(``myc.lower.planned``: their own GEMM loop accumulates).  ``MYC_NO_GEMM_ACC=1`` turns it
off (to measure it).
"""

from __future__ import annotations

import os

import numpy as np

from myc.ir.manager import Manager, schedule
from myc.ir.nodes import Constant, Graph, Node
from myc.opt.rewrite import is_prim
from myc.prims import P
from myc.prims.abstract import AArray

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def enabled() -> bool:
    return not os.environ.get("MYC_NO_GEMM_ACC")


def _scalar(n: Node) -> float | None:
    """A Python number constant (a weak scalar: it keeps the array's dtype)."""
    v = n.value if isinstance(n, Constant) else None
    return float(v) if type(v) in (int, float) else None


def _product(n: Node, out: AArray, users: dict) -> tuple[Node, Node, float] | None:
    """``(a, b, alpha)`` where ``n`` is ``a @ b`` or ``alpha * (a @ b)`` (alpha a number),
    2-d floats of ``out`` 's type, that only one node reads (and the product only ``n``)."""
    alpha = 1.0
    if is_prim(n, "mul") and len(users.get(n, ())) == 1 and n.abstract == out:
        x, y = n.inputs[1], n.inputs[2]
        k, m = (_scalar(y), x) if _scalar(y) is not None else (_scalar(x), y)
        if k is None:
            return None
        alpha, n = k, m
    if not is_prim(n, "matmul") or len(users.get(n, ())) != 1:
        return None
    a, b = n.inputs[1].abstract, n.inputs[2].abstract
    ok = (isinstance(a, AArray) and isinstance(b, AArray) and a.ndim == 2 and b.ndim == 2
          and a.dtype == b.dtype == out.dtype and n.abstract == out)
    return (n.inputs[1], n.inputs[2], alpha) if ok else None


def accumulate_products(g: Graph) -> int:
    """Rewrite ``g`` 's own ``x + a @ b``, ``a @ b + x``, ``x - a @ b`` (a product
    possibly scaled by a number) in place into ``matmul_acc(a, b, x, alpha)``; returns
    how many.  Nodes keep their identity (their users and the loop bodies or calls they
    feed are untouched)."""
    mng = Manager(g)
    users = mng.users
    changed = 0
    for n in schedule(g, mng.owned.get(g, [])):
        if not is_prim(n, "add", "sub"):
            continue
        out = n.abstract
        if not isinstance(out, AArray) or out.ndim != 2 or out.dtype not in _DTYPES:
            continue
        x, y = n.inputs[1], n.inputs[2]
        # fold the right operand where both are products: the sum's order stays x + y
        right = _product(y, out, users)
        if right is not None and _accumulator(x, out):
            a, b, alpha = right
            acc = x
            if is_prim(n, "sub"):
                alpha = -alpha
        elif is_prim(n, "add") and _accumulator(y, out) and (
                left := _product(x, out, users)) is not None:
            a, b, alpha = left
            acc = y
        else:
            continue
        n.inputs = [Constant(P.matmul_acc), a, b, acc, Constant(alpha)]
        changed += 1
    return changed


def _accumulator(x: Node, out: AArray) -> bool:
    """Can ``x`` be GEMM's ``C``: an array value (not a constant) of the sum's type?"""
    return not isinstance(x, Constant) and getattr(x, "abstract", None) == out

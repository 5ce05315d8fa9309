"""Sums of matrix products accumulate in one buffer: ``x + a @ b`` -> ``matmul_acc(a, b, x)``.

A reverse pass through an unrolled loop sums a product per step -- a weight's gradient
``dW = h_0.T @ g_0 + h_1.T @ g_1 + ...``, a state's ``dy = dy' + g @ W.T + ...``.  Left
as ``add`` nodes, the sums become fused elementwise kernels reading every product's
buffer: one kernel per distinct way the sums are grouped (each a separate LLVM module to
optimize, the largest cost of such a program's first call), and a buffer per product.
GEMM computes ``C = A @ B + beta * C``: with ``beta = 1`` a product accumulates into
the sum so far, so a chain of sums of products is a chain of GEMM calls and no kernel.

The rewrite keeps the order of the sum: ``(x + p1) + p2`` becomes ``acc(p2, acc(p1,
x))``, each step adding one product to the sum so far (GEMM adds the product to ``C``
as it computes it, so the last bits may differ from adding a stored product: float
rounding).  A product is folded only where nothing else reads it (else it would be
computed twice); ``x`` must already have the product's dtype and shape (no broadcast).
Native code writes the accumulation in place where ``x`` has no other reader, else
into a copy (``myc.backends.cpu.loopgen``).

It runs at lowering, for backends whose host code has GEMM with ``beta``
(``Target.gemm_accumulate``): the CPU's.  ``MYC_NO_GEMM_ACC=1`` turns it off (to
measure it).
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


def _product(n: Node, out: AArray, users: dict) -> bool:
    """Is ``n`` a 2-d float matrix product of ``out`` 's type that only one node reads?"""
    if not is_prim(n, "matmul") or len(users.get(n, ())) != 1:
        return False
    a, b = n.inputs[1].abstract, n.inputs[2].abstract
    return (isinstance(a, AArray) and isinstance(b, AArray) and a.ndim == 2 and b.ndim == 2
            and a.dtype == b.dtype == out.dtype and n.abstract == out)


def accumulate_products(g: Graph) -> int:
    """Rewrite ``g`` 's own ``add(x, a @ b)`` nodes (either order) in place into
    ``matmul_acc(a, b, x)``; returns how many.  Nodes keep their identity (their users
    and the loop bodies or calls they feed are untouched)."""
    mng = Manager(g)
    users = mng.users
    changed = 0
    for n in schedule(g, mng.owned.get(g, [])):
        if not is_prim(n, "add"):
            continue
        out = n.abstract
        if not isinstance(out, AArray) or out.ndim != 2 or out.dtype not in _DTYPES:
            continue
        x, y = n.inputs[1], n.inputs[2]
        # fold the right operand where both are products: the sum's order stays x + y
        if _product(y, out, users) and _accumulator(x, out):
            prod_, acc = y, x
        elif _product(x, out, users) and _accumulator(y, out):
            prod_, acc = x, y
        else:
            continue
        n.inputs = [Constant(P.matmul_acc), prod_.inputs[1], prod_.inputs[2], acc]
        changed += 1
    return changed


def _accumulator(x: Node, out: AArray) -> bool:
    """Can ``x`` be GEMM's ``C``: an array value (not a constant) of the sum's type?"""
    return not isinstance(x, Constant) and getattr(x, "abstract", None) == out

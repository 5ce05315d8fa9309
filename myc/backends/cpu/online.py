"""One pass over a row for a logsumexp (an "online" row max): which kernels qualify.

A logsumexp or softmax cross-entropy reads its row twice: the row maximum ``m`` first
(a ``RowReduce``), then ``sum(exp(x - m))`` in the row's main loop.  When every
reduction in that main loop depends on ``m`` only in one of the shapes below, the
backend instead walks the row once, in blocks of :data:`BLOCK` elements: the block's
maximum, the running maximum ``m'`` updated, then the block's terms against ``m'``, and
the totals so far brought to the new maximum once per block:

* ``exp``: ``sum(exp(x - m))``: the total so far is multiplied by ``exp(m_old - m')``
  (computed in float64), or dropped while the row so far is all ``-inf`` (its terms
  are then ``exp(-inf - m') = 0`` once ``m'`` is finite; a row that stays all ``-inf``
  still gets the NaN of ``exp(-inf + inf)`` from its last block);
* ``count``: ``sum(where(x == m, c, 0))`` (the tie count of the max's gradient): kept
  while the maximum is unchanged, dropped when it grows (no earlier element equals the
  new maximum);
* anything that does not read ``m`` accumulates as before.

``x`` must be the max's own operand, so every term is at most ``m'`` (or NaN, which
makes ``m'`` NaN and every total NaN, as the two-pass code gives).  The rows of a
4096x1024 float32 array are already L1-resident for the second pass, so what this saves
is a second walk over the row's 4 KB, not memory traffic.

Off unless ``MYC_ONLINE_LSE=1``: on the 2-core AMD EPYC (Zen 3) it took W7f from 4.9
to 4.3 ms (minimum CPU time, one thread), but the next-row prefetch (``prefetch.py``,
on by default) alone did as well or better on W7f, W7, W3 and a softmax, and the two
together no better than the prefetch (docs/benchmarks.md has the figures).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from myc.lower.kernel import (
    FLOATS,
    Binary,
    Cast,
    Const,
    Expr,
    Reduce,
    RowReduce,
    Select,
    Unary,
    postorder,
)

BLOCK = 256  # elements per block: the row read once, one rescale per block (measured)


def enabled() -> bool:
    """The switch (part of every kernel's cache key)."""
    return bool(os.environ.get("MYC_ONLINE_LSE"))


@dataclass(frozen=True)
class Online:
    """The row max read online and how each total follows the running maximum
    (``"exp"``, ``"count"``, or ``"free"``: it does not read it), by output index for
    the row's main loop or, with ``prepass``, by node for the row reductions of the
    next level (a softmax's sum, whose main loop then stores with the final values)."""

    m: RowReduce
    kinds: dict
    prepass: bool = False


def _reads(e: Expr, m: RowReduce) -> bool:
    return m in postorder([e])


def _classify(e: Expr, m: RowReduce) -> str | None:
    if not _reads(e, m):
        return "free"
    if (isinstance(e, Unary) and e.op == "exp" and isinstance(e.x, Binary)
            and e.x.op == "sub" and e.x.x == m.x and e.x.y == m):
        return "exp"
    if isinstance(e, Cast) and e.dtype in FLOATS:
        e = e.x
    if (isinstance(e, Select) and isinstance(e.y, Const) and e.y.value == 0
            and not _reads(e.x, m) and isinstance(e.cond, Binary) and e.cond.op == "eq"
            and {e.cond.x, e.cond.y} == {m, m.x}):
        return "count"
    return None


def _kind(op: str, e: Expr, m: RowReduce) -> str | None:
    k = _classify(e, m)
    if k is None or (k != "free" and (op != "sum" or e.dtype not in FLOATS)):
        return None
    return k


def plan_online(levels: list[list[RowReduce]], outs: list, modes: list[str],
                precomputed: dict[int, RowReduce], trig: bool) -> Online | None:
    """The online form of a kernel whose first level of row reductions is one float
    max, and either no other level and a main loop of reductions along the row only
    (``modes`` all "inner"), or one more level of reductions of the shapes above; None
    when it does not apply."""
    if not enabled() or trig or not levels or len(levels) > 2 or len(levels[0]) != 1:
        return None
    m = levels[0][0]
    if m.op != "max" or m.dtype not in FLOATS:
        return None
    kinds: dict = {}
    if len(levels) == 2:
        for n in levels[1]:
            kinds[n] = _kind(n.op, n.x, m)
            if kinds[n] is None:
                return None
        return Online(m, kinds, prepass=True) if "exp" in kinds.values() else None
    for i, (out, mode) in enumerate(zip(outs, modes, strict=True)):
        if mode != "inner" or not isinstance(out, Reduce):
            return None
        if i in precomputed:
            if precomputed[i] != m:
                return None
            continue
        kinds[i] = _kind(out.op, out.expr, m)
        if kinds[i] is None:
            return None
    return Online(m, kinds) if "exp" in kinds.values() else None

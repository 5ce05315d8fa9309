"""Software prefetch of the next row, for kernels that walk a row more than once.

A kernel with row reductions (a softmax, a logsumexp) reads each row in its prepass,
then again from L1 in its main loop: while the main loop computes (``exp`` per element
is compute-bound), nothing loads; the next row then starts with a cold read.  The
hardware prefetchers do not help at that point when a row is a page (1024 float32):
they stop at 4 KB page boundaries.  So at the start of each row the kernel asks for
the next one, a cache line at a time, and the loads meet the computation of the row
before.

Only rows of a known length up to :data:`MAX_BYTES` (longer rows keep the hardware
prefetcher busy within themselves) and loads that walk rows contiguously.

Off by default; ``MYC_ROW_PREFETCH=1`` turns it on.  On the 2-core AMD EPYC (Zen 3) it
took W7f from 4.9 to 4.1 ms with one thread pinned (minimum CPU time, means over four
runs on a loaded machine), but with the harness's two threads on the idle machine it
made W7f 18% and W7 8% slower than without it (three interleaved ``--baseline
--baseline-symmetric`` runs each; docs/benchmarks.md): two threads' prefetches compete
for the memory bandwidth the max pass already saturates.
"""

from __future__ import annotations

import os

from llvmlite import ir

from myc.backends.cpu.emit import I32, I64, PTR, declare

LINE = 64
MAX_BYTES = 16384


def enabled() -> bool:
    """The switch (part of every kernel's cache key)."""
    return bool(os.environ.get("MYC_ROW_PREFETCH"))


def next_row(b: ir.IRBuilder, rows: list[tuple[ir.Value, int, int, ir.Type]], n: int) -> None:
    """Prefetch (for reading, into all cache levels) the ``n`` elements that follow
    each row pointer by its row stride; ``rows``: (row pointer, row stride in elements,
    item size, element type).  A prefetch never faults, so the row after the last one
    (past the end of the array) needs no test."""
    fn = declare(b.module, "llvm.prefetch.p0", ir.VoidType(), [PTR, I32, I32, I32])
    for ptr, stride, size, ty in rows:
        if n * size > MAX_BYTES:
            continue
        nxt = b.gep(ptr, [ir.Constant(I64, stride)], source_etype=ty)
        for c in range(0, n * size, LINE):
            at = b.gep(nxt, [ir.Constant(I64, c // size)], source_etype=ty)
            b.call(fn, [at, ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)])

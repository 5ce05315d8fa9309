"""GEMM on myc's threads: BLAS called single-threaded on row blocks that myc's own
threads own, so a native program never wakes a second thread pool.

NumPy's OpenBLAS runs a pool of its own whose workers spin for a while after each call.
With myc's kernel threads and those workers both asking for every core, a machine where
another process keeps one core busy stalled the W4 MLP step 3-6x (a spinning worker holds
the core a kernel thread is waiting for).  Here a float product of a native program is
split by rows of its result into one block per thread (``kernel_calls.run_pieces``, the
threads kernels use), and each block is one CBLAS call made with the calling thread's
BLAS thread count set to 1 (OpenBLAS's ``openblas_set_num_threads_local``, restored
after the call), so the product never starts OpenBLAS workers.  The user's own NumPy
calls keep their OpenBLAS settings: the count is per thread and put back.

Where the library lacks ``openblas_set_num_threads_local`` (OpenBLAS before 0.3.27) GEMM
is called as before, once, with OpenBLAS's own threads.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os

import numpy as np
from llvmlite import ir

from myc.backends.cpu import kernel_calls, native_ops
from myc.backends.cpu.emit import I32, I64, PTR

SET_LOCAL = "openblas_set_num_threads_local"
MIN_FLOPS = 1 << 18  # below this a product runs as one block on the calling thread


@functools.cache
def openblas_address(name: str) -> int | None:
    """Address of the function ``name`` in NumPy's bundled OpenBLAS, or None."""
    where = os.path.dirname(np.__file__) + ".libs"
    try:
        libs = [os.path.join(where, f) for f in sorted(os.listdir(where))
                if f.startswith("libscipy_openblas") and ".so" in f]
    except OSError:
        return None
    for path in libs:
        try:
            fn = getattr(ctypes.CDLL(path), name)
        except (OSError, AttributeError):
            continue
        return ctypes.cast(fn, ctypes.c_void_p).value
    return None


def set_local_address() -> int | None:
    """Address of ``openblas_set_num_threads_local`` (OpenBLAS 0.3.27+), or None."""
    return openblas_address(SET_LOCAL)


def row_blocks(rows: int, m: int, k: int, nthreads: int) -> list[tuple[int, int]]:
    """``[begin, end)`` row blocks of a ``rows x k @ k x m`` product, one per thread at
    most; one block when the product is small."""
    n = min(nthreads, rows) if rows * m * k >= MIN_FLOPS else 1
    bounds = [rows * i // n for i in range(n + 1)]
    return [(b, e) for b, e in itertools.pairwise(bounds) if e > b]


def threaded_gemm(b: ir.IRBuilder, entry: ir.Block, symbols: dict, gemm: ir.Function,
                  flags: list[ir.Constant], ft: ir.Type, ty: ir.Type, rows: int, m: int,
                  k: int, pa: ir.Value, a_row: int, lda: int, pb: ir.Value, ldb: int,
                  dst: ir.Value, nthreads: int, alpha: float = 1.0, beta: float = 0.0) -> None:
    """``dst[rows, m] = alpha * op(A) @ op(B) + beta * dst`` as CBLAS calls on row blocks,
    each on one of
    myc's threads with BLAS single-threaded; row ``i`` of ``op(A)`` starts ``i * a_row``
    elements into ``pa`` (``k`` as stored, 1 when A is read transposed)."""
    module = b.module
    set_local = module.globals.get(SET_LOCAL)
    if set_local is None:
        set_local = ir.Function(module, ir.FunctionType(I32, [I32]), SET_LOCAL)
        symbols[SET_LOCAL] = set_local_address()
    blocks = row_blocks(rows, m, k, nthreads)
    if len(blocks) == 1:  # one block: called in place (no wrapper, no argument array)
        old = b.call(set_local, [ir.Constant(I32, 1)])
        b.call(gemm, [*flags, ir.Constant(I64, rows), ir.Constant(I64, m), ir.Constant(I64, k),
                      ir.Constant(ft, alpha), pa, ir.Constant(I64, lda), pb, ir.Constant(I64, ldb),
                      ir.Constant(ft, beta), dst, ir.Constant(I64, m)])
        b.call(set_local, [old])
        return
    # one function per distinct call (shapes, flags), named by them: a recurrent net's
    # hundreds of same-shaped products share it, and the same program builds the same
    # text (the plan test)
    name = "myc.gemm." + "_".join(str(x) for x in (
        gemm.name, *(f.constant for f in flags), m, k, a_row, lda, ldb)) + (
        f"_{alpha!r}_{beta!r}".replace("-", "m") if (alpha, beta) != (1.0, 0.0) else "")
    fn = module.globals.get(name)
    if fn is None:
        fn = _gemm_function(module, name, set_local, gemm, flags, ft, ty, m, k, a_row,
                            lda, ldb, alpha, beta)
    with native_ops.at_entry(b, entry):
        arr = b.alloca(PTR, size=ir.Constant(I64, 3))
    for i, p in enumerate((pa, pb, dst)):
        b.store(p, b.gep(arr, [ir.Constant(I64, i)], source_etype=PTR))
    kernel_calls.run_pieces(b, entry, fn, blocks, arr, nthreads)


def _gemm_function(module: ir.Module, name: str, set_local: ir.Function,
                   gemm: ir.Function, flags: list[ir.Constant], ft: ir.Type, ty: ir.Type,
                   m: int, k: int, a_row: int, lda: int, ldb: int,
                   alpha: float = 1.0, beta: float = 0.0) -> ir.Function:
    """``fn(bufs, begin, end)``: rows ``[begin, end)`` of the product, BLAS on one thread."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64]), name)
    fn.linkage = "internal"
    g = ir.IRBuilder(fn.append_basic_block("entry"))
    bufs, begin, end = fn.args
    a_, b_, c_ = (g.load(g.gep(bufs, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
                  for i in range(3))
    old = g.call(set_local, [ir.Constant(I32, 1)])
    g.call(gemm, [*flags, g.sub(end, begin), ir.Constant(I64, m), ir.Constant(I64, k),
                  ir.Constant(ft, alpha), g.gep(a_, [g.mul(begin, ir.Constant(I64, a_row))],
                                              source_etype=ty),
                  ir.Constant(I64, lda), b_, ir.Constant(I64, ldb), ir.Constant(ft, beta),
                  g.gep(c_, [g.mul(begin, ir.Constant(I64, m))], source_etype=ty),
                  ir.Constant(I64, m)])
    g.call(set_local, [old])
    g.ret_void()
    return fn

"""Matrix products in native host programs and AOT libraries: a ``hostplan.Gemm`` (its
batch as ``np.matmul`` broadcasts it, planned by ``hostplan.gemm_op``), each product
emitted by ``gemm_emit`` (the JIT's: GEMM through NumPy's bundled OpenBLAS for floats,
the blocked loop nest for int64; AOT libraries': the blocked nest, sizes maybe
dynamic).  This module also says whether the JIT's native code computes a product (and
the transposes GEMM reads as a flag or ``strided_copy`` copies) as NumPy does.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np
from llvmlite import ir

from myc.backends.cpu import gemm_emit, kernel_calls, native_ops
from myc.backends.cpu.codegen import MEMTYPE
from myc.backends.cpu.emit import I64, Count
from myc.backends.cpu.runtime import num_threads
from myc.lower.hostplan import Gemm
from myc.prims.abstract import AArray, AScalar


def gemm_refusal(name: str, ins: list[Any], out: Any, op: Gemm | None = None) -> str | None:
    """Why native code cannot compute this product ``op`` (or transpose) the way NumPy
    does (float32/float64 through BLAS GEMM, int64 by a generated loop wrapping like
    NumPy's, batch dimensions broadcast as ``np.matmul`` broadcasts them: None where the
    shapes do not pair so, ``hostplan.gemm_op``); None where it can."""
    if any(not isinstance(a, AArray) for a in ins):
        return f"{name} of non-arrays"
    if name == "mT":
        if ins[0].ndim < 2 or not isinstance(out, AArray):
            return "a transpose of fewer than 2 dimensions"
        return None
    a, b = ins
    if not isinstance(out, (AArray, AScalar)) or a.dtype != b.dtype or a.dtype != out.dtype:
        return "a matmul of mixed dtypes"
    if name == "dot" and (a.ndim > 2 or b.ndim > 2):
        return "np.dot of more than 2 dimensions (it contracts unlike matmul)"
    if a.dtype == np.int64:
        pass
    elif a.dtype.kind != "f" or gemm_emit.blas_symbol(str(a.dtype)) is None:
        return "a matmul of this dtype (no BLAS GEMM, no integer loop)"
    if op is None:
        return "a matmul of shapes np.matmul does not pair this way"
    return None


def _batched(b: ir.IRBuilder, plan: Gemm, body) -> None:
    """``body(a_offset, b_offset, out_offset)`` (elements, i64 values) for every matrix of
    the broadcast batch, in order."""
    c = ir.Constant
    mat = plan.m * plan.n
    out_strides, acc = [], mat
    for d in reversed(plan.batch):
        out_strides.append(acc)
        acc *= d
    out_strides.reverse()

    def nest(d: int, ao, bo, oo) -> None:
        if d == len(plan.batch):
            body(ao, bo, oo)
            return

        def step(i):
            nest(d + 1, b.add(ao, b.mul(i, c(I64, plan.a_strides[d]))),
                 b.add(bo, b.mul(i, c(I64, plan.b_strides[d]))),
                 b.add(oo, b.mul(i, c(I64, out_strides[d]))))

        native_ops.counted(b, plan.batch[d], step, f"mm.b{d}")

    nest(0, c(I64, 0), c(I64, 0), c(I64, 0))


def gemm(b: ir.IRBuilder, module: ir.Module, symbols: dict, plan: Gemm, pa: ir.Value,
         pb: ir.Value, dst: ir.Value, ta: bool = False, tb: bool = False,
         entry: ir.Block | None = None, policy: Any = None,
         size: Callable[[Any], Count] = int) -> None:
    """``plan`` into ``dst`` (row-major, contiguous): ``dst = a @ b``, or with ``plan.acc``
    ``dst = alpha * a @ b + dst`` (the sum so far already in ``dst``; floats only).  An
    operand at ``pa``/``pb`` transposed (``ta``/``tb``) is the array with its last two
    axes read swapped (GEMM's transpose flag).  Each matrix of the batch is one product
    of ``gemm_emit`` (one in all when the right operand has no batch: the left batch is
    one tall matrix): floats through BLAS (``gemm_emit.Blas``), int64 by the blocked
    loop nest AOT libraries use (``gemm_emit.Blocked``), wrapping around like NumPy's
    -- or by ``policy`` (AOT libraries: the blocked nest for every dtype, no BLAS).  A
    static product: nothing is called when it is empty, ``k == 0`` gives zeros.
    ``size``: a dimension of ``plan`` as ``gemm_emit`` takes one (an AOT library's may
    be dynamic: computed)."""
    n, m, k = (size(d) for d in (plan.m, plan.n, plan.k))  # (rows, columns, depth)
    alpha, beta = (plan.alpha, 1.0) if plan.acc is not None else (1.0, 0.0)
    ty = MEMTYPE[plan.a.dtype]
    count = prod(plan.batch)
    static = all(isinstance(x, int) for x in (n, k, m))
    if static and count * n * m == 0:
        return
    assert (alpha, beta) == (1.0, 0.0) or plan.a.dtype[0] == "f", "an integer GEMM-accumulate"
    if static and k == 0 and beta:
        return  # adds nothing
    if static and k == 0:
        kernel_calls.fill(b, dst, ty, 0, count * n * m)
        return
    if policy is None:
        policy = gemm_emit.Blocked() if plan.a.dtype == "int64" else \
            gemm_emit.Blas(symbols, entry, num_threads())
    if plan.tall and not ta:  # (B.., n, k) @ (k, m): one (B*n, k) @ (k, m)
        policy.product(b, ty, pa, pb, dst, count * n, m, k, ta, tb, alpha, beta,
                       threaded=True)
        return

    def one(ao, bo, oo):
        policy.product(b, ty, b.gep(pa, [ao], source_etype=ty), b.gep(pb, [bo], source_etype=ty),
                       b.gep(dst, [oo], source_etype=ty), n, m, k, ta, tb, alpha, beta,
                       threaded=not plan.batch)

    _batched(b, plan, one)

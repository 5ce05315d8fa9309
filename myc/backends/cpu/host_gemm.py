"""Matrix products in native host programs: a batch as ``np.matmul`` broadcasts it, each
product emitted by ``gemm_emit`` (GEMM through NumPy's bundled OpenBLAS for floats, the
blocked loop nest AOT libraries use for int64).  The native generator (``loopgen``)
decides which steps these are; this module says whether native code computes them (and
the transposes GEMM reads as a flag or ``strided_copy`` copies) as NumPy does, and emits
the products.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from llvmlite import ir

from myc.backends.cpu import gemm_emit, kernel_calls, native_ops
from myc.backends.cpu.codegen import MEMTYPE
from myc.backends.cpu.emit import I64
from myc.backends.cpu.runtime import num_threads
from myc.prims.abstract import AArray, AScalar


def gemm_refusal(name: str, ins: list[Any], out: Any) -> str | None:
    """Why native code cannot compute this product (or transpose) the way NumPy does
    (float32/float64 through BLAS GEMM, int64 by a generated loop wrapping like NumPy's,
    batch dimensions broadcast as ``np.matmul`` broadcasts them); None where it can."""
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
    plan = _matmul_plan(a, b)
    if plan is None or tuple(out.shape) != plan.out_shape:
        return "a matmul of shapes np.matmul does not pair this way"
    return None


class _MatmulPlan:
    """A (batched) matrix product with every shape static: ``batch`` the broadcast batch
    dimensions, each operand's element stride per batch dimension (0 where it is
    broadcast), the matrices ``n x k`` times ``k x m``; a 1-d operand is a row (left) or
    column (right) matrix whose extra dimension the result drops."""

    def __init__(self, a: AArray, b: AArray):
        a2 = (1, *a.shape) if a.ndim == 1 else tuple(a.shape)
        b2 = (*b.shape, 1) if b.ndim == 1 else tuple(b.shape)
        self.n, self.k = a2[-2:]
        self.k2, self.m = b2[-2:]
        self.batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
        nb = len(self.batch)
        self.a_strides = _batch_strides(a2, nb)
        self.b_strides = _batch_strides(b2, nb)
        self.out_shape = (*self.batch, *((self.n,) if a.ndim > 1 else ()),
                          *((self.m,) if b.ndim > 1 else ()))
        # a 2-d right operand: the batch of left matrices is one tall matrix
        self.tall = b.ndim <= 2 and a.ndim > 2

    @property
    def count(self) -> int:
        return prod(self.batch)


def _batch_strides(shape: tuple[int, ...], nb: int) -> tuple[int, ...]:
    """Element strides of a C-contiguous array's batch dimensions, right-aligned to
    ``nb`` broadcast batch dimensions (0 for a dimension it lacks or has of size 1)."""
    mat = shape[-1] * shape[-2]
    own = shape[:-2]
    strides, acc = [], mat
    for d in reversed(own):
        strides.append(0 if d == 1 else acc)
        acc *= d
    strides += [0] * (nb - len(own))
    return tuple(reversed(strides))


def _matmul_plan(a: AArray, b: AArray) -> _MatmulPlan | None:
    """The plan of ``a @ b``, or None when NumPy would refuse the shapes."""
    if a.ndim < 1 or b.ndim < 1:
        return None
    try:
        plan = _MatmulPlan(a, b)
    except ValueError:  # batch dimensions that do not broadcast
        return None
    return plan if plan.k == plan.k2 else None


def _batched(b: ir.IRBuilder, plan: _MatmulPlan, body) -> None:
    """``body(a_offset, b_offset, out_offset)`` (elements, i64 values) for every matrix of
    the broadcast batch, in order."""
    c = ir.Constant
    mat = plan.n * plan.m
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


def gemm(b: ir.IRBuilder, module: ir.Module, symbols: dict, a_op, b_op, dst, out,
         entry: ir.Block | None = None, alpha: float = 1.0, beta: float = 0.0) -> None:
    """``dst = alpha * a @ b + beta * dst`` (row-major, contiguous; batched as
    ``np.matmul`` broadcasts; ``beta`` 1 accumulates into what ``dst`` holds, ``alpha``
    other than 1 scales the product: floats only); an
    operand is ``(pointer, abstract value of the operand, transposed?)``: a transposed one
    is the array at ``pointer`` with its last two axes read swapped (GEMM's transpose
    flag).  Each matrix of the batch is one product of ``gemm_emit`` (one in all when
    the right operand has no batch: the left batch is one tall matrix): floats through
    BLAS (``gemm_emit.Blas``), int64 by the blocked loop nest AOT libraries use
    (``gemm_emit.Blocked``), wrapping around like NumPy's.  Nothing is called for an
    empty product; ``k == 0`` gives zeros."""
    pa, a, ta = a_op
    pb, bb, tb = b_op
    plan = _matmul_plan(a, bb)
    n, k, m = plan.n, plan.k, plan.m
    ty = MEMTYPE[str(np.dtype(a.dtype))]
    if plan.count * n * m == 0:
        return
    assert (alpha, beta) == (1.0, 0.0) or a.dtype.kind == "f", "an integer GEMM-accumulate"
    if k == 0 and beta:
        return  # adds nothing
    if k == 0:
        kernel_calls.fill(b, dst, ty, 0, plan.count * n * m)
        return
    policy = gemm_emit.Blocked() if a.dtype == np.int64 else \
        gemm_emit.Blas(symbols, entry, num_threads())
    if plan.tall and not ta:  # (B.., n, k) @ (k, m): one (B*n, k) @ (k, m)
        policy.product(b, ty, pa, pb, dst, plan.count * n, m, k, ta, tb, alpha, beta,
                       threaded=True)
        return

    def one(ao, bo, oo):
        policy.product(b, ty, b.gep(pa, [ao], source_etype=ty), b.gep(pb, [bo], source_etype=ty),
                       b.gep(dst, [oo], source_etype=ty), n, m, k, ta, tb, alpha, beta,
                       threaded=not plan.batch)

    _batched(b, plan, one)

"""Size limits of an ahead-of-time library: no size product may overflow 64 bits.

A caller can pass any ``int64_t`` as a size (a broadcast view of 2^31 x 2^31 float32
with zero strides is a valid NumPy array).  Every byte count, element count, stride
and offset the library computes is a polynomial in the dynamic sizes
(:class:`~myc.lower.dims.Dim`) or a product of one with a small bounded factor, so
the entry point evaluates, once and before anything is allocated, every polynomial
the program holds -- and every contiguous sub-product of every shape, scaled by 8
bytes (any stride or merged loop extent a kernel's plan derives) -- with overflow-
checked arithmetic, and every array's byte count against :data:`MAX_BYTES`.  Where
one overflows or is too big the call returns ``MYC_ERR_SHAPE`` with a message; the
unchecked evaluations later in the code then repeat checked ones, term by term in the
same order, so they cannot overflow either.  What is computed at run time from those
(the arena's total, a tape's growth, per-thread partials) uses the checked helpers
here too.  Static programs are checked in Python when they are built
(:func:`check_static`).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from math import prod

import numpy as np
from llvmlite import ir

from myc.backends.cpu.emit import I1, I64, checked
from myc.errors import MycError
from myc.lower.dims import Dim, SymFloat
from myc.lower.hostplan import ITEMSIZE, MAX_BYTES, KernelOp, Value

WIDEST = 8  # bytes: the widest element; strides and offsets are at most this per element


def _walk(prog) -> tuple[set[Dim], set[tuple], list[Value]]:
    """Every polynomial, every shape with a polynomial in it, and every value of
    ``prog`` (kernel IR and each kernel's loop plan included)."""
    from myc.backends.cpu.plan import make_plan

    dims: set[Dim] = set()
    shapes: set[tuple] = set()
    values: list[Value] = []
    seen: set[int] = set()
    stack: list = [prog]
    while stack:
        x = stack.pop()
        if isinstance(x, Dim):
            dims.add(x)
            continue
        if x is None or isinstance(x, (str, bytes, int, float, bool, SymFloat, np.generic)):
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, np.ndarray):
            if x.dtype == object and x.size == 1:
                stack.append(x.item())
            continue
        if isinstance(x, tuple) and any(isinstance(d, Dim) for d in x) \
                and all(isinstance(d, (int, Dim)) for d in x):
            shapes.add(x)
        if isinstance(x, (list, tuple, set, frozenset)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif is_dataclass(x) and not isinstance(x, type):
            if isinstance(x, Value):
                values.append(x)
            if isinstance(x, KernelOp):
                stack.append(make_plan(x.kernel))
            stack.extend(getattr(x, f.name) for f in fields(x))
    return dims, shapes, values


def _sub_products(shape: tuple) -> list:
    """Every product of contiguous axes of ``shape``, in bytes at the widest element."""
    out = []
    for i in range(len(shape)):
        for j in range(i + 1, len(shape) + 1):
            out.append(prod(shape[i:j]) * WIDEST)
    return out


def check_static(prog) -> None:
    """A statically sized program whose arrays do not fit in 64-bit byte counts (or are
    bigger than :data:`MAX_BYTES`): a :class:`MycError` now, not a wrapped size later."""
    _, _, values = _walk(prog)
    total = 0
    for v in values:
        if any(isinstance(d, Dim) for d in v.shape):
            continue
        nbytes = prod(v.shape) * ITEMSIZE[v.dtype]
        if nbytes > MAX_BYTES or any(p >= 1 << 63 for p in _sub_products(v.shape)):
            raise MycError(f"myc.aot: {prog.name}: the array {v.describe()} would take "
                           f"{nbytes} bytes; a library's arrays are at most 2^56 bytes")
        total += nbytes
    if total >= 1 << 63:
        raise MycError(f"myc.aot: {prog.name}: the program's arrays would take {total} "
                       "bytes in all, more than 64-bit sizes can count")


class LimitsMixin:
    """:class:`~myc.backends.cpu.aot_codegen.HostGen`'s overflow checks; uses its
    program ``p``, module ``m``, builder ``b``, bound sizes ``dims`` and ``check``."""

    def checked(self, op: str, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
        """``x op y`` (``op``: ``"sadd"``, ``"smul"``) and whether it overflowed."""
        return checked(self.b, op, x, y)

    def checked_dim(self, d: Dim) -> tuple[ir.Value, ir.Value]:
        """``d`` evaluated as ``emit_dim`` evaluates it (the same terms in the same
        order), and whether any step overflowed."""
        b = self.b
        bad: ir.Value = ir.Constant(I1, 0)
        total = None
        for mono, coef in d.terms().items():
            term: ir.Value = ir.Constant(I64, coef)
            for s in mono:
                term, o = self.checked("smul", term, self.dims[s])
                bad = b.or_(bad, o)
            if total is None:
                total = term
            else:
                total, o = self.checked("sadd", total, term)
                bad = b.or_(bad, o)
        return (total if total is not None else ir.Constant(I64, 0)), bad

    def check_sizes(self) -> None:
        """``MYC_ERR_SHAPE`` unless every size, stride and byte count of the program
        fits in 64 bits and every array in :data:`MAX_BYTES` (dynamic sizes only)."""
        if not self.dims:
            return
        b = self.b
        dims, shapes, values = _walk(self.p)
        for shape in shapes:
            dims.update(x for x in _sub_products(shape) if isinstance(x, Dim))
        bad: ir.Value = ir.Constant(I1, 0)
        for d in sorted(dims, key=repr):
            _, o = self.checked_dim(d)
            bad = b.or_(bad, o)
        limit = ir.Constant(I64, MAX_BYTES)
        for nbytes in sorted({v.nbytes for v in values if isinstance(v.nbytes, Dim)},
                             key=repr):
            val, o = self.checked_dim(nbytes)
            bad = b.or_(bad, b.or_(o, b.or_(b.icmp_signed(">", val, limit),
                                            b.icmp_signed("<", val, ir.Constant(I64, 0)))))
        names = sorted(self.dims)
        self.check(b.not_(bad), "MYC_ERR_SHAPE",
                   f"myc: {self.p.name}: sizes too large ("
                   + ", ".join(f"{s} = %lld" for s in names)
                   + "): an array of the program would take more than 2^56 bytes",
                   *(self.dims[s] for s in names))

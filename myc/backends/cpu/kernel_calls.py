"""Calls of compiled kernels from generated host code: one emitter for the JIT's native
programs (``loopgen``) and for ahead-of-time libraries (``aot_kernels``).

A kernel (``codegen``) is ``fn(bufs, begin, end)`` over its parallel range.  A call
fills the outputs a reduction reads first with its identity, runs the range on the
calling thread or split into chunks across threads -- every chunk with its own row of
buffer pointers, and outputs that several chunks reduce into (``OutPlan.shared``) with
one partial per chunk, combined after the join -- and a ``mean`` divides in place after
(:func:`scale`).  How the range is split and run is the policy, a :class:`Chunks`:

* :class:`Serial` -- one chunk on the calling thread;
* :class:`PoolChunks` (the JIT) -- chunks known when the program is built (constants: a
  bound table, partials already placed in the program's scratch), run on myc's
  process-wide pool (``threads.pool_call``);
* :class:`ForkJoin` (AOT) -- the chunk count read at run time (``MYC_NUM_THREADS``, the
  CPU count), bounds computed as ``threads.chunks`` computes them, partials ``malloc``-ed
  (a kernel runs serially when they cannot be), threads started for the call and joined
  (``threads.fork_join``: a library keeps no threads, it may be unloaded).

Counts and chunk numbers are Python ints where they are known when the code is built
(loops over chunks are then unrolled, fills of zeros are a ``memset``) and ``ir.Value``
otherwise.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from llvmlite import ir

from myc.backends.cpu import threads
from myc.backends.cpu.codegen import MEMTYPE, counted_loop
from myc.backends.cpu.emit import (
    I1,
    I8,
    I64,
    PTR,
    Count,
    Emitter,
    at_entry,
    counted,
    declare,
    i64,
    is_float,
)
from myc.lower.hostplan import KernelOp
from myc.lower.kernel import identity


def _bytes(ty: ir.Type) -> int:
    return getattr(ty, "width", None) // 8 if isinstance(ty, ir.IntType) else \
        {"float": 4, "double": 8, "half": 2}[str(ty)]


def _mul(b: ir.IRBuilder, x: Count, y: Count) -> Count:
    return x * y if isinstance(x, int) and isinstance(y, int) else \
        b.mul(i64(x), i64(y))


def _when(b: ir.IRBuilder, cond: ir.Value | bool, body) -> None:
    """``body()`` where ``cond`` holds (a Python ``True``: unconditionally)."""
    if cond is True:
        body()
    else:
        with b.if_then(cond):
            body()


def _each(b: ir.IRBuilder, n: Count, body, name: str, start: int = 0) -> None:
    """``body(c)`` for ``c in range(start, n)``: unrolled (``c`` a Python int) when ``n``
    is known."""
    if isinstance(n, int):
        for c in range(start, n):
            body(c)
    else:
        counted(b, n, body, name, start=start)


# -- the element loops around a call ----------------------------------------------------
def fill(b: ir.IRBuilder, ptr: ir.Value, ty: ir.Type, value: Any, count: Count) -> None:
    """``count`` elements of type ``ty`` at ``ptr`` set to ``value`` (a number, or an
    ``ir.Value`` of type ``ty``).  Zeros are one ``llvm.memset`` (as fast at every
    optimization level, and no element loop counted against compiling a program light:
    ``machine_code.compiled_light``)."""
    if isinstance(value, ir.Value):
        v = value
    else:
        v = ir.Constant(ty, float(value) if is_float(ty) else int(value))
    if isinstance(count, int) and count == 1:
        b.store(v, ptr)
        return
    if not isinstance(value, ir.Value) and value == 0 and not np.signbit(value) and (
            not isinstance(count, int) or count > 1):
        fn = declare(b.module, "llvm.memset.p0.i64", ir.VoidType(), [PTR, I8, I64, I1])
        b.call(fn, [ptr, ir.Constant(I8, 0), i64(_mul(b, count, _bytes(ty))),
                    ir.Constant(I1, 0)])
        return

    def body(j):
        b.store(v, b.gep(ptr, [j], source_etype=ty))

    counted(b, count, body, "fill")


def scale(b: ir.IRBuilder, ptr: ir.Value, ty: ir.Type, count: Count, div: Any) -> None:
    """``ptr[:count] /= div`` (a mean over an array result; ``div`` a number or an
    ``ir.Value`` of type ``ty``)."""
    d = div if isinstance(div, ir.Value) else ir.Constant(ty, float(div))

    def body(j):
        q = b.gep(ptr, [j], source_etype=ty)
        b.store(b.fdiv(b.load(q, typ=ty), d), q)

    counted(b, count, body, "mean")


def reduce_op(b: ir.IRBuilder, op: str, x, y, ty: ir.Type):
    """``op`` (``sum``, ``max``, ``min``) of two partial results of type ``ty``."""
    if ty == I8:  # bools, one byte each
        return b.or_(x, y) if op == "max" else b.and_(x, y) if op == "min" else b.add(x, y)
    if op == "sum":
        return b.fadd(x, y) if is_float(ty) else b.add(x, y)
    name = {("max", True): "llvm.maximum", ("min", True): "llvm.minimum",
            ("max", False): "llvm.smax", ("min", False): "llvm.smin"}[op, is_float(ty)]
    suffix = {"float": "f32", "double": "f64"}.get(str(ty), "i64")
    return b.call(declare(b.module, f"{name}.{suffix}", ty, [ty, ty]), [x, y])


def combine(b: ir.IRBuilder, out: ir.Value, partials: ir.Value, n: Count, count: Count,
            piece: Count, op: str, ty: ir.Type) -> None:
    """``out[j] = op(partial_0[j], ..., partial_{n-1}[j])``, partial ``c`` at ``c *
    piece`` bytes from ``partials``."""
    size = ir.Constant(I64, _bytes(ty))

    def body(j):
        def at(c: Count) -> ir.Value:
            return b.gep(partials, [b.add(i64(_mul(b, c, piece)), b.mul(j, size))],
                         source_etype=I8)

        acc = b.load(b.gep(partials, [j], source_etype=ty), typ=ty)
        if isinstance(n, int):
            for c in range(1, n):
                acc = reduce_op(b, op, acc, b.load(at(c), typ=ty), ty)
        else:
            acc = counted_loop(Emitter(b), ir.Constant(I64, 1), n, [acc], lambda c, carried: [
                reduce_op(b, op, carried[0], b.load(at(c), typ=ty), ty)], "comb")[0]
        b.store(acc, b.gep(out, [j], source_etype=ty))

    counted(b, count, body, "combine")


# -- the call ---------------------------------------------------------------------------
@dataclass
class KernelOut:
    """One output buffer of a kernel call: ``count`` elements of memory type ``ty`` at
    ``ptr``; ``op`` its reduction (``OutPlan.op``), ``identity`` that op's identity;
    ``init``: filled with it before the call; ``partial_init``: a partial starts from it
    (``OutPlan.init``); ``shared``: several chunks reduce into it (``OutPlan.shared``)."""
    ptr: ir.Value
    ty: ir.Type
    count: Count
    op: str | None = None
    identity: Any = None
    init: bool = False
    partial_init: bool = False
    shared: bool = False


class Chunks:
    """How a kernel's range is split and run (the policy of :func:`call_kernel`)."""
    n: Count  # chunks, once ``start`` has run
    entry: ir.Block | None = None  # where fixed-size stack arrays go (None: here)

    def start(self, b: ir.IRBuilder, outs: list[KernelOut]) -> ir.Value | bool:
        """Chooses the chunks and places the partials of ``outs``' shared outputs;
        whether they are placed (``True``, or a run-time flag: if not, one chunk)."""
        raise NotImplementedError

    def partial(self, b: ir.IRBuilder, i: int) -> tuple[ir.Value, Count]:
        """Output ``i``'s partials: where the first is, and the bytes from one to the
        next."""
        raise NotImplementedError

    def bounds(self, b: ir.IRBuilder) -> ir.Value:
        """``2n`` i64: chunk ``c`` is ``[bounds[2c], bounds[2c+1])``."""
        raise NotImplementedError

    def run(self, b: ir.IRBuilder, kernel: ir.Value, rows: ir.Value, bounds: ir.Value
            ) -> None:
        """``kernel(rows[c], bounds[2c], bounds[2c+1])`` for every chunk, returning once
        all are done."""
        raise NotImplementedError

    def finish(self, b: ir.IRBuilder) -> None:
        """After the partials are combined (frees what ``start`` allocated)."""


@dataclass
class Serial(Chunks):
    """The range ``[begin, end)`` as one call on the calling thread."""
    begin: Count
    end: Count
    entry: ir.Block | None = None


class PoolChunks(Chunks):
    """The JIT's policy: the chunks ``pieces`` (``threads.chunks``, made when the program
    is built) on up to ``nthreads`` threads of myc's pool; ``partials`` maps an output
    to its block of ``len(pieces)`` partials, placed by the program's planner."""

    def __init__(self, entry: ir.Block, pieces: list[tuple[int, int]],
                 partials: dict[int, ir.Value], nthreads: int):
        self.entry = entry
        self.pieces = pieces
        self.partials = partials
        self.nthreads = nthreads
        self.n = len(pieces)

    def start(self, b, outs):
        self.outs = outs
        return True

    def partial(self, b, i):
        o = self.outs[i]
        return self.partials[i], o.count * _bytes(o.ty)

    def bounds(self, b):
        return chunk_table(b.module, self.pieces)

    def run(self, b, kernel, rows, bounds):
        threads.pool_call(b, self.entry, kernel, rows, bounds, self.n,
                          min(self.nthreads, self.n))


class ForkJoin(Chunks):
    """AOT's policy: ``min(nthreads, extent)`` chunks when the kernel has more than
    ``PARALLEL_MIN`` elements (``total``), else one; 1-axis bounds aligned to ``align``;
    partials in one ``malloc``-ed block, 64-byte aligned pieces (its size checked for
    overflow with ``checked``: none, or no memory, and the kernel runs serially);
    threads started and joined here (``threads.fork_join``)."""

    def __init__(self, extent: ir.Value, total: ir.Value, nthreads: ir.Value, align: int,
                 malloc: ir.Function, free: ir.Function, checked):
        self.extent, self.total, self.nthreads, self.align = extent, total, nthreads, align
        self.malloc, self.free, self.checked = malloc, free, checked

    def start(self, b, outs):
        n = self.nthreads
        n = b.select(b.icmp_signed("<", self.extent, n), self.extent, n)
        n = b.select(b.icmp_signed(">", self.total, ir.Constant(I64, threads.PARALLEL_MIN)),
                     n, ir.Constant(I64, 1))
        shared = [i for i, o in enumerate(outs) if o.shared]
        self.pieces = {i: b.and_(b.add(i64(_mul(b, outs[i].count, _bytes(outs[i].ty))),
                                       ir.Constant(I64, 63)), ir.Constant(I64, -64))
                       for i in shared}
        self.offs, acc, over = {}, ir.Constant(I64, 0), ir.Constant(I1, 0)
        for i in shared:
            self.offs[i] = acc
            part, o1 = self.checked("smul", self.pieces[i], n)
            acc, o2 = self.checked("sadd", acc, part)
            over = b.or_(over, b.or_(o1, o2))
        if shared:  # partials too big to count: no block, the kernel runs serially
            acc = b.select(over, ir.Constant(I64, 0), acc)
            self.block = b.call(self.malloc, [b.add(acc, ir.Constant(I64, 1))])
            ok = b.and_(b.icmp_unsigned("!=", self.block, ir.Constant(PTR, None)),
                        b.not_(over))
            with b.if_then(over, likely=False):
                b.call(self.free, [self.block])
        else:
            self.block, ok = None, True
        self.n = n if ok is True else b.select(ok, n, ir.Constant(I64, 1))
        self.ok = ok
        return ok

    def partial(self, b, i):
        return b.gep(self.block, [self.offs[i]], source_etype=I8), self.pieces[i]

    def bounds(self, b):
        n, extent = self.n, self.extent
        align = ir.Constant(I64, self.align)
        table = b.alloca(I64, size=b.mul(n, ir.Constant(I64, 2)))

        def bound(c):
            # chunk c starts at (extent * c / n) rounded down to ``align``; the last ends
            # at extent (the JIT's bounds, ``threads.chunks``)
            q = b.sdiv(b.mul(extent, c), n)
            q = b.mul(b.sdiv(q, align), align)
            return b.select(b.icmp_signed(">=", c, n), extent,
                            b.select(b.icmp_signed(">", q, extent), extent, q))

        def each(c):
            two = b.mul(c, ir.Constant(I64, 2))
            b.store(bound(c), b.gep(table, [two], source_etype=I64))
            b.store(bound(b.add(c, ir.Constant(I64, 1))),
                    b.gep(table, [b.add(two, ir.Constant(I64, 1))], source_etype=I64))

        counted(b, n, each, "bounds")
        return table

    def run(self, b, kernel, rows, bounds):
        threads.fork_join(b, kernel, rows, bounds, self.n, self.n)

    def finish(self, b):
        if self.block is not None:
            _when(b, self.ok, lambda: b.call(self.free, [self.block]))


def chunk_table(module: ir.Module, pieces: list[tuple[int, int]]) -> ir.Value:
    """The constant ``[begin_0, end_0, begin_1, ...]`` of ``pieces`` (the same pieces
    share it)."""
    table = ir.ArrayType(I64, 2 * len(pieces))
    name = "myc.chunks." + hashlib.sha256(repr(pieces).encode()).hexdigest()[:16]
    bounds = module.globals.get(name)
    if bounds is None:
        bounds = ir.GlobalVariable(module, table, name)
        bounds.initializer = ir.Constant(table, [x for c in pieces for x in c])
        bounds.global_constant = True
        bounds.linkage = "private"
    return bounds


def _array(b: ir.IRBuilder, entry: ir.Block | None, ty: ir.Type, n: Count) -> ir.Value:
    """A stack array of ``n`` ``ty``: in ``entry`` (once per function) when given and
    ``n`` is known, else here."""
    if entry is not None and isinstance(n, int):
        with at_entry(b, entry):
            return b.alloca(ty, size=ir.Constant(I64, n))
    return b.alloca(ty, size=i64(n))


def call_kernel(b: ir.IRBuilder, kernel: ir.Value, ins: list[ir.Value],
                outs: list[KernelOut], extra: list[ir.Value], chunks: Chunks | None) -> None:
    """``kernel`` over its range as ``chunks`` splits and runs it, with the buffers
    ``[*ins, *outs, *extra]``; ``None``: nothing to run (an empty kernel), the outputs
    are only filled."""
    for o in outs:
        if o.init:
            fill(b, o.ptr, o.ty, o.identity, o.count)
    if chunks is None:
        return
    ptrs = [*ins, *(o.ptr for o in outs), *extra]
    nb = len(ptrs)
    if isinstance(chunks, Serial):
        row = _array(b, chunks.entry, PTR, nb)
        for j, p in enumerate(ptrs):
            b.store(p, b.gep(row, [ir.Constant(I64, j)], source_etype=PTR))
        b.call(kernel, [row, i64(chunks.begin), i64(chunks.end)])
        return
    ok = chunks.start(b, outs)
    n = chunks.n
    shared = {i: chunks.partial(b, i) for i, o in enumerate(outs) if o.shared}
    for i, (base, piece) in shared.items():  # partials of reductions read first
        o = outs[i]
        if not o.partial_init:
            continue
        if isinstance(n, int) and piece == _mul(b, o.count, _bytes(o.ty)):  # contiguous
            fill(b, base, o.ty, o.identity, _mul(b, n, o.count))
        else:
            _when(b, ok, lambda base=base, piece=piece, o=o: _each(b, n, lambda c: fill(
                b, b.gep(base, [i64(_mul(b, c, piece))], source_etype=I8), o.ty,
                o.identity, o.count), "part"))
    cells = _array(b, chunks.entry, PTR, _mul(b, n, nb))
    rows = _array(b, chunks.entry, PTR, n)

    def describe(c):  # chunk c's row of buffers (its partials) and where it is
        row = b.gep(cells, [i64(_mul(b, c, nb))], source_etype=PTR)
        for j, p in enumerate(ptrs):
            i = j - len(ins)
            if i in shared:
                base, piece = shared[i]
                at = b.gep(base, [i64(_mul(b, c, piece))], source_etype=I8)
                p = at if ok is True else b.select(ok, at, p)
            b.store(p, b.gep(row, [ir.Constant(I64, j)], source_etype=PTR))
        b.store(row, b.gep(rows, [i64(c)], source_etype=PTR))

    _each(b, n, describe, "chunk")
    chunks.run(b, kernel, rows, chunks.bounds(b))

    def combine_all():
        for i, (base, piece) in shared.items():
            o = outs[i]
            combine(b, o.ptr, base, n, o.count, piece, o.op, o.ty)

    if shared:
        _when(b, ok, combine_all)
    chunks.finish(b)


def outputs(op: KernelOp, plan: Any, ptrs: list[ir.Value], count, first,
            shared) -> list[KernelOut]:
    """The outputs of a kernel launch step (``hostplan.KernelOp``: AOT's, and the JIT's
    kernel steps' ``Step.host``) at ``ptrs``, each as the kernel's loop plan ``plan``
    describes it: memory type, reduction, identity.  What differs between the JIT and AOT
    is the chunk policy's, given here: ``count(v)`` (output ``v``'s element count: an
    int, or an ``ir.Value`` when dynamic), ``first(i, p)`` (output ``i`` filled with the
    identity before the call; ``p`` its ``OutPlan``) and ``shared(i, p)`` (several chunks
    reduce into it)."""
    return [KernelOut(ptr, MEMTYPE[v.dtype], count(v), p.op,
                      p.op and identity(p.op, v.dtype), first(i, p), p.init, shared(i, p))
            for i, (ptr, v, p) in enumerate(zip(ptrs, op.outputs, plan.outs, strict=True))]


def launch(b: ir.IRBuilder, kernel: ir.Value, ins: list[ir.Value], outs: list[KernelOut],
           extra: list[ir.Value], chunks: Chunks | None, divide_by: list[Any]) -> None:
    """A kernel launch step: the call (:func:`call_kernel`), then each output
    ``divide_by`` names divided in place by it (a ``mean``: ``KernelOp.divide_by`` as a
    number, an ``ir.Value`` of the output's type, or a function making one where the
    division is emitted; ``None``: not divided)."""
    call_kernel(b, kernel, ins, outs, extra, chunks)
    for o, div in zip(outs, divide_by, strict=True):
        if div is not None:
            scale(b, o.ptr, o.ty, o.count, div() if callable(div) else div)


def run_pieces(b: ir.IRBuilder, entry: ir.Block, fn: ir.Function,
               pieces: list[tuple[int, int]], row: ir.Value, nthreads: int) -> None:
    """``fn(row, begin, end)`` for every ``[begin, end)`` of ``pieces`` (fixed when the
    program is built), on myc's pool when there are several: the JIT's GEMM row blocks
    (``blas_threads``)."""
    if len(pieces) == 1:
        b.call(fn, [row, ir.Constant(I64, pieces[0][0]), ir.Constant(I64, pieces[0][1])])
        return
    rows = _array(b, entry, PTR, len(pieces))
    for c in range(len(pieces)):
        b.store(row, b.gep(rows, [ir.Constant(I64, c)], source_etype=PTR))
    threads.pool_call(b, entry, fn, rows, chunk_table(b.module, pieces), len(pieces),
                      min(nthreads, len(pieces)))

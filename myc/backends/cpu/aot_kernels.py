"""Fused kernels called from an ahead-of-time library's entry point.

A kernel (compiled by :mod:`myc.backends.cpu.codegen`) runs over its whole parallel
range: on the calling thread when it is small, else split into one chunk per thread as
the JIT splits it (``threads.chunks``; ``MYC_NUM_THREADS`` read at run time), with one
partial per chunk for outputs several chunks reduce into.  The threads are started for
the call and joined before the next step, by code from ``threads.fork_join`` (a
library keeps no threads between calls: it may be unloaded).  Reduction outputs
the kernel reads first are filled with the identity before, as ``runtime.py`` does,
and a ``mean`` divides its output in place after.
"""

from __future__ import annotations

from math import prod

from llvmlite import ir

from myc.backends.cpu import native_ops, threads
from myc.backends.cpu.codegen import ITEMSIZE, MEMTYPE, counted_loop, kernel_symbols
from myc.backends.cpu.emit import I8, I32, I64, PTR, const
from myc.backends.cpu.plan import make_plan
from myc.backends.cpu.threads import ALIGN as CHUNK_ALIGN
from myc.backends.cpu.threads import MAX_THREADS, PARALLEL_MIN
from myc.lower.dims import Dim
from myc.lower.hostplan import KernelOp
from myc.lower.kernel import identity


class KernelCallMixin:
    """:class:`~myc.backends.cpu.aot_codegen.HostGen`'s kernel calls; uses its builder
    ``b``, emitter ``e``, module ``m`` and size helpers."""

    def call_kernel(self, op: KernelOp, fn: ir.Function, ins: list, outs: list) -> None:
        b = self.b
        k = op.kernel
        plan = make_plan(k)
        size = prod(k.shape)
        obufs = k.output_buffers()
        for i, (ob, oplan) in enumerate(zip(obufs, plan.outs, strict=True)):
            if oplan.op and (oplan.init or isinstance(size, Dim) or size == 0):
                self.fill(outs[i], ob.dtype, prod(ob.shape), identity(oplan.op, ob.dtype))
        symbols = kernel_symbols(k)
        # a kernel with dynamic sizes reads their values from one more "buffer"
        extra = [self.sizes([Dim.symbol(s) for s in symbols])] if symbols else []
        if isinstance(size, Dim) or size > PARALLEL_MIN and plan.extent != 1:
            self.parallel_kernel(fn, plan, k, ins, outs, extra, size)
        elif size:
            ptrs = [*ins, *outs, *extra]
            aty = ir.ArrayType(PTR, len(ptrs))
            arr = b.alloca(aty)
            arr.type = PTR  # opaque, as llvmlite's typed pointers would not store a ptr
            for i, ptr in enumerate(ptrs):
                b.store(ptr, b.gep(arr, [ir.Constant(I64, 0), ir.Constant(I64, i)],
                                   source_etype=aty))
            b.call(fn, [arr, ir.Constant(I64, 0), self.i64(plan.extent)])
        for i, (ob, div) in enumerate(zip(obufs, op.divide_by, strict=True)):
            if div is not None:
                self.scale(outs[i], ob.dtype, prod(ob.shape), div)

    def thread_count(self) -> ir.Value:
        """Threads to split big kernels over: ``MYC_NUM_THREADS`` when set to a number,
        else the online CPUs (``sysconf``); at most ``MAX_THREADS``, at least 1."""
        if self.nthreads is not None:
            return self.nthreads
        b = self.b
        getenv = native_ops.declare(self.m, "getenv", PTR, [PTR])
        atol = native_ops.declare(self.m, "atol", I64, [PTR])
        sysconf = native_ops.declare(self.m, "sysconf", I64, [I32])
        env = b.call(getenv, [self.cstring("MYC_NUM_THREADS")])
        pre = b.block
        with b.if_then(b.icmp_unsigned("!=", env, ir.Constant(PTR, None))):
            parsed = b.call(atol, [env])
            got = b.block
        n = b.phi(I64)
        n.add_incoming(ir.Constant(I64, 0), pre)
        n.add_incoming(parsed, got)
        cpus = b.call(sysconf, [ir.Constant(I32, 84)])  # _SC_NPROCESSORS_ONLN
        n = b.select(b.icmp_signed(">", n, ir.Constant(I64, 0)), n, cpus)
        cap = ir.Constant(I64, MAX_THREADS)
        n = b.select(b.icmp_signed(">", n, cap), cap, n)
        n = b.select(b.icmp_signed("<", n, ir.Constant(I64, 1)), ir.Constant(I64, 1), n)
        self.nthreads = n
        return n

    def parallel_kernel(self, fn, plan, k, ins, outs, extra, size) -> None:
        """The kernel over its parallel range, split into chunks that run on threads
        (the JIT runtime's chunking: ``runtime.chunks``); outputs several chunks reduce
        into get one partial per chunk, combined after the join.  A big kernel runs
        serially where only one chunk is worth it, or when the partials cannot be
        allocated."""
        b, e = self.b, self.e
        extent = self.i64(plan.extent)
        total = self.i64(size)
        n = self.thread_count()
        n = b.select(b.icmp_signed("<", extent, n), extent, n)
        n = b.select(b.icmp_signed(">", total, ir.Constant(I64, PARALLEL_MIN)), n,
                     ir.Constant(I64, 1))
        obufs = k.output_buffers()
        shared = [i for i, op in enumerate(plan.outs) if op.shared]
        nb = len(ins) + len(outs) + len(extra)
        # partials: one block, per output n copies (64-byte aligned pieces)
        piece = {i: b.and_(b.add(self.i64(prod(obufs[i].shape) * ITEMSIZE[obufs[i].dtype]),
                                 ir.Constant(I64, 63)), ir.Constant(I64, -64))
                 for i in shared}
        offs, acc = {}, ir.Constant(I64, 0)
        over = ir.Constant(ir.IntType(1), 0)
        for i in shared:
            offs[i] = acc
            part, o1 = self.checked("smul", piece[i], n)
            acc, o2 = self.checked("sadd", acc, part)
            over = b.or_(over, b.or_(o1, o2))
        if shared:  # partials too big to count: no block, the kernel runs serially
            acc = b.select(over, ir.Constant(I64, 0), acc)
            block = b.call(self.malloc, [b.add(acc, ir.Constant(I64, 1))])
            ok = b.and_(b.icmp_unsigned("!=", block, ir.Constant(PTR, None)), b.not_(over))
            with b.if_then(over, likely=False):
                b.call(self.free, [block])
        else:
            block, ok = ir.Constant(PTR, None), ir.Constant(ir.IntType(1), 1)
        n = b.select(ok, n, ir.Constant(I64, 1))
        align = ir.Constant(I64, CHUNK_ALIGN if len(plan.dims) == 1 else 1)
        bufs = b.alloca(PTR, size=b.mul(n, ir.Constant(I64, nb)))
        rows = b.alloca(PTR, size=n)
        bounds = b.alloca(I64, size=b.mul(n, ir.Constant(I64, 2)))
        for i in shared:  # reductions that read their output start from the identity
            if plan.outs[i].init:
                with b.if_then(ok):
                    def fill_part(c, _, i=i):
                        at = b.gep(block, [b.add(offs[i], b.mul(c, piece[i]))], source_etype=I8)
                        self.fill(at, obufs[i].dtype, prod(obufs[i].shape),
                                  identity(plan.outs[i].op, obufs[i].dtype))
                        return []

                    counted_loop(e, ir.Constant(I64, 0), n, [], fill_part, "part")

        def bound(c):
            # chunk c starts at (extent * c / n) rounded down to ``align``; the last ends
            # at extent (the JIT's bounds, ``threads.chunks``)
            q = b.sdiv(b.mul(extent, c), n)
            q = b.mul(b.sdiv(q, align), align)
            return b.select(b.icmp_signed(">=", c, n), extent,
                            b.select(b.icmp_signed(">", q, extent), extent, q))

        def describe(c, _):  # chunk c's buffers (its partials) and range
            row = b.gep(bufs, [b.mul(c, ir.Constant(I64, nb))], source_etype=PTR)
            ptrs = list(ins)
            for i, o in enumerate(outs):
                if i in shared:
                    o = b.select(ok, b.gep(block, [b.add(offs[i], b.mul(c, piece[i]))],
                                           source_etype=I8), o)
                ptrs.append(o)
            ptrs += extra
            for j, ptr in enumerate(ptrs):
                b.store(ptr, b.gep(row, [ir.Constant(I64, j)], source_etype=PTR))
            b.store(row, b.gep(rows, [c], source_etype=PTR))
            two = b.mul(c, ir.Constant(I64, 2))
            b.store(bound(c), b.gep(bounds, [two], source_etype=I64))
            b.store(bound(b.add(c, ir.Constant(I64, 1))),
                    b.gep(bounds, [b.add(two, ir.Constant(I64, 1))], source_etype=I64))
            return []

        counted_loop(e, ir.Constant(I64, 0), n, [], describe, "chunk")
        threads.fork_join(b, fn, rows, bounds, n, n)
        if shared:
            with b.if_then(ok):
                for i in shared:
                    ty = MEMTYPE[obufs[i].dtype]
                    count = self.i64(prod(obufs[i].shape))
                    base = b.gep(block, [offs[i]], source_etype=I8)

                    def combine(j, _, i=i, ty=ty, base=base):
                        acc = b.load(b.gep(base, [j], source_etype=ty), typ=ty)

                        def more(c, carried):
                            at = b.gep(base, [b.add(b.mul(c, piece[i]), b.mul(
                                j, ir.Constant(I64, ITEMSIZE[obufs[i].dtype])))],
                                source_etype=I8)
                            return [native_ops.reduce_op(b, plan.outs[i].op, carried[0],
                                                         b.load(at, typ=ty), ty)]

                        acc = counted_loop(e, ir.Constant(I64, 1), n, [acc], more, "comb")[0]
                        b.store(acc, b.gep(outs[i], [j], source_etype=ty))
                        return []

                    counted_loop(e, ir.Constant(I64, 0), count, [], combine, "combine")
                b.call(self.free, [block])

    def fill(self, ptr, dtype: str, n, value) -> None:
        ty = MEMTYPE[dtype]
        c = value if isinstance(value, ir.Value) else \
            const(ty, int(value) if dtype == "bool" else value)
        b = self.b

        def body(i, _):
            b.store(c, b.gep(ptr, [i], source_etype=ty))
            return []

        counted_loop(self.e, ir.Constant(I64, 0), self.i64(n), [], body, "fill")

    def scale(self, ptr, dtype: str, n, div) -> None:
        ty = MEMTYPE[dtype]
        b = self.b
        d = b.sitofp(self.i64(div), ty) if isinstance(div, Dim) else const(ty, div)

        def body(i, _):
            q = b.gep(ptr, [i], source_etype=ty)
            b.store(b.fdiv(b.load(q, typ=ty), d), q)
            return []

        counted_loop(self.e, ir.Constant(I64, 0), self.i64(n), [], body, "mean")

"""Fused kernels called from an ahead-of-time library's entry point.

The launch itself is :func:`myc.backends.cpu.kernel_calls.launch` (its outputs described
from the ``KernelOp`` by ``kernel_calls.outputs``), the JIT's too; a library's policy is
:class:`~myc.backends.cpu.kernel_calls.ForkJoin`: a kernel runs on the calling thread
when it is small, else split into one chunk per thread as the JIT splits it
(``threads.chunks``; ``MYC_NUM_THREADS`` read at run time), the threads started for the
call and joined before the next step (a library keeps no threads between calls: it may be
unloaded).  Reduction outputs the kernel reads first -- or that a kernel of dynamic or no
size might not write -- are filled with the identity before, as ``runtime.py`` does, and a
``mean`` divides its output in place after.
"""

from __future__ import annotations

from math import prod

from llvmlite import ir

from myc.backends.cpu import kernel_calls
from myc.backends.cpu.codegen import kernel_symbols
from myc.backends.cpu.emit import I32, I64, PTR, declare
from myc.backends.cpu.kernel_calls import ForkJoin, Serial
from myc.backends.cpu.plan import make_plan
from myc.backends.cpu.threads import ALIGN as CHUNK_ALIGN
from myc.backends.cpu.threads import MAX_THREADS, PARALLEL_MIN
from myc.lower.dims import Dim
from myc.lower.hostplan import KernelOp


class KernelCallMixin:
    """:class:`~myc.backends.cpu.aot_codegen.HostGen`'s kernel calls; uses its builder
    ``b``, module ``m`` and size helpers."""

    def call_kernel(self, op: KernelOp, fn: ir.Function, ins: list, outs: list) -> None:
        b = self.b
        k = op.kernel
        plan = make_plan(k)
        size = prod(k.shape)
        dynamic = isinstance(size, Dim)
        kouts = kernel_calls.outputs(
            op, plan, outs, lambda v: self.size(prod(v.shape)),
            lambda i, p: bool(p.op and (p.init or dynamic or size == 0)),
            lambda i, p: p.shared)
        symbols = kernel_symbols(k)
        # a kernel with dynamic sizes reads their values from one more "buffer"
        extra = [self.sizes([Dim.symbol(s) for s in symbols])] if symbols else []
        if dynamic or size > PARALLEL_MIN and plan.extent != 1:
            chunks = ForkJoin(self.i64(plan.extent), self.i64(size), self.thread_count(),
                              CHUNK_ALIGN if len(plan.dims) == 1 else 1, self.malloc,
                              self.free, self.checked)
        else:
            chunks = Serial(0, plan.extent) if size else None
        kernel_calls.launch(b, fn, ins, kouts, extra, chunks, [
            (lambda div=div, ty=o.ty: b.sitofp(self.i64(div), ty)) if isinstance(div, Dim)
            else div for o, div in zip(kouts, op.divide_by, strict=True)])

    def thread_count(self) -> ir.Value:
        """Threads to split big kernels over: ``MYC_NUM_THREADS`` when set to a number,
        else the online CPUs (``sysconf``); at most ``MAX_THREADS``, at least 1."""
        if self.nthreads is not None:
            return self.nthreads
        b = self.b
        getenv = declare(self.m, "getenv", PTR, [PTR])
        atol = declare(self.m, "atol", I64, [PTR])
        sysconf = declare(self.m, "sysconf", I64, [I32])
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

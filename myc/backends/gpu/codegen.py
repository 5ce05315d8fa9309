"""Kernel IR to LLVM IR for a GPU: passes made of phases, one LLVM module per kernel.

A fusion group (``myc.lower.kernel.Kernel``) becomes these passes, launched in order
(the OpenCL backend's plan, ``myc.backends.opencl.codegen``, in LLVM form):

- one per row reduction (``RowReduce``), level by level: a block per row reduces the
  row into a row temporary that later passes read;
- one for all the ``Store`` outputs together: a thread per domain point (up to
  ``STORE_GRID`` blocks, then a grid-stride loop: several points a thread), every
  expression computed once for all of them;
- one per ``Reduce`` output: a block per output element reducing along the last axis
  (threads read consecutive elements, then a tree reduction in shared memory), or a
  thread per output element looping alone where the reduction does not run along the
  contiguous axis (neighbouring threads then read neighbouring elements); a long
  reduction into few outputs is split into pieces whose partial results a second pass
  reduces (``Pass.finish``).

Every pass is a list of **phases**: internal functions ``void(ptr args..., ptr shared,
i64 tid, i64 bid)`` with a block-wide barrier between consecutive phases, and values
crossing a barrier live in shared memory.  The GPU kernel (:func:`add_gpu_entries`) reads
the thread and block ids the target's way (``llvm.nvvm.read.ptx.sreg.*`` on NVPTX,
``llvm.amdgcn.workitem.id.x`` on AMDGPU: ``target.py``) and calls the phases with the
target's barrier between them; the emulator (``emulate.py``) calls the very same phase
functions from a serial loop over blocks, phases and threads on the host.  Phases are
target-neutral LLVM IR: the scalar code is the CPU backend's (``KernelGen``), its
transcendentals ``mathlib.py``'s (no libm, no intrinsic a GPU target cannot lower) and
an exact ``fmod`` (``fmod.py``) in place of ``frem``.  Reductions combine through
shared memory with a barrier between every level of the tree, never relying on a
warp's lockstep: correct for 32-wide warps and for AMD's 64- and 32-wide wavefronts.

Semantics are the reference's (``Kernel.reference``): NaN-propagating max/min, NumPy's
floor division and modulo, wrapping int64; float32 sums accumulate in float64, as the
CPU backend's do.  What is not covered (symbolic sizes) raises :class:`Unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from llvmlite import ir

from myc.backends.cpu import specfun as _specfun  # noqa: F401  (erf, gammaln, ...: joins the library)
from myc.backends.cpu.codegen import MEMTYPE, KernelGen
from myc.backends.cpu.emit import F32, F64, I1, I64, PTR, Emitter, V, const
from myc.backends.cpu.mathlib import MathLib
from myc.backends.gpu.fmod import fmod_function
from myc.backends.gpu.target import SHARED_ADDRSPACE, GpuTarget
from myc.lower.dims import Dim, SymFloat
from myc.lower.kernel import (
    Const,
    Expr,
    Kernel,
    Load,
    Reduce,
    RowReduce,
    Store,
    c_strides,
    identity,
    row_reductions,
)
from myc.prims.scalar import accumulator_dtype

BLOCK = 256  # threads per block (a power of two)
STORE_GRID = 2048  # blocks of a store pass at most (bigger domains: a grid-stride loop)
SPLIT_OUTPUTS = 64  # split a reduction with at most this many outputs...
SPLIT_MIN = 1 << 15  # ...and at least this many elements each
SPLIT_PIECES = 512
GROUP_MIN = 32  # a block per output element from this many elements per output
DTYPE_OF = {"float32": F32, "float64": F64, "int64": I64, "bool": I1}


class Unsupported(Exception):  # noqa: N818 - a control signal
    """A kernel this generator does not cover (the host program runs NumPy instead)."""


@dataclass
class Pass:
    """One GPU kernel: ``grid`` blocks of ``block`` threads running ``phases`` in order.

    ``args``: the buffers it takes, each ``(kind, index)`` with kind ``"in"`` (a kernel
    input), ``"row"`` (a row temporary), ``"partial"`` (the partials of output
    ``index``) or ``"out"`` (an output).  ``shared``: ``(memory dtype, elements)`` of its
    shared memory, or None.
    """

    name: str
    grid: int
    block: int
    args: list[tuple[str, int]]
    phases: list[str]
    shared: tuple[str, int] | None = None


@dataclass
class Plan:
    """The passes of a kernel and the temporaries they need."""

    kernel: Kernel
    passes: list[Pass]
    rows: list[tuple[str, int]]  # row temporaries: (dtype, elements)
    partials: dict[int, tuple[str, int]] = field(default_factory=dict)  # out -> (acc dtype, n)


def acc_dtype(op: str, dtype: str) -> str:
    """The accumulator's dtype (``myc.prims.scalar``: float32 sums add in float64)."""
    return accumulator_dtype(op, dtype)


def generate(kernel: Kernel, module: ir.Module) -> Plan:
    """Define the phase functions of ``kernel`` 's passes in ``module``; the plan says
    how to launch them (the caller adds the entries: :func:`add_gpu_entries`)."""
    return _Gen(kernel, module).plan()


class _Exprs(KernelGen):
    """The CPU backend's scalar code generation, indexing by a domain point instead of
    its loop plan, with GPU-safe ``fmod``."""

    def __init__(self, kernel: Kernel, module: ir.Module):  # noqa: D107 - no plan needed
        self.k = kernel
        self.module = module
        self.math = MathLib(module)
        self.mode = "full"
        self.rerun: list[V] = []
        self.sym_vals: dict = {}
        self.row_vals: dict = {}
        self.vals: dict[Expr, V] = {}
        self.idx: list[ir.Value] = []
        self.flat: ir.Value | None = None
        self.rowflat: ir.Value | None = None
        self.ptrs: list[ir.Value] = []  # the pass's buffer arguments
        self.row_ptr: dict[RowReduce, ir.Value] = {}

    def frem(self, a: V, b_: V) -> V:
        return self.e.call(fmod_function(self.module, a.ty), a, b_)

    def start(self, e: Emitter, idx: list[ir.Value], flat: ir.Value | None,
              rowflat: ir.Value | None) -> None:
        """Evaluate at domain point ``idx`` (``flat``: its C-order index, if known)."""
        self.e = e
        self.idx = idx
        self.flat = flat
        self.rowflat = rowflat
        self.vals = {}

    def load(self, node: Load) -> V:
        b = self.e.b
        buf = self.k.inputs[node.buffer]
        nd, nb = len(self.k.shape), len(buf.shape)
        axes = self.k.load_axes(node)
        if self.flat is not None and axes == tuple(range(nd - nb, nd)) \
                and tuple(buf.shape) == tuple(self.k.shape[nd - nb:]):
            n = prod(buf.shape)  # a trailing block of the domain: no index arithmetic
            off = self.flat if nb == nd else b.urem(self.flat, ir.Constant(I64, n))
        else:
            off = ir.Constant(I64, 0)
            for a, size, s in zip(axes, buf.shape, c_strides(buf.shape), strict=True):
                if size != 1:
                    off = b.add(off, b.mul(self.idx[a], ir.Constant(I64, s)))
        ptr = b.gep(self.ptrs[node.buffer], [off], source_etype=MEMTYPE[node.dtype])
        return self.e.v(self.from_mem(b.load(ptr, typ=MEMTYPE[node.dtype]), node.dtype))

    def scalar(self, node: Expr) -> V:
        if isinstance(node, Const) and isinstance(node.value, Dim | SymFloat):
            raise Unsupported("symbolic sizes")
        if isinstance(node, RowReduce):
            b = self.e.b
            ptr = b.gep(self.row_ptr[node], [self.rowflat], source_etype=MEMTYPE[node.dtype])
            return self.e.v(self.from_mem(b.load(ptr, typ=MEMTYPE[node.dtype]), node.dtype))
        return super().scalar(node)


def _sizes(kernel: Kernel) -> None:
    for d in (*kernel.shape, *(d for b in kernel.inputs for d in b.shape)):
        if isinstance(d, Dim):
            raise Unsupported("symbolic sizes")


class _Gen:
    def __init__(self, kernel: Kernel, module: ir.Module):
        _sizes(kernel)
        self.k = kernel
        self.module = module
        self.x = _Exprs(kernel, module)
        self.nd = len(kernel.shape)
        self.rows: list[tuple[str, int]] = []
        self.row_of: dict[RowReduce, int] = {}
        self.passes: list[Pass] = []

    # -- plan --------------------------------------------------------------------------
    def plan(self) -> Plan:
        k, nd = self.k, self.nd
        shape = list(k.shape)
        nrows = prod(shape[:-1]) if nd else 1
        partials: dict[int, tuple[str, int]] = {}
        for level in row_reductions([o.expr for o in k.outputs]):
            for r in level:  # (its pass reads the rows before it, not its own)
                j = len(self.rows)
                self.reduction(f"{k.name}_row{j}", r.op, r.x, [nd - 1], ("row", j))
                self.rows.append((r.dtype, nrows))
                self.row_of[r] = j
        stores = [o for o in k.outputs if isinstance(o, Store)]
        if stores:
            self.store_pass(stores)
        for out in sorted(k.outputs, key=lambda o: o.out_index):
            if not isinstance(out, Reduce):
                continue
            i = out.out_index
            n_out = prod(shape[a] for a in range(nd) if a not in out.axes)
            n_red = prod(shape[a] for a in out.axes)
            if n_out <= SPLIT_OUTPUTS and n_red >= SPLIT_MIN:
                pieces = min(SPLIT_PIECES, n_red // 1024)
                at = acc_dtype(out.op, out.expr.dtype)
                partials[i] = (at, n_out * pieces)
                self.reduction(f"{k.name}_out{i}", out.op, out.expr, list(out.axes),
                               ("partial", i), pieces)
                self.finish(f"{k.name}_fin{i}", out.op, at, out.expr.dtype, n_out, pieces, i)
            else:
                self.reduction(f"{k.name}_out{i}", out.op, out.expr, list(out.axes), ("out", i))
        return Plan(k, self.passes, self.rows, partials)

    def base_args(self) -> list[tuple[str, int]]:
        return [("in", i) for i in range(len(self.k.inputs))] + \
            [("row", j) for j in range(len(self.rows))]

    # -- functions ---------------------------------------------------------------------
    def phase(self, name: str, nargs: int) -> tuple[ir.Function, Emitter]:
        """A new phase function and an emitter at its entry; arguments: ``nargs``
        buffers, the shared memory, the thread id and the block id."""
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR] * (nargs + 1)
                                                      + [I64, I64]), name)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        e = Emitter(ir.IRBuilder(fn.append_basic_block("entry")))
        self.x.e = e
        return fn, e

    def bind(self, fn: ir.Function, args: list[tuple[str, int]]) -> None:
        """Point the expression generator at ``fn`` 's buffer arguments."""
        nin = len(self.k.inputs)
        self.x.ptrs = list(fn.args[:nin])
        self.x.row_ptr = {r: fn.args[nin + j] for r, j in self.row_of.items()
                          if ("row", j) in args}

    def unflatten(self, b: ir.IRBuilder, flat: ir.Value, dims: list[int],
                  axes: list[int], idx: list) -> None:
        for a, s in zip(axes, c_strides(tuple(dims)), strict=True):
            if prod(dims) == 0:
                idx[a] = ir.Constant(I64, 0)
                continue
            q = b.udiv(flat, ir.Constant(I64, s)) if s != 1 else flat
            dim = dims[axes.index(a)]
            idx[a] = b.urem(q, ir.Constant(I64, dim)) if a != axes[0] else q

    def rowflat(self, b: ir.IRBuilder, idx: list) -> ir.Value | None:
        if self.nd < 2:
            return None
        off = ir.Constant(I64, 0)
        for a, s in zip(range(self.nd - 1), c_strides(tuple(self.k.shape[:-1])), strict=True):
            off = b.add(off, b.mul(idx[a], ir.Constant(I64, s)))
        return off

    # -- stores ------------------------------------------------------------------------
    def store_pass(self, stores: list[Store]) -> None:
        k, nd = self.k, self.nd
        n = prod(k.shape)
        args = self.base_args() + [("out", o.out_index) for o in stores]
        name = f"{k.name}_store"
        fn, e = self.phase(f"{name}.p0", len(args))
        self.bind(fn, args)
        b = e.b
        tid, bid = fn.args[-2], fn.args[-1]
        # a grid-stride loop: at most STORE_GRID blocks, each thread taking every
        # (grid x block)-th point from its own (several points a thread on big domains)
        grid = max(1, min(STORE_GRID, -(-n // BLOCK)))
        g0 = b.add(b.mul(bid, ir.Constant(I64, BLOCK)), tid)
        entry = b.block
        head = fn.append_basic_block("head")
        body = fn.append_basic_block("body")
        exit_ = fn.append_basic_block("exit")
        b.branch(head)
        b.position_at_end(head)
        g = b.phi(I64)
        g.add_incoming(g0, entry)
        b.cbranch(b.icmp_unsigned("<", g, ir.Constant(I64, n)), body, exit_)
        b.position_at_end(body)
        idx: list = [None] * nd
        self.unflatten(b, g, list(k.shape), list(range(nd)), idx)
        rowflat = b.udiv(g, ir.Constant(I64, k.shape[-1])) if nd >= 2 and n else None
        self.x.start(e, idx, g, rowflat)
        base = len(self.base_args())
        for j, out in enumerate(stores):
            v = self.x.expr(out.expr)
            dt = out.expr.dtype
            ptr = b.gep(fn.args[base + j], [g], source_etype=MEMTYPE[dt])
            b.store(self.x.to_mem(v, dt), ptr)
        g.add_incoming(b.add(g, ir.Constant(I64, grid * BLOCK)), b.block)
        b.branch(head)
        b.position_at_end(exit_)
        b.ret_void()
        self.passes.append(Pass(name, grid, BLOCK, args, [fn.name]))

    # -- reductions --------------------------------------------------------------------
    def combine(self, e: Emitter, op: str, acc: ir.Value, v: ir.Value) -> ir.Value:
        self.x.e = e
        return self.x.combine(op, acc, v, reassoc=False)

    def reduction(self, name: str, op: str, expr: Expr, red: list[int],
                  writes: tuple[str, int], pieces: int = 1) -> None:
        """A pass reducing ``expr`` over domain axes ``red`` into ``writes``: one result
        per kept index (times ``pieces`` partials, each over an interleaved share)."""
        k, nd = self.k, self.nd
        shape = list(k.shape)
        kept = [a for a in range(nd) if a not in red]
        n_out = prod(shape[a] for a in kept)
        n_red = prod(shape[a] for a in red)
        dt = expr.dtype
        at = acc_dtype(op, dt)
        dst_dt = at if writes[0] == "partial" else dt
        contiguous = nd - 1 in red
        group = BLOCK if n_red >= GROUP_MIN and (contiguous or pieces > 1) else 1
        args = self.base_args() + [writes]

        def value(e: Emitter, fn: ir.Function, o: ir.Value, t: ir.Value) -> ir.Value:
            b = e.b
            idx: list = [None] * nd
            self.unflatten(b, o, [shape[a] for a in kept], kept, idx)
            self.unflatten(b, t, [shape[a] for a in red], red, idx)
            flat = None
            if kept == list(range(len(kept))):  # the reduced axes trail: flat index
                flat = b.add(b.mul(o, ir.Constant(I64, n_red)), t)
            self.x.start(e, idx, flat, self.rowflat(b, idx))
            v = self.x.expr(expr).v
            return e.fpext(e.v(v), F64).v if at != dt else v

        self.bind_reduction(name, op, at, dst_dt, n_out, n_red, pieces, group, args, value)

    def finish(self, name: str, op: str, at: str, dt: str, n_out: int, pieces: int,
               i: int) -> None:
        """The pass reducing output ``i`` 's partials (``pieces`` per element)."""
        args = [("partial", i), ("out", i)]

        def value(e: Emitter, fn: ir.Function, o: ir.Value, t: ir.Value) -> ir.Value:
            b = e.b
            off = b.add(b.mul(o, ir.Constant(I64, pieces)), t)
            ptr = b.gep(fn.args[0], [off], source_etype=MEMTYPE[at])
            return self.x.from_mem(b.load(ptr, typ=MEMTYPE[at]), at)

        group = BLOCK if pieces >= GROUP_MIN else 1
        self.bind_reduction(name, op, at, dt, n_out, pieces, 1, group, args, value,
                            own_args=True)

    def bind_reduction(self, name, op, at, dst_dt, n_out, n_red, pieces, group, args,
                       value, own_args: bool = False) -> None:
        """Emit the phases of a reduction pass.  ``value(e, fn, o, t)``: element ``t`` of
        output ``o`` 's range, in the accumulator's type."""
        aty = DTYPE_OF[at]
        ident = const(aty, identity(op, at))
        dst = len(args) - 1
        phases: list[str] = []

        def accumulate(e: Emitter, fn, o, lo, step) -> ir.Value:
            """acc over t = lo, lo + step, ... < n_red."""
            b = e.b
            pre = b.block
            loop = fn.append_basic_block("loop")
            done = fn.append_basic_block("done")
            b.cbranch(b.icmp_unsigned("<", lo, ir.Constant(I64, n_red)), loop, done)
            b.position_at_end(loop)
            t = b.phi(I64)
            acc = b.phi(aty)
            t.add_incoming(lo, pre)
            acc.add_incoming(ident, pre)
            v = value(e, fn, o, t)
            new = self.combine(e, op, acc, v)
            t2 = b.add(t, ir.Constant(I64, step))
            t.add_incoming(t2, b.block)
            acc.add_incoming(new, b.block)
            b.cbranch(b.icmp_unsigned("<", t2, ir.Constant(I64, n_red)), loop, done)
            last = b.block
            b.position_at_end(done)
            out = b.phi(aty)
            out.add_incoming(ident, pre)
            out.add_incoming(new, last)
            return out

        def store(e: Emitter, fn, where: ir.Value, v: ir.Value) -> None:
            b = e.b
            if dst_dt != at:  # a float32 sum added in float64
                v = b.fptrunc(v, DTYPE_OF[dst_dt])
            ptr = b.gep(fn.args[dst], [where], source_etype=MEMTYPE[dst_dt])
            b.store(self.x.to_mem(e.v(v), dst_dt), ptr)

        if group == 1:  # a thread per (output element, piece)
            fn, e = self.phase(f"{name}.p0", len(args))
            if not own_args:
                self.bind(fn, args)
            b = e.b
            tid, bid = fn.args[-2], fn.args[-1]
            g = b.add(b.mul(bid, ir.Constant(I64, BLOCK)), tid)
            body = fn.append_basic_block("body")
            exit_ = fn.append_basic_block("exit")
            b.cbranch(b.icmp_unsigned("<", g, ir.Constant(I64, n_out * pieces)), body, exit_)
            b.position_at_end(body)
            o = b.udiv(g, ir.Constant(I64, pieces)) if pieces > 1 else g
            lo = b.urem(g, ir.Constant(I64, pieces)) if pieces > 1 else ir.Constant(I64, 0)
            acc = accumulate(e, fn, o, lo, pieces)
            store(e, fn, g, acc)
            b.branch(exit_)
            b.position_at_end(exit_)
            b.ret_void()
            self.passes.append(Pass(name, max(1, -(-(n_out * pieces) // BLOCK)), BLOCK,
                                    args, [fn.name]))
            return
        # a block per (output element, piece): strided accumulation, then a tree in
        # shared memory, one phase per level (a barrier between levels)
        mem = MEMTYPE[at]
        fn, e = self.phase(f"{name}.p0", len(args))
        if not own_args:
            self.bind(fn, args)
        b = e.b
        shared, tid, bid = fn.args[-3], fn.args[-2], fn.args[-1]
        o = b.udiv(bid, ir.Constant(I64, pieces)) if pieces > 1 else bid
        lo = tid
        if pieces > 1:
            lo = b.add(b.mul(b.urem(bid, ir.Constant(I64, pieces)),
                             ir.Constant(I64, group)), tid)
        acc = accumulate(e, fn, o, lo, group * pieces)
        b.store(self.x.to_mem(e.v(acc), at), b.gep(shared, [tid], source_etype=mem))
        b.ret_void()
        phases.append(fn.name)
        s = group // 2
        level = 1
        while s >= 1:
            fn, e = self.phase(f"{name}.p{level}", len(args))
            b = e.b
            shared, tid, bid = fn.args[-3], fn.args[-2], fn.args[-1]
            body = fn.append_basic_block("body")
            exit_ = fn.append_basic_block("exit")
            b.cbranch(b.icmp_unsigned("<", tid, ir.Constant(I64, s)), body, exit_)
            b.position_at_end(body)
            pa = b.gep(shared, [tid], source_etype=mem)
            pb = b.gep(shared, [b.add(tid, ir.Constant(I64, s))], source_etype=mem)
            va = self.x.from_mem(b.load(pa, typ=mem), at)
            vb = self.x.from_mem(b.load(pb, typ=mem), at)
            r = self.combine(e, op, va, vb)
            if s == 1:  # thread 0 holds the block's result
                store(e, fn, bid, r)
            else:
                b.store(self.x.to_mem(e.v(r), at), pa)
            b.branch(exit_)
            b.position_at_end(exit_)
            b.ret_void()
            phases.append(fn.name)
            s //= 2
            level += 1
        self.passes.append(Pass(name, max(1, n_out * pieces), group, args, phases,
                                (at, group)))


# -- entries -----------------------------------------------------------------------------
def add_gpu_entries(module: ir.Module, plan: Plan, target: GpuTarget) -> None:
    """A GPU kernel per pass (``target`` 's entry): thread and block ids read once, its
    phases called in order with the target's barrier between them."""
    for p in plan.passes:
        fn = target.entry(module, p.name, len(p.args), p.block)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        tid = target.thread_id(module, b)
        bid = target.block_id(module, b)
        bufs = [a if a.type == PTR else b.addrspacecast(a, PTR) for a in fn.args]
        shared: ir.Value = ir.Constant(PTR, None)
        if p.shared is not None:
            dt, n = p.shared
            ty = ir.ArrayType(MEMTYPE[dt], n)
            g = ir.GlobalVariable(module, ty, f"{p.name}.shared", addrspace=SHARED_ADDRSPACE)
            g.linkage = "internal"
            g.initializer = ir.Constant(ty, ir.Undefined)
            g.align = 8
            shared = b.addrspacecast(g, PTR)
        for j, ph in enumerate(p.phases):
            if j:
                target.barrier(module, b)
            b.call(module.globals[ph], [*bufs, shared, tid, bid])
        b.ret_void()

"""Ahead-of-time code for the CPU backend: a statically shaped host program as one
exported C function, plus the fused kernels, in one LLVM module and one object file.

Input: a :class:`~myc.lower.hostplan.HostPlan` (the host program as data, made by
``myc/lower/planned.py``; its step kinds are described there).  :class:`HostGen` emits the
exported function (see ``docs/aot.md`` for the ABI): it checks its arguments, copies
non-contiguous inputs into one scratch arena (which also holds every intermediate, at
offsets computed from the sizes), runs the operations, and copies each output into a
``malloc``-ed buffer the caller owns.  No aborts: errors are status codes plus
``NAME_last_error()``.  :func:`build_object` links it with the kernels into an object.

This module owns the entry point's skeleton, the arena and the dispatch over
operations; the parts live in their own modules (the first four are mixins of
:class:`HostGen`, the loop emitters take it as an argument):

* :mod:`~myc.backends.cpu.aot_abi` -- argument checks, strided inputs, outputs, errors;
* :mod:`~myc.backends.cpu.aot_kernels` -- kernel calls (``kernel_calls``, the JIT's
  emitter, with threads started per call);
* :mod:`~myc.backends.cpu.gemm_emit` -- GEMM, as the cache-blocked loop nest (no BLAS at
  run time; the JIT's int64 products use it too);
* :mod:`~myc.backends.cpu.strided_copy` -- ``Permute`` steps and strided inputs copied
  (the JIT's transposes' and views' copy);
* :mod:`~myc.backends.cpu.aot_sizes` -- sizes, static or computed from dynamic ones;
* :mod:`~myc.backends.cpu.aot_limits` -- every size product checked for overflow;
* :mod:`~myc.backends.cpu.aot_loopgen` -- loops (``loop_emit``'s, the JIT's loop emitter,
  under AOT's policies), selects and tapes;

and :mod:`~myc.backends.cpu.aot_header` writes the library's C header.
"""

from __future__ import annotations

from math import prod

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from myc.backends.cpu import gemm_emit, host_gemm, jit, kernel_calls, loop_emit, strided_copy
from myc.backends.cpu.aot_abi import AbiMixin
from myc.backends.cpu.aot_kernels import KernelCallMixin
from myc.backends.cpu.aot_limits import LimitsMixin, check_static
from myc.backends.cpu.aot_loopgen import emit_check, emit_loop, emit_select, emit_tape_get
from myc.backends.cpu.aot_sizes import SizesMixin
from myc.backends.cpu.codegen import MEMTYPE, codegen, entry_name
from myc.backends.cpu.emit import I8, I32, I64, PTR, Emitter
from myc.lower.hostplan import (
    ITEMSIZE,
    Alias,
    Check,
    Gemm,
    HostPlan,
    KernelOp,
    LoopOp,
    Permute,
    Select,
    Tape,
    TapeGet,
    Value,
    is_size_const,
    stored_buffers,
    walk,
)
from myc.lower.hostplan import operands as _operands
from myc.lower.hostplan import results as _results

ALIGN = 64  # bytes: the arena's buffers and the static data


class HostGen(AbiMixin, KernelCallMixin, SizesMixin, LimitsMixin):
    """Emits the exported entry point and its helpers into ``module``."""

    def __init__(self, prog: HostPlan, module: ir.Module):
        self.p = prog
        self.m = module
        self.n_str = 0
        self.n_glob = 0
        self.malloc = ir.Function(module, ir.FunctionType(PTR, [I64]), "malloc")
        self.free = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
        self.memcpy = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), "memcpy")
        self.memset = ir.Function(module, ir.FunctionType(PTR, [PTR, I32, I64]), "memset")
        self.snprintf = ir.Function(module, ir.FunctionType(I32, [PTR, I64, PTR],
                                                            var_arg=True), "snprintf")
        self.errbuf = self.global_bytes(bytes(512), "myc_error_buffer", constant=False)
        self.arena = None
        self.realloc = ir.Function(module, ir.FunctionType(PTR, [PTR, I64]), "realloc")
        self.heap_cells: list[ir.Value] = []
        self.tapes: dict[int, dict] = {}  # id(Tape) -> its stack cells (aot_loopgen)
        # a failure is a status and a message (the JIT's bails out to Python instead)
        self.fail = loop_emit.Status(self.check)

    # ------------------------------------------------------------------ globals
    def global_bytes(self, data: bytes, name: str | None = None, constant: bool = True,
                     align: int = ALIGN) -> ir.Value:
        if name is None:
            name = f"myc.data.{self.n_glob}"
            self.n_glob += 1
        ty = ir.ArrayType(I8, max(len(data), 1))
        g = ir.GlobalVariable(self.m, ty, name)
        g.initializer = ir.Constant(ty, bytearray(data or b"\0"))
        g.global_constant = constant
        g.linkage = "internal"
        g.align = align
        g.type = PTR  # an opaque pointer, like every other pointer here
        return g

    def cstring(self, text: str) -> ir.Value:
        self.n_str += 1
        return self.global_bytes(text.encode() + b"\0", f"myc.str.{self.n_str}", align=1)

    def i64_array(self, values: list[int]) -> ir.Value:
        return self.global_bytes(np.asarray(values or [0], dtype=np.int64).tobytes(), align=8)

    # ------------------------------------------------------------------ entry point
    def build(self, kernel_fns: dict[str, ir.Function]) -> None:
        p = self.p
        self.build_support()
        fnty = ir.FunctionType(I32, [PTR, I32, PTR, I32])
        fn = ir.Function(self.m, fnty, p.name)
        ins, nin, outs, nout = fn.args
        self.fn = fn
        # the prologue holds the stack cells every exit path reads (heap pointers to
        # free, a tape's counters), initialized before anything can fail
        prologue = fn.append_basic_block("prologue")
        self.pro = ir.IRBuilder(prologue)
        b = self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.e = Emitter(b)
        self.nthreads = None  # read on first need (MYC_NUM_THREADS, else the CPU count)
        data, strided = self.check_args(ins, nin, outs, nout)
        all_ops = list(walk(p.ops))
        self.layout_arena()
        self.ptr_of: dict[int, ir.Value] = {}
        self.take_inputs(ins, data, strided)
        self.place_values(all_ops)
        if any(isinstance(op, LoopOp) for op in p.ops):
            self.thread_count()  # read once, outside every loop
        self.kernel_fns = kernel_fns
        self.emit_ops(p.ops)
        self.give_outputs(outs)
        if self.offsets:
            b.call(self.free, [self.arena])
        self.free_heap()
        b.ret(ir.Constant(I32, 0))
        self.pro.branch(fn.blocks[1])

    def layout_arena(self) -> None:
        """The arena: one allocation holding every buffer the plan stores
        (``hostplan.stored_buffers``), each at its offset (``self.offsets``)."""
        p, b = self.p, self.b
        offsets: dict[int, ir.Value] = {}
        total: ir.Value = ir.Constant(I64, 0)
        overflow: ir.Value = ir.Constant(ir.IntType(1), 0)

        def place(v: Value) -> None:
            nonlocal total, overflow
            if id(v) in offsets:
                return
            offsets[id(v)] = total
            size = self.i64(v.nbytes)  # at most MAX_BYTES (check_sizes)
            total, o = self.checked("sadd", total, b.add(size, ir.Constant(I64, ALIGN - 1)))
            total = b.and_(total, ir.Constant(I64, -ALIGN))
            overflow = b.or_(overflow, o)

        for v in stored_buffers(p):
            place(v)
        if offsets:
            self.check(b.not_(overflow), "MYC_ERR_ALLOC", f"myc: {p.name}: out of memory "
                       "(the program's arrays would take more than 2^63 bytes in all)")
            arena = b.call(self.malloc, [total])
            self.check(b.icmp_unsigned("!=", arena, ir.Constant(PTR, None)), "MYC_ERR_ALLOC",
                       f"myc: {p.name}: out of memory (allocating %lld bytes)", total)
        else:
            arena = ir.Constant(PTR, None)
        self.arena = arena
        self.offsets = offsets

    def place_values(self, all_ops: list) -> None:
        """Every buffer's address (and every constant filled from the sizes), computed
        here, before any loop or branch, so it is valid on every path after."""
        p, ptr_of = self.p, self.ptr_of
        for op in all_ops:
            if not isinstance(op, Alias):
                for v in _results(op):
                    ptr_of[id(v)] = self.at(v)
        for op in all_ops:
            if isinstance(op, Alias):
                ptr_of[id(op.out)] = self.get(op.src)
                continue
            for v in _operands(op):
                if not isinstance(v, Tape):
                    self.get(v)
        for op in all_ops:
            if isinstance(op, LoopOp):
                for v in (op.go_on, *op.next_state, *op.exits):
                    self.get(v)
        for v in p.outputs:
            self.get(v)

    def at(self, v: Value) -> ir.Value:
        """The address of ``v``'s place in the arena."""
        return self.b.gep(self.arena, [self.offsets[id(v)]], source_etype=I8)

    def get(self, v: Value) -> ir.Value:
        """The address of ``v``'s data: its buffer, or a constant's static data."""
        ptr_of = self.ptr_of
        got = ptr_of.get(id(v))
        if got is None:
            assert v.const is not None, f"value {v.name} used before it is computed"
            if is_size_const(v) and v.shape:  # one value computed from dynamic sizes
                got = ptr_of[id(v)] = self.at(v)
                kernel_calls.fill(self.b, got, MEMTYPE[v.dtype],
                                  self.size_value(v.const.item(), v.dtype),
                                  self.size(prod(v.shape)))
            elif is_size_const(v):
                got = ptr_of[id(v)] = self.size_scalar(v.const.item(), v.dtype)
            else:
                got = ptr_of[id(v)] = self.global_bytes(
                    np.ascontiguousarray(v.const).tobytes())
        return got

    def emit_ops(self, ops: list) -> None:
        """The operations ``ops`` (a program's, or a loop body's), in order."""
        b = self.b
        get = self.get
        for op in ops:
            if isinstance(op, Alias):
                continue  # its address was set with the others
            if isinstance(op, KernelOp):
                self.call_kernel(op, self.kernel_fns[entry_name(op.kernel)],
                                 [get(v) for v in op.inputs], [get(v) for v in op.outputs])
            elif isinstance(op, Gemm):  # out = (acc +) alpha * a @ b: the blocked nest
                if op.acc is not None and (not isinstance(op.out.nbytes, int) or op.out.nbytes):
                    b.call(self.memcpy, [get(op.out), get(op.acc), self.i64(op.out.nbytes)])
                host_gemm.gemm(b, self.m, {}, op, get(op.a), get(op.b), get(op.out),
                               policy=gemm_emit.Blocked(), size=self.size)
            elif isinstance(op, Permute):  # the JIT's transposes' copy, sizes maybe dynamic
                src = op.src
                if not isinstance(op.out.nbytes, int) or op.out.nbytes:
                    strided_copy.permute(b, ir.IntType(8 * ITEMSIZE[src.dtype]), get(op.out),
                                         get(src), [self.size(d) for d in src.shape], op.perm)
            elif isinstance(op, LoopOp):
                emit_loop(self, op)
            elif isinstance(op, Select):
                emit_select(self, op)
            elif isinstance(op, TapeGet):
                emit_tape_get(self, op)
            elif isinstance(op, Check):
                emit_check(self, op)
            else:  # pragma: no cover
                raise AssertionError(op)

    def heap_cell(self) -> ir.Value:
        """A stack cell holding a heap pointer (NULL at first) that every exit frees."""
        cell = self.pro.alloca(PTR)
        cell.type = PTR
        self.pro.store(ir.Constant(PTR, None), cell)
        self.heap_cells.append(cell)
        return cell

    def prologue_i64(self, value: int) -> ir.Value:
        cell = self.pro.alloca(I64)
        cell.type = PTR
        self.pro.store(ir.Constant(I64, value), cell)
        return cell

    def free_heap(self) -> None:
        for cell in self.heap_cells:
            self.b.call(self.free, [self.b.load(cell, typ=PTR)])


def build_object(prog: HostPlan) -> bytes:
    """The object file (position-independent, for this CPU) of ``prog``."""
    check_static(prog)  # static sizes now; dynamic ones at run time (check_sizes)
    host = ir.Module(name=prog.name)
    kernel_mods = []
    kernel_fns: dict[str, ir.Function] = {}
    seen = set()
    for op in walk(prog.ops):
        if isinstance(op, KernelOp) and entry_name(op.kernel) not in seen:
            seen.add(entry_name(op.kernel))
            mod, _ = codegen(op.kernel)
            kernel_mods.append(mod)
            kernel_fns[entry_name(op.kernel)] = ir.Function(
                host, ir.FunctionType(ir.VoidType(), [PTR, I64, I64]), entry_name(op.kernel))
    HostGen(prog, host).build(kernel_fns)
    tm = target_machine_pic()
    mod = jit.parse(host, tm)
    for km in kernel_mods:
        other = jit.parse(km, tm)
        with jit._lock:
            mod.link_in(other)
    with jit._lock:
        for name in kernel_fns:  # kernels are not part of the library's interface
            f = mod.get_function(name)
            f.linkage = llvm.Linkage.internal
    mod = jit.optimize(mod, tm)
    with jit._lock:
        mod.verify()
        return tm.emit_object(mod)


def target_machine_pic() -> llvm.TargetMachine:
    """The host target machine, emitting position-independent code for a shared object."""
    jit.host()
    cpu, features = jit.host()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic",
                                        codemodel="default")

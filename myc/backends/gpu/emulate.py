"""The GPU kernels run on the host: the same phase functions, a serial grid loop.

For each pass, ``@<pass>.emu(ptr argv)`` loops over the blocks; per block it runs each
phase for every thread in turn before the next phase -- what the barriers between
phases guarantee on the GPU -- with the block's shared memory on the stack.  The phase
functions are exactly those the PTX and the AMDGPU code objects are made from
(``codegen.generate``; the targets add only the kernel entries), compiled for the host
by the CPU backend's MCJIT, so the GPU kernels' numerics are tested on any machine
(``tests/cuda``, ``tests/rocm``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from llvmlite import ir

from myc.backends.cpu.codegen import MEMTYPE
from myc.backends.cpu.emit import I64, PTR
from myc.backends.cpu.jit import JitModule
from myc.backends.gpu.codegen import Pass, Plan, generate
from myc.backends.gpu.execute import run_plan
from myc.lower.kernel import Kernel


def _loop(b: ir.IRBuilder, fn: ir.Function, n: int, body, name: str) -> None:
    """``for i in range(n): body(i)`` (``n`` >= 1)."""
    pre = b.block
    loop = fn.append_basic_block(f"{name}.loop")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), pre)
    body(i)
    i2 = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(i2, b.block)
    b.cbranch(b.icmp_signed("<", i2, ir.Constant(I64, n)), loop, done)
    b.position_at_end(done)


def add_emulator_entries(module: ir.Module, plan: Plan) -> None:
    for p in plan.passes:
        _emulator_entry(module, p)


def _emulator_entry(module: ir.Module, p: Pass) -> None:
    """``@<pass>.emu(ptr argv)``: the grid, block by block, phase by phase."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), f"{p.name}.emu")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    argv = fn.args[0]
    ptrs = [b.load(b.gep(argv, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
            for i in range(len(p.args))]
    shared: ir.Value = ir.Constant(PTR, None)
    if p.shared is not None:
        dt, n = p.shared
        shared = b.alloca(ir.ArrayType(MEMTYPE[dt], n))
        shared.align = 8
    phases = [module.globals[ph] for ph in p.phases]

    def block(bid):
        for ph in phases:
            _loop(b, fn, p.block, lambda tid, ph=ph: b.call(ph, [*ptrs, shared, tid, bid]),
                  "thread")
    _loop(b, fn, p.grid, block, "block")
    b.ret_void()


class EmulatedKernel:
    """``kernel`` 's GPU passes compiled for the host: ``ek(inputs) -> outputs`` (NumPy)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        module = ir.Module(name=kernel.name)
        self.plan = generate(kernel, module)
        add_emulator_entries(module, self.plan)
        self.jit = JitModule(module)
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        self.fns = {p.name: proto(self.jit.address(f"{p.name}.emu")) for p in self.plan.passes}

    def _launch(self, p: Pass, bufs: list[np.ndarray]) -> None:
        argv = (ctypes.c_void_p * max(1, len(bufs)))(*[a.ctypes.data for a in bufs])
        self.fns[p.name](ctypes.addressof(argv))

    def __call__(self, inputs: list[Any]) -> list[np.ndarray]:
        k = self.kernel
        inputs = [getattr(a, "host", a) for a in inputs]  # (a program's DeviceConst)
        if any(d == 0 for d in k.shape):
            return k.reference(inputs)
        arrays = []
        for a, b in zip(inputs, k.inputs, strict=True):
            a = np.ascontiguousarray(a, dtype=b.dtype)
            arrays.append(a.view(np.uint8) if a.dtype == np.bool_ else a)
        return run_plan(self.plan, arrays, np, self._launch)

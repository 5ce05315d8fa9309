"""An LLVM module for a target machine: parsed, verified, optimized; the lock LLVM's
global state needs.  Shared by the JIT (``jit.py``), the AOT emitter and the
vector-width probe (``tuning.py``), which ``jit.host`` consults -- so it sits below both.
"""

from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from myc.timings import timed

_lock = threading.Lock()  # LLVM's global state is not thread-safe


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@timed("llvm parse")
def parse(module: ir.Module | str, tm: llvm.TargetMachine) -> llvm.ModuleRef:
    """Parse and verify; raises ``RuntimeError`` with LLVM's message on a bad module."""
    with _lock:
        _init()
        mod = llvm.parse_assembly(str(module))
        mod.verify()
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        return mod


@timed("llvm optimize")
def optimize(mod: llvm.ModuleRef, tm: llvm.TargetMachine, level: int = 3) -> llvm.ModuleRef:
    """The O3 pipeline for the host, loop and SLP vectorizers on (in place); ``level``
    below 3: that pipeline without vectorizers or unrolling (small kernels)."""
    with _lock:
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = level >= 3
        pto.slp_vectorization = level >= 3
        pto.loop_unrolling = level >= 3
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
        return mod

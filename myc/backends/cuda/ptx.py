"""LLVM modules to PTX (llvmlite's NVPTX target), verified before LLVM sees them.

LLVM aborts the whole process on what NVPTX cannot select (``llvm.sin``, ``llvm.tanh``)
and fails on libcalls (``llvm.exp``): kernels use myc's math library instead, and every
module is checked for intrinsics outside the known-safe list and verified before code
generation, so a generator bug is a Python exception here.

PTX is generated for ``sm_75`` by default: the driver JIT-compiles it for any newer GPU
(PTX made for a newer arch is refused by older ones), and CUDA 13 starts at sm_75.
"""

from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from myc.backends.gpu.codegen import unsafe_intrinsics

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_75"
_lock = threading.Lock()  # LLVM's global state is not thread-safe


@functools.cache
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.cache
def _machine(arch: str) -> llvm.TargetMachine:
    _init()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=3)


def new_module(name: str, arch: str = DEFAULT_ARCH) -> ir.Module:
    """An empty module for the NVPTX target."""
    m = ir.Module(name=name)
    m.triple = TRIPLE
    m.data_layout = str(_machine(arch).target_data)
    return m


def to_ptx(module: ir.Module, arch: str = DEFAULT_ARCH) -> str:
    """PTX text of ``module`` after LLVM's O3 pipeline for ``arch``."""
    bad = unsafe_intrinsics(module)
    if bad:  # NVPTX may abort the process on these: a generator bug
        raise RuntimeError(f"module {module.name} uses intrinsics NVPTX may not lower: {bad}")
    tm = _machine(arch)
    with _lock:
        mod = llvm.parse_assembly(str(module))
        mod.verify()
        mod.triple = TRIPLE
        mod.data_layout = str(tm.target_data)
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
        return tm.emit_assembly(mod)

"""The NVPTX target: LLVM modules to PTX (llvmlite's NVPTX back end).

LLVM aborts the whole process on what NVPTX cannot select (``llvm.sin``, ``llvm.tanh``)
and fails on libcalls (``llvm.exp``): kernels use myc's math library instead, and every
module is checked for intrinsics outside the known-safe list and verified before code
generation (``gpu.target.GpuTarget.optimized``), so a generator bug is a Python
exception here.

PTX is generated for ``sm_75`` by default: the driver JIT-compiles it for any newer GPU
(PTX made for a newer arch is refused by older ones), and CUDA 13 starts at sm_75.
"""

from __future__ import annotations

from llvmlite import ir

from myc.backends.cpu.emit import PTR
from myc.backends.gpu.target import COMMON_SAFE, GpuTarget, intrinsic, zext64

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_75"


class NvptxTarget(GpuTarget):
    """Kernels by the ``ptx_kernel`` calling convention, ids from the special
    registers, ``barrier0`` (``bar.sync 0``) between phases."""

    name = "cuda"
    triple = TRIPLE
    default_arch = DEFAULT_ARCH
    safe_intrinsics = ("llvm.nvvm.", *COMMON_SAFE)

    def entry(self, module: ir.Module, name: str, nargs: int, block: int) -> ir.Function:
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR] * nargs), name)
        fn.calling_convention = "ptx_kernel"
        fn.attributes.add("nounwind")
        for a in fn.args:
            a.add_attribute("noalias")
        return fn

    def _sreg(self, module: ir.Module, b: ir.IRBuilder, which: str) -> ir.Value:
        fn = intrinsic(module, f"llvm.nvvm.read.ptx.sreg.{which}", ir.IntType(32), [])
        return zext64(b, b.call(fn, []))

    def thread_id(self, module: ir.Module, b: ir.IRBuilder) -> ir.Value:
        return self._sreg(module, b, "tid.x")

    def block_id(self, module: ir.Module, b: ir.IRBuilder) -> ir.Value:
        return self._sreg(module, b, "ctaid.x")

    def barrier(self, module: ir.Module, b: ir.IRBuilder) -> None:
        b.call(intrinsic(module, "llvm.nvvm.barrier0", ir.VoidType(), []), [])


NVPTX = NvptxTarget()


def new_module(name: str, arch: str = DEFAULT_ARCH) -> ir.Module:
    """An empty module for the NVPTX target."""
    return NVPTX.new_module(name, arch)


def to_ptx(module: ir.Module, arch: str = DEFAULT_ARCH) -> str:
    """PTX text of ``module`` after LLVM's O3 pipeline for ``arch``."""
    return NVPTX.assembly(module, arch)

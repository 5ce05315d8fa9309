"""The hooks an LLVM GPU target fills in around the shared phases (``codegen.py``).

The phases (``codegen.generate``) are target-neutral LLVM IR; a target says how they
become a GPU kernel and machine code:

- its triple, CPU names and data layout (:meth:`GpuTarget.new_module`), and module
  flags it needs (AMDGPU pins the code-object version);
- the kernel entry: calling convention or annotations, the address space of the
  buffer parameters (:meth:`GpuTarget.entry`);
- the thread and block id reads and the block-wide barrier;
- the intrinsics it is known to lower (LLVM aborts the process on some it cannot
  select, and fails on libcalls): every module is checked against that list and
  verified before LLVM's code generator sees it (:meth:`GpuTarget.optimized`).

Shared memory is address space 3 on NVPTX and AMDGPU alike.  The math is myc's own
(``backends/cpu/mathlib.py``) on every target: no libdevice, no ROCm device libraries.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import llvmlite.binding as llvm
from llvmlite import ir

from myc.backends.cpu.emit import I64

SHARED_ADDRSPACE = 3
_lock = threading.Lock()  # LLVM's global state is not thread-safe

# intrinsics that NVPTX and AMDGPU both lower, in every dtype the kernels use them in
# (``llvm.exp2`` only for float32; ``llvm.exp``, ``llvm.sin``... need libcalls or abort)
COMMON_SAFE = ("llvm.fabs.", "llvm.sqrt.", "llvm.fma.", "llvm.fmuladd.", "llvm.floor.",
               "llvm.ceil.", "llvm.rint.", "llvm.copysign.", "llvm.maximum.",
               "llvm.minimum.", "llvm.smax.", "llvm.smin.", "llvm.fshl.", "llvm.fshr.",
               "llvm.ctlz.", "llvm.exp2.f32", "llvm.trunc.")


@functools.cache
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


class GpuTarget:
    """An LLVM GPU target (one instance per target: ``cuda.ptx.NVPTX``,
    ``rocm.amdgpu.AMDGPU``)."""

    name = "gpu"  # the backend's name, for messages
    triple = ""
    default_arch = ""
    safe_intrinsics: tuple[str, ...] = COMMON_SAFE
    reloc = "default"

    @functools.cache  # noqa: B019 - one machine per (target, arch), for the process
    def machine(self, arch: str) -> llvm.TargetMachine:
        _init()
        return llvm.Target.from_triple(self.triple).create_target_machine(
            cpu=arch, opt=3, reloc=self.reloc)

    def new_module(self, name: str, arch: str | None = None) -> ir.Module:
        """An empty module for this target."""
        m = ir.Module(name=name)
        m.triple = self.triple
        m.data_layout = str(self.machine(arch or self.default_arch).target_data)
        self.module_flags(m)
        return m

    def module_flags(self, module: ir.Module) -> None:
        """Flags the target needs in every module (none by default)."""

    # -- the kernel entry ----------------------------------------------------------------
    def entry(self, module: ir.Module, name: str, nargs: int, block: int) -> ir.Function:
        """A new kernel taking ``nargs`` buffers, launched with ``block`` threads."""
        raise NotImplementedError

    def thread_id(self, module: ir.Module, b: ir.IRBuilder) -> ir.Value:
        """The thread's index in its block, as i64."""
        raise NotImplementedError

    def block_id(self, module: ir.Module, b: ir.IRBuilder) -> ir.Value:
        """The block's index in the grid, as i64."""
        raise NotImplementedError

    def barrier(self, module: ir.Module, b: ir.IRBuilder) -> None:
        """Every thread of the block waits here; shared memory written before is seen
        by every thread after."""
        raise NotImplementedError

    # -- code generation -----------------------------------------------------------------
    def text(self, module: ir.Module) -> str:
        """``module`` 's LLVM IR as LLVM parses it (a target may add what llvmlite
        cannot write)."""
        return str(module)

    def unsafe_intrinsics(self, module: ir.Module) -> list[str]:
        """The intrinsics ``module`` declares that this target may not lower (empty when
        safe): LLVM aborts the process on some (``llvm.sin`` on NVPTX), so this is
        checked before code generation."""
        bad = []
        for g in module.globals.values():
            if isinstance(g, ir.Function) and g.name.startswith("llvm.") and not g.blocks:
                if not g.name.startswith(self.safe_intrinsics):
                    bad.append(g.name)
        return bad

    @contextmanager
    def optimized(self, module: ir.Module, arch: str) -> Iterator[llvm.ModuleRef]:
        """A freshly parsed, verified copy of ``module`` after LLVM's O3 pipeline for
        ``arch``, held under LLVM's lock (code generation mutates a module: emit from a
        fresh one each time)."""
        bad = self.unsafe_intrinsics(module)
        if bad:  # LLVM may abort the process on these: a generator bug
            raise RuntimeError(f"module {module.name} uses intrinsics {self.triple} may "
                               f"not lower: {bad}")
        tm = self.machine(arch)
        with _lock:
            mod = llvm.parse_assembly(self.text(module))
            mod.verify()
            mod.triple = self.triple
            mod.data_layout = str(tm.target_data)
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
            yield mod

    def assembly(self, module: ir.Module, arch: str | None = None) -> str:
        """The target's assembly text of ``module`` (PTX, AMDGCN)."""
        arch = arch or self.default_arch
        with self.optimized(module, arch) as mod:
            return self.machine(arch).emit_assembly(mod)


def zext64(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    return b.zext(v, I64)


def intrinsic(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    """``name`` declared in ``module`` (once)."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn

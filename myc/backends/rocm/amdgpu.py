"""The AMDGPU target: LLVM modules to HSA code objects (llvmlite's AMDGPU back end + LLD).

- Triple ``amdgcn-amd-amdhsa``; the architecture is the GPU's (``gfx90a`` by default:
  MI200; ``gfx942``: MI300; ``gfx1100``: RDNA3...).  gfx9 GPUs run 64-wide wavefronts,
  gfx10 and later 32-wide: the shared emitter's reductions synchronize every level of
  their tree with a barrier, so they are correct for either.
- Kernels by the ``amdgpu_kernel`` calling convention, their buffers global pointers
  (address space 1), the launch's block size declared (``amdgpu-flat-work-group-size``);
  ids from ``llvm.amdgcn.workitem.id.x`` / ``workgroup.id.x``; the barrier is
  ``s_barrier`` between workgroup-scope release and acquire fences (so that shared
  memory written before it is seen after).
- The code-object version is pinned by the module flag ``amdhsa_code_object_version``
  (5), not left to LLVM's default.
- LLVM's code generator mutates the module it emits: each emission parses a fresh one
  (``GpuTarget.optimized``).
- The relocatable object is linked into a code object (what ``hipModuleLoadData``
  loads) by ``ld.lld -shared --no-undefined``: a math call left unresolved (``expf``:
  no ROCm device libraries are used, the math is myc's own) is a link error, not a
  load failure on the GPU.  LLD comes from the ``ziglang`` package (``python -m ziglang
  ld.lld``), or ``MYC_LD_LLD`` / an ``ld.lld`` on the PATH.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile

from llvmlite import ir

from myc.backends.gpu.target import COMMON_SAFE, GpuTarget, intrinsic, zext64
from myc.errors import MycRuntimeError

TRIPLE = "amdgcn-amd-amdhsa"
DEFAULT_ARCH = "gfx90a"
ARCHS = ("gfx90a", "gfx942", "gfx1100")  # checked by the tests (any LLVM knows works)
CODE_OBJECT_VERSION = 5
GLOBAL = 1  # address space of global memory
I32 = ir.IntType(32)
LLD_INSTALL = ("backend='rocm' links code objects with LLD: pip install 'myc[rocm]' (or "
               "pip install ziglang, which ships it; or set MYC_LD_LLD to an ld.lld)")


class AmdgpuTarget(GpuTarget):
    name = "rocm"
    triple = TRIPLE
    default_arch = DEFAULT_ARCH
    safe_intrinsics = ("llvm.amdgcn.", *COMMON_SAFE)
    reloc = "pic"

    def module_flags(self, module: ir.Module) -> None:
        flag = module.add_metadata([ir.Constant(I32, 1), "amdhsa_code_object_version",
                                    ir.Constant(I32, CODE_OBJECT_VERSION * 100)])
        module.add_named_metadata("llvm.module.flags", flag)

    def entry(self, module: ir.Module, name: str, nargs: int, block: int) -> ir.Function:
        gptr = ir.PointerType(addrspace=GLOBAL)
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [gptr] * nargs), name)
        fn.calling_convention = "amdgpu_kernel"
        fn.attributes.add("nounwind")
        for a in fn.args:
            a.add_attribute("noalias")
        # (a string attribute, which llvmlite cannot write: added to the text, ``text``)
        module.__dict__.setdefault("myc_blocks", {})[name] = block
        return fn

    def thread_id(self, module: ir.Module, b: ir.IRBuilder) -> ir.Value:
        return zext64(b, b.call(intrinsic(module, "llvm.amdgcn.workitem.id.x", I32, []), []))

    def block_id(self, module: ir.Module, b: ir.IRBuilder) -> ir.Value:
        return zext64(b, b.call(intrinsic(module, "llvm.amdgcn.workgroup.id.x", I32, []), []))

    def barrier(self, module: ir.Module, b: ir.IRBuilder) -> None:
        b.fence("release", "workgroup")
        b.call(intrinsic(module, "llvm.amdgcn.s.barrier", ir.VoidType(), []), [])
        b.fence("acquire", "workgroup")

    def text(self, module: ir.Module) -> str:
        """The kernels' block sizes declared: ``amdgpu-flat-work-group-size``."""
        text = str(module)
        for name, block in module.__dict__.get("myc_blocks", {}).items():
            head = f'define amdgpu_kernel void @"{name}"('
            at = text.index(head)
            end = text.index("\n", at)
            text = (text[:end] + f' "amdgpu-flat-work-group-size"="1,{block}"'
                    + text[end:])
        return text

    def object(self, module: ir.Module, arch: str | None = None) -> bytes:
        """The relocatable ELF object of ``module``."""
        arch = arch or self.default_arch
        with self.optimized(module, arch) as mod:
            return self.machine(arch).emit_object(mod)

    def code_object(self, module: ir.Module, arch: str | None = None) -> bytes:
        """``module`` linked into an HSA code object (what ``hipModuleLoadData`` takes)."""
        return link(self.object(module, arch))


# architectures LLVM 22 generates code for (each checked with probe()); another one, or
# another LLVM, is probed in a subprocess first: LLVM aborts the process on a processor
# it does not know
KNOWN_ARCHS = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010",
               "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200",
               "gfx1201")
_PROBE = "\n".join([
    "import sys, llvmlite.binding as llvm",
    "llvm.initialize_all_targets(); llvm.initialize_all_asmprinters()",
    "m = llvm.parse_assembly('define amdgpu_kernel void @k(ptr addrspace(1) %p, i64 %n) {'",
    "  ' %a = udiv i64 %n, 7  store i64 %a, ptr addrspace(1) %p  ret void }'",
    "  .replace('  ', chr(10)))",
    "t = llvm.Target.from_triple('amdgcn-amd-amdhsa').create_target_machine(cpu=sys.argv[1])",
    "sys.exit(0 if sys.argv[1] in t.emit_assembly(m) else 3)",
])


@functools.cache
def probe(arch: str) -> bool:
    """Does LLVM generate code for ``arch`` (tried in a subprocess: LLVM aborts the
    process on a processor it does not know)?"""
    try:
        r = subprocess.run([sys.executable, "-c", _PROBE, arch], capture_output=True,
                           timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def check_arch(arch: str) -> str:
    """``arch`` if LLVM can generate code for it, else a clear error."""
    import llvmlite.binding as llvm

    if (arch in KNOWN_ARCHS and llvm.llvm_version_info >= (22,)) or probe(arch):
        return arch
    raise MycRuntimeError(f"backend='rocm': LLVM (through llvmlite) cannot generate code "
                          f"for the AMD GPU architecture '{arch}'; set MYC_ROCM_ARCH to one "
                          f"it knows (e.g. gfx90a, gfx942, gfx1100)")


def lld() -> list[str]:
    """The command running LLD: ``MYC_LD_LLD``, ziglang's, or ``ld.lld`` on the PATH."""
    env = os.environ.get("MYC_LD_LLD")
    if env:
        return [env]
    try:
        import ziglang
    except ImportError:
        found = shutil.which("ld.lld")
        if found:
            return [found]
        raise MycRuntimeError(LLD_INSTALL) from None
    for exe in ("zig", "zig.exe"):  # the binary itself: no Python start-up per link
        path = os.path.join(os.path.dirname(ziglang.__file__), exe)
        if os.access(path, os.X_OK):
            return [path, "ld.lld"]
    return [sys.executable, "-m", "ziglang", "ld.lld"]


def link(obj: bytes) -> bytes:
    """A relocatable AMDGPU object linked into a code object (``-shared``), every symbol
    resolved (``--no-undefined``)."""
    with tempfile.TemporaryDirectory(prefix="myc-rocm-") as d:
        src, out = os.path.join(d, "k.o"), os.path.join(d, "k.hsaco")
        with open(src, "wb") as f:
            f.write(obj)
        r = subprocess.run([*lld(), "-shared", "--no-undefined", src, "-o", out],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"ld.lld failed ({r.returncode}): {r.stderr.strip()[:2000]}")
        with open(out, "rb") as f:
            return f.read()


AMDGPU = AmdgpuTarget()

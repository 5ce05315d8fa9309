"""The LLVM side of the CPU backend: a target machine for the host, the O3 pipeline,
and MCJIT.

The module is verified before anything else touches it: LLVM reports a malformed
module by aborting the process, so a codegen bug must surface here as a Python error.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir

from myc.backends.cpu.llvm_module import _init, _lock, optimize, parse
from myc.timings import stage

__all__ = ["JitModule", "_init", "_lock", "assembly", "host", "optimize", "optimized_ir",
           "parse", "target_machine"]


@functools.cache
def host() -> tuple[str, str]:
    """``(cpu name, feature string)`` kernels are compiled for, e.g. ``("znver5",
    "+avx2,...")``: this machine's, less AVX-512 where it measured slower
    (``tuning.py``).  Part of every cache key, so the choice is too."""
    _init()
    from myc.backends.cpu.tuning import choose

    cpu = llvm.get_host_cpu_name()
    return cpu, choose(cpu, llvm.get_host_cpu_features().flatten())


def target_machine(opt: int = 3) -> llvm.TargetMachine:
    """A fresh host target machine (MCJIT takes ownership of the one it is given)."""
    _init()
    cpu, features = host()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=opt,
                                        codemodel="jitdefault")


def optimized_ir(module: ir.Module) -> str:
    """Optimized LLVM IR text of ``module`` for this host (for inspection and tests)."""
    tm = target_machine()
    return str(optimize(parse(module, tm), tm))


def assembly(module: ir.Module) -> str:
    tm = target_machine()
    mod = optimize(parse(module, tm), tm)
    with _lock:
        return tm.emit_assembly(mod)


class JitModule:
    """Machine code loaded into its own MCJIT engine.

    Built from an LLVM module (optimized and compiled to an object file here) or from
    the bytes of such an object file (the disk cache), which skips LLVM entirely.
    ``object_code`` is what a cache stores.
    """

    def __init__(self, module: ir.Module | str | None = None,
                 object_code: bytes | None = None, light: bool = False, bare: bool = False):
        """``light``: O1 without vectorizers, and LLVM's fast instruction selection and
        register allocation (code generation at O0) -- for big modules of glue code,
        whose O3 pipeline is superlinear in their size (see ``machine_code.LIGHT_ABOVE``).
        ``bare``: no IR optimization at all, code generation at O0 (code whose speed is
        its atomics and calls: the thread pool)."""
        tm = target_machine(0 if light or bare else 3)
        if object_code is None:
            assert module is not None
            mod = parse(module, tm)
            if not bare:
                mod = optimize(mod, tm, 1 if light else 3)
            with _lock, stage("llvm codegen"):
                object_code = tm.emit_object(mod)
        self.object_code = object_code
        with _lock, stage("loading"):
            empty = llvm.parse_assembly("")
            empty.triple = tm.triple
            empty.data_layout = str(tm.target_data)
            self.engine = llvm.create_mcjit_compiler(empty, tm)
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
            self.engine.finalize_object()

    def address(self, name: str) -> int:
        with _lock:
            addr = self.engine.get_function_address(name)
        assert addr, f"no function {name!r} in the JIT module"
        return addr

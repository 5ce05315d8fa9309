"""The LLVM CPU backend: kernel IR to vectorized, multi-threaded native code.

``codegen`` (kernel IR to an llvmlite module; pure), ``mathlib`` (vectorizable
transcendentals), ``plan`` (loop structure), ``jit`` (LLVM: O3 for the host, MCJIT) and
``runtime`` (calling, threads, cache).  Entry point: :func:`compile_kernel`.
"""

from myc.backends.cpu.runtime import (
    CompiledKernel,
    assembly,
    clear_cache,
    compile_kernel,
    llvm_ir,
    num_threads,
)

__all__ = ["CompiledKernel", "assembly", "clear_cache", "compile_kernel", "llvm_ir",
           "num_threads"]

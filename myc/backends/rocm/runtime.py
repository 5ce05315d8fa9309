"""The AMD GPU device, kernels loaded from HSA code objects, and launches (CuPy's ROCm
build: ``hipModuleLoadData``, ``hipModuleLaunchKernel``; GEMM through hipBLAS).

Everything but the image is shared with the CUDA backend (``gpu.runtime``, ``gpu.host``):
device-resident CuPy arrays, NumPy in gives NumPy out.  The code object is generated
for the GPU's own architecture (``gcnArchName``, e.g. ``gfx90a``; ``MYC_ROCM_ARCH``
overrides it): unlike PTX, AMDGPU code is not JIT-compiled for a newer GPU.

Untested on AMD hardware (none was available): the kernels are checked by linking and
by the emulator, the glue by a stand-in CuPy (``tests/rocm``).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from myc.backends.gpu import runtime as gpu
from myc.backends.gpu.codegen import Plan, add_gpu_entries, generate
from myc.backends.rocm.amdgpu import AMDGPU, DEFAULT_ARCH, check_arch
from myc.lower.kernel import Kernel

_lock = threading.Lock()
_device: gpu.GpuDevice | None = None
_cache: dict[str, CompiledKernel] = {}

INSTALL = ("backend='rocm' needs CuPy built for ROCm and an AMD GPU: pip install "
           "'myc[rocm]' (cupy-rocm-7-0 for ROCm 7, and ziglang for its linker)")


def _arch(props: dict) -> str:
    """The GPU's architecture, ``gfx90a`` from ``gfx90a:sramecc+:xnack-``."""
    name = os.environ.get("MYC_ROCM_ARCH") or props.get("gcnArchName", b"")
    name = name.decode() if isinstance(name, bytes) else str(name)
    return name.split(":", 1)[0] or DEFAULT_ARCH  # (features: "any" suits every mode)


def device() -> gpu.GpuDevice:
    """The AMD GPU myc uses (CuPy's current device), opened on first use."""
    global _device
    with _lock:
        if _device is None:
            from myc.backends.rocm.amdgpu import lld

            dev = gpu.GpuDevice("rocm", INSTALL, hip=True, arch=_arch,
                                elementwise_hint="CuPy's ROCm build compiles them with "
                                                 "hipRTC: check the ROCm install")
            lld()  # the linker is there (else: what to install)
            _device = dev
        return _device


def module_for(kernel: Kernel, arch: str) -> tuple[Any, Plan]:
    """The LLVM module of ``kernel`` 's GPU kernels for ``arch`` and their plan."""
    module = AMDGPU.new_module(kernel.name, check_arch(arch))
    plan = generate(kernel, module)
    add_gpu_entries(module, plan, AMDGPU)
    return module, plan


def kernel_hsaco(kernel: Kernel, arch: str = DEFAULT_ARCH) -> tuple[bytes, Plan]:
    """The code object of ``kernel`` 's passes and their launch plan (no GPU needed;
    LLD needed)."""
    module, plan = module_for(kernel, arch)
    return AMDGPU.code_object(module, arch), plan


def kernel_asm(kernel: Kernel, arch: str | None = None) -> str:
    """The AMDGCN assembly of ``kernel`` 's passes (what ``myc.ir`` shows), for ``arch``
    (``MYC_ROCM_ARCH``, else gfx90a)."""
    arch = arch or _arch({})
    module, _ = module_for(kernel, arch)
    return AMDGPU.assembly(module, arch)


def cache_key(kernel: Kernel, arch: str) -> str:
    return gpu.kernel_key("rocm1", kernel, arch)


class CompiledKernel(gpu.CompiledKernel):
    """A kernel loaded on the AMD GPU from its code object: ``ck(inputs) -> outputs``."""

    def __init__(self, kernel: Kernel, dev: Any, key: str = ""):
        # (``kernel_hsaco`` looked up at each call: tests replace it)
        self.hsaco, plan = gpu.cached_image("rocm-hsaco", kernel, key,
                                            lambda k: kernel_hsaco(k, dev.arch))
        super().__init__(kernel, dev, self.hsaco, plan)


def compile_kernel(kernel: Kernel) -> CompiledKernel | None:
    """``kernel`` loaded on the GPU (cached by content), or None when the generator
    does not cover it (the host program then runs that group with NumPy)."""
    dev = device()
    key = cache_key(kernel, dev.arch)
    return gpu.load_kernel(_cache, key, lambda: CompiledKernel(kernel, dev, key))

"""The CUDA device, kernels loaded from PTX, and launches (CuPy's CUDA build).

``compile_kernel(kernel)`` returns a callable with the kernel interface of the other
backends (``gpu.runtime.CompiledKernel``: NumPy or CuPy arrays in, CuPy arrays out);
this module says what is CUDA's: the PTX (``kernel_ptx``, NVPTX through the shared
emitter), its disk cache and the device check.

The GPU is CuPy's current device.  PTX is generated for ``sm_75`` (``MYC_CUDA_ARCH``
overrides it) and JIT-compiled by the driver for the GPU at hand.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from myc.backends.cuda.ptx import DEFAULT_ARCH, NVPTX, new_module, to_ptx
from myc.backends.gpu import graphs
from myc.backends.gpu import runtime as gpu
from myc.backends.gpu.codegen import Plan, add_gpu_entries, generate
from myc.backends.gpu.runtime import on_device  # noqa: F401 - part of this module's API
from myc.lower.kernel import Kernel

graphs.BACKENDS.add("cuda")  # repeat calls on the same arrays replay CUDA graphs

_lock = threading.Lock()
_device: gpu.GpuDevice | None = None
_cache: dict[str, CompiledKernel] = {}

INSTALL = ("backend='cuda' needs CuPy and an NVIDIA GPU: pip install 'myc[cuda]' "
           "(CuPy for CUDA 13; with an older driver, pip install cupy-cuda12x instead)")


def device() -> gpu.GpuDevice:
    """The GPU myc uses (CuPy's current device), opened on first use."""
    global _device
    with _lock:
        if _device is None:
            _device = gpu.GpuDevice(
                "cuda", INSTALL, hip=False,
                arch=lambda props: os.environ.get("MYC_CUDA_ARCH", DEFAULT_ARCH),
                elementwise_hint="install CuPy's CUDA toolkit parts, e.g. "
                                 "pip install 'cupy-cuda13x[ctk]'")
        return _device


def kernel_ptx(kernel: Kernel, arch: str = DEFAULT_ARCH) -> tuple[str, Plan]:
    """The PTX of ``kernel`` 's passes and their launch plan (no GPU needed)."""
    module = new_module(kernel.name, arch)
    plan = generate(kernel, module)
    add_gpu_entries(module, plan, NVPTX)
    return to_ptx(module, arch), plan


def cache_key(kernel: Kernel, arch: str) -> str:
    return gpu.kernel_key("cuda1", kernel, arch)


class CompiledKernel(gpu.CompiledKernel):
    """A kernel loaded on the GPU from its PTX: ``ck(inputs) -> outputs``."""

    def __init__(self, kernel: Kernel, dev: Any, key: str = ""):
        # (``kernel_ptx`` looked up at each call: tests replace it)
        self.ptx, plan = gpu.cached_image("cuda-ptx", kernel, key,
                                          lambda k: kernel_ptx(k, dev.arch))
        super().__init__(kernel, dev, self.ptx.encode() + b"\0", plan)


def to_host(v: Any) -> Any:
    """A CuPy array (or any CUDA array) as NumPy; anything else as it is."""
    return gpu.to_host(v, _device if _device is not None else
                       (device() if hasattr(v, "__cuda_array_interface__") else None))


def compile_kernel(kernel: Kernel) -> CompiledKernel | None:
    """``kernel`` loaded on the GPU (cached by content), or None when the generator
    does not cover it (the host program then runs that group with NumPy)."""
    dev = device()
    key = cache_key(kernel, dev.arch)
    return gpu.load_kernel(_cache, key, lambda: CompiledKernel(kernel, dev, key))

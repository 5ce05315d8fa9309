"""The CUDA device, kernels loaded from PTX, and launches (CuPy).

``compile_kernel(kernel)`` returns a callable with the kernel interface of the other
backends -- ``ck(inputs) -> outputs`` -- taking NumPy or CuPy arrays (NumPy ones are
copied to the device) and returning CuPy arrays, so that consecutive kernels of a host
program hand their arrays over on the device (``host.py`` says what runs where).  The
passes (``codegen.Plan``) are launched in order on the current stream; nothing is read
back here.

The GPU is CuPy's current device.  PTX is generated for ``sm_75`` (``MYC_CUDA_ARCH``
overrides it) and JIT-compiled by the driver for the GPU at hand.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

import numpy as np

from myc.backends.cuda.codegen import Plan, Unsupported, add_gpu_entries, generate
from myc.backends.cuda.execute import layout
from myc.backends.cuda.ptx import DEFAULT_ARCH, new_module, to_ptx
from myc.errors import MycRuntimeError, MycValueError
from myc.infer.abstract import DEVICE_ARRAY_TYPES
from myc.lower.kernel import Kernel

_lock = threading.Lock()
_device: _Device | None = None
_cache: dict[str, CompiledKernel] = {}

INSTALL = ("backend='cuda' needs CuPy and an NVIDIA GPU: pip install 'myc[cuda]' "
           "(CuPy for CUDA 13; with an older driver, pip install cupy-cuda12x instead)")


class DeviceValue:
    """A host program's array constant: a host copy, and a device copy made on first use
    (``myc.backends.cuda.host.DeviceConst``; declared here, below the host program)."""

    host: Any

    def device(self) -> Any:
        raise NotImplementedError


class _Device:
    def __init__(self) -> None:
        try:
            import cupy
        except ImportError as exc:
            raise MycRuntimeError(INSTALL) from exc
        try:
            ok = bool(cupy.cuda.is_available())
        except Exception:  # noqa: BLE001 - a broken driver reads as no GPU
            ok = False
        if not ok:
            raise MycRuntimeError(f"{INSTALL}; CuPy is installed but finds no GPU "
                                  "(check nvidia-smi and the driver)")
        self.cp = cupy
        self.id = cupy.cuda.Device().id
        props = cupy.cuda.runtime.getDeviceProperties(self.id)
        name = props.get("name", b"GPU")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.arch = os.environ.get("MYC_CUDA_ARCH", DEFAULT_ARCH)
        DEVICE_ARRAY_TYPES.add(cupy.ndarray)  # specialized on shape and dtype only
        self.elementwise = _can_compile(cupy)


def _can_compile(cupy: Any) -> bool:
    """Can CuPy run its own elementwise kernels here (it compiles them with NVRTC)?  If
    not, the host steps that would use them run on the host (counted, and said once)."""
    try:
        x = cupy.empty((1,), "float32")
        x = x * x.dtype.type(2)
        return True
    except Exception as exc:  # noqa: BLE001 - e.g. NVRTC not found
        import warnings

        warnings.warn(f"myc backend='cuda': CuPy cannot compile its elementwise kernels "
                      f"({type(exc).__name__}: {str(exc)[:200]}); steps other than myc's "
                      "kernels and GEMM run on the host (install CuPy's CUDA toolkit "
                      "parts, e.g. pip install 'cupy-cuda13x[ctk]')", RuntimeWarning,
                      stacklevel=3)
        return False


def device() -> _Device:
    """The GPU myc uses (CuPy's current device), opened on first use."""
    global _device
    with _lock:
        if _device is None:
            _device = _Device()
        return _device


def kernel_ptx(kernel: Kernel, arch: str = DEFAULT_ARCH) -> tuple[str, Plan]:
    """The PTX of ``kernel`` 's passes and their launch plan (no GPU needed)."""
    module = new_module(kernel.name, arch)
    plan = generate(kernel, module)
    add_gpu_entries(module, plan)
    return to_ptx(module, arch), plan


def _cached_ptx(kernel: Kernel, arch: str, key: str) -> tuple[str, Plan]:
    """``kernel_ptx``, through the disk cache (``MYC_CACHE_DIR``): a program loaded from
    disk then needs no LLVM for its kernels.  The plan is made again (no LLVM run)."""
    from myc.support import diskcache

    ptx = diskcache.load("cuda-ptx", key) if key else None
    if isinstance(ptx, str):
        from llvmlite import ir

        return ptx, generate(kernel, ir.Module(name=kernel.name))
    ptx, plan = kernel_ptx(kernel, arch)
    if key:
        diskcache.store("cuda-ptx", key, ptx)
    return ptx, plan


def cache_key(kernel: Kernel, arch: str) -> str:
    body = kernel.format().split("\n", 1)[1:]
    text = "\n".join(["cuda1", arch, kernel.name, repr(kernel.shape), *body])
    return hashlib.sha256(text.encode()).hexdigest()


class CompiledKernel:
    """A kernel loaded on the GPU: ``ck(inputs) -> outputs`` (CuPy arrays out)."""

    def __init__(self, kernel: Kernel, dev: _Device, key: str = ""):
        self.kernel = kernel
        self.dev = dev
        self.ptx, self.plan = _cached_ptx(kernel, dev.arch, key)
        self.module = dev.cp.cuda.function.Module()
        self.module.load(self.ptx.encode() + b"\0")
        self.fns = {p.name: self.module.get_function(p.name) for p in self.plan.passes}
        self._empty = any(d == 0 for d in kernel.shape)
        self._dtypes = [np.dtype(b.dtype) for b in kernel.inputs]
        # what a call allocates, and per pass: its function, (grid,), (block,) and the
        # indices of its buffers -- a launch is one CuPy call (execute.run_plan's work,
        # done once per kernel)
        self._outs, self._temps, passes, bools = layout(self.plan)
        self._launches = [(self.fns[p.name], (p.grid,), (p.block,), idx) for p, idx in passes]
        self._bools = bools if any(bools) else None

    def __call__(self, inputs: list[Any]) -> list[Any]:
        cp = self.dev.cp
        k = self.kernel
        if self._empty:  # nothing to launch: empty outputs, or reductions' identities
            host = [np.asarray(to_host(a), dtype=b.dtype) for a, b in zip(inputs, k.inputs,
                                                                          strict=True)]
            return [cp.asarray(o) for o in k.reference(host)]
        arrays = []
        nd = cp.ndarray
        for a, dt in zip(inputs, self._dtypes, strict=True):
            if isinstance(a, DeviceValue):  # a program's array constant: uploaded once
                a = a.device()
            if type(a) is nd and a.dtype == dt and a.flags.c_contiguous:
                arr = a  # the common case: a device array as the kernel wants it
            else:
                arr = on_device(a, dt, self.dev)
            arrays.append(arr.view(cp.uint8) if dt == np.bool_ else arr)
        empty = cp.empty
        outs = [empty(shape, dt) for shape, dt in self._outs]
        table = [*arrays, *outs, *[empty(n, dt) for n, dt in self._temps]]
        for fn, grid, block, idx in self._launches:
            fn(grid, block, tuple([table[i] for i in idx]))
        if self._bools is None:
            return outs
        return [o.view(cp.bool_) if b else o for o, b in zip(outs, self._bools, strict=True)]


def to_host(v: Any) -> Any:
    """A CuPy array (or any CUDA array) as NumPy; anything else as it is."""
    if type(v) in DEVICE_ARRAY_TYPES:
        return v.get()
    get = getattr(v, "get", None)
    if get is not None and hasattr(v, "__cuda_array_interface__"):
        return get()
    if hasattr(v, "__cuda_array_interface__"):  # e.g. a CUDA torch tensor
        return device().cp.asarray(v).get()
    return v.host if isinstance(v, DeviceValue) else v


def on_device(v: Any, dtype: Any, dev: _Device) -> Any:
    """``v`` as a C-contiguous CuPy array of ``dtype`` on ``dev`` (copied there if need be)."""
    cp = dev.cp
    if isinstance(v, DeviceValue):  # a program's array constant: uploaded once
        v = v.device()
    if type(v) in DEVICE_ARRAY_TYPES or hasattr(v, "__cuda_array_interface__"):
        arr = cp.asarray(v)  # no copy: CuPy arrays, CUDA torch tensors...
        if arr.device.id != dev.id:
            raise MycValueError(f"backend='cuda': an array on GPU {arr.device.id}, but myc "
                                f"runs on GPU {dev.id} (CuPy's current device)")
        if arr.dtype != dtype and not getattr(dev, "elementwise", True):
            return cp.asarray(np.ascontiguousarray(arr.get(), dtype=dtype))  # (no NVRTC)
        return cp.ascontiguousarray(arr.astype(dtype, copy=False))
    return cp.asarray(np.ascontiguousarray(np.asarray(v, dtype=dtype)))


def compile_kernel(kernel: Kernel) -> CompiledKernel | None:
    """``kernel`` loaded on the GPU (cached by content), or None when the generator
    does not cover it (the host program then runs that group with NumPy)."""
    dev = device()
    key = cache_key(kernel, dev.arch)
    ck = _cache.get(key)
    if ck is None:
        try:
            ck = CompiledKernel(kernel, dev, key)
        except Unsupported:
            return None
        _cache[key] = ck
    return ck

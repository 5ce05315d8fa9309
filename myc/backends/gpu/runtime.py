"""What the GPU runtimes share: the device (CuPy's current one), kernels loaded from a
target's image, and launches.

CuPy is one module for both GPU vendors (its CUDA build or its ROCm build, whichever is
installed: ``cupy.cuda.runtime.is_hip`` says which), so a backend's runtime
(``cuda/runtime.py``, ``rocm/runtime.py``) only says which build it needs, how it names
the GPU's architecture and how it makes a kernel's image (PTX text for the driver to
JIT-compile, an HSA code object); opening the device, loading the image
(``cupy.cuda.function.Module().load``: ``cuModuleLoadData`` / ``hipModuleLoadData``),
the per-kernel launch tables and the arrays' moves are here.

``CompiledKernel`` has the kernel interface of the other backends --
``ck(inputs) -> outputs`` -- taking NumPy or CuPy arrays (NumPy ones copied to the
device) and returning CuPy arrays, so that consecutive kernels of a host program hand
their arrays over on the device (``host.py`` says what runs where).  The passes
(``codegen.Plan``) are launched in order on the current stream; nothing is read back.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from myc.backends.gpu.codegen import Plan, Unsupported, generate
from myc.backends.gpu.execute import layout
from myc.backends.gpu.host import DeviceConst
from myc.errors import MycRuntimeError, MycValueError
from myc.lower.kernel import Kernel
from myc.prims.abstract import DEVICE_ARRAY_TYPES


class GpuDevice:
    """CuPy's current GPU, checked to be of the vendor ``backend`` needs.

    ``install``: what to install, said when CuPy or a GPU is missing; ``hip``: whether
    the backend needs CuPy's ROCm build; ``arch(props)``: the architecture to generate
    for, from the device's properties; ``elementwise_hint``: how to make CuPy's own
    kernels work where they do not."""

    def __init__(self, backend: str, install: str, hip: bool,
                 arch: Callable[[dict], str], elementwise_hint: str):
        try:
            import cupy
        except ImportError as exc:
            raise MycRuntimeError(install) from exc
        is_hip = bool(getattr(getattr(getattr(cupy, "cuda", None), "runtime", None),
                              "is_hip", False))
        if is_hip != hip:
            other = "rocm" if is_hip else "cuda"
            built = "ROCm (AMD GPUs)" if is_hip else "CUDA (NVIDIA GPUs)"
            raise MycRuntimeError(f"{install}; the installed CuPy is built for {built}: "
                                  f"use backend='{other}', or install the other CuPy")
        try:
            ok = bool(cupy.cuda.is_available())
        except Exception:  # noqa: BLE001 - a broken driver reads as no GPU
            ok = False
        if not ok:
            tool = "rocm-smi" if hip else "nvidia-smi"
            raise MycRuntimeError(f"{install}; CuPy is installed but finds no GPU "
                                  f"(check {tool} and the driver)")
        self.backend = backend
        self.cp = cupy
        self.id = cupy.cuda.Device().id
        props = cupy.cuda.runtime.getDeviceProperties(self.id)
        name = props.get("name", b"GPU")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.arch = arch(props)
        DEVICE_ARRAY_TYPES.add(cupy.ndarray)  # specialized on shape and dtype only
        self.elementwise = _can_compile(cupy, backend, elementwise_hint)


def _can_compile(cupy: Any, backend: str, hint: str) -> bool:
    """Can CuPy run its own elementwise kernels here (it compiles them at run time:
    NVRTC, hipRTC)?  If not, the host steps that would use them run on the host
    (counted, and said once)."""
    try:
        x = cupy.empty((1,), "float32")
        x = x * x.dtype.type(2)
        return True
    except Exception as exc:  # noqa: BLE001 - e.g. NVRTC not found
        warnings.warn(f"myc backend='{backend}': CuPy cannot compile its elementwise "
                      f"kernels ({type(exc).__name__}: {str(exc)[:200]}); steps other "
                      f"than myc's kernels and GEMM run on the host ({hint})",
                      RuntimeWarning, stacklevel=4)
        return False


def cached_image(kind: str, kernel: Kernel, key: str,
                 make: Callable[[Kernel], tuple[Any, Plan]]) -> tuple[Any, Plan]:
    """``make(kernel)`` -- (image, plan) -- through the disk cache (``MYC_CACHE_DIR``,
    entries of ``kind``): a program loaded from disk then needs no LLVM for its
    kernels.  The plan is made again (no LLVM run)."""
    from myc.support import diskcache

    image = diskcache.load(kind, key) if key else None
    if isinstance(image, str | bytes):
        from llvmlite import ir

        return image, generate(kernel, ir.Module(name=kernel.name))
    image, plan = make(kernel)
    if key:
        diskcache.store(kind, key, image)
    return image, plan


class CompiledKernel:
    """A kernel loaded on the GPU from ``image`` (the bytes CuPy's ``Module.load``
    takes): ``ck(inputs) -> outputs`` (CuPy arrays out)."""

    def __init__(self, kernel: Kernel, dev: Any, image: bytes, plan: Plan):
        self.kernel = kernel
        self.dev = dev
        self.plan = plan
        self.module = dev.cp.cuda.function.Module()
        self.module.load(image)
        self.fns = {p.name: self.module.get_function(p.name) for p in self.plan.passes}
        self._empty = any(d == 0 for d in kernel.shape)
        self._dtypes = [np.dtype(b.dtype) for b in kernel.inputs]
        # what a call allocates, and per pass: its function, (grid,), (block,) and the
        # indices of its buffers -- a launch is one CuPy call (execute.run_plan's work,
        # done once per kernel)
        self._outs, self._temps, passes, bools = layout(self.plan)
        self._launches = [(self.fns[p.name], (p.grid,), (p.block,), idx) for p, idx in passes]
        self._bools = bools if any(bools) else None
        self._in_bool = any(d == np.bool_ for d in self._dtypes)
        # CuPy's ndarray keeps its contiguity as a field; ``flags`` makes an object
        self._contiguous = attrgetter("_c_contiguous") \
            if hasattr(dev.cp.ndarray, "_c_contiguous") else _flags_contiguous
        # per launch: its function, grid, block and a getter of its buffers' tuple
        self._calls = [(fn, grid, block, _getter(idx)) for fn, grid, block, idx in
                       self._launches]
        self._out_specs = self._outs + [(n, dt) for n, dt in self._temps]

    def count_launches(self, wrap: Callable[[Any], Any]) -> None:
        """Route every launch through ``wrap(fn)`` (a benchmark's counter)."""
        self._launches = [(wrap(fn), *rest) for fn, *rest in self._launches]
        self._calls = [(wrap(fn), *rest) for fn, *rest in self._calls]

    def __call__(self, inputs: list[Any]) -> list[Any]:
        cp = self.dev.cp
        k = self.kernel
        if self._empty:  # nothing to launch: empty outputs, or reductions' identities
            host = [np.asarray(to_host(a, self.dev), dtype=b.dtype)
                    for a, b in zip(inputs, k.inputs, strict=True)]
            return [cp.asarray(o) for o in k.reference(host)]
        table = []
        nd = cp.ndarray
        contiguous = self._contiguous
        for a, dt in zip(inputs, self._dtypes, strict=True):
            if type(a) is DeviceConst:  # a program's array constant: uploaded once
                a = a.device()
            if type(a) is not nd or a.dtype != dt or not contiguous(a):
                a = on_device(a, dt, self.dev)  # (the common case: as the kernel wants it)
            table.append(a)
        if self._in_bool:
            table = [a.view(cp.uint8) if dt == np.bool_ else a
                     for a, dt in zip(table, self._dtypes, strict=True)]
        nin = len(table)
        empty = cp.empty
        for shape, dt in self._out_specs:  # outputs, then temporaries
            table.append(empty(shape, dt))
        for fn, grid, block, get in self._calls:
            fn(grid, block, get(table))
        outs = table[nin:nin + len(self._outs)]
        if self._bools is None:
            return outs
        return [o.view(cp.bool_) if b else o for o, b in zip(outs, self._bools, strict=True)]


def _flags_contiguous(a: Any) -> bool:
    return a.flags.c_contiguous


def _getter(idx: tuple[int, ...]) -> Callable[[list[Any]], tuple]:
    """``lambda table: tuple(table[i] for i in idx)``, in C where it can be."""
    if len(idx) > 1:
        return itemgetter(*idx)
    if idx:
        i = idx[0]
        return lambda table: (table[i],)
    return lambda table: ()


def to_host(v: Any, dev: Any = None) -> Any:
    """A CuPy array (or any GPU array CuPy takes) as NumPy; anything else as it is."""
    if type(v) in DEVICE_ARRAY_TYPES:
        return v.get()
    get = getattr(v, "get", None)
    if get is not None and hasattr(v, "__cuda_array_interface__"):
        return get()
    if hasattr(v, "__cuda_array_interface__") and dev is not None:  # a GPU torch tensor
        return dev.cp.asarray(v).get()
    return v.host if type(v) is DeviceConst else v


def on_device(v: Any, dtype: Any, dev: Any) -> Any:
    """``v`` as a C-contiguous CuPy array of ``dtype`` on ``dev`` (copied there if need be)."""
    cp = dev.cp
    if type(v) is DeviceConst:  # a program's array constant: uploaded once
        v = v.device()
    if type(v) in DEVICE_ARRAY_TYPES or hasattr(v, "__cuda_array_interface__"):
        arr = cp.asarray(v)  # no copy: CuPy arrays, GPU torch tensors...
        if arr.device.id != dev.id:
            raise MycValueError(f"backend='{getattr(dev, 'backend', 'cuda')}': an array on GPU "
                                f"{arr.device.id}, but myc runs on GPU {dev.id} (CuPy's "
                                "current device)")
        if arr.dtype != dtype and not getattr(dev, "elementwise", True):
            return cp.asarray(np.ascontiguousarray(arr.get(), dtype=dtype))  # (no rtc)
        return cp.ascontiguousarray(arr.astype(dtype, copy=False))
    return cp.asarray(np.ascontiguousarray(np.asarray(v, dtype=dtype)))


def kernel_key(tag: str, kernel: Kernel, arch: str) -> str:
    """A kernel's cache key for a target (``tag``: the image format and its version)."""
    body = kernel.format().split("\n", 1)[1:]
    text = "\n".join([tag, arch, kernel.name, repr(kernel.shape), *body])
    return hashlib.sha256(text.encode()).hexdigest()


def load_kernel(cache: dict[str, Any], key: str, make: Callable[[], Any]) -> Any | None:
    """The kernel loaded under ``key`` in ``cache`` (made by ``make`` the first time), or
    None when the generator does not cover it (the host program then runs that group
    another way)."""
    ck = cache.get(key)
    if ck is None:
        try:
            ck = make()
        except Unsupported:
            return None
        cache[key] = ck
    return ck

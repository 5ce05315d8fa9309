"""The OpenCL device, compiled programs and launches (PyOpenCL).

``compile_kernel(kernel)`` returns a callable with the other backends' kernel interface
(``ck(inputs) -> outputs``).  Given device arrays (``pyopencl.array.Array``) it returns
device arrays, so consecutive steps of a host program hand their arrays over on the
device (``host.py`` says what runs where); given only NumPy arrays it copies them in and
the results out.  The passes (``codegen.LaunchPlan``) are enqueued in order on one
in-order queue; nothing waits for them until a result is read.  The device itself is
``device.py``'s (``device()`` and ``_Device`` are named here too).
"""

from __future__ import annotations

import hashlib
from math import prod
from typing import Any

import numpy as np

from myc.backends.opencl.codegen import GROUP, LaunchPlan, NoFloat64, Unsupported, generate
from myc.backends.opencl.device import _Device, device, lock
from myc.backends.opencl.ops import as_kernel_arg, to_host
from myc.errors import MycTypeError
from myc.lower.kernel import Kernel

_cache: dict[str, CompiledKernel] = {}
_OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt", "-w"]  # warnings: x == x in a DAG
_NP = {"float": np.float32, "double": np.float64, "long": np.int64, "uchar": np.uint8}


def cache_key(kernel: Kernel, dev: _Device) -> str:
    body = kernel.format().split("\n", 1)[1:]
    text = "\n".join(["ocl1", dev.name, repr(kernel.shape), *body])
    return hashlib.sha256(text.encode()).hexdigest()


class CompiledKernel:
    """A kernel built for the OpenCL device: ``ck(inputs) -> outputs``."""

    def __init__(self, kernel: Kernel, dev: _Device, key: str):
        self.kernel = kernel
        self.key = key
        self.dev = dev
        self.plan: LaunchPlan = generate(kernel, dev.fp64,
                                         dev.device.max_work_group_size >= GROUP, dev.cpu)
        cl = dev.cl
        try:
            self.program = cl.Program(dev.ctx, self.plan.source).build(options=_OPTIONS)
        except cl.Error as exc:  # a generator bug: say so with the source
            raise RuntimeError(f"OpenCL build of {kernel.name} failed: {exc}\n"
                               f"{self.plan.source}") from exc
        self._kernels = [getattr(self.program, p.name) for p in self.plan.passes]
        self._outs = [(tuple(b.shape), np.dtype(b.dtype)) for b in kernel.output_buffers()]
        self._temps = [max(1, n) * np.dtype(_NP[ct]).itemsize for ct, n in self.plan.temps]
        self._dtypes = [np.dtype(b.dtype) for b in kernel.inputs]
        self._empty = prod(kernel.shape) == 0

    def __call__(self, inputs: list[Any]) -> list[Any]:
        if all(type(a) is np.ndarray for a in inputs):  # host arrays in, host arrays out
            return [o.get() for o in self.launch(inputs)]
        return self.launch(inputs)

    def launch(self, inputs: list[Any]) -> list[Any]:
        """The outputs as device arrays; host inputs are copied to the device first."""
        dev = self.dev
        k = self.kernel
        if self._empty:  # nothing to launch: empty outputs, or reductions' identities
            host = [np.asarray(to_host(a), dtype=dt) for a, dt in zip(inputs, self._dtypes,
                                                                      strict=True)]
            return [dev.upload(o) for o in k.reference(host)]
        arrays = [as_kernel_arg(a, dt, dev) for a, dt in zip(inputs, self._dtypes,
                                                              strict=True)]
        outs = [dev.empty(shape, dt) for shape, dt in self._outs]
        table = {"in": [a.base_data for a in arrays], "out": [o.base_data for o in outs],
                 "tmp": [dev.pool.allocate(n) for n in self._temps]}
        queue = dev.queue
        with lock:
            for p, knl in zip(self.plan.passes, self._kernels, strict=True):
                knl(queue, p.grid or (p.size,), None if p.local is None else (p.local,),
                    *[table[kind][i] for kind, i in p.args])
                dev.flush()
        return outs


def supported_dtypes(dev: _Device) -> frozenset[str]:
    """The array dtypes this device runs (declared up front: float64 needs the
    ``cl_khr_fp64`` extension, which many GPUs and embedded devices lack)."""
    base = frozenset({"float32", "int64", "bool"})
    return base | {"float64"} if dev.fp64 else base


def unsupported_dtype(dtype: Any, dev: _Device | None = None) -> MycTypeError | None:
    """The error a program with arrays of ``dtype`` gets on this device, if any."""
    dev = dev or device()
    name = np.dtype(dtype).name
    if name != "float64" or name in supported_dtypes(dev):  # (the other dtypes a
        return None  # program holds -- uint8 tapes... -- run as host steps do)
    return MycTypeError(
        f"backend='opencl': the OpenCL device ({dev.name}) has no {name} "
        "(it lacks the cl_khr_fp64 extension)",
        hint="pass float32 arrays (x.astype(np.float32)), pick a device with "
        "cl_khr_fp64 (MYC_OPENCL_DEVICE=P:D), or use backend='cpu'")


def compile_kernel(kernel: Kernel) -> CompiledKernel | None:
    """``kernel`` built for the OpenCL device (cached by content), or None when the
    generator does not cover it (the host program then runs with NumPy -- all of it, not
    only that group -- and says so with a ``MycFallbackWarning``).  A dtype the device
    does not support (:func:`supported_dtypes`) is a ``MycTypeError`` instead."""
    # (``myc.backends.gpu.runtime.kernel_key`` and ``load_kernel`` are this for CUDA and
    # ROCm, but catch the GPU generator's ``Unsupported``: sharing them needs one
    # ``Unsupported`` for every renderer, e.g. in ``myc.lower.kernel``)
    dev = device()
    key = cache_key(kernel, dev)
    ck = _cache.get(key)
    if ck is None:
        try:
            ck = CompiledKernel(kernel, dev, key)
        except NoFloat64:
            raise unsupported_dtype("float64", dev) from None
        except Unsupported:
            return None
        _cache[key] = ck
    return ck


__all__ = ["CompiledKernel", "_Device", "cache_key", "compile_kernel", "device"]

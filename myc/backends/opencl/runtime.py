"""The OpenCL device, compiled programs and launches (PyOpenCL).

``compile_kernel(kernel)`` returns a callable with the CPU backend's kernel interface:
NumPy arrays in, NumPy arrays out (``ck(inputs) -> outputs``), so a host program runs
it as a step the way it runs a CPU kernel; GEMM and the other host steps stay NumPy's.
Inputs are copied to device buffers, the passes (``codegen.LaunchPlan``) are enqueued
in order on one in-order queue, and the outputs are read back (reductions split over
work-items are finished on the host from their partials).

The device is the first one found, or ``MYC_OPENCL_DEVICE=P:D`` (platform ``P``'s
device ``D``).  Here that is PoCL's CPU device (``pip install 'pyopencl[pocl]'``);
on a machine with a GPU and its OpenCL driver, the same code runs there.
"""

from __future__ import annotations

import hashlib
import os
import threading
from math import prod
from typing import Any

import numpy as np

from myc.backends.opencl.codegen import CTYPE, GROUP, LaunchPlan, Unsupported, generate
from myc.errors import MycRuntimeError
from myc.lower.kernel import Kernel, Reduce, output_shape

_lock = threading.Lock()
_device: Any = None
_cache: dict[str, CompiledKernel] = {}
_OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt", "-w"]  # warnings: x == x in a DAG
_NP = {"float": np.float32, "double": np.float64, "long": np.int64, "uchar": np.uint8}


class _Device:
    def __init__(self) -> None:
        try:
            import pyopencl as cl
        except ImportError as exc:
            raise MycRuntimeError(
                "backend='opencl' needs PyOpenCL and an OpenCL driver: "
                "pip install 'pyopencl[pocl]' (PoCL runs OpenCL on the CPU)") from exc
        self.cl = cl
        want = os.environ.get("MYC_OPENCL_DEVICE", "")
        devices = []
        try:
            for p in cl.get_platforms():
                devices.append(p.get_devices())
        except cl.Error as exc:
            raise MycRuntimeError(f"backend='opencl': no OpenCL platform ({exc})") from exc
        try:
            if want:
                pi, di = (int(x) for x in want.split(":"))
                dev = devices[pi][di]
            else:
                dev = next(d for ds in devices for d in ds)
        except (ValueError, IndexError, StopIteration):
            raise MycRuntimeError(
                f"backend='opencl': no OpenCL device{f' {want!r}' if want else ''} "
                f"(found {sum(len(ds) for ds in devices)})") from None
        self.device = dev
        self.ctx = cl.Context([dev])
        self.queue = cl.CommandQueue(self.ctx)
        self.fp64 = "cl_khr_fp64" in dev.extensions
        # arrays in host memory are the device's memory: no copies (PoCL, CPU drivers)
        self.host_memory = bool(dev.type & cl.device_type.CPU)
        self.name = f"{dev.platform.name} / {dev.name} / {dev.driver_version}"


def device() -> _Device:
    """The OpenCL device myc uses (opened on first use)."""
    global _device
    with _lock:
        if _device is None:
            _device = _Device()
        return _device


def cache_key(kernel: Kernel, dev: _Device) -> str:
    body = kernel.format().split("\n", 1)[1:]
    text = "\n".join(["ocl1", dev.name, repr(kernel.shape), *body])
    return hashlib.sha256(text.encode()).hexdigest()


class CompiledKernel:
    """A kernel built for the OpenCL device: ``ck(inputs) -> outputs`` (NumPy arrays)."""

    def __init__(self, kernel: Kernel, dev: _Device, key: str):
        self.kernel = kernel
        self.key = key
        self.dev = dev
        self.plan: LaunchPlan = generate(kernel, dev.fp64, dev.device.max_work_group_size >= GROUP)
        cl = dev.cl
        try:
            self.program = cl.Program(dev.ctx, self.plan.source).build(options=_OPTIONS)
        except cl.Error as exc:  # a generator bug: say so with the source
            raise RuntimeError(f"OpenCL build of {kernel.name} failed: {exc}\n"
                               f"{self.plan.source}") from exc
        self._kernels = [getattr(self.program, p.name) for p in self.plan.passes]
        outs = kernel.output_buffers()
        self._out_specs = [(b.shape, np.dtype(b.dtype)) for b in outs]
        self._empty = prod(kernel.shape) == 0

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        k = self.kernel
        if self._empty:  # nothing to launch: empty outputs, or reductions' identities
            return k.reference(inputs)
        cl = self.dev.cl
        ctx, queue = self.dev.ctx, self.dev.queue
        mf = cl.mem_flags
        args = []
        for a, b in zip(inputs, k.inputs, strict=True):
            host = np.asarray(a, dtype=np.dtype(b.dtype))
            if not host.flags.c_contiguous:
                host = host.copy(order="C")
            if host.shape != tuple(b.shape):
                raise ValueError(f"kernel input of shape {host.shape}, expected {b.shape}")
            # a CPU device reads the array where it is; another gets a copy
            share = mf.USE_HOST_PTR if self.dev.host_memory else mf.COPY_HOST_PTR
            args.append(cl.Buffer(ctx, mf.READ_ONLY | share,
                                  hostbuf=host.view(np.uint8) if host.dtype == np.bool_
                                  else host))
        rows = [cl.Buffer(ctx, mf.READ_WRITE, size=max(1, n * np.dtype(
            _NP[CTYPE[dt]]).itemsize)) for dt, n in self.plan.rows]
        results: list[Any] = [None] * len(self._out_specs)
        reads = []
        with _lock:
            for p, knl in zip(self.plan.passes, self._kernels, strict=True):
                what, i = p.writes
                if what == "row":
                    dst = rows[i]
                else:
                    shape, dt = self._out_specs[i]
                    if what == "out":
                        host = np.empty(shape, np.uint8 if dt == np.bool_ else dt)
                    else:  # partials, in the accumulator's type
                        host = np.empty(p.size, _NP[p.ctype])
                    if self.dev.host_memory:  # written in place, made visible by a map
                        dst = cl.Buffer(ctx, mf.WRITE_ONLY | mf.USE_HOST_PTR, hostbuf=host)
                    else:
                        dst = cl.Buffer(ctx, mf.WRITE_ONLY, size=host.nbytes)
                    reads.append((host, dst, what, i))
                knl(queue, (p.size,), None if p.local is None else (p.local,), *args,
                    *rows[:p.reads_rows], dst)
            for host, dst, _, _ in reads:
                if self.dev.host_memory:
                    view, _ = cl.enqueue_map_buffer(queue, dst, cl.map_flags.READ, 0,
                                                    (host.nbytes,), np.uint8)
                    view.base.release(queue)
                else:
                    cl.enqueue_copy(queue, host, dst, is_blocking=False)
            queue.finish()
        for host, _, what, i in reads:
            shape, dt = self._out_specs[i]
            if what == "out":
                results[i] = host.view(np.bool_) if dt == np.bool_ else host
                continue
            out = next(o for o in k.outputs if o.out_index == i)
            assert isinstance(out, Reduce)
            parts = host.reshape(-1, self.plan.split[i])
            red = {"sum": np.sum, "max": np.max, "min": np.min}[out.op]
            results[i] = np.asarray(red(parts, axis=1)).astype(dt).reshape(
                output_shape(k.shape, out))
        return results


def compile_kernel(kernel: Kernel) -> CompiledKernel | None:
    """``kernel`` built for the OpenCL device (cached by content), or None when the
    generator does not cover it (the host program then runs with NumPy -- all of it, not
    only that group -- and says so with a ``MycFallbackWarning``)."""
    dev = device()
    key = cache_key(kernel, dev)
    ck = _cache.get(key)
    if ck is None:
        try:
            ck = CompiledKernel(kernel, dev, key)
        except Unsupported:
            return None
        _cache[key] = ck
    return ck

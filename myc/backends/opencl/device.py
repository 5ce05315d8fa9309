"""The OpenCL device myc uses, and what every OpenCL module needs to know about it.

The bottom of the OpenCL backend (``ops``, ``gemm``, ``runtime`` and ``host`` build on
it): the device (context, queue, memory pool; opened on first use), the counters of
copies, scalar reads and host steps (``transfers``), the array constants of a program
(:class:`DeviceConst`) and the signal a device step raises for a case it does not cover
(:class:`NotOnDevice`).

The device is the first one found, or ``MYC_OPENCL_DEVICE=P:D`` (platform ``P``'s
device ``D``).  Here that is PoCL's CPU device (``pip install 'pyopencl[pocl]'``);
on a machine with a GPU and its OpenCL driver, the same code runs there.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from typing import Any

import numpy as np

from myc.backends import device_host
from myc.errors import MycRuntimeError
from myc.prims.abstract import DEVICE_ARRAY_TYPES

# held while enqueueing: one in-order queue, shared by the threads of a process
lock = threading.Lock()
_open_lock = threading.Lock()
_device: Any = None
# nothing runs on a device until a result is read: at most this many passes wait in
# the queue (a long loop of small kernels must not queue without bound)
_FLUSH_EVERY = 256


class NotOnDevice(Exception):  # noqa: N818 - a control signal
    """This step's operands are not a case its device implementation covers."""


# -- counters ---------------------------------------------------------------------------
_counts: Counter[str] = Counter()
_count_lock = threading.Lock()


def count(name: str, n: int = 1) -> None:
    with _count_lock:
        _counts[name] += n


def transfers() -> dict[str, int]:
    """Copies and reads since the process started (or :func:`reset_transfers`):
    ``to_device`` / ``to_host`` (arrays copied), ``scalar_reads`` (device scalars read
    by the host: conditions, a program's scalar results), ``device_copies`` (copies on
    the device: a transpose, a slice), ``gemm_kernel`` / ``gemm_host_blas`` (matrix
    products by each path), ``host:<step>`` (steps run on the host)."""
    with _count_lock:
        return dict(_counts)


def host_fallbacks() -> dict[str, int]:
    """How many times each step name ran on the host with device operands."""
    with _count_lock:
        return {k[5:]: v for k, v in _counts.items() if k.startswith("host:")}


def reset_transfers() -> None:
    with _count_lock:
        _counts.clear()


# -- the device -------------------------------------------------------------------------
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
        self.name = f"{dev.platform.name} / {dev.name} / {dev.driver_version}"
        import pyopencl.array as cla
        import pyopencl.tools as clt

        self.cla = cla
        self.Array = cla.Array
        # device memory through a pool: a program's outputs and temporaries, every call
        self.pool = clt.MemoryPool(clt.ImmediateAllocator(self.queue))
        # a CPU device (PoCL): its memory is host memory, its compiler vectorizes loops
        # within a work-item (``codegen``, ``gemm`` choose their kernels by it)
        self.cpu = bool(dev.type & cl.device_type.CPU)
        DEVICE_ARRAY_TYPES.add(cla.Array)  # specialized on shape and dtype only
        self.enqueued = 0

    def empty(self, shape: tuple, dtype: Any) -> Any:
        try:
            return self.Array(self.queue, shape, dtype, allocator=self.pool)
        except self.cl.Error as exc:  # as NumPy says it (the step's error names the line)
            raise MemoryError(f"Unable to allocate {_size(shape, dtype)} for an array "
                              f"with shape {tuple(shape)} and data type "
                              f"{np.dtype(dtype)} on the OpenCL device ({exc})") from None

    def upload(self, host: np.ndarray) -> Any:
        """A device copy of ``host`` (counted: :func:`transfers`)."""
        host = np.asarray(host)
        if not host.flags.c_contiguous:
            host = host.copy(order="C")
        count("to_device" if host.ndim else "scalar_writes")
        out = self.empty(host.shape, host.dtype)
        if host.size:
            out.set(host)
        return out

    def flush(self) -> None:
        self.enqueued += 1
        if self.enqueued >= _FLUSH_EVERY:
            self.enqueued = 0
            self.queue.flush()


def _size(shape: tuple, dtype: Any) -> str:
    n = float(np.dtype(dtype).itemsize)
    for d in shape:
        n *= d
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.2f} {unit}" if unit != "bytes" else f"{int(n)} bytes"
        n /= 1024
    return f"{n:.2f} EiB"  # pragma: no cover


def device() -> _Device:
    """The OpenCL device myc uses (opened on first use)."""
    global _device
    dev = _device  # (opened: no lock to take on every step)
    if dev is not None:
        return dev
    with _open_lock:
        if _device is None:
            _device = _Device()
        return _device


def on_device(v: Any) -> bool:
    """Is ``v`` an array on myc's OpenCL device (a ``pyopencl.array.Array``)?"""
    dev = _device
    return dev is not None and type(v) is dev.Array


def read_scalar(v: Any) -> Any:
    """A device scalar's value on the host (counted: ``scalar_reads``)."""
    count("scalar_reads")
    return v.get()


class DeviceConst(device_host.DeviceConst):
    """An array constant of an opencl host program: uploaded on first use, then reused
    by every call (the host copy is what the disk cache stores)."""

    def upload(self, host: np.ndarray) -> Any:
        return device().upload(host)

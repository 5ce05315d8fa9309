"""Matrix products on the OpenCL device: a tiled GEMM kernel that myc generates.

``C[b] = op(A[b]) @ op(B[b])`` for float32 and float64, ``op`` a transpose or not
(a flag of the kernel, so ``x.T @ y`` reads ``x`` where it is: ``mT`` on the device is
a strided view, not a copy), over a batch (a third global dimension, with a stride per
operand: 0 for a matrix broadcast against a batch).  On a GPU a work-group of 8x8
work-items computes a 32x32 tile of ``C``, each work-item a 4x4 block in registers; the
tiles of ``A`` (32x16) and ``B`` (16x32) it reads are staged in local memory; edges that
are not multiples of the tile are zero-filled on load and masked on store.  On a CPU
device a work-item computes 8 rows of one column (``cpu_source``).  Float32 accumulates
in float32, as NumPy's BLAS does.

Which of the two runs is :func:`choice`: on a CPU device (PoCL) the products run with
NumPy's BLAS on the device's memory mapped into the host -- a CPU device's memory is
host memory, so a map is not a copy, and the host BLAS is far faster than any kernel
PoCL compiles (W4: 15x the cpu backend with the kernel, 1.4x with the BLAS); on any
other device, the kernel.  ``MYC_OPENCL_GEMM=kernel`` or ``=host-blas`` overrides
either way (host BLAS on a GPU maps, so copies, its operands).  Each product is
counted by the path it took (``host.transfers()["gemm_kernel"]`` /
``["gemm_host_blas"]``); ``myc.ir(stage="kernels")`` notes the choice on each GEMM
step.  The choice is made when a product runs, not compiled into the host program, so
it is not part of any cache key.  Integer and bool products run on the host (counted
as host steps).
"""

from __future__ import annotations

import os
from math import prod
from typing import Any

import numpy as np

from myc.backends.opencl import ops
from myc.backends.opencl.device import DeviceConst, NotOnDevice, count, lock, on_device
from myc.backends.opencl.device import device as _dev
from myc.backends.opencl.ops import as_device
from myc.errors import MycValueError

TM = TN = 32  # the C tile of a work-group
TK = 16  # the K slice staged per step
WG = 8  # work-items per side of a work-group (each computes TM/WG x TN/WG)
_R = TM // WG


def source(ct: str, ta: bool, tb: bool) -> str:
    """The OpenCL C of the GEMM kernel for element type ``ct`` and the transposes."""
    a_at = "A[gk * lda + gi]" if ta else "A[gi * lda + gk]"
    b_at = "B[gj * ldb + gk]" if tb else "B[gk * ldb + gj]"
    # consecutive work-items load consecutive addresses
    a_idx = (f"int kk = e / {TM}, ii = e % {TM};" if ta else
             f"int ii = e / {TK}, kk = e % {TK};")
    b_idx = (f"int jj = e / {TK}, kk = e % {TK};" if tb else
             f"int kk = e / {TN}, jj = e % {TN};")
    return f"""
__kernel __attribute__((reqd_work_group_size({WG}, {WG}, 1)))
void gemm(__global const {ct} *restrict A, long aoff, long lda, long sa,
          __global const {ct} *restrict B, long boff, long ldb, long sb,
          __global {ct} *restrict C, long ldc, long sc, long M, long N, long K) {{
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * {WG} + lx;
    long b = get_global_id(2);
    long i0 = get_group_id(1) * {TM}, j0 = get_group_id(0) * {TN};
    A += aoff + b * sa;
    B += boff + b * sb;
    C += b * sc;
    __local {ct} As[{TK}][{TM}];
    __local {ct} Bs[{TK}][{TN}];
    {ct} acc[{_R}][{_R}];
    for (int r = 0; r < {_R}; r++)
        for (int s = 0; s < {_R}; s++) acc[r][s] = 0;
    for (long k0 = 0; k0 < K; k0 += {TK}) {{
        for (int e = lid; e < {TM * TK}; e += {WG * WG}) {{
            {a_idx}
            long gi = i0 + ii, gk = k0 + kk;
            As[kk][ii] = (gi < M && gk < K) ? {a_at} : ({ct})0;
        }}
        for (int e = lid; e < {TK * TN}; e += {WG * WG}) {{
            {b_idx}
            long gj = j0 + jj, gk = k0 + kk;
            Bs[kk][jj] = (gj < N && gk < K) ? {b_at} : ({ct})0;
        }}
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < {TK}; kk++) {{
            {ct} av[{_R}], bv[{_R}];
            for (int r = 0; r < {_R}; r++) av[r] = As[kk][ly + {WG} * r];
            for (int s = 0; s < {_R}; s++) bv[s] = Bs[kk][lx + {WG} * s];
            for (int r = 0; r < {_R}; r++)
                for (int s = 0; s < {_R}; s++) acc[r][s] += av[r] * bv[s];
        }}
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    for (int r = 0; r < {_R}; r++) {{
        long i = i0 + ly + {WG} * r;
        for (int s = 0; s < {_R}; s++) {{
            long j = j0 + lx + {WG} * s;
            if (i < M && j < N) C[i * ldc + j] = acc[r][s];
        }}
    }}
}}
"""


RM = 8  # rows of C per work-item on a CPU device (one column each)


def cpu_source(ct: str, ta: bool, tb: bool) -> str:
    """The GEMM kernel for a CPU device: a work-item computes ``RM`` rows of one column
    of ``C``, its accumulators ``RM`` named scalars (written out, not an array: PoCL
    keeps a private array in memory, and that kernel ran 1000x slower), with no local
    memory and no barrier (PoCL runs a work-group with barriers far slower).  PoCL
    vectorizes across the work-items of the first dimension -- neighbouring columns --
    so each step of ``k`` loads a vector of ``B``'s row and broadcasts ``RM`` elements
    of ``A``: an outer-product update in vector registers.  Rows past ``M`` are clamped
    on load and masked on store."""
    rows = "".join(f"    long i{r} = r0 + {r} < M ? r0 + {r} : M - 1;\n" for r in range(RM))
    accs = "".join(f"    {ct} c{r} = 0;\n" for r in range(RM))
    a_at = (lambda r: f"A[k * lda + i{r}]") if ta else (lambda r: f"A[i{r} * lda + k]")
    b_at = "B[j * ldb + k]" if tb else "B[k * ldb + j]"
    upd = "".join(f"        c{r} += {a_at(r)} * bv;\n" for r in range(RM))
    store = "".join(f"    if (r0 + {r} < M) C[(r0 + {r}) * ldc + j] = c{r};\n"
                    for r in range(RM))
    return f"""
__kernel void gemm(__global const {ct} *restrict A, long aoff, long lda, long sa,
                   __global const {ct} *restrict B, long boff, long ldb, long sb,
                   __global {ct} *restrict C, long ldc, long sc, long M, long N, long K) {{
    long j = get_global_id(0), r0 = get_global_id(1) * {RM}, b = get_global_id(2);
    A += aoff + b * sa;
    B += boff + b * sb;
    C += b * sc;
{rows}{accs}    for (long k = 0; k < K; k++) {{
        {ct} bv = {b_at};
{upd}    }}
{store}}}
"""


def _kernel(ct: str, ta: bool, tb: bool, cpu: bool) -> Any:
    build = ops._kernel
    if cpu:
        return build(("gemm-cpu", ct, ta, tb), cpu_source(ct, ta, tb), "gemm")
    return build(("gemm", ct, ta, tb), source(ct, ta, tb), "gemm")


def _operand(x: Any, dt: np.dtype) -> tuple[Any, bool, int, int]:
    """(array, transposed, leading dimension, element offset) of a matrix operand
    (batch axes in front): a C-contiguous array, or the transpose of one (``mT``'s
    view) as it is; anything else is copied to a contiguous array first."""
    if on_device(x) and x.dtype == dt and x.ndim >= 2:
        item = x.dtype.itemsize
        st = [s // item for s in x.strides]
        m, n = x.shape[-2], x.shape[-1]
        batch = ops._c_strides(x.shape[:-2] + (m * n,))[:-1]
        if x.flags.c_contiguous:
            return x, False, n, x.offset // item
        if st[-2] == 1 and st[-1] == m and tuple(st[:-2]) == tuple(batch):
            return x, True, m, x.offset // item
    x = as_device(x, dt)
    return x, False, x.shape[-1], 0


def _gemm_kernel(a: Any, b: Any, dt: np.dtype) -> Any:
    """``a @ b`` for operands of rank >= 2 (NumPy's batch broadcasting)."""
    dev = _dev()
    m, k = a.shape[-2:]
    k2, n = b.shape[-2:]
    if k != k2:
        raise NotOnDevice("shapes do not match: the host raises NumPy's error")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise NotOnDevice("batch shapes do not broadcast") from None
    nb = prod(batch)

    def prep(x: Any, rows: int, cols: int) -> tuple[Any, bool, int, int, int]:
        if prod(x.shape[:-2]) not in (1, nb) or (prod(x.shape[:-2]) == nb and
                                                 tuple(x.shape[:-2]) != batch):
            x = ops.broadcast_to(as_device(x, dt), batch + (rows, cols))
        arr, t, ld, off = _operand(x, dt)
        stride = 0 if prod(x.shape[:-2]) == 1 else rows * cols
        return arr, t, ld, off, stride

    A, ta, lda, aoff, sa = prep(a, m, k)
    B, tb, ldb, boff, sb = prep(b, k, n)
    out = dev.empty(batch + (m, n), dt)
    if out.size == 0:
        return out
    if k == 0:
        return ops.fill(out, 0)
    if choice(dev.cpu) == "host-blas":
        return _host_blas(A, ta, B, tb, out, batch, (m, k, n))
    count("gemm_kernel")
    knl = _kernel(ops._ct(dt), ta, tb, dev.cpu)
    if dev.cpu:
        grid, local = (n, -(-m // RM), nb), None
    else:
        grid, local = (-(-n // TN) * WG, -(-m // TM) * WG, nb), (WG, WG, 1)
    if nb == 1:  # no batch: a 2-d range (PoCL ran the 3-d one of 128^3 5x slower)
        grid, local = grid[:2], None if local is None else local[:2]
    with lock:
        knl(dev.queue, grid, local, A.base_data, np.int64(aoff), np.int64(lda),
            np.int64(sa), B.base_data, np.int64(boff), np.int64(ldb), np.int64(sb),
            out.base_data, np.int64(n), np.int64(m * n), np.int64(m), np.int64(n),
            np.int64(k))
        dev.flush()
    return out


def _host_blas(A: Any, ta: bool, B: Any, tb: bool, out: Any, batch: tuple,
               mkn: tuple) -> Any:
    """The product by NumPy's BLAS on the buffers mapped into the host (on a CPU device
    the map is the memory itself; elsewhere the driver copies)."""
    dev = _dev()
    cl = dev.cl
    count("gemm_host_blas")
    m, k, n = mkn

    def view(x: Any, flags: Any) -> tuple[np.ndarray, Any]:
        item = x.dtype.itemsize
        nbytes = x.base_data.size
        mapped, _ = cl.enqueue_map_buffer(dev.queue, x.base_data, flags, 0, (nbytes,),
                                          np.uint8, is_blocking=True)
        span = item * (1 + sum((n - 1) * st // item for n, st in zip(x.shape, x.strides,
                                                                      strict=True)))
        arr = np.lib.stride_tricks.as_strided(
            mapped[x.offset:x.offset + span].view(x.dtype), shape=x.shape, strides=x.strides)
        return arr, mapped

    a, ma = view(A, cl.map_flags.READ)
    b, mb = view(B, cl.map_flags.READ)
    c, mc = view(out, cl.map_flags.WRITE_INVALIDATE_REGION)
    try:
        np.matmul(a, b, out=c)
    finally:
        for mp in (ma, mb, mc):
            mp.base.release(dev.queue)
    return out


CHOICES = ("kernel", "host-blas")
_WHAT = {"kernel": "the generated GEMM kernel",
         "host-blas": "host BLAS on the mapped device memory"}


def choice(cpu_device: bool) -> str:
    """Which path runs a product on a device of this type: ``MYC_OPENCL_GEMM`` when set
    (``kernel`` or ``host-blas``), else ``host-blas`` on a CPU device and ``kernel`` on
    any other."""
    want = os.environ.get("MYC_OPENCL_GEMM", "")
    if want:
        if want not in CHOICES:
            raise MycValueError(f"MYC_OPENCL_GEMM={want!r}: expected one of "
                                f"{', '.join(CHOICES)} (or unset: host-blas on a CPU "
                                "device, the kernel elsewhere)")
        return want
    return "host-blas" if cpu_device else "kernel"


def describe_choice(cpu_device: bool) -> str:
    """The choice in words, for ``myc.ir`` and ``f.stats()``."""
    c = choice(cpu_device)
    why = "MYC_OPENCL_GEMM" if os.environ.get("MYC_OPENCL_GEMM") else \
        ("a CPU device" if cpu_device else "not a CPU device")
    return f"gemm: {_WHAT[c]} ({why})"


def _float_type(a: Any, b: Any) -> np.dtype:
    def dt(x: Any) -> np.dtype:
        if type(x) is DeviceConst:
            return np.dtype(x.host.dtype)
        if hasattr(x, "dtype"):  # (never ``np.asarray`` of a device array: it reads
            return np.dtype(x.dtype)  # the array element by element, one copy each)
        return np.asarray(x).dtype

    r = np.result_type(dt(a), dt(b))
    if r.kind != "f":
        raise NotOnDevice("an integer or bool product: the host's")
    return r


def _ndim(x: Any) -> int:
    return (x.host if type(x) is DeviceConst else x).ndim if hasattr(
        x.host if type(x) is DeviceConst else x, "ndim") else 0


def matmul(a: Any, b: Any) -> Any:
    """``np.matmul`` on the device."""
    dt = _float_type(a, b)
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        raise NotOnDevice("a scalar operand: the host raises NumPy's error")
    a = as_device(a, dt, contiguous=na == 1)  # (a transposed view is read as it is)
    b = as_device(b, dt, contiguous=nb == 1)
    if na == 1:
        a = a.reshape((1, a.shape[0]))
    if nb == 1:
        b = b.reshape((b.shape[0], 1))
    out = _gemm_kernel(a, b, dt)
    if na == 1:
        out = out.reshape(out.shape[:-2] + out.shape[-1:])
    if nb == 1:
        out = out.reshape(out.shape[:-1])
    return out


def dot(a: Any, b: Any) -> Any:
    """``np.dot`` of 1-d and 2-d operands (a matrix product); others on the host."""
    if _ndim(a) > 2 or _ndim(b) > 2:
        raise NotOnDevice("np.dot of an N-d array")
    return matmul(a, b)

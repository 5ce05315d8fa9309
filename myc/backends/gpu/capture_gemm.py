"""Matrix products inside a CUDA graph capture (``gpu.graphs``), through cuBLAS itself.

cuBLAS can be captured (its documentation's "CUDA Graphs Support": GEMMs with host
``alpha``/``beta`` are captured with their values), but CuPy 14 refuses every cuBLAS
call while the current stream captures: ``cupy.matmul`` *and* its low-level binding
(``cupy_backends.cuda.libs.cublas.sgemm`` sets the handle's stream through
``setStream``, which raises ``NotImplementedError`` on a capturing stream).  So a
program with a GEMM (W4, every MLP step) could not be replayed as a graph.

During a capture, a plain 2-D product of two float32 or two float64 device arrays
(each C- or F-contiguous: a transposed operand is a view, handled by cuBLAS's op
flags) is made here instead: the cuBLAS library CuPy itself loaded (found among the
process's mapped libraries, so the same copy), called through ``ctypes`` on a handle
of this module's own (CuPy's handle and its stream are never touched), its stream set
to the capturing stream and its workspace a buffer of the graph's own memory pool
(the documentation's advice for captures: no allocation by cuBLAS inside the graph).
**Opt-in until it has run on a GPU** (``MYC_CUDA_GRAPH_GEMM=1``): it has been checked
only against the test suite's stand-in CuPy and cuBLAS; a mistake in a raw cuBLAS call
can crash the process, so by default a program with a GEMM refuses the capture, visibly
(``graph_stats``), and runs its steps, as measured correct on an H100.
Row-major arrays are column-major transposes, so ``C = A @ B`` is computed as
``C^T = B^T A^T``.  Anything else (a batched, broadcast, integer or mixed-dtype
product, a zero-size one, a library that cannot be found) raises, which refuses the
capture visibly (``graph_stats``), and the call runs its steps as before.  Outside a
capture, products go through ``cupy.matmul`` as always.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np

# per captured graph: cuBLAS picks algorithms that fit; 32 MiB is what it takes by
# default on Hopper and newer (4 MiB before), so that a capture picks the kernels the
# plain calls before it did (loaded already: nothing to load inside the capture)
WORKSPACE_BYTES = 32 << 20
_OP_N, _OP_T = 0, 1  # cublasOperation_t

_lock = threading.Lock()
_state: dict[str, Any] = {"lib": None, "handles": {}, "error": None}
_capture = threading.local()  # .keep: the capture in progress's workspace (a list)


class Cublas:
    """The four cuBLAS C entry points used here, on a loaded ``libcublas``."""

    def __init__(self, lib: Any):
        vp, i = ctypes.c_void_p, ctypes.c_int
        self._create = lib.cublasCreate_v2
        self._create.argtypes = [ctypes.POINTER(vp)]
        self._set_stream = lib.cublasSetStream_v2
        self._set_stream.argtypes = [vp, vp]
        self._set_workspace = lib.cublasSetWorkspace_v2
        self._set_workspace.argtypes = [vp, vp, ctypes.c_size_t]
        self._gemm = {}
        for name, ct in (("cublasSgemm_v2", ctypes.c_float),
                         ("cublasDgemm_v2", ctypes.c_double)):
            fn = getattr(lib, name)
            fn.argtypes = [vp, i, i, i, i, i, ctypes.POINTER(ct), vp, i, vp, i,
                           ctypes.POINTER(ct), vp, i]
            self._gemm[np.dtype(np.float32 if ct is ctypes.c_float else np.float64)] = \
                (fn, ct)
        for fn in (self._create, self._set_stream, self._set_workspace,
                   *(f for f, _ in self._gemm.values())):
            fn.restype = ctypes.c_int

    def create(self) -> int:
        h = ctypes.c_void_p()
        _check(self._create(ctypes.byref(h)), "cublasCreate")
        return int(h.value or 0)

    def set_stream(self, handle: int, stream: int) -> None:
        _check(self._set_stream(handle, stream), "cublasSetStream")

    def set_workspace(self, handle: int, ptr: int, nbytes: int) -> None:
        _check(self._set_workspace(handle, ptr, nbytes), "cublasSetWorkspace")

    def gemm(self, dtype: np.dtype, handle: int, transa: int, transb: int, m: int,
             n: int, k: int, a: int, lda: int, b: int, ldb: int, c: int, ldc: int) -> None:
        """``C = op(A) op(B)`` (column-major, ``alpha`` 1, ``beta`` 0, host scalars)."""
        fn, ct = self._gemm[dtype]
        one, zero = ct(1.0), ct(0.0)
        _check(fn(handle, transa, transb, m, n, k, ctypes.byref(one), a, lda, b, ldb,
                  ctypes.byref(zero), c, ldc), "cublas gemm")


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed: cublasStatus_t {status}")


def _load() -> Cublas:
    """The cuBLAS library CuPy's own binding is linked to (already in the process)."""
    import cupy_backends.cuda.libs.cublas  # noqa: F401 - maps CuPy's libcublas

    path = None
    with open("/proc/self/maps") as maps:
        for line in maps:
            name = line.rsplit(" ", 1)[-1].strip()
            if "/libcublas.so" in name:
                path = name
                break
    if path is None:
        raise NotImplementedError("the cuBLAS library CuPy uses was not found among "
                                  "the process's libraries")
    return Cublas(ctypes.CDLL(path))


def enabled() -> bool:
    """Is the raw cuBLAS path on (``MYC_CUDA_GRAPH_GEMM=1``; off by default: see above)?"""
    return os.environ.get("MYC_CUDA_GRAPH_GEMM") == "1"


def begin(device_id: int) -> list[Any]:
    """Before a capture begins on this thread: load cuBLAS and make this module's
    handle for the device (creating one allocates: not allowed inside a capture; a
    failure is kept and said by :func:`matmul`, refusing the capture).  The list
    returned will hold the graph's cuBLAS workspace: keep it as long as the graph."""
    if enabled():
        _prepare(device_id)
    _capture.keep = keep = []
    return keep


def end() -> None:
    _capture.keep = None


def _prepare(device_id: int) -> None:
    with _lock:
        if device_id in _state["handles"] or _state["error"] is not None:
            return
        try:
            if _state["lib"] is None:
                _state["lib"] = _load()
            _state["handles"][device_id] = _state["lib"].create()
        except Exception as exc:  # noqa: BLE001 - said by the captured GEMM, if any
            _state["error"] = f"{type(exc).__name__}: {exc}"


def reset() -> None:
    """Forget the library and handles (tests swap the library)."""
    with _lock:
        _state.update(lib=None, handles={}, error=None)


def _layout(x: Any) -> tuple[int, int] | None:
    """``x`` (2-D) as a column-major operand of ``C^T = B^T A^T``: (op, leading
    dimension) giving ``x^T`` from its memory; None when it is not dense."""
    rows, cols = x.shape
    if x.flags.c_contiguous:
        return _OP_N, max(1, cols)
    if x.flags.f_contiguous:
        return _OP_T, max(1, rows)
    return None


def matmul(cp: Any, name: str, a: Any, b: Any) -> Any:
    """``a @ b`` recorded into the current stream's capture (``name``: the step,
    ``matmul`` or ``dot``)."""
    keep = getattr(_capture, "keep", None)
    why = "no capture begun here" if keep is None else _unsupported(cp, a, b)
    if why is None and not enabled():
        why = ("off unless MYC_CUDA_GRAPH_GEMM=1 (CuPy refuses cuBLAS in a capture; "
               "myc's own calls are untried on a GPU)")
    if why is not None:
        raise NotImplementedError(f"{name} in a CUDA graph capture: {why}")
    dev = a.device.id
    with _lock:
        handle = _state["handles"].get(dev)
        lib = _state["lib"]
    if handle is None or lib is None:
        raise NotImplementedError(f"{name} in a CUDA graph capture: no cuBLAS "
                                  f"({_state['error'] or 'no handle'})")
    m, k = a.shape
    n = b.shape[1]
    (opa, lda), (opb, ldb) = _layout(a), _layout(b)  # type: ignore[misc]
    out = cp.empty((m, n), dtype=a.dtype)  # (from the graph's pool: ``using_allocator``)
    stream = cp.cuda.get_current_stream().ptr
    with _lock:
        if not keep:  # one workspace a graph, of its own memory
            keep.append(cp.empty((WORKSPACE_BYTES,), dtype=np.uint8))
        lib.set_stream(handle, stream)  # (resets the workspace: set it after)
        lib.set_workspace(handle, _ptr(keep[0]), WORKSPACE_BYTES)
        lib.gemm(a.dtype, handle, opb, opa, n, m, k, _ptr(b), ldb, _ptr(a), lda,
                 _ptr(out), max(1, n))
    return out


def _ptr(x: Any) -> int:
    data = getattr(x, "data", None)
    return data.ptr if hasattr(data, "ptr") else x.__cuda_array_interface__["data"][0]


def _unsupported(cp: Any, a: Any, b: Any) -> str | None:
    nd = cp.ndarray
    if not (isinstance(a, nd) and isinstance(b, nd)):
        return "an operand is not a device array"
    if a.ndim != 2 or b.ndim != 2:
        return (f"only 2-D products are captured (operands {a.ndim}-D and {b.ndim}-D; "
                "batched and vector products are not)")
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        return f"only float32 or float64 products are captured ({a.dtype} @ {b.dtype})"
    if a.shape[1] != b.shape[0]:
        return f"shapes {a.shape} and {b.shape} do not match"
    if 0 in a.shape or 0 in b.shape:
        return "a zero-size product"
    if _layout(a) is None or _layout(b) is None:
        return "an operand is neither C- nor F-contiguous"
    if a.device.id != b.device.id:
        return "operands on different GPUs"
    return None

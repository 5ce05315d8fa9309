"""A stand-in for CuPy on a machine without a GPU, for testing the CUDA backend's glue.

Its arrays are NumPy arrays of a subclass that, like CuPy's, refuse to be mixed with
host arrays in ufuncs and array functions, carry ``__cuda_array_interface__`` and come
back with ``.get()``.  Its ``cuda.function.Module`` loads the PTX that
``runtime.kernel_ptx`` made and launches the emulator's build of the same kernel
(``install(monkeypatch)`` wires this up), checking grid and block sizes on the way.

Stream capture (CUDA graphs) is modelled as CUDA does it: between a non-default
stream's ``begin_capture()`` and ``end_capture()`` device work is *recorded*, not done
-- kernel launches, GEMMs, and every array operation that writes a new array (its
result is allocated at once, as CuPy's is, and filled at each replay from the current
contents of its operands); views are metadata and need no recording.  A
device-to-host read, a host-to-device upload or a synchronization during a capture
invalidates it (``end_capture`` then raises, as ``cudaStreamEndCapture`` does).
``Graph.launch()`` replays the recorded work in order on the same buffers.  Memory
taken while ``cuda.using_allocator(pool.malloc)`` is active is counted by that pool.

As CuPy 14 does, ``matmul``/``dot`` refuse to run while the current stream captures
(CuPy's cuBLAS wrapper raises ``NotImplementedError``).  :class:`FakeCublas` stands
for the cuBLAS C library (``myc.backends.gpu.capture_gemm``'s ``Cublas``): handles
with a stream and a workspace, and column-major ``gemm`` on raw device pointers with
op flags and leading dimensions, computed with NumPy on the memory those pointers
name -- done at once, or, on a capturing stream, recorded and done at each replay.
"""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

import numpy as np

from myc.backends.cuda import runtime
from myc.backends.cuda.emulate import EmulatedKernel


class _Capture:
    """The stream capture in progress: the recorded work, whether it is still valid."""

    def __init__(self, stream_ptr: int) -> None:
        self.ops: list = []
        self.invalid: str | None = None
        self.stream_ptr = stream_ptr


_state = SimpleNamespace(capture=None, allocator=None)


def _recording() -> bool:
    return _state.capture is not None


def _not_in_capture(what: str) -> None:
    """A synchronous transfer: CUDA refuses it in a capture, which it invalidates."""
    cap = _state.capture
    if cap is not None:
        cap.invalid = cap.invalid or what
        raise RuntimeError(f"fake cupy: cudaErrorStreamCaptureUnsupported ({what} "
                           "during stream capture)")


def _record(result, compute) -> None:
    """In a capture: ``compute()`` (plain NumPy on the operands' memory) is what the
    graph writes into ``result`` at each replay."""
    if _state.capture is None or not isinstance(result, np.ndarray):
        return
    out = result.view(np.ndarray)

    def op():
        np.copyto(out, compute())

    _state.capture.ops.append(op)


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, FakeArray) else x


class FakeArray(np.ndarray):
    """A "device" array."""

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.ctypes.data, False), "version": 3}

    @property
    def _c_contiguous(self) -> bool:  # (CuPy's field, read by the runtime)
        return self.flags.c_contiguous

    @property
    def device(self):
        return SimpleNamespace(id=0)

    def __getitem__(self, index):  # like CuPy: an element is a 0-d view
        items = index if type(index) is tuple else (index,)
        for i in items:
            if type(i) is np.ndarray:  # CuPy copies it to the device first
                host_indexes.append(i)
        src = self.view(np.ndarray)
        if len(items) <= self.ndim and all(
                type(i) in (int, slice) or isinstance(i, np.integer) or
                (isinstance(i, np.ndarray) and i.dtype.kind in "iu") for i in items) and \
                any(isinstance(i, np.ndarray) for i in items):
            plain = tuple(_plain(i) for i in items)
            r = _wrapped_gather(src, plain).view(FakeArray)
            _record(r, lambda: _wrapped_gather(src, plain))
            return r
        r = super().__getitem__(index)
        if not isinstance(r, np.ndarray):
            r = super().__getitem__((*index, Ellipsis) if type(index) is tuple else
                                    (index, Ellipsis))
        if _recording() and not np.may_share_memory(_plain(r), src):  # a gather: device work
            _record(r, lambda: src[index])
        return r

    def get(self) -> np.ndarray:
        _not_in_capture("a device-to-host copy")
        return np.array(self.view(np.ndarray), copy=True)

    def copy(self, order="C"):
        r = np.array(self.view(np.ndarray), copy=True, order=order).view(FakeArray)
        src = self.view(np.ndarray)
        _record(r, lambda: src)
        return r

    def astype(self, dtype, *a, **k):
        r = self.view(np.ndarray).astype(dtype, *a, **k)
        r = r if isinstance(r, FakeArray) else r.view(FakeArray)
        src = self.view(np.ndarray)
        if r is not self and not np.may_share_memory(_plain(r), src):
            _record(r, lambda: src)
        return r

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse_host(inputs)
        plain = [_plain(x) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(x) for x in kwargs["out"])
        r = _wrap(getattr(ufunc, method)(*plain, **kwargs), scalar=True)
        if _recording():
            k2 = dict(kwargs)
            k2.pop("out", None)
            _record(r, lambda: getattr(ufunc, method)(*plain, **k2))
        return r

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(args)
        plain = [_plain(x) for x in args]
        r = _wrap(func(*plain, **kwargs))
        if _recording() and isinstance(r, np.ndarray) and \
                not any(isinstance(x, np.ndarray) and np.may_share_memory(_plain(r), x)
                        for x in plain):
            _record(r, lambda: func(*plain, **kwargs))
        return r


def _wrapped_gather(src: np.ndarray, items: tuple) -> np.ndarray:
    """``src[items]`` as CuPy does it: an integer index array out of range wraps around
    (NumPy would raise)."""
    return src[tuple(np.mod(i, n) if isinstance(i, np.ndarray) and n and i.size and
                     (i.min() < -n or i.max() >= n) else i
                     for i, n in zip(items, src.shape, strict=False))]


def _refuse_host(values) -> None:
    for x in values:
        if isinstance(x, np.ndarray) and not isinstance(x, FakeArray):
            raise TypeError("fake cupy: a host array mixed with device arrays")


def _wrap(v, scalar: bool = False):
    if isinstance(v, np.ndarray) and not isinstance(v, FakeArray):
        return v.view(FakeArray)
    if isinstance(v, tuple):
        return tuple(_wrap(x) for x in v)
    if scalar and isinstance(v, np.generic) and _recording():
        # (CuPy's result is a 0-d device array; a capture needs one to write into)
        return np.asarray(v).view(FakeArray)
    return v


def _from_dlpack(v):
    """A "CUDA" array of another library (``v.array``) as a device array sharing its
    memory; like torch, it refuses to export a tensor that requires grad."""
    assert v.__dlpack_device__()[0] == 2, "not a CUDA array"
    assert not getattr(v, "requires_grad", False), "export of a tensor requiring grad"
    return v.array.view(FakeArray)


_PROGRAMS: dict[str, EmulatedKernel] = {}
host_indexes: list[np.ndarray] = []  # host arrays a device array was indexed with
launches: list[tuple[str, tuple, tuple]] = []


class FakeFunction:
    def __init__(self, ek: EmulatedKernel, name: str):
        self.ek = ek
        self.p = next(p for p in ek.plan.passes if p.name == name)

    def __call__(self, grid: tuple, block: tuple, args: tuple) -> None:
        assert grid == (self.p.grid,) and block == (self.p.block,), (grid, block, self.p)
        assert all(isinstance(a, FakeArray) and a.flags.c_contiguous for a in args), \
            "a kernel argument is not a contiguous device array"
        if _recording():  # recorded: run at each replay, on these buffers
            _state.capture.ops.append(lambda: self(grid, block, args))
            return
        launches.append((self.p.name, grid, block))
        argv = (ctypes.c_void_p * max(1, len(args)))(*[a.ctypes.data for a in args])
        self.ek.fns[self.p.name](ctypes.addressof(argv))


class FakeModule:
    def load(self, image: bytes) -> None:
        assert image.endswith(b"\0")
        self.ek = _PROGRAMS[image[:-1].decode()]

    def get_function(self, name: str) -> FakeFunction:
        return FakeFunction(self.ek, name)


def _owned(shape, dtype) -> FakeArray:
    """A new "device" array owning its memory (``base`` None, as CuPy's allocations)."""
    if _state.allocator is not None:
        _state.allocator(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
    return FakeArray(shape, dtype)


def asarray(v):
    if isinstance(v, FakeArray):
        return v
    _not_in_capture("a host-to-device copy")
    a = np.asarray(v)
    out = _owned(a.shape, a.dtype)  # a host-to-device copy
    np.copyto(out.view(np.ndarray), a)
    return out


def _device_op(fn):
    """A CuPy function making a new array from device arrays: done now, and recorded
    in a capture (redone at each replay on the operands' current contents)."""
    def run(*arrays):
        plain = [[_plain(x) for x in a] if isinstance(a, list | tuple) else _plain(a)
                 for a in arrays]
        r = np.asarray(fn(*plain)).view(FakeArray)
        _record(r, lambda: fn(*plain))
        return r
    return run


class FakeStream:
    """A CUDA stream; the default one (``ptr`` 0) cannot capture."""

    _ptrs = iter(range(1, 1 << 30))
    _current: list = []  # streams made current by ``with``

    def __init__(self, null: bool = False, non_blocking: bool = False):
        self.ptr = 0 if null else next(self._ptrs)
        self.capture: _Capture | None = None

    def __enter__(self):
        FakeStream._current.append(self)
        return self

    def __exit__(self, *exc):
        FakeStream._current.pop()
        return False

    def synchronize(self) -> None:
        _not_in_capture("a stream synchronization")

    def begin_capture(self, mode=None) -> None:
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        assert self.capture is None and _state.capture is None, "capture in capture"
        self.capture = _state.capture = _Capture(self.ptr)

    def is_capturing(self) -> bool:
        return self.capture is not None

    def end_capture(self) -> FakeGraph:
        cap, self.capture, _state.capture = self.capture, None, None
        assert cap is not None, "the stream is not capturing"
        if cap.invalid:
            raise RuntimeError(f"fake cupy: cudaErrorStreamCaptureInvalidated ({cap.invalid})")
        return FakeGraph(cap.ops)


class FakeGraph:
    """A captured graph: its recorded work, replayed in order."""

    launched = 0  # replays, all graphs together

    def __init__(self, ops: list):
        self.ops = ops

    def launch(self, stream=None) -> None:
        assert _state.capture is None, "a graph launched during a capture"
        FakeGraph.launched += 1
        for op in self.ops:
            op()


class FakeMemoryPool:
    """A memory pool: counts what was allocated from it (``using_allocator``)."""

    def __init__(self) -> None:
        self.allocations = 0

    def malloc(self, nbytes: int) -> None:
        self.allocations += 1


class _UsingAllocator:
    def __init__(self, malloc) -> None:
        self.malloc = malloc

    def __enter__(self):
        self.saved, _state.allocator = _state.allocator, self.malloc
        return self

    def __exit__(self, *exc):
        _state.allocator = self.saved
        return False


_NULL = FakeStream(null=True)


def _cublas_wrapper(fn):
    """CuPy's GEMM: it sets its cuBLAS handle's stream to the current one first,
    refused when that stream captures."""
    if _current_stream().capture is not None:
        raise NotImplementedError("calling cuBLAS API during stream capture is "
                                  "currently unsupported")
    return _device_op(fn)


def _col_major(ptr: int, rows: int, cols: int, ld: int, dtype) -> np.ndarray:
    """The ``rows`` x ``cols`` column-major matrix at device address ``ptr``."""
    dtype = np.dtype(dtype)
    assert ld >= max(1, rows), (ld, rows)
    span = ((cols - 1) * ld + rows) * dtype.itemsize
    buf = (ctypes.c_char * span).from_address(ptr)
    return np.ndarray((rows, cols), dtype, buffer=buf,
                      strides=(dtype.itemsize, ld * dtype.itemsize))


class FakeCublas:
    """The cuBLAS C entry points ``capture_gemm.Cublas`` offers, on the fake GPU."""

    def __init__(self) -> None:
        self.handles: dict[int, dict] = {}
        self.gemms: list[tuple] = []  # (dtype, transa, transb, m, n, k) of each call

    def create(self) -> int:
        assert _state.capture is None, "cublasCreate during a capture"
        h = len(self.handles) + 1
        self.handles[h] = {"stream": 0, "workspace": None}
        return h

    def set_stream(self, handle: int, stream: int) -> None:
        self.handles[handle].update(stream=stream, workspace=None)  # (as cuBLAS does)

    def set_workspace(self, handle: int, ptr: int, nbytes: int) -> None:
        self.handles[handle]["workspace"] = (ptr, nbytes)

    def gemm(self, dtype, handle, transa, transb, m, n, k, a, lda, b, ldb, c, ldc):
        h = self.handles[handle]
        cap = _state.capture
        if cap is not None:  # a capture records work only from its own stream
            assert h["stream"] == cap.stream_ptr, "cuBLAS not on the capturing stream"
            assert h["workspace"] is not None, "cuBLAS would allocate in the capture"
        self.gemms.append((np.dtype(dtype), transa, transb, m, n, k))
        opa = _col_major(a, *((m, k) if transa == 0 else (k, m)), lda, dtype)
        opb = _col_major(b, *((k, n) if transb == 0 else (n, k)), ldb, dtype)
        out = _col_major(c, m, n, ldc, dtype)
        if transa:
            opa = opa.T
        if transb:
            opb = opb.T

        def op():  # (as C^T = B^T A^T: NumPy then makes the BLAS call that the
            np.matmul(opb.T, opa.T, out=out.T)  # stand-in for cupy.matmul makes on
            # the row-major operands -- the same bits, so replays equal plain runs)

        if cap is not None:
            cap.ops.append(op)
        else:
            op()


def _current_stream() -> FakeStream:
    return FakeStream._current[-1] if FakeStream._current else _NULL


cupy = SimpleNamespace(
    __name__="cupy", ndarray=FakeArray, uint8=np.uint8, bool_=np.bool_, asarray=asarray,
    ascontiguousarray=_device_op(np.ascontiguousarray),
    empty=_owned,
    from_dlpack=lambda v: _from_dlpack(v),
    stack=_device_op(np.stack),
    matmul=lambda a, b: _cublas_wrapper(np.matmul)(a, b),
    dot=lambda a, b: _cublas_wrapper(np.dot)(a, b),
    cuda=SimpleNamespace(
        is_available=lambda: True, Device=lambda: SimpleNamespace(id=0),
        runtime=SimpleNamespace(getDeviceProperties=lambda i: {"name": b"fake GPU"}),
        function=SimpleNamespace(Module=FakeModule),
        get_current_stream=_current_stream, Stream=FakeStream,
        MemoryPool=FakeMemoryPool, using_allocator=_UsingAllocator))


def install(monkeypatch, tmp_path) -> SimpleNamespace:
    """Make ``backend="cuda"`` run on the fake CuPy (for one test)."""
    real = runtime.kernel_ptx

    def kernel_ptx(kernel, arch=runtime.DEFAULT_ARCH):
        ptx, plan = real(kernel, arch)
        _PROGRAMS[ptx] = EmulatedKernel(kernel)
        return ptx, plan

    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(runtime, "_device", None)
    monkeypatch.setattr(runtime, "_cache", {})
    monkeypatch.setattr(runtime, "kernel_ptx", kernel_ptx)
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path / "cache"))
    from myc.backends.gpu import capture_gemm

    blas = FakeCublas()
    capture_gemm.reset()
    monkeypatch.setattr(capture_gemm, "_load", lambda: blas)
    monkeypatch.setattr(capture_gemm, "_state", {"lib": None, "handles": {}, "error": None})
    cupy.cublas = blas  # (for the tests to look at)
    launches.clear()
    host_indexes.clear()
    _state.capture = _state.allocator = None
    FakeStream._current.clear()
    return cupy
